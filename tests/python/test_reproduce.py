"""`plait reproduce`: the error bars of its figures, and each experiment end to end through the
command line with its default seeds."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from plait.experiments import error_bars  # noqa: E402
from plait.experiments import parallel_tcp as ptcp  # noqa: E402

#: 0.83 five times: its mean is 1.1e-16 below 0.83 (the sum's rounding).
EQUAL = [0.83] * 5


def test_mean_of_equal_seeds_can_fall_outside_their_range():
    """The premise of the regression tests below: without it they would prove nothing."""
    s = pd.Series(EQUAL)
    assert s.mean() < s.min()


def test_error_bars_clip_the_rounding_of_a_mean():
    s = pd.Series(EQUAL)
    bars = error_bars([s.mean()], [s.min()], [s.max()])
    assert bars.shape == (2, 1) and bars[0, 0] == 0 and 0 <= bars[1, 0] < 1e-15
    # matplotlib refused the unclipped bars ("'yerr' must not contain negative values").
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="yerr"):
        ax.errorbar([1], [s.mean()], yerr=[[s.mean() - s.min()], [s.max() - s.mean()]])
    ax.errorbar([1], [s.mean()], yerr=bars)
    plt.close("all")


def test_error_bars_are_the_distances_to_low_and_high():
    bars = error_bars([0.5, 2.0, math.nan], [0.25, 1.0, math.nan], [1.0, 2.5, math.nan])
    assert bars[:, :2].tolist() == [[0.25, 1.0], [0.5, 0.5]]
    assert np.isnan(bars[:, 2]).all()


def test_error_bars_refuse_a_centre_really_outside_the_range():
    with pytest.raises(RuntimeError, match="outside"):
        error_bars([0.8], [0.83], [0.9])
    with pytest.raises(RuntimeError, match="outside"):
        error_bars([1.0], [0.83], [0.9])


def test_parallel_tcp_figure_with_five_equal_seeds():
    """Regression: the parallel-tcp utilisation figure drew bars mean - min, negative when five
    seeds give the same utilisation (as DropTail runs can)."""
    q = ptcp.queues()[0].label
    rows = pd.DataFrame(
        {"queue": q, "n": [1] * 5 + [2] * 5, "utilization": EQUAL + [0.9, 0.91, 0.92, 0.93, 0.94]}
    )
    fig = ptcp.utilization_figure(rows)
    png = io.BytesIO()
    fig.savefig(png, format="png")
    plt.close(fig)
    assert png.getvalue().startswith(b"\x89PNG")
