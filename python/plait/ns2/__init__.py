"""A differential harness against ns-2 (ns-2.35, Debian's `ns2` package).

The same dumbbell scenario, written once as a plait scenario file, is run by plait and by
ns-2: :func:`from_plait` reads the subset of the scenario schema ns-2 can be given (a chain of
links from one source node to one destination node, drop-tail or RED queues, TCP flows with
Reno or MulTCP windows, TFRC flows), :func:`tcl` writes the ns-2 script, and :func:`run` runs
`ns` and reads back one row per flow with the columns of plait's flows table (goodput, wire
throughput, packets sent, retransmissions, timeouts, drops at the queues) plus, when asked, a
time series of every flow's cwnd and every RED queue's average, drop probability and length.

How the scenario maps onto ns-2 (docs/ns2.md has the table, with the ns-2 defaults that
would otherwise apply):

- links: `$ns duplex-link` with the link's rate and delay; drop-tail is `Queue/DropTail` with
  `limit_` packets (ns-2 counts only waiting packets, as plait's drop-tail does); RED is
  `Queue/RED` in packet mode (`bytes_ false`, `queue_in_bytes_ false`, ns-2.35's defaults
  being byte mode) with `thresh_`, `maxthresh_`, `q_weight_`, `linterm_ = 1/max_p`,
  `gentle_`, `wait_`, `mean_pktsize_` set from the scenario;
- TCP: `Agent/TCP/Sack1` and `Agent/TCPSink/Sack1` (plait's default `sack = true`), or
  `Agent/TCP/Newreno` with `Agent/TCPSink` when `sack = false` (with `newreno_changes1_ 0`:
  the timer restarted on every partial ACK, and `lessCareful_ true`: a fast retransmit once
  the ACK reaches the recovery point, as plait does); `packetSize_` = mss (ns-2 adds
  `tcpip_base_hdr_size_` = 40 header bytes on the wire, plait's `header_bytes`),
  `windowInit_`, `minrto_`, `maxrto_`, `rtxcur_init_` from `[tcp]`, and the advertised window
  `window_` from `receive_buffer / mss` (ns-2's default `window_ 20` would cap every window at
  20 packets);
- MulTCP(N) with `equivalence = "crowcroft"`: `increase_num_ N` (cwnd += N/cwnd per ACK),
  `decrease_num_ 1 - 1/(2N)` and `first_decrease_ 0` (ns-2's `TcpAgent::opencwnd` and
  `slowdown`, tcp/tcp.cc); `"exact"`: `increase_num_ 3N²/(4N - 1)`.

Goodput is the cumulative ACK (`ack_`, in packets) gained over the measurement window times
the mss; timeouts are `nrexmit_`, packets sent `ndatapack_`, retransmissions `nrexmitpack_`,
window reductions `ncwndcuts_` (fast retransmits are `ncwndcuts_ - nrexmit_`); drops per flow
come from a flow monitor (`QueueMonitor/ED/Flowmon`) on every link's forward direction.
Counters are read at the end of the warm-up and at the end of the run and differenced.

- TFRC (`kind = "tfrc"`): `Agent/TFRC` and `Agent/TFRCSink` (tcp/tfrc.cc, tcp/tfrc-sink.cc)
  with every default that differs from plait's RFC 5348 TFRC set where ns-2 has a setting,
  and t_RTO kept at 4R through `minrto_` (:func:`_tfrc_rto`); what has none is in the table of
  experiments/ns2-agreement/README.md. Goodput is the sink's `bytes_` (whole packets) times
  the payload share; the sink's loss event rate reports (`printLoss_`, standard output) are
  averaged over the measurement window (:func:`loss_event_rate_mean`), so a script with TFRC
  writes its own counters to a file.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


#: The columns of a flow both simulators give (plait's flows table, read back from ns-2).
FLOW_COLUMNS = [
    "name",
    "cc",
    "start_s",
    "goodput_bps",
    "throughput_bps",
    "packets_sent",
    "retransmissions",
    "fast_retransmits",
    "timeouts",
    "drops",
]


class Unsupported(ValueError):
    """The scenario uses something the ns-2 harness does not translate (one line)."""


# --------------------------------------------------------------------------------------------
# The scenario subset


@dataclass
class DropTail:
    """`Queue/DropTail` with `limit_` waiting packets."""

    packets: int = 1000


@dataclass
class Red:
    """`Queue/RED` in packet mode (ns-2 queue/red.cc), thresholds in packets."""

    min_th: float = 5.0  # thresh_
    max_th: float = 15.0  # maxthresh_
    max_p: float = 0.1  # 1 / linterm_
    w_q: float = 0.002  # q_weight_
    gentle: bool = True  # gentle_
    wait: bool = True  # wait_
    mean_packet_size: int = 500  # mean_pktsize_ (the idle-time decay: ptc = rate / (8 * it))
    packets: int = 50  # limit_


@dataclass
class Link:
    name: str
    src: str
    dst: str
    rate_bps: float
    delay_s: float
    queue: DropTail | Red = field(default_factory=DropTail)


@dataclass
class Tfrc:
    """A `tfrc` flow's settings, carried to `Agent/TFRC` and `Agent/TFRCSink` (tcp/tfrc.cc,
    tcp/tfrc-sink.cc); docs/ns2.md has the whole table against RFC 5348."""

    segment_size: int = 1460  # packetSize_: the s of the equation (payload bytes)
    header_bytes: int = 40  # headersize_, added on the wire (useHeaders_ true)
    history_discounting: bool = True  # the sink's discount_ (RFC 5348 §5.5)
    oscillation_reduction: bool = False  # ca_ (RFC 5348 §4.5)

    @property
    def wire_bytes(self) -> int:
        return self.segment_size + self.header_bytes

    @property
    def feedback_bytes(self) -> int:
        """A feedback packet as plait sizes it: the header and 24 bytes of report
        (transport/tfrc/mod.rs FEEDBACK_OPTION_BYTES); the sink's packetSize_."""
        return self.header_bytes + 24


