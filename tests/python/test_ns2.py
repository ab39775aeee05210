"""The ns-2 differential harness (python/plait/ns2, docs/ns2.md).

The script generator and the counter parser are checked without ns-2; the runs need Debian's
`ns2` package (`apt-get install ns2`, installed by .ci/run) and are skipped without it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from plait import ns2

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = ROOT / "experiments" / "ns2-differential"
MULTCP_RED = EXPERIMENT / "multcp_red.toml"
MULTCP_DROPTAIL = EXPERIMENT / "multcp_droptail.toml"
RENO_RED = EXPERIMENT / "reno_red.toml"

# .ci/run installs ns-2 and sets PLAIT_REQUIRE_NS2, so that there these tests fail rather
# than skip when it cannot run.
needs_ns = pytest.mark.skipif(
    ns2.find_ns() is None and not os.environ.get("PLAIT_REQUIRE_NS2"),
    reason="ns-2 is not installed (apt-get install ns2; .ci/run installs it), or set PLAIT_NS",
)


def _script(path: Path = MULTCP_RED, **kw) -> str:
    return ns2.tcl(ns2.from_plait(path, **kw))


def test_scenario_is_read_from_the_plait_file():
    s = ns2.from_plait(MULTCP_RED, starts={"multcp": 0.25, "reno.2": 0.75})
    assert [link.name for link in s.links] == ["access_src", "bottleneck", "access_dst"]
    red = s.links[1].queue
    assert isinstance(red, ns2.Red)
    assert (red.min_th, red.max_th, red.max_p, red.w_q, red.gentle, red.packets) == (
        5,
        15,
        0.1,
        0.002,
        True,
        100,
    )
    assert s.links[1].rate_bps == 20e6 and s.links[1].delay_s == pytest.approx(0.02)
    assert isinstance(s.links[0].queue, ns2.DropTail) and s.links[0].queue.packets == 1000
    assert [f.name for f in s.flows] == ["multcp", "reno.0", "reno.1", "reno.2", "reno.3"]
    assert s.flows[0].start_s == 0.25 and s.flows[3].start_s == 0.75
    assert all(0 <= f.start_s <= 1 for f in s.flows)
    assert (s.duration_s, s.warmup_s, s.seed, s.tcp.mss) == (120, 20, 1, 1460)


def test_script_sets_every_parameter_ns2_would_otherwise_default():
    text = _script()
    for line in [
        # The advertised window: ns-2's default window_ 20 would cap MulTCP at 20 packets.
        "Agent/TCP set window_ 45964",
        "Agent/TCP set packetSize_ 1460",
        "Agent/TCP set tcpip_base_hdr_size_ 40",
        "Agent/TCP set windowInit_ 10",
        "Agent/TCP set minrto_ 0.2",
        "Agent/TCP set rtxcur_init_ 1",
        # RED in packet mode with the scenario's parameters (ns-2.35 defaults: bytes,
        # automatic thresholds and weight).
        "Queue/RED set bytes_ false",
        "Queue/RED set queue_in_bytes_ false",
        "Queue/RED set thresh_ 5",
        "Queue/RED set maxthresh_ 15",
        "Queue/RED set q_weight_ 0.002",
        "Queue/RED set linterm_ 10",
        "Queue/RED set gentle_ true",
        "Queue/RED set wait_ true",
        "$ns duplex-link $n(1) $n(2) 20000000b 20ms RED",
        "$ns queue-limit $n(1) $n(2) 100",
        # MulTCP(4): Crowcroft and Oechslin's alpha = 4, beta = 1/8, from the first loss.
        "$tcp(0) set increase_num_ 4",
        "$tcp(0) set decrease_num_ 0.875",
        "$tcp(0) set first_decrease_ 0",
        "set tcp(1) [new Agent/TCP/Sack1]",
        "set sink(1) [new Agent/TCPSink/Sack1]",
    ]:
        assert line in text, line
    assert text.count("increase_num_") == 1  # only the MulTCP flow
    assert '$ns at 120 "counters end; exit 0"' in text
    assert '$ns at 20 "counters warmup"' in text


def test_script_follows_the_scenario_options():
    text = _script(
        MULTCP_DROPTAIL,
        overrides={
            "tcp.sack": "false",
            "tcp.receive_buffer": "29200B",
            "flow[0].cc": '{name = "multcp", n = 2, equivalence = "exact"}',
        },
    )
    assert "Queue/RED" not in text
    assert "Agent/TCP set window_ 20" in text
    assert "[new Agent/TCP/Newreno]" in text and "[new Agent/TCPSink]" in text
    # plait's NewReno: the timer restarted on every partial ACK (ns-2.35's default restarts
    # it on the first only), a fast retransmit once the ACK reaches the recovery point (ns-2's
    # default waits for one packet more).
    assert "Agent/TCP/Newreno set newreno_changes1_ 0" in text
    assert "Agent/TCP/Newreno set lessCareful_ true" in text
    assert "Agent/TCP/Newreno set partial_window_deflation_ 1" in text
    assert "Newreno set" not in _script(MULTCP_DROPTAIL)
    # exact: alpha = 3n²/(4n - 1) = 12/7; beta = 1/(2n).
    assert f"increase_num_ {12 / 7!r}" in text
    assert "decrease_num_ 0.75" in text


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"flow[1].cc": "cubic"}, "flow[1].cc: 'cubic' is not translated"),
        ({"link.bottleneck.queue": '{kind = "red", mode = "bytes"}'}, "mode: only packet"),
        ({"tcp.rack_tlp": "true"}, "tcp.rack_tlp: not translated"),
        ({"flow[0].dst": "r2"}, "every flow must go from the same src to the same dst"),
        # ns-2's agents send at exact times: plait's default send jitter is refused.
        ({"tcp.exact_timing": "false"}, "tcp.exact_timing: ns-2's agents send at exact times"),
        ({"tcp.send_jitter": "0.5"}, "give tcp.exact_timing = true"),
    ],
)
def test_what_is_not_translated_is_refused_in_one_line(override, message):
    with pytest.raises(ns2.Unsupported) as err:
        ns2.from_plait(MULTCP_RED, overrides=override)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_counters_are_taken_over_the_measurement_window():
    s = ns2.from_plait(RENO_RED)
    s.flows = s.flows[:2]
    out = "\n".join(
        [
            "C warmup flow 0 99 120 3 1 2",
            # flow 1 has not started at the end of the warm-up: no line for it.
            "C warmup drop 1 1 110 4",
            "C warmup link 1 110 4 100 150000",
            "C end flow 0 1099 1150 23 3 7",
            "C end flow 1 499 520 10 0 2",
            "C end drop 1 1 1140 24",
            "C end drop 1 2 530 10",
            "C end link 1 1670 34 1630 2445000",
            "C end link 0 1670 0 1670 2505000",
            "C end link 2 1630 0 1630 2445000",
        ]
    )
    r = ns2.parse(s, out)
    f0, f1 = r.flows.iloc[0], r.flows.iloc[1]
    span = 100.0
    assert f0.goodput_bps == pytest.approx(1000 * 1460 * 8 / span)
    assert f0.bytes_delivered == 1000 * 1460
    assert (f0.packets_sent, f0.retransmissions, f0.timeouts, f0.fast_retransmits) == (
        1030,
        20,
        2,
        3,
    )
    assert f0.throughput_bps == pytest.approx(1030 * 1500 * 8 / span)
    assert f0.drops == 20
    # From ack_ = -1 (nothing acknowledged) at its start: 500 packets.
    assert f1.bytes_delivered == 500 * 1460 and f1.drops == 10 and f1.timeouts == 0
    b = r.links.iloc[1]
    assert (b.arrivals, b.drops) == (1560, 30)
    assert b.utilization == pytest.approx(2295000 * 8 / (20e6 * span))


@needs_ns
def test_multcp_on_red_in_ns2_takes_about_four_shares():
    s = ns2.from_plait(MULTCP_RED)
    r = ns2.run(s, sample_interval=0.01)
    f = r.flows
    ratio = f.goodput_bps[0] / f.goodput_bps[1:].mean()
    assert 3.3 < ratio < 4.6, ratio
    bottleneck = r.links.iloc[1]
    assert bottleneck.drop_fraction < 0.02
    assert bottleneck.utilization > 0.9
    assert f.drops.sum() == bottleneck.drops
    # The window is not held at ns-2's default window_ of 20 packets.
    series = r.series[r.series.time_s >= 20]
    assert series["cwnd.multcp"].max() > 40
    # RED ran in packet mode: its average sits between the thresholds, in packets.
    assert 5 < series["ave.bottleneck"].mean() < 15


@needs_ns
def test_ns2_default_advertised_window_caps_the_aggregate():
    # What a script that forgets window_ measures: at most 20 packets in flight (window()
    # = min(cwnd_, window_); cwnd_ itself keeps growing), so at most 20 packets per base RTT.
    s = ns2.from_plait(MULTCP_RED, overrides={"tcp.receive_buffer": "29200B"})
    f = ns2.run(s).flows
    base_rtt = 2 * sum(link.delay_s for link in s.links)
    assert f.goodput_bps[0] <= 20 * 1460 * 8 / base_rtt
    assert f.goodput_bps[0] / f.goodput_bps[1:].mean() < 2.5


@needs_ns
def test_reno_on_red_agrees_with_ns2():
    _, summary = ns2.compare(RENO_RED, seeds=(1, 2))
    by = summary.groupby("simulator").mean(numeric_only=True)
    for column, tolerance in (("total_goodput_bps", 0.05), ("drop_percent", 0.15)):
        mine, theirs = by.loc["plait", column], by.loc["ns-2", column]
        assert abs(mine - theirs) <= tolerance * theirs, (column, mine, theirs)
    assert math.isnan(by.loc["plait", "ratio"])


@needs_ns
def test_multcp_on_red_agrees_with_ns2_when_reduced_from_the_window():
    # ns-2 reduces from window() (tcp/tcp.cc slowdown); plait does with ssthresh_basis = cwnd.
    _, summary = ns2.compare(MULTCP_RED, seeds=(1, 2, 3), overrides={"tcp.ssthresh_basis": "cwnd"})
    by = summary.groupby("simulator").mean(numeric_only=True)
    assert abs(by.loc["plait", "ratio"] / by.loc["ns-2", "ratio"] - 1) < 0.15, by
    assert abs(by.loc["plait", "drop_percent"] / by.loc["ns-2", "drop_percent"] - 1) < 0.15, by


@needs_ns
def test_multcp_on_red_agrees_with_ns2_by_default():
    _, summary = ns2.compare(MULTCP_RED, seeds=(1, 2, 3))
    by = summary.groupby("simulator").mean(numeric_only=True)
    assert abs(by.loc["plait", "ratio"] / by.loc["ns-2", "ratio"] - 1) < 0.15, by
