"""Sweeps: a scenario run over a grid of parameter values and seeds, on every core of a laptop
or on a Dask cluster, with every run stored once under its content key (see
:mod:`plait.sweeps.spec` for the definition, :mod:`plait.sweeps.store` for the results folder and
:mod:`plait.sweeps.engine` for where runs go)."""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.api import DEFAULT_MAX_MEMORY, Scenario, check_max_memory
from plait.sweeps.engine import (
    WORKER_WAIT_SECONDS,
    ClusterError,
    JobQueue,
    check_options,
    connect,
    connect_scheduler,
    deferred_interrupt,
    execute,
)
from plait.sweeps.progress import ProgressSink, Summary, _Interrupted
from plait.sweeps.spec import Run, Sweep, SweepError, load
from plait.sweeps.store import Store, StoreError
from plait.sweeps.worker import Batch, Outcome

if TYPE_CHECKING:
    import pandas as pd
else:
    from plait._lazy import lazy_import

    pd = lazy_import("pandas")

__all__ = [
    "ClusterError",
    "JobQueue",
    "Summary",
    "SweepError",
    "SweepResult",
    "StoreError",
    "load",
    "open_results",
    "sweep",
]


@dataclass
class SweepResult:
    """A finished (or interrupted) sweep: its summary and its stored tables."""

    path: Path
    summary: Summary
    runs: list[Run]
    tables: tuple[str, ...]

    def table(self, name: str) -> pd.DataFrame:
        """One stored table over this sweep's runs (other runs in the folder are left out)."""
        if name not in self.tables:
            raise ValueError(f"table {name!r} was not stored (stored: {', '.join(self.tables)})")
        return Store(self.path, self.tables).read(name, [r.key for r in self.runs])

    @property
    def flows(self) -> pd.DataFrame:
        return self.table("flows")

    @property
    def links(self) -> pd.DataFrame:
        return self.table("links")

    @property
    def failures(self) -> pd.DataFrame:
        """One row per failed run: key, parameters, seed and error."""
        return pd.DataFrame(self.summary.errors)

    def seeds_change_nothing(self) -> bool:
        """Whether the seeds gave the very same flows (every column of the flows table) at each
        point of the sweep that has two seeds or more stored: nothing in the scenario drew from
        the seed (exact host timing, fixed start times, no random loss or queue), so a spread
        over the seeds is zero by construction (docs/phase.md). False when no point has two
        seeds, or the flows table was not stored."""
        import json

        if "flows" not in self.tables or len({r.seed for r in self.runs}) < 2:
            return False
        flows = self.flows
        if flows.empty:
            return False
        point = {r.key: json.dumps(r.params, sort_keys=True, default=str) for r in self.runs}
        measured = [c for c in flows.columns if c not in ("run", "seed", *self.runs[0].params)]
        flows = flows.assign(_point=flows["run"].map(point))
        compared = False
        for _, rows in flows.groupby(["_point", "name"], sort=False):
            if rows["seed"].nunique() < 2:
                continue
            compared = True
            if any(rows[c].astype(str).nunique(dropna=False) > 1 for c in measured):
                return False
        return compared


