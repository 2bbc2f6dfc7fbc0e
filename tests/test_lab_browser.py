"""JupyterLab itself in a real headless browser: ``bash scripts/lab.sh`` started on a free localhost port with a
token, Chromium (Debian's, ``bash scripts/setup_browser.sh``) driven by selenium.

One test, marked slow (the tiny main job, a Lab server and two notebooks run in the browser take minutes):

1. the notebooks, copied by ``diagnostics notebooks copy`` for the tiny run store, open through Lab's file browser;
2. notebook 10 runs all its cells; a click on a heat-map cell of the explorer widget lists exactly that category's
   examples with every seed's prediction, in view, the cell outlined;
3. notebook 02 runs all its cells, its figures render, at 1400 px with the file browser open every table fits its
   output (the 15 columns of "How many seeds do I need?" included), and its figures go to the interactive folder
   (``reports/interactive/tiny/figures``), not into the main job's report;
4. a committed notebook opened (the kernel "nli-diagnostics (.venv)" starts) is not marked changed once its kernel
   connected, and saved it stays byte for byte, and ``git status`` of ``notebooks/`` does not change;
5. the run store, read-only during the session, has the same files and bytes afterwards.

A second test opens a report of the tiny run's widest tables (Table 4's 19 columns, the 15 of "How many seeds do I
need?") at 1400 px: the seeds table fits the page, and none is cut: a table wider than the page scrolls inside its
own box, which lies within the window.

Screenshots of every step go to ``tests/artifacts/lab_browser/`` (git-ignored); the paths are printed.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from _lab_browser import browser  # noqa: F401 - a fixture
from _lab_browser import (active_panel, kernel_ready, menu, open_notebook, overflowing, run_all, running_lab, shot,
                          table_widths, wait_for)
from _paths import ROOT

SAVED = "10_instability_explorer"  # the committed notebook opened and saved

pytestmark = pytest.mark.slow


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _set_writable(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _porcelain() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--", "notebooks"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module")
def run_store(tmp_path_factory):
    """The tiny main job's run store, with the caches notebooks 02 and 10 read (they ran once in the pipeline).

    ``$LAB_TEST_RUNS`` may name a folder whose ``tiny/`` holds a finished tiny run store, to reuse it."""
    from diagnostics.pipeline import run_pipeline

    if os.environ.get("LAB_TEST_RUNS"):
        return Path(os.environ["LAB_TEST_RUNS"]).resolve()
    root = tmp_path_factory.mktemp("lab-store")
    run_pipeline("tiny", out_dir=root / "report", runs_dir=root / "runs" / "tiny",
                 notebooks=["02_seed_stability", SAVED])
    return root / "runs"


@pytest.fixture(scope="module")
def lab(tmp_path_factory, run_store):
    """``bash scripts/lab.sh`` on a free port with a token, serving the copies and (linked) the real notebooks/."""
    from diagnostics.notebooks import copy_notebooks

    home = tmp_path_factory.mktemp("lab")
    served = home / "served"
    copy_notebooks(served / "copies", run_store, scale="tiny")
    (served / "notebooks").symlink_to(ROOT / "notebooks", target_is_directory=True)
    with running_lab(["bash", "scripts/lab.sh"], home, served) as (url, token):  # lab.sh execs jupyter
        yield url, token, served


def _listing(driver) -> tuple[dict[str, dict[str, str]], str]:
    """The widget's listed rows (example id -> seed -> prediction code) after every "show more", and its title."""
    from selenium.webdriver.common.by import By

    for _ in range(100):
        more = [b for b in driver.find_elements(By.CSS_SELECTOR, ".dx-more") if b.is_displayed()]
        if not more:
            break
        count = len(driver.find_elements(By.CSS_SELECTOR, ".dx-listing-widget tr[data-id]"))
        more[0].click()
        wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".dx-listing-widget tr[data-id]")) > count,
              30, "more rows")
    rows = driver.execute_script("""
        return Array.from(document.querySelectorAll('.dx-listing-widget tr[data-id]')).map(function (tr) {
          return [tr.getAttribute('data-id'), Array.from(tr.querySelectorAll('td.pred')).map(function (td) {
            return [td.getAttribute('data-seed'), td.getAttribute('data-pred')];
          })];
        });""")
    title = driver.find_element(By.CSS_SELECTOR, ".dx-listing-widget p b").text
    return {example_id: dict(cells) for example_id, cells in rows}, title


