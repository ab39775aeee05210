"""RED queues on the testbed's links: planned for the emulator (which builds plait-core's own RED,
seeded per link direction from the run's seed) and run on the kernel (root and the testbed
binaries, as the tests of test_testbed.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _testbed_skip import needs_testbed
from plait import _core
from plait.testbed import plan_scenario
from plait.testbed.plan import emulator_config
from test_testbed import SCENARIO, _plait

RED = 'queue = { kind = "red", min_th = 5, max_th = 15, packets = 50, mean_packet_size = "1500B" }'


def _red_scenario(duration: str, warmup: str) -> str:
    text = SCENARIO.format(duration=duration, warmup=warmup, buffer=100)
    return text.replace("queue = { packets = 100 }", RED)


def _plan(text: str, seed: int):
    return plan_scenario(json.loads(_core.canonical_scenario(text, "s.toml", "toml", [])), seed)


def test_red_goes_to_the_emulator_with_a_seed_per_direction_and_run():
    plan = _plan(_red_scenario("5s", "1s"), 3)
    links = emulator_config(plan, "x", "/tmp/x", None)["links"]
    fwd, rev = links
    assert fwd["queue"] == {
        "kind": "red",
        "min_th": 5,
        "max_th": 15,
        "packets": 50,
        "mean_packet_size": 1500,
    }
    # RED holds its own limit: no drop-tail limit beside it.
    assert "limit_packets" not in fwd and "limit_bytes" not in fwd
    assert fwd["queue_seed"] != rev["queue_seed"]
    again = emulator_config(_plan(_red_scenario("5s", "1s"), 3), "x", "/tmp/x", None)["links"]
    other = emulator_config(_plan(_red_scenario("5s", "1s"), 4), "x", "/tmp/x", None)["links"]
    assert again[0]["queue_seed"] == fwd["queue_seed"] != other[0]["queue_seed"]


def test_red_byte_mode_sizes_are_bytes_for_the_emulator():
    text = _red_scenario("5s", "1s").replace(
        RED, 'queue = { kind = "red", mode = "bytes", min_th = "7.5KB", max_th = "22.5KB", '
        'bytes = "75KB" }'
    )  # fmt: skip
    (fwd, _) = emulator_config(_plan(text, 1), "x", "/tmp/x", None)["links"]
    assert fwd["queue"] == {
        "kind": "red",
        "mode": "bytes",
        "min_th": 7500,
        "max_th": 22500,
        "bytes": 75000,
    }


@pytest.mark.slow
@needs_testbed
def test_reno_through_a_red_bottleneck_drops_with_cause_queue(tmp_path, testbed_turn):
    p = tmp_path / "red.toml"
    p.write_text(_red_scenario("6s", "2s"))
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    fwd = summary["links"][0]
    (flow,) = summary["flows"]
    print(fwd, flow["goodput_bps"])
    # RED keeps the average near its thresholds: drops by the queue, none by loss, and the
    # queue far below the 50-packet buffer on average.
    assert fwd["drops"] > 0 and fwd["loss_drops"] == 0
    assert fwd["max_queue_packets"] <= 50
    assert fwd["mean_queue_packets"] < 25
    assert flow["drops"] == fwd["drops"]
    assert flow["goodput_bps"] > 0.5 * 20e6 * 1448 / 1500
    assert Path(tmp_path / "r.json").exists()
