"""Scenario `[[event]]`s on the testbed: a link taken down and brought back up by the emulator at
the event's time (both directions, as in the simulator), its drops counted as `down_drops`."""

from __future__ import annotations

import json

import pytest
from plait import _core
from plait.testbed import Refusal, plan_scenario
from plait.testbed.plan import emulator_config
from test_testbed import SCENARIO, _plait, needs_testbed, testbed_turn  # noqa: F401

EVENTS = """
[[event]]
at = "3s"
link = "bottleneck"
action = "up"

[[event]]
at = "2s"
link = "bottleneck"
action = "down"
"""


def _plan(text: str):
    return plan_scenario(json.loads(_core.canonical_scenario(text, "s.toml", "toml", [])), 1)


def test_link_events_go_to_the_emulator_for_both_directions_in_time_order():
    plan = _plan(SCENARIO.format(duration="6s", warmup="1s", buffer=100) + EVENTS)
    # The file lists `up` first; the emulator gets them in time order.
    assert plan.events == [
        (2_000_000_000, 0, False),
        (2_000_000_000, 1, False),
        (3_000_000_000, 0, True),
        (3_000_000_000, 1, True),
    ]
    cfg = emulator_config(plan, "x", "/tmp/x", None)
    assert cfg["events"][0] == {"at_ns": 2_000_000_000, "link": 0, "up": False}
    assert [cfg["links"][e["link"]]["name"] for e in cfg["events"]] == [
        "bottleneck:forward",
        "bottleneck:reverse",
    ] * 2
    plain = _plan(SCENARIO.format(duration="6s", warmup="1s", buffer=100))
    assert plain.events == [] and emulator_config(plain, "x", "/tmp/x", None)["events"] == []


def test_loss_and_flow_events_are_refused():
    text = SCENARIO.format(duration="6s", warmup="1s", buffer=100)
    loss = '\n[[event]]\nat = "2s"\nlink = "bottleneck"\nloss = { kind = "bernoulli", p = 0.1 }\n'
    with pytest.raises(Refusal, match=r"event\[0\]: `loss` is not supported"):
        _plan(text + loss)


@needs_testbed
def test_reno_over_a_link_down_for_a_second_loses_packets_with_cause_down(
    tmp_path,
    testbed_turn,  # noqa: F811
):
    p = tmp_path / "ev.toml"
    p.write_text(SCENARIO.format(duration="5s", warmup="1s", buffer=100) + EVENTS)
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    fwd, rev = summary["links"]
    (flow,) = summary["flows"]
    print(fwd, rev, flow["goodput_bps"])
    # Down from 2 s to 3 s: the data queued and propagating then, and what reached the link
    # while down, are lost with cause `down` (acks on the reverse direction too).
    assert fwd["down_drops"] > 0 and rev["down_drops"] > 0
    assert flow["drops"] == sum(
        link["drops"] + link["loss_drops"] + link["down_drops"] for link in summary["links"]
    )
    # A second of the four-second window without the link, and the RTO after it.
    assert 0.3 * 20e6 < flow["goodput_bps"] < 0.8 * 20e6
