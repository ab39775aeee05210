"""The testbed's loss counters: retransmissions, fast retransmits (recovery episodes) and RTOs
per flow from TCP_INFO and the sender namespace's nstat counters, over the scenario's window
(docs/testbed.md, "What it measures"). The parsing and the attribution rule run anywhere; the
runs need root and the testbed binaries, as the tests of test_testbed.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from _testbed_skip import needs_testbed
from plait.testbed.runner import (
    _add_subflow_timeouts,
    _counter_deltas,
    _parse_proc_counters,
    _since,
    _sole_sender_count,
)
from test_testbed import (
    SCENARIO,
    _mptcp,
    _ours,
    _plait,
)

SNMP = """Ip: Forwarding DefaultTTL InReceives
Ip: 2 64 1234
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens CurrEstab OutSegs RetransSegs
Tcp: 1 200 120000 -1 3 2 5000 17
Udp: InDatagrams NoPorts
Udp: 4 0
"""
NETSTAT = """TcpExt: SyncookiesSent TCPSackRecovery TCPRenoRecovery TCPTimeouts TCPLossProbes
TcpExt: 0 9 0 2 4
IpExt: InNoRoutes InOctets
IpExt: 0 99999
MPTcpExt: MPCapableSYNTX MPTCPRetrans MPJoinSynAckRx MPCurrEstab
MPTcpExt: 1 6 1 1
"""


def test_proc_counters_are_read_as_nstat_names_them():
    got = _parse_proc_counters(SNMP + NETSTAT)
    assert got["TcpRetransSegs"] == 17 and got["TcpOutSegs"] == 5000
    assert got["TcpMaxConn"] == -1
    assert got["TcpExtTCPSackRecovery"] == 9 and got["TcpExtTCPTimeouts"] == 2
    assert got["MPTcpExtMPTCPRetrans"] == 6 and got["MPTcpExtMPJoinSynAckRx"] == 1
    # Only the TCP groups: no Ip, Udp, IpExt.
    assert not [k for k in got if k.startswith(("Ip", "Udp"))]


def test_deltas_cover_the_window_and_leave_out_gauges():
    mark = {"a": _parse_proc_counters(SNMP + NETSTAT)}
    end_text = (SNMP + NETSTAT).replace(
        "1 200 120000 -1 3 2 5000 17", "1 200 120000 -1 3 1 9000 30"
    )
    end_text = end_text.replace("TcpExt: 0 9 0 2 4", "TcpExt: 0 14 0 3 4")
    deltas = _counter_deltas(mark, {"a": _parse_proc_counters(end_text)})["a"]
    assert deltas["TcpRetransSegs"] == 13 and deltas["TcpOutSegs"] == 4000
    assert deltas["TcpExtTCPSackRecovery"] == 5 and deltas["TcpExtTCPTimeouts"] == 1
    assert deltas["TcpExtTCPLossProbes"] == 0
    # Gauges and constants have no delta.
    for gauge in ("TcpCurrEstab", "TcpMaxConn", "TcpRtoMin", "MPTcpExtMPCurrEstab"):
        assert gauge not in deltas
    # A host without a reading at the mark has no deltas (never the whole count).
    assert _counter_deltas({}, {"a": _parse_proc_counters(end_text)}) == {}


def _flows(*pairs):
    return SimpleNamespace(flows=[SimpleNamespace(src=s, dst=d) for s, d in pairs])


def test_namespace_counts_go_to_a_flow_only_when_it_is_alone_in_its_namespace():
    names = ("TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery")
    nstat = {"a": {"TcpExtTCPSackRecovery": 5, "TcpExtTCPRenoRecovery": 1}, "c": {}}
    plan = _flows(("a", "b"))
    assert _sole_sender_count(plan.flows[0], plan, nstat, names) == 6
    # Two senders in one namespace (count = 2, or two flows from a): the total is theirs.
    plan = _flows(("a", "b"), ("a", "b"))
    assert _sole_sender_count(plan.flows[0], plan, nstat, names) is None
    # The namespace also holds another flow's receiver: not only this flow's sockets.
    plan = _flows(("a", "b"), ("b", "a"))
    assert _sole_sender_count(plan.flows[0], plan, nstat, names) is None
    # Flows in other namespaces do not matter.
    plan = _flows(("a", "b"), ("c", "b"))
    assert _sole_sender_count(plan.flows[0], plan, nstat, names) == 6
    # A counter this kernel lacks: None, not a partial sum.
    assert _sole_sender_count(plan.flows[1], plan, nstat, names) is None


def test_a_tcp_info_field_the_kernel_did_not_fill_is_none_not_a_difference():
    end = {"total_retrans": 12, "total_rto": None}
    assert _since(end, {"total_retrans": 5, "total_rto": None}, "total_retrans") == 7
    assert _since(end, {"total_retrans": 5, "total_rto": None}, "total_rto") is None
    assert _since(end, {}, "total_retrans") == 12  # the flow started after the warm-up
    assert _since({}, {}, "total_rto") is None


def test_subflow_timeouts_are_matched_by_address_and_need_a_mark_reading():
    plan = SimpleNamespace(warmup_ns=2_000_000_000)
    flow = SimpleNamespace(start_ns=0)
    rows = [{"src_addr": "10.99.0.1", "timeouts": None}, {"src_addr": "10.99.201.1"}]
    report = {
        "subflows_mark": [{"local": "10.99.0.1", "info": {"total_rto": 1, "total_retrans": 3}}],
        "subflows_end": [
            {"local": "10.99.201.1", "info": {"total_rto": 2, "total_retrans": 5}},
            {"local": "10.99.0.1", "info": {"total_rto": 4, "total_retrans": 9, "info_len": 248}},
        ],
    }
    deltas = _add_subflow_timeouts(rows, report, flow, plan)
    # Matched by address, not by order; the second joined after the mark: from its start.
    assert [r["timeouts"] for r in rows] == [3, 2]
    assert deltas["10.99.0.1"]["total_retrans"] == 6 and deltas["10.99.0.1"]["info_len"] == 248
    # No reading at the mark for a flow that started before it: null, not the whole count.
    rows = [{"src_addr": "10.99.0.1", "timeouts": None}]
    _add_subflow_timeouts(rows, {**report, "subflows_mark": None}, flow, plan)
    assert rows[0]["timeouts"] is None
    # A kernel without tcpi_total_rto: null.
    old = {
        "subflows_mark": [],
        "subflows_end": [{"local": "10.99.0.1", "info": {"total_rto": None}}],
    }
    _add_subflow_timeouts(rows, old, flow, plan)
    assert rows[0]["timeouts"] is None


def _kernel_has_total_rto() -> bool:
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    return (major, minor) >= (6, 7)


def _run(tmp_path: Path, text: str) -> dict:
    p = tmp_path / "s.toml"
    p.write_text(text)
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    return json.loads((tmp_path / "r.json").read_text())


@pytest.mark.slow
@needs_testbed
def test_reno_over_a_20_packet_buffer_counts_its_losses(tmp_path, testbed_turn):
    summary = _run(tmp_path, SCENARIO.format(duration="6s", warmup="2s", buffer=20))
    (flow,) = summary["flows"]
    tb = summary["testbed"]
    socket, nstat = tb["tcp_info"]["bulk"], tb["nstat"]["a"]
    drops = summary["links"][0]["drops"]  # the forward queue's, in the window
    print(
        f"drops {drops} (flow {flow['drops']}), retransmissions {flow['retransmissions']}, "
        f"recovery episodes {flow['fast_retransmits']}, RTOs {flow['timeouts']}, "
        f"TcpRetransSegs {nstat['TcpRetransSegs']}, socket {socket}"
    )
    assert drops > 0 and flow["retransmissions"] > 0 and flow["fast_retransmits"] > 0
    # Every packet the emulator dropped is resent; the drops of an episode still under repair
    # when the window ends may miss their retransmission, and one begun before the mark may
    # bring retransmissions without drops: the two agree within one episode's few packets.
    assert abs(flow["retransmissions"] - drops) <= 4
    # An episode repairs at least one drop; one recovery per drop at most.
    assert 1 <= flow["fast_retransmits"] <= drops
    # The flow is alone in a: its recovery episodes are the namespace's SACK + Reno recoveries,
    # and the namespace's retransmitted segments its own (read a few ms from the socket's).
    assert (
        flow["fast_retransmits"] == nstat["TcpExtTCPSackRecovery"] + nstat["TcpExtTCPRenoRecovery"]
    )
    assert abs(nstat["TcpRetransSegs"] - flow["retransmissions"]) <= 2
    assert socket["total_retrans"] == flow["retransmissions"]
    assert socket["data_segs_out"] == flow["packets_sent"] > 0
    assert socket["segs_out"] >= socket["data_segs_out"]
    # Delivered in the window: what was sent, plus what was in flight at the mark, minus what
    # is in flight at the end (at most the pipe and the buffer, 33 + 20 packets).
    assert abs(socket["delivered"] - socket["data_segs_out"]) <= 60
    if _kernel_has_total_rto():
        assert socket["info_len"] >= 248
        assert flow["timeouts"] == socket["total_rto"] is not None and flow["timeouts"] >= 0
    else:
        assert socket["total_rto"] is None
        assert flow["timeouts"] == nstat["TcpExtTCPTimeouts"]
    assert not [n for n in _ours() if n.startswith("plait-")]


@pytest.mark.slow
@needs_testbed
def test_a_transfer_without_drops_shows_no_losses(tmp_path, testbed_turn):
    # 200 KB (139 segments) in slow start from 10 segments: at most 69 in flight, well under
    # the 100-packet buffer plus the 33-packet pipe, so nothing is dropped.
    text = SCENARIO.format(duration="3s", warmup="0s", buffer=100) + 'bytes = "200KB"\n'
    summary = _run(tmp_path, text)
    (flow,) = summary["flows"]
    nstat = summary["testbed"]["nstat"]["a"]
    print("flow", flow, "socket", summary["testbed"]["tcp_info"]["bulk"])
    assert flow["completion_s"] is not None
    assert flow["drops"] == 0 and sum(link["drops"] for link in summary["links"]) == 0
    assert flow["retransmissions"] == 0 and flow["fast_retransmits"] == 0
    assert flow["timeouts"] == 0
    assert nstat["TcpRetransSegs"] == 0 and nstat["TcpExtTCPTimeouts"] == 0
    assert flow["packets_sent"] >= 139
    assert not [n for n in _ours() if n.startswith("plait-")]


@pytest.mark.slow
@needs_testbed
def test_mptcp_counters_go_to_the_connection_and_the_host(tmp_path, testbed_turn):
    if not os.path.isdir("/proc/sys/net/mptcp"):
        pytest.skip("this kernel has no MPTCP")
    summary = _run(tmp_path, _mptcp(duration="5s", warmup="2s"))
    (flow,) = summary["flows"]
    nstat = summary["testbed"]["nstat"]["a"]
    paths = summary["paths"]
    print("flow", flow, "paths", [(q["retransmissions"], q["bytes_sent"]) for q in paths])
    print("nstat", {k: v for k, v in nstat.items() if v})
    # The host's MPTCP counters are in the summary, zero or not (reinjections, joins, ...).
    assert "MPTcpExtMPTCPRetrans" in nstat and "MPTcpExtMPJoinSynAckRx" in nstat
    assert "MPTcpExtMPCurrEstab" not in nstat  # a gauge, not a counter
    # The connection is alone in a: its subflows' recovery episodes and RTOs are the host's.
    recoveries = nstat["TcpExtTCPSackRecovery"] + nstat["TcpExtTCPRenoRecovery"]
    assert flow["fast_retransmits"] == recoveries
    assert flow["timeouts"] == nstat["TcpExtTCPTimeouts"]
    # Per subflow: ss's retransmissions add up to the host's (read a few ms apart), and agree
    # with each subflow's TCP_INFO (MPTCP_TCPINFO); its RTOs from tcpi_total_rto; no count of
    # recovery episodes per socket exists, so that stays null.
    assert abs(sum(q["retransmissions"] for q in paths) - nstat["TcpRetransSegs"]) <= 2
    subflows = summary["testbed"]["tcp_info"]["mp"]["subflows"]
    assert sorted(subflows) == sorted(q["src_addr"] for q in paths)
    for q in paths:
        assert abs(subflows[q["src_addr"]]["total_retrans"] - q["retransmissions"]) <= 1
        assert q["fast_retransmits"] is None
        if _kernel_has_total_rto():
            assert q["timeouts"] == subflows[q["src_addr"]]["total_rto"] >= 0
        else:
            assert q["timeouts"] is None
    assert sum(q["timeouts"] or 0 for q in paths) <= nstat["TcpExtTCPTimeouts"] + 1
    assert recoveries <= flow["drops"]  # an episode repairs at least one drop
    assert not [n for n in _ours() if n.startswith("plait-")]
