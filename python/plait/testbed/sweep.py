"""`plait sweep --testbed`: a sweep's runs on the kernel testbed, one after another in this
process, stored in the sweep's results folder exactly as simulated runs are (docs/testbed.md,
"Sweeps on the kernel"; docs/sweeps.md).

- **Before anything runs** every run is planned (:func:`plait.testbed.plan_scenario`): a point
  the testbed refuses is one line naming the point, the flow or link and the key. Then the
  machine is checked (root, network namespaces, TUN, `ip`, `ethtool`, the binaries, MPTCP if a
  point needs it, each controller in this kernel). Nothing is written before that.
- **Keys.** A kernel run's key hashes the resolved scenario, plait's version, the source
  (`kernel`) and the kernel's release (:func:`plait.sweeps.spec.run_key`): a kernel run and a
  simulation of the same scenario and seed never share a key, and a sweep on another kernel
  runs again.
- **Tables.** Each stored table has the simulator's columns and types (null where the kernel
  cannot give them), a `source` column (`kernel`) after the run's key, parameters and seed, and
  the testbed's own columns (kernel release, emulator lateness, `timing_flagged`) after the
  simulator's; every file also carries the run's `testbed` summary as JSON in its schema
  metadata (key `plait.testbed`). `link_series`, `path_series`, `picks` and `drops` are not
  measured on the kernel and are refused.
- **One run at a time** (a run needs the whole machine to keep time): runs wait for the
  testbed's lock while another testbed run holds it. A run that fails on the kernel side is
  recorded in `failures/` like a simulated failure and the sweep goes on; Ctrl-C ends the run
  in progress (its namespaces removed by the runner), stores nothing of it, and a second call
  skips the stored runs.
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from plait.sweeps.spec import Run, Sweep, SweepError, _describe
from plait.testbed import runner
from plait.testbed.plan import Plan, Refusal, plan_scenario
from plait.testbed.runner import LOCK_PATH, TestbedResult, run_plan

if TYPE_CHECKING:
    from plait.sweeps.progress import ProgressSink, Summary
    from plait.sweeps.store import Store

#: The value of the `source` column of every table a kernel run stores.
SOURCE = "kernel"
#: Schema metadata key of a kernel run's `testbed` summary (JSON) in each of its files.
METADATA_KEY = b"plait.testbed"
#: The tables a kernel run gives (the testbed measures no link or path series, picks, drops).
TABLES = ("flows", "links", "paths", "flow_series")
#: Real seconds a testbed run takes besides its scenario's duration: namespaces and emulator
#: set up (a few tenths of a second), the runner's 2 s lead before the run's start (4 s ahead
#: of the set-up with link events), the endpoints and the emulator stopped and read. Measured
#: on this 2-vCPU machine, busy with builds: 2.4-2.8 s for one flow.
SETUP_SECONDS = 2.8
#: Extra lead of a run with link events (the runner fixes the start 4 s ahead of the set-up).
EVENTS_EXTRA_SECONDS = 2.0

_F, _U, _S, _B = pa.float64(), pa.uint64(), pa.large_string(), pa.bool_()
#: Marks a column of names (the simulator writes a dictionary of them).
_NAMES = pa.dictionary(pa.int32(), pa.large_string())
#: The testbed's own columns of each row of flows, links and paths (runner.TIMING_COLUMNS).
_TIMING = [(c, {str: _S, float: _F, bool: _B}[t]) for c, t in runner.TIMING_COLUMNS.items()]
#: Columns and types of each table: the simulator's (plait.sweeps.arrow, checked against a
#: simulation in tests/python/test_testbed_sweep.py), then the testbed's own.
SCHEMAS: dict[str, list[tuple[str, pa.DataType]]] = {
    "flows": [
        *[(c, _S) for c in ("name", "kind", "cc", "src", "dst", "aggregate_name")],
        ("start_s", _F),
        ("goodput_bps", _F),
        ("throughput_bps", _F),
        *[
            (c, _U)
            for c in (
                "bytes_delivered",
                "packets_sent",
                "retransmissions",
                "fast_retransmits",
                "timeouts",
                "drops",
                "rtt_samples",
            )
        ],  # fmt: skip
        *[
            (c, _F)
            for c in (
                "rtt_mean_s",
                "rtt_min_s",
                "rtt_p50_s",
                "rtt_p95_s",
                "rtt_p99_s",
                "rtt_max_s",
                "completion_s",
                "rwnd_blocked_s",
                "send_buffer_blocked_s",
                "delivery_delay_mean_s",
                "delivery_delay_max_s",
            )
        ],  # fmt: skip
        ("reinjected_bytes", _U),
        ("max_out_of_order_bytes", _U),
        ("loss_event_rate", _F),
        ("packets_per_loss_event", _F),
        ("allowed_rate_bps", _F),
        ("client_error", _S),
        *_TIMING,
    ],
    "links": [
        *[(c, _S) for c in ("name", "direction", "from", "to")],
        ("rate_bps", _U),
        ("utilization", _F),
        *[(c, _U) for c in ("tx_packets", "tx_bytes", "drops", "loss_drops", "down_drops")],
        ("mean_queue_packets", _F),
        ("mean_queue_bytes", _F),
        ("max_queue_packets", _U),
        *_TIMING,
    ],
    "paths": [
        ("flow", _NAMES),
        ("path", _U),
        ("route", _S),
        ("reverse_route", _S),
        ("packets_sent", _U),
        ("throughput_bps", _F),
        *[(c, _U) for c in ("fast_retransmits", "timeouts", "rtt_samples")],
        ("rtt_mean_s", _F),
        ("rtt_min_s", _F),
        *[(c, _U) for c in ("bytes_sent", "retransmissions", "new_data_bytes", "reinjected_bytes")],
        ("data_share", _F),
        ("cwnd_mean_bytes", _F),
        ("cwnd_max_bytes", _U),
        ("penalisations", _U),
        ("src_addr", _S),
        ("dst_addr", _S),
        ("wire_packets", _U),
        ("wire_bytes", _U),
        ("wire_bps", _F),
        ("wire_share", _F),
        *_TIMING,
    ],
    "flow_series": [
        ("time_s", _F),
        ("flow", _NAMES),
        *[
            (c, _F)
            for c in (
                "cwnd_bytes",
                "srtt_s",
                "goodput_bps",
                "allowed_rate_bps",
                "loss_event_rate",
                "packets_per_loss_event",
            )
        ],  # fmt: skip
    ],
}


def kernel_release() -> str:
    """This machine's kernel release (``uname -r``): part of every kernel run's key."""
    return os.uname().release


def check_machine() -> None:
    """Refuses (:class:`Refusal`, one line) where the testbed cannot run: not root, no network
    namespaces, no TUN device, no `ip` or `ethtool`, or the testbed's binaries missing."""
    runner.check_machine()
    runner._binary("plait-linkemu")
    runner._binary("plait-tcpflow")


