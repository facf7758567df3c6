"""The demo report in a real browser: Debian's Chromium, headless, driven by Playwright.

`make test` installs Chromium (apt-get install chromium); if it is missing these tests fail,
they never skip. The screenshot is kept in build/test-artifacts/ for a person to look at.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import image

from tests.conftest import ARTIFACTS
from veil import anonymize
from veil.demo import DemoResult
from veil.report import build_report

HEADINGS = [
    "In plain words",
    "What is personal: the scan",
    "What was done: the policy",
    "Privacy: models and risk",
    "Utility: what analysts keep",
    "Columns, before and after",
    "Differential privacy",
]

# For each figure: loaded, its size, and how much of it is not background (drawn on a canvas;
# data: URIs are same-origin, so the canvas is readable).
MEASURE_FIGURES = """
() => Array.from(document.querySelectorAll('img.figure')).map(img => {
  const c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const px = g.getImageData(0, 0, c.width, c.height).data;
  let ink = 0; const colours = new Set();
  for (let i = 0; i < px.length; i += 4 * 7) {
    if (px[i] < 240 || px[i + 1] < 240 || px[i + 2] < 240) ink++;
    colours.add((px[i] >> 4) + ',' + (px[i + 1] >> 4) + ',' + (px[i + 2] >> 4));
  }
  const r = img.getBoundingClientRect();
  return {alt: img.alt, complete: img.complete, width: img.naturalWidth, shown: r.width,
          ink: ink / (px.length / (4 * 7)), colours: colours.size};
})
"""


class Visit:
    """A page with everything it said: console messages, errors, requests, dialogs."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.console: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", self._dialog)
        self.page.goto(path.resolve().as_uri(), wait_until="load")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def test_demo_report_renders_in_chromium(browser: Any, demo_run: DemoResult) -> None:
    visit = Visit(browser, demo_run.files["report"])
    page = visit.page
    assert page.title() == "veil demo: Kenyan insurance release"
    assert page.locator("h2").all_inner_texts() == HEADINGS
    figures = page.evaluate(MEASURE_FIGURES)
    assert len(figures) == len(demo_run.report.figures) >= 15
    for figure in figures:
        assert figure["complete"], figure["alt"]
        assert figure["width"] > 200, figure["alt"]
        assert figure["shown"] > 200, figure["alt"]  # laid out, not collapsed
        assert figure["ink"] > 0.01, figure["alt"]  # something is drawn
        assert figure["colours"] > 3, figure["alt"]
    body = page.inner_text("body")
    assert "Every person shares their County, Gender, Marital_status, No_of_dependents, Age" in body
    assert "records released of 1,001" in body
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "demo-report.png"
    shot.write_bytes(page.screenshot(full_page=True))
    picture = image.imread(io.BytesIO(shot.read_bytes()), format="png")
    assert picture.shape[0] > 3000  # the whole report, not one screen
    assert np.std(picture[..., :3]) > 0.05
    page.close()
    # the page loaded nothing but itself (figures are data: URIs) and said nothing
    assert [u for u in visit.requests if not u.startswith(("file:", "data:"))] == []
    assert visit.console == []
    assert visit.errors == []


def test_injected_markup_shows_as_text_in_chromium(
    browser: Any, key_env: str, tmp_path: Path
) -> None:
    payloads = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']
    frame = pd.DataFrame(
        {"note": payloads * 10, "<b>col</b>": list("xy") * 10, "age": np.arange(20) % 4}
    )
    release = anonymize(frame, {"columns": {"age": {"role": "quasi_identifier"}}})
    path = tmp_path / "report.html"
    build_report(release, original=frame, aligned=True, title=payloads[1]).write(path)
    visit = Visit(browser, path)
    body = visit.page.inner_text("body")
    assert payloads[0] in body
    assert "<b>col</b>" in body
    assert visit.page.title() == payloads[1]
    assert visit.page.locator("img:not(.figure)").count() == 0  # no injected image element
    assert visit.page.locator("script").count() == 0
    visit.page.close()
    assert visit.dialogs == []  # nothing ran
    assert [u for u in visit.requests if not u.startswith(("file:", "data:"))] == []
