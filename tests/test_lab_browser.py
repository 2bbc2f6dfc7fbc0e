"""JupyterLab itself in a real headless browser: ``bash scripts/lab.sh`` started on a free localhost port with a
token, Chromium (Debian's, ``bash scripts/setup_browser.sh``) driven by selenium.

One test, marked slow (the tiny main job, a Lab server and two notebooks run in the browser take minutes):

1. the notebooks, copied by ``diagnostics notebooks copy`` for the tiny run store, open through Lab's file browser;
2. notebook 10 runs all its cells; a click on a heat-map cell of the explorer widget lists exactly that category's
   examples with every seed's prediction, in view, the cell outlined;
3. notebook 02 runs all its cells and its figures render;
4. a committed notebook opened (the kernel "nli-diagnostics (.venv)" starts) and saved stays byte for byte, and
   ``git status`` of ``notebooks/`` does not change;
5. the run store, read-only during the session, has the same files and bytes afterwards.

Screenshots of every step go to ``tests/artifacts/lab_browser/`` (git-ignored); the paths are printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from _paths import ARTIFACTS, ROOT

SCREENSHOTS = ARTIFACTS / "lab_browser"
SETUP = "bash scripts/setup_browser.sh (installs the Debian packages chromium and chromium-driver; needs apt-get)"
SAVED = "10_instability_explorer"  # the committed notebook opened and saved

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (dev extra)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip(f"no Chromium / chromedriver on PATH: run {SETUP}")
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1400,1000", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.binary_location = chromium
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, run_store):
    """``bash scripts/lab.sh`` on a free port with a token, serving the copies and (linked) the real notebooks/."""
    from diagnostics.notebooks import copy_notebooks

    home = tmp_path_factory.mktemp("lab")
    served = home / "served"
    copy_notebooks(served / "copies", run_store, scale="tiny")
    (served / "notebooks").symlink_to(ROOT / "notebooks", target_is_directory=True)
    settings = home / "settings"
    for plugin, values in {"@jupyterlab/docmanager-extension/plugin": {"autosave": False},
                           "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                                           "checkForUpdates": False}}.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), hashlib.sha256(os.urandom(16)).hexdigest()[:32]
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(home / "ws"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    log = (home / "lab.log").open("w")
    process = subprocess.Popen(["bash", "scripts/lab.sh", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                                f"--IdentityProvider.token={token}", f"--notebook-dir={served}",
                                "--ServerApp.port_retries=0", *(["--allow-root"] if os.geteuid() == 0 else [])],
                               cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start:\n" + (home / "lab.log").read_text()[-3000:])
                time.sleep(1)
        yield url, token, served
    finally:  # stopped whatever happens: the whole process group (lab.sh execs jupyter; kernels are its children)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
                process.wait(timeout=20)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        log.close()
        print(f"lab log: {home / 'lab.log'}")


def _shot(driver, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def _wait(driver, condition, timeout: float, what: str):
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.5).until(condition)
    except Exception as err:
        _shot(driver, f"failed_{what.replace(' ', '_')}")
        raise AssertionError(f"timed out waiting for {what}") from err


def _open(driver, *names: str) -> None:
    """Double-click through Lab's file browser: folders, then the notebook."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    for name in names:
        xpath = f"//li[contains(@class,'jp-DirListing-item')][.//span[text()='{name}']]"
        item = _wait(driver, lambda d: next((e for e in d.find_elements(By.XPATH, xpath) if e.is_displayed()), None),
                     60, f"file browser item {name}")
        ActionChains(driver).double_click(item).perform()


def _menu(driver, menu: str, label: str) -> None:
    from selenium.webdriver.common.by import By

    bar = _wait(driver, lambda d: d.find_element(By.XPATH, f"//li[contains(@class,'lm-MenuBar-item')]"
                                                           f"[.//div[text()='{menu}']]"), 30, f"menu {menu}")
    bar.click()
    xpath = f"//li[contains(@class,'lm-Menu-item')][.//div[contains(@class,'lm-Menu-itemLabel')][text()='{label}']]"
    _wait(driver, lambda d: d.find_element(By.XPATH, xpath), 10, f"menu item {label}").click()


def _active_panel(driver):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden)")


def _kernel_idle(driver) -> bool:
    """The active notebook's kernel is idle and every cell has run (no ``[*]`` prompt left)."""
    panel = _active_panel(driver)
    busy = driver.execute_script(
        "var p = arguments[0]; return Array.from(p.querySelectorAll('.jp-InputPrompt')).some("
        "function (e) { return e.textContent.indexOf('*') >= 0; });", panel)
    status = driver.execute_script(
        "var s = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');"
        "return s ? s.getAttribute('data-status') : null;")
    return not busy and status in (None, "idle")


def _kernel_ready(driver, timeout: float) -> None:
    """Accept Lab's kernel dialog if it asks (the preferred kernel is preselected), then wait for an idle kernel."""
    from selenium.webdriver.common.by import By

    def ready(d):
        for button in d.find_elements(By.CSS_SELECTOR, ".jp-Dialog .jp-mod-accept"):
            button.click()
            return False
        return any("| Idle" in e.text for e in d.find_elements(By.CSS_SELECTOR, ".jp-StatusBar-Widget"))

    _wait(driver, ready, timeout, "an idle kernel")


