"""Notebook outputs -> one self-contained ``index.html`` (figures embedded, tables as HTML, code folded)."""

from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from pathlib import Path

import nbformat
from markdown_it import MarkdownIt

from ..core.errors import UserInputError
from ..core.io_utils import output_folder
from ._explorer import EXPLORER_PAGE
from ._tables import breakable_headers

#: The report's page, beside ``notebooks/`` and ``figures/``.
INDEX_PAGE = "index.html"
#: The files one report owns: written together, replaced together.
REPORT_PAGES = (INDEX_PAGE, EXPLORER_PAGE)

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1560px;margin:2em auto;padding:0 1em;color:#222}
p,li,h1,h2,h3,h4,details{max-width:1100px}
nav{background:#f4f6f8;padding:.6em 1em;border-radius:6px;display:flex;flex-wrap:wrap;gap:.3em 1.2em}
nav a{white-space:nowrap} .out{overflow-x:auto;max-width:100%} .empty{color:#555;font-style:italic}
section{border-top:2px solid #ddd;margin-top:2.5em;padding-top:.5em}
img{max-width:100%;height:auto;border:1px solid #eee;margin:.5em 0}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0} td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
details{margin:.3em 0;color:#555} pre{background:#f7f7f7;padding:.5em;overflow-x:auto;font-size:.8em}
.meta{color:#666;font-size:.85em} .error{color:#a00}
"""


def _plain_text(bundle: dict) -> str:
    text = bundle.get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


def _cell_html(cell, md: MarkdownIt) -> str:
    if cell.cell_type == "markdown":
        return md.render(cell.source)
    if cell.cell_type != "code":
        return ""
    parts = []
    tags = cell.get("metadata", {}).get("tags", [])
    if cell.source.strip() and "parameters" not in tags and "injected-parameters" not in tags:
        parts.append(f"<details><summary>code</summary><pre>{html.escape(cell.source)}</pre></details>")
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind in ("display_data", "execute_result"):
            bundle = output.get("data", {})
            if "image/png" in bundle:
                parts.append(f'<img src="data:image/png;base64,{bundle["image/png"].strip()}">')
            elif _plain_text(bundle).startswith("Empty DataFrame"):  # a result table without rows, said in words
                parts.append("<p class='empty'>(an empty table: no row to show)</p>")
            elif "text/html" in bundle:
                # a wide table's headers break after underscores; one still wider scrolls inside its own box
                text = "".join(bundle["text/html"]) if isinstance(bundle["text/html"], list) else bundle["text/html"]
                parts.append(f"<div class='out'>{breakable_headers(text)}</div>")
            elif "text/markdown" in bundle:
                parts.append(md.render(bundle["text/markdown"]))
            elif "text/plain" in bundle:
                parts.append(f"<pre>{html.escape(bundle['text/plain'])}</pre>")
        elif kind == "stream" and output.get("name") == "stdout" and output.get("text", "").strip():
            parts.append(f"<pre>{html.escape(output['text'])}</pre>")
        elif kind == "error":
            parts.append(f"<pre class='error'>{html.escape(output.get('ename', ''))}: {html.escape(output.get('evalue', ''))}</pre>")
    return "\n".join(parts)


def render_report(run_dir: str | Path, title: str | None = None, compare: tuple | None = None) -> Path:
    """Write ``<run_dir>/index.html`` from the executed notebooks in ``<run_dir>/notebooks/``.

    Parameters
    ----------
    run_dir : str or Path
        A finished pipeline directory (e.g. ``reports/demo``) holding ``notebooks/NN_*.ipynb`` executed by
        papermill, and optionally ``manifest.json`` (config, versions, seeds, timings) shown at the top. When
        the notebooks left the instability explorer's data (``figures/explorer.json``), ``explorer.html`` is
        written beside ``index.html`` and linked from it (:mod:`diagnostics.report._explorer`).
    title : str, optional
        Page title; defaults to the directory name.
    compare : tuple of two mappings, optional
        Selections of the explorer's settings A and B (``({"experiment": "base"}, {"experiment": "extra-1000"})``):
        ``explorer.html`` opens with those two side by side
        (:func:`diagnostics.report._explorer.resolve_pair`).

    Returns
    -------
    Path
        The written ``index.html``; every figure is embedded, so the file can be mailed or archived alone.

    Raises
    ------
    FileNotFoundError
        When the directory holds no executed notebook.
    UserInputError
        When ``compare`` does not name two settings of one dataset in the explorer's data.
    """
    run_dir = Path(run_dir)
    notebooks = sorted((run_dir / "notebooks").glob("*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"{run_dir}: no executed notebooks under {run_dir / 'notebooks'}; run the pipeline first")
    md = MarkdownIt("commonmark").enable("table")
    title = title or f"NLI diagnostics report: {run_dir.name}"
    sections, links = [], []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        anchor = path.stem
        links.append(f'<a href="#{anchor}">{html.escape(path.stem)}</a>')
        body = "\n".join(_cell_html(cell, md) for cell in nb.cells)
        sections.append(f'<section id="{anchor}">{body}</section>')
    from ._explorer import render_report_explorer

    # The two pages are one output set: a kill or a second report at once leaves the old pair or the new one.
    with output_folder(run_dir, REPORT_PAGES) as pages:
        if render_report_explorer(run_dir, f"Instability explorer: {title}",
                                  out=pages.staging / EXPLORER_PAGE, compare=compare) is not None:
            links.append(f'<a href="{EXPLORER_PAGE}">instability explorer (which examples flip)</a>')
        elif compare is not None:
            raise UserInputError(f"{run_dir / 'figures'}: no instability explorer data to compare settings in; run "
                                 "notebook 10_instability_explorer first")
        with pages.file(INDEX_PAGE) as tmp:
            tmp.write_text(_page(run_dir, title, links, sections), encoding="utf-8")
    return run_dir / INDEX_PAGE


def _page(run_dir: Path, title: str, links: list[str], sections: list[str]) -> str:
    """The ``index.html`` page: title, manifest, links to each notebook (and the explorer), the notebooks."""
    meta = ""
    manifest = run_dir / "manifest.json"
    if manifest.exists():
        meta = f"<details><summary>run manifest (config, versions, seeds, timings)</summary><pre>{html.escape(json.dumps(json.loads(manifest.read_text()), indent=2))}</pre></details>"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
            f"<body><h1>{html.escape(title)}</h1><p class='meta'>generated {stamp} from {html.escape(str(run_dir))}</p>{meta}"
            f"<nav>{''.join(links)}</nav>{''.join(sections)}</body></html>")
    return page
