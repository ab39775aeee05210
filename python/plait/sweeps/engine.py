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
import re
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
#: Longest wait for an existing scheduler (``--scheduler``) to answer, before anything is
#: written: a scheduler that is up answers in milliseconds, even across a continent.
SCHEDULER_CONNECT_SECONDS = 10.0
#: Default longest time a sweep waits with no worker while runs remain (``--worker-wait``):
#: jobs that never start (a wrong queue, a job system that refuses them) or a scheduler
#: without workers end the sweep with a :class:`ClusterError` instead of a wait without end.
WORKER_WAIT_SECONDS = 600.0
#: The commands of each job system that dask-jobqueue calls: to submit a job, to cancel one.
JOB_COMMANDS = {"slurm": ("sbatch", "scancel"), "pbs": ("qsub", "qdel")}


class ClusterError(RuntimeError):
    """The cluster failed while the sweep ran: a job could not be submitted, or no worker came
    within the wait. One line; the runs already finished are stored."""


@dataclass
class Cluster:
    """Where the runs go: the Dask client, a description, and the dashboard link (if any)."""

    client: Any
    description: str
    dashboard: str | None
    close: Callable[[], None]
    #: Longest time without a worker while runs remain (None: no limit, workers are local).
    worker_wait: float | None = None
    #: Raises :class:`ClusterError` when the cluster has failed (a job not submitted).
    check: Callable[[], None] = field(default=lambda: None)

    def count(self) -> int:
        """Workers connected now (-1 when the scheduler does not answer)."""
        try:
            return len(self.client.scheduler_info(n_workers=-1)["workers"])
        except Exception:
            return -1

    def workers(self) -> int:
        return max(1, self.count())


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


def check_options(scheduler: str | None, jobqueue: JobQueue | None) -> None:
    """Checks where the runs are to go before anything is created: a ValueError names the
    option and what is wrong. A scheduler's address must have Dask's shape and (over TCP)
    accept a connection; the job system's commands must be on the PATH (a login node of the
    cluster), and a job's options must fit on one line of the job script."""
    if scheduler is not None:
        _check_scheduler_address(scheduler)
    if jobqueue is None:
        return
    import shutil

    from dask.utils import parse_bytes

    flag = f"--{jobqueue.system}"
    if jobqueue.system not in JOB_COMMANDS:
        raise ValueError(f"jobqueue: unknown job system {jobqueue.system!r} (slurm or pbs)")
    try:
        memory = parse_bytes(jobqueue.memory)
    except (ValueError, TypeError):
        memory = 0
    if memory < 1:
        raise ValueError(
            f"--job-memory {jobqueue.memory}: expected a size such as 2GiB, 500MB or 4e9 (bytes)"
        )
    for option, value in (
        ("--queue", jobqueue.queue),
        ("--account", jobqueue.account),
        ("--walltime", jobqueue.walltime),
        *(("--job-directive", d) for d in jobqueue.directives),
    ):
        if value is not None and (not value.strip() or any(ord(c) < 32 for c in value)):
            raise ValueError(
                f"{option} {value!r}: expected one line of text (no control characters)"
            )
    missing = [c for c in JOB_COMMANDS[jobqueue.system] if shutil.which(c) is None]
    if missing:
        raise ValueError(
            f"{flag}: {' and '.join(repr(c) for c in missing)} not found on the PATH; run the "
            f"sweep where the {jobqueue.system.upper()} commands are (a login node of the cluster)"
        )
    try:
        _import_jobqueue()
    except ImportError:
        raise ValueError(f"{flag}: needs the package dask-jobqueue") from None


def _import_jobqueue() -> Any:
    """`dask_jobqueue`, imported without its side effect on signals: its `runner` module sets
    the SIGINT handler to `sys.exit()` when imported, which would turn Ctrl-C during a sweep
    (and, in a test process, in everything after it) into a bare SystemExit instead of the
    KeyboardInterrupt the interrupt handling expects. The handler in place before is put back."""
    import signal

    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    try:
        import dask_jobqueue
    finally:
        if main and before is not None and signal.getsignal(signal.SIGINT) is not before:
            signal.signal(signal.SIGINT, before)
    return dask_jobqueue