def test_jupyterlab_opens_runs_and_saves_the_notebooks_without_changing_them(lab, browser, run_store):
    from selenium.webdriver.common.by import By

    from diagnostics import explorer as ex
    from diagnostics.core.resources import work_root
    from diagnostics.core.schema import ENTAILMENT
    from diagnostics.pipeline import ScalePlan, ensure_runs

    url, token, served = lab
    store_before = _tree_digest(run_store)
    pair = [ROOT / "notebooks" / f"{SAVED}{suffix}" for suffix in (".ipynb", ".py")]
    pair_before, porcelain_before = [p.read_bytes() for p in pair], _porcelain()
    report = run_store.parent / "report"  # the main job's report (the pipeline's, when this test made the store)
    report_before = _tree_digest(report) if report.is_dir() else {}
    interactive, started = work_root() / "reports" / "interactive" / "tiny" / "figures", time.time() - 1
    _set_writable(run_store, False)  # the notebooks only read the run store
    try:
        browser.get(f"{url}/lab?token={token}")
        wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".jp-DirListing-content")
              and not d.find_elements(By.ID, "jupyterlab-splash"), 120, "Lab")
        shot(browser, "01_lab_file_browser")

        # step 2: notebook 10 through the file browser, all cells run, the explorer widget shows
        open_notebook(browser, "copies", f"{SAVED}.ipynb")
        run_all(browser, "notebook 10", 600)
        widget = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".dx-explorer-widget"), 60,
                       "the explorer widget")
        browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", widget)
        shot(browser, "02_notebook10_widget")
        cells = browser.find_elements(By.CSS_SELECTOR, ".dx-explorer-widget .dx-cell:not([disabled])")
        assert cells, "no clickable heat-map cell"
        cell = cells[min(2, len(cells) - 1)]  # a top-row cell: its listing used to open far below the screen
        name = next(c for c in cell.get_attribute("class").split() if c.startswith("dx-cell-") and c.count("-") >= 4)
        setting, category_index, seed = name[len("dx-cell-"):].split("-", 2)
        cell.click()
        wait_for(browser, lambda d: "dx-chosen" in cell.get_attribute("class"), 30, "the cell outlined")
        wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".dx-listing-widget tr[data-id]"), 30,
              "the listing")
        top = browser.execute_script("return document.querySelector('.dx-listing-widget')"
                                     ".getBoundingClientRect().top - arguments[0].getBoundingClientRect().top;", cell)
        assert top < 500, f"the listing starts {top:.0f} px below the clicked cell"
        shot(browser, "03_notebook10_cell_clicked")

        predictions = ensure_runs(ScalePlan.resolve("tiny", run_store / "tiny"), only=("base", "extra"),
                                  train=False)
        model = ex.build_explorer(predictions, cache_dir=run_store / "tiny" / ".cache" / "annotations")
        category = model.category_names[int(category_index)]
        model.select(category, seed, setting=int(setting))
        expected = {str(r["example_id"]): {ex.run_label(run): ("1" if r[f"prediction_{ex.run_label(run)}"] ==
                                                                ENTAILMENT else "0")
                                           for run in model.runs[int(setting)]}
                    for r in model.examples().to_dict("records")}
        listed, title = _listing(browser)
        assert title == category
        assert listed == expected  # exactly that category's examples, each seed's prediction
        shot(browser, "04_notebook10_listing_complete")

        # step 3: notebook 02, all cells run, its figures render
        browser.find_element(By.CSS_SELECTOR, ".jp-BreadCrumbs-home").click()
        open_notebook(browser, "copies", "02_seed_stability.ipynb")
        run_all(browser, "notebook 02", 400)
        images = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('.jp-RenderedImage img')).map("
            "function (i) { return [i.naturalWidth, i.naturalHeight]; });", active_panel(browser))
        assert len(images) >= 2 and all(w > 100 and h > 100 for w, h in images), images
        shot(browser, "05_notebook02_figures")
        # at 1400 px with the file browser open, every table fits its output (headers wrap after underscores)
        assert browser.find_element(By.CSS_SELECTOR, ".jp-DirListing").is_displayed()
        tables = table_widths(browser, ".jp-NotebookPanel:not(.lm-mod-hidden)")
        assert any("reachable_share" in t["head"] and t["columns"] >= 15 for t in tables), "no seeds-needed table"
        assert not overflowing(tables), overflowing(tables)
        # an interactive run writes its figures apart from the main job's report
        assert (_tree_digest(report) if report.is_dir() else {}) == report_before
        assert any(p.stat().st_mtime >= started for p in interactive.glob("02_category_seed_mcc_*.png")), interactive

        # step 4: a committed notebook opened (kernel started) and saved: no byte changes
        browser.find_element(By.CSS_SELECTOR, ".jp-BreadCrumbs-home").click()
        open_notebook(browser, "notebooks", f"{SAVED}.ipynb")
        wait_for(browser, lambda d: any("nli-diagnostics (.venv)" in e.text for e in d.find_elements(
            By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar-kernelName")), 120,
            "the kernel nli-diagnostics (.venv)")
        kernel_ready(browser, 60)
        time.sleep(5)  # Lab writes the kernel's metadata into the notebook a moment after the kernel connects
        tab = browser.find_element(By.CSS_SELECTOR, ".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
        assert f"notebooks/{SAVED}.ipynb" in (tab.get_attribute("title") or ""), tab.get_attribute("title")
        assert "jp-mod-dirty" not in tab.get_attribute("class"), "the unedited notebook is marked changed"
        menu(browser, "File", "Save Notebook")
        time.sleep(3)
        shot(browser, "06_saved_committed_notebook")
        assert [p.read_bytes() for p in pair] == pair_before, "opening and saving changed the notebook pair"
        assert _porcelain() == porcelain_before
    finally:
        _set_writable(run_store, True)
    assert _tree_digest(run_store) == store_before, "the run store changed"


def test_the_reports_wide_tables_fit_or_scroll_in_their_own_box_at_1400_px(browser, run_store, tmp_path):
    import nbformat

    from diagnostics import stats
    from diagnostics.pipeline import ScalePlan, ensure_runs, plan_datasets
    from diagnostics.report import render_report

    plan = ScalePlan.resolve("tiny", run_store / "tiny")
    predictions = ensure_runs(plan, only=("base", "extra"), train=False)
    datasets = plan_datasets(plan)
    scores = stats.category_scores(predictions, datasets)
    extra = sorted(e for e in predictions["experiment"].unique() if e != "base")[-1]
    table4 = stats.display_table(stats.extra_data_table(scores, {"experiment": "base"}, {"experiment": extra},
                                                        ddof=1)).round(3)
    seeds = stats.plan_seeds(predictions[predictions["experiment"] == "base"], half_width=0.05, max_seeds=30,
                             n_sims=100, dataset=datasets).summary()
    assert table4.shape[1] >= 18 and seeds.shape[1] >= 14
    cells = [nbformat.v4.new_code_cell("table", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": frame._repr_html_(), "text/plain": repr(frame)})])
        for frame in (table4, seeds)]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "notebooks" / "tables.ipynb")
    browser.get(render_report(tmp_path).as_uri())
    shot(browser, "07_report_tables")
    tables = table_widths(browser)
    assert len(tables) == 2 and browser.execute_script("return window.innerWidth") == 1400
    fits = [t for t in tables if t not in overflowing(tables)]
    assert any("reachable_share" in t["head"] for t in fits), tables
    for table in overflowing(tables):  # wider than the page: scrolls in its own box, which the window shows whole
        assert table["scrolls"] and table["box_right"] <= table["viewport"], table
