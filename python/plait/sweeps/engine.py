"""Running a sweep's runs on Dask distributed: a local cluster, an existing scheduler, or
workers started through SLURM or PBS by dask-jobqueue. One code path for all three: batches of
runs are submitted as tasks, results come back to this process, which alone writes the store.

A worker that dies takes its tasks with it and the scheduler gives them to another worker
(Dask's own retry); a result reaches this process once, and is written under its key once. A
task that kills workers again and again ends as Dask's KilledWorker: its runs are recorded as
failed. Ctrl-C cancels what is queued; everything finished is already in the store.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from plait.sweeps.spec import Run
from plait.sweeps.worker import Batch, Outcome, run_batch

#: A batch of runs is sized to take about this long on a worker, once run times are known.
#: Measured on 2 cores with 200 runs of 0.05 s and of 0.14 s: 1 s per task beats 0.1 s (the
#: scheduler's work per task) and balances as well (batches shrink as the sweep's end nears).
TARGET_TASK_SECONDS = 1.0
#: Most runs in one batch.
MAX_BATCH = 64
#: Tasks in flight per worker (enough to keep every worker busy while results come back).
TASKS_PER_WORKER = 4


@dataclass
class Cluster:
    """Where the runs go: the Dask client, a description, and the dashboard link (if any)."""

    client: Any
    description: str
    dashboard: str | None
    close: Callable[[], None]

    def workers(self) -> int:
        try:
            return max(1, len(self.client.scheduler_info(n_workers=-1)["workers"]))
        except Exception:
            return 1


@dataclass
class JobQueue:
    """Options for workers started as batch jobs (``--slurm`` / ``--pbs``)."""

    system: str  # "slurm" or "pbs"
    max_workers: int = 10
    queue: str | None = None
    account: str | None = None
    walltime: str | None = None
    memory: str = "2GiB"
    directives: list[str] = field(default_factory=list)


def _quiet() -> None:
    for name in ("distributed", "distributed.nanny", "distributed.scheduler", "tornado"):
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def _silenced() -> Iterator[None]:
    """Dask's and tornado's loggers silenced meanwhile. Closing a cluster started here, its
    scheduler (in this process) logs tracebacks at CRITICAL level for messages it can no
    longer send to the closed client (cancelled tasks after Ctrl-C, workers going away):
    noise, once the results are in or the sweep is interrupted."""
    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in _NOISY]
    loggers = [logging.getLogger(n) for n in {*names, *_NOISY}]
    saved = [(logger, logger.level) for logger in loggers]
    for logger, _ in saved:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)


_NOISY = ("distributed", "tornado")


@contextmanager
def connect(
    workers: int | None = None,
    scheduler: str | None = None,
    jobqueue: JobQueue | None = None,
    client: Any = None,
) -> Iterator[Cluster]:
    """A Dask cluster to run on (see the module doc); closed on exit unless `client` was
    given by the caller."""
    _quiet()
    from distributed import Client

    if client is not None:
        yield Cluster(client, f"Dask client {client.scheduler.address}", _link(client), _noop)
        return
    if scheduler is not None:
        try:
            c = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, ValueError) as e:
            # ValueError: distributed's word for an address it cannot parse ("notaurl").
            raise ValueError(f"--scheduler {scheduler}: cannot connect ({e})") from None
        try:
            yield Cluster(c, f"Dask scheduler {scheduler}", _link(c), c.close)
        finally:
            c.close()
        return
    if jobqueue is not None:
        cluster = _jobqueue_cluster(jobqueue)
        cluster.adapt(minimum=0, maximum=jobqueue.max_workers)
        c = Client(cluster)
        desc = f"{jobqueue.system.upper()} jobs, adaptive, up to {jobqueue.max_workers} workers"
        try:
            yield Cluster(c, desc, _link(c), c.close)
        finally:
            with _silenced():
                c.close()
                cluster.close()
        return
    from distributed import LocalCluster

    n = workers or os.cpu_count() or 1
    try:
        with _local_workers():
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
                # The workers share the terminal's process group: see `dask_setup` there.
                preload=["plait.sweeps.worker"],
            )
    except RuntimeError as e:
        # Worker processes start by importing the caller's script (multiprocessing's spawn).
        raise RuntimeError(
            f"could not start the local Dask workers ({e}); in a script, call plait.sweep "
            'under `if __name__ == "__main__":`, since each worker process imports the script'
        ) from None
    c = Client(cluster)
    try:
        yield Cluster(c, f"local, {n} worker process{'es' if n > 1 else ''}", None, c.close)
    finally:
        with _silenced():
            c.close()
            cluster.close()


@contextmanager
def _local_workers() -> Iterator[None]:
    """Dask's configuration for the local cluster's workers, meanwhile.

    - Forked from this process on Linux, where forking is safe: they start in about 0.1 s
      with the simulator, pandas and Arrow already imported, where spawned ones take 0.8 s
      and then import all that at their first run (on 2 cores, about 1.5 s of a 200-run
      sweep of 0.15 s runs). Elsewhere (macOS, Windows), Dask's default, spawn. A
      ``distributed.worker.multiprocessing-method`` set in Dask's configuration is kept.
    - Without Dask's statistical profiler, which samples each worker's threads every 10 ms:
      measured, a third of a worker's own CPU time besides its runs (0.27 s against 0.17 s
      over a 6 s sweep), and a run's profile is not what a sweep's user looks at.
    """
    import dask

    settings: dict[str, Any] = {"distributed.worker.profile.enabled": False}
    configured = dask.config.get("distributed.worker.multiprocessing-method", "spawn")
    if sys.platform.startswith("linux") and configured == "spawn":
        settings["distributed.worker.multiprocessing-method"] = "fork"
        # What the workers need (plait.api imports pandas only when asked), imported once
        # here and inherited.
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401

        from plait.api import prepare_numpy

        prepare_numpy()
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a process with threads (Dask's event loop is
        # one); the forked workers run only Dask's worker code, which supports it.
        warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks")
        with dask.config.set(settings):
            yield


def _noop() -> None:
    pass


def _link(client: Any) -> str | None:
    try:
        return client.dashboard_link
    except Exception:
        return None


def _jobqueue_cluster(jq: JobQueue) -> Any:
    """A dask-jobqueue cluster of one single-threaded worker per job; options not given here
    come from Dask's configuration (``~/.config/dask/jobqueue.yaml``)."""
    try:
        import dask_jobqueue
    except ImportError:
        raise ValueError(f"--{jq.system}: needs the package dask-jobqueue") from None
    kind = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[jq.system]
    options: dict[str, Any] = {
        "cores": 1,
        "processes": 1,
        "memory": jq.memory,
        "job_extra_directives": list(jq.directives),
    }
    for name in ("queue", "account", "walltime"):
        if getattr(jq, name) is not None:
            options[name] = getattr(jq, name)
    return kind(**options)


