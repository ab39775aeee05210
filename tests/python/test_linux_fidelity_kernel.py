"""The kernel side of linux-fidelity (plait.experiments.linux_fidelity): the report from stored
kernel runs, the store's resume and interrupt behaviour, the refusal without root, and one real
measurement where the testbed can run.

The stored runs in data/linux_fidelity_kernel/runs are real: `plait reproduce linux-fidelity
--kernel`'s measuring path on Linux 6.18 (2 vCPUs, other work running), 4 s runs with a 1 s
warm-up, seeds 1 and 2, of the dumbbell (Reno, N = 1 and 3, 20 packets, 20 ms) and of the MPTCP
part (uncoupled Reno, with and without the TCP flow), stored before the testbed gave namespace
counters; and one 5 s run (1 s warm-up) of 6 Reno flows through 5 packets with them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
from pathlib import Path

import pandas as pd
import plait
import plait.experiments
import pytest
from _testbed_skip import needs_testbed
from plait.cli import main as plait_main
from plait.experiments import linux_fidelity as lf

FIXTURE = Path(__file__).parent / "data" / "linux_fidelity_kernel"
#: The run length and seeds of the stored runs.
SHORT = lf.Settings(seeds=[1, 2], duration=4.0, warmup=1.0)


def _records() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((FIXTURE / "runs").glob("*.json"))]


def _with_settings(monkeypatch, **changes) -> None:
    """Registers linux-fidelity with the command line's settings changed by `changes` (the
    store of kernel runs, the stand-in for the testbed): passed in, the module not patched."""
    experiment = lf.EXPERIMENT.with_settings(
        lambda options: dataclasses.replace(lf.settings(options), **changes)
    )
    monkeypatch.setitem(plait.experiments._REGISTRY, lf.NAME, experiment)


# -- the grid and the store's names -----------------------------------------------------------


def test_kernel_points_are_the_simulated_grid_and_only_selects():
    full = lf.kernel_points(lf.Settings())
    # 48 dumbbell settings + 4 MPTCP ones, 10 seeds each; the kernel has no profile.
    assert len(full) == (48 + 4) * 10
    assert len({p.name() for p in full}) == len(full)
    p = next(p for p in full if p.part == "dumbbell" and p.values["n"] == 6)
    over = p.overrides()
    # The simulated side's overrides for the same setting (grid()), without the profile.
    g = lf.grid()
    for key, value in over.items():
        assert value in [str(v) for v in g[key]], key
    assert "tcp.profile" not in over
    sel = lf.kernel_points(SHORT, lf.parse_only(["part=mptcp", "cc=reno"]))
    assert [(q.values["cc"], q.values["tcp"], q.seed) for q in sel] == [
        ("uncoupled:reno", 0, 1),
        ("uncoupled:reno", 0, 2),
        ("uncoupled:reno", 1, 1),
        ("uncoupled:reno", 1, 2),
    ]
    assert sel[2].overrides()["flow.tcp.cc"] == "reno" and "flow.tcp.cc" not in sel[0].overrides()
    assert len(lf.kernel_points(SHORT, lf.parse_only(["n=1,3", "rtt_ms=20.0"]))) == 2 * 2 * 3 * 2
    with pytest.raises(lf.KernelUsage, match="no setting 'bufer'"):
        lf.kernel_points(SHORT, {"bufer": ["5"]})
    with pytest.raises(lf.KernelUsage, match="expected SETTING=VALUE"):
        lf.parse_only(["n"])
    # The estimate: each run's duration plus the set-up.
    assert lf.estimate_seconds(full) == pytest.approx(520 * (30 + lf.KERNEL_OVERHEAD_S))


def test_mptcp_scenario_without_the_tcp_flow_is_the_file_without_it():
    with_tcp, alone = lf.mptcp_scenario(1), lf.mptcp_scenario(0)
    assert [f["name"] for f in with_tcp["flow"]] == ["mp", "tcp"]
    assert [f["name"] for f in alone["flow"]] == ["mp"]
    assert alone["link"] == with_tcp["link"]
    queues = {link["name"]: link.get("queue", {}).get("packets") for link in alone["link"]}
    assert (queues["p1"], queues["p2"]) == (10, 100)


# -- the report from stored kernel runs (no root) ---------------------------------------------


def test_kernel_rows_read_the_stored_summaries():
    records = _records()
    dumbbell, mptcp = lf.kernel_frames(records)
    assert len(lf._window_of(dumbbell, SHORT)) == 4 and len(mptcp) == 4
    assert len(dumbbell) == 5
    for r in records:
        row = lf.kernel_row(r)
        s = r["summary"]
        assert row["kernel"] == r["kernel"] == s["testbed"]["kernel"]
        if r["part"] == "dumbbell":
            goodput = sum(f["goodput_bps"] for f in s["flows"])
            assert row["utilization"] == pytest.approx(goodput / 10e6)
            link = next(
                x for x in s["links"] if x["name"] == "bottleneck" and x["direction"] == "forward"
            )
            assert (row["busy"], row["drops"]) == (link["utilization"], link["drops"])
            counters = s["testbed"].get("nstat")
            if counters is None:
                # No per-namespace counters stored in this run: null, never zero.
                assert row["rto_per_s"] is None and row["fr_per_s"] is None
            else:
                # The sender's: 3 timeouts and 155 SACK recoveries in the 4 s window.
                assert (row["timeouts"], row["fast_retransmits"]) == (3, 155)
                assert (row["rto_per_s"], row["fr_per_s"]) == (0.75, 38.75)
        else:
            shares = [p["wire_share"] for p in sorted(s["paths"], key=lambda p: p["path"])]
            assert [row["share_0"], row["share_1"]] == shares
            assert (row["tcp_goodput_mbps"] is None) == (r["setting"]["tcp"] == 0)


def test_kernel_counters_are_read_when_the_testbed_gives_them():
    record = next(r for r in _records() if r["part"] == "dumbbell")
    # The shape plait.testbed.runner gives: host -> counter -> growth over the window.
    record["summary"]["testbed"]["nstat"] = {
        "src": {"TcpExtTCPTimeouts": 3, "TcpExtTCPSackRecovery": 9, "TcpExtTCPRenoRecovery": 0},
        "dst": {"TcpExtTCPTimeouts": 100},
    }
    row = lf.kernel_row(record)
    window = record["duration_s"] - record["warmup_s"]
    assert (row["timeouts"], row["fast_retransmits"]) == (3, 9)
    assert row["rto_per_s"] == pytest.approx(3 / window)
    # Stored without the counters that did not grow; read the same.
    point = lf.KernelPoint(
        "dumbbell",
        tuple(record["setting"].items()),
        record["seed"],
        record["duration_s"],
        record["warmup_s"],
    )
    stored = lf.kernel_record(point, record["summary"], "2026-11-29T07:00:00Z")
    assert stored["summary"]["testbed"]["nstat"]["src"] == {
        "TcpExtTCPTimeouts": 3,
        "TcpExtTCPSackRecovery": 9,
    }
    assert stored["overrides"]["flow.bulk.count"] == "1"
    again = lf.kernel_row(stored)
    assert (again["timeouts"], again["fast_retransmits"]) == (3, 9)


def test_the_testbed_timing_columns_are_declared_once():
    """The testbed's own columns (kernel release, emulator lateness, flag) are the runner's
    TIMING_COLUMNS: the kernel sweep's table schemas end with them, typed, and the store of
    linux-fidelity keeps them once per run (in `testbed`), not in every row. They were written
    out three times (runner, sweep schemas, this store)."""
    import pyarrow as pa
    from plait.testbed import sweep as kernel_sweep
    from plait.testbed.runner import TIMING_COLUMNS

    assert list(TIMING_COLUMNS) == [
        "kernel", "lateness_p50_us", "lateness_p99_us", "lateness_max_us", "timing_flagged"
    ]  # fmt: skip
    arrow = {str: pa.large_string(), float: pa.float64(), bool: pa.bool_()}
    for table in ("flows", "links", "paths"):
        tail = kernel_sweep.SCHEMAS[table][-len(TIMING_COLUMNS) :]
        assert tail == [(c, arrow[t]) for c, t in TIMING_COLUMNS.items()], table
    record = next(r for r in _records() if r["part"] == "mptcp")
    summary = json.loads(json.dumps(record["summary"]))
    timing = {c: summary["testbed"][c] for c in TIMING_COLUMNS}
    for table in ("flows", "links", "paths"):
        summary[table] = [{**row, **timing} for row in summary[table]]
    point = lf.KernelPoint(
        "mptcp", tuple(record["setting"].items()), 1, record["duration_s"], record["warmup_s"]
    )
    stored = lf.kernel_record(point, summary, "2026-11-29T07:00:00Z")
    for table in ("flows", "links", "paths"):
        assert stored["summary"][table] == record["summary"][table], table
    assert stored["kernel"] == summary["testbed"]["kernel"]


@pytest.fixture(scope="module")
def simulated(client):
    """The simulated side of the stored settings and one more (5 packets: not measured)."""
    runs, summary = lf.sweep(
        ns=[1, 3],
        buffers=[20, 5],
        rtts_ms=[20],
        ccs=["reno"],
        duration=SHORT.duration,
        warmup=SHORT.warmup,
        seeds=SHORT.seeds,
        client=client,
    )
    assert summary.failed == 0
    mp, summaries = lf.mptcp_sweep(
        ccs=["uncoupled:reno"],
        duration=SHORT.duration,
        warmup=SHORT.warmup,
        seeds=SHORT.seeds,
        client=client,
    )
    assert all(s.failed == 0 for s in summaries)
    return runs, mp


def test_report_sets_the_kernel_beside_both_profiles(simulated, tmp_path):
    runs, _ = simulated
    kernel, _ = lf.kernel_frames(_records())
    vs = lf.versus_kernel(runs, lf._window_of(kernel, SHORT))
    assert len(vs) == 4
    measured = vs[vs.kernel_status == "measured"]
    assert sorted(measured.buffer) == [20, 20] and (measured.kernel_runs == 2).all()
    assert set(vs[vs.buffer == 5].kernel_status) == {"not measured"}
    for r in measured.itertuples():
        k = kernel[(kernel.n == r.n) & (kernel.buffer == r.buffer)]
        assert r.utilization_kernel_mean == pytest.approx(k.utilization.mean())
        assert (r.utilization_kernel_min, r.utilization_kernel_max) == (
            k.utilization.min(),
            k.utilization.max(),
        )
        assert r.drops_kernel_mean == pytest.approx(k.drops.mean())
        for profile in lf.PROFILES:
            sim = runs[(runs.n == r.n) & (runs.buffer == 20) & (runs.profile == profile)]
            assert getattr(r, f"utilization_{profile}_mean") == pytest.approx(
                sim.utilization.mean()
            )
        assert math.isnan(r.rto_per_s_kernel_mean)
    table = lf.kernel_table(vs, lf.SETTING, lf.KERNEL_TABLE_MEASURES)
    assert list(table.columns[:5]) == ["buffer (pkts)", "N", "RTT (ms)", "cc", "kernel runs"]
    small = table[table["buffer (pkts)"] == 5].iloc[0]
    assert small["util kernel"] == "not measured" and small["util linux"] != "not measured"
    big = table[(table["buffer (pkts)"] == 20) & (table["N"] == 1)].iloc[0]
    assert big["RTT (ms)"] == "20"
    assert big["util kernel"].count("[") == 1 and big["RTO/s kernel"] == "—"
    md = lf.kernel_markdown(table)
    assert md.count("not measured") == 2 * len(lf.KERNEL_TABLE_MEASURES)

    # Claims: numbers from the data, recounted here.
    claims = lf.kernel_claims(vs)
    assert len(claims) == 2
    within = {
        p: sum(
            (r[f"utilization_{p}_mean"] >= r["utilization_kernel_min"]
             and r[f"utilization_{p}_mean"] <= r["utilization_kernel_max"])
            or abs(r[f"utilization_{p}_mean"] - r["utilization_kernel_mean"])
            <= lf.KERNEL_UTILISATION_TOLERANCE * r["utilization_kernel_mean"]
            for r in measured.to_dict("records")
        )
        for p in lf.PROFILES
    }  # fmt: skip
    assert f"linux: inside or within 3 % in {within['linux']} of 2 settings" in claims[0].plait
    assert f"rfc: inside or within 3 % in {within['rfc']} of 2" in claims[0].plait
    assert claims[0].agrees == (within["linux"] == 2)
    dl = (measured.utilization_linux_mean - measured.utilization_kernel_mean).abs()
    dr = (measured.utilization_rfc_mean - measured.utilization_kernel_mean).abs()
    wins = int((dl < dr).sum())
    assert f"utilisation: {wins} of 2" in claims[1].plait
    assert "RTO/s: no kernel counters" in claims[1].plait
    assert claims[1].agrees == (2 * wins > 2)

    # Nothing measured: no claim against the kernel, every setting says so.
    empty = lf.versus_kernel(runs, pd.DataFrame())
    assert set(empty.kernel_status) == {"not measured"} and lf.kernel_claims(empty) == []
    # A run longer than the stored ones finds none of them.
    assert lf._window_of(kernel, lf.Settings(seeds=[1])).empty


def test_mptcp_part_beside_the_kernel(simulated, tmp_path):
    runs, mp = simulated
    assert len(mp) == 2 * 2 * 2  # tcp 0/1 x profiles x seeds
    assert mp.tcp_goodput_mbps[mp.tcp == 0].isna().all()
    assert mp.tcp_goodput_mbps[mp.tcp == 1].gt(1).all()
    assert (mp.share_0 + mp.share_1).tolist() == pytest.approx([1.0] * len(mp))
    _, kernel = lf.kernel_frames(_records())
    mp_vs = lf.versus_kernel(mp, kernel, lf.MPTCP_SETTING, lf.MPTCP_MEASURES)
    assert list(mp_vs.kernel_status) == ["measured", "measured"]
    k1 = kernel[kernel.tcp == 1]
    row = mp_vs[mp_vs.tcp == 1].iloc[0]
    assert row.tcp_goodput_mbps_kernel_mean == pytest.approx(k1.tcp_goodput_mbps.mean())
    assert row.share_0_kernel_min == k1.share_0.min()
    claims = lf.kernel_claims(lf.versus_kernel(runs, pd.DataFrame()), mp_vs)
    assert len(claims) == 1 and "TCP goodput in" in claims[0].plait and "of 1" in claims[0].plait
    vs = lf.versus_kernel(runs, lf._window_of(lf.kernel_frames(_records())[0], SHORT))
    files = lf.write_kernel_outputs(vs, mp, mp_vs, tmp_path / "out")
    assert files["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "not measured" in files["markdown"].read_text()
    assert pd.read_csv(files["mptcp_csv"]).shape[0] == 2


# -- the store: resume, index, interrupt ------------------------------------------------------


def _fake_runner(calls: list, fail_at: int | None = None):
    """A stand-in for the testbed: the stored summary of the same part, setting and seed."""
    stored = {
        (r["part"], json.dumps(r["setting"], sort_keys=True), r["seed"]): r for r in _records()
    }

    def run(point):
        calls.append(point.name())
        if fail_at is not None and len(calls) == fail_at:
            raise KeyboardInterrupt
        return stored[(point.part, json.dumps(point.values, sort_keys=True), point.seed)]["summary"]

    return run


def _selected():
    return lf.kernel_points(
        SHORT, lf.parse_only(["part=dumbbell", "buffer=20", "rtt_ms=20", "cc=reno", "n=1,3"])
    )


def test_stored_runs_are_skipped_and_the_index_follows(tmp_path):
    points = _selected()
    assert len(points) == 4
    calls, said = [], []
    counts = lf.measure_kernel(points, tmp_path, say=said.append, run=_fake_runner(calls))
    assert counts == {"measured": 4, "stored": 0, "flagged": 0} and len(calls) == 4
    assert said[0].startswith(
        "4 kernel runs selected, 0 stored already, 4 to measure: about 0 min 28 s"
    )
    files = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert files == sorted(p.name() for p in points)
    record = json.loads((tmp_path / "runs" / points[0].name()).read_text())
    for key in ("kernel", "date", "lateness_us", "timing_flagged", "overrides", "summary"):
        assert key in record, key
    assert record["overrides"]["simulation.duration"] == "4s"
    index = pd.read_csv(tmp_path / "index.csv")
    assert len(index) == 4 and set(index.seed) == {1, 2}

    # Again: nothing to measure.
    calls.clear()
    counts = lf.measure_kernel(points, tmp_path, say=said.append, run=_fake_runner(calls))
    assert counts["measured"] == 0 and counts["stored"] == 4 and calls == []
    # One removed: only it is measured again.
    (tmp_path / "runs" / points[2].name()).unlink()
    lf.measure_kernel(points, tmp_path, say=said.append, run=_fake_runner(calls))
    assert calls == [points[2].name()]
    assert len(pd.read_csv(tmp_path / "index.csv")) == 4


def test_interrupt_keeps_the_runs_that_ended_whole(tmp_path):
    points = _selected()
    calls: list = []
    with pytest.raises(KeyboardInterrupt):
        lf.measure_kernel(points, tmp_path, say=lambda _: None, run=_fake_runner(calls, fail_at=3))
    stored = sorted(p.name for p in (tmp_path / "runs").iterdir())
    # Two whole runs, no temporary file, and the index lists them.
    assert stored == sorted(p.name() for p in points[:2])
    for name in stored:
        json.loads((tmp_path / "runs" / name).read_text())
    assert len(pd.read_csv(tmp_path / "index.csv")) == 2
    # The next call measures the other two.
    calls.clear()
    lf.measure_kernel(points, tmp_path, say=lambda _: None, run=_fake_runner(calls))
    assert calls == [p.name() for p in points[2:]]


def test_cli_exits_130_on_ctrl_c_with_the_stored_runs_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    calls: list = []
    _with_settings(monkeypatch, kernel_store=tmp_path, kernel_run=_fake_runner(calls, fail_at=2))
    argv = ["reproduce", "linux-fidelity", "--kernel", "--seeds", "1,2", "--only", "part=dumbbell"]
    argv += ["--only", "n=1", "--only", "buffer=20", "--only", "rtt_ms=20", "--only", "cc=reno"]
    # --seeds and the full run length: the points differ from the stored 4 s ones, so the
    # runner's lookup by setting and seed is what matters.
    code = plait_main(argv)
    assert code == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "interrupted" in err[0]
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [calls[0]]


def test_kernel_refused_without_root(tmp_path, monkeypatch, capsys):
    _with_settings(monkeypatch, kernel_store=tmp_path / "store")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code = plait_main(["reproduce", "linux-fidelity", "--kernel", "--seeds", "1"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--kernel" in err[0] and "needs root" in err[0]
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["reproduce", "parallel-tcp", "--kernel"], "--kernel: only for linux-fidelity"),
        (["reproduce", "linux-fidelity", "--only", "n=1"], "--only: only with --kernel"),
        (["reproduce", "linux-fidelity", "--kernel", "--only", "speed=1"], "no setting 'speed'"),
    ],
)
def test_kernel_usage_mistakes_are_one_line(tmp_path, monkeypatch, capsys, argv, expected):
    _with_settings(monkeypatch, kernel_store=tmp_path / "store")
    assert plait_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0], err
    assert not (tmp_path / "store").exists()


# -- one real measurement ---------------------------------------------------------------------


@pytest.mark.slow
@needs_testbed
def test_two_short_kernel_runs_are_measured_and_stored(tmp_path, testbed_turn):
    """Two 3 s runs (1 s warm-up) of one Reno flow through the 100-packet dumbbell, seeds 1
    and 2, through the measuring path into a temporary store."""
    points = lf.kernel_points(
        lf.Settings(seeds=[1, 2], duration=3.0, warmup=1.0),
        lf.parse_only(["part=dumbbell", "n=1", "buffer=100", "rtt_ms=20", "cc=reno"]),
    )
    assert len(points) == 2
    said: list = []
    counts = lf.measure_kernel(points, tmp_path, say=said.append)
    assert counts["measured"] == 2
    records = lf.load_kernel(tmp_path)
    assert [r["seed"] for r in records] == [1, 2]
    for r in records:
        assert r["kernel"] == os.uname().release
        assert r["overrides"]["simulation.duration"] == "3s"
        # The flow started when the simulator drew it for the same seed.
        sim = plait.run(lf.SCENARIO, seed=r["seed"], overrides=r["overrides"])
        starts = [f["start_s"] for f in r["summary"]["flows"]]
        assert starts == pytest.approx(sim.flows.start_s.tolist(), abs=1e-9)
        assert set(r["lateness_us"]) == {"p50", "p99", "max"}
        row = lf.kernel_row(r)
        # One Reno flow through 100 packets fills the 10 Mb/s link (payload ceiling 0.965;
        # a 2 s window of a slow-start overshoot may read a little above it).
        assert 0.8 < row["utilization"] < 1.05, row
        assert row["busy"] > 0.9 and row["drops"] >= 0
        if "nstat" in r["summary"]["testbed"]:
            # The sender's namespace counters: RTO/s and FR/s are numbers, not null.
            assert row["rto_per_s"] is not None and row["fr_per_s"] is not None
    assert len(pd.read_csv(tmp_path / "index.csv")) == 2
    assert lf.measure_kernel(points, tmp_path, say=said.append)["measured"] == 0
    shutil.rmtree(tmp_path / "runs")


def test_flagged_kernel_runs_are_counted_but_left_out():
    """A run whose emulator did not keep time is not a measurement of the kernel: the setting's
    statistics come from the others, and the count of flagged runs is shown."""
    records = [r for r in _records() if r["part"] == "dumbbell" and r["setting"]["n"] == 1]
    assert len(records) == 2
    records[0]["timing_flagged"] = True
    kernel, _ = lf.kernel_frames(records)
    sim = pd.DataFrame(
        [
            {"buffer": 20, "n": 1, "rtt_ms": 20.0, "cc": "reno", "profile": p, "seed": 1,
             "utilization": 0.96, "busy": 0.99, "drops": 10, "rto_per_s": 0.0, "fr_per_s": 1.0}
            for p in lf.PROFILES
        ]
    )  # fmt: skip
    vs = lf.versus_kernel(sim, kernel)
    row = vs.iloc[0]
    assert (row.kernel_runs, row.kernel_flagged) == (1, 1)
    assert row.utilization_kernel_mean == lf.kernel_row(records[1])["utilization"]
    table = lf.kernel_table(vs, lf.SETTING, lf.KERNEL_TABLE_MEASURES)
    assert table.iloc[0]["kernel runs"] == "1 (+1 flagged)"
    records[1]["timing_flagged"] = True
    vs = lf.versus_kernel(sim, lf.kernel_frames(records)[0])
    assert vs.iloc[0].kernel_status == "not measured" and vs.iloc[0].kernel_flagged == 2
