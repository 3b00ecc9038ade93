"""`llamadiag fleet --html FILE`: the page opened in a real headless Chromium (the desk's
end-to-end set-up): both pictures drawn, the tables there, a hostile file name shown as text.
LLAMADIAG_FLEET_SCREENSHOT=docs/fleet.png also saves the page as a picture."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.desk import test_desk_browser as desk_e2e

pytest.importorskip("matplotlib", reason="matplotlib (the fleet extra) is not installed")
pytest.importorskip("selenium.webdriver", reason="selenium (test extra) is not installed")
from selenium.webdriver.common.by import By

browser = desk_e2e.browser  # the desk's headless Chromium fixture (skips without chromium)

HOSTILE = "pod--><img src=x onerror=alert(1)>"  # also closes a comment, where matplotlib puts labels


@pytest.fixture(scope="module")
def page(fleet_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fleet-html")
    shutil.copytree(fleet_dir, root / "fleet")
    shutil.copy2(root / "fleet" / "gpu-a" / "seed-lv4.log", root / "fleet" / "gpu-c" / f"{HOSTILE}.log")
    out = root / "fleet.html"
    done = subprocess.run(
        [sys.executable, "-m", "llamadiag", "fleet", str(root / "fleet"), "-p", "1", "-f", "json", "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr  # the broken logs of the sample fleet
    return out


def test_page_is_self_contained(page: Path) -> None:
    html = page.read_text()
    assert HOSTILE not in html and "pod--&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    outside_comments = re.sub(r"<!--.*?-->", "", html, flags=re.S)
    assert "<script" not in outside_comments and "<img" not in outside_comments and "@import" not in html
    assert not re.search(r"<[a-z]+ [^>]*\bsrc=", outside_comments)  # nothing loaded from anywhere
    assert "<svg" in html and "default-src 'none'" in html
    assert "<image" not in html  # no raster inside the SVG: the CSP would block its data: URL


def test_pictures_and_tables_render_in_chromium(page: Path, browser) -> None:  # type: ignore[no-untyped-def]
    browser.get(page.as_uri())
    assert browser.title == "llamadiag fleet report"
    for figure in ("heatmap", "timeline"):
        svg = browser.find_element(By.CSS_SELECTOR, f"#{figure} svg")
        assert svg.size["width"] > 300 and svg.size["height"] > 150, (figure, svg.size)
    tables = browser.find_elements(By.TAG_NAME, "table")
    assert len(tables) >= 3
    first = tables[0].find_elements(By.CSS_SELECTOR, "tbody tr")[0].text
    assert "spec-vision-draft-position-gap" in first and "#30204" in first
    headings = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
    assert headings[:3] == ["Known failures", "Upgrade plan", "Builds"]
    # the hostile name is text on the page, not an element
    assert HOSTILE in browser.find_element(By.TAG_NAME, "body").text
    assert browser.find_elements(By.CSS_SELECTOR, "img") == []
    shot = os.environ.get("LLAMADIAG_FLEET_SCREENSHOT")
    if shot:
        desk_e2e._screenshot(browser, Path(shot))
