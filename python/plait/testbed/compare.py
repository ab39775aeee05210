"""`plait testbed run --compare`: the kernel's runs beside the simulation of the same scenario,
overrides and seeds (docs/testbed.md, "Seeds"; the comparison is plait.comparison's).

A seed means on the testbed what it means in the simulator wherever the kernel lets it: the
start times drawn from a flow's `start = { uniform = [a, b] }` are the simulator's own draws for
that seed (read from the simulation's `flows.start_s`), so both sides start the same flows at the
same instants. What the kernel decides itself (its initial sequence numbers, its timers, which
packets a loss model hits) is not reproducible from a seed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from plait.comparison import Comparison, Side, _records_frame, compare

if TYPE_CHECKING:
    import pandas as pd

    from plait.testbed.plan import Plan
    from plait.testbed.runner import TestbedResult

#: The comparison files `--compare --out DIR` writes beside the testbed's tables.
FILES = ("comparison.html", "comparison.json")


def simulated_starts(flows: pd.DataFrame) -> dict[str, int]:
    """Each flow instance's start (ns) as the simulator drew it, from a `flows` table."""
    return {str(name): round(float(s) * 1e9) for name, s in zip(flows["name"], flows["start_s"])}


def with_starts(plan: Plan, starts: dict[str, int]) -> Plan:
    """`plan` whose flows start when `starts` says (the simulator's draws for the same seed);
    a flow the simulation does not have keeps its own start."""
    flows = [dataclasses.replace(f, start_ns=starts.get(f.name, f.start_ns)) for f in plan.flows]
    return dataclasses.replace(plan, flows=flows)


def _concat(frames: Sequence[Any]) -> Any:
    import pandas as pd

    frames = [f for f in frames if f is not None and len(f.columns)]
    return pd.concat(frames, ignore_index=True) if frames else None


def testbed_side(plans: Sequence[Plan], results: Sequence[TestbedResult], label: str) -> Side:
    """The kernel's runs (one per seed) as a comparison side; a column the kernel cannot give
    (null) is a column of NaN, so its rows read `n/a`, as from a JSON summary."""
    import pandas as pd

    flows = _concat([_records_frame(r.flows).assign(seed=p.seed) for p, r in zip(plans, results)])
    links = _concat([_records_frame(r.links).assign(seed=p.seed) for p, r in zip(plans, results)])
    series = _concat(
        [pd.DataFrame(r.flow_series).assign(seed=p.seed) for p, r in zip(plans, results)]
    )
    plan = plans[0]
    return Side(
        label, "testbed", flows, links, series, plan.duration_ns / 1e9, plan.warmup_ns / 1e9
    )


def simulation_side(results: Sequence[Any], label: str) -> Side:
    """Simulations (:class:`plait.Result`, one per seed) as a comparison side."""
    flows = _concat([r.flows.assign(seed=r.seed) for r in results])
    links = _concat([r.links.assign(seed=r.seed) for r in results])
    series = _concat(
        [r.flow_series.assign(seed=r.seed) for r in results if r.flow_series is not None]
    )
    return Side(
        label, "simulation", flows, links, series, results[0].duration_s, results[0].warmup_s
    )


def kernel_vs_simulation(
    plans: Sequence[Plan], kernel: Sequence[TestbedResult], simulations: Sequence[Any]
) -> Comparison:
    """The comparison, the kernel as A and the simulation as B."""
    release = kernel[0].summary.get("testbed", {}).get("kernel", "")
    a = testbed_side(plans, kernel, f"testbed (kernel {release})" if release else "testbed")
    b = simulation_side(simulations, "simulation")
    return compare(a, b)
