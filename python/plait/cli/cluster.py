"""Options that say where a sweep's runs go, shared by `plait sweep` and `plait reproduce`:
this machine (default), an existing Dask scheduler, or SLURM/PBS jobs."""

from __future__ import annotations

import argparse
from typing import Any

from plait.cli.options import bounded_float, bounded_int


def add_cluster_options(p: argparse.ArgumentParser, workers_flag: str = "--workers") -> None:
    where = p.add_argument_group("where runs go (default: this machine, one worker per core)")
    where.add_argument(
        workers_flag,
        dest="workers",
        type=bounded_int(1, 4096),
        metavar="N",
        help="worker processes of the local Dask cluster (default: the number of cores)",
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
    where.add_argument(
        "--worker-wait",
        type=bounded_float(0, 1e9, low_open=True),
        default=600.0,
        metavar="SECONDS",
        help="with --scheduler/--slurm/--pbs: end the sweep (exit 3) after this long with no "
        "worker while runs wait (jobs that never start)",
    )
    where.add_argument(
        "--batch",
        type=bounded_int(1, 100_000),
        metavar="N",
        help="runs per task (default: sized so a task takes about 1 s)",
    )


def cluster_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for :func:`plait.sweep` from the options above, checked before
    anything is written (a ValueError names the option): the job system's commands must be on
    the PATH, --job-memory a size and --scheduler an address."""
    from plait.sweeps import JobQueue
    from plait.sweeps.engine import check_options

    jobqueue = None
    if args.slurm or args.pbs:
        if args.scheduler:
            raise ValueError("--scheduler and --slurm/--pbs exclude each other; choose one")
        jobqueue = JobQueue(
            "slurm" if args.slurm else "pbs",
            max_workers=args.max_workers,
            queue=args.queue,
            account=args.account,
            walltime=args.walltime,
            memory=args.job_memory,
            directives=args.job_directive,
        )
    check_options(args.scheduler, jobqueue)
    return {
        "workers": args.workers,
        "scheduler": args.scheduler,
        "jobqueue": jobqueue,
        "batch": args.batch,
        "worker_wait": args.worker_wait,
    }
