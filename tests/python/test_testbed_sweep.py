"""`plait sweep --testbed`: a sweep's runs on the kernel testbed, into the same store as
simulated sweeps, keyed apart from them.

The refusals, the key derivation and the storage path run anywhere (the machine check is
replaced where a test needs it to pass; the storage test replaces the kernel run itself by a
fabricated result and says so in its name). The real sweep needs root, /dev/net/tun and the
testbed binaries, and is skipped with a one-line reason otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import plait
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _testbed_skip import needs_testbed
from plait import __version__, _core
from plait.sweeps import load, open_results
from plait.sweeps.spec import run_key
from plait.testbed import Refusal
from plait.testbed import sweep as kernel_sweep
from plait.testbed.runner import TestbedResult as KernelResult
from test_testbed import PLAIT, ROOT, SCENARIO, _ours, _plait

GRID = """
[sweep]
grid = {{ "link.bottleneck.queue.packets" = [20, 100] }}
seeds = 1
tables = {tables}
"""


def _sweep_file(tmp_path: Path, duration="3s", warmup="1s", tables='["flows", "links"]', grid=None):
    text = SCENARIO.format(duration=duration, warmup=warmup, buffer=100) + GRID.format(
        tables=tables
    )
    if grid is not None:
        text = text.replace('"link.bottleneck.queue.packets" = [20, 100]', grid)
    p = tmp_path / "sweep.toml"
    p.write_text(text)
    return p


def _one_line_exit_2(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


# -- refusals: before anything runs or is written -------------------------------------------


@pytest.mark.parametrize(
    "option",
    [
        ["--workers", "2"],
        ["--scheduler", "tcp://127.0.0.1:1"],
        ["--slurm"],
        ["--pbs"],
        ["--batch", "4"],
        ["--worker-wait", "5"],
    ],
)
def test_testbed_with_an_option_of_where_runs_go_is_refused(tmp_path, option):
    out = _plait("sweep", str(_sweep_file(tmp_path)), "--testbed", "--out", str(tmp_path / "o"),
                 *option)  # fmt: skip
    line = _one_line_exit_2(out)
    assert f"--testbed and {option[0]} exclude each other" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "grid, expected",
    [
        (
            '"link.bottleneck.rate" = ["20Mbps", "1Gbps"]',
            "sweep point (link.bottleneck.rate='1Gbps', seed 1): link bottleneck: rate 1Gbps is "
            "faster than the emulator keeps time for",
        ),
        (
            '"flow.bulk.cc" = ["reno", "vegas"]',
            "sweep point (flow.bulk.cc='vegas', seed 1): flow bulk: cc `vegas` does not exist",
        ),
        (
            '"tcp.host_jitter" = ["1us", "5us"]',
            "sweep point (tcp.host_jitter='1us', seed 1): [tcp]: `host_jitter` is not supported",
        ),
    ],
)
def test_a_point_the_testbed_refuses_is_one_line_naming_it_and_nothing_is_written(
    tmp_path, grid, expected
):
    # Planned before the machine is checked: the same line with or without root.
    p = _sweep_file(tmp_path, grid=grid)
    out = _plait("sweep", str(p), "--testbed", "--out", str(tmp_path / "o"))
    line = _one_line_exit_2(out)
    assert line.startswith(f"plait: error: {p}: sweep point (") and expected in line, line
    assert not (tmp_path / "o").exists()


def test_tables_the_kernel_does_not_measure_are_refused(tmp_path):
    p = _sweep_file(tmp_path, tables='["flows", "link_series"]')
    out = _plait("sweep", str(p), "--testbed", "--out", str(tmp_path / "o"))
    line = _one_line_exit_2(out)
    assert "sweep.tables: `link_series` is not measured on the kernel testbed" in line
    assert not (tmp_path / "o").exists()


def test_a_machine_that_cannot_run_the_testbed_is_refused_before_anything_is_written(
    tmp_path, monkeypatch
):
    def not_root() -> None:
        raise Refusal("plait testbed needs root (network namespaces, TUN devices, SCHED_FIFO)")

    monkeypatch.setattr(kernel_sweep, "check_machine", not_root)
    with pytest.raises(ValueError, match=r"^testbed: plait testbed needs root"):
        plait.sweep(_sweep_file(tmp_path), out=tmp_path / "o", testbed=True)
    assert not (tmp_path / "o").exists()
    with pytest.raises(ValueError, match="testbed: .*workers does not apply"):
        plait.sweep(_sweep_file(tmp_path), out=tmp_path / "o", testbed=True, workers=2)


# -- keys ------------------------------------------------------------------------------------


def test_kernel_runs_and_simulations_never_share_a_key(tmp_path):
    definition = load(_sweep_file(tmp_path))
    simulated = definition.runs()
    seen: list[dict] = []
    kernel = definition.runs(None, kernel="6.18.44", each=lambda r, c: seen.append(dict(c)))
    other = definition.runs(None, kernel="6.19.0")
    assert [r.params for r in simulated] == [r.params for r in kernel]
    sim_keys, kernel_keys = {r.key for r in simulated}, {r.key for r in kernel}
    assert len(sim_keys) == len(kernel_keys) == 2
    assert not sim_keys & kernel_keys  # neither is ever reused as the other
    assert not kernel_keys & {r.key for r in other}  # another kernel: new runs
    # A simulation's key hashes the scenario, the version and the simulator's source identity.
    for run, canonical in zip(simulated, seen):
        fields = {"scenario": canonical, "plait": __version__, "core": plait.__core_id__}
        identity = json.dumps(fields, sort_keys=True, separators=(",", ":"))
        assert run.key == hashlib.sha256(identity.encode()).hexdigest()[:32]
        assert run.key == run_key(canonical)
        assert run_key(canonical, "6.18.44") in kernel_keys


# -- the storage path, with the kernel run replaced by a fabricated result ------------------


def _fabricated_result(plan) -> KernelResult:
    """A result shaped as `plait.testbed.runner` makes it (not measured: made up here)."""
    timing = {
        "kernel": "6.18.44-test",
        "lateness_p50_us": 0.6,
        "lateness_p99_us": 3.0 if plan.links[0].limit_packets == 20 else 90.0,
        "lateness_max_us": 900.0,
        "timing_flagged": plan.links[0].limit_packets != 20,
    }
    flows = [
        {"name": "bulk", "kind": "tcp", "cc": "reno", "src": "a", "dst": "b",
         "aggregate_name": "", "start_s": 0.0, "goodput_bps": 18.5e6, "throughput_bps": None,
         "bytes_delivered": 4_625_000, "packets_sent": 3201, "retransmissions": 4,
         "fast_retransmits": None, "timeouts": None, "drops": plan.links[0].limit_packets,
         "rtt_mean_s": 0.0265, "rtt_min_s": 0.02, "completion_s": None, "client_error": None,
         **timing}
    ]  # fmt: skip
    links = [
        {"name": d.name, "direction": d.direction, "from": d.src, "to": d.dst,
         "rate_bps": d.rate_bps, "utilization": 0.99, "tx_packets": 3000, "tx_bytes": 4.5e6,
         "drops": 4, "loss_drops": 0, "down_drops": 0, "mean_queue_packets": 8.4,
         "mean_queue_bytes": None, "max_queue_packets": 20, **timing}
        for d in plan.links
    ]  # fmt: skip
    series = [
        {"time_s": 0.5 * i, "flow": "bulk", "cwnd_bytes": 14480.0 * i, "srtt_s": 0.021,
         "goodput_bps": None if i == 1 else 18e6, "allowed_rate_bps": None,
         "loss_event_rate": None, "packets_per_loss_event": None}
        for i in range(1, 4)
    ]  # fmt: skip
    summary = {"seed": plan.seed, "flows": flows, "links": links, "paths": [],
               "testbed": {**timing, "sched_fifo": True, "pinned": True}}  # fmt: skip
    return KernelResult(summary, flows, links, series)


@pytest.fixture
def fabricated_kernel(monkeypatch):
    """The machine check passes and `run_plan` returns a fabricated result (or what a test
    sets in `calls["raise"]`): the storage path alone, no kernel."""
    calls = {"plans": [], "raise": {}}

    def run_plan(plan):
        calls["plans"].append(plan)
        error = calls["raise"].get(plan.links[0].limit_packets)
        if error is not None:
            raise error
        return _fabricated_result(plan)

    monkeypatch.setattr(kernel_sweep, "check_machine", lambda: None)
    monkeypatch.setattr(kernel_sweep, "run_plan", run_plan)
    return calls


def test_storage_path_with_a_fabricated_kernel_result_round_trips_and_resumes(
    tmp_path, fabricated_kernel
):
    p = _sweep_file(tmp_path, tables='["flows", "links", "paths", "flow_series"]')
    result = plait.sweep(p, out=tmp_path / "o", testbed=True)
    assert (result.summary.done, result.summary.reused, result.summary.failed) == (2, 0, 0)
    assert [pl.links[0].limit_packets for pl in fabricated_kernel["plans"]] == [20, 100]
    stored = open_results(tmp_path / "o")
    flows = stored.flows.sort_values("link.bottleneck.queue.packets")
    assert list(flows.columns[:4]) == ["run", "link.bottleneck.queue.packets", "seed", "source"]
    assert (flows.source == "kernel").all() and flows.seed.tolist() == [1, 1]
    assert flows.drops.tolist() == [20, 100] and flows.goodput_bps.tolist() == [18.5e6] * 2
    assert flows.timing_flagged.tolist() == [False, True]
    assert flows.kernel.tolist() == ["6.18.44-test"] * 2
    # What the kernel cannot give is null, never invented; the simulator's columns are there.
    assert flows.throughput_bps.isna().all() and flows.rtt_p99_s.isna().all()
    assert "loss_event_rate" in flows.columns
    assert len(stored.table("links")) == 4 and stored.table("paths").empty
    series = stored.table("flow_series")
    assert len(series) == 6 and series.goodput_bps.isna().sum() == 2
    # The keys are the kernel's, and every file carries the run's testbed summary.
    kernel_keys = {r.key for r in load(p).runs(None, kernel=os.uname().release)}
    assert set(flows.run) == kernel_keys
    f = next((tmp_path / "o" / "flows").glob("*.parquet"))
    meta = json.loads(pq.read_schema(f).metadata[kernel_sweep.METADATA_KEY])
    assert meta["source"] == "kernel" and meta["sched_fifo"] is True
    manifest = json.loads((tmp_path / "o" / "sweep.json").read_text())
    assert manifest["source"] == "kernel" and manifest["kernel"] == os.uname().release
    # Every run's files agree on the columns' types: the folder reads as one table.
    assert (
        len({pq.read_schema(f).remove_metadata() for f in (tmp_path / "o" / "flows").glob("*")})
        == 1
    )
    # A second call runs nothing.
    again = plait.sweep(p, out=tmp_path / "o", testbed=True)
    assert (again.summary.done, again.summary.reused) == (0, 2)
    assert len(fabricated_kernel["plans"]) == 2
    # A simulated sweep into the same folder reuses none of the kernel's runs, nor the reverse.
    simulated = plait.sweep(p, out=tmp_path / "o", workers=1)
    assert (simulated.summary.done, simulated.summary.reused) == (2, 0)
    assert simulated.summary.not_in_sweep == 2
    kernel = plait.sweep(p, out=tmp_path / "o", testbed=True)
    assert (kernel.summary.done, kernel.summary.reused) == (0, 2)
    # Both read as one table: the kernel's files have the simulator's column types.
    from plait.sweeps.store import Store

    everything = Store(tmp_path / "o", ["flows", "links", "paths", "flow_series"])
    for table in ("flows", "links", "paths", "flow_series"):
        frame = everything.read(table)
        if table in ("flows", "links"):  # the others are empty in the simulation
            assert set(frame.source.fillna("simulation")) == {"kernel", "simulation"}


def test_storage_path_records_a_kernel_side_failure_and_goes_on(tmp_path, fabricated_kernel):
    fabricated_kernel["raise"][20] = RuntimeError("plait-linkemu did not start: no TUN")
    p = _sweep_file(tmp_path)
    result = plait.sweep(p, out=tmp_path / "o", testbed=True)
    assert (result.summary.done, result.summary.failed) == (1, 1)
    (record,) = result.summary.errors
    assert record["error"] == "RuntimeError: plait-linkemu did not start: no TUN"
    assert record["link.bottleneck.queue.packets"] == 20 and record["seed"] == 1
    assert len(list((tmp_path / "o" / "failures").glob("*.json"))) == 1
    # The next call runs the failed run again (only it) and clears its record.
    fabricated_kernel["raise"].clear()
    again = plait.sweep(p, out=tmp_path / "o", testbed=True)
    assert (again.summary.done, again.summary.reused, again.summary.failed) == (1, 1, 0)
    assert not list((tmp_path / "o" / "failures").glob("*.json"))


def test_storage_path_ctrl_c_drops_the_run_in_progress_and_resumes(tmp_path, fabricated_kernel):
    fabricated_kernel["raise"][100] = KeyboardInterrupt()
    p = _sweep_file(tmp_path)
    with pytest.raises(KeyboardInterrupt) as stop:
        plait.sweep(p, out=tmp_path / "o", testbed=True)
    summary = stop.value.summary
    assert summary.interrupted and (summary.done, summary.failed) == (1, 0)
    assert len(list((tmp_path / "o" / "flows").glob("*.parquet"))) == 1
    assert not list((tmp_path / "o").rglob("*.partial"))
    assert not list((tmp_path / "o" / "failures").glob("*"))
    fabricated_kernel["raise"].clear()
    again = plait.sweep(p, out=tmp_path / "o", testbed=True)
    assert (again.summary.done, again.summary.reused) == (1, 1)
    assert [pl.links[0].limit_packets for pl in fabricated_kernel["plans"]] == [20, 100, 100]


def test_storage_path_command_line_prints_the_estimate_and_a_line_per_run(
    tmp_path, fabricated_kernel, capsys
):
    from plait.cli import main

    p = _sweep_file(tmp_path)
    assert main(["sweep", str(p), "--testbed", "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    # 2 runs x (3 s + set-up)
    seconds = round(2 * (3 + kernel_sweep.SETUP_SECONDS))
    assert f"2 runs to do, one at a time, about {seconds} s of real time" in err
    assert "[1/2] link.bottleneck.queue.packets=20, seed 1: goodput 18.50 Mb/s; " in err
    assert "lateness p99 3.0 us;" in err
    assert "[2/2] link.bottleneck.queue.packets=100, seed 1: goodput 18.50 Mb/s; " in err
    assert "lateness p99 90.0 us FLAGGED" in err
    assert main(["sweep", str(p), "--testbed", "--out", str(tmp_path / "o2"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_kernel_tables_have_the_simulators_columns_and_types():
    """The kernel's stored tables keep the simulator's column types (plait.sweeps.arrow), so a
    folder holding both reads as one table; a change to the simulator's columns shows here."""
    from plait.sweeps.arrow import arrow_tables
    from test_testbed import MPTCP_SCENARIO

    text = MPTCP_SCENARIO.format(duration="2s", warmup="1s", cc="uncoupled:reno")
    interval = [("simulation.sample_interval", '"500ms"')]
    raw = _core.run_scenario(text, "m.toml", "toml", 1, interval, None, max_memory=None)
    tables = kernel_sweep.TABLES
    simulated = arrow_tables(raw, tables)
    for name in tables:
        ours = dict(kernel_sweep.SCHEMAS[name])
        for field in simulated[name].schema:
            assert field.name in ours, (name, field.name)
            kind = ours[field.name]
            if pa.types.is_dictionary(field.type):
                assert pa.types.is_dictionary(kind) and kind.value_type == field.type.value_type
            else:
                assert kind == field.type, (name, field.name, kind, field.type)


