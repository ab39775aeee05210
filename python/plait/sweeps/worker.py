"""What a Dask worker does with a batch of runs: run each and store its tables as Parquet.

A worker that sees the sweep's results folder (every local worker, and cluster workers on a
shared file system) writes each run's files there itself, atomically, and returns only that it
did: the sweep's process then does no per-run work but counting, which is what lets short runs
use every core. A worker that does not see the folder (it holds no ``sweep.json`` with this
sweep's token) returns the Parquet bytes and the sweep's process writes them. Runs are
independent and single-threaded; a batch is several runs in one task, so that short runs do not
pay the engine's per-task cost each."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from plait.sweeps.spec import Run


@dataclass(frozen=True)
class Batch:
    """Runs of one scenario text, sent to a worker as one task."""

    text: str
    source: str
    format: str
    tables: tuple[str, ...]
    max_memory: int | None
    runs: tuple[Run, ...]
    #: The results folder and this sweep's token in its ``sweep.json`` (see the module doc).
    store: str | None = None
    token: str | None = None


@dataclass
class Outcome:
    """One run's result: stored by the worker (`stored`), or Parquet bytes per table for the
    sweep's process to store, or the error that stopped it."""

    key: str
    tables: dict[str, bytes] | None
    error: str | None
    seconds: float
    stored: bool = False

    @property
    def ok(self) -> bool:
        return self.stored or self.tables is not None


def dask_setup(worker: Any) -> None:
    """Dask preload of the local cluster's workers. They share the terminal's process group,
    so Ctrl-C reaches them too: they ignore it (each would print a KeyboardInterrupt
    traceback) and are stopped by the sweep, which keeps the runs they finished. SIGTERM and
    SIGHUP end them as by default (forked, they would inherit the sweep's handlers). They die
    with the sweep's process (see :func:`die_with_parent`). They log only what is critical:
    each run's error is recorded by the sweep, and what a worker logs on its way out (a
    heartbeat racing the scheduler's close) is noise on the terminal."""
    import logging
    import signal
    import threading

    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    die_with_parent()


#: The sweep's process, recorded before it forks its local workers (a forked worker inherits
#: it); None in a spawned worker, whose parent is then the process that started it.
_SWEEP_PID: int | None = None

#: How often the watchdog of :func:`die_with_parent` looks at the parent, in seconds.
PARENT_POLL_SECONDS = 0.25
#: `PR_SET_PDEATHSIG` of <linux/prctl.h>: prctl(2) option asking for a signal when the parent
#: dies.
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> None:
    """Makes this process end when its parent (`parent`, default the current one) does: a
    local worker killed with its sweep (SIGKILL leaves the sweep no time to close its
    cluster) would otherwise go on running, reparented, writing into the folder that the
    resumed sweep uses. On Linux the kernel sends SIGKILL when the parent dies
    (``prctl(PR_SET_PDEATHSIG)``, prctl(2)); it is sent when the parent's *thread* that forked
    this process ends, which Dask keeps for the worker's life. Everywhere, a watchdog thread
    also checks the parent's pid every :data:`PARENT_POLL_SECONDS` and ends the process when
    it has changed (the orphan was adopted by init or a subreaper)."""
    import os
    import signal
    import sys
    import threading

    if parent is None:
        parent = os.getppid()
        if _SWEEP_PID is not None and parent != _SWEEP_PID and not _alive(_SWEEP_PID):
            _end_orphan()  # the sweep died before this worker got here
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still holds

    def orphaned() -> bool:
        return os.getppid() != parent

    def watch() -> None:
        while not orphaned():
            time.sleep(PARENT_POLL_SECONDS)
        _end_orphan()

    # The parent may have died before prctl was in place.
    if orphaned():
        _end_orphan()
    threading.Thread(target=watch, name="plait-parent-watchdog", daemon=True).start()


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _end_orphan() -> None:
    """Stops the run in progress and ends this process at once."""
    import os

    _closing().cancel()
    os._exit(1)


def dask_teardown(worker: Any) -> None:
    """Dask preload hook, called as the worker closes and before it waits for its running
    task: the run in progress stops at its next time slice instead of running to its end
    (a stopped sweep would otherwise wait for it, or for the nanny to kill the process)."""
    _closing().cancel()


