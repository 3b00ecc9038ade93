"""`llamadiag fleet --html FILE`: the page opened in a real headless Chromium (the desk's
end-to-end set-up): both pictures drawn by the page's plotly.js under its Content-Security-Policy,
the tables there, a hostile file name shown as text (in the tables and in the heatmap's labels).
LLAMADIAG_FLEET_SCREENSHOT=docs/fleet.png also saves the page as a picture, once drawn."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.desk import test_desk_browser as desk_e2e

pytest.importorskip("plotly", reason="plotly (the fleet extra) is not installed")
pytest.importorskip("selenium.webdriver", reason="selenium (test extra) is not installed")
from selenium.webdriver.common.by import By

browser = desk_e2e.browser  # the desk's headless Chromium fixture (skips without chromium)

HOSTILE = "pod--><img src=x onerror=alert(1)><b>x<br>y"  # a tag, a comment's end, tags plotly reads in labels


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


def _scripts(html: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", html, flags=re.S)


def test_page_is_self_contained(page: Path) -> None:
    html = page.read_text()
    assert HOSTILE not in html and "pod--&gt;&lt;img src=x onerror=alert(1)&gt;&lt;b&gt;x&lt;br&gt;y" in html
    assert "<img src=x" not in html  # not in a script either: there its < is \\u003c
    scripts = _scripts(html)
    assert len(scripts) == 2 and "Plotly.newPlot" in scripts[1]  # plotly.js, then the drawing
    outside = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    assert "<script" not in outside and "<img" not in outside and "@import" not in html
    assert not re.search(r"<[a-z]+ [^>]*\b(src|href)=", outside.split("<h2>")[0])  # above the tables: no link, no load
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy
    hashes = ["'sha256-" + base64.b64encode(hashlib.sha256(js.encode()).digest()).decode() + "'" for js in scripts]
    assert policy.group(1) == "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src " + " ".join(
        hashes
    )


def test_pictures_and_tables_render_in_chromium(page: Path, browser) -> None:  # type: ignore[no-untyped-def]
    browser.get(page.as_uri())
    assert browser.title == "llamadiag fleet report"
    browser.find_element(By.CSS_SELECTOR, "body[data-drawn]")  # plotly.js has drawn both: find_element waits
    for figure in ("heatmap", "timeline"):
        svg = browser.find_element(By.CSS_SELECTOR, f"#{figure} svg.main-svg")
        assert svg.size["width"] > 300 and svg.size["height"] > 150, (figure, svg.size)
    cells = browser.find_elements(By.CSS_SELECTOR, "#heatmap .hm image")  # the heatmap's cells, a data: image
    assert len(cells) == 1 and cells[0].get_attribute("href").startswith("data:image/png")
    counts = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#heatmap .heatmap-label text")]
    assert counts and all(c.isdigit() for c in counts)
    bars = browser.find_elements(By.CSS_SELECTOR, "#timeline .bars path")
    assert len(bars) >= 4  # two traces, a bar per day with logs (the sample fleet's three days)
    rows = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#heatmap .ytick text")]
    assert ("gpu-c/" + HOSTILE)[-40:] in rows, rows  # the name (its last 40 characters) as text, no tag read
    assert browser.find_elements(By.CSS_SELECTOR, "#heatmap .ytick text b, #heatmap .ytick text a") == []
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
