"""`plait sweep FILE`: run a scenario over the grid and seeds of its [sweep] table.

Runs go to a local Dask cluster (one single-threaded worker process per core), to an existing
Dask scheduler (--scheduler tcp://host:8786), or to workers started as SLURM or PBS jobs
(--slurm, --pbs; adaptive, through dask-jobqueue). Each run's tables are stored in OUT as one
Parquet file per run, keyed by a hash of the resolved scenario, the seed and plait's version:
a run already stored is not run again, so an interrupted sweep resumes where it stopped. A
failed run is recorded in OUT/failures/ and the sweep goes on.

--testbed runs every point and seed on this machine's kernel instead (plait testbed: root),
one run at a time in this process, into the same store, keyed apart from simulations
(docs/testbed.md, "Sweeps on the kernel").

Exit codes: 0 every run stored, 1 some runs failed, 2 a mistake in the input or in an option
(nothing run, nothing written), 3 the cluster failed (finished runs kept), 130 interrupted by
Ctrl-C, 143 stopped by SIGTERM, 129 by SIGHUP (finished runs kept: run the same command again
to resume).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plait.cli.cluster import add_cluster_options, cluster_options
from plait.cli.options import add_max_memory

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
    p.add_argument(
        "--testbed",
        action="store_true",
        help="run on this machine's kernel (plait testbed, root), one run at a time, into the "
        "same store; not with the options of where runs go",
    )
    add_cluster_options(p)
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


#: Options of where runs go, with their defaults: none applies to --testbed.
_CLUSTER_DEFAULTS = {
    "workers": None,
    "scheduler": None,
    "slurm": False,
    "pbs": False,
    "max_workers": 10,
    "queue": None,
    "account": None,
    "walltime": None,
    "job_memory": "2GiB",
    "job_directive": [],
    "worker_wait": 600.0,
    "batch": None,
}


def _testbed_conflict(args: argparse.Namespace) -> str | None:
    """The first option of where runs go given with --testbed (as written), or None."""
    for name, default in _CLUSTER_DEFAULTS.items():
        if getattr(args, name, default) != default:
            return "--" + name.replace("_", "-")
    return None


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from plait.cli.text import plain, safe
    from plait.sweeps import sweep

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Path(args.out) if args.out else Path("results") / Path(args.file).stem
    if args.testbed:
        conflict = _testbed_conflict(args)
        if conflict is not None:
            from plait.cli import fail

            return fail(
                f"--testbed and {conflict} exclude each other: testbed runs go one at a time "
                "to this machine's kernel, in this process"
            )
        where = {"testbed": True}
    else:
        where = cluster_options(args)
    bar = _Bar(console, enabled=not args.quiet)

    def announce(definition, runs) -> None:
        if args.quiet:
            return
        shape = " × ".join(
            [f"{len(v)} {p}" for p, v in definition.grid.items()]
            + ([f"{len(next(iter(definition.zip.values())))} zipped"] if definition.zip else [])
            + [f"{len(definition.seeds)} seed{'s' if len(definition.seeds) > 1 else ''}"]
        )
        on = " on the kernel testbed" if args.testbed else ""
        console.print(plain(f"sweep {args.file}: {len(runs)} runs ({shape}){on} into {out}"))

    try:
        result = sweep(
            args.file,
            seeds=args.seeds,
            tables=args.tables,
            out=out,
            **where,
            fresh=args.fresh,
            max_memory=args.max_memory,
            progress=bar,
            on_start=announce,
        )
    except KeyboardInterrupt as e:
        summary = getattr(e, "summary", None)
        if summary is not None:
            from plait.cli import stopped

            code, how = stopped()
            kept = summary.reused + summary.done
            print(
                f"plait: {how}; {kept} of {summary.total} runs stored in {safe(str(out))}; "
                "run the same command again to resume",
                file=sys.stderr,
            )
            return code
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
        if result.seeds_change_nothing():
            console.print(
                plain(
                    "note: every seed gave the same flows at each point: nothing in the "
                    "scenario draws from the seed (exact host timing, fixed start times, no "
                    "random loss or queue), so the spread over seeds is zero by construction; "
                    "`plait phase` tells whether the result hinges on timing (docs/phase.md)"
                )
            )
    return EXIT_FAILED_RUNS if s.failed else 0


class _Bar:
    """A live progress bar on standard error (only on a terminal): runs done of total,
    failures, runs per second and the time left."""

    def __init__(self, console, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled and console.is_terminal
        self.quiet = not enabled
        self.progress = None
        self.task = None
        self.failed = 0

    def start(self, total: int, reused: int, cluster) -> None:
        from plait.cli.text import plain

        if cluster is not None and self.enabled:
            self.console.print(plain(f"running on {cluster.description}"))
            if cluster.dashboard:
                self.console.print(plain(f"Dask dashboard: {cluster.dashboard}"))
        elif cluster is not None and cluster.dashboard and not self.quiet:
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

    # ---- plait sweep --testbed: a line per run (runs take seconds) --------------------------

    def kernel_start(self, todo: int, seconds: float, kernel: str) -> None:
        from plait.cli.text import plain

        if self.quiet or not todo:
            return
        self.console.print(
            plain(
                f"kernel {kernel}: {todo} run{'s' if todo > 1 else ''} to do, one at a time, "
                f"about {_duration(seconds)} of real time (each: its duration and about "
                f"{_setup_seconds():.1f} s of set-up)"
            )
        )

    def kernel_wait(self, message: str) -> None:
        from plait.cli.text import plain

        if not self.quiet:
            self.console.print(plain(message))

    def kernel_run(self, done) -> None:
        from plait.cli.text import plain

        if self.quiet:
            return
        self.console.print(plain(kernel_line(done)))


def kernel_line(done) -> str:
    """One line per kernel run: its place, point and seed, then the goodput of its flows (sum,
    and the range when there are several) and the emulator's lateness, or its error."""
    point = ", ".join(f"{p}={v!r}" for p, v in done.run.params.items())
    head = f"[{done.index + 1}/{done.todo}] {point + ', ' if point else ''}seed {done.run.seed}"
    if done.result is None:
        return f"{head}: FAILED after {done.seconds:.1f} s: {done.error}"
    rates = [f["goodput_bps"] for f in done.result.flows if f.get("goodput_bps") is not None]
    if rates:
        goodput = f"goodput {sum(rates) / 1e6:.2f} Mb/s"
        if len(rates) > 1:
            goodput += f" over {len(rates)} flows ({min(rates) / 1e6:.2f}-{max(rates) / 1e6:.2f})"
    else:
        goodput = "no goodput measured"
    tb = done.result.summary.get("testbed") or {}
    p99 = tb.get("lateness_p99_us")
    timing = f"lateness p99 {p99:.1f} us" if p99 is not None else "lateness unknown"
    if tb.get("timing_flagged"):
        timing += " FLAGGED (p99 above a tenth of a packet time)"
    return f"{head}: {goodput}; {timing}; {done.seconds:.1f} s"


def _setup_seconds() -> float:
    from plait.testbed.sweep import SETUP_SECONDS

    return SETUP_SECONDS


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds} s"
    hours, rest = divmod(seconds, 3600)
    return f"{hours} h {rest // 60} min" if hours else f"{rest // 60} min {rest % 60} s"
