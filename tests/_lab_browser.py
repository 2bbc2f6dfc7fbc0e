"""JupyterLab in headless Chromium for the browser tests: a Lab server on a free port, the selenium driver (the
``browser`` fixture) and the steps both tests take in Lab (open a notebook, run all its cells, wait, screenshot).

Screenshots go to ``tests/artifacts/lab_browser/`` (git-ignored); their paths are printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from _paths import ARTIFACTS, ROOT

SCREENSHOTS = ARTIFACTS / "lab_browser"
SETUP = "bash scripts/setup_browser.sh (installs the Debian packages chromium and chromium-driver; needs apt-get)"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]



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



@contextmanager
def running_lab(command: list[str], home: Path, served: Path, env: dict[str, str] | None = None):
    """Run ``command`` (``jupyter lab`` or a script that execs it) serving ``served`` on a free localhost port with
    a token, its settings, workspaces and log under ``home``; yield ``(url, token)``; stop its process group."""
    settings = home / "settings"
    for plugin, values in {"@jupyterlab/docmanager-extension/plugin": {"autosave": False},
                           "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                                           "checkForUpdates": False}}.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), hashlib.sha256(os.urandom(16)).hexdigest()[:32]
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(home / "ws"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), **(env or {})}
    log = (home / "lab.log").open("w")
    process = subprocess.Popen([*command, "--no-browser", f"--port={port}", "--ip=127.0.0.1",
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
        yield url, token
    finally:  # stopped whatever happens: the whole process group (the kernels are the server's children)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
                process.wait(timeout=20)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        log.close()
        print(f"lab log: {home / 'lab.log'}")


def shot(driver, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def wait_for(driver, condition, timeout: float, what: str):
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.5).until(condition)
    except Exception as err:
        shot(driver, f"failed_{what.replace(' ', '_')}")
        raise AssertionError(f"timed out waiting for {what}") from err


def open_notebook(driver, *names: str) -> None:
    """Double-click through Lab's file browser: folders, then the notebook."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    for position, name in enumerate(names):
        xpath = f"//li[contains(@class,'jp-DirListing-item')][.//span[text()='{name}']]"
        item = wait_for(driver, lambda d: next((e for e in d.find_elements(By.XPATH, xpath) if e.is_displayed()), None),
                     60, f"file browser item {name}")
        ActionChains(driver).double_click(item).perform()
        if position < len(names) - 1:  # a folder: the next name is looked for in it, not in the listing before
            wait_for(driver, lambda d: _current_folder(d) == name, 30, f"the file browser in {name}")


def _current_folder(driver) -> str:
    """The folder the file browser shows (its last breadcrumb; empty at the root)."""
    from selenium.webdriver.common.by import By

    crumbs = driver.find_elements(By.CSS_SELECTOR, ".jp-BreadCrumbs-item")
    return crumbs[-1].text.strip() if crumbs else ""


def menu(driver, menu: str, label: str) -> None:
    from selenium.webdriver.common.by import By

    bar = wait_for(driver, lambda d: d.find_element(By.XPATH, f"//li[contains(@class,'lm-MenuBar-item')]"
                                                           f"[.//div[text()='{menu}']]"), 30, f"menu {menu}")
    bar.click()
    xpath = f"//li[contains(@class,'lm-Menu-item')][.//div[contains(@class,'lm-Menu-itemLabel')][text()='{label}']]"
    wait_for(driver, lambda d: d.find_element(By.XPATH, xpath), 10, f"menu item {label}").click()


def active_panel(driver):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden)")


def _kernel_idle(driver) -> bool:
    """The active notebook's kernel is idle and every cell has run (no ``[*]`` prompt left)."""
    panel = active_panel(driver)
    busy = driver.execute_script(
        "var p = arguments[0]; return Array.from(p.querySelectorAll('.jp-InputPrompt')).some("
        "function (e) { return e.textContent.indexOf('*') >= 0; });", panel)
    status = driver.execute_script(
        "var s = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');"
        "return s ? s.getAttribute('data-status') : null;")
    return not busy and status in (None, "idle")


def kernel_ready(driver, timeout: float) -> None:
    """Accept Lab's kernel dialog if it asks (the preferred kernel is preselected), then wait for an idle kernel."""
    from selenium.webdriver.common.by import By

    def ready(d):
        for button in d.find_elements(By.CSS_SELECTOR, ".jp-Dialog .jp-mod-accept"):
            button.click()
            return False
        return any("| Idle" in e.text for e in d.find_elements(By.CSS_SELECTOR, ".jp-StatusBar-Widget"))

    wait_for(driver, ready, timeout, "an idle kernel")


def run_all(driver, name: str, timeout: float) -> None:
    from selenium.webdriver.common.by import By

    wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden) "
                                                            ".jp-Cell"), 60, f"{name} open")
    kernel_ready(driver, 120)
    menu(driver, "Run", "Run All Cells")
    time.sleep(2)
    wait_for(driver, lambda d: _kernel_idle(d), timeout, f"{name} run")
    errors = driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.jp-RenderedText[data-mime-type="
        "\"application/vnd.jupyter.stderr\"]')).map(function (e) { return e.textContent; })"
        ".filter(function (t) { return t.indexOf('Traceback') >= 0 || t.indexOf('Error') >= 0; });",
        active_panel(driver))
    assert not errors, errors


_TABLE_WIDTHS = """
var root = arguments[0] ? document.querySelector(arguments[0]) : document;
return Array.from(root.querySelectorAll('table')).map(function (table) {
  table.scrollIntoView({block: 'center'});  // Lab lays out only the cells near the view
  var box = table.parentElement;  // the nearest box that scrolls or clips: the table is shown within it
  while (box.parentElement && ['auto', 'scroll', 'hidden', 'clip'].indexOf(getComputedStyle(box).overflowX) < 0) {
    box = box.parentElement;
  }
  var rect = table.getBoundingClientRect(), boxRect = box.getBoundingClientRect();
  return {head: Array.from(table.querySelectorAll('th')).map(function (th) { return th.textContent; }).join('|'),
          width: rect.width, box_width: box.clientWidth, box_right: boxRect.right, viewport: window.innerWidth,
          scrolls: ['auto', 'scroll'].indexOf(getComputedStyle(box).overflowX) >= 0,
          columns: Math.max.apply(null, [0].concat(Array.from(table.rows).map(function (r) {
            return r.cells.length;
          })))};
});
"""


def table_widths(driver, scope: str | None = None) -> list[dict]:
    """Every table under ``scope`` (a CSS selector; the whole page by default), scrolled into view and measured: its
    width, the width of the nearest box that scrolls or clips it, that box's right edge, the window's width, whether
    the box scrolls, the table's header text and column count."""
    return driver.execute_script(_TABLE_WIDTHS, scope)


def overflowing(tables: list[dict]) -> list[dict]:
    """The tables wider than the box that shows them (a pixel of rounding allowed)."""
    return [t for t in tables if t["width"] > t["box_width"] + 1]
