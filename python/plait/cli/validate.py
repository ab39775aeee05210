"""`plait validate FILE`: check a scenario without running it (routes are resolved too).

A scenario that `plait run` would refuse for its memory is refused the same way (exit 2, the
same limit and `--max-memory`), before its flows are made; one that would take long (over ten
minutes at the simulator's usual speed, from the packets its links can carry) is flagged with
a warning.
"""

from __future__ import annotations

import argparse

from plait.cli.options import add_max_memory, add_overrides

#: Runs estimated to take longer than this (seconds of wall time) are flagged.
LONG_RUN_S = 600.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a scenario file", description=__doc__)
    p.add_argument("file", help="scenario file (.toml, or .json)")
    add_overrides(p)
    add_max_memory(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from plait.api import estimate_memory, validate
    from plait.cli.text import plural, print_warnings, safe
    from plait.output import human_bytes

    info = validate(args.file, overrides=args.overrides, max_memory=args.max_memory)
    memory = estimate_memory(args.file, overrides=args.overrides)
    print_warnings(info["warnings"])
    print(
        f"{safe(args.file)}: ok ({plural(info['nodes'], 'node')}, "
        f"{plural(info['links'], 'link')}, {plural(info['flows'], 'flow')}, "
        f"{info['duration_s']:g} s, warm-up {info['warmup_s']:g} s, seed {info['seed']}; "
        f"about {human_bytes(memory['state_bytes'])} of memory)"
    )
    if memory["trace_note"]:
        # The traces grow with what the run drops and decides, bounded here from the rates;
        # a run stops (exit 2, nothing written) if they pass the memory limit.
        print(
            f"{safe(args.file)}: traces: {memory['trace_note']}; a run stops if they pass "
            "the memory limit (--max-memory)"
        )
    if memory["seconds"] > LONG_RUN_S:
        print_warnings([long_run(safe(args.file), memory["packets"], memory["seconds"])])
    return 0


def long_run(file: str, packets: int, seconds: float) -> str:
    """`f.toml: this run may take about 35 min: ...`, from the estimated packet transmissions
    and the wall time they take at the simulator's usual speed."""
    from plait._core import PACKETS_PER_SECOND

    if seconds < 3600:
        took = f"{seconds / 60:.0f} min"
    elif seconds < 2 * 86400:
        took = f"{seconds / 3600:.1f} h"
    else:
        took = f"{seconds / 86400:.0f} days"
    return (
        f"{file}: this run may take about {took}: about {packets:.2g} packet transmissions "
        f"over the links (data and feedback at max-min fair shares of the link rates), at "
        f"~{PACKETS_PER_SECOND:.2g} per second"
    )
