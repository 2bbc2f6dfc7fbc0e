"""The report's ``explorer.html`` in a real headless browser: Chromium and chromedriver from the Debian packages
(``bash scripts/setup_browser.sh``, called by ``scripts/test.sh``), driven by selenium.

The page's behaviour is tested in the default suite, not the slow one: it takes a few seconds (Chromium's start
included), the page's JavaScript has no other test, and every pipeline run ships the page with its report. The
paper-scale check (6 seeds x 5 languages x 1104 examples: page size, load and click time) builds a larger table
and is marked slow. Without Chromium (no apt-get on the machine) both skip, saying so.

Every step saves a screenshot under ``tests/artifacts/report_browser/`` (git-ignored by the ``.gitignore`` the
test writes there); the paths are printed (``pytest -s``).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from diagnostics import explorer as ex
from diagnostics.report import render_report
from diagnostics.report._explorer import render_explorer
from diagnostics.schema import ENTAILMENT

from _explorer_data import fake_annotations, synthetic_dataset, synthetic_predictions

from _paths import ARTIFACTS

SCREENSHOTS = ARTIFACTS / "report_browser"
SETUP = "bash scripts/setup_browser.sh (installs the Debian packages chromium and chromium-driver; needs apt-get)"


def _binary(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (dev extra)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    chromium = _binary("chromium", "chromium-browser", "google-chrome")
    driver_path = _binary("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip(f"no Chromium / chromedriver on PATH: run {SETUP}")
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1400,1000", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking"):
        options.add_argument(argument)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)  # explicit paths: no driver download
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def artifacts():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS.parent / ".gitignore").write_text("*\n")  # artefacts of a test run, never committed
    return SCREENSHOTS


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report folder: one (trivial) notebook, the explorer's data in figures/, rendered by render_report."""
    en, ru = synthetic_dataset("syn_en", 150, seed=0), synthetic_dataset("syn_ru", 120, seed=1)
    predictions = pd.concat([synthetic_predictions({"en": ("syn_en", en), "ru": ("syn_ru", ru)}),
                             synthetic_predictions({"en": ("syn_en", en)}, experiments=("extra-100",), seed=2)],
                            ignore_index=True)
    datasets = {"syn_en": en, "syn_ru": ru}
    model = ex.build_explorer(predictions, datasets,
                              annotations={"syn_en": fake_annotations(en), "syn_ru": fake_annotations(ru)})
    root = tmp_path_factory.mktemp("report")
    (root / "notebooks").mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# 10 · Instability explorer")]
    nbformat.write(notebook, root / "notebooks" / "10_instability_explorer.ipynb")
    model.save_payload(root / "figures")
    index = render_report(root)
    return index, predictions, datasets, model


def _shot(driver, artifacts: Path, name: str, element_id: str | None = None) -> Path:
    if element_id:
        driver.execute_script("document.getElementById(arguments[0]).scrollIntoView()", element_id)
    path = artifacts / f"{name}.png"
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def _errors(driver) -> list:
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def _show_all(driver) -> None:
    """Click "show more" until the listing holds every example of the chosen cell."""
    driver.execute_script("""
        var button;
        while ((button = document.querySelector('#detail button.more'))) { button.click(); }""")


def _listed(driver) -> dict[str, dict[str, tuple[str, int | None]]]:
    """Example id -> seed -> (prediction code, P(entailment) in per mille) of the listed rows, read in one call."""
    _show_all(driver)
    rows = driver.execute_script("""
        return Array.from(document.querySelectorAll('#detail tbody tr')).map(function (tr) {
          return [tr.getAttribute('data-id'), Array.from(tr.querySelectorAll('td.pred')).map(function (td) {
            return [td.getAttribute('data-seed'), td.getAttribute('data-pred'), td.getAttribute('data-prob')];
          })];
        });""")
    return {example_id: {seed: (pred, round(float(prob) * 1000) if prob else None) for seed, pred, prob in cells}
            for example_id, cells in rows}


