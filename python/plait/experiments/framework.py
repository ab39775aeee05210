"""What every experiment shares: the `reproduce()` skeleton, the text of a value over seeds
(:func:`spread`) and the saving of a figure (:func:`save_figure`).

An experiment is declared as data (:class:`Declared`): its settings (a dataclass with the full
version's values as defaults, and :attr:`Declared.settings` choosing them for the command
line's options), its sweep (:attr:`Declared.measure`), its claims, figures, tables and setup
text, each a function of the measured data and the settings (`f(data, settings)`).
:func:`reproduce` runs it in one order: measure, write the tables and figures, the claims,
the report section. Tests pass smaller settings in (``EXPERIMENT.reproduce(options,
settings)``) instead of patching module globals.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plait.experiments import Experiment, Options, register, runs_summary, save_png


def spread(values: Sequence[float], digits: int = 3, fixed: bool = False, missing: str = "") -> str:
    """`mean ± sd (k seeds)` over the seeds that have a value (NaN: none), or the value for
    one seed; the seeds without a value are counted (`, 2 never` with `missing="never"`),
    never folded into the mean.

    `digits`: significant digits of the mean (the sd gets 2), or with `fixed` decimals of both.
    `missing`: the word for a seed without a value ("never" for a time never reached); an empty
    word says "without a value"."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    lacking = int(np.isnan(v).sum())
    word = missing or "without a value"
    note = f", {lacking} {word}" if lacking else ""
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return f"{missing or 'no value'} ({lacking} seeds)"
    mean_format = f".{digits}f" if fixed else f".{digits}g"
    sd_format = f".{digits}f" if fixed else ".2g"
    if len(v) == 1:
        return f"{v[0]:{mean_format}} (1 seed{note})"
    sd = v.std(ddof=1)
    return f"{v.mean():{mean_format}} ± {sd:{sd_format}} ({len(v)} seeds{note})"


def save_figure(fig: Any, path: Path) -> None:
    """A report's figure as a PNG of 110 dpi (see :func:`plait.experiments.save_png`)."""
    save_png(fig, path, dpi=110)


@dataclass(frozen=True)
class Declared:
    """An experiment as data: what it measures, claims, draws and says, each a function of the
    settings or of the measured data (a dict of tables by name)."""

    name: str
    title: str
    paper: str
    #: The settings for the command line's options (full or quick, its seeds).
    settings: Callable[[Options], Any]
    #: Packet-level runs with these settings (for progress bars).
    runs: Callable[[Any], int]
    #: Runs the sweeps: `measure(settings, out, fresh, progress, **where)` returns the data
    #: (tables by name) and the sweeps' summaries by name.
    measure: Callable[..., tuple[dict, dict]]
    #: Writes the tables and figures into a folder: `write(data, settings, out)` -> paths.
    write: Callable[[dict, Any, Path], dict[str, Path]]
    #: Each returns the claims on part of the data: `claim(data, settings)`.
    claims: tuple[Callable[[dict, Any], list], ...]
    #: The report's figures: `figures(data, settings)`.
    figures: Callable[[dict, Any], list]
    #: The report's tables, (title, frame): `tables(data, settings)`.
    tables: Callable[[dict, Any], list]
    #: The setup paragraph: `setup(data, settings)`.
    setup: Callable[[dict, Any], str]
    #: Extra lines of the runs block after "seeds": `runs_extra(data, summaries)` (or None).
    runs_extra: Callable[[dict, dict], dict] | None = None


def reproduce(declared: Declared, options: Options, settings: Any = None) -> Any:
    """The skeleton of every experiment: its sweeps with `settings` (by default
    `declared.settings(options)`), its tables and figures written into `options.out`, the
    claims, and the report section."""
    from plait.report import Section

    settings = declared.settings(options) if settings is None else settings
    started = time.perf_counter()
    data, summaries = declared.measure(
        settings, options.out / "runs", options.fresh, options.progress, **options.where
    )
    files = declared.write(data, settings, options.out)
    claims = [c for claim in declared.claims for c in claim(data, settings)]
    return Section(
        name=declared.name,
        title=declared.title,
        paper=declared.paper,
        setup=declared.setup(data, settings),
        claims=claims,
        figures=declared.figures(data, settings),
        tables=declared.tables(data, settings),
        runs=runs_summary(
            summaries,
            settings.seeds,
            started,
            options.out / "runs",
            files,
            extra=declared.runs_extra(data, summaries) if declared.runs_extra else None,
        ),
    )


def register_declared(declared: Declared, title: str | None = None) -> Experiment:
    """Registers a declared experiment under its name (`title`: the registry's title, if it
    differs from the section's)."""
    return register(
        Experiment(
            name=declared.name,
            title=title or declared.title,
            paper=declared.paper,
            reproduce=lambda options, settings=None: reproduce(declared, options, settings),
            runs=lambda options, settings=None: declared.runs(
                declared.settings(options) if settings is None else settings
            ),
            settings=declared.settings,
        )
    )
