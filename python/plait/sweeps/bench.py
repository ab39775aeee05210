"""`plait bench sweep`: what the sweep engine gains and costs on short runs.

The same runs (the dumbbell scenario, experiments/dumbbell/dumbbell.toml, for a few simulated
seconds, one run per seed) are made three ways: one after another in this process (the
baseline), as a sweep with batches sized by the engine, and as a sweep with one run per task.

The baseline is timed twice: the simulations alone (``_core.run_scenario``), and the same
work a sweep's worker does for each run (the simulation, its table as Parquet with the run's
parameters, written atomically under its key: :func:`plait.sweeps.worker.run_batch`), which is
what the speed-up is reported against. The figures: runs per second of each, the speed-ups,
and the engine's cost per run (sweep wall time times workers, less the baseline's time for the
same work, per run), which tells whether batching tiny runs pays.

Dask is imported before the clock starts (a command-line sweep pays that once, as it pays
Python's own start): its import time is reported on its own, measured in a fresh interpreter.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plait import _core
from plait.api import _load, prepare_numpy
from plait.sweeps import sweep
from plait.sweeps.spec import load
from plait.sweeps.store import MANIFEST
from plait.sweeps.worker import Batch, run_batch

DUMBBELL = Path(__file__).resolve().parents[3] / "experiments" / "dumbbell" / "dumbbell.toml"


def bench_sweep(runs: int, duration_s: float, flows: int, workers: int | None) -> dict:
    text, source, fmt = _load(DUMBBELL)
    pairs = [
        ("simulation.duration", f"{duration_s:g}s"),
        ("simulation.warmup", "0s"),
        ("flow.bulk.count", str(flows)),
        ("flow.bulk.start", '{uniform = ["0s", "0.1s"]}'),
    ]
    grid = {key: [value] for key, value in pairs}
    seeds = list(range(1, runs + 1))
    workers = workers or os.cpu_count() or 1

    prepare_numpy()
    started = time.perf_counter()
    for seed in seeds:
        _core.run_scenario(text, source, fmt, seed, pairs, None)
    simulations = time.perf_counter() - started

    definition = load(DUMBBELL, grid=grid, seeds=seeds)
    with tempfile.TemporaryDirectory(prefix="plait-bench-") as out:
        for table in definition.tables:
            (Path(out) / table).mkdir()
        (Path(out) / MANIFEST).write_text(json.dumps({"token": "bench"}))
        batch = Batch(
            definition.text,
            definition.source,
            definition.format,
            definition.tables,
            None,
            tuple(definition.runs()),
            out,
            "bench",
        )
        # A first run untimed: the sweep's workers start with Arrow's Parquet code imported.
        warm = run_batch(dataclasses.replace(batch, runs=batch.runs[:1], store=None))
        if warm[0].error:
            raise RuntimeError(warm[0].error)
        started = time.perf_counter()
        outcomes = run_batch(batch)
        sequential = time.perf_counter() - started
    if not all(o.stored for o in outcomes):
        raise RuntimeError("the baseline did not store every run")

    report = {
        "runs": runs,
        "simulated_seconds_per_run": duration_s,
        "flows": flows,
        "workers": workers,
        "simulations_seconds": simulations,
        "mean_run_seconds": simulations / runs,
        "sequential_seconds": sequential,
        "sequential_runs_per_second": runs / sequential,
    }
    report["dask_import_seconds"] = _import_seconds("distributed")
    import distributed  # noqa: F401

    for name, size in (("auto", None), ("one_per_task", 1)):
        with tempfile.TemporaryDirectory(prefix="plait-bench-") as out:
            t = time.perf_counter()
            result = sweep(DUMBBELL, grid=grid, seeds=seeds, out=out, workers=workers, batch=size)
            wall = time.perf_counter() - t
        if result.summary.done != runs:
            raise RuntimeError(f"sweep stored {result.summary.done} of {runs} runs")
        report[f"sweep_{name}_seconds"] = wall
        report[f"sweep_{name}_runs_per_second"] = runs / wall
        report[f"sweep_{name}_speedup"] = sequential / wall
        report[f"sweep_{name}_speedup_over_simulations"] = simulations / wall
        # Worker time not spent on the baseline's work, per run (cluster start-up included).
        report[f"sweep_{name}_overhead_ms_per_run"] = 1e3 * (wall * workers - sequential) / runs
    return report


def _import_seconds(module: str) -> float:
    """Seconds a fresh interpreter takes to import `module` (Python's own start excluded)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip())