def _expected(predictions, datasets, language, experiment, category, flipping_only=False):
    name = "syn_en" if language == "en" else "syn_ru"
    dataset = datasets[name]
    members = set(dataset.loc[dataset["features"].map(lambda f: category in f), "id"])
    rows = predictions[(predictions["language"] == language) & (predictions["experiment"] == experiment)
                       & predictions["example_id"].isin(members)]
    out = {}
    for example_id, group in rows.groupby("example_id"):
        if flipping_only and group["prediction"].nunique() < 2:
            continue
        # the page stores P(entailment) in per mille (3 decimals, as the notebook's listing shows it)
        out[example_id] = {str(r.seed): ("1" if r.prediction == ENTAILMENT else "0",
                                         round(round(float(r.probability), 3) * 1000))
                           for r in group.itertuples(index=False)}
    return out


def _click_cell(driver, setting: int, category_index: int, seed: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, f"td.cell[data-setting='{setting}'][data-c='{category_index}']"
                                         f"[data-seed='{seed}']").click()


def test_explorer_page_in_a_headless_browser(browser, report, artifacts):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    index, predictions, datasets, model = report
    started = time.perf_counter()
    browser.get(index.as_uri())
    link = browser.find_element(By.LINK_TEXT, "instability explorer (which examples flip)")
    link.click()
    assert browser.current_url.endswith("/explorer.html")
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    assert _errors(browser) == [], "console errors on load"
    _shot(browser, artifacts, "01_loaded")

    # the page leads with the five least stable categories per language, largest σ first
    lead = model.least_stable(5)
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('#lead-body div.lead-cat')).map("
        "function (d) { return [+d.getAttribute('data-setting'), d.getAttribute('data-category')]; });")
    assert shown == [[int(s), c] for s, c in zip(lead["setting"], lead["category"])]

    # step 2: click a heat-map cell (en, base): exactly that category's examples, each seed's prediction
    category = model.category_names[4]
    c = model.category_names.index(category)
    _click_cell(browser, 0, c, "1")
    detail = browser.find_element(By.ID, "detail")
    assert detail.get_attribute("data-category") == category and detail.get_attribute("data-seed") == "1"
    assert _listed(browser) == _expected(predictions, datasets, "en", "base", category)
    _shot(browser, artifacts, "02_cell_en_base", "explorer")

    # step 3: language filter -> only ru columns, the en selection is gone; then a ru cell
    Select(browser.find_element(By.ID, "f-language")).select_by_value("ru")
    settings = {int(td.get_attribute("data-setting")) for td in browser.find_elements(By.CSS_SELECTOR, "td.cell")}
    assert settings == {1} and _listed(browser) == {}
    other = model.category_names[1]
    _click_cell(browser, 1, model.category_names.index(other), "2")
    assert _listed(browser) == _expected(predictions, datasets, "ru", "base", other)
    _shot(browser, artifacts, "03_language_ru", "explorer")

    # step 4: flipping only
    browser.find_element(By.ID, "f-flipping").click()
    flipping = _expected(predictions, datasets, "ru", "base", other, flipping_only=True)
    assert _listed(browser) == flipping and 0 < len(flipping) < len(_expected(predictions, datasets, "ru", "base",
                                                                               other))
    _shot(browser, artifacts, "04_flipping_only", "explorer")

    # step 5: experiment filter (en, extra-100), flipping only still on
    Select(browser.find_element(By.ID, "f-language")).select_by_value("en")
    Select(browser.find_element(By.ID, "f-experiment")).select_by_value("extra-100")
    settings = {int(td.get_attribute("data-setting")) for td in browser.find_elements(By.CSS_SELECTOR, "td.cell")}
    assert [model.settings[s]["experiment"] for s in settings] == ["extra-100"]
    _click_cell(browser, settings.pop(), c, "0")
    assert _listed(browser) == _expected(predictions, datasets, "en", "extra-100", category, flipping_only=True)
    _shot(browser, artifacts, "05_experiment_extra", "explorer")
    assert _errors(browser) == [], "console errors while clicking"
    print(f"browser steps took {time.perf_counter() - started:.1f} s")


def _too_wide(driver) -> int:
    """Pixels by which the page is wider than the window (0 when nothing makes the page scroll sideways)."""
    return driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth;")


