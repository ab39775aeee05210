"""`plait run FILE`: run a scenario, print its tables, write Parquet and JSON."""

from __future__ import annotations

import argparse
import sys
import time


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a scenario file", description=__doc__)
    p.add_argument("file", help="scenario TOML file")
    p.add_argument("--seed", type=int, help="replace the scenario's seed")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a field before validation (repeatable), e.g. flow[0].cc=cubic",
    )
    p.add_argument("--out", metavar="DIR", help="write flows/links/timeseries .parquet here")
    p.add_argument("--json", metavar="FILE", help="write the summary as JSON here")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=main)


class _LateProgress:
    """A rich progress bar that appears only when a run takes more than `delay` seconds."""

    def __init__(self, label: str, delay: float = 2.0) -> None:
        self.label = label
        self.delay = delay
        self.started = time.perf_counter()
        self.progress = None
        self.task = None

    def __call__(self, now_s: float, duration_s: float) -> None:
        if self.progress is None:
            if time.perf_counter() - self.started < self.delay:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
                TimeRemainingColumn(),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=duration_s)
        self.progress.update(self.task, completed=now_s)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def main(args: argparse.Namespace) -> int:
    from plait.api import check_seed, run
    from plait.cli.tables import print_result

    try:
        check_seed(args.seed)
    except ValueError as e:
        print(f"plait: error: --{e}", file=sys.stderr)
        return 2
    bar = _LateProgress(args.file)
    try:
        result = run(args.file, seed=args.seed, overrides=args.overrides, progress=bar)
    finally:
        bar.close()
    if args.out:
        result.to_parquet(args.out)
    if args.json:
        result.to_json(args.json)
    if not args.quiet:
        print_result(result, title=args.file)
    return 0