# -- on the kernel ---------------------------------------------------------------------------


@pytest.mark.slow
@needs_testbed
def test_a_2_point_sweep_on_the_kernel_stops_on_ctrl_c_and_resumes(tmp_path, testbed_turn):
    p = _sweep_file(tmp_path, duration="3s", warmup="1s")
    out = tmp_path / "o"
    cmd = [*PLAIT, "sweep", str(p), "--testbed", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    # Ctrl-C once the first run is stored and the second one's namespaces exist.
    deadline = time.monotonic() + 60
    prefix = f"plait-{proc.pid}-"
    while time.monotonic() < deadline:
        if list((out / "flows").glob("*.parquet")) and [n for n in _ours() if n.startswith(prefix)]:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    else:
        raise AssertionError("the second run did not start")
    time.sleep(1.0)
    t = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    print(err)
    assert proc.returncode == 130, err
    assert time.monotonic() - t < 5
    assert "[1/2] link.bottleneck.queue.packets=20, seed 1: goodput" in err
    assert "1 of 2 runs stored" in err
    assert not [n for n in _ours() if n.startswith(prefix)]  # its namespaces are gone
    assert len(list((out / "flows").glob("*.parquet"))) == 1
    assert not list(out.rglob("*.partial")) and not list((out / "failures").glob("*"))
    # Resumed: the stored run is skipped, the other runs.
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    print(again.stderr)
    assert again.returncode == 0, again.stderr
    assert "2 runs: 1 run now, 1 already stored, 0 failed" in again.stderr
    assert "[1/1] link.bottleneck.queue.packets=100, seed 1: goodput" in again.stderr
    stored = open_results(out)
    flows = stored.flows.sort_values("link.bottleneck.queue.packets")
    assert (flows.source == "kernel").all() and (flows.kernel == os.uname().release).all()
    payload_capacity = 20e6 * 1448 / 1500
    assert ((flows.goodput_bps / payload_capacity) > 0.7).all(), flows.goodput_bps
    assert flows.throughput_bps.isna().all()
    assert len(stored.table("links")) == 4
    # A third call runs nothing.
    third = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert third.returncode == 0 and "0 run now, 2 already stored" in third.stderr