def _heatmap_texts(driver) -> dict[tuple[int, str, str], str]:
    cells = driver.execute_script("""
        return Array.from(document.querySelectorAll('#heatmap td.cell')).map(function (td) {
          return [+td.getAttribute('data-setting'), td.getAttribute('data-category'), td.getAttribute('data-seed'),
                  td.textContent];
        });""")
    return {(s, c, seed): text for s, c, seed, text in cells}


def test_explorer_page_fits_the_window_and_shows_the_notebooks_numbers(browser, report, artifacts):
    """No sideways scrolling of the page at 1000 px; every heat-map number is the notebook's (rounded once); a click
    on a top-row cell brings its listing into view, outlined cell, legend, "show more" paging."""
    from selenium.webdriver.common.by import By

    index, predictions, datasets, model = report
    browser.set_window_size(1000, 800)
    try:
        browser.get(index.as_uri())
        assert _too_wide(browser) <= 0, "index.html is wider than the window"
        browser.get(index.with_name("explorer.html").as_uri())
        assert _too_wide(browser) <= 0, "explorer.html is wider than the window"
        assert browser.find_element(By.CSS_SELECTOR, "#explorer .dx-legend").is_displayed()
        checked = 0
        from selenium.webdriver.support.ui import Select

        Select(browser.find_element(By.ID, "f-experiment")).select_by_value("")
        for language in ("en", "ru"):
            Select(browser.find_element(By.ID, "f-language")).select_by_value(language)
            for (setting, category, seed), text in _heatmap_texts(browser).items():
                # what the notebook shows for the same cell: the widget's button and the static heat map
                value = model._mcc[setting].at[category, seed]
                assert text == ex.two_decimals(value), (category, seed, value, text)
                checked += 1
        assert checked == sum(len(m) * len(m.columns) for m in model._mcc.values())
        Select(browser.find_element(By.ID, "f-language")).select_by_value("en")
        browser.execute_script("document.getElementById('explorer').scrollIntoView()")
        first = browser.find_element(By.CSS_SELECTOR, "#heatmap td.cell")
        first.click()
        top = browser.execute_script("return document.getElementById('detail').getBoundingClientRect().top;")
        assert 0 <= top < browser.execute_script("return window.innerHeight;") - 80, "listing not in view"
        assert "sel" in first.get_attribute("class")
        detail = browser.find_element(By.ID, "detail")
        total = int(detail.get_attribute("data-total"))
        rows = len(browser.find_elements(By.CSS_SELECTOR, "#detail tbody tr"))
        assert rows == min(total, ex.ROW_LIMIT)
        _shot(browser, artifacts, "07_narrow_window_cell_in_view")
        assert len(_listed(browser)) == total and _too_wide(browser) <= 0
        assert _errors(browser) == []
    finally:
        browser.set_window_size(1400, 1000)


@pytest.mark.slow
def test_paper_scale_page_stays_small_and_fast(browser, artifacts, tmp_path):
    """6 seeds x 5 languages x 1104 examples: page size, load and click time."""
    from selenium.webdriver.common.by import By

    languages = ("en", "ru", "fr", "de", "sv")
    datasets = {f"syn_{lang}": synthetic_dataset(f"syn_{lang}", 1104, seed=i, n_categories=33)
                for i, lang in enumerate(languages)}
    predictions = synthetic_predictions({lang: (f"syn_{lang}", datasets[f"syn_{lang}"]) for lang in languages},
                                        seeds=range(6))
    annotations = {name: fake_annotations(frame) for name, frame in datasets.items()}
    model = ex.build_explorer(predictions, datasets, annotations=annotations)
    page = render_explorer(model.payload(), tmp_path / "explorer.html")
    size = page.stat().st_size
    print(f"paper-scale explorer.html: {size} bytes ({len(predictions)} predictions)")
    assert size < 4_000_000
    started = time.perf_counter()
    browser.get(page.as_uri())
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    _click_cell(browser, 0, 0, "5")
    total = sum(model.category_names[0] in f for f in datasets["syn_en"]["features"])
    assert int(browser.find_element(By.ID, "detail").get_attribute("data-total")) == total
    clicked = time.perf_counter() - started
    _shot(browser, artifacts, "06_paper_scale", "explorer")
    print(f"paper scale: load {loaded:.2f} s, click {clicked:.2f} s")
    assert loaded < 10 and clicked < 5 and _errors(browser) == []