_CANCEL: Any = None


def _closing() -> Any:
    """This process's cancel token, set when the worker closes (see `dask_teardown`)."""
    global _CANCEL
    if _CANCEL is None:
        from plait import _core

        _CANCEL = _core.CancelToken()
    return _CANCEL


def run_batch(batch: Batch) -> list[Outcome]:
    """Runs every run of `batch` in turn (this is the task submitted to Dask)."""
    return [_run_one(batch, run) for run in batch.runs]


def _run_one(batch: Batch, run: Run) -> Outcome:
    from plait import _core
    from plait.api import prepare_numpy
    from plait.sweeps.arrow import arrow_tables

    prepare_numpy()
    started = time.perf_counter()
    try:
        raw = _core.run_scenario(
            batch.text,
            batch.source,
            batch.format,
            # The seed as a number, not as `--set simulation.seed=` (TOML integers stop at
            # 2**63 - 1; seeds go to 2**64 - 1).
            run.seed,
            [(k, v) for k, v in run.overrides if k != "simulation.seed"],
            None,
            cancel=_closing(),
            max_memory=batch.max_memory,
        )
        arrow = arrow_tables(raw, batch.tables)
        tables = {t: _parquet(arrow[t], run) for t in batch.tables}
        stored = _store(batch, run.key, tables)
        return Outcome(
            run.key, None if stored else tables, None, time.perf_counter() - started, stored
        )
    except Exception as e:  # recorded as the run's failure; the sweep goes on
        return Outcome(run.key, None, _error_text(e), time.perf_counter() - started)


#: Results folders this process has found to be the sweep's, by (folder, token).
_SEEN: dict[tuple[str, str], bool] = {}


def _store(batch: Batch, key: str, tables: dict[str, bytes]) -> bool:
    """Writes the run's files into the sweep's folder when this worker sees it (see the module
    doc); False when it does not, or when writing failed (the sweep's process then writes)."""
    if batch.store is None or batch.token is None:
        return False
    from pathlib import Path

    from plait.sweeps.store import MANIFEST, write_atomic

    root = Path(batch.store)
    seen = _SEEN.get((batch.store, batch.token))
    if seen is None:
        import json

        try:
            manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
            seen = manifest.get("token") == batch.token
        except (OSError, ValueError, AttributeError):
            seen = False
        _SEEN[(batch.store, batch.token)] = seen
    if not seen:
        return False
    try:
        for table in batch.tables:
            write_atomic(root / table / f"{key}.parquet", tables[table])
    except OSError:
        return False
    return True


def _error_text(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    first = text.splitlines()[0] if text else text
    return f"{type(e).__name__}: {first}"


def _parquet(own: Any, run: Run, metadata: dict[bytes, bytes] | None = None) -> bytes:
    """`own` (an Arrow table, `plait.sweeps.arrow`) with the run's key, parameters and seed in
    front, as Parquet bytes; `metadata` is added to the file's schema metadata (a kernel run
    records its kernel and the emulator's timing there, see `plait.testbed.sweep`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    front = {"run": run.key, **{p: _column_value(v) for p, v in run.params.items()}}
    rows = own.num_rows
    # Typed from the value, not from the rows: a table without rows keeps the parameter's type
    # (not Arrow's null), so its files read as one table with the others.
    columns = [pa.array([v] * rows, type=pa.array([v]).type) for v in front.values()]
    columns.append(pa.array([run.seed] * rows, type=pa.uint64()))
    names = [*front, "seed"]
    for i, name in enumerate(own.column_names):
        if name not in names:
            columns.append(own.column(i))
            names.append(name)
    buf = pa.BufferOutputStream()
    table = pa.Table.from_arrays(columns, names=names)
    if metadata:
        table = table.replace_schema_metadata({**(own.schema.metadata or {}), **metadata})
    pq.write_table(table, buf)
    return buf.getvalue().to_pybytes()


def _column_value(value: Any) -> Any:
    """A parameter value as a column value: scalars as they are, tables and lists as the TOML
    text they were set with."""
    if isinstance(value, (bool, int, float, str)):
        return value
    from plait.api import _toml_literal

    return _toml_literal(value)