def _check_scheduler_address(scheduler: str) -> None:
    """The shape of a Dask address: [scheme://]host:port, with a scheme Dask knows."""
    from distributed.comm import registry
    from distributed.comm.addressing import parse_address, parse_host_port

    shape = "expected an address such as tcp://host:8786"
    try:
        scheme, location = parse_address(scheduler)
    except (ValueError, TypeError):
        raise ValueError(f"--scheduler {scheduler}: {shape}") from None
    known = sorted(registry.backends)
    if scheme not in known:
        raise ValueError(
            f"--scheduler {scheduler}: unknown protocol {scheme!r} ({', '.join(known)}); {shape}"
        )
    if scheme == "inproc":
        return
    try:
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        raise ValueError(f"--scheduler {scheduler}: {shape}") from None
    if not host or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"--scheduler {scheduler}: {shape} (a port in 1..65535)")
    if scheme == "tcp":
        # A refused or unroutable address is said at once, before anything starts; Dask's
        # client would retry until its timeout.
        import socket

        try:
            socket.create_connection((host, port), SCHEDULER_CONNECT_SECONDS).close()
        except OSError as e:
            reason = e.strerror or str(e) or type(e).__name__
            raise ValueError(f"--scheduler {scheduler}: cannot connect ({reason})") from None


def connect_scheduler(scheduler: str) -> Any:
    """A client of the scheduler at `scheduler` (checked by :func:`check_options`); a
    ValueError naming the option when it does not answer within
    :data:`SCHEDULER_CONNECT_SECONDS`."""
    _quiet()
    from distributed import Client

    try:
        with _silenced():
            return Client(scheduler, timeout=f"{SCHEDULER_CONNECT_SECONDS}s")
    except (OSError, TimeoutError, ValueError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"--scheduler {scheduler}: cannot connect ({reason})") from None


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
    worker_wait: float | None = WORKER_WAIT_SECONDS,
) -> Iterator[Cluster]:
    """A Dask cluster to run on (see the module doc); closed on exit unless `client` was
    given by the caller (with `scheduler` too, `client` is a client of that scheduler). With
    a scheduler or a job queue, a wait of more than `worker_wait` seconds without a worker
    ends the sweep (:class:`ClusterError`)."""
    _quiet()
    from distributed import Client

    if client is not None:
        if scheduler is not None:
            # Connected by the caller (plait.sweep, before it created anything), who closes it.
            yield Cluster(client, f"Dask scheduler {scheduler}", _link(client), _noop, worker_wait)
        else:
            yield Cluster(client, f"Dask client {client.scheduler.address}", _link(client), _noop)
        return
    if scheduler is not None:
        c = connect_scheduler(scheduler)
        try:
            yield Cluster(c, f"Dask scheduler {scheduler}", _link(c), c.close, worker_wait)
        finally:
            with _silenced():
                c.close()
        return
    if jobqueue is not None:
        check_options(None, jobqueue)
        failures: list[str] = []
        with _silenced():
            cluster = _jobqueue_cluster(jobqueue, failures)
            cluster.adapt(minimum=0, maximum=jobqueue.max_workers)
            c = Client(cluster)
        desc = f"{jobqueue.system.upper()} jobs, adaptive, up to {jobqueue.max_workers} workers"

        def check() -> None:
            if failures:
                raise ClusterError(f"--{jobqueue.system}: {failures[0]}")

        try:
            # Dask and tornado log a job that cannot be submitted as tracebacks, and go on
            # trying: `check` ends the sweep with one line instead.
            with _silenced():
                yield Cluster(c, desc, _link(c), c.close, worker_wait, check)
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
        from plait.sweeps import worker

        prepare_numpy()
        # The workers' parent, whose death they watch for (plait.sweeps.worker.dask_setup).
        worker._SWEEP_PID = os.getpid()
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


