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
import numpy as np
import pandas as pd
import pytest

from diagnostics import explorer as ex
from diagnostics.core.schema import ENTAILMENT
from diagnostics.report import render_report
from diagnostics.report._explorer import render_explorer

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
    # two systems side by side at paper scale: en against a second system with 6 seeds of its own; the page
    # computes the outcomes from the per-seed predictions it holds anyway
    from selenium.webdriver.support.ui import Select

    second = synthetic_predictions({"en": ("syn_en", datasets["syn_en"])}, seeds=range(6), seed=11)
    pair = ex.build_comparison(predictions, second.assign(model="other"), {"syn_en": datasets["syn_en"]},
                               select_a={"language": "en"}, annotations={"syn_en": annotations["syn_en"]})
    page = render_explorer(pair.payload(), tmp_path / "pair.html")
    print(f"paper-scale explorer.html of two systems: {page.stat().st_size} bytes")
    started = time.perf_counter()
    browser.get(page.as_uri())
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    loaded = time.perf_counter() - started
    category = pair.category_names[0]
    started = time.perf_counter()
    browser.find_element(By.CSS_SELECTOR, "#cmp-table tr.cmp-row th").click()
    Select(browser.find_element(By.ID, "cmp-outcome")).select_by_value("fixed")
    total = int(browser.find_element(By.ID, "cmp-detail").get_attribute("data-total"))
    clicked = time.perf_counter() - started
    assert total == len(pair.examples(category, "fixed"))
    _shot(browser, artifacts, "15_paper_scale_two_systems", "compare")
    print(f"paper scale, two systems: load {loaded:.2f} s, a category and a filter {clicked:.2f} s")
    assert page.stat().st_size < 1_000_000 and loaded < 10 and clicked < 5 and _errors(browser) == []


# --- two systems side by side ------------------------------------------------------------------------------------

PAIR_A, PAIR_B = {"experiment": "base", "language": "en"}, {"experiment": "extra-100"}


@pytest.fixture(scope="module")
def pair_report(report, tmp_path_factory):
    """The report folder again, rendered by ``diagnostics report --compare-a ... --compare-b ...``."""
    from typer.testing import CliRunner

    from diagnostics.cli import app

    index, predictions, datasets, model = report
    root = tmp_path_factory.mktemp("pair") / "report"
    shutil.copytree(index.parent, root)
    result = CliRunner().invoke(app, ["report", str(root), "--compare-a", "experiment=base", "--compare-a",
                                      "language=en", "--compare-b", "experiment=extra-100"])
    assert result.exit_code == 0, result.output
    assert "opens with experiment=base,language=en (A) and experiment=extra-100 (B) side by side" in result.output
    return root / "index.html", predictions, datasets, model.compare(PAIR_A, PAIR_B)


def _compare_rows(driver) -> dict:
    """Category -> (outcome counts, {side: {seed: shown MCC}}) of the two-system table, read in one call."""
    rows = driver.execute_script("""
        return Array.from(document.querySelectorAll('#cmp-table tr.cmp-row')).map(function (tr) {
          var counts = {};
          tr.querySelectorAll('td[data-outcome]').forEach(function (td) {
            counts[td.getAttribute('data-outcome')] = +td.textContent; });
          var points = Array.from(tr.querySelectorAll('circle.pt')).map(function (c) {
            return [c.classList.contains('a') ? 'A' : 'B', c.getAttribute('data-seed'), c.getAttribute('data-mcc')];
          });
          return [tr.getAttribute('data-category'), counts, points];
        });""")
    out = {}
    for category, counts, points in rows:
        sides = {"A": {}, "B": {}}
        for side, seed, value in points:
            sides[side][seed] = value
        out[category] = (counts, sides)
    return out


def _compare_listing(driver) -> list[tuple[str, str, dict]]:
    """(id, outcome, {(side, seed): prediction code}) of every listed example, after "show more" to the end."""
    driver.execute_script("""
        var button;
        while ((button = document.querySelector('#cmp-detail button.more'))) { button.click(); }""")
    rows = driver.execute_script("""
        return Array.from(document.querySelectorAll('#cmp-detail tr.cmp-ex')).map(function (tr) {
          return [tr.getAttribute('data-id'), tr.getAttribute('data-outcome'),
                  Array.from(tr.querySelectorAll('td.pred')).map(function (td) {
                    return [td.getAttribute('data-side'), td.getAttribute('data-seed'), td.getAttribute('data-pred')];
                  })];
        });""")
    return [(i, outcome, {(side, seed): code for side, seed, code in cells}) for i, outcome, cells in rows]