@dataclass
class Flow:
    """One flow: a TCP flow whose `cc` is "reno" or "multcp" (with `n` and `equivalence`),
    or a TFRC flow (`cc` "tfrc", with its `tfrc` settings)."""

    name: str
    cc: str = "reno"
    n: float = 1.0
    equivalence: str = "crowcroft"
    start_s: float = 0.0
    tfrc: Tfrc | None = None

    @property
    def kind(self) -> str:
        return "tcp" if self.tfrc is None else "tfrc"

    @property
    def increase_num(self) -> float:
        """ns-2 `increase_num_`: segments added per window of ACKs (cwnd += it/cwnd per ACK)."""
        if self.cc == "reno":
            return 1.0
        if self.equivalence == "exact":
            return 3.0 * self.n * self.n / (4.0 * self.n - 1.0)
        return self.n

    @property
    def decrease_num(self) -> float:
        """ns-2 `decrease_num_`: the fraction of the window kept at a loss, 1 - 1/(2N)."""
        return 0.5 if self.cc == "reno" else 1.0 - 1.0 / (2.0 * self.n)


@dataclass
class Tcp:
    """The `[tcp]` settings the harness carries to ns-2's `Agent/TCP`."""

    mss: int = 1460  # packetSize_
    header_bytes: int = 40  # tcpip_base_hdr_size_
    initial_window: int = 10  # windowInit_
    sack: bool = True  # Sack1 agents, else Newreno
    delayed_ack: bool = False  # TCPSink/DelAck
    delayed_ack_timeout_s: float = 0.04  # interval_ of the DelAck sink
    min_rto_s: float = 0.2  # minrto_
    max_rto_s: float = 60.0  # maxrto_
    initial_rto_s: float = 1.0  # rtxcur_init_
    receive_buffer: int = 64 * 2**20  # window_ = receive_buffer // mss packets
    tcp_tick_s: float = 0.01  # tcpTick_ (ns-2's clock granularity for RTT/RTO)

    @property
    def window(self) -> int:
        """ns-2 `window_`, the advertised window in packets."""
        return max(1, self.receive_buffer // self.mss)


@dataclass
class Scenario:
    links: list[Link]
    flows: list[Flow]
    duration_s: float
    warmup_s: float = 0.0
    seed: int = 1
    tcp: Tcp = field(default_factory=Tcp)
    src: str = "src"
    dst: str = "dst"


# --------------------------------------------------------------------------------------------
# Reading a plait scenario

_DURATION = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_RATE = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}
_SIZE = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}


def _quantity(value: Any, units: dict[str, float], where: str, fold: bool = False) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµ]+)\s*", str(value))
    unit = m.group(2).lower() if m and fold else (m.group(2) if m else None)
    if not m or unit not in units:
        raise Unsupported(f"{where}: cannot read {value!r}")
    return float(m.group(1)) * units[unit]


def duration(value: Any, where: str = "duration") -> float:
    """A scenario duration in seconds (`"20ms"`, `1.5`)."""
    return _quantity(value, _DURATION, where)


def rate(value: Any, where: str = "rate") -> float:
    """A scenario rate in bit/s (`"20Mbps"`)."""
    return _quantity(value, _RATE, where, fold=True)


def size(value: Any, where: str = "size") -> int:
    """A scenario size in bytes (`"64MiB"`, `1460`)."""
    return int(_quantity(value, _SIZE, where))


