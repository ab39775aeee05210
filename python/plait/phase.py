"""Is a result a phase effect? (`plait phase FILE`, docs/phase.md)

On a drop-tail queue the flow whose packet arrives just after a departure finds room and the one
arriving just before it is dropped, so when every end's timing is exact, which flow loses at
each overflow can be decided by the packets' relative timing to within a fraction of one
packet's service time (S. Floyd and V. Jacobson, "On traffic phase effects in packet-switched
gateways", Internetworking: Research and Experience 3(3), 1992). A share measured that way may
be an artefact of the set-up (a packet 20 bytes longer, a link 1 µs longer) rather than of the
congestion controllers, and seeds change nothing when nothing else is random.

The exact runs are the scenario with exact timing (`tcp.exact_timing`: no send jitter, no host
jitter, no stalls, unless a flow sets them itself). The check runs the scenario again with a
random per-packet host delay at both ends of every TCP-family connection (`tcp.host_jitter`:
uniform in [0, J], a connection's packets keeping their order), for J from a quarter of the
bottleneck's service time of a full-sized packet to twice it, over several seeds, and compares
each flow's share of the total goodput with the exact run's. A share that moves by more than the
tolerance (relative to the exact share) in any of these runs is phase-sensitive: report it with
its jitter and seeds, or on RED, where the drop decision is random and the shares do not hinge
on timing.

The bottleneck is the busiest link of the exact run (highest utilisation, then the slowest), its
service time that of a full-sized packet at its rate: the largest mean size on the wire of a
flow's data packets in the exact run (1500 bytes if no flow sent any). Flows without host timing
(the TFRC family, datagram sources) keep their exact timing; a flow that sets its own
`host_jitter` keeps it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

#: Jitters tried, as multiples of the bottleneck's service time of a full-sized packet.
LEVELS = (0.25, 0.5, 1.0, 2.0)
#: A share that moves by more than this (relative) is phase-sensitive.
TOLERANCE = 0.10
#: A full-sized packet on the wire when no flow sent a data packet (1460 + 40 header bytes).
DEFAULT_PACKET_BYTES = 1500


@dataclass
class FlowPhase:
    """One flow's share of the total goodput, exact and under jitter."""

    name: str
    #: The share in the exact run (the scenario's own timing, its seed).
    exact: float
    #: Shares under jitter: one per (level, seed), in the order of :attr:`PhaseCheck.runs`.
    jittered: list[float]

    @property
    def low(self) -> float:
        return min(self.jittered)

    @property
    def high(self) -> float:
        return max(self.jittered)

    @property
    def mean(self) -> float:
        return sum(self.jittered) / len(self.jittered)

    def moved(self) -> float:
        """How far (relative to the exact share) the jittered shares reach from it."""
        if self.exact <= 0:
            return math.inf if self.high > 0 else 0.0
        return max(abs(self.low - self.exact), abs(self.high - self.exact)) / self.exact

    def sensitive(self, tolerance: float = TOLERANCE) -> bool:
        return self.moved() > tolerance


