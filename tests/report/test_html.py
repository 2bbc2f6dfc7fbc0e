"""The HTML report embeds every figure and table of the executed notebooks."""

import json

import nbformat
from nbclient import NotebookClient
from typer.testing import CliRunner

from diagnostics.cli import app
from diagnostics.pipeline._kernel import notebook_kernel_manager
from diagnostics.report import render_report


def _executed_notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Seed stability\nSome *text*."),
        nbformat.v4.new_code_cell("%matplotlib inline\nfrom matplotlib.figure import Figure\n"
                                  "from IPython.display import display\nfig = Figure(); fig.subplots().plot([0, 1]); display(fig)"),
        nbformat.v4.new_code_cell("import pandas as pd\npd.DataFrame({'category': ['Negation'], 'mcc': [0.25]})"),
        nbformat.v4.new_code_cell("pd.DataFrame(columns=[f'category {i}' for i in range(33)])"),
    ]
    NotebookClient(nb, kernel_name="python3", timeout=120, kernel_manager_class=notebook_kernel_manager()).execute()
    nbformat.write(nb, path)


def test_report_embeds_figures_and_tables(tmp_path):
    (tmp_path / "notebooks").mkdir()
    _executed_notebook(tmp_path / "notebooks" / "02_seed_stability.ipynb")
    (tmp_path / "manifest.json").write_text(json.dumps({"seeds": [0, 1]}))
    out = render_report(tmp_path)
    page = out.read_text()
    assert page.count("data:image/png;base64,") == 1
    assert "<table" in page and "Negation" in page
    assert "<h1>Seed stability</h1>" in page and "<em>text</em>" in page
    assert "&quot;seeds&quot;" in page
    # tables scroll inside their own box; a table without rows is said in words, not drawn as "0 rows x 33 columns"
    assert "<div class='out'><div>" in page and page.count("<table") == 1
    assert "(an empty table: no row to show)" in page and "0 rows" not in page
    assert "flex-wrap:wrap" in page


def test_report_cli_errors_cleanly_on_empty_dir(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert "no executed notebooks" in result.output
