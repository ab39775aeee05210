"""Scenario `[[event]]`s on the testbed: a link taken down and brought back up by the emulator at
the event's time (both directions, as in the simulator), its drops counted as `down_drops`; a
link's loss model changed at the event's time; the threshold-dropper queue; the time-average
queue in bytes; `[testbed] sim_only` keys left out; MPTCP moving to the path that stays up."""

from __future__ import annotations

import json
import os

import pytest
from _testbed_skip import needs_testbed
from plait import _core
from plait.testbed import Refusal, plan_scenario
from plait.testbed.plan import emulator_config
from test_testbed import SCENARIO, _mptcp, _plait

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


LOSS_ONLY = """
[[event]]
at = "3s"
link = "bottleneck"
loss = { kind = "bernoulli", p = 0 }

[[event]]
at = "2s"
link = "bottleneck"
loss = { kind = "periodic", every = 10 }
"""
LOSS_EVENTS = (
    LOSS_ONLY
    + """
[[event]]
at = "2s"
link = "bottleneck"
action = "down"

[[event]]
at = "2500ms"
link = "bottleneck"
action = "up"
"""
)


def test_loss_events_go_to_the_forward_direction_after_the_links_state_at_one_instant():
    plan = _plan(SCENARIO.format(duration="6s", warmup="1s", buffer=100) + LOSS_EVENTS)
    # docs/scenario.md: a loss change acts on the forward direction (from -> to); at one
    # instant the link goes down or up first, then the loss model changes.
    assert plan.events == [
        (2_000_000_000, 0, False),
        (2_000_000_000, 1, False),
        (2_000_000_000, 0, {"kind": "periodic", "every": 10}),
        (2_500_000_000, 0, True),
        (2_500_000_000, 1, True),
        (3_000_000_000, 0, {"kind": "bernoulli", "p": 0}),
    ]
    cfg = emulator_config(plan, "x", "/tmp/x", None)
    assert cfg["events"][2] == {
        "at_ns": 2_000_000_000,
        "link": 0,
        "loss": {"kind": "periodic", "every": 10},
    }
    assert cfg["events"][0] == {"at_ns": 2_000_000_000, "link": 0, "up": False}
    # The forward direction has no loss model until the event: it gets its stream's seed; the
    # reverse direction, which no loss event touches, none.
    assert "loss_seed" in cfg["links"][0] and "loss" not in cfg["links"][0]
    assert "loss_seed" not in cfg["links"][1]


def test_flow_events_are_refused_naming_the_key():
    text = SCENARIO.format(duration="6s", warmup="1s", buffer=100).replace(
        'kind = "tcp"\ncc = "reno"', 'kind = "multfrc"\nn = 2'
    )
    flow_event = '\n[[event]]\nat = "2s"\nflow = "bulk"\nn = 3\n'
    canonical = json.loads(_core.canonical_scenario(text + flow_event, "s.toml", "toml", []))
    canonical["flow"][0].update(kind="tcp", cc="reno")
    canonical["flow"][0].pop("n")
    with pytest.raises(Refusal, match=r"event\[0\]: `flow` is not supported"):
        plan_scenario(canonical, 1)


