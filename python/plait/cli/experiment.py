"""`plait experiment NAME`: run one of the papers' experiments and print its table."""

from __future__ import annotations

import argparse

from plait.cli.options import add_seed, bounded_float, bounded_int

#: Largest number of connections in one run, and of values of N in one sweep.
MAX_N = 10_000
MAX_VALUES = 1_000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("experiment", help="reproduce a paper's experiment", description=__doc__)
    p.add_argument(
        "name",
        choices=["parallel-tcp"],
        help="parallel-tcp: Altman et al., utilisation against the number of connections",
    )
    p.add_argument(
        "--n", default="1..10", help="numbers of connections: 1..10 or 1,2,5 (default: 1..10)"
    )
    p.add_argument(
        "--duration",
        type=bounded_float(0.0, 1e7, low_open=True),
        default=1000.0,
        help="simulated seconds per run (default: 1000)",
    )
    p.add_argument(
        "--warmup",
        type=bounded_float(0.0, 1e7),
        default=200.0,
        help="seconds discarded at the start of each run (default: 200)",
    )
    add_seed(p, "random seed of every run (default: 1)", default=1)
    p.add_argument(
        "--jobs",
        type=bounded_int(1, 1024),
        default=None,
        help="worker processes of the local Dask cluster (default: the number of cores)",
    )
    p.add_argument(
        "--out", default=None, help="output folder (default: the experiment's results/ folder)"
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="remove the runs stored by an earlier (possibly interrupted) sweep in OUT/runs",
    )
    p.set_defaults(func=main)


def parse_range(text: str) -> list[int]:
    """`1..10` -> [1, ..., 10]; `1,2,5` -> [1, 2, 5]."""
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split("..", 1))
            if hi - lo >= MAX_VALUES:
                raise ValueError
            values = list(range(lo, hi + 1))
        else:
            values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(
            f"--n {text!r}: expected a range like 1..10 or a list like 1,2,5 "
            f"(at most {MAX_VALUES} values)"
        ) from None
    if not values or min(values) < 1 or max(values) > MAX_N or len(values) > MAX_VALUES:
        raise ValueError(
            f"--n {text!r}: expected between 1 and {MAX_VALUES} whole numbers in [1, {MAX_N}]"
        )
    return values


class BarProgress:
    """Advances a rich progress task by one for every run that ends (a sweep's progress)."""

    def __init__(self, bar, task) -> None:
        self.bar = bar
        self.task = task

    def start(self, total: int, reused: int, cluster) -> None:
        self.bar.update(self.task, total=total, completed=reused)

    def advance(self, ok: bool) -> None:
        self.bar.advance(self.task)

    def stop(self) -> None:
        pass


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from plait.cli.text import plain
    from plait.experiments import parallel_tcp as exp
    from plait.output import Outputs

    ns = parse_range(args.n)
    if args.duration <= args.warmup:
        raise ValueError(
            f"--duration {args.duration:g} must exceed --warmup {args.warmup:g} (seconds)"
        )
    console = Console()
    outputs = Outputs()
    folder = outputs.folder(
        "--out",
        exp.EXPERIMENT_DIR / "results" if args.out is None else args.out,
        tuple(exp.OUTPUT_FILES.values()),
    )
    total = len(exp.queues()) * len(ns)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task(f"parallel-tcp: {total} runs", total=total)
        rows = exp.sweep(
            ns,
            duration=args.duration,
            warmup=args.warmup,
            seeds=[args.seed],
            out=folder.path / "runs",
            fresh=args.fresh,
            progress=BarProgress(bar, task),
            workers=args.jobs,
        )
    paths = exp.write_outputs(rows, folder)
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
    console.print(plain(f"written: {', '.join(str(p) for p in paths.values())}"))
    return 0