@dataclass
class Prepared:
    """A sweep ready for the kernel: its runs (keyed for the kernel) and each run's plan."""

    runs: list[Run]
    plans: dict[str, Plan]
    kernel: str


def prepare(definition: Sweep) -> Prepared:
    """Every run of `definition` keyed for this kernel and planned, then the machine checked;
    a :class:`SweepError` (one line: the file, the point and seed, the flow or link and the
    key) for the first point the testbed refuses, a ValueError (`testbed: ...`) for a machine
    that cannot run it. Nothing is created."""
    source = definition.source
    unmeasured = [t for t in definition.tables if t not in TABLES]
    if unmeasured:
        raise SweepError(
            f"{source}: sweep.tables: `{unmeasured[0]}` is not measured on the kernel testbed "
            f"(it stores: {', '.join(TABLES)})"
        )
    release = kernel_release()
    plans: dict[str, Plan] = {}

    def each(run: Run, canonical: dict[str, Any]) -> None:
        try:
            plans[run.key] = plan_scenario(copy.deepcopy(canonical), run.seed)
        except Refusal as e:
            raise SweepError(f"{source}: sweep point {_describe(run)}: {e}") from None

    # The simulator's memory guard does not apply: nothing is simulated.
    runs = definition.runs(None, kernel=release, each=each)
    try:
        check_machine()
        if (
            any(f.subflows for p in plans.values() for f in p.flows)
            and not Path("/proc/sys/net/mptcp").is_dir()
        ):
            raise Refusal("this kernel has no MPTCP (/proc/sys/net/mptcp)")
    except Refusal as e:
        raise ValueError(f"testbed: {e}") from None
    available = getattr(runner.check_machine, "ccs", None)
    if available is not None:
        for run in runs:
            for f in plans[run.key].flows:
                if f.cc not in available and f.cc != "reno":
                    raise SweepError(
                        f"{source}: sweep point {_describe(run)}: flow {f.name}: cc `{f.cc}` is "
                        f"not available in this kernel ({', '.join(available)})"
                    )
    return Prepared(runs, plans, release)


