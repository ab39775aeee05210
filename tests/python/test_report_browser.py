"""The HTML report opened in a real headless Chromium: every image loads, nothing is fetched,
no errors, every in-page link has its target. Skipped without /usr/bin/chromium or playwright,
unless PLAIT_REQUIRE_BROWSER=1 (CI), where it fails instead."""

from __future__ import annotations

import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from browser import open_in_browser, require_browser  # noqa: E402
from plait.report import Claim, Figure, Section, figure_png, render  # noqa: E402

# Starting Chromium, loading and a full-page screenshot take about two seconds; the budget
# leaves room for a busy machine, and each browser step is bounded below it.
BUDGET_SECONDS = 15.0


def utilisation_figure() -> bytes:
    ns = list(range(1, 11))
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(ns, [1 - 1 / (1 + 3 * n) for n in ns], "k-", label="Theorem 1")
    ax.plot(ns, [1 - 1 / (1 + 3 * n) - 0.01 for n in ns], "o--", label="plait")
    ax.set_xlabel("connections N")
    ax.set_ylabel("utilisation")
    ax.legend()
    return figure_png(fig)


def queue_figure() -> bytes:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.bar(["threshold", "RED", "DropTail"], [0.93, 0.91, 0.84])
    ax.set_ylabel("utilisation at N = 4")
    return figure_png(fig)


def report() -> str:
    parallel = Section(
        name="parallel-tcp",
        title="Parallel TCP sockets",
        paper="E. Altman, D. Barman, B. Tuffin, M. Vojnović, Parallel TCP Sockets: Simple Model, "
        "Throughput and Validation, IEEE INFOCOM 2006",
        setup="N AIMD(1, 1/2) connections share a 10 Mb/s bottleneck with a 120 ms round trip.\n\n"
        "Each point is the mean over 5 seeds of 60 simulated seconds after a 10 s warm-up.",
        claims=[
            Claim(
                "Utilisation is 1 - 1/(1+3N) with a threshold-dropper",
                "Theorem 1",
                "0.923 (N = 4)",
                "0.921 ± 0.003 (5 seeds)",
                "±0.02 absolute",
                True,
                "Within 0.004 of the formula for every N from 1 to 10.",
            ),
            Claim(
                "DropTail with small buffers falls short of the formula",
                "Section V.D, Fig. 6",
                "< 0.90 (N = 4)",
                "0.84 ± 0.01 (5 seeds)",
                "below the formula by > 0.02",
                True,
                "Windows synchronise: losses hit every connection in the same round trip.",
            ),
        ],
        figures=[
            Figure("Utilisation against N", "Theorem 1 beside plait.", utilisation_figure()),
            Figure("Utilisation by queue", "N = 4, mean of 5 seeds.", queue_figure()),
        ],
        tables=[
            (
                "Utilisation by N",
                pd.DataFrame({"N": [1, 2, 4], "theorem": [0.75, 0.857142, 0.923077]}),
            )
        ],
        runs={"runs": 150, "reused": 0, "failed": 0, "seeds": 5, "wall time": "82 s"},
    )
    red = Section(
        name="red & <friends>",
        title="RED's gentle mode",
        paper="S. Floyd, 'Optimum functions for computing the drop probability', 2000",
        setup="",
        claims=[
            Claim(
                "Queue stays below max_th",
                "Section 2",
                "< 15 packets",
                "17.2 ± 0.8 (5 seeds)",
                "±1 packet",
                False,
                "Higher by 2.2 packets: plait's RED averages per arrival, the paper per "
                "packet time.",
            )
        ],
        figures=[],
        tables=[],
        runs={},
    )
    return render([parallel, red], "plait: Parallel TCP & RED", "plait 0.4.0, 2024-05-01 14:03")


def test_report_in_a_real_browser(tmp_path: Path):
    require_browser()
    start = time.monotonic()
    path = tmp_path / "report.html"
    path.write_text(report(), encoding="utf-8")
    page = open_in_browser(path, timeout=BUDGET_SECONDS * 0.8)
    assert page["title"] == "plait: Parallel TCP & RED"
    assert page["images"] == 2
    assert page["broken_images"] == []
    assert page["figures"] == 2
    assert page["failed_requests"] == []
    assert page["external_requests"] == []
    assert page["console_errors"] == []
    assert page["page_errors"] == []
    assert page["missing_anchors"] == []
    screenshot = page["screenshot"]
    assert screenshot == path.with_suffix(".png") and screenshot.stat().st_size > 10_000
    assert screenshot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    elapsed = time.monotonic() - start
    assert elapsed <= BUDGET_SECONDS, f"took {elapsed:.1f} s, budget {BUDGET_SECONDS:.0f} s"


def test_a_missing_browser_skips_or_fails_under_ci(tmp_path: Path, monkeypatch):
    import browser

    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    assert not browser.browser_available()
    monkeypatch.delenv("PLAIT_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-chromium is missing"):
        require_browser()
    monkeypatch.setenv("PLAIT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="PLAIT_REQUIRE_BROWSER=1 requires it"):
        require_browser()
