"""From a validated scenario to a testbed plan: hosts, link directions, routes and flows, or
a refusal naming the flow or link and the key the kernel testbed cannot run (yet).

The scenario is first validated and overridden by the simulator's own code
(`_core.canonical_scenario`), so a scenario the simulator refuses is refused here with the
same message; what remains is to decide whether the testbed can run it.
"""

from __future__ import annotations

import copy
import hashlib
import heapq
import json
import os
import random
import re
from dataclasses import dataclass, field
from typing import Any

#: Fastest link direction the emulator is trusted with on a 2-vCPU machine (docs/testbed.md,
#: "Measured"): one flow filled a 500 Mb/s link; at 1 Gb/s it kept neither time nor rate.
MAX_RATE_BPS = 500_000_000

#: The droptail queue of a link that sets none (docs/scenario.md, `[[link]]`).
DEFAULT_QUEUE = {"kind": "droptail", "packets": 1000}

#: Keys the testbed runs, per section; any other key is refused, naming it.
SIMULATION_KEYS = {"duration", "warmup", "seed", "sample_interval"}
TCP_KEYS = {"profile", "mss"}
LINK_KEYS = {
    "name", "from", "to", "rate", "delay", "duplex", "queue", "reverse_queue", "loss",
    "reverse_loss",
}  # fmt: skip
QUEUE_KEYS = {"kind", "packets", "bytes", "limit_includes_service"}
#: RED's parameters (plait-core net/queue/red.rs), passed to the emulator, which builds it.
RED_KEYS = {
    "kind", "min_th", "max_th", "max_p", "w_q", "gentle", "wait", "mode", "mean_packet_size",
    "packets", "bytes",
}  # fmt: skip
#: The threshold-dropper's parameters (plait-core net/queue/threshold_dropper.rs).
DROPPER_KEYS = {"kind", "threshold", "hold", "policy"}
#: The threshold-dropper's hold when no flow's data crosses the direction (plait-core
#: sim/build.rs, FALLBACK_HOLD).
FALLBACK_HOLD_NS = 100_000_000
FLOW_KEYS = {
    "name", "kind", "src", "dst", "count", "start", "stop", "bytes", "cc", "route", "mss",
}  # fmt: skip
MPTCP_KEYS = FLOW_KEYS - {"route", "mss"} | {"subflows", "scheduler"}
#: A TCP flow's `mss` (payload bytes per segment) the kernel can give it here: TCP_MAXSEG
#: takes 88 to 32767 bytes (TCP_MIN_MSS, MAX_TCP_WINDOW) less the 12 bytes of timestamps, and
#: the TUN devices' 1500-byte MTU leaves 1500 - 20 - 20 - 12 = 1448.
MIN_MSS = 88 - 12
MAX_MSS = 1448
#: The kernel's own MPTCP scheduler (net/mptcp/protocol.c, `mptcp_subflow_get_send`): the
#: subflow of least smoothed RTT with window space, as plait's `min_rtt`; "linux" names it too.
KERNEL_SCHEDULERS = ("min_rtt", "linux")
#: Most subflows the in-kernel path manager makes (`ip mptcp limits`, MPTCP_PM_ADDR_MAX = 8).
MAX_SUBFLOWS = 8
NODE_KEYS = {"name", "kind"}
SECTIONS = {"simulation", "tcp", "link", "flow", "node", "event", "testbed"}
#: A link taken down or brought up, or given a new loss model (docs/scenario.md, `[[event]]`);
#: flow events are refused.
EVENT_KEYS = {"at", "link", "action"}
LOSS_EVENT_KEYS = {"at", "link", "loss"}
#: Controllers built into the kernels this was written for (tcp_available_congestion_control).
KERNEL_CCS = ("reno", "cubic", "bbr")

_UNITS = {
    "duration": {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9},
    "rate": {
        "bps": 1,
        "kbps": 1e3,
        "Kbps": 1e3,
        "mbps": 1e6,
        "Mbps": 1e6,
        "gbps": 1e9,
        "Gbps": 1e9,
        "tbps": 1e12,
        "Tbps": 1e12,
    },
    "size": {
        "B": 1,
        "KB": 1e3,
        "kB": 1e3,
        "MB": 1e6,
        "GB": 1e9,
        "TB": 1e12,
        "KiB": 2**10,
        "MiB": 2**20,
        "GiB": 2**30,
        "TiB": 2**40,
    },
}


