"""Experiments that reproduce the papers' claims: each is registered here by name and turns
:class:`Options` into a :class:`plait.report.Section` (claims with the paper's value, plait's
value over seeds and a verdict, figures and tables). `plait reproduce NAME|all` runs them and
writes one HTML report.

An experiment module calls :func:`register` when imported, and is listed in :data:`MODULES`
(by name, so that the command line knows the names without importing the experiments).
Packet-level runs go through :func:`plait.sweep`, so they use every core or a cluster and
resume from the runs already stored in the experiment's folder.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

#: Experiment name -> the module that registers it, in the report's order.
MODULES = {
    "parallel-tcp": "plait.experiments.parallel_tcp_claims",
    "linux-fidelity": "plait.experiments.linux_fidelity",
    "yang-amer-2013": "plait.experiments.yang_amer_2013",
    "coupled-basics": "plait.experiments.coupled_basics",
    "mpfast": "plait.experiments.mpfast",
    "multfrc": "plait.experiments.multfrc",
    "mpat": "plait.experiments.mpat",
    "ns2-agreement": "plait.experiments.ns2_agreement",
}


@dataclass
class Options:
    """How to run an experiment: where its results go, the seeds, and where runs go."""

    out: Path
    seeds: list[int]
    quick: bool = False
    fresh: bool = False
    #: Keyword arguments for :func:`plait.sweep` (workers, scheduler, jobqueue, batch).
    where: dict[str, Any] = field(default_factory=dict)
    #: A :class:`plait.sweeps.ProgressSink`, or None.
    progress: Any = None


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    paper: str
    #: Runs the experiment and returns its report section: `reproduce(options)`, or
    #: `reproduce(options, settings)` with settings of its own (a declared experiment's).
    reproduce: Callable[..., Any]
    #: Packet-level runs it makes with these options (for progress bars).
    runs: Callable[..., int]
    #: A declared experiment's settings for the command line's options
    #: (:mod:`plait.experiments.framework`), or None.
    settings: Callable[[Options], Any] | None = None

    def with_settings(self, settings: Callable[[Options], Any]) -> Experiment:
        """The same experiment with other settings for the command line's options (a test's
        smaller runs, passed in rather than patched into the module)."""
        if self.settings is None:
            raise ValueError(f"experiment {self.name!r} takes no settings")
        return replace(
            self,
            reproduce=lambda options, s=None: self.reproduce(
                options, settings(options) if s is None else s
            ),
            runs=lambda options, s=None: self.runs(options, settings(options) if s is None else s),
            settings=settings,
        )


_REGISTRY: dict[str, Experiment] = {}


class RunsFailed(RuntimeError):
    """Some of an experiment's packet-level runs failed: each is recorded in its sweep's
    folder (`failures/`), the others are stored, and the next call runs the failed ones
    again. Not a mistake in the command line: `plait reproduce` exits 1, as `plait sweep`
    does when runs fail."""


def sweep_all(name: str, scenario: Any, grid: dict[str, list], **kwargs: Any) -> Any:
    """Runs an experiment's packet-level sweep through :func:`plait.sweep` (`kwargs` go there)
    and returns its result; a failed run fails the experiment (:class:`RunsFailed`), with the
    commonest reason."""
    from plait.sweeps import sweep

    result = sweep(scenario, grid=grid, **kwargs)
    if result.summary.failed:
        reason, count = result.summary.reasons()[0]
        raise RunsFailed(f"{name}: {result.summary.failed} runs failed ({count}: {reason})")
    return result


def register(experiment: Experiment) -> Experiment:
    if experiment.name in _REGISTRY and _REGISTRY[experiment.name] is not experiment:
        raise ValueError(f"experiment {experiment.name!r} registered twice")
    _REGISTRY[experiment.name] = experiment
    return experiment


def experiments() -> dict[str, Experiment]:
    """Every registered experiment by name, in :data:`MODULES` order."""
    for module in MODULES.values():
        importlib.import_module(module)
    return {name: _REGISTRY[name] for name in MODULES}


def error_bars(centre: Any, low: Any, high: Any) -> Any:
    """Asymmetric error bars for matplotlib's `errorbar(yerr=...)`: a 2 x n array of
    `centre - low` and `high - centre`, where `centre` is a mean over seeds and `low`, `high`
    the lowest and highest seed.

    A mean lies within [min, max], but a computed one need not: the mean of k equal values x
    is the rounded sum of k copies of x divided by k, which differs from x in its last bits
    for most x when k is not a power of two (5 seeds of 0.83 give a mean 1.1e-16 below 0.83),
    and matplotlib refuses any negative error. A difference of that size (at most 1e-9 of the
    values) is clipped to 0; a centre farther outside [low, high] is a bug of the caller, and
    raises RuntimeError. NaN (a setting without runs) stays NaN, which matplotlib skips."""
    import numpy as np

    centre, low, high = (np.asarray(v, dtype=float) for v in (centre, low, high))
    below, above = centre - low, high - centre
    scale = np.fmax(np.fmax(np.abs(low), np.abs(high)), np.abs(centre))
    tolerance = 1e-9 * np.where(np.isnan(scale), 0.0, scale)
    for part in (below, above):
        if (part < -tolerance).any():
            raise RuntimeError(
                f"error bars: a centre outside its [low, high] range "
                f"(centre {centre.tolist()}, low {low.tolist()}, high {high.tolist()})"
            )
    return np.stack([np.where(below < 0, 0.0, below), np.where(above < 0, 0.0, above)])


def save_png(fig: Any, path: Path, dpi: int = 100) -> None:
    """Writes a matplotlib figure as a PNG without a timestamp or software tag (the same
    figure, the same bytes) and closes it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=dpi, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def write_tables_and_figure(
    data: dict[str, Any], out_dir: Any, files: dict[str, str], figure: Callable[[dict], Any]
) -> dict[str, Path]:
    """An experiment's outputs, atomically: each table `data[kind]` as CSV under `files[kind]`
    (every kind but "png") and `figure(data)` as `files["png"]`, into `out_dir` (a path, or a
    :class:`plait.output.FolderTarget` already checked). Returns the paths by kind."""
    from plait.output import FolderTarget, Outputs

    outputs = Outputs()
    folder = (
        out_dir
        if isinstance(out_dir, FolderTarget)
        else outputs.folder("--out", out_dir, tuple(files.values()))
    )
    with outputs.writing() as tx:
        for kind, name in files.items():
            if kind != "png":
                tx.write_bytes(folder.file(name), data[kind].to_csv(index=False).encode())
        tx.write_with(folder.file(files["png"]), lambda p: save_png(figure(data), p))
    return {kind: folder.path / name for kind, name in files.items()}


def runs_summary(
    summaries: Any,
    seeds: list[int],
    started: float,
    out: Path,
    files: dict[str, Path],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The "runs" block of an experiment's report section: its sweeps' counts (`summaries`,
    the sweep summaries by name), seeds, `extra` lines, wall time since `started`
    (`time.perf_counter()`), where the runs are stored (`out`) and the files written."""
    import time

    sweeps = list(summaries.values())
    return {
        "packet runs": sum(s.total for s in sweeps),
        "run now": sum(s.done for s in sweeps),
        "stored earlier": sum(s.reused for s in sweeps),
        "failed": sum(s.failed for s in sweeps),
        "seeds": ", ".join(str(s) for s in seeds),
        **(extra or {}),
        "wall time": f"{time.perf_counter() - started:.0f} s",
        "results": str(out),
        "tables and figures": ", ".join(str(p) for p in files.values()),
    }
