"""`plait phase FILE`: is a result a phase effect? Runs the scenario exactly and with a random
per-packet host delay at both ends of every TCP-family connection (uniform up to ¼, ½, 1 and 2
times the bottleneck's service time of a full-sized packet, over several seeds), and compares
each flow's share of the goodput (docs/phase.md).

A share that moves by more than the tolerance is phase-sensitive: on a drop-tail queue with
exact timing, which flow loses at each overflow can hinge on the packets' timing to within a
fraction of a service time (Floyd and Jacobson, 1992). Report such a result with jitter and
several seeds, or compare on RED. Exits 0 either way; `--json` writes every run's shares.
"""

from __future__ import annotations

import argparse

from plait.cli.options import add_overrides, bounded_int


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction between 0 and 1, got {text!r}")
    return value


def _levels(text: str) -> tuple[float, ...]:
    parts = [p.strip() for p in text.split(",")]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if not values or any(not 0 < v <= 100 for v in values):
        raise argparse.ArgumentTypeError(
            f"expected multiples of the service time in (0, 100], comma-separated, got {text!r}"
        )
    return values


def register(sub: argparse._SubParsersAction) -> None:
    from plait.phase import LEVELS, TOLERANCE

    p = sub.add_parser(
        "phase",
        help="check whether a scenario's shares hinge on event timing",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="scenario file (.toml, or .json)")
    p.add_argument(
        "--seeds",
        type=bounded_int(1, 100),
        default=3,
        help="seeds 1..N for the exact runs and for each jitter",
    )
    p.add_argument(
        "--levels",
        type=_levels,
        default=LEVELS,
        metavar="X,Y,..",
        help="jitters tried, as multiples of the bottleneck's service time",
    )
    p.add_argument(
        "--tolerance",
        type=_fraction,
        default=TOLERANCE,
        help="a share moving by more than this fraction of itself is phase-sensitive",
    )
    p.add_argument(
        "--packet-bytes",
        type=bounded_int(1, 65535),
        default=None,
        help="a full-sized packet on the wire, for the service time (default: measured)",
    )
    add_overrides(p)
    p.add_argument("--json", metavar="FILE", help="write the check as JSON here (- for stdout)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import json

    from rich.console import Console
    from rich.table import Table

    from plait.cli.text import plain, print_warnings, safe
    from plait.output import Outputs
    from plait.phase import NothingToVary, check

    outputs = Outputs()
    json_target = outputs.file("--json", args.json)
    import sys

    def progress(done: int, total: int) -> None:
        # On a terminal only: which run of how many (the runs go one after another).
        end = "\n" if done == total else ""
        print(f"\rplait phase: run {done} of {total}", end=end, file=sys.stderr, flush=True)

    try:
        result = check(
            args.file,
            seeds=args.seeds,
            levels=args.levels,
            tolerance=args.tolerance,
            overrides=args.overrides,
            packet_bytes=args.packet_bytes,
            progress=progress if sys.stderr.isatty() else None,
        )
    except NothingToVary as e:
        raise ValueError(f"{safe(args.file)}: {e}") from None
    print_warnings(result.warnings)
    to_stderr = json_target is not None and json_target.is_stdout
    console = Console(stderr=to_stderr)
    jitters = ", ".join(f"{j * 1e6:.0f}" for j in result.jitters)
    console.print(
        plain(
            f"{args.file}: bottleneck {result.bottleneck}, {result.rate_bps / 1e6:g} Mb/s, "
            f"service time {result.service_time_s * 1e6:.0f} us ({result.packet_bytes} bytes); "
            f"host jitter up to {jitters} us, seeds 1..{len(result.seeds)}"
        )
    )
    table = Table(title=plain("goodput shares"))
    for column in ("flow", "exact", "jittered mean", "min", "max", "moved"):
        table.add_column(column, justify="left" if column == "flow" else "right")
    for f in result.flows:
        moved = f.moved()
        table.add_row(
            plain(f.name),
            f"{f.exact:.3f}",
            f"{f.mean:.3f}",
            f"{f.low:.3f}",
            f"{f.high:.3f}",
            "-" if moved == float("inf") else f"{moved:.0%}",
            style="bold" if f.sensitive(result.tolerance) else "",
        )
    console.print(table)
    if result.seeds_change_nothing:
        console.print(
            plain(
                "the exact runs give the same shares under every seed: seeds alone do not "
                "show the spread"
            )
        )
    for note in result.notes:
        console.print(plain(note))
    console.print(plain(f"{safe(args.file)}: {result.verdict()}"))
    if json_target is not None:
        with outputs.writing() as tx:
            tx.write_text(json_target, json.dumps(result.to_dict(), indent=1) + "\n")
    return 0