@dataclass
class PhaseCheck:
    """The result of :func:`check`."""

    #: The bottleneck: its name, rate and service time of a full-sized packet (seconds).
    bottleneck: str
    rate_bps: float
    service_time_s: float
    packet_bytes: int
    #: The jitters tried (seconds) and the seeds, and the runs as (jitter, seed) pairs.
    jitters: list[float]
    seeds: list[int]
    runs: list[tuple[float, int]]
    flows: list[FlowPhase]
    #: The exact runs under every seed gave the same shares (nothing else is random).
    seeds_change_nothing: bool
    tolerance: float = TOLERANCE
    notes: list[str] = field(default_factory=list)
    #: The scenario's warnings (`plait validate`'s), from the exact run.
    warnings: list[str] = field(default_factory=list)

    @property
    def sensitive(self) -> bool:
        return any(f.sensitive(self.tolerance) for f in self.flows)

    def verdict(self) -> str:
        """One line: whether the shares hinge on timing, with the largest move."""
        worst = max(self.flows, key=lambda f: f.moved())
        move = f"{worst.moved():.0%}" if math.isfinite(worst.moved()) else "from nothing"
        if self.sensitive:
            return (
                f"phase-sensitive: {worst.name}'s share moves by {move} under host jitter "
                f"(tolerance {self.tolerance:.0%}); report it with jitter and several seeds, "
                "or compare on RED"
            )
        return (
            f"not phase-sensitive: every share stays within {self.tolerance:.0%} of the exact "
            f"run's under host jitter (largest move {move}, {worst.name})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "bottleneck": self.bottleneck,
            "rate_bps": self.rate_bps,
            "service_time_s": self.service_time_s,
            "packet_bytes": self.packet_bytes,
            "jitters_s": self.jitters,
            "seeds": self.seeds,
            "tolerance": self.tolerance,
            "seeds_change_nothing": self.seeds_change_nothing,
            "sensitive": self.sensitive,
            "verdict": self.verdict(),
            "notes": self.notes,
            "flows": [
                {
                    "name": f.name,
                    "exact_share": f.exact,
                    "jittered_mean": f.mean,
                    "jittered_min": f.low,
                    "jittered_max": f.high,
                    "moved": f.moved() if math.isfinite(f.moved()) else None,
                    "sensitive": f.sensitive(self.tolerance),
                    "shares": [
                        {"jitter_s": j, "seed": s, "share": x}
                        for (j, s), x in zip(self.runs, f.jittered)
                    ],
                }
                for f in self.flows
            ],
        }


class NothingToVary(ValueError):
    """No flow of the scenario takes a host delay: the check cannot vary anything."""


def host_timed_kinds() -> set[str]:
    """The flow kinds whose connections take a host delay (`host_jitter` in their `[tcp]`
    section), from the protocols' declarations."""
    import json

    from plait import _core

    return {
        entry["name"]
        for entry in json.loads(_core.catalog_json())
        if entry.get("category") == "source"
        and any(p["name"] == "host_jitter" and p.get("section") for p in entry["params"])
    }


def _run(scenario: Any, seed: int | None, overrides: Any) -> tuple[Any, list[str]]:
    """One run's rows (no pandas) and the scenario's warnings."""
    from plait.api import RunRows, _run_core

    raw, wall_seconds = _run_core(scenario, seed, overrides)
    return RunRows._from_core(raw, wall_seconds), list(raw.get("warnings", ()))


def _shares(result: Any) -> dict[str, float]:
    """Each transport flow's share of the total goodput (the application rows of an aggregate
    left out: the aggregate's own row counts)."""
    rows = [r for r in result.flows if not r.get("aggregate_name")]
    total = sum(r["goodput_bps"] for r in rows)
    if total <= 0:
        return {r["name"]: 0.0 for r in rows}
    return {r["name"]: r["goodput_bps"] / total for r in rows}


def _bottleneck(result: Any) -> tuple[str, float]:
    """The busiest link direction of a run: highest utilisation, then the slowest."""
    links = [row for row in result.links if row["rate_bps"] > 0]
    if not links:
        raise ValueError("the scenario has no link to find a bottleneck on")
    busiest = max(links, key=lambda r: (round(r["utilization"], 3), -r["rate_bps"]))
    label = f"{busiest['name']} ({busiest['direction']})"
    return label, float(busiest["rate_bps"])


def _packet_bytes(result: Any) -> int | None:
    """The largest mean size on the wire of a flow's data packets (its throughput over the
    measurement window per packet sent), or None if no flow sent any."""
    window = result.duration_s - result.warmup_s
    sizes = [
        r["throughput_bps"] * window / 8 / r["packets_sent"]
        for r in result.flows
        if not r.get("aggregate_name")
        and r["packets_sent"] > 0
        and math.isfinite(r["throughput_bps"])
    ]
    return round(max(sizes)) if sizes else None


