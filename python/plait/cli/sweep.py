"""`plait sweep FILE`: run a scenario over the grid and seeds of its [sweep] table.

Runs go to a local Dask cluster (one single-threaded worker process per core), to an existing
Dask scheduler (--scheduler tcp://host:8786), or to workers started as SLURM or PBS jobs
(--slurm, --pbs; adaptive, through dask-jobqueue). Each run's tables are stored in OUT as one
Parquet file per run, keyed by a hash of the resolved scenario, the seed and plait's version:
a run already stored is not run again, so an interrupted sweep resumes where it stopped. A
failed run is recorded in OUT/failures/ and the sweep goes on.

Exit codes: 0 every run stored, 1 some runs failed, 2 a mistake in the input (nothing run),
130 interrupted (finished runs kept).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plait.cli.options import add_max_memory, bounded_int

EXIT_FAILED_RUNS = 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep", help="run a scenario over a grid of parameters and seeds", description=__doc__
    )
    p.add_argument("file", help="scenario file with a [sweep] table (.toml or .json)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="results folder (default: results/<file name without extension>)",
    )
    p.add_argument("--fresh", action="store_true", help="remove stored runs first and start over")
    p.add_argument(
        "--seeds",
        type=_seeds,
        metavar="N|LIST",
        help="replace sweep.seeds: a count (10 for seeds 1..10) or a list (1,7,9)",
    )
    p.add_argument(
        "--tables",
        type=_tables,
        metavar="LIST",
        help="replace sweep.tables: result tables to store, e.g. flows,links",
    )
    where = p.add_argument_group("where runs go (default: this machine, one worker per core)")
    where.add_argument(
        "--workers",
        type=bounded_int(1, 4096),
        metavar="N",
        help="worker processes of the local cluster (default: the number of cores)",
    )
    where.add_argument(
        "--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. tcp://host:8786"
    )
    system = where.add_mutually_exclusive_group()
    system.add_argument("--slurm", action="store_true", help="start workers as SLURM jobs")
    system.add_argument("--pbs", action="store_true", help="start workers as PBS jobs")
    where.add_argument(
        "--max-workers",
        type=bounded_int(1, 100_000),
        default=10,
        metavar="N",
        help="most jobs (one worker each) with --slurm/--pbs",
    )
    where.add_argument("--queue", help="job queue or partition (--slurm/--pbs)")
    where.add_argument("--account", help="account to charge (--slurm/--pbs)")
    where.add_argument("--walltime", help="job time limit, e.g. 01:00:00 (--slurm/--pbs)")
    where.add_argument(
        "--job-memory", default="2GiB", metavar="SIZE", help="memory per job (--slurm/--pbs)"
    )
    where.add_argument(
        "--job-directive",
        action="append",
        default=[],
        metavar="TEXT",
        help="extra line for the job script header, e.g. --job-directive=--qos=short (repeatable)",
    )
    p.add_argument(
        "--batch",
        type=bounded_int(1, 100_000),
        metavar="N",
        help="runs per task (default: sized so a task takes about half a second)",
    )
    add_max_memory(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=main)


def _seeds(text: str) -> int | list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a count or a comma-separated list of seeds, got {text!r}"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError(f"expected a count or a list of seeds, got {text!r}")
    return values[0] if "," not in text else values


def _tables(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from plait.cli.text import plain, safe
    from plait.sweeps import JobQueue, sweep

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Path(args.out) if args.out else Path("results") / Path(args.file).stem
    jobqueue = None
    if args.slurm or args.pbs:
        jobqueue = JobQueue(
            "slurm" if args.slurm else "pbs",
            max_workers=args.max_workers,
            queue=args.queue,
            account=args.account,
            walltime=args.walltime,
            memory=args.job_memory,
            directives=args.job_directive,
        )
    if jobqueue is not None and args.scheduler:
        raise ValueError("--scheduler and --slurm/--pbs exclude each other; choose one")
    bar = _Bar(console, enabled=not args.quiet)

    def announce(definition, runs) -> None:
        if args.quiet:
            return
        shape = " × ".join(
            [f"{len(v)} {p}" for p, v in definition.grid.items()]
            + ([f"{len(next(iter(definition.zip.values())))} zipped"] if definition.zip else [])
            + [f"{len(definition.seeds)} seed{'s' if len(definition.seeds) > 1 else ''}"]
        )
        console.print(plain(f"sweep {args.file}: {len(runs)} runs ({shape}) into {out}"))

    try:
        result = sweep(
            args.file,
            seeds=args.seeds,
            tables=args.tables,
            out=out,
            workers=args.workers,
            scheduler=args.scheduler,
            jobqueue=jobqueue,
            batch=args.batch,
            fresh=args.fresh,
            max_memory=args.max_memory,
            progress=bar,
            on_start=announce,
        )
    except KeyboardInterrupt as e:
        summary = getattr(e, "summary", None)
        if summary is not None:
            kept = summary.reused + summary.done
            print(
                f"plait: interrupted; {kept} of {summary.total} runs stored in {safe(str(out))}; "
                "run the same command again to resume",
                file=sys.stderr,
            )
            from plait.cli import EXIT_INTERRUPTED

            return EXIT_INTERRUPTED
        raise
    s = result.summary
    if not args.quiet:
        console.print(
            plain(
                f"{s.total} runs: {s.done} run now, {s.reused} already stored, {s.failed} failed, "
                f"in {s.wall_seconds:.1f} s"
                + (f" ({s.runs_per_second:.1f} runs/s)" if s.done + s.failed else "")
            )
        )
        for reason, count in s.reasons()[:5]:
            console.print(plain(f"  {count} failed: {reason}"))
        if s.failed:
            console.print(plain(f"  failed runs are listed in {out / 'failures'}"))
        if s.not_in_sweep:
            console.print(
                plain(
                    f"note: {out} also holds {s.not_in_sweep} runs that are not part of this "
                    "sweep (an earlier definition of it); --fresh removes them"
                )
            )
        glob = f"{out}/**/*.parquet" if len(result.tables) == 1 else f"{out}/<table>/*.parquet"
        console.print(plain(f"results: {glob}"))
    return EXIT_FAILED_RUNS if s.failed else 0


class _Bar:
    """A live progress bar on standard error (only on a terminal): runs done of total,
    failures, runs per second and the time left."""

    def __init__(self, console, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled and console.is_terminal
        self.progress = None
        self.task = None
        self.failed = 0

    def start(self, total: int, reused: int, cluster) -> None:
        from plait.cli.text import plain

        if cluster is not None and self.enabled:
            self.console.print(plain(f"running on {cluster.description}"))
            if cluster.dashboard:
                self.console.print(plain(f"Dask dashboard: {cluster.dashboard}"))
        elif cluster is not None and cluster.dashboard:
            self.console.print(plain(f"Dask dashboard: {cluster.dashboard}"))
        if not self.enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("sweep"),
            BarColumn(bar_width=None),
            MofNCompleteColumn(),
            TextColumn("runs, {task.fields[failed]} failed,"),
            TextColumn("{task.fields[rate]} runs/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
            expand=True,
        )
        self.progress.start()
        self.task = self.progress.add_task(
            "sweep", total=total, completed=reused, failed=0, rate="-"
        )

    def advance(self, ok: bool) -> None:
        if self.progress is None:
            return
        self.failed += 0 if ok else 1
        self.progress.advance(self.task)
        speed = self.progress.tasks[0].speed
        rate = f"{speed:.1f}" if speed else "-"
        self.progress.update(self.task, failed=self.failed, rate=rate)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
