"""The desk end to end: `llamadiag desk` as a user starts it, driven by a real headless Chromium.

Debian's chromium and chromedriver are installed by .ci/run; without them the test is skipped
with the reason. LLAMADIAG_DESK_SCREENSHOT=docs/desk.png also saves the result page as a picture.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.paths import ROOT

pytest.importorskip("starlette", reason="the desk extra is not installed")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (test extra) is not installed")
from selenium.webdriver.common.by import By  # noqa: E402

SEED_LOG = ROOT / "sample_logs" / "seed-b11503-lv4.log"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
# The launch flags for this machine's closed network: no background connections, no GPU.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
]


@pytest.fixture(scope="module")
def desk_url() -> Iterator[str]:
    """`llamadiag desk --port 0` in a child process; the URL is read from what it prints."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "llamadiag", "desk", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, f"the desk did not say where it listens: {line!r}"
        yield found.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory() as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
        driver.implicitly_wait(20)  # find_element waits for the page a submit loads
        try:
            yield driver
        finally:
            driver.quit()


def test_paste_a_log_and_read_the_diagnosis(desk_url: str, browser) -> None:  # type: ignore[no-untyped-def]
    browser.get(desk_url)
    box = browser.find_element(By.ID, "log")
    box.click()
    # what a paste does: the text arrives in the focused box at once, not key by key
    browser.execute_cdp_cmd("Input.insertText", {"text": SEED_LOG.read_text()})
    browser.find_element(By.ID, "diagnose").click()
    finding = browser.find_element(By.CSS_SELECTOR, "article.finding")
    assert "loses position sync on image requests" in finding.find_element(By.TAG_NAME, "h2").text
    assert "Confirmed" in finding.find_element(By.CLASS_NAME, "badge").text
    diagnosis = finding.find_element(By.CLASS_NAME, "diagnosis").text
    assert "position 17" in diagnosis and "942" in diagnosis and "HTTP 500" in diagnosis
    assert "Fixed in b11548 by PR #30257; you run b11503: upgrade" in finding.find_element(By.CLASS_NAME, "build").text
    steps = finding.find_elements(By.CSS_SELECTOR, "ol.steps > li")
    assert len(steps) >= 3 and "b11548" in steps[1].text
    links = {a.text: a.get_attribute("href") for a in finding.find_elements(By.CSS_SELECTOR, "ul.references a")}
    assert links["PR #30257"] == "https://github.com/ggml-org/llama.cpp/pull/30257"
    markdown = browser.find_element(By.ID, "md-reply").get_attribute("value")
    assert markdown.startswith("# llamadiag diagnosis") and "PR #30257" in markdown
    # only the redacted report is shown: the raw paste is not echoed, the box is ready for the next one
    assert browser.find_element(By.ID, "log").get_attribute("value") == ""
    assert "192.168.1.23" not in browser.page_source  # a client IP in the log's request lines
    shot = os.environ.get("LLAMADIAG_DESK_SCREENSHOT")
    if shot:
        _screenshot(browser, Path(shot))


def test_lookup_link_works_without_javascript(desk_url: str, browser) -> None:  # type: ignore[no-untyped-def]
    browser.get(desk_url + "?q=failed+to+process+speculative+batch")
    best = browser.find_element(By.ID, "best")
    assert "spec-vision-draft-position-gap" in best.find_element(By.CLASS_NAME, "meta").text


def test_over_the_limit_is_a_413_with_a_message(desk_url: str) -> None:
    """A real socket, a 10 MB paste: the answer arrives, it is not a reset connection."""
    response = httpx2.post(desk_url, data={"log": "x" * 10_000_000}, timeout=60)
    assert response.status_code == 413
    assert "request too large: 10.0 MB, the desk accepts up to 5.0 MB" in response.text


def _screenshot(browser, path: Path) -> None:  # type: ignore[no-untyped-def]
    """The whole result page as one picture, beyond the window's height."""
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))