def _run_all(driver, name: str, timeout: float) -> None:
    from selenium.webdriver.common.by import By

    _wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden) "
                                                            ".jp-Cell"), 60, f"{name} open")
    _kernel_ready(driver, 120)
    _menu(driver, "Run", "Run All Cells")
    time.sleep(2)
    _wait(driver, lambda d: _kernel_idle(d), timeout, f"{name} run")
    errors = driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.jp-RenderedText[data-mime-type="
        "\"application/vnd.jupyter.stderr\"]')).map(function (e) { return e.textContent; })"
        ".filter(function (t) { return t.indexOf('Traceback') >= 0 || t.indexOf('Error') >= 0; });",
        _active_panel(driver))
    assert not errors, errors


def _listing(driver) -> tuple[dict[str, dict[str, str]], str]:
    """The widget's listed rows (example id -> seed -> prediction code) after every "show more", and its title."""
    from selenium.webdriver.common.by import By

    for _ in range(100):
        more = [b for b in driver.find_elements(By.CSS_SELECTOR, ".dx-more") if b.is_displayed()]
        if not more:
            break
        count = len(driver.find_elements(By.CSS_SELECTOR, ".dx-listing-widget tr[data-id]"))
        more[0].click()
        _wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".dx-listing-widget tr[data-id]")) > count,
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
    from diagnostics.core.schema import ENTAILMENT
    from diagnostics.pipeline import ScalePlan, ensure_runs

    url, token, served = lab
    store_before = _tree_digest(run_store)
    pair = [ROOT / "notebooks" / f"{SAVED}{suffix}" for suffix in (".ipynb", ".py")]
    pair_before, porcelain_before = [p.read_bytes() for p in pair], _porcelain()
    _set_writable(run_store, False)  # the notebooks only read the run store
    try:
        browser.get(f"{url}/lab?token={token}")
        _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".jp-DirListing-content")
              and not d.find_elements(By.ID, "jupyterlab-splash"), 120, "Lab")
        _shot(browser, "01_lab_file_browser")

        # step 2: notebook 10 through the file browser, all cells run, the explorer widget shows
        _open(browser, "copies", f"{SAVED}.ipynb")
        _run_all(browser, "notebook 10", 600)
        widget = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".dx-explorer-widget"), 60,
                       "the explorer widget")
        browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", widget)
        _shot(browser, "02_notebook10_widget")
        cells = browser.find_elements(By.CSS_SELECTOR, ".dx-explorer-widget .dx-cell:not([disabled])")
        assert cells, "no clickable heat-map cell"
        cell = cells[min(2, len(cells) - 1)]  # a top-row cell: its listing used to open far below the screen
        name = next(c for c in cell.get_attribute("class").split() if c.startswith("dx-cell-") and c.count("-") >= 4)
        setting, category_index, seed = name[len("dx-cell-"):].split("-", 2)
        cell.click()
        _wait(browser, lambda d: "dx-chosen" in cell.get_attribute("class"), 30, "the cell outlined")
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".dx-listing-widget tr[data-id]"), 30,
              "the listing")
        top = browser.execute_script("return document.querySelector('.dx-listing-widget')"
                                     ".getBoundingClientRect().top - arguments[0].getBoundingClientRect().top;", cell)
        assert top < 500, f"the listing starts {top:.0f} px below the clicked cell"
        _shot(browser, "03_notebook10_cell_clicked")

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
        _shot(browser, "04_notebook10_listing_complete")

        # step 3: notebook 02, all cells run, its figures render
        browser.find_element(By.CSS_SELECTOR, ".jp-BreadCrumbs-home").click()
        _open(browser, "copies", "02_seed_stability.ipynb")
        _run_all(browser, "notebook 02", 400)
        images = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('.jp-RenderedImage img')).map("
            "function (i) { return [i.naturalWidth, i.naturalHeight]; });", _active_panel(browser))
        assert len(images) >= 2 and all(w > 100 and h > 100 for w, h in images), images
        _shot(browser, "05_notebook02_figures")

        # step 4: a committed notebook opened (kernel started) and saved: no byte changes
        browser.find_element(By.CSS_SELECTOR, ".jp-BreadCrumbs-home").click()
        _open(browser, "notebooks", f"{SAVED}.ipynb")
        _wait(browser, lambda d: any("nli-diagnostics (.venv)" in e.text for e in d.find_elements(
            By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar-kernelName")), 120,
            "the kernel nli-diagnostics (.venv)")
        _kernel_ready(browser, 60)
        time.sleep(2)
        _menu(browser, "File", "Save Notebook")
        time.sleep(3)
        _shot(browser, "06_saved_committed_notebook")
        assert [p.read_bytes() for p in pair] == pair_before, "opening and saving changed the notebook pair"
        assert _porcelain() == porcelain_before
    finally:
        _set_writable(run_store, True)
    assert _tree_digest(run_store) == store_before, "the run store changed"