@pytest.mark.slow
@needs_testbed
def test_reno_over_a_link_down_for_a_second_loses_packets_with_cause_down(
    tmp_path,
    testbed_turn,
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


# -- the threshold-dropper, the time-average queue, options only the simulator has ----------

DROPPER = SCENARIO.format(duration="5s", warmup="1s", buffer=100).replace(
    "queue = { packets = 100 }",
    'queue = { kind = "threshold_dropper", threshold = 20, policy = "largest_rate" }',
)


def test_threshold_dropper_goes_to_the_emulator_with_the_simulators_default_hold():
    plan = _plan(DROPPER)
    fwd, rev = plan.links
    assert fwd.queue == {"kind": "threshold_dropper", "threshold": 20, "policy": "largest_rate"}
    # The mean propagation RTT of the flows whose data crosses the direction (10 + 10 ms, as
    # plait-core sim/build.rs); the reverse direction carries no flow's data: 100 ms.
    assert (fwd.default_hold_ns, rev.default_hold_ns) == (20_000_000, 100_000_000)
    cfg = emulator_config(plan, "x", "/tmp/x", None)["links"][0]
    assert cfg["default_hold_ns"] == 20_000_000 and "limit_packets" not in cfg
    assert "queue_seed" in cfg
    held = _plan(DROPPER.replace('policy = "largest_rate"', 'hold = "3ms"'))
    assert held.links[0].queue == {"kind": "threshold_dropper", "threshold": 20, "hold": 3_000_000}


JITTER = SCENARIO.format(duration="5s", warmup="1s", buffer=100) + '\n[tcp]\nhost_jitter = "5us"\n'


def test_sim_only_keys_are_left_out_and_others_still_refused():
    with pytest.raises(Refusal, match=r"\[tcp\]: `host_jitter` is not supported"):
        _plan(JITTER)
    plan = _plan(JITTER + '\n[testbed]\nsim_only = ["tcp.host_jitter"]\n')
    assert plan.sim_only == ["tcp.host_jitter"]
    assert "host_jitter" not in plan.scenario.get("tcp", {}) and "testbed" not in plan.scenario
    # Only the marked keys: another simulator-only key is still refused.
    with pytest.raises(Refusal, match=r"\[tcp\]: `dupack_threshold` is not supported"):
        _plan(JITTER.replace('host_jitter = "5us"', 'host_jitter = "5us"\ndupack_threshold = 4')
              + '\n[testbed]\nsim_only = ["tcp.host_jitter"]\n')  # fmt: skip
    flow_key = _plan(
        SCENARIO.format(duration="5s", warmup="1s", buffer=100).replace(
            'cc = "reno"', 'cc = "reno"\ndupack_threshold = 4'
        )
        + '\n[testbed]\nsim_only = ["flow.bulk.dupack_threshold"]\n'
    )
    assert "dupack_threshold" not in flow_key.scenario["flow"][0]


def test_a_sim_only_key_not_in_the_scenario_is_one_line_naming_the_file_and_entry(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(JITTER + '\n[testbed]\nsim_only = ["tcp.host_jitter", "tcp.mss"]\n')
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "x.json"))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert str(p) in lines[0] and "testbed.sim_only[1]" in lines[0] and "tcp.mss" in lines[0]
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
@needs_testbed
def test_reno_through_a_loss_change_loses_packets_only_while_the_new_model_holds(
    tmp_path,
    testbed_turn,
):
    # Every 10th packet of the forward direction lost from 2 s to 3 s (then a model that drops
    # nothing); host jitter is the simulator's only and marked so: the run leaves it out and
    # says so in the summary.
    p = tmp_path / "loss.toml"
    p.write_text(
        JITTER.replace('duration = "5s"', 'duration = "4s"')
        + '\n[testbed]\nsim_only = ["tcp.host_jitter"]\n'
        + LOSS_ONLY
    )
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    fwd, rev = summary["links"]
    (flow,) = summary["flows"]
    print(fwd["loss_drops"], fwd["drops"], flow["goodput_bps"], fwd["mean_queue_bytes"])
    assert summary["testbed"]["sim_only_ignored"] == ["tcp.host_jitter"]
    # About a tenth of what crossed in that second (at most 1667 full packets): Reno halves at
    # each loss, so far fewer go out.
    assert 5 <= fwd["loss_drops"] <= 170 and rev["loss_drops"] == 0
    assert fwd["down_drops"] == 0 and rev["down_drops"] == 0
    assert flow["drops"] == sum(
        link["drops"] + link["loss_drops"] + link["down_drops"] for link in summary["links"]
    )


@pytest.mark.slow
@needs_testbed
def test_reno_through_a_threshold_dropper_holds_the_queue_near_the_threshold(
    tmp_path,
    testbed_turn,
):
    p = tmp_path / "dropper.toml"
    p.write_text(DROPPER.replace('name = "bulk"', 'name = "bulk"\ncount = 2'))
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    fwd, rev = summary["links"]
    print(fwd)
    # At most one drop per hold (20 ms) above 20 waiting packets, none by a buffer (unbounded).
    assert 1 <= fwd["drops"] <= 4 / 0.020
    assert sum(f["drops"] for f in summary["flows"]) == fwd["drops"] + rev["drops"]
    # The time-average queue in bytes, as plait run's: full-sized data packets wait there.
    assert fwd["mean_queue_packets"] > 1
    assert 1400 < fwd["mean_queue_bytes"] / fwd["mean_queue_packets"] <= 1500 * (1 + 1e-9)
    assert rev["mean_queue_bytes"] is not None and fwd["utilization"] > 0.9


#: Path 2 of the two disjoint paths (`a-r2-b`) fails at 2 s and stays down.
P2_DOWN = '\n[[event]]\nat = "2s"\nlink = "p2"\naction = "down"\n'