def estimate_seconds(plans: list[Plan]) -> float:
    """Real seconds the runs of `plans` take, one after another: each run's duration and
    :data:`SETUP_SECONDS` (more with link events)."""
    return sum(
        p.duration_ns / 1e9 + SETUP_SECONDS + (EVENTS_EXTRA_SECONDS if p.events else 0.0)
        for p in plans
    )


# ---- Storing a run --------------------------------------------------------------------------


def _column(values: list[Any], kind: pa.DataType) -> pa.Array:
    if kind == _NAMES:
        return pa.array(values, type=_S).dictionary_encode()
    if pa.types.is_integer(kind):
        # Counters from the emulator's JSON may come as whole floats.
        values = [int(v) if isinstance(v, float) and v.is_integer() else v for v in values]
    return pa.array(values, type=kind, from_pandas=True)


def arrow_table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """One kernel table from the runner's rows: `source`, the simulator's columns with its
    types (null where a row has nothing), the testbed's own columns, then any column the
    runner gives that :data:`SCHEMAS` does not know (its type inferred). A table without
    rows (the `paths` of a run without MPTCP flows) has Arrow's null type in every column, as
    the simulator's empty tables have no meaningful types either (its empty `paths` has a
    float `route`): null merges with any type, so such files read as one table with the
    others, simulated or not."""
    schema = SCHEMAS[name]
    if not rows:
        names = ["source", *(c for c, _ in schema)]
        return pa.Table.from_arrays([pa.nulls(0)] * len(names), names=names)
    known = {c for c, _ in schema}
    names = ["source"]
    arrays = [pa.array([SOURCE] * len(rows), type=_S)]
    for column, kind in schema:
        names.append(column)
        arrays.append(_column([r.get(column) for r in rows], kind))
    for column in dict.fromkeys(c for r in rows for c in r if c not in known):
        names.append(column)
        arrays.append(pa.array([r.get(column) for r in rows], from_pandas=True))
    return pa.Table.from_arrays(arrays, names=names)


def rows(result: TestbedResult) -> dict[str, list[dict[str, Any]]]:
    """The runner's rows of each table the testbed gives."""
    return {
        "flows": list(result.flows),
        "links": list(result.links),
        "paths": list(result.summary.get("paths") or []),
        "flow_series": list(result.flow_series),
    }


def run_tables(result: TestbedResult, run: Run, tables: tuple[str, ...]) -> dict[str, bytes]:
    """The Parquet bytes of each stored table of one kernel run, as a sweep stores them (the
    run's key, parameters and seed in front; the `testbed` summary in the metadata)."""
    from plait.sweeps.worker import _parquet

    testbed = {"source": SOURCE, **(result.summary.get("testbed") or {})}
    metadata = {METADATA_KEY: json.dumps(testbed, default=str).encode()}
    by_table = rows(result)
    return {t: _parquet(arrow_table(t, by_table[t]), run, metadata) for t in tables}


