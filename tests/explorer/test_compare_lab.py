"""The two-system widget in JupyterLab itself, in headless Chromium (Debian's, ``bash scripts/setup_browser.sh``).

Marked slow (a Lab server and a kernel start): a notebook that builds two settings side by side from synthetic
tables and displays ``ex.explore(pair)`` is opened through Lab's file browser and run; the strips of both systems
render (inline SVG inside an ipywidgets ``HTML``); a category's button lists exactly its examples; the "examples"
menu filters the listing to "fixed by B"; the "example" menu opens one example with every seed of both sides.
Screenshots go to ``tests/artifacts/lab_browser/`` (git-ignored); the paths are printed.
"""

from __future__ import annotations

import nbformat
import pytest

from _lab_browser import browser  # noqa: F401 - a fixture
from _lab_browser import open_notebook, run_all, running_lab, shot, wait_for
from _paths import ROOT
from diagnostics.explorer import OUTCOMES

pytestmark = pytest.mark.slow

NOTEBOOK = "two_systems.ipynb"
BUILD = """\
import pandas as pd
from diagnostics import explorer as ex
from _explorer_data import fake_annotations, synthetic_dataset, synthetic_predictions

en = synthetic_dataset("syn_en", 120, seed=0)
tables = [synthetic_predictions({"en": ("syn_en", en)}),
          synthetic_predictions({"en": ("syn_en", en)}, experiments=("extra-100",), seed=2)]
model = ex.build_explorer(pd.concat(tables, ignore_index=True), {"syn_en": en},
                          annotations={"syn_en": fake_annotations(en)})
pair = model.compare({"experiment": "base"}, {"experiment": "extra-100"})
"""


def _pair():
    """The notebook's comparison, built here the same way (the synthetic tables are seeded)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    scope: dict = {}
    exec(BUILD, scope)  # noqa: S102 - the notebook's own cell, run here to know what the widget must show
    return scope["pair"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``jupyter lab`` of .venv on a free port with a token, serving a folder with the two-system notebook."""
    home = tmp_path_factory.mktemp("lab-compare")
    served = home / "served"
    served.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n{BUILD}"),
                      nbformat.v4.new_code_cell("ex.explore(pair)")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "nli-diagnostics (.venv)",
                                       "language": "python"}
    nbformat.write(notebook, served / NOTEBOOK)
    env = {"JUPYTER_PREFER_ENV_PATH": "1", "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with running_lab([str(ROOT / ".venv" / "bin" / "jupyter"), "lab"], home, served, env) as (url, token):
        yield url, token


def _listed(driver) -> list[tuple[str, str]]:
    return [tuple(x) for x in driver.execute_script("""
        return Array.from(document.querySelectorAll('.dx-cmp-listing-widget tr[data-id]')).map(function (tr) {
          return [tr.getAttribute('data-id'), tr.getAttribute('data-outcome')]; });""")]


def test_the_two_system_widget_in_jupyterlab(lab, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, token = lab
    pair = _pair()
    browser.get(f"{url}/lab?token={token}")
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".jp-DirListing-content")
          and not d.find_elements(By.ID, "jupyterlab-splash"), 120, "Lab")
    open_notebook(browser, NOTEBOOK)
    run_all(browser, "the two-system notebook", 300)
    widget = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".dx-compare-widget"), 60,
                   "the two-system widget")
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", widget)
    strips = browser.find_elements(By.CSS_SELECTOR, ".dx-compare-widget .dx-cmp-strip")
    assert len(strips) == len(pair.category_names)
    points = browser.execute_script("""
        return [document.querySelectorAll('.dx-compare-widget svg.dx-strip circle.pt.a').length,
                document.querySelectorAll('.dx-compare-widget svg.dx-strip circle.pt.b').length];""")
    expected = pair.seed_mcc().dropna(subset=["mcc"]).groupby("side").size()
    assert points == [int(expected["A"]), int(expected["B"])], "both systems' per-seed MCC drawn"
    shot(browser, "11_two_systems_widget")

    # a category's button: exactly its examples, A's seeds beside B's
    table = pair.category_table()
    category = table["fixed"].idxmax()
    j = pair.category_names.index(category)
    button = browser.find_element(By.CSS_SELECTOR, f".dx-compare-widget .dx-cmp-cat-{j}")
    button.click()
    wait_for(browser, lambda d: "dx-chosen" in button.get_attribute("class"), 30, "the category outlined")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".dx-cmp-listing-widget tr[data-id]"), 30,
          "the listing")
    listing = pair.examples(category, None)
    assert _listed(browser) == list(zip(listing["example_id"], listing["outcome"]))[:25]

    # the "examples" menu: fixed by B only
    menus = browser.find_elements(By.CSS_SELECTOR, ".dx-compare-widget select")
    Select(menus[0]).select_by_visible_text(OUTCOMES["fixed"])
    fixed = pair.examples(category, "fixed")
    wait_for(browser, lambda d: _listed(d) == [(i, "fixed") for i in fixed["example_id"]], 30,
          "the listing filtered to fixed by B")
    shot(browser, "12_two_systems_widget_fixed_by_b")

    # the "example" menu: one example opened, every seed of both sides
    first = str(fixed["example_id"].iat[0])
    Select(browser.find_elements(By.CSS_SELECTOR, ".dx-compare-widget select")[1]).select_by_visible_text(first)
    opened = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, f".dx-cmp-example[data-id='{first}']"), 30,
                   "the example opened")
    cells = opened.find_elements(By.CSS_SELECTOR, "td.pred")
    assert len(cells) == len(pair.labels_a) + len(pair.labels_b)
    assert pair.example(first)["premise"] in opened.text
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", opened)
    shot(browser, "13_two_systems_widget_example")
