"""`plait reproduce`: the error bars of its figures, and each experiment end to end through the
command line with its default seeds."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

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


# ---- Every experiment end to end, through the command line, with the default seeds -----------
#
# `plait reproduce NAME` with its default options (seeds 1..5, the report in
# results/reproduce/ under the current folder) on each experiment cut down to a few seconds:
# its grids and run lengths shortened here, its seeds and every step after the runs (tables,
# claims, figures, report) as they are. The full version, `plait reproduce all`, is the check
# before a release (docs/sweeps.md).


def _shorten_times(text: str, factor: float) -> str:
    """The scenario's text with every time in whole seconds divided by `factor`."""
    return re.sub(r'"(\d+)s"', lambda m: f'"{int(m.group(1)) / factor:g}s"', text)


def _shrunk_copy(tmp_path, original: Path, edit) -> Path:
    """Writes `edit(text)` of a scenario file to tmp_path; returns the copy's path (passed to
    the experiment in its settings)."""
    folder = tmp_path / "scenarios"
    folder.mkdir(exist_ok=True)
    copy = folder / original.name
    copy.write_text(edit(original.read_text(encoding="utf-8")), encoding="utf-8")
    return copy


def _with_settings(monkeypatch, module, settings) -> None:
    """Registers `module`'s experiment with `settings(options)` in place of its own choice
    for the command line's options: the settings are passed in, the module is not patched."""
    import plait.experiments

    replaced = module.EXPERIMENT.with_settings(settings)
    monkeypatch.setitem(plait.experiments._REGISTRY, module.EXPERIMENT.name, replaced)


def _shrink_parallel_tcp(monkeypatch, tmp_path):
    from plait.experiments import parallel_tcp_claims as pc

    _with_settings(monkeypatch, pc, lambda o: pc.Settings([1, 2], 20.0, 5.0, 2000, list(o.seeds)))


def _shrink_linux_fidelity(monkeypatch, tmp_path):
    from plait.experiments import linux_fidelity as lf

    _with_settings(
        monkeypatch,
        lf,
        lambda o: lf.Settings(list(o.seeds), 3.0, 1.0, ns=(1, 3), buffers=(5,), rtts_ms=(20,)),
    )


def _shrink_yang_amer(monkeypatch, tmp_path):
    from plait.experiments import yang_amer_2013 as ya

    tables = {
        "I": ["default", (0.5, 1.0), (0.9, 1.2), (0.9, 1.4)],
        "II": ["default", (0.5, 1.0), (0.9, 1.0)],
    }
    _with_settings(
        monkeypatch,
        ya,
        lambda o: ya.Settings(list(o.seeds), tables, file_bytes=3 * 2**20, duration=20.0),
    )


def _shrink_coupled_basics(monkeypatch, tmp_path):
    from plait.experiments import coupled_basics as cb

    _with_settings(monkeypatch, cb, lambda o: cb.Settings(4.0, 1.0, list(o.seeds)))


def _shrink_mpfast(monkeypatch, tmp_path):
    """Every time divided by 50: 6 s runs whose background flows come at 2 s and leave at
    4 s, and the phases measured on the same scale."""
    from plait.experiments import mpfast as mf

    k = 50.0
    full = mf.Settings()

    def short(path: Path) -> Path:
        return _shrunk_copy(
            tmp_path,
            path,
            lambda text: _shorten_times(text, k).replace(
                'sample_interval = "2s"', 'sample_interval = "40ms"'
            ),
        )

    def scaled(window):
        return tuple(t / k for t in window)

    small = dict(
        background_ccs=mf.BACKGROUND_CCS[:1],
        fairness_duration=full.fairness_duration / k,
        efficiency=short(full.efficiency),
        fairness=short(full.fairness),
        loadbalance=short(full.loadbalance),
        balance_duration=full.balance_duration / k,
        before=scaled(full.before),
        during=scaled(full.during),
        after=scaled(full.after),
        link1_only=scaled(full.link1_only),
        bg_end=full.bg_end / k,
    )
    _with_settings(monkeypatch, mf, lambda o: mf.Settings(list(o.seeds), **small))


def _shrink_multfrc(monkeypatch, tmp_path):
    from plait.experiments import multfrc as mt

    _with_settings(
        monkeypatch,
        mt,
        lambda o: mt.Settings(
            seeds=list(o.seeds),
            friendly_n=(1, 4),
            fractional_n=(0.5, 1.0),
            capacities=(8,),
            influence_n=(2,),
            eq_loss=(0.02,),
            eq_red_n=(2,),
            eq_capacities=(8,),
            eq_droptail_n=(5,),
            length=(8.0, 2.0),
            eq_length=(8.0, 2.0),
            smooth_from=2.0,
        ),
    )


def _shrink_mpat(monkeypatch, tmp_path):
    """As test_mpat's quick test: 26 s runs, two N, one pair, shares changing every 6 s and
    the transients at 30 and 45 s of 60."""
    from plait.experiments import mpat as mp

    shares = {f"{60 * k}s": f"{6 * k}s" for k in range(1, 10)}
    transient = {"120s": "30s", "240s": "45s", "360s": "60s"}

    def times(table):
        return lambda text: re.sub(
            r'"(\d+s)"', lambda m: f'"{table.get(m.group(1), m.group(1))}"', text
        )

    copies = {
        "shares": _shrunk_copy(tmp_path, mp.SHARES, times(shares)),
        "transient_cbr": _shrunk_copy(tmp_path, mp.TRANSIENT_CBR, times(transient)),
        "transient_tcp": _shrunk_copy(tmp_path, mp.TRANSIENT_TCP, times(transient)),
    }
    timing = mp.Timing(6.0, 1.0, 30.0, 45.0, 60.0, just_before=5.0, dip_window=5.0)
    _with_settings(
        monkeypatch,
        mp,
        lambda o: mp.Settings(
            list(o.seeds),
            26.0,
            26.0,
            26.0,
            26.0,
            (1, 16),
            ("multcp",),
            ((4, 1),),
            timing,
            **copies,
        ),
    )