def _jobqueue_cluster(jq: JobQueue, failures: list[str]) -> Any:
    """A dask-jobqueue cluster of one single-threaded worker per job; options not given here
    come from Dask's configuration (``~/.config/dask/jobqueue.yaml``). A job that cannot be
    submitted is described in `failures`."""
    dask_jobqueue = _import_jobqueue()
    from distributed.core import Status

    kind = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[jq.system]

    class Job(kind.job_cls):  # type: ignore[name-defined,misc]
        async def start(self) -> None:
            try:
                await super().start()
            except Exception as e:
                failures.append(_submit_failure(self.submit_command, e))
                # Dask's close asserts that every job it created ended one way or another.
                self.status = Status.failed
                raise

    options: dict[str, Any] = {
        "cores": 1,
        "processes": 1,
        "memory": jq.memory,
        "job_extra_directives": list(jq.directives),
        "job_cls": Job,
    }
    for name in ("queue", "account", "walltime"):
        if getattr(jq, name) is not None:
            options[name] = getattr(jq, name)
    with warnings.catch_warnings():
        # With the dashboard's port taken (another Dask on the machine), distributed serves
        # it on another port and warns on stderr; the sweep prints the link it got anyway.
        warnings.filterwarnings("ignore", message=r"Port \d+ is already in use")
        return kind(**options)


def _submit_failure(command: str, e: BaseException) -> str:
    """One line for a job that could not be submitted: dask-jobqueue's message for a command
    that failed spans a dozen lines (exit code, command, stdout, stderr)."""
    text = str(e)
    if isinstance(e, RuntimeError) and "stderr:" in text:
        code = re.search(r"Exit code: (-?\d+)", text)
        said = [
            line.strip()
            for part in (text.split("stderr:", 1)[1], text.split("stdout:", 1)[-1])
            for line in part.splitlines()
            if line.strip() and not line.startswith("stderr:")
        ]
        reason = said[0] if said else "no message"
        return f"{command} failed (exit code {code.group(1) if code else '?'}): {reason}"
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    return f"{command} failed: {first}"


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

    now = time.monotonic()
    known = {"count": cluster.count(), "asked": now, "none_since": now}

    def workers() -> int:
        # Asking the scheduler is a round trip: at most once a second (adaptive clusters grow).
        now = time.monotonic()
        if now - known["asked"] > 1.0:
            known["count"], known["asked"] = cluster.count(), now
            if known["count"] > 0:
                known["none_since"] = now
        return max(1, known["count"])

    def check() -> None:
        """Raises ClusterError when the cluster failed or no worker came in time."""
        cluster.check()
        if cluster.worker_wait is None:
            return
        workers()  # the count, asked at most once a second
        if known["count"] > 0:
            return
        waited = time.monotonic() - known["none_since"]
        if waited > cluster.worker_wait:
            raise ClusterError(
                f"no Dask worker for {waited:.0f} s while runs wait ({cluster.description}); "
                "see --worker-wait"
            )

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
                check()
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
    """Ctrl-C (and SIGTERM, SIGHUP where they raise KeyboardInterrupt, as in the command line:
    see `plait._interrupt`) sets the event instead of raising KeyboardInterrupt wherever the
    main thread is: raised inside a call of Dask's client, it leaves errors and tracebacks in
    Dask's logs. :func:`execute` raises KeyboardInterrupt at its next check; a second signal
    raises at once. Only in the main thread, and only over handlers that raise (an ignored
    Ctrl-C stays so)."""
    from plait import _interrupt

    flag = threading.Event()

    def handler(signum: int) -> None:
        if flag.is_set():
            raise KeyboardInterrupt
        flag.set()

    with _interrupt.deferred(handler):
        yield flag


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