@pytest.mark.slow
@needs_testbed
def test_mptcp_moves_its_traffic_to_the_path_that_stays_up(
    tmp_path,
    testbed_turn,
):
    if not os.path.isdir("/proc/sys/net/mptcp"):
        pytest.skip("this kernel has no MPTCP")
    p = tmp_path / "failover.toml"
    p.write_text(_mptcp(duration="7s", warmup="3s") + P2_DOWN)
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    (flow,) = summary["flows"]
    one, two = summary["paths"]
    links = {(x["name"], x["direction"]): x for x in summary["links"]}
    print(flow["goodput_bps"], [(q["route"], q["wire_bytes"], q["bytes_sent"]) for q in (one, two)])
    # Over the window after the failure (3 s to 7 s) the data goes over path 1 only (without
    # the event each path carries half, test_testbed.py), near one path's payload capacity
    # (10 Mb/s x 1422/1500 with MPTCP's DSS option); what subflow 2 still tries is lost at p2.
    assert one["wire_share"] > 0.98 and two["wire_bytes"] < 0.02 * one["wire_bytes"]
    assert one["wire_bps"] > 0.8 * 10e6
    assert flow["goodput_bps"] > 0.7 * 10e6 * 1422 / 1500
    assert links[("p2", "forward")]["tx_packets"] == 0
    assert links[("p1", "forward")]["utilization"] > 0.8


# -- MPTCP subflow `start` and `backup` ----------------------------------------------------

SECOND = '{ route = ["a", "r2", "b"] }'


def test_subflow_start_and_backup_become_path_manager_endpoints():
    from test_testbed import _plan as plan_of

    late = plan_of(_mptcp().replace(SECOND, '{ route = ["a", "r2", "b"], start = "3s" }'))
    assert late.endpoints == {("a", 1): (3_000_000_000, False)}
    backup = plan_of(_mptcp().replace(SECOND, '{ route = ["a", "r2", "b"], backup = true }'))
    assert backup.endpoints == {("a", 1): (None, True)}
    assert plan_of(_mptcp()).endpoints == {("a", 1): (None, False)}
    # The first subflow is the connection's own.
    first = _mptcp().replace('{ route = ["r1"] }', '{ route = ["r1"], backup = true }')
    with pytest.raises(Refusal, match=r"`subflows\[0\]\.backup` is not supported"):
        plan_of(first)
    # Two connections from one host share the endpoint: their subflows must agree.
    two = _mptcp().replace(
        'name = "mp"', 'name = "mp"\ncount = 2\nstart = { uniform = ["0s", "1s"] }'
    )
    two = two.replace(SECOND, '{ route = ["a", "r2", "b"], start = "3s" }')
    with pytest.raises(Refusal, match=r"flow mp.1: `subflows\[1\]` starts or backs up differently"):
        plan_of(two)


def _mptcp_run(tmp_path, text):
    if not os.path.isdir("/proc/sys/net/mptcp"):
        pytest.skip("this kernel has no MPTCP")
    p = tmp_path / "mp.toml"
    p.write_text(text)
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    print(
        summary["flows"][0]["goodput_bps"],
        [(q["route"], q["wire_share"]) for q in summary["paths"]],
    )
    return summary


@pytest.mark.slow
@needs_testbed
def test_a_subflow_that_starts_late_carries_data_from_then_on(tmp_path, testbed_turn):
    # Subflow 2 joins 3 s into a run whose window is 1-6 s: both paths full, path 2 for 3 s
    # and path 1 for 5 s, so 3/8 of the bytes (each path carries half when both start at 0).
    summary = _mptcp_run(
        tmp_path,
        _mptcp(duration="6s", warmup="1s").replace(
            SECOND, '{ route = ["a", "r2", "b"], start = "3s" }'
        ),
    )
    one, two = summary["paths"]
    assert 0.15 < two["wire_share"] < 0.42 and one["wire_share"] > 0.58


@pytest.mark.slow
@needs_testbed
def test_a_backup_subflow_carries_nothing_while_the_other_can(tmp_path, testbed_turn):
    summary = _mptcp_run(
        tmp_path,
        _mptcp(duration="5s", warmup="2s").replace(
            SECOND, '{ route = ["a", "r2", "b"], backup = true }'
        ),
    )
    one, two = summary["paths"]
    # The backup subflow exists (its handshake and acks) but carries no data.
    assert two["wire_bytes"] < 0.01 * one["wire_bytes"] and one["wire_bps"] > 0.8 * 10e6
