"""`plait testbed run --compare`: the kernel's runs beside the simulation of the same scenario.

The glue runs anywhere, on a testbed summary stored from a real run
(data/testbed_reno_5s.json: the 5 s Reno scenario below, seed 7, kernel 6.18); the kernel test
needs root and the testbed binaries, as those of test_testbed.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import plait
import pytest
from _testbed_skip import needs_testbed
from plait import _core
from plait.testbed import plan_scenario
from plait.testbed.compare import kernel_vs_simulation, simulated_starts, with_starts
from plait.testbed.runner import TestbedResult as KernelResult
from test_testbed import SCENARIO, _plait

STORED = Path(__file__).parent / "data" / "testbed_reno_5s.json"


def _scenario(tmp_path: Path, extra: str = "") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO.format(duration="5s", warmup="1s", buffer=100) + extra)
    return p


def _plan(path: Path, seed: int | None):
    canonical = json.loads(_core.canonical_scenario(path.read_text(), str(path), "toml", []))
    return plan_scenario(canonical, seed)


def test_the_testbed_starts_flows_when_the_simulator_draws_them(tmp_path):
    p = _scenario(tmp_path).read_text().replace('name = "bulk"', 'name = "bulk"\ncount = 3')
    p += 'start = { uniform = ["0s", "2s"] }\n'
    path = tmp_path / "u.toml"
    path.write_text(p)
    plan = _plan(path, 5)
    sim = plait.run(path, seed=5)
    starts = simulated_starts(sim.flows)
    assert sorted(starts) == ["bulk.0", "bulk.1", "bulk.2"]
    # The testbed's own draws are other values; --compare replaces them by the simulator's.
    assert [f.start_ns for f in plan.flows] != [starts[f.name] for f in plan.flows]
    moved = with_starts(plan, starts)
    assert [f.start_ns for f in moved.flows] == [starts[f.name] for f in plan.flows]
    assert all(0 <= f.start_ns <= 2_000_000_000 for f in moved.flows)
    assert [f.port for f in moved.flows] == [f.port for f in plan.flows]
    # Another seed, other draws, on both sides.
    other = simulated_starts(plait.run(path, seed=6).flows)
    assert other != starts


def test_stored_kernel_run_is_compared_with_the_simulation_kernel_as_a(tmp_path):
    stored = json.loads(STORED.read_text())
    path = _scenario(tmp_path)
    plan = _plan(path, stored["seed"])
    kernel = KernelResult(stored, stored["flows"], stored["links"], [])
    sim = plait.run(path, seed=plan.seed, overrides=["tcp.profile=linux"])
    c = kernel_vs_simulation([plan], [kernel], [sim])
    assert c.a.label.startswith("testbed (kernel 6.") and c.b.label == "simulation"
    assert c.a.seeds == [7] and c.b.seeds == [7]
    rows = c.flows.set_index(["flow", "metric"])
    gp = rows.loc[("bulk", "goodput_bps")]
    assert gp["a"] == pytest.approx(stored["flows"][0]["goodput_bps"])
    assert gp["b"] == pytest.approx(float(sim.flows["goodput_bps"][0]))
    # Columns the kernel cannot give are n/a, not invented.
    assert rows.loc[("bulk", "throughput_bps")]["verdict"] == "n/a"
    links = c.links.set_index(["link", "direction", "metric"])
    assert links.loc[("bottleneck", "forward", "drops")]["a"] == stored["links"][0]["drops"]
    assert not c.warnings  # same flows, links, duration and warm-up
    summary = c.summary()
    assert summary["a"]["kind"] == "testbed" and summary["b"]["kind"] == "simulation"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--seeds", "1", "2"], "--seeds: only with --compare"),
        (["--compare", "--seed", "1", "--seeds", "2"], "--seeds: give either --seed or --seeds"),
        (["--compare", "--seeds", "1", "2", "--json", "x.json"], "--json: one seed only"),
    ],
)
def test_seeds_misuse_is_refused_in_one_line(tmp_path, args, expected):
    args = [str(tmp_path / a) if a.endswith(".json") else a for a in args]
    out = _plait("testbed", "run", str(_scenario(tmp_path)), *args)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], out.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
@needs_testbed
def test_compare_writes_the_comparison_of_a_5s_reno_run(tmp_path, testbed_turn):
    out_dir = tmp_path / "out"
    out = _plait("testbed", "run", str(_scenario(tmp_path)), "--compare", "--out", str(out_dir),
                 "--set", "tcp.profile=linux")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "flows: A testbed (kernel" in out.stdout and "goodput_bps" in out.stdout
    assert {f.name for f in out_dir.iterdir()} >= {
        "flows.parquet",
        "links.parquet",
        "comparison.html",
        "comparison.json",
    }
    summary = json.loads((out_dir / "comparison.json").read_text())
    assert summary["a"]["kind"] == "testbed" and summary["b"]["kind"] == "simulation"
    gp = [r for r in summary["flows"] if r["metric"] == "goodput_bps"]
    assert len(gp) == 1 and gp[0]["flow"] == "bulk"
    # Both sides fill most of the 20 Mb/s link (payload 19.3 Mb/s) after the warm-up.
    assert gp[0]["a"] > 0.8 * 20e6 * 1448 / 1500
    assert gp[0]["b"] > 0.8 * 20e6 * 1448 / 1500
    assert "<html" in (out_dir / "comparison.html").read_text().lower()