def sweep(
    scenario: Scenario,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Sequence[int] | None = None,
    *,
    out: str | os.PathLike | None = None,
    tables: Sequence[str] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    jobqueue: JobQueue | None = None,
    client: Any = None,
    batch: int | None = None,
    fresh: bool = False,
    max_memory: int | None = DEFAULT_MAX_MEMORY,
    progress: ProgressSink | None = None,
    on_start: Callable[[Sweep, list[Run]], None] | None = None,
    worker_wait: float | None = WORKER_WAIT_SECONDS,
    testbed: bool = False,
) -> SweepResult:
    """Runs `scenario` at every point of `grid` (all combinations) and `zip` (lists varied
    together), once per seed (`seeds`: a count n for seeds 1..n, or a list), and stores each
    run's tables (`tables`, default ``["flows"]``) in the folder `out`, keyed by content.

    Fields given here replace those of the scenario's ``[sweep]`` table. Runs already stored in
    `out` are not run again (`fresh` removes them first); a failed run is recorded with its
    error and the sweep goes on. Runs go to a local cluster of `workers` single-threaded
    processes (default: one per core), or to the Dask scheduler at `scheduler`, or to workers
    started by `jobqueue`, or through an existing ``distributed.Client`` (`client`). `batch`
    fixes the runs per task (default: sized from measured run times). With `scheduler` or
    `jobqueue`, a wait of more than `worker_wait` seconds with no worker while runs remain
    (jobs that never start) raises :class:`ClusterError` (None: wait without end).

    With `testbed`, the runs go to this machine's kernel (``plait testbed``, root), one after
    another in this process, into the same store; they are keyed apart from simulations, and
    `workers`, `scheduler`, `jobqueue`, `client` and `batch` do not apply (a ValueError).
    Every run is planned and the machine checked before anything is written (see
    :mod:`plait.testbed.sweep`).

    Without `out`, results are kept in a temporary folder and read into memory.
    Raises :class:`SweepError` for a bad definition, and ValueError for a bad option or a
    scheduler that does not answer, before anything is written; :class:`ClusterError` when a
    job cannot be submitted or no worker comes; KeyboardInterrupt after cancelling what is
    queued (stored runs are kept).
    """
    check_max_memory(max_memory)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise ValueError(f"batch: expected a positive whole number, got {batch!r}")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise ValueError(f"workers: expected a positive whole number, got {workers!r}")
    if worker_wait is not None and not (
        isinstance(worker_wait, (int, float)) and not isinstance(worker_wait, bool)
    ):
        raise ValueError(f"worker_wait: expected a number of seconds, got {worker_wait!r}")
    if worker_wait is not None and not 0 < worker_wait < float("inf"):
        raise ValueError(f"worker_wait: expected a positive number of seconds, got {worker_wait}")
    if testbed:
        given = {
            "workers": workers,
            "scheduler": scheduler,
            "jobqueue": jobqueue,
            "client": client,
            "batch": batch,
        }
        used = [name for name, value in given.items() if value is not None]
        if used:
            raise ValueError(
                f"testbed: runs go one at a time to this machine's kernel; {used[0]} does not apply"
            )
    definition = load(scenario, grid=grid, zip=zip, seeds=seeds, tables=tables)
    prepared = None
    if testbed:
        from plait.testbed import sweep as kernel_sweep

        # Every run planned and the machine checked before the folder is made.
        prepared = kernel_sweep.prepare(definition)
        runs = prepared.runs
    else:
        runs = definition.runs(max_memory)
    # Where the runs go is checked, and an existing scheduler reached, before anything is
    # created: a mistake there leaves no folder behind.
    own_client = None
    if client is None:
        check_options(scheduler, jobqueue)
        if scheduler is not None:
            client = own_client = connect_scheduler(scheduler)
    else:
        scheduler = None
    temporary = out is None
    try:
        root = Path(tempfile.mkdtemp(prefix="plait-sweep-")) if temporary else Path(out)
        store = Store(root, definition.tables)
        store.open(fresh=fresh)
    except BaseException:
        if own_client is not None:
            own_client.close()
        raise
    try:
        if on_start is not None:
            # After the folder is known to be usable: a refused --out is the only message.
            on_start(definition, runs)
        if prepared is not None:
            summary = kernel_sweep.execute(
                definition,
                prepared,
                store,
                progress,
                lambda extra: {
                    **definition.identity(),
                    "parameters": definition.parameters,
                    "token": uuid.uuid4().hex,
                    **extra,
                },
            )
        else:
            summary = _run(
                definition,
                runs,
                store,
                workers,
                scheduler,
                jobqueue,
                client,
                batch,
                max_memory,
                progress,
                worker_wait,
            )
        result = SweepResult(root, summary, runs, definition.tables)
        if temporary:
            # Read everything before the folder goes.
            frames = {t: result.table(t) for t in definition.tables}
            result = _InMemory(root, summary, runs, definition.tables, frames)
        return result
    finally:
        if own_client is not None:
            own_client.close()
        store.close()
        if temporary:
            from plait.sweeps.store import remove_tree

            remove_tree(root)