def _codes(pair, frame) -> list[tuple[str, str, dict]]:
    out = []
    for r in frame.itertuples(index=False):
        r = r._asdict()
        codes = {}
        for side, labels in (("a", pair.labels_a), ("b", pair.labels_b)):
            for seed in labels:
                pred = r[f"prediction_{side}_{seed}"]
                codes[(side, seed)] = "" if pred is None else ("1" if pred == ENTAILMENT else "0")
        out.append((r["example_id"], r["outcome"], codes))
    return out


def test_two_systems_side_by_side_in_a_headless_browser(browser, pair_report, artifacts):
    """The page written by ``diagnostics report --compare-a/--compare-b``: both systems' per-seed MCC per category,
    a category selected, the listing filtered to "fixed by B", an example opened, the sides swapped."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    index, predictions, datasets, pair = pair_report
    browser.get(index.as_uri())
    browser.find_element(By.LINK_TEXT, "instability explorer (which examples flip)").click()
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    assert _errors(browser) == [], "console errors on load"
    sections = [s.get_attribute("id") for s in browser.find_elements(By.TAG_NAME, "section")]
    assert sections == ["compare", "lead", "explorer"], "a page written for a pair leads with it"
    assert Select(browser.find_element(By.ID, "cmp-a")).first_selected_option.get_attribute("value") == str(pair.a)
    assert Select(browser.find_element(By.ID, "cmp-b")).first_selected_option.get_attribute("value") == str(pair.b)
    totals = browser.execute_script("""
        var out = {}; document.querySelectorAll('#cmp-totals span[data-outcome]').forEach(function (s) {
          out[s.getAttribute('data-outcome')] = +s.textContent.split(' ').pop(); }); return out;""")
    assert totals == pair.counts()
    legend = browser.find_element(By.ID, "cmp-legend").text
    assert "A: base (en · base), 3 seeds" in legend and "B: extra-100 (en · extra-100), 3 seeds" in legend
    _shot(browser, artifacts, "10_two_systems_loaded", "compare")

    # per category: both systems' per-seed MCC (the notebook's digits) and the outcome counts of the model
    rows = _compare_rows(browser)
    assert list(rows) == pair.category_names
    table, strips = pair.category_table(), pair.seed_mcc()
    for category, (counts, sides) in rows.items():
        assert counts == {k: int(table.at[category, k]) for k in ex.OUTCOMES}, category
        mine = strips[strips["category"] == category]
        for side in ("A", "B"):
            expected = {r.seed: ex.two_decimals(r.mcc) for r in mine[mine["side"] == side].itertuples()
                        if np.isfinite(r.mcc)}
            assert sides[side] == expected, (category, side)

    # select a category: its examples, A's seeds beside B's, in the model's order
    category = table.assign(fixed_=table["fixed"]).sort_values("fixed_", ascending=False, kind="stable").index[0]
    c = pair.explorer.category_names.index(category)
    browser.find_element(By.CSS_SELECTOR, f"#cmp-table tr.cmp-row[data-c='{c}'] th").click()
    detail = browser.find_element(By.ID, "cmp-detail")
    assert detail.get_attribute("data-category") == category
    top = browser.execute_script("return document.getElementById('cmp-detail').getBoundingClientRect().top;")
    assert 0 <= top < browser.execute_script("return window.innerHeight;") - 80, "listing not in view"
    assert _compare_listing(browser) == _codes(pair, pair.examples(category, None))
    _shot(browser, artifacts, "11_two_systems_category")

    # filter to "fixed by B": exactly the examples every seed of A gets wrong and every seed of B right
    Select(browser.find_element(By.ID, "cmp-outcome")).select_by_value("fixed")
    fixed = _compare_listing(browser)
    assert fixed == _codes(pair, pair.examples(category, "fixed")) and len(fixed) == table.at[category, "fixed"] > 0
    for _, outcome, codes in fixed:  # A's seeds agree, B's seeds agree, and the two sides differ
        a, b = ({v for (side, _), v in codes.items() if side == s} for s in ("a", "b"))
        assert outcome == "fixed" and len(a) == len(b) == 1 and a != b
    _shot(browser, artifacts, "12_two_systems_fixed_by_b")

    # open an example: its full texts and every seed of both sides below its row
    first = fixed[0][0]
    browser.find_element(By.CSS_SELECTOR, f"#cmp-detail tr.cmp-ex[data-id='{first}']").click()
    opened = browser.find_element(By.CSS_SELECTOR, "#cmp-detail tr.cmp-open .cmp-example")
    assert opened.get_attribute("data-id") == first and opened.get_attribute("data-outcome") == "fixed"
    example = pair.example(first)
    assert example["premise"] in opened.text and example["hypothesis"] in opened.text
    cells = opened.find_elements(By.CSS_SELECTOR, "td.pred")
    assert [(td.get_attribute("data-side"), td.get_attribute("data-seed"), "ok" in td.get_attribute("class"))
            for td in cells] == [(s.side.lower(), s.seed, bool(s.correct)) for s in example["seeds"].itertuples()]
    assert f"compared categories: {', '.join(example['categories'])}" in opened.text
    _shot(browser, artifacts, "13_two_systems_example_open")

    # swap the sides in the page: what B fixed, A now breaks
    Select(browser.find_element(By.ID, "cmp-a")).select_by_value(str(pair.b))
    Select(browser.find_element(By.ID, "cmp-b")).select_by_value(str(pair.a))
    swapped = _compare_rows(browser)
    for category, (counts, _) in swapped.items():
        assert counts["broken"] == rows[category][0]["fixed"] and counts["fixed"] == rows[category][0]["broken"]
    # two settings of different datasets cannot be compared
    ru = pair.explorer.find_setting(language="ru")
    Select(browser.find_element(By.ID, "cmp-b")).select_by_value(str(ru))
    assert "one diagnostic set" in browser.find_element(By.ID, "cmp-table").text
    assert browser.find_elements(By.CSS_SELECTOR, "#cmp-table tr.cmp-row") == []
    assert _too_wide(browser) <= 0 and _errors(browser) == [], "console errors while clicking"


def test_the_two_system_view_escapes_every_text_from_the_data(browser, artifacts, tmp_path):
    """Hostile premises, annotator features, names and setting values show as text; no markup of theirs runs."""
    from selenium.webdriver.common.by import By

    hostile = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"> & </script>"
    en = synthetic_dataset("syn_en", 40, seed=0)
    en["premise"] = hostile + en["premise"]
    one = synthetic_predictions({"en": ("syn_en", en)})
    other = synthetic_predictions({"en": ("syn_en", en)}, seed=7).assign(model="<b onmouseover=x>m2</b>")
    pair = ex.build_comparison(one, other, {"syn_en": en}, names=(hostile, "B'\"<i>"),
                               annotations={"syn_en": [[hostile]] * len(en)})
    page = render_explorer(pair.payload(), tmp_path / "explorer.html")
    browser.get(page.as_uri())
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    browser.find_element(By.CSS_SELECTOR, "#cmp-table tr.cmp-row th").click()
    browser.find_element(By.CSS_SELECTOR, "#cmp-detail tr.cmp-ex").click()
    text = browser.find_element(By.ID, "compare").text
    assert hostile in text and "B'\"<i>" in text
    assert browser.find_elements(By.CSS_SELECTOR, "#compare img, #compare b[onmouseover], #compare i") == []
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-pwned") is None
    _shot(browser, artifacts, "14_two_systems_hostile_texts", "compare")
    assert _errors(browser) == []


def test_report_compare_options_are_checked_before_anything_is_written(report, tmp_path):
    from typer.testing import CliRunner

    from diagnostics.cli import app

    index = report[0]
    root = tmp_path / "report"
    shutil.copytree(index.parent, root)
    before = (root / "explorer.html").read_bytes()
    cases = {("--compare-a", "experiment=base"): "needs --compare-b",
             ("--compare-a", "experiment", "--compare-b", "x=y"): "expected KEY=VALUE",
             ("--compare-a", "seed=1", "--compare-b", "experiment=extra-100"): "no key 'seed'",
             ("--compare-a", "experiment=none", "--compare-b", "experiment=extra-100"): "no setting matches",
             ("--compare-a", "experiment=base", "--compare-b", "experiment=extra-100"): "2 settings match",
             ("--compare-a", "language=ru", "--compare-b", "experiment=extra-100"): "one diagnostic set",
             ("--compare-a", "experiment=extra-100", "--compare-b", "experiment=extra-100"): "the same setting"}
    for args, message in cases.items():
        result = CliRunner().invoke(app, ["report", str(root), *args])
        assert result.exit_code == 2 and message in result.output, (args, result.output)
        assert (root / "explorer.html").read_bytes() == before
    (root / "figures" / "explorer.json").unlink()
    result = CliRunner().invoke(app, ["report", str(root), "--compare-a", "language=ru", "--compare-b",
                                      "language=en"])
    assert result.exit_code == 2 and "no instability explorer data" in result.output