class Refusal(Exception):
    """The testbed cannot run this scenario (or on this machine): one line, exit 2."""


def quantity(text: Any, kind: str) -> int:
    """A duration in ns, a rate in bit/s or a size in bytes, from the scenario's text (already
    validated by the simulator, so only the units it accepts occur)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return int(text)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-zµ]+)\s*", str(text))
    if not m or m.group(2) not in _UNITS[kind]:
        raise Refusal(f"cannot read the {kind} {text!r}")
    return round(float(m.group(1)) * _UNITS[kind][m.group(2)])


@dataclass
class LinkDir:
    """One direction of a scenario link, as the emulator runs it."""

    name: str
    direction: str  # "forward" or "reverse", as in plait run's links table
    src: str
    dst: str
    rate_bps: int
    delay_ns: int
    limit_packets: int | None
    limit_bytes: int | None
    #: The scenario's loss table (plait-core's loss models, built by the emulator), or None.
    loss: dict | None = None
    #: A RED or threshold-dropper queue's table (sizes in bytes, durations in ns; built by the
    #: emulator with its own limit), or None for drop-tail (`limit_packets`/`limit_bytes`).
    queue: dict | None = None
    #: A threshold-dropper's hold when its table has none: the mean propagation RTT of the
    #: flows whose data crosses the direction, as the simulator computes it (plait-core
    #: sim/build.rs); set once the flows are known.
    default_hold_ns: int | None = None


@dataclass
class FlowInstance:
    name: str
    cc: str
    src: str
    dst: str
    start_ns: int
    stop_ns: int
    bytes: int | None
    port: int
    route: list[int]  # link directions from src to dst
    reverse: list[int]  # and back
    #: MPTCP: one (route, reverse, route's node names) per subflow; subflow k runs between the
    #: sender's address k and the receiver's address 0 (`Plan.addr`). Empty for TCP.
    subflows: list[tuple[list[int], list[int], list[str]]] = field(default_factory=list)
    #: The payload bytes per segment the scenario sets (`mss`, the flow's or `[tcp]`'s), which
    #: the sender asks the kernel for (TCP_MAXSEG); None: the kernel's own (1448 here).
    mss: int | None = None


@dataclass
class Plan:
    seed: int
    duration_ns: int
    warmup_ns: int
    sample_ns: int | None
    hosts: list[str]
    links: list[LinkDir]
    flows: list[FlowInstance]
    scenario: dict[str, Any] = field(repr=False, default_factory=dict)
    #: Addresses per host (more than one on the sender of an MPTCP flow: one per subflow).
    n_addrs: dict[str, int] = field(default_factory=dict)
    #: Link directions down (False) or up (True) at a time from the run's start (both
    #: directions of a duplex link, as in the simulator), or given a new loss model (a loss
    #: table; the forward direction only), in time order, at one instant down/up first, then
    #: loss changes, each in file order: (ns, link direction, up or loss table).
    events: list[tuple[int, int, bool | dict]] = field(default_factory=list)
    #: The scenario's `[testbed] sim_only` keys: set in the scenario, left out here.
    sim_only: list[str] = field(default_factory=list)
    #: MPTCP senders' extra addresses (host, k >= 1) as path-manager endpoints: when the
    #: endpoint is added (ns from the run's start; None: at the set-up, the subflow joins at
    #: once) and whether it is a backup one.
    endpoints: dict[tuple[str, int], tuple[int | None, bool]] = field(default_factory=dict)

    def addr(self, host: str, k: int = 0) -> str:
        """The host's address k: 10.99.x.y inside its namespace only (k >= 1: 10.99.200+k.y,
        the extra addresses of an MPTCP sender's subflows)."""
        i = self.hosts.index(host)
        if k:
            return f"10.99.{200 + k}.{i % 250 + 1}"
        return f"10.99.{i // 250}.{i % 250 + 1}"

    def bottleneck_bps(self) -> int:
        """The slowest link direction any flow's data crosses."""
        used = {d for f in self.flows for d in f.route}
        return min((self.links[d].rate_bps for d in used), default=MAX_RATE_BPS)