class _InMemory(SweepResult):
    def __init__(self, path, summary, runs, tables, frames) -> None:
        super().__init__(path, summary, runs, tables)
        self._frames = frames

    def table(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            raise ValueError(f"table {name!r} was not stored (stored: {', '.join(self.tables)})")
        return self._frames[name]


def _run(
    definition: Sweep,
    runs: list[Run],
    store: Store,
    workers: int | None,
    scheduler: str | None,
    jobqueue: JobQueue | None,
    client: Any,
    batch: int | None,
    max_memory: int | None,
    progress: ProgressSink | None,
    worker_wait: float | None,
) -> Summary:
    keys = [r.key for r in runs]
    present = store.present(keys)
    # Workers that find this token in the folder's manifest write their runs' files there
    # themselves (see plait.sweeps.worker).
    token = uuid.uuid4().hex
    store.write_manifest(
        {
            **definition.identity(),
            "parameters": definition.parameters,
            "runs": len(runs),
            "keys": keys,
            "token": token,
        }
    )
    summary = Summary(total=len(runs), reused=len(present))
    summary.not_in_sweep = len(store.stored_keys() - set(keys))
    todo = [r for r in runs if r.key not in present]
    progress = progress or ProgressSink()
    started = time.perf_counter()

    def make_batch(chunk: list[Run]) -> Batch:
        return Batch(
            definition.text,
            definition.source,
            definition.format,
            definition.tables,
            max_memory,
            tuple(chunk),
            str(store.root.resolve()),
            token,
        )

    def on_outcome(run: Run, outcome: Outcome) -> None:
        if outcome.stored:
            store.written(run.key)
            summary.done += 1
        elif outcome.tables is not None:
            store.write_run(run.key, outcome.tables)
            summary.done += 1
        else:
            record = {"run": run.key, **run.params, "seed": run.seed, "error": outcome.error}
            store.write_failure(run.key, record)
            summary.failed += 1
            summary.errors.append(record)
        progress.advance(outcome.ok)

    try:
        if todo:
            # Ctrl-C is acted on between results (see deferred_interrupt), cluster start and
            # close included.
            with deferred_interrupt() as interrupted:
                try:
                    with connect(workers, scheduler, jobqueue, client, worker_wait) as cluster:
                        summary.cluster = cluster.description
                        summary.dashboard = cluster.dashboard
                        progress.start(len(runs), len(present), cluster)
                        execute(cluster, make_batch, todo, on_outcome, batch, interrupted)
                except Exception:
                    # Ctrl-C while local workers start reaches them too: they fail to start.
                    if interrupted.is_set():
                        raise KeyboardInterrupt from None
                    raise
        else:
            progress.start(len(runs), len(present), None)
    except KeyboardInterrupt:
        summary.interrupted = True
        # Workers write their runs themselves: what they stored while the sweep stopped is
        # counted from the folder (the cluster is closed by now). A worker that a signal
        # ended while it wrote (SIGTERM reaches the whole process group) left a temporary.
        store.remove_partials()
        stored = len(store.present([r.key for r in todo]))
        summary.done = max(summary.done, stored)
        raise _Interrupted(summary) from None
    finally:
        summary.wall_seconds = time.perf_counter() - started
        progress.stop()
    return summary


def open_results(path: str | os.PathLike) -> SweepResult:
    """The results of the sweep last run into the folder `path` (from its ``sweep.json``)."""
    import json

    root = Path(path)
    try:
        manifest = json.loads((root / "sweep.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise StoreError(f"{root}: no sweep results there ({e})") from None
    tables = tuple(manifest["tables"])
    store = Store(root, tables)
    keys = manifest["keys"]
    present = store.present(keys)
    runs = [Run(k, -1, {}, ()) for k in keys]
    errors = store.failures(keys)
    summary = Summary(total=len(keys), reused=len(present), failed=len(errors), errors=errors)
    return SweepResult(root, summary, runs, tables)