def _shrink_ns2_agreement(monkeypatch, tmp_path):
    """One scenario at the full length over the default seeds, ns-2's rows read from the
    committed store (no ns-2 needed, nothing written into the source tree)."""
    from plait.experiments import ns2_agreement as na

    _with_settings(
        monkeypatch,
        na,
        lambda o: na.Settings(seeds=list(o.seeds), cases=("sack-red",), ns="stored"),
    )


SHRINK = {
    "parallel-tcp": _shrink_parallel_tcp,
    "linux-fidelity": _shrink_linux_fidelity,
    "yang-amer-2013": _shrink_yang_amer,
    "coupled-basics": _shrink_coupled_basics,
    "mpfast": _shrink_mpfast,
    "multfrc": _shrink_multfrc,
    "mpat": _shrink_mpat,
    "ns2-agreement": _shrink_ns2_agreement,
}


def test_every_experiment_is_tested_end_to_end():
    from plait.experiments import MODULES

    assert set(SHRINK) == set(MODULES)


#: Run here by `make test`: the README's experiment and the quickest. The other five are run
#: end to end by their own quicker tests (test_<name>.py, two seeds through the Python API) and
#: here, through the command line with the default seeds, by `make test-full` (marked slow:
#: 43 of this file's 56 s on 2 cores).
FAST_END_TO_END = {"parallel-tcp", "linux-fidelity"}


@pytest.mark.parametrize(
    "name",
    [n if n in FAST_END_TO_END else pytest.param(n, marks=pytest.mark.slow) for n in SHRINK],
)
def test_reproduce_end_to_end_with_default_options(name, tmp_path, monkeypatch, capsys, client):
    """`plait reproduce NAME` in a fresh folder, default options but the shortened runs: exit 0,
    a report with every claim given a verdict, and the stored runs."""
    import plait.cli.reproduce
    from plait.cli import main

    before = _source_experiments()
    monkeypatch.chdir(tmp_path)
    SHRINK[name](monkeypatch, tmp_path)
    # The runs go to the tests' one-worker Dask cluster rather than a new cluster per test.
    monkeypatch.setattr(plait.cli.reproduce, "cluster_options", lambda args: {"client": client})
    monkeypatch.setenv("COLUMNS", "200")
    code = main(["reproduce", name])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = tmp_path / "results" / "reproduce" / "report.html"
    html = report.read_text(encoding="utf-8")
    assert "seeds 1, 2, 3, 4, 5" in html
    claims = html.count('<td class="verdict"><span class="badge')
    assert claims > 0 and f"of {claims} claims agree" in out
    assert f"report: {report}" in out.replace("\n", "")
    folder = tmp_path / "results" / "reproduce" / name
    assert any((folder / "runs").rglob("sweep.json"))
    # The same verdicts for programs: one record per claim of the report, in its order.
    import json

    records = json.loads((folder / "claims.json").read_text())["claims"]
    assert len(records) == claims
    assert [r["id"] for r in records] == [f"{name}.{i + 1}" for i in range(claims)]
    agree = sum(r["verdict"] == "agrees" for r in records)
    assert f"{agree} of {claims} claims agree" in out
    assert all(r["cause"] in (None, "paper", "physics", "unknown") for r in records)
    assert f'<span class="name">{name}</span>' in html
    # Nothing written into the source tree (`plait experiment parallel-tcp` wrote its tables
    # into experiments/parallel-tcp/results/ by default, over the tracked ones).
    assert _source_experiments() == before


def _source_experiments() -> dict[str, tuple[int, int]]:
    """Size and modification time of every file under the source tree's experiments/."""
    root = Path(__file__).resolve().parents[2] / "experiments"
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def test_plait_experiment_is_gone(tmp_path, monkeypatch, capsys):
    """`plait experiment` is folded into `plait reproduce`: the name is refused (exit 2) and
    nothing is written, in the current folder or the source tree."""
    from plait.cli import COMMANDS, main

    assert "experiment" not in COMMANDS
    before = _source_experiments()
    monkeypatch.chdir(tmp_path)
    code = main(["experiment", "parallel-tcp"])
    err = capsys.readouterr().err
    assert code == 2 and "invalid choice: 'experiment'" in err
    assert list(tmp_path.iterdir()) == []
    assert _source_experiments() == before


def test_failed_runs_exit_1_not_2(tmp_path, monkeypatch, capsys, client):
    """Runs that fail inside an experiment are not a mistake in the command line: exit 1 (as
    `plait sweep`), the failures recorded, no report. They exited 2 ("a mistake in the
    input")."""
    import plait.cli.reproduce
    import plait.sweeps
    from plait.cli import main

    monkeypatch.chdir(tmp_path)
    _shrink_linux_fidelity(monkeypatch, tmp_path)
    monkeypatch.setattr(plait.cli.reproduce, "cluster_options", lambda args: {"client": client})
    real = plait.sweeps.sweep
    # A memory limit no run fits in: every run fails, each recorded.
    monkeypatch.setattr(plait.sweeps, "sweep", lambda *a, **k: real(*a, **k, max_memory=1024))
    code = main(["reproduce", "linux-fidelity", "--seeds", "2"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "plait: error: linux-fidelity: 16 runs failed" in err and "Traceback" not in err
    runs = tmp_path / "results" / "reproduce" / "linux-fidelity" / "runs"
    assert len(list((runs / "failures").glob("*.json"))) == 16
    assert not (tmp_path / "results" / "reproduce" / "report.html").exists()
