"""Opening an HTML file in a real headless Chromium (Debian's, through Playwright) for tests.

Imported by tests (``from browser import open_in_browser, require_browser``), not a test file.
A test calls :func:`require_browser` first: without ``/usr/bin/chromium`` or the ``playwright``
package it is skipped with the reason, unless ``PLAIT_REQUIRE_BROWSER=1`` (set by ``.ci/run``),
in which case it fails, so that CI can never pass without having looked at the page.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")

# The machine's network is closed: no QUIC probes, first-run, sync or component downloads,
# which would otherwise wait on the network or log errors.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Lists, for each anchor whose href is "#id", the ids that name no element; "#" alone is the top.
_MISSING_ANCHORS_JS = """() => [...document.querySelectorAll('a[href^="#"]')]
  .map(a => a.getAttribute('href').slice(1))
  .filter(id => id !== '' && !document.getElementById(decodeURIComponent(id)))"""

# Images that did not load or decode: every <img> must be complete with a natural width.
_BROKEN_IMAGES_JS = """() => [...document.images]
  .filter(img => !(img.complete && img.naturalWidth > 0))
  .map(img => img.alt || img.getAttribute('src').slice(0, 60))"""


def missing() -> str | None:
    """Why the browser cannot be used here, or None if it can."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"no headless browser: {CHROMIUM} is missing (apt-get install chromium)"
    if importlib.util.find_spec("playwright") is None:
        return "no headless browser: the playwright package is missing (pip install playwright)"
    return None


def browser_available() -> bool:
    """Whether /usr/bin/chromium and the playwright package are both there."""
    return missing() is None


def require_browser() -> None:
    """Skips the calling test when the browser is unavailable, or fails it if
    PLAIT_REQUIRE_BROWSER=1 (CI), naming what is missing either way."""
    reason = missing()
    if reason is None:
        return
    if os.environ.get("PLAIT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}; PLAIT_REQUIRE_BROWSER=1 requires it", pytrace=False)
    pytest.skip(reason)


def open_in_browser(path: Path, timeout: float = 30.0, width: int = 1280) -> dict[str, Any]:
    """Opens the HTML file `path` in headless Chromium, waits for it to load and returns what a
    reader would notice is wrong with it.

    The result has: ``images`` (number of <img>), ``broken_images`` (alt text or source of each
    image that is not complete with a natural width), ``figures`` (number of <figure>),
    ``failed_requests``, ``external_requests`` (any request not for a file: or data: URL),
    ``console_errors``, ``page_errors``, ``title``, ``missing_anchors`` (ids of in-page links
    that name no element), ``screenshot`` (a full-page PNG written beside the file, as
    ``path.with_suffix(".png")``) and ``seconds`` (wall time, browser start included).

    `timeout` (seconds) bounds each step: starting the browser, loading, screenshot.
    """
    from playwright.sync_api import sync_playwright

    start = time.monotonic()
    path = Path(path).resolve()
    screenshot = path.with_suffix(".png")
    ms = timeout * 1000
    failed: list[str] = []
    external: list[str] = []
    console_errors: list[str] = []
    page_errors: list[str] = []

    def on_request(request: Any) -> None:
        if not request.url.startswith(("file:", "data:")):
            external.append(request.url)

    with tempfile.TemporaryDirectory(prefix="plait-chromium-") as profile:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS,
                headless=True,
                timeout=ms,
                viewport={"width": width, "height": 900},
                offline=True,
            )
            try:
                page = context.pages[0] if context.pages else context.new_page()
                page.set_default_timeout(ms)
                page.on("request", on_request)
                page.on("requestfailed", lambda r: failed.append(f"{r.url[:100]}: {r.failure}"))
                page.on(
                    "console",
                    lambda m: console_errors.append(m.text) if m.type == "error" else None,
                )
                page.on("pageerror", lambda e: page_errors.append(str(e)))
                page.goto(path.as_uri(), wait_until="load", timeout=ms)
                result = {
                    "images": page.locator("img").count(),
                    "broken_images": page.evaluate(_BROKEN_IMAGES_JS),
                    "figures": page.locator("figure").count(),
                    "title": page.title(),
                    "missing_anchors": page.evaluate(_MISSING_ANCHORS_JS),
                }
                page.screenshot(path=str(screenshot), full_page=True, timeout=ms)
            finally:
                context.close()
    result.update(
        failed_requests=failed,
        external_requests=external,
        console_errors=console_errors,
        page_errors=page_errors,
        screenshot=screenshot,
        seconds=time.monotonic() - start,
    )
    return result