def _only(table: dict, allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise Unsupported(f"{where}.{key}: not translated to ns-2 by the harness")


def _queue(spec: dict | None, where: str) -> DropTail | Red:
    if spec is None:
        return DropTail(1000)  # plait's default link queue (docs/scenario.md)
    kind = spec.get("kind", "droptail")
    if kind == "droptail":
        _only(spec, {"kind", "packets"}, where)
        if "packets" not in spec:
            raise Unsupported(f"{where}.packets: the harness needs a limit in packets")
        return DropTail(int(spec["packets"]))
    if kind == "red":
        _only(
            spec,
            {
                "kind",
                "min_th",
                "max_th",
                "max_p",
                "w_q",
                "gentle",
                "wait",
                "mode",
                "mean_packet_size",
                "packets",
            },
            where,
        )
        if spec.get("mode", "packets") != "packets":
            raise Unsupported(f"{where}.mode: only packet mode is translated")
        r = Red()
        for key in ("min_th", "max_th", "max_p", "w_q"):
            if key in spec:
                setattr(r, key, float(spec[key]))
        for key in ("gentle", "wait"):
            if key in spec:
                setattr(r, key, bool(spec[key]))
        if "mean_packet_size" in spec:
            r.mean_packet_size = size(spec["mean_packet_size"], f"{where}.mean_packet_size")
        if "packets" in spec:
            r.packets = int(spec["packets"])
        return r
    raise Unsupported(f"{where}.kind: {kind!r} is not translated (droptail or red)")


def _start(spec: Any, rng: random.Random, where: str) -> float:
    if isinstance(spec, dict):
        if set(spec) != {"uniform"}:
            raise Unsupported(f"{where}: only a fixed time or {{ uniform = [a, b] }}")
        lo, hi = (duration(v, where) for v in spec["uniform"])
        return rng.uniform(lo, hi)
    return duration(spec, where)


def from_plait(
    scenario: str | os.PathLike, overrides: Any = None, starts: dict[str, float] | None = None
) -> Scenario:
    """The ns-2 scenario of a plait scenario file (validated and overridden by plait first).

    `starts` (flow name -> seconds, e.g. the `start_s` column of a plait run's flows table)
    replaces the start times; otherwise a `uniform` start is drawn here from the scenario's
    seed, which does not give plait's draws.
    """
    from plait import _core
    from plait.api import _load, _override_pairs

    text, source, fmt = _load(scenario)
    raw = json.loads(_core.canonical_scenario(text, source, fmt, _override_pairs(overrides)))
    _only(raw, {"simulation", "tcp", "link", "flow"}, "scenario")
    sim = raw["simulation"]
    _only(sim, {"duration", "warmup", "seed", "sample_interval", "trace_drops"}, "simulation")
    tcp_raw = raw.get("tcp", {})
    _only(
        tcp_raw,
        {
            "mss",
            "initial_window",
            "sack",
            "delayed_ack",
            "delayed_ack_timeout",
            "min_rto",
            "max_rto",
            "initial_rto",
            "receive_buffer",
            "header_bytes",
            # ns-2 always reduces from its window (`slowdown` reads `window()`, tcp/tcp.cc):
            # plait's choice of basis has no counterpart to set.
            "ssthresh_basis",
            "exact_timing",
            "send_jitter",
        },
        "tcp",
    )
    # ns-2's agents send the instant they may (`overhead_` 0, tcp/tcp.cc): plait's side must
    # too, or the two differ by plait's send jitter (docs/phase.md).
    exact = bool(tcp_raw.get("exact_timing", False))
    jitter = float(tcp_raw.get("send_jitter", 0.0 if exact else 1.0))
    if jitter != 0.0:
        raise Unsupported(
            "tcp.exact_timing: ns-2's agents send at exact times (overhead_ 0); give "
            "tcp.exact_timing = true (or tcp.send_jitter = 0) so that plait's side does too"
        )
    tcp = Tcp()
    if "mss" in tcp_raw:
        tcp.mss = size(tcp_raw["mss"], "tcp.mss")
    if "header_bytes" in tcp_raw:
        tcp.header_bytes = int(tcp_raw["header_bytes"])
    if "initial_window" in tcp_raw:
        tcp.initial_window = int(tcp_raw["initial_window"])
    for key in ("sack", "delayed_ack"):
        if key in tcp_raw:
            setattr(tcp, key, bool(tcp_raw[key]))
    for key, attr in (
        ("delayed_ack_timeout", "delayed_ack_timeout_s"),
        ("min_rto", "min_rto_s"),
        ("max_rto", "max_rto_s"),
        ("initial_rto", "initial_rto_s"),
    ):
        if key in tcp_raw:
            setattr(tcp, attr, duration(tcp_raw[key], f"tcp.{key}"))
    if "receive_buffer" in tcp_raw:
        tcp.receive_buffer = size(tcp_raw["receive_buffer"], "tcp.receive_buffer")

    links = []
    for i, link in enumerate(raw.get("link", [])):
        where = f"link[{i}]"
        _only(link, {"name", "from", "to", "rate", "delay", "queue"}, where)
        links.append(
            Link(
                name=link.get("name", f"link{i}"),
                src=link["from"],
                dst=link["to"],
                rate_bps=rate(link["rate"], f"{where}.rate"),
                delay_s=duration(link.get("delay", 0), f"{where}.delay"),
                queue=_queue(link.get("queue"), f"{where}.queue"),
            )
        )
    rng = random.Random(int(sim.get("seed", 1)))
    flows: list[Flow] = []
    ends: set[tuple[str, str]] = set()
    for i, flow in enumerate(raw.get("flow", [])):
        where = f"flow[{i}]"
        kind = flow.get("kind", "tcp")
        params: dict[str, Any] = {}
        tfrc = None
        if kind == "tfrc":
            tfrc = _tfrc(flow, where)
            cc = "tfrc"
        elif kind == "tcp":
            _only(flow, {"name", "kind", "cc", "src", "dst", "start", "count"}, where)
            cc = flow.get("cc", "reno")
            if isinstance(cc, dict):
                params = {k: v for k, v in cc.items() if k != "name"}
                cc = cc["name"]
            if cc == "reno":
                if params:
                    raise Unsupported(f"{where}.cc: reno takes no parameters here")
            elif cc == "multcp":
                _only(params, {"n", "equivalence"}, f"{where}.cc")
            else:
                raise Unsupported(f"{where}.cc: {cc!r} is not translated (reno or multcp)")
        else:
            raise Unsupported(f"{where}.kind: {kind!r} is not translated (tcp or tfrc)")
        ends.add((flow["src"], flow["dst"]))
        count = int(flow.get("count", 1))
        base = flow.get("name", f"flow{i}")
        for k in range(count):
            name = f"{base}.{k}" if count > 1 else base
            start = _start(flow.get("start", 0), rng, f"{where}.start")
            if starts is not None and name in starts:
                start = float(starts[name])
            flows.append(
                Flow(
                    name=name,
                    cc=cc,
                    n=float(params.get("n", 1.0)),
                    equivalence=str(params.get("equivalence", "crowcroft")),
                    start_s=start,
                    tfrc=tfrc,
                )
            )
    if len(ends) != 1:
        raise Unsupported("flow: every flow must go from the same src to the same dst")
    src, dst = ends.pop()
    _chain(links, src, dst)
    return Scenario(
        links=links,
        flows=flows,
        duration_s=duration(sim["duration"], "simulation.duration"),
        warmup_s=duration(sim.get("warmup", 0), "simulation.warmup"),
        seed=int(sim.get("seed", 1)),
        tcp=tcp,
        src=src,
        dst=dst,
    )


def _tfrc(flow: dict, where: str) -> Tfrc:
    """The settings of a `tfrc` flow; what ns-2's TFRC cannot do is refused in one line."""
    _only(
        flow,
        {
            "name",
            "kind",
            "src",
            "dst",
            "start",
            "count",
            "segment_size",
            "header_bytes",
            "history_discounting",
            "oscillation_reduction",
            "timer_granularity",
            "reliable",
        },
        where,
    )
    if bool(flow.get("reliable", False)):
        # Agent/TFRC sends a sequence number and nothing is ever resent (tcp/tfrc.cc).
        raise Unsupported(f"{where}.reliable: ns-2's Agent/TFRC has no retransmission")
    if duration(flow.get("timer_granularity", 0), f"{where}.timer_granularity") != 0:
        # Agent/TFRC sends each packet when its send timer fires, s/X after the last one
        # (TfrcAgent::nextpkt): RFC 5348 §4.6's early send by min(t_ipi, t_gran)/2 has no
        # counterpart.
        raise Unsupported(
            f"{where}.timer_granularity: ns-2's Agent/TFRC sends exactly s/X apart; only 0"
        )
    t = Tfrc()
    if "segment_size" in flow:
        t.segment_size = size(flow["segment_size"], f"{where}.segment_size")
    if "header_bytes" in flow:
        t.header_bytes = int(flow["header_bytes"])
    for key in ("history_discounting", "oscillation_reduction"):
        if key in flow:
            setattr(t, key, bool(flow[key]))
    return t


def _chain(links: list[Link], src: str, dst: str) -> None:
    """Checks that the links form one chain from `src` to `dst` (ns-2 routes by hop count)."""
    node, seen = src, 0
    by_src = {link.src: link for link in links}
    while node != dst:
        if node not in by_src or seen > len(links):
            raise Unsupported(f"link: the links must form one chain from {src!r} to {dst!r}")
        node = by_src[node].dst
        seen += 1
    if seen != len(links):
        raise Unsupported(f"link: the links must form one chain from {src!r} to {dst!r}")


# --------------------------------------------------------------------------------------------
# The ns-2 script


def _num(x: float) -> str:
    """A number as Tcl reads it back exactly (repr of a float, integers without '.0')."""
    if float(x).is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(float(x))


#: Where a script with TFRC flows writes its counters (in ns-2's working directory).
COUNTERS_FILE = "counters.txt"

#: Agent/TFRC's clock for its TCP-style RTO estimate (tzero_ in TfrcAgent::update_rtt).
TFRC_TCP_TICK = 0.001


def _tfrc_defaults(w, print_loss: bool) -> None:
    """The ns-2 defaults of Agent/TFRC and Agent/TFRCSink (tcl/lib/ns-default.tcl) set to
    plait's RFC 5348 TFRC (crates/plait-core/src/transport/tfrc); docs/ns2.md has the table
    with what cannot be set."""
    w("# TFRC senders and receivers (tcp/tfrc.cc, tcp/tfrc-sink.cc) set to RFC 5348 as plait.")
    w("Agent/TFRC set df_ 0.9 ;# RFC 5348 §4.3 R = q R + (1 - q) R_sample, q 0.9 (default 0.95)")
    w("Agent/TFRC set slow_increase_ 0 ;# §4.3 slow start: X doubled at once (default 1: spread)")
    w("Agent/TFRC set ssmult_ 2 ;# §4.3 slow start doubles X once per R")
    w("Agent/TFRC set rate_init_option_ 2 ;# §4.2 initial rate W_init/R, W_init of RFC 3390")
    w("Agent/TFRC set bval_ 1 ;# §3.1 b = 1")
    w("Agent/TFRC set maxHeavyRounds_ 0 ;# §4.3 X <= 2 X_recv from the first report")
    w("Agent/TFRC set conservative_ 0")
    w("Agent/TFRC set overhead_ 0 ;# no random send delay")
    w("Agent/TFRC set ecn_ 0")
    w("Agent/TFRC set voip_ 0")
    w("Agent/TFRC set SndrType_ 0 ;# always data to send")
    w("Agent/TFRC set useHeaders_ true ;# headersize_ added on the wire")
    w(f"Agent/TFRC set tcp_tick_ {_num(TFRC_TCP_TICK)} ;# its RTO clock (default 0.1 s)")
    w("Agent/TFRCSink set algo_ 1 ;# §5.4 the average loss interval (WALI)")
    w("Agent/TFRCSink set NumSamples_ -1 ;# §5.4 n = 8 intervals")
    w("Agent/TFRCSink set smooth_ 1 ;# §5.4 weights 1 1 1 1 0.8 0.6 0.4 0.2")
    w("Agent/TFRCSink set minDiscountRatio_ 0.5 ;# §5.5 DF >= 0.5")
    w("Agent/TFRCSink set ShortIntervals_ 0 ;# one loss per interval, as RFC 5348")
    w("Agent/TFRCSink set PreciseLoss_ 0 ;# §5.2 new event: sent > R after (default 1: +new round)")
    w("Agent/TFRCSink set numPkts_ 1 ;# §5.1 NDUPACK 3: see docs/ns2.md (ns-2 loses events)")
    w("Agent/TFRCSink set NumFeedback_ 1 ;# §6.2 feedback once per R")
    w("Agent/TFRCSink set AdjustHistoryAfterSS_ 1 ;# §6.3.1 first interval from X_recv")
    w(f"Agent/TFRCSink set printLoss_ {1 if print_loss else 0} ;# p at each report, to stdout")
    w("")


def _tfrc_flow(w, i: int, f: Flow, src: str, dst: str) -> None:
    """One TFRC flow: Agent/TFRC to Agent/TFRCSink, started at its start time."""
    c = f.tfrc
    assert c is not None
    w(f"# flow {f.name}: tfrc")
    w(f"set tfrc({i}) [new Agent/TFRC]")
    w(f"$tfrc({i}) set fid_ {i + 1}")
    w(f"$tfrc({i}) set packetSize_ {c.segment_size} ;# s (default 1000)")
    w(f"$tfrc({i}) set headersize_ {c.header_bytes} ;# on the wire (default 32)")
    w(f"$tfrc({i}) set fsize_ {c.segment_size} ;# the equation's s before the first report")
    w(f"$tfrc({i}) set InitRate_ {c.segment_size} ;# §4.2 one packet a second (default 300 B/s)")
    w(f"$tfrc({i}) set ca_ {int(c.oscillation_reduction)} ;# §4.5 (default 1)")
    w(f"$ns attach-agent ${src} $tfrc({i})")
    w(f"set sink({i}) [new Agent/TFRCSink]")
    w(f"$sink({i}) set packetSize_ {c.feedback_bytes} ;# a feedback packet (default 40)")
    w(f"$sink({i}) set discount_ {int(c.history_discounting)} ;# §5.5")
    w(f"$ns attach-agent ${dst} $sink({i})")
    w(f"$ns connect $tfrc({i}) $sink({i})")
    w(f'$ns at {_num(f.start_s)} "$tfrc({i}) start"')


def _tfrc_rto(w, s: Scenario, tfrcs: list[int]) -> None:
    """Keeps the TFRC senders' t_RTO at 4R (RFC 5348 §4.3, plait's equation.rs).

    Agent/TFRC puts TCP's RTO in the equation (tzero_ = srtt + 4 rttvar in ticks of tcp_tick_,
    TfrcAgent::update_rtt, tcp/tfrc.cc) but never less than minrto_, which it reads at every
    report. So the script sets minrto_ to 4 R_path, R_path following the sender's R: an EWMA
    with q = 0.9 (df_), one sample per R_path, of the path's round-trip time read from its
    queues (propagation and transmission both ways, plus the bytes waiting at every forward
    queue over its link's rate)."""
    f = s.flows[tfrcs[0]].tfrc
    assert f is not None
    base = sum(
        2 * link.delay_s + (f.wire_bytes + f.feedback_bytes) * 8 / link.rate_bps for link in s.links
    )
    queues = " + ".join(
        f"[$fmon({k}) set size_] * 8.0 / {_num(link.rate_bps)}" for k, link in enumerate(s.links)
    )
    w("# RFC 5348 §4.3 t_RTO = 4R: minrto_ (Agent/TFRC's floor on tzero_) kept at 4 R_path.")
    w("set rpath 0")
    w("proc tfrc_rto {} {")
    w("    global ns fmon tfrc rpath")
    w(f"    set r [expr {{{_num(base)} + {queues}}}]")
    w("    if {$rpath == 0} {set rpath $r} else {set rpath [expr {0.9 * $rpath + 0.1 * $r}]}")
    w(f"    foreach i {{{' '.join(map(str, tfrcs))}}} {{")
    w("        $tfrc($i) set minrto_ [expr {4 * $rpath}]")
    w("    }")
    w("    $ns at [expr {[$ns now] + $rpath}] tfrc_rto")
    w("}")
    w("$ns at 0 tfrc_rto")


def tcl(s: Scenario, sample_interval: float | None = None) -> str:
    """The ns-2 script of a scenario. It prints `C` lines (counters at the end of the warm-up
    and of the run) and, with `sample_interval`, `S` lines (cwnd of every flow, and `ave_`,
    `prob1_`, `curq_` of every RED queue) to standard output."""
    t = s.tcp
    out: list[str] = []
    w = out.append
    w("# Generated by plait.ns2 (python/plait/ns2/__init__.py) for ns-2.35.")
    w("set ns [new Simulator]")
    w("# RED's coin (Random::uniform) and the flows' use of it draw from defaultRNG.")
    w(f"global defaultRNG\n$defaultRNG seed {s.seed % 2147483647 or 1}")
    w("")
    w("# TCP senders (ns-default.tcl defaults that differ from plait's are all set here).")
    w(f"Agent/TCP set packetSize_ {t.mss} ;# payload bytes; +tcpip_base_hdr_size_ on the wire")
    w(f"Agent/TCP set tcpip_base_hdr_size_ {t.header_bytes}")
    w(f"Agent/TCP set window_ {t.window} ;# advertised window in packets (ns-2 default 20)")
    w("Agent/TCP set maxcwnd_ 0 ;# no cap on cwnd_ besides window_")
    w(f"Agent/TCP set windowInit_ {t.initial_window}")
    w("Agent/TCP set windowInitOption_ 1")
    w("Agent/TCP set maxburst_ 0 ;# ns-2 default: no burst limit (as plait)")
    w(f"Agent/TCP set minrto_ {_num(t.min_rto_s)}")
    w(f"Agent/TCP set maxrto_ {_num(t.max_rto_s)}")
    w(f"Agent/TCP set rtxcur_init_ {_num(t.initial_rto_s)}")
    w(f"Agent/TCP set tcpTick_ {_num(t.tcp_tick_s)}")
    w("Agent/TCP set overhead_ 0 ;# no random send delay")
    if t.delayed_ack:
        w(f"Agent/TCPSink/DelAck set interval_ {_num(t.delayed_ack_timeout_s)}")
    if not t.sack:
        # plait's NewReno restarts the retransmission timer on every partial ACK (RFC 6582
        # §4 "Slow-but-Steady", transport/tcp/core.rs); ns-2.35's default newreno_changes1_ 1
        # restarts it on the first only ("Impatient", tcp/tcp-newreno.cc
        # partialnewack_helper), so a long recovery there ends in a timeout.
        w("Agent/TCP/Newreno set newreno_changes1_ 0 ;# Slow-but-Steady, as plait")
        w("Agent/TCP/Newreno set partial_window_deflation_ 1 ;# RFC 6582 step 5, as plait")
        w("Agent/TCP/Newreno set exit_recovery_fix_ 0 ;# full ACK: cwnd = ssthresh, as plait")
        # plait allows a new fast retransmit once the cumulative ACK reaches the recovery
        # point (RFC 6582 §3.2 step 1 compares the ACK field with `recover`); ns-2's default
        # "Careful" variant waits for an ACK one packet beyond it (highest_ack_ > recover_ in
        # NewRenoTcpAgent::dupack_action), so the loss of the first packet sent after the
        # point ends in a timeout there.
        w("Agent/TCP/Newreno set lessCareful_ true ;# FR when the ACK reaches recover_, as plait")
    w("")
    if any(f.tfrc is not None for f in s.flows):
        _tfrc_defaults(w, sum(f.tfrc is not None for f in s.flows) == 1)
    nodes: list[str] = []
    for link in s.links:
        for n in (link.src, link.dst):
            if n not in nodes:
                nodes.append(n)
    node_var = {n: f"n({i})" for i, n in enumerate(nodes)}
    for n in nodes:
        w(f"set {node_var[n]} [$ns node] ;# {n}")
    w("")
    for i, link in enumerate(s.links):
        q = link.queue
        w(f"# link {link.name}: {link.src} -> {link.dst}")
        if isinstance(q, Red):
            w("Queue/RED set bytes_ false ;# packet mode (ns-2.35 default: bytes)")
            w("Queue/RED set queue_in_bytes_ false")
            w(f"Queue/RED set thresh_ {_num(q.min_th)}")
            w(f"Queue/RED set maxthresh_ {_num(q.max_th)}")
            w(f"Queue/RED set q_weight_ {_num(q.w_q)}")
            w(f"Queue/RED set linterm_ {_num(1.0 / q.max_p)} ;# max_p = 1/linterm_")
            w(f"Queue/RED set gentle_ {'true' if q.gentle else 'false'}")
            w(f"Queue/RED set wait_ {'true' if q.wait else 'false'}")
            w(f"Queue/RED set mean_pktsize_ {q.mean_packet_size}")
            w("Queue/RED set setbit_ false ;# drop, no ECN marks")
            w("Queue/RED set adaptive_ 0")
            w("Queue/RED set drop_tail_ true")
            kind = "RED"
        else:
            kind = "DropTail"
        a, b = node_var[link.src], node_var[link.dst]
        w(f"$ns duplex-link ${a} ${b} {_num(link.rate_bps)}b {_num(link.delay_s * 1e3)}ms {kind}")
        w(f"$ns queue-limit ${a} ${b} {q.packets}")
        w(f"$ns queue-limit ${b} ${a} {q.packets}")
        w(f"set q({i}) [[$ns link ${a} ${b}] queue]")
        w(f"set fmon({i}) [$ns makeflowmon Fid]")
        w(f"$ns attach-fmon [$ns link ${a} ${b}] $fmon({i})")
        w("")
    if t.sack:
        agent, sink = "Agent/TCP/Sack1", "Agent/TCPSink/Sack1"
    else:
        agent, sink = "Agent/TCP/Newreno", "Agent/TCPSink"
    if t.delayed_ack:
        sink += "/DelAck"
    src, dst = node_var[s.src], node_var[s.dst]
    for i, f in enumerate(s.flows):
        if f.tfrc is not None:
            _tfrc_flow(w, i, f, src, dst)
            continue
        w(f"# flow {f.name}: {f.cc}" + (f"(n = {_num(f.n)})" if f.cc == "multcp" else ""))
        w(f"set tcp({i}) [new {agent}]")
        w(f"$tcp({i}) set fid_ {i + 1}")
        if f.cc == "multcp":
            w(f"$tcp({i}) set increase_num_ {_num(f.increase_num)} ;# cwnd += it/cwnd per ACK")
            w(f"$tcp({i}) set decrease_num_ {_num(f.decrease_num)} ;# kept at a loss")
            w(f"$tcp({i}) set first_decrease_ 0 ;# the first loss too")
        w(f"$ns attach-agent ${src} $tcp({i})")
        w(f"set sink({i}) [new {sink}]")
        w(f"$ns attach-agent ${dst} $sink({i})")
        w(f"$ns connect $tcp({i}) $sink({i})")
        w(f"set ftp({i}) [new Application/FTP]")
        w(f"$ftp({i}) attach-agent $tcp({i})")
        w(f'$ns at {_num(f.start_s)} "$ftp({i}) start"')
    w("")
    nflows, nlinks = len(s.flows), len(s.links)
    tfrcs = [i for i, f in enumerate(s.flows) if f.tfrc is not None]
    tcps = [i for i, f in enumerate(s.flows) if f.tfrc is None]
    red = [i for i, link in enumerate(s.links) if isinstance(link.queue, Red)]
    # With TFRC flows the Tcl lines go to a file: the sink's loss reports are printed by C
    # (printf in TfrcSinkAgent::print_loss, tcp/tfrc-sink.cc) to standard output, whose
    # buffer is not Tcl's, so lines of both written there could be cut into each other.
    chan = "$out " if tfrcs else ""
    if tfrcs:
        w(f"set out [open {COUNTERS_FILE} w]")
    w("# C <tag> flow <i> ack ndatapack nrexmitpack nrexmit ncwndcuts")
    if tfrcs:
        w("# C <tag> tfrc <i> ndatapack sink_bytes (received, headers included)")
    w("# C <tag> drop <link> <fid> parrivals pdrops")
    w("# C <tag> link <link> parrivals pdrops pdepartures bdepartures")
    w("proc counters {tag} {")
    w("    global tcp fmon" + (" tfrc sink out" if tfrcs else ""))
    if tfrcs:
        w(f"    foreach i {{{' '.join(map(str, tcps))}}} {{")
    else:
        w(f"    for {{set i 0}} {{$i < {nflows}}} {{incr i}} {{")
    w(
        f'        puts {chan}"C $tag flow $i [$tcp($i) set ack_] [$tcp($i) set ndatapack_]'
        ' [$tcp($i) set nrexmitpack_] [$tcp($i) set nrexmit_] [$tcp($i) set ncwndcuts_]"'
    )
    w("    }")
    if tfrcs:
        w(f"    foreach i {{{' '.join(map(str, tfrcs))}}} {{")
        w(f'        puts {chan}"C $tag tfrc $i [$tfrc($i) set ndatapack_] [$sink($i) set bytes_]"')
        w("    }")
    w(f"    for {{set l 0}} {{$l < {nlinks}}} {{incr l}} {{")
    w("        foreach f [$fmon($l) flows] {")
    w(
        f'            puts {chan}"C $tag drop $l [$f set flowid_] [$f set parrivals_]'
        ' [$f set pdrops_]"'
    )
    w("        }")
    w(
        f'        puts {chan}"C $tag link $l [$fmon($l) set parrivals_] [$fmon($l) set pdrops_]'
        ' [$fmon($l) set pdepartures_] [$fmon($l) set bdepartures_]"'
    )
    w("    }")
    if tfrcs:
        w("    flush $out")
    w("}")
    if sample_interval:
        w("# S <time> cwnd <cwnd of each flow...> red <ave_ prob1_ curq_ of each RED queue...>")
        if tfrcs:
            w("# (a TFRC flow's rate_ in bytes/s in place of its cwnd)")
        w("proc sample {} {")
        w("    global ns tcp q" + (" tfrc out" if tfrcs else ""))
        w("    set now [$ns now]")
        w('    set line "S $now cwnd"')
        if tfrcs:
            for i, f in enumerate(s.flows):
                var = f"$tfrc({i}) set rate_" if f.tfrc is not None else f"$tcp({i}) set cwnd_"
                w(f'    append line " [{var}]"')
        else:
            w(f"    for {{set i 0}} {{$i < {nflows}}} {{incr i}} {{")
            w('        append line " [$tcp($i) set cwnd_]"')
            w("    }")
        w('    append line " red"')
        for i in red:
            w(f'    append line " [$q({i}) set ave_] [$q({i}) set prob1_] [$q({i}) set curq_]"')
        w(f"    puts {chan}$line")
        w(f"    $ns at [expr {{$now + {_num(sample_interval)}}}] sample")
        w("}")
        w("$ns at 0 sample")
    if tfrcs:
        _tfrc_rto(w, s, tfrcs)
    w(f'$ns at {_num(s.warmup_s)} "counters warmup"')
    if tfrcs:
        w(f'$ns at {_num(s.duration_s)} "counters end; close $out; exit 0"')
    else:
        w(f'$ns at {_num(s.duration_s)} "counters end; exit 0"')
    w("$ns run")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Running ns-2


def find_ns() -> str | None:
    """The path of the `ns` binary (`PLAIT_NS` or the PATH), or None."""
    explicit = os.environ.get("PLAIT_NS")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("ns")


@dataclass
class Ns2Result:
    """One ns-2 run: `flows` (plait's flows-table columns), `links` (one row per link's
    forward direction), `series` (with a sample interval) and the script that ran."""

    flows: pd.DataFrame
    links: pd.DataFrame
    series: pd.DataFrame | None
    script: str


def run(
    s: Scenario, sample_interval: float | None = None, ns: str | None = None, timeout: float = 600
) -> Ns2Result:
    """Runs the scenario in ns-2 and reads its counters (see the module docs)."""
    binary = ns or find_ns()
    if binary is None:
        raise FileNotFoundError("ns-2 is not installed (apt-get install ns2), or set PLAIT_NS")
    script = tcl(s, sample_interval)
    with tempfile.TemporaryDirectory(prefix="plait-ns2-") as work:
        path = Path(work) / "scenario.tcl"
        path.write_text(script)
        done = subprocess.run(
            [binary, str(path)],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        counters = Path(work) / COUNTERS_FILE
        written = counters.read_text() if counters.is_file() else ""
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"ns exited with {done.returncode}: " + " | ".join(tail))
    return parse(s, written + done.stdout, script, sample_interval is not None)


_LOSS_RATE = re.compile(r"time:\s*(\S+)\s+loss_rate:\s*(\S+)\s*")


def loss_event_rate_mean(reports: list[tuple[float, float]], start: float, end: float) -> float:
    """The time average over [start, end] of the loss event rate a TFRC sink reported:
    `reports` are (time, p) in time order (TfrcSinkAgent::print_loss, one per report once a
    loss was seen; p is 0 before the first), p holding from one report to the next."""
    if end <= start:
        return math.nan
    total, p, t = 0.0, 0.0, start
    for when, value in reports:
        if when > end:
            break
        if when > t:
            total += p * (when - t)
            t = when
        p = value
    total += p * (end - t)
    return total / (end - start)


def parse(s: Scenario, stdout: str, script: str = "", with_series: bool = False) -> Ns2Result:
    """The result tables from the output of the script of :func:`tcl` (with TFRC flows, the
    lines of its counters file followed by ns-2's standard output)."""
    import pandas as pd

    tfrc: dict[str, dict[int, list[float]]] = {"warmup": {}, "end": {}}
    reports: list[tuple[float, float]] = []
    flows: dict[str, dict[int, list[float]]] = {"warmup": {}, "end": {}}
    drops: dict[str, dict[tuple[int, int], list[float]]] = {"warmup": {}, "end": {}}
    links: dict[str, dict[int, list[float]]] = {"warmup": {}, "end": {}}
    samples: list[list[float]] = []
    for line in stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "C":
            tag, what = parts[1], parts[2]
            if what == "flow":
                flows[tag][int(parts[3])] = [float(x) for x in parts[4:]]
            elif what == "drop":
                drops[tag][(int(parts[3]), int(parts[4]))] = [float(x) for x in parts[5:]]
            elif what == "link":
                links[tag][int(parts[3])] = [float(x) for x in parts[4:]]
            elif what == "tfrc":
                tfrc[tag][int(parts[3])] = [float(x) for x in parts[4:]]
        elif parts[0] == "time:" and "sample" not in parts:
            m = _LOSS_RATE.fullmatch(line.strip())
            if m:
                reports.append((float(m.group(1)), float(m.group(2))))
        elif parts[0] == "S":
            samples.append([float(parts[1])] + [float(x) for x in parts[3:] if x != "red"])
    if len(flows["end"]) + len(tfrc["end"]) != len(s.flows):
        raise RuntimeError("ns-2 printed no counters at the end of the run")
    span = s.duration_s - s.warmup_s
    wire = s.tcp.mss + s.tcp.header_bytes
    rows = []
    tfrc_flows = sum(f.tfrc is not None for f in s.flows)
    for i, f in enumerate(s.flows):
        fid = i + 1
        d = sum(
            drops["end"].get((k, fid), [0, 0])[1] - drops["warmup"].get((k, fid), [0, 0])[1]
            for k in range(len(s.links))
        )
        if f.tfrc is not None:
            end, start = tfrc["end"][i], tfrc["warmup"].get(i, [0.0, 0.0])
            sent = end[0] - start[0]
            # The sink counts whole packets, headers included (bytes_ in
            # TfrcSinkAgent::recv); every TFRC packet has the same size.
            received = (end[1] - start[1]) / f.tfrc.wire_bytes
            rows.append(
                {
                    "name": f.name,
                    "kind": "tfrc",
                    "cc": f.cc,
                    "start_s": f.start_s,
                    "goodput_bps": received * f.tfrc.segment_size * 8 / span,
                    "throughput_bps": sent * f.tfrc.wire_bytes * 8 / span,
                    "bytes_delivered": int(round(received * f.tfrc.segment_size)),
                    "packets_sent": int(sent),
                    "retransmissions": 0,
                    "fast_retransmits": 0,
                    # ns-2 does not count the nofeedback timer's expiries.
                    "timeouts": 0,
                    "drops": int(d),
                    # The sink's lines are not told apart: with one TFRC flow only.
                    "loss_event_rate": loss_event_rate_mean(reports, s.warmup_s, s.duration_s)
                    if tfrc_flows == 1
                    else math.nan,
                    "seed": s.seed,
                }
            )
            continue
        end = flows["end"][i]
        # A flow that starts after the warm-up has its counters at their initial values then:
        # ack_ -1 (nothing acknowledged), the others 0.
        start = flows["warmup"].get(i, [-1.0, 0.0, 0.0, 0.0, 0.0])
        ack0 = max(start[0], -1.0)
        acked = max(end[0], -1.0) - ack0
        sent = end[1] - start[1]
        timeouts = end[3] - start[3]
        cuts = end[4] - start[4]
        rows.append(
            {
                "name": f.name,
                "kind": "tcp",
                "cc": f.cc,
                "start_s": f.start_s,
                "goodput_bps": acked * s.tcp.mss * 8 / span,
                "throughput_bps": sent * wire * 8 / span,
                "bytes_delivered": int(acked * s.tcp.mss),
                "packets_sent": int(sent),
                "retransmissions": int(end[2] - start[2]),
                "fast_retransmits": int(cuts - timeouts),
                "timeouts": int(timeouts),
                "drops": int(d),
                "seed": s.seed,
            }
        )
    link_rows = []
    for k, link in enumerate(s.links):
        end = links["end"].get(k, [0, 0, 0, 0])
        start = links["warmup"].get(k, [0, 0, 0, 0])
        arrivals, dropped = end[0] - start[0], end[1] - start[1]
        link_rows.append(
            {
                "name": link.name,
                "direction": "forward",
                "rate_bps": link.rate_bps,
                "utilization": (end[3] - start[3]) * 8 / (link.rate_bps * span),
                "arrivals": int(arrivals),
                "drops": int(dropped),
                "drop_fraction": dropped / arrivals if arrivals else math.nan,
                "seed": s.seed,
            }
        )
    series = None
    if with_series:
        cols = ["time_s"] + [
            f"rate.{f.name}" if f.tfrc is not None else f"cwnd.{f.name}" for f in s.flows
        ]
        for link in s.links:
            if isinstance(link.queue, Red):
                cols += [f"ave.{link.name}", f"prob1.{link.name}", f"curq.{link.name}"]
        series = pd.DataFrame(samples, columns=cols)
    return Ns2Result(pd.DataFrame(rows), pd.DataFrame(link_rows), series, script)


# --------------------------------------------------------------------------------------------
# Both simulators on one scenario


def _bottleneck(s: Scenario) -> int:
    """The index of the slowest link (the first of equals)."""
    return min(range(len(s.links)), key=lambda i: s.links[i].rate_bps)


def _over_reno(flows: pd.DataFrame, cc: str) -> float:
    """Mean goodput of the flows of controller `cc` over the mean goodput of the Reno flows
    (NaN when either is missing or the Reno flows carried nothing)."""
    these = flows.goodput_bps[flows.cc == cc]
    reno = flows.goodput_bps[flows.cc == "reno"]
    if these.empty or reno.empty or reno.mean() == 0:
        return math.nan
    return float(these.mean() / reno.mean())


def _tfrc_loss_event_rates(mine: Any, theirs: pd.DataFrame, s: Scenario) -> tuple[float, float]:
    """The loss event rate of the one TFRC flow over the measurement window: plait's (the
    mean of its samples, with a sample interval) and ns-2's (its sink's reports)."""
    tfrc = [f.name for f in s.flows if f.tfrc is not None]
    if len(tfrc) != 1:
        return math.nan, math.nan
    series = mine.flow_series
    window = series[
        (series.flow == tfrc[0]) & (series.time_s > s.warmup_s) & (series.time_s <= s.duration_s)
    ]
    mean = float(window.loss_event_rate.mean()) if len(window) else math.nan
    return mean, float(theirs.loss_event_rate[theirs.name == tfrc[0]].iloc[0])


def compare(
    scenario: str | os.PathLike,
    seeds: list[int] | tuple[int, ...] = (1,),
    overrides: dict[str, Any] | None = None,
    ns: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs `scenario` in plait and in ns-2 for each seed, ns-2's flows starting when plait's
    did. Returns the flows of both (one row per simulator, seed and flow) and a summary (one
    row per simulator and seed: `ratio`, the mean MulTCP goodput over the mean Reno goodput
    (`tfrc_over_tcp` the same of TFRC, and `tfrc_loss_event_rate` the TFRC flow's p over the
    measurement window, in plait from its series when the scenario has a sample interval);
    `drop_percent` and `utilization` of the bottleneck's forward direction, the slowest link;
    timeouts of the MulTCP and of the Reno flows; `total_goodput_bps`)."""
    import pandas as pd

    import plait

    flows, summary = [], []
    for seed in seeds:
        ov = dict(overrides or {})
        ov["simulation.seed"] = seed
        from_plait(scenario, overrides=ov)  # what ns-2 cannot be given is refused first
        mine = plait.run(scenario, overrides=ov)
        # plait leaves a TFRC flow's cc empty; ns-2's rows call it "tfrc".
        mine.flows.loc[mine.flows.kind == "tfrc", "cc"] = "tfrc"
        starts = dict(zip(mine.flows.name, mine.flows.start_s))
        s = from_plait(scenario, overrides=ov, starts=starts)
        theirs = run(s, ns=ns)
        b = s.links[_bottleneck(s)].name
        links = mine.links
        row = links[(links.name == b) & (links.direction == "forward")].iloc[0]
        offered = row.tx_packets + row.drops
        ns_row = theirs.links[theirs.links.name == b].iloc[0]
        p_plait, p_ns = _tfrc_loss_event_rates(mine, theirs.flows, s)
        for sim, f, drop, util, p in (
            (
                "plait",
                mine.flows,
                row.drops / offered if offered else math.nan,
                row.utilization,
                p_plait,
            ),
            ("ns-2", theirs.flows, ns_row.drop_fraction, ns_row.utilization, p_ns),
        ):
            part = f[FLOW_COLUMNS].copy()
            part.insert(0, "seed", seed)
            part.insert(0, "simulator", sim)
            flows.append(part)
            summary.append(
                {
                    "simulator": sim,
                    "seed": seed,
                    "ratio": _over_reno(f, "multcp"),
                    "drop_percent": 100 * float(drop),
                    "utilization": float(util),
                    "multcp_timeouts": int(f.timeouts[f.cc == "multcp"].sum()),
                    "reno_timeouts": int(f.timeouts[f.cc == "reno"].sum()),
                    "total_goodput_bps": float(f.goodput_bps.sum()),
                    "tfrc_over_tcp": _over_reno(f, "tfrc"),
                    "tfrc_loss_event_rate": p,
                }
            )
    return pd.concat(flows, ignore_index=True), pd.DataFrame(summary)
