"""`plait bench sweep`: what the sweep engine gains and costs on short runs.

The same runs (the dumbbell scenario, experiments/dumbbell/dumbbell.toml, for a few simulated
seconds, one run per seed) are made three ways: one after another in this process
(:func:`plait.run`, the baseline), as a sweep with batches sized by the engine, and as a sweep
with one run per task. The figures: runs per second of each, the speed-up over the baseline,
and the engine's cost per run (sweep wall time times workers, less the runs' own time, per
run), which tells whether batching tiny runs pays.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from plait import _core
from plait.api import _load
from plait.sweeps import sweep

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

    started = time.perf_counter()
    run_seconds = 0.0
    for seed in seeds:
        t = time.perf_counter()
        _core.run_scenario(text, source, fmt, seed, pairs, None)
        run_seconds += time.perf_counter() - t
    sequential = time.perf_counter() - started

    report = {
        "runs": runs,
        "simulated_seconds_per_run": duration_s,
        "flows": flows,
        "workers": workers,
        "sequential_seconds": sequential,
        "sequential_runs_per_second": runs / sequential,
        "mean_run_seconds": run_seconds / runs,
    }
    for name, batch in (("auto", None), ("one_per_task", 1)):
        with tempfile.TemporaryDirectory(prefix="plait-bench-") as out:
            t = time.perf_counter()
            result = sweep(DUMBBELL, grid=grid, seeds=seeds, out=out, workers=workers, batch=batch)
            wall = time.perf_counter() - t
        if result.summary.done != runs:
            raise RuntimeError(f"sweep stored {result.summary.done} of {runs} runs")
        report[f"sweep_{name}_seconds"] = wall
        report[f"sweep_{name}_runs_per_second"] = runs / wall
        report[f"sweep_{name}_speedup"] = sequential / wall
        # Worker time not spent simulating, per run (cluster start-up included).
        report[f"sweep_{name}_overhead_ms_per_run"] = 1e3 * (wall * workers - run_seconds) / runs
    return report