def _check_keys(table: dict, allowed: set, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise Refusal(f"{where}: `{key}` is not supported by plait testbed yet")


def _red(spec: dict | None, where: str) -> dict | None:
    """A RED or threshold-dropper queue table for the emulator (sizes as bytes, durations as
    ns), or None for drop-tail."""
    if spec is None or spec.get("kind") not in ("red", "threshold_dropper"):
        return None
    if spec["kind"] == "threshold_dropper":
        # The emulator reschedules the packets behind a waiting packet the dropper removes
        # (crates/plait-testbed/src/link.rs, `evict`), so every policy runs.
        _check_keys(spec, DROPPER_KEYS, where)
        table = dict(spec)
        if "hold" in table:
            table["hold"] = quantity(table["hold"], "duration")
        return table
    _check_keys(spec, RED_KEYS, where)
    table = dict(spec)
    for key in ("mean_packet_size", "bytes"):
        if key in table:
            table[key] = quantity(table[key], "size")
    for key in ("min_th", "max_th"):  # a size in byte mode
        if isinstance(table.get(key), str):
            table[key] = quantity(table[key], "size")
    return table


def _queue(spec: dict | None, where: str) -> tuple[int | None, int | None]:
    if _red(spec, where) is not None:
        return None, None  # RED holds its own limit
    q = dict(DEFAULT_QUEUE if spec is None else spec)
    kind = q.get("kind", "droptail")
    if kind != "droptail":
        raise Refusal(
            f"{where}: queue kind `{kind}` is not supported by plait testbed yet "
            "(droptail, red and threshold_dropper are)"
        )
    _check_keys(q, QUEUE_KEYS, where)
    if "bytes" in q:
        return None, quantity(q["bytes"], "size")
    packets = int(q["packets"])
    # The emulator counts waiting packets, as the simulator does by default; a limit that
    # includes the packet in service leaves one place fewer to wait.
    return (packets - 1 if q.get("limit_includes_service") else packets), None


def _least_delay(src: str, dst: str, links: list[LinkDir]) -> list[int] | None:
    """Directions from src to dst of least total delay, then fewest hops, then the links
    declared first (docs/scenario.md, "Without a route")."""
    best: dict[str, tuple] = {src: (0, 0, ())}
    heap = [(0, 0, (), src)]
    while heap:
        delay, hops, path, node = heapq.heappop(heap)
        if node == dst:
            return list(path)
        if best.get(node, (delay, hops, path)) < (delay, hops, path):
            continue
        for i, d in enumerate(links):
            if d.src != node:
                continue
            cand = (delay + d.delay_ns, hops + 1, path + (i,))
            if d.dst not in best or cand < best[d.dst]:
                best[d.dst] = cand
                heapq.heappush(heap, (*cand, d.dst))
    return None


def _explicit(nodes: list[str], links: list[LinkDir], where: str) -> list[int]:
    out = []
    for a, b in zip(nodes, nodes[1:]):
        for i, d in enumerate(links):
            if d.src == a and d.dst == b:
                out.append(i)
                break
        else:
            raise Refusal(f"{where}: no link from {a} to {b}")
    return out


def _without_sim_only(canonical: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The scenario without its `[testbed]` section and without the keys it marks `sim_only`
    (docs/scenario.md, `[testbed]`: options only the simulator has, such as `tcp.host_jitter`,
    which the kernel testbed leaves out instead of refusing the scenario), and those keys."""
    marked = list(canonical.get("testbed", {}).get("sim_only", []))
    out = copy.deepcopy(canonical)
    out.pop("testbed", None)
    for key in marked:
        # Override paths (`tcp.host_jitter`, `flow.bulk.send_buffer`, `link[0].loss`), as the
        # simulator reads them (plait-core scenario/overrides.rs, `find`), which checked them.
        parts = [
            q or (int(i) if i else b)
            for q, i, b in re.findall(r'"([^"]*)"|\[(\d+)\]|([^.\[\]"]+)', key)
        ]
        node: Any = out
        for depth, part in enumerate(parts[:-1]):
            if depth == 1 and parts[0] in ("link", "flow", "node") and isinstance(part, str):
                # `flow.bulk`: the entry of that name.
                node = next((e for e in node if e.get("name") == part), None)
            elif _has(node, part):
                node = node[part]
            else:
                node = None
            if node is None:
                break
        if node is None or not _has(node, parts[-1]):
            raise Refusal(f"[testbed] sim_only: `{key}` is not set in the scenario")
        del node[parts[-1]]
    return out, marked


def _has(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return isinstance(part, str) and part in node
    return isinstance(node, list) and isinstance(part, int) and part < len(node)


def plan_scenario(canonical: dict[str, Any], seed: int | None) -> Plan:
    """The plan for a canonical scenario (`_core.canonical_scenario`), or :class:`Refusal`."""
    canonical, sim_only = _without_sim_only(canonical)
    for section in canonical:
        if section not in SECTIONS:
            raise Refusal(f"[{section}]: not supported by plait testbed yet")
    sim = canonical.get("simulation", {})
    _check_keys(sim, SIMULATION_KEYS, "[simulation]")
    _check_keys(canonical.get("tcp", {}), TCP_KEYS, "[tcp]")
    for node in canonical.get("node", []):
        _check_keys(node, NODE_KEYS, f"node {node.get('name')}")
    seed = int(sim.get("seed", 1)) if seed is None else seed
    duration = quantity(sim["duration"], "duration")
    warmup = quantity(sim.get("warmup", 0), "duration")
    sample = quantity(sim["sample_interval"], "duration") if "sample_interval" in sim else None

    links: list[LinkDir] = []
    for link in canonical["link"]:
        where = f"link {link['name']}"
        _check_keys(link, LINK_KEYS, where)
        rate = quantity(link["rate"], "rate")
        if rate > MAX_RATE_BPS:
            raise Refusal(
                f"{where}: rate {link['rate']} is faster than the emulator keeps time for "
                f"(at most {MAX_RATE_BPS // 10**6} Mbps per link)"
            )
        delay = quantity(link["delay"], "duration")
        packets, nbytes = _queue(link.get("queue"), f"{where}: queue")
        links.append(
            LinkDir(
                link["name"],
                "forward",
                link["from"],
                link["to"],
                rate,
                delay,
                packets,
                nbytes,
                link.get("loss"),
                _red(link.get("queue"), f"{where}: queue"),
            )
        )
        if link.get("duplex", True):
            rq = link.get("reverse_queue", link.get("queue"))
            packets, nbytes = _queue(rq, f"{where}: reverse_queue")
            links.append(
                LinkDir(
                    link["name"],
                    "reverse",
                    link["to"],
                    link["from"],
                    rate,
                    delay,
                    packets,
                    nbytes,
                    link.get("reverse_loss"),
                    _red(rq, f"{where}: reverse_queue"),
                )
            )

    rng = random.Random(f"plait-testbed:{seed}")
    flows: list[FlowInstance] = []
    hosts: list[str] = []
    pair_routes: dict[tuple[str, str], tuple[list[int], str]] = {}
    for flow in canonical["flow"]:
        where = f"flow {flow['name']}"
        mptcp = flow["kind"] == "mptcp"
        _check_keys(flow, MPTCP_KEYS if mptcp else FLOW_KEYS, where)
        if flow["kind"] not in ("tcp", "mptcp"):
            raise Refusal(
                f"{where}: kind `{flow['kind']}` is not supported by plait testbed yet "
                "(tcp and mptcp only)"
            )
        mss = _mss(flow, canonical.get("tcp", {}), mptcp, where)
        if mptcp:
            cc = _mptcp_cc(flow, where)
            subflow_routes = [
                _subflow_route(flow, k, sf, where) for k, sf in enumerate(flow["subflows"])
            ]
            if len(subflow_routes) > MAX_SUBFLOWS:
                raise Refusal(
                    f"{where}: `subflows` has {len(subflow_routes)} entries; the kernel's path "
                    f"manager makes at most {MAX_SUBFLOWS}"
                )
        else:
            cc = flow.get("cc", "reno")
        if cc not in KERNEL_CCS:
            raise Refusal(
                f"{where}: cc `{cc}` does not exist in this kernel "
                f"(available: {', '.join(KERNEL_CCS)})"
            )
        count = int(flow.get("count", 1))
        for k in range(count):
            name = flow["name"] if count == 1 else f"{flow['name']}.{k}"
            start = flow.get("start", 0)
            if isinstance(start, dict):
                a, b = (quantity(x, "duration") for x in start["uniform"])
                start_ns = round(a + rng.random() * (b - a))
            else:
                start_ns = quantity(start, "duration")
            stop_ns = quantity(flow["stop"], "duration") if "stop" in flow else duration
            subflows = []
            if mptcp:
                for nodes in subflow_routes:
                    sf_fwd = _explicit(nodes, links, where)
                    sf_back = _explicit(list(reversed(nodes)), links, where)
                    subflows.append((sf_fwd, sf_back, nodes))
                fwd, back = subflows[0][0], subflows[0][1]
            elif "route" in flow:
                fwd = _explicit(flow["route"], links, where)
                back = _explicit(list(reversed(flow["route"])), links, where)
            else:
                fwd = _least_delay(flow["src"], flow["dst"], links)
                back = _least_delay(flow["dst"], flow["src"], links)
            if fwd is None or back is None:
                raise Refusal(f"{where}: no path between {flow['src']} and {flow['dst']}")
            # Routes are per address pair: (sender's address k, receiver's address 0).
            pairs = [
                (((flow["src"], 0), (flow["dst"], 0)), fwd),
                (((flow["dst"], 0), (flow["src"], 0)), back),
            ]
            for k, (sf_fwd, sf_back, _) in enumerate(subflows):
                pairs.append((((flow["src"], k), (flow["dst"], 0)), sf_fwd))
                pairs.append((((flow["dst"], 0), (flow["src"], k)), sf_back))
            for pair, r in pairs:
                seen = pair_routes.setdefault(pair, (r, flow["name"]))
                if seen[0] != r:
                    raise Refusal(
                        f"{where}: `route` differs from flow {seen[1]}'s between the same hosts "
                        "(one route per host pair in plait testbed yet)"
                    )
            for host in (flow["src"], flow["dst"]):
                if host not in hosts:
                    hosts.append(host)
            flows.append(
                FlowInstance(
                    name=name,
                    cc=cc,
                    src=flow["src"],
                    dst=flow["dst"],
                    start_ns=start_ns,
                    stop_ns=stop_ns,
                    bytes=quantity(flow["bytes"], "size") if "bytes" in flow else None,
                    port=5001 + len(flows),
                    route=fwd,
                    reverse=back,
                    subflows=subflows,
                    mss=mss,
                )
            )
    n_addrs = {h: 1 for h in hosts}
    for f in flows:
        n_addrs[f.src] = max(n_addrs[f.src], len(f.subflows))
    if any(n > 1 for n in n_addrs.values()) and len(hosts) > 250:
        raise Refusal("MPTCP flows: plait testbed gives addresses to at most 250 hosts")
    events = _events(canonical, links)
    _default_holds(links, flows)
    endpoints = _endpoints(canonical, flows)
    return Plan(
        seed,
        duration,
        warmup,
        sample,
        hosts,
        links,
        flows,
        canonical,
        n_addrs,
        events,
        sim_only,
        endpoints,
    )


def _endpoints(
    canonical: dict[str, Any], flows: list[FlowInstance]
) -> dict[tuple[str, int], tuple[int | None, bool]]:
    """The path-manager endpoint of each MPTCP sender's extra address k (subflow k): added at
    the set-up, or, for a subflow with a `start`, at the flow's start plus that (the in-kernel
    path manager then opens the subflow on the connection at once); `backup` gives the
    endpoint the backup flag (`ip mptcp endpoint ... backup`: the subflow's MP_JOIN carries
    RFC 8684's B bit and the kernel's scheduler sends on it only when no other subflow can).
    An endpoint serves every MPTCP connection from its address, so flows from one host must
    agree."""
    specs = {f["name"]: f for f in canonical["flow"]}
    out: dict[tuple[str, int], tuple[int | None, bool]] = {}
    owner: dict[tuple[str, int], str] = {}
    for f in flows:
        spec = specs.get(f.name) or specs[f.name.rsplit(".", 1)[0]]
        for k, sf in enumerate(spec.get("subflows", [])[1:], start=1):
            start = quantity(sf.get("start", 0), "duration")
            value = (f.start_ns + start if start else None, bool(sf.get("backup", False)))
            key = (f.src, k)
            if out.setdefault(key, value) != value:
                raise Refusal(
                    f"flow {f.name}: `subflows[{k}]` starts or backs up differently from flow "
                    f"{owner[key]}'s from the same host (plait testbed has one path-manager "
                    "endpoint per sender address)"
                )
            owner.setdefault(key, f.name)
    return out


def _default_holds(links: list[LinkDir], flows: list[FlowInstance]) -> None:
    """The threshold-dropper's default hold per direction, as the simulator computes it
    (plait-core sim/build.rs): the mean, in whole ns, of the propagation RTT (forward and
    reverse delays) of every flow path (each MPTCP subflow) whose data crosses the direction;
    100 ms if none does."""
    total = [0] * len(links)
    n = [0] * len(links)
    for f in flows:
        for fwd, back in [(sf[0], sf[1]) for sf in f.subflows] or [(f.route, f.reverse)]:
            rtt = sum(links[d].delay_ns for d in fwd + back)
            for d in fwd:
                total[d] += rtt
                n[d] += 1
    for d, link in enumerate(links):
        if link.queue and link.queue.get("kind") == "threshold_dropper":
            link.default_hold_ns = total[d] // n[d] if n[d] else FALLBACK_HOLD_NS


def _events(canonical: dict[str, Any], links: list[LinkDir]) -> list[tuple[int, int, bool | dict]]:
    """The scenario's link events on the link directions, in time order; at one instant the
    links go down or up first, then loss models change, each in file order (docs/scenario.md,
    `[[event]]`, as the simulator applies them). A down/up acts on both directions, a loss
    change on the forward direction (from -> to) only, as in plait-core sim/build.rs."""
    out = []
    for i, event in enumerate(canonical.get("event", [])):
        where = f"event[{i}]"
        if "action" in event:
            _check_keys(event, EVENT_KEYS, where)
        elif "loss" in event:
            _check_keys(event, LOSS_EVENT_KEYS, where)
        else:
            key = next((k for k in event if k not in EVENT_KEYS | LOSS_EVENT_KEYS), "flow")
            raise Refusal(
                f"{where}: `{key}` is not supported by plait testbed yet "
                "(link down/up and loss changes only)"
            )
        at = quantity(event["at"], "duration")
        for j, d in enumerate(links):
            if d.name != event["link"]:
                continue
            if "action" in event:
                out.append((at, 0, j, event["action"] == "up"))
            elif d.direction == "forward":
                out.append((at, 1, j, dict(event["loss"])))
    # Stable: file order within (time, kind).
    out.sort(key=lambda e: (e[0], e[1]))
    return [(at, j, change) for at, _, j, change in out]


def _mss(flow: dict, tcp: dict, mptcp: bool, where: str) -> int | None:
    """The flow's `mss` (its own, else `[tcp]`'s) if the kernel can give it, else a refusal."""
    if "mss" not in flow and "mss" not in tcp:
        return None
    key = "mss" if "mss" in flow else "[tcp] mss"
    if mptcp:
        raise Refusal(
            f"{where}: {key}: not supported for MPTCP flows by plait testbed yet (the kernel's "
            "MPTCP socket sets its subflows' MSS)"
        )
    mss = quantity(flow.get("mss", tcp.get("mss")), "size")
    if not MIN_MSS <= mss <= MAX_MSS:
        raise Refusal(
            f"{where}: {key}: {mss} bytes per segment is outside what the kernel gives here "
            f"({MIN_MSS} to {MAX_MSS}: TCP_MAXSEG's range less the timestamps, and the 1500-byte "
            "MTU)"
        )
    return mss


def _mptcp_cc(flow: dict, where: str) -> str:
    """The single-path controller of an MPTCP flow's `uncoupled:<cc>`; coupled controllers
    (LIA, OLIA, BALIA, ...) do not exist in the Linux kernel."""
    cc = flow.get("cc", "lia")
    if isinstance(cc, dict):
        extra = sorted(set(cc) - {"name"})
        if extra:
            raise Refusal(f"{where}: `cc.{extra[0]}` is not supported by plait testbed yet")
        cc = cc["name"]
    if not str(cc).startswith("uncoupled:"):
        raise Refusal(
            f"{where}: `cc` = `{cc}` is a coupled controller, which does not exist in this "
            'kernel (use "uncoupled:reno" or "uncoupled:cubic")'
        )
    return str(cc).removeprefix("uncoupled:")


def _subflow_route(flow: dict, k: int, subflow: dict, where: str) -> list[str]:
    """Subflow k's route as node names from src to dst, or a refusal: the testbed needs an
    explicit route per subflow (each gets its own address pair, routed by the emulator)."""
    sched = flow.get("scheduler", "min_rtt")
    if isinstance(sched, dict):
        extra = sorted(set(sched) - {"kind"})
        if extra:
            raise Refusal(f"{where}: `scheduler.{extra[0]}` is not supported by plait testbed yet")
        sched = sched.get("kind", "min_rtt")
    if sched not in KERNEL_SCHEDULERS:
        raise Refusal(
            f"{where}: `scheduler` = `{sched}` does not exist in this kernel (its default "
            "scheduler only: min_rtt)"
        )
    for key in subflow:
        if key not in ("route", "start", "backup"):
            raise Refusal(f"{where}: `subflows[{k}].{key}` is not supported by plait testbed yet")
    if k == 0 and (subflow.get("backup") or quantity(subflow.get("start", 0), "duration")):
        key = "backup" if subflow.get("backup") else "start"
        raise Refusal(
            f"{where}: `subflows[0].{key}` is not supported by plait testbed yet (the first "
            "subflow is the connection's own: it starts with the flow, as a regular subflow)"
        )
    if "route" not in subflow:
        raise Refusal(
            f"{where}: `subflows[{k}]` has no `route` (plait testbed needs an explicit route "
            "per subflow)"
        )
    nodes = list(subflow["route"])
    if not nodes or nodes[0] != flow["src"]:
        nodes.insert(0, flow["src"])
    if nodes[-1] != flow["dst"]:
        nodes.append(flow["dst"])
    return nodes


def emulator_config(plan: Plan, prefix: str, workdir: str, cpu: int | None) -> dict[str, Any]:
    """The JSON configuration of `plait-linkemu` (crates/plait-testbed/src/config.rs)."""
    routes = {}
    for f in plan.flows:
        routes[(plan.addr(f.src), plan.addr(f.dst))] = f.route
        routes[(plan.addr(f.dst), plan.addr(f.src))] = f.reverse
        for k, (fwd, back, _) in enumerate(f.subflows):
            routes[(plan.addr(f.src, k), plan.addr(f.dst))] = fwd
            routes[(plan.addr(f.dst), plan.addr(f.src, k))] = back
    return {
        "hosts": [
            {
                "name": h,
                "netns": f"{prefix}{i}",
                "tun": "ptb0",
                "addrs": [plan.addr(h, k) for k in range(plan.n_addrs.get(h, 1))],
            }
            for i, h in enumerate(plan.hosts)
        ],
        "links": [
            {
                "name": f"{d.name}:{d.direction}",
                "rate_bps": d.rate_bps,
                "delay_ns": d.delay_ns,
                **({"limit_packets": d.limit_packets} if d.limit_packets is not None else {}),
                **({"limit_bytes": d.limit_bytes} if d.limit_bytes is not None else {}),
                **({"loss": d.loss, "loss_seed": _seed_of(plan.seed, d)} if d.loss else {}),
                **(
                    {"queue": d.queue, "queue_seed": _seed_of(plan.seed, d, "queue")}
                    if d.queue
                    else {}
                ),
                **({"default_hold_ns": d.default_hold_ns} if d.default_hold_ns is not None else {}),
                # A direction without a loss model that gets one from an event: its stream.
                **(
                    {"loss_seed": _seed_of(plan.seed, d)}
                    if not d.loss and any(isinstance(c, dict) and j == i for _, j, c in plan.events)
                    else {}
                ),
            }
            for i, d in enumerate(plan.links)
        ],
        "routes": [{"src": s, "dst": t, "links": r} for (s, t), r in routes.items()],
        "cpu": cpu,
        "keep_awake": False,
        "spin_ns": int(os.environ.get("PLAIT_TESTBED_SPIN_NS", "100000")),
        "spin_share": float(os.environ.get("PLAIT_TESTBED_SPIN_SHARE", "0.5")),
        "spin_window_ns": int(os.environ.get("PLAIT_TESTBED_SPIN_WINDOW_NS", "1000000")),
        "stats_file": f"{workdir}/emulator.json",
        "ready_file": f"{workdir}/emulator.ready",
        # Times from the run's start; the runner adds `t0_realtime_ns`.
        "events": [
            {"at_ns": at, "link": j, **({"loss": c} if isinstance(c, dict) else {"up": c})}
            for at, j, c in plan.events
        ],
    }


def _seed_of(seed: int, d: LinkDir, stream: str = "") -> int:
    """The seed of a link direction's loss stream (or, `stream = "queue"`, its RED stream):
    the first 8 bytes of SHA-256 of the run's seed, the direction and the stream's name."""
    key = f"{seed}:{d.name}:{d.direction}" + (f":{stream}" if stream else "")
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "little")


def dumps(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=1)
