"""The report page in a real browser: Debian's Chromium, headless, driven through its ChromeDriver by Selenium.

The page is served over HTTP on 127.0.0.1 (as a user would open it from a web server); every figure
must load, the console must stay free of errors, and the page must fit a laptop's screen (1366 x 768)
without scrolling sideways. A full-page screenshot is kept in ``$CLOUDBROKER_ARTIFACTS`` (CI keeps it).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
LAPTOP = (1366, 768)


@pytest.fixture(scope="module")
def served(report_dir: Path) -> Iterator[str]:
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(report_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("the browser test needs Debian's chromium and chromium-driver (apt-get install chromium "
                    "chromium-driver; .ci/run installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}", f"--window-size={LAPTOP[0]},{LAPTOP[1]}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_every_figure_loads_without_console_errors_and_the_page_fits_a_laptop(served: str, browser: Any,
                                                                              report_dir: Path) -> None:
    browser.get(served)
    figures = sum(len(s["figures"]) for s in json.loads((report_dir / "report.json").read_text())["sections"])
    loaded = browser.execute_script(
        "return Array.from(document.images).map(i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0)")
    assert loaded == [True] * figures and figures >= 6
    width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width[0]} px wide in a {width[1]} px window"
    widest = browser.execute_script("return Math.max(...Array.from(document.images).map(i => "
                                    "i.getBoundingClientRect().right))")
    assert widest <= width[1]
    headings = browser.execute_script("return Array.from(document.querySelectorAll('section h2')).map(h => "
                                      "h.offsetHeight > 0 ? h.id || h.parentElement.id : null)")
    assert headings == ["trace", "coh", "reservations", "cluster", "leasing", "advisor", "elastic"]
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    _screenshot(browser)


def _screenshot(browser: Any) -> None:
    folder = Path(os.environ.get("CLOUDBROKER_ARTIFACTS", "artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(LAPTOP[0], height)
    assert browser.save_screenshot(str(folder / "report-page.png"))
    browser.set_window_size(*LAPTOP)