def check(
    scenario: Any,
    seeds: int = 3,
    levels: tuple[float, ...] = LEVELS,
    tolerance: float = TOLERANCE,
    overrides: Any = None,
    packet_bytes: int | None = None,
    progress: Any = None,
) -> PhaseCheck:
    """Runs `scenario` exactly (its own seed and the seeds 1..`seeds`) and under host jitter of
    `levels` times the bottleneck's service time (seeds 1..`seeds` each), and compares every
    flow's share of the goodput (module doc). `packet_bytes` fixes the full-sized packet (by
    default measured). `progress(done, total)` is called after each run. Raises ValueError for
    a bad argument before anything runs, and the scenario's own errors as `plait.run` does."""
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 100:
        raise ValueError(f"seeds: expected a whole number from 1 to 100, got {seeds!r}")
    if not levels or any(not (isinstance(x, (int, float)) and 0 < x <= 100) for x in levels):
        raise ValueError(
            f"levels: expected multiples of the service time in (0, 100], got {levels!r}"
        )
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < 1):
        raise ValueError(f"tolerance: expected a fraction in (0, 1), got {tolerance!r}")
    if packet_bytes is not None and not (
        isinstance(packet_bytes, int) and 0 < packet_bytes <= 65535
    ):
        raise ValueError(
            f"packet_bytes: expected a size in bytes from 1 to 65535, got {packet_bytes!r}"
        )

    base = dict(overrides or {}) if isinstance(overrides, dict) else overrides
    seed_list = list(range(1, seeds + 1))
    total = 1 + len(seed_list) * (1 + len(levels))
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    def with_settings(settings: dict[str, str]) -> Any:
        # Exact timing under every run: the jitter the check adds is then the only one.
        settings = {"tcp.exact_timing": "true", **settings}
        if base is None:
            return [f"{k}={v}" for k, v in settings.items()]
        if isinstance(base, dict):
            return {**base, **settings}
        return [*base, *(f"{k}={v}" for k, v in settings.items())]

    def with_jitter(jitter_s: float) -> Any:
        return with_settings({"tcp.host_jitter": f"{jitter_s * 1e9:.0f}ns"})

    exact_overrides = with_settings({})
    exact_run, warnings = _run(scenario, None, exact_overrides)
    step()
    timed = host_timed_kinds()
    kinds = {r["name"]: r["kind"] for r in exact_run.flows if not r.get("aggregate_name")}
    untimed = [name for name, kind in kinds.items() if kind not in timed]
    if len(untimed) == len(kinds):
        raise NothingToVary(
            f"no flow takes a host delay (host_jitter, kinds {', '.join(sorted(timed))}): "
            "the check has nothing to vary"
        )
    exact = _shares(exact_run)
    bottleneck, rate = _bottleneck(exact_run)
    measured = _packet_bytes(exact_run)
    size = packet_bytes or measured or DEFAULT_PACKET_BYTES
    service = size * 8 / rate
    exact_by_seed = []
    for s in seed_list:
        exact_by_seed.append(_shares(_run(scenario, s, exact_overrides)[0]))
        step()
    same = all(
        all(math.isclose(x[k], exact_by_seed[0][k], rel_tol=1e-12) for k in x)
        for x in exact_by_seed
    )
    jitters = [level * service for level in levels]
    runs: list[tuple[float, int]] = []
    jittered: dict[str, list[float]] = {name: [] for name in exact}
    for j in jitters:
        for s in seed_list:
            shares = _shares(_run(scenario, s, with_jitter(j))[0])
            runs.append((j, s))
            for name in jittered:
                jittered[name].append(shares.get(name, 0.0))
            step()
    notes = []
    if untimed:
        notes.append(
            f"{', '.join(untimed)} keep exact timing (kinds without host_jitter); their shares "
            "move only through the others'"
        )
    if packet_bytes is None and measured is None:
        notes.append(f"no flow sent a data packet: the service time is that of {size} bytes")
    return PhaseCheck(
        bottleneck=bottleneck,
        rate_bps=rate,
        service_time_s=service,
        packet_bytes=size,
        jitters=jitters,
        seeds=seed_list,
        runs=runs,
        flows=[FlowPhase(name, exact[name], jittered[name]) for name in exact],
        seeds_change_nothing=same,
        tolerance=tolerance,
        notes=notes,
        warnings=warnings,
    )
