"""TFRC in the ns-2 harness (python/plait/ns2; docs/ns2.md, "TFRC"): a `tfrc` flow becomes
Agent/TFRC + Agent/TFRCSink with every ns-2 default that differs from plait's RFC 5348 TFRC
set, what ns-2's TFRC cannot do is refused in one line, and the sink's loss reports are read
back. The script tests need no ns-2; the runs need Debian's `ns2` package and are skipped
without it (.ci/run installs it and sets PLAIT_REQUIRE_NS2).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest
from plait import ns2

ROOT = Path(__file__).resolve().parents[2]
AGREEMENT = ROOT / "experiments" / "ns2-agreement"
TFRC_RED = AGREEMENT / "tfrc_4reno_red.toml"
TFRC_DROPTAIL = AGREEMENT / "tfrc_reno_droptail.toml"
MULTCP_RED = ROOT / "experiments" / "ns2-differential" / "multcp_red.toml"

needs_ns = pytest.mark.skipif(
    ns2.find_ns() is None and not os.environ.get("PLAIT_REQUIRE_NS2"),
    reason="ns-2 is not installed (apt-get install ns2; .ci/run installs it), or set PLAIT_NS",
)


def _script(path: Path = TFRC_RED, **kw) -> str:
    return ns2.tcl(ns2.from_plait(path, **kw))


def test_a_tfrc_flow_is_read_with_its_settings():
    s = ns2.from_plait(TFRC_RED, starts={"tfrc": 0.5})
    assert [f.kind for f in s.flows] == ["tfrc", "tcp", "tcp", "tcp", "tcp"]
    tfrc = s.flows[0]
    assert tfrc.name == "tfrc" and tfrc.cc == "tfrc" and tfrc.start_s == 0.5
    assert tfrc.tfrc == ns2.Tfrc(1460, 40, True, False)
    assert tfrc.tfrc.wire_bytes == 1500 and tfrc.tfrc.feedback_bytes == 64
    s = ns2.from_plait(
        TFRC_RED,
        overrides={
            "flow[0].segment_size": "1000",
            "flow[0].header_bytes": "28",
            "flow[0].history_discounting": "false",
            "flow[0].oscillation_reduction": "true",
            "flow[0].timer_granularity": "0s",
            "flow[0].reliable": "false",
        },
    )
    assert s.flows[0].tfrc == ns2.Tfrc(1000, 28, False, True)


def test_the_script_sets_ns2s_tfrc_to_rfc_5348():
    text = _script()
    for line in [
        # Sender (tcp/tfrc.cc): q = 0.9, X doubled at once in slow start, b = 1, X <= 2 X_recv.
        "Agent/TFRC set df_ 0.9",
        "Agent/TFRC set slow_increase_ 0",
        "Agent/TFRC set ssmult_ 2",
        "Agent/TFRC set rate_init_option_ 2",
        "Agent/TFRC set bval_ 1",
        "Agent/TFRC set maxHeavyRounds_ 0",
        "Agent/TFRC set conservative_ 0",
        "Agent/TFRC set overhead_ 0",
        "Agent/TFRC set useHeaders_ true",
        "Agent/TFRC set tcp_tick_ 0.001",
        # Receiver (tcp/tfrc-sink.cc): the average loss interval over 8 with RFC weights,
        # RFC 5348 §5.2's loss events, feedback once per RTT, the §6.3.1 first interval.
        "Agent/TFRCSink set algo_ 1",
        "Agent/TFRCSink set NumSamples_ -1",
        "Agent/TFRCSink set smooth_ 1",
        "Agent/TFRCSink set minDiscountRatio_ 0.5",
        "Agent/TFRCSink set ShortIntervals_ 0",
        "Agent/TFRCSink set PreciseLoss_ 0",
        "Agent/TFRCSink set numPkts_ 1",
        "Agent/TFRCSink set NumFeedback_ 1",
        "Agent/TFRCSink set AdjustHistoryAfterSS_ 1",
        "Agent/TFRCSink set printLoss_ 1",
        # The flow: s, the header on the wire, one packet a second before feedback.
        "set tfrc(0) [new Agent/TFRC]",
        "$tfrc(0) set fid_ 1",
        "$tfrc(0) set packetSize_ 1460",
        "$tfrc(0) set headersize_ 40",
        "$tfrc(0) set fsize_ 1460",
        "$tfrc(0) set InitRate_ 1460",
        "$tfrc(0) set ca_ 0",
        "set sink(0) [new Agent/TFRCSink]",
        "$sink(0) set packetSize_ 64",
        "$sink(0) set discount_ 1",
        "$ns connect $tfrc(0) $sink(0)",
        # TCP flows beside it keep their agents and indices.
        "set tcp(1) [new Agent/TCP/Sack1]",
        "$tcp(1) set fid_ 2",
        # Counters to a file (the sink prints its reports to stdout).
        "set out [open counters.txt w]",
        "    foreach i {1 2 3 4} {",
        '        puts $out "C $tag tfrc $i [$tfrc($i) set ndatapack_] [$sink($i) set bytes_]"',
        '$ns at 120 "counters end; close $out; exit 0"',
        # t_RTO = 4R: minrto_ follows an EWMA of the path's RTT read from its queues.
        "proc tfrc_rto {} {",
        "        $tfrc($i) set minrto_ [expr {4 * $rpath}]",
        "$ns at 0 tfrc_rto",
    ]:
        assert line in text, line
    assert re.search(r"\$tfrc\(0\) start", text)
    assert "[$fmon(1) set size_] * 8.0 / 20000000" in text
    # The base RTT of the 1500-byte data packet and the 64-byte report over the three links.
    base = float(re.search(r"set r \[expr \{([0-9.e-]+) \+", text).group(1))
    assert base == pytest.approx(0.044 + 1564 * 8 * (2 / 1e9 + 1 / 20e6))


def test_the_script_follows_the_tfrc_options():
    text = _script(
        overrides={
            "flow[0].segment_size": "1000",
            "flow[0].history_discounting": "false",
            "flow[0].oscillation_reduction": "true",
            "flow[1].count": "1",
        }
    )
    for line in [
        "$tfrc(0) set packetSize_ 1000",
        "$tfrc(0) set InitRate_ 1000",
        "$tfrc(0) set fsize_ 1000",
        "$tfrc(0) set ca_ 1",
        "$sink(0) set discount_ 0",
    ]:
        assert line in text, line
    # Two TFRC flows: the sink's reports cannot be told apart, so none are printed.
    two = _script(overrides={"flow[0].count": "2"})
    assert "Agent/TFRCSink set printLoss_ 0" in two and "set tfrc(1) [new Agent/TFRC]" in two


def test_a_script_without_tfrc_is_unchanged():
    # Its counters still go to standard output and nothing of TFRC is written: the stored ns-2
    # rows of the TCP scenarios keep their script hashes (test_ns2_agreement).
    text = _script(MULTCP_RED)
    assert "TFRC" not in text and "counters.txt" not in text and "tfrc_rto" not in text
    assert '        puts "C $tag flow $i [$tcp($i) set ack_]' in text


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"flow[0].reliable": "true"}, "flow[0].reliable: ns-2's Agent/TFRC has no retransmission"),
        ({"flow[0].timer_granularity": "1ms"}, "flow[0].timer_granularity: ns-2's Agent/TFRC"),
        ({"flow[0].kind": '"multfrc"'}, "flow[0].kind: 'multfrc' is not translated (tcp or tfrc)"),
    ],
)
def test_what_ns2s_tfrc_cannot_do_is_refused_in_one_line(override, message):
    with pytest.raises(ns2.Unsupported) as err:
        ns2.from_plait(TFRC_RED, overrides=override)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_the_loss_event_rate_is_averaged_over_the_window():
    # p is 0 until the first report, then holds from one report to the next.
    reports = [(10.0, 0.01), (30.0, 0.02), (50.0, 0.04)]
    assert ns2.loss_event_rate_mean(reports, 20.0, 40.0) == pytest.approx(0.015)
    assert ns2.loss_event_rate_mean(reports, 0.0, 20.0) == pytest.approx(0.005)
    assert ns2.loss_event_rate_mean(reports, 50.0, 60.0) == pytest.approx(0.04)
    assert ns2.loss_event_rate_mean([], 0.0, 10.0) == 0.0
    assert math.isnan(ns2.loss_event_rate_mean(reports, 10.0, 10.0))


def test_tfrc_counters_and_reports_are_read_back():
    s = ns2.from_plait(TFRC_DROPTAIL)
    counters = "\n".join(
        [
            "C warmup flow 1 99 120 3 1 2",
            "C warmup tfrc 0 200 150000",
            "C warmup drop 1 1 210 4",
            "C warmup link 1 330 4 320 480000",
            "C end flow 1 1099 1150 23 3 7",
            "C end tfrc 0 1200 1575000",
            "C end drop 1 1 1240 14",
            "C end drop 1 2 1150 20",
            "C end link 1 2390 34 2350 3525000",
        ]
    )
    stdout = "\n".join(
        [
            "time: 15.00000 loss_rate: 0.00100 ",
            "time: 15.00000 sample 0:    12 loss_rate: 0.00100 ",
            "15.000000: sample 0:    12 1:   900 2:     0 3:     0 4:     0",
            "time: 60.00000 loss_rate: 0.00200 ",
        ]
    )
    r = ns2.parse(s, counters + "\n" + stdout)
    tfrc = r.flows.iloc[0]
    span = 100.0
    assert (tfrc.kind, tfrc.cc, tfrc.packets_sent, tfrc.drops) == ("tfrc", "tfrc", 1000, 10)
    # 1425000 bytes of 1500-byte packets received: 950 packets of 1460 bytes of payload.
    assert tfrc.bytes_delivered == 950 * 1460
    assert tfrc.goodput_bps == pytest.approx(950 * 1460 * 8 / span)
    assert tfrc.throughput_bps == pytest.approx(1000 * 1500 * 8 / span)
    assert tfrc.timeouts == 0 and tfrc.retransmissions == 0
    # 0.001 from 20 to 60 s, 0.002 from 60 to 120 s.
    assert tfrc.loss_event_rate == pytest.approx((40 * 0.001 + 60 * 0.002) / 100)
    reno = r.flows.iloc[1]
    assert (reno.kind, reno.packets_sent, reno.timeouts, reno.drops) == ("tcp", 1030, 2, 20)


@needs_ns
def test_ns2s_tfrc_runs_beside_tcp_and_reports_its_loss_event_rate():
    s = ns2.from_plait(
        TFRC_RED, overrides={"simulation.duration": "50s", "simulation.warmup": "10s"}
    )
    r = ns2.run(s, sample_interval=0.5)
    f = r.flows
    tfrc, reno = f.iloc[0], f.iloc[1:]
    assert tfrc.kind == "tfrc" and (reno.kind == "tcp").all()
    # One TFRC flow gets about a TCP share on RED (0.97-1.08 over the full runs).
    assert 0.7 < tfrc.goodput_bps / reno.goodput_bps.mean() < 1.4
    assert 0.002 < tfrc.loss_event_rate < 0.012
    # Every TFRC packet sent in the window is received or dropped (a few in flight at both
    # ends of the window).
    received = tfrc.bytes_delivered / 1460
    assert abs(tfrc.packets_sent - received - tfrc.drops) < 40
    assert f.drops.sum() == r.links.iloc[1].drops
    assert r.links.iloc[1].utilization > 0.9
    # Its allowed rate (rate_, bytes/s) is sampled: about its goodput.
    rate = r.series[r.series.time_s >= 10]["rate.tfrc"].mean() * 8
    assert rate == pytest.approx(tfrc.goodput_bps, rel=0.15)


@needs_ns
def test_ns2s_tfrc_agrees_with_plaits_on_drop_tail():
    flows, summary = ns2.compare(TFRC_DROPTAIL, seeds=(1, 2, 3))
    ratio = {}
    for sim, part in flows.groupby("simulator"):
        t = part[part.cc == "tfrc"].groupby("seed").goodput_bps.mean()
        r = part[part.cc == "reno"].groupby("seed").goodput_bps.mean()
        ratio[sim] = float((t / r).mean())
    # 1.12 (ns-2) and 1.14 (plait) over ten seeds; three seeds spread wider.
    assert abs(ratio["plait"] / ratio["ns-2"] - 1) < 0.15, ratio
    by = summary.groupby("simulator").mean(numeric_only=True)
    assert by.loc["plait", "total_goodput_bps"] == pytest.approx(
        by.loc["ns-2", "total_goodput_bps"], rel=0.02
    )
    # The summary has the same ratio, and both loss event rates (plait's from its series).
    assert by.loc["plait", "tfrc_over_tcp"] == pytest.approx(ratio["plait"])
    assert by.loc["ns-2", "tfrc_over_tcp"] == pytest.approx(ratio["ns-2"])
    p = by.tfrc_loss_event_rate
    assert 0.0005 < p["ns-2"] < 0.0012 and abs(p["plait"] / p["ns-2"] - 1) < 0.15, p


# RFC 5348 §5.2-§5.5 over packets in send order, as plait's loss history computes it
# (crates/plait-core/src/transport/tfrc/loss_history.rs): the reference the sink is held to.
WEIGHTS = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]


def rfc5348_p(packets, discounting=True):
    """p after each packet of `packets`, (send time, lost, R) in sequence order."""
    closed: list[list[float]] = []  # [length, DF_i], most recent first
    first = start = None
    count = 0
    out = []

    def closed_mean():
        pairs = list(zip(closed, WEIGHTS))
        return sum(w * c[1] * c[0] for c, w in pairs) / sum(w * c[1] for c, w in pairs)

    def discount():
        if not discounting or not closed:
            return 1.0
        i0, mean = count - first, closed_mean()
        return max(0.5, 2 * mean / i0) if i0 > 2 * mean else 1.0

    for sent, lost, rtt in packets:
        index = count
        count += 1
        if lost and first is None:
            first, start = index, sent
        elif lost and sent > start + rtt:
            df = discount()
            closed = [[c[0], c[1] * df] for c in closed]
            closed = ([[index - first, 1.0]] + closed)[: len(WEIGHTS)]
            first, start = index, sent
        if first is None:
            out.append(0.0)
            continue
        i0 = count - first
        if not closed:
            out.append(1 / i0)
            continue
        df = discount()
        tot, w0 = WEIGHTS[0] * i0, WEIGHTS[0]
        for c, w in zip(closed[:-1], WEIGHTS[1:]):
            tot += w * c[1] * df * c[0]
            w0 += w * c[1] * df
        out.append(1 / max(tot / w0, closed_mean()))
    return out


@needs_ns
@pytest.mark.parametrize("discounting", [True, False])
def test_ns2s_sink_computes_rfc_5348s_loss_event_rate(tmp_path, discounting):
    """The sink, as the script sets it, reports the p RFC 5348 gives for the packets it lost:
    the TFRC flow's packets and drops are read from a trace of the bottleneck queue, and the
    loss history above (plait's) replayed on them; both time means within 2 % (they differ by
    the reports' spacing and ns-2's one-packet-shorter I_0)."""
    import subprocess

    s = ns2.from_plait(
        TFRC_RED,
        overrides={
            "simulation.duration": "60s",
            "flow[0].history_discounting": str(discounting).lower(),
        },
    )
    text = ns2.tcl(s)
    # The sender's R is followed by the script's R_path (minrto_ is 4 R_path): print it.
    text = text.replace("global ns fmon tfrc rpath\n", "global ns fmon tfrc rpath out\n").replace(
        "    $ns at [expr {[$ns now] + $rpath}] tfrc_rto",
        '    puts $out "R [$ns now] $rpath"\n    $ns at [expr {[$ns now] + $rpath}] tfrc_rto',
    )
    text = text.replace(
        "set q(1) [[$ns link $n(1) $n(2)] queue]",
        "set q(1) [[$ns link $n(1) $n(2)] queue]\n"
        "set trace [open trace.tr w]\n$ns trace-queue $n(1) $n(2) $trace",
    )
    (tmp_path / "s.tcl").write_text(text)
    done = subprocess.run(
        [ns2.find_ns() or "ns", "s.tcl"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    counters = (tmp_path / ns2.COUNTERS_FILE).read_text()
    rpath = [(float(a), float(b)) for a, b in re.findall(r"^R (\S+) (\S+)", counters, re.M)]
    reports = [
        (float(a), float(b))
        for a, b in re.findall(r"^time: (\S+) loss_rate: (\S+)", done.stdout, re.M)
    ]
    arrivals, dropped = [], set()
    for line in (tmp_path / "trace.tr").read_text().splitlines():
        f = line.split()
        if f[7] != "1":  # the TFRC flow's fid
            continue
        if f[0] == "+":
            arrivals.append((float(f[1]), int(f[11])))
        elif f[0] == "d":
            dropped.add(int(f[11]))
    times, rs = [t for t, _ in rpath], [r for _, r in rpath]
    packets = []
    for t, uid in arrivals:
        sent = t - 0.001 - 1500 * 8 / 1e9  # the access link's delay and transmission
        k = max(0, min(len(rs) - 1, sum(1 for x in times if x <= sent) - 1))
        packets.append((sent, uid in dropped, rs[k]))
    assert 100 < len(dropped) < 300
    p = rfc5348_p(packets, discounting)
    # Time mean over the window of the replayed p (steps at each arrival at the queue).
    total, last_t, last_p = 0.0, s.warmup_s, 0.0
    for (t, _), value in zip(arrivals, p):
        if t > s.warmup_s:
            total += last_p * (t - last_t)
            last_t = t
        last_p = value
    total += last_p * (s.duration_s - last_t)
    replayed = total / (s.duration_s - s.warmup_s)
    reported = ns2.loss_event_rate_mean(reports, s.warmup_s, s.duration_s)
    assert replayed == pytest.approx(reported, rel=0.02), (replayed, reported)