# ---- Running ---------------------------------------------------------------------------------


@dataclass
class KernelRun:
    """What the progress sink hears about one kernel run."""

    index: int
    todo: int
    run: Run
    seconds: float
    result: TestbedResult | None = None
    error: str | None = None


def _wait_for_lock(progress: ProgressSink) -> None:
    """Waits until no other testbed run holds the lock (a blocking flock; Ctrl-C ends it)."""
    notice = getattr(progress, "kernel_wait", None)
    if notice is not None:
        notice(f"waiting for another plait testbed run to end (lock {LOCK_PATH})")
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _run_one(plan: Plan, progress: ProgressSink) -> TestbedResult:
    """`plan` on the kernel; while another testbed run holds the lock, waits for it."""
    while True:
        try:
            return run_plan(plan)
        except Refusal as e:
            if LOCK_PATH not in str(e):
                raise
        _wait_for_lock(progress)


def _error_text(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return f"{type(e).__name__}: {text.splitlines()[0]}"


def execute(
    definition: Sweep,
    prepared: Prepared,
    store: Store,
    progress: ProgressSink | None,
    manifest: Callable[[dict[str, Any]], dict[str, Any]],
) -> Summary:
    """Runs the runs of `prepared` not yet stored, one after another, storing each as it ends
    (see the module doc). Ctrl-C (or SIGTERM, SIGHUP in the command line) raises
    :class:`plait.sweeps.progress._Interrupted` carrying the summary; the run in progress is
    dropped."""
    from plait.sweeps.engine import deferred_interrupt
    from plait.sweeps.progress import ProgressSink, Summary, _Interrupted

    runs = prepared.runs
    keys = [r.key for r in runs]
    present = store.present(keys)
    store.write_manifest(
        manifest({"source": SOURCE, "kernel": prepared.kernel, "runs": len(runs), "keys": keys})
    )
    summary = Summary(total=len(runs), reused=len(present))
    summary.not_in_sweep = len(store.stored_keys() - set(keys))
    summary.cluster = f"kernel testbed ({prepared.kernel}), one run at a time"
    todo = [r for r in runs if r.key not in present]
    progress = progress or ProgressSink()
    started = time.perf_counter()
    hook = getattr(progress, "kernel_start", None)
    if hook is not None:
        hook(len(todo), estimate_seconds([prepared.plans[r.key] for r in todo]), prepared.kernel)
    progress.start(len(runs), len(present), None)
    try:
        for i, run in enumerate(todo):
            began = time.perf_counter()
            result: TestbedResult | None = None
            tables: dict[str, bytes] | None = None
            try:
                result = _run_one(prepared.plans[run.key], progress)
                tables = run_tables(result, run, definition.tables)
                error = None
            except Exception as e:  # a kernel-side failure: recorded, the sweep goes on
                error = _error_text(e)
            # Stored whole or not at all: a stop signal now is acted on once the files are in.
            with deferred_interrupt() as interrupted:
                if tables is not None:
                    store.write_run(run.key, tables)
                    summary.done += 1
                else:
                    record = {"run": run.key, **run.params, "seed": run.seed, "error": error}
                    store.write_failure(run.key, record)
                    summary.failed += 1
                    summary.errors.append(record)
                progress.advance(tables is not None)
                hook = getattr(progress, "kernel_run", None)
                if hook is not None:
                    hook(KernelRun(i, len(todo), run, time.perf_counter() - began, result, error))
            if interrupted.is_set():
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        summary.interrupted = True
        store.remove_partials()
        raise _Interrupted(summary) from None
    finally:
        summary.wall_seconds = time.perf_counter() - started
        progress.stop()
    return summary


def describe(run: Run) -> str:
    """The run's point and seed, as in error messages: ``(link.x.rate='10Mbps', seed 1)``."""
    return _describe(run)
