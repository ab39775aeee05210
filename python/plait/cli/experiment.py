"""`plait experiment NAME`: run one of the papers' experiments and print its table."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("experiment", help="reproduce a paper's experiment", description=__doc__)
    p.add_argument("name", choices=["parallel-tcp"])
    p.add_argument("--n", default="1..10", help="numbers of connections: 1..10 or 1,2,5")
    p.add_argument("--duration", type=float, default=1000.0, help="simulated seconds per run")
    p.add_argument("--warmup", type=float, default=200.0, help="seconds discarded per run")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=None, help="runs in parallel (default: cores)")
    p.add_argument("--out", default=None, help="output folder (default: the experiment's)")
    p.add_argument(
        "--fresh",
        action="store_true",
        help="ignore runs saved by an earlier (possibly interrupted) sweep in OUT/runs",
    )
    p.set_defaults(func=main)


def parse_range(text: str) -> list[int]:
    """`1..10` -> [1, ..., 10]; `1,2,5` -> [1, 2, 5]."""
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split("..", 1))
            values = list(range(lo, hi + 1))
        else:
            values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(
            f"plait: error: --n {text!r}: expected a range like 1..10 or 1,2,5"
        ) from None
    if not values or min(values) < 1:
        raise SystemExit(f"plait: error: --n {text!r}: expected positive integers")
    return values


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from plait.experiments import parallel_tcp as exp

    ns = parse_range(args.n)
    if args.duration <= args.warmup or args.warmup < 0:
        raise SystemExit("plait: error: --duration must exceed --warmup (both in seconds, >= 0)")
    console = Console()
    out = Path(args.out) if args.out else exp.EXPERIMENT_DIR / "results"
    cache = out / "runs"
    if args.fresh and cache.exists():
        import shutil

        shutil.rmtree(cache)
    total = len(exp.queues()) * len(ns)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task(f"parallel-tcp: {total} runs", total=total)
        rows = exp.sweep(
            ns,
            duration=args.duration,
            warmup=args.warmup,
            seed=args.seed,
            jobs=args.jobs,
            progress=lambda: bar.advance(task),
            cache_dir=cache,
        )
    paths = exp.write_outputs(rows, out)
    wide = exp.table(rows)
    table = Table(
        title=f"Bottleneck utilisation vs N ({args.duration:g} s runs, first {args.warmup:g} s "
        f"discarded, seed {args.seed})"
    )
    short = {q.label: q.short for q in exp.queues()}
    table.add_column("N", justify="right")
    for col in wide.columns:
        table.add_column(short.get(col, "Thm 1"), justify="right")
    for n, row in wide.iterrows():
        table.add_row(str(n), *(f"{v:.3f}" for v in row))
    console.print(table)
    console.print(
        "Thm 1 = 1 - 1/(1 + 3N); TD = threshold-dropper (threshold 3, hold one mean RTT), "
        "RI = rate-independent, LR = largest-rate; RED-b and DT-b (DropTail): buffer of b packets"
    )
    console.print(f"written: {', '.join(str(p) for p in paths.values())}")
    return 0