def execute(
    cluster: Cluster,
    make_batch: Callable[[list[Run]], Batch],
    runs: list[Run],
    on_outcome: Callable[[Run, Outcome], None],
    batch_size: int | None = None,
    interrupted: threading.Event | None = None,
) -> None:
    """Runs `runs` on the cluster; `on_outcome` is called in this process for each, as results
    arrive. With `batch_size` None, batches are sized from measured run times (one run per
    task until the first results, then about :data:`TARGET_TASK_SECONDS` per task).
    KeyboardInterrupt is raised once `interrupted` is set (see :func:`deferred_interrupt`)."""
    from distributed import as_completed

    client = cluster.client
    pending = list(reversed(runs))
    by_key = {r.key: r for r in runs}
    timing = _Timing()
    futures = as_completed()
    in_flight: dict[Any, list[Run]] = {}

    known = {"workers": cluster.workers(), "asked": time.monotonic()}

    def workers() -> int:
        # Asking the scheduler is a round trip: at most once a second (adaptive clusters grow).
        if time.monotonic() - known["asked"] > 1.0:
            known["workers"], known["asked"] = cluster.workers(), time.monotonic()
        return known["workers"]

    def submit_more() -> None:
        n = workers()
        window = max(8, TASKS_PER_WORKER * n)
        while pending and len(in_flight) < window:
            size = batch_size or timing.batch(len(pending), n)
            chunk = [pending.pop() for _ in range(min(size, len(pending)))]
            fut = client.submit(
                run_batch, make_batch(chunk), key=f"plait-{chunk[0].key}", pure=False
            )
            in_flight[fut] = chunk
            futures.add(fut)

    stop = interrupted if interrupted is not None else threading.Event()
    try:
        submit_more()
        while not futures.is_empty():
            if stop.is_set():
                raise KeyboardInterrupt
            if not futures.has_ready():
                stop.wait(0.02)
                continue
            fut = next(futures)
            chunk = in_flight.pop(fut)
            try:
                outcomes = fut.result()
            except Exception as e:  # the task itself failed (e.g. KilledWorker)
                error = f"{type(e).__name__}: {str(e).strip() or 'the task failed'}"
                outcomes = [Outcome(r.key, None, error, math.nan) for r in chunk]
            fut.release()
            for outcome in outcomes:
                timing.add(outcome.seconds)
                on_outcome(by_key[outcome.key], outcome)
            submit_more()
    except BaseException:
        for f in list(in_flight):
            f.cancel()
        raise


@contextmanager
def deferred_interrupt() -> Iterator[threading.Event]:
    """Ctrl-C sets the event instead of raising KeyboardInterrupt wherever the main thread is:
    raised inside a call of Dask's client, it leaves errors and tracebacks in Dask's logs.
    :func:`execute` raises KeyboardInterrupt at its next check; a second Ctrl-C raises at once.
    Only in the main thread, and only over Python's own handler (an ignored Ctrl-C stays so)."""
    flag = threading.Event()
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield flag
        return

    def handler(signum: int, frame: Any) -> None:
        if flag.is_set():
            raise KeyboardInterrupt
        flag.set()

    signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class _Timing:
    """Mean seconds per run, from the runs done so far."""

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0

    def add(self, seconds: float) -> None:
        if math.isfinite(seconds):
            self.n += 1
            self.total += seconds

    def batch(self, remaining: int, workers: int) -> int:
        if self.n == 0:
            return 1
        mean = max(self.total / self.n, 1e-6)
        by_time = int(TARGET_TASK_SECONDS / mean)
        # Keep several tasks per worker so that the last ones finish together.
        by_balance = math.ceil(remaining / (workers * TASKS_PER_WORKER))
        return max(1, min(by_time, by_balance, MAX_BATCH))
