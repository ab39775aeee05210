"""What a sweep is: a scenario, the parameters it varies and the seeds, expanded into runs.

A sweep file is a scenario with a ``[sweep]`` table::

    [sweep]
    seeds = 10                      # seeds 1..10, or a list such as [3, 7, 11]
    grid = { "flow.bulk.count" = [1, 2, 5, 10], "link.bottleneck.queue.packets" = [5, 20] }
    zip = { "link.bottleneck.rate" = ["10Mbps", "1Gbps"], "link.bottleneck.delay" = ["9ms", "1ms"] }
    tables = ["flows"]              # result tables stored per run (default: flows)

``grid`` takes every combination of its lists, ``zip`` varies its lists together (all of one
length), and every point runs once per seed. Parameter paths are those of ``plait run --set``.

Every run is resolved and validated here, before any starts, so that a bad path, an empty list
or a value of the wrong type is one error naming the sweep file and the parameter. Each run is
keyed by a content hash of its resolved scenario (canonical JSON from the core, seed included)
and plait's version: the same run in another sweep, or written differently, has the same key.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plait import __core_id__, __version__, _core
from plait.api import TABLES, Scenario, _load, _toml_literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

#: Keys of the ``[sweep]`` table.
SWEEP_KEYS = ("seeds", "grid", "zip", "tables")
#: Seeds are unsigned 64-bit integers.
MAX_SEED = 2**64 - 1
#: Most runs in one sweep (a guard against a grid that multiplies out by mistake).
MAX_RUNS = 10_000_000
#: Parameters that the sweep sets itself.
RESERVED = {"simulation.seed": "give seeds in sweep.seeds, not as a parameter"}


class SweepError(ValueError):
    """A sweep definition is wrong: the message names the file and the sweep field."""


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its key, seed, parameter values (as written) and overrides."""

    key: str
    seed: int
    params: dict[str, Any]
    overrides: tuple[tuple[str, str], ...]


@dataclass
class Sweep:
    """A scenario with the parameters it varies, the seeds and the tables to store."""

    text: str
    source: str
    format: str
    grid: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)
    tables: tuple[str, ...] = ("flows",)

    @property
    def parameters(self) -> list[str]:
        """The swept parameter paths, grid first, in the order written."""
        return [*self.grid, *self.zip]

    def points(self) -> list[dict[str, Any]]:
        """Every combination of parameter values (grid product times zip rows)."""
        grid_rows = [
            dict(zip(self.grid, combo)) for combo in itertools.product(*self.grid.values())
        ]
        zip_len = len(next(iter(self.zip.values()))) if self.zip else 1
        zip_rows = [{p: values[i] for p, values in self.zip.items()} for i in range(zip_len)]
        return [{**g, **z} for g in grid_rows for z in zip_rows]

    def runs(
        self,
        max_memory: int | None = None,
        kernel: str | None = None,
        each: Callable[[Run, dict[str, Any]], None] | None = None,
    ) -> list[Run]:
        """Every run, points in order and seeds innermost; each point is resolved and
        validated by the core (a :class:`SweepError` for the first that fails). A point whose
        estimated memory exceeds `max_memory` bytes is keyed without being made (its flows
        are not expanded); its runs are refused where they run and recorded as failed.

        With `kernel` (a kernel release), the runs are the kernel testbed's and their keys
        are derived with it (:func:`run_key`), never equal to a simulation's. `each` is called
        with every run and its resolved scenario (seed set; the dict is reused for the next
        seed, so copy what is kept)."""
        runs: list[Run] = []
        seen: dict[str, Run] = {}
        # A parameter with whole and fractional numbers ([1, 1.5]) is a float column in every
        # run's file: files of one sweep must agree on a column's type to read as one table.
        values = {**self.grid, **self.zip}
        floats = {p for p, vs in values.items() if any(isinstance(v, float) for v in vs)}
        for point in self.points():
            params = [(path, _toml_literal(value)) for path, value in point.items()]
            # Any seed in TOML's range: the canonical form gets each run's own seed below.
            pairs = [*params, ("simulation.seed", "0")]
            try:
                canonical = json.loads(
                    _core.canonical_scenario(
                        self.text, self.source, self.format, pairs, max_memory=max_memory
                    )
                )
            except _core.ScenarioError as e:
                raise SweepError(_point_error(str(e), self.source, self.grid)) from None
            shown = {p: float(v) if p in floats else v for p, v in point.items()}
            for seed in self.seeds:
                canonical.setdefault("simulation", {})["seed"] = seed
                key = run_key(canonical, kernel)
                run = Run(key, seed, dict(shown), (*params, ("simulation.seed", str(seed))))
                if key in seen:
                    raise SweepError(
                        f"{self.source}: sweep: runs {_describe(seen[key])} and "
                        f"{_describe(run)} are the same scenario; remove one of the values"
                    )
                seen[key] = run
                runs.append(run)
                if each is not None:
                    each(run, canonical)
        return runs

    def identity(self) -> dict[str, Any]:
        """The sweep's definition, as recorded beside its results."""
        return {
            "scenario": self.source,
            "grid": self.grid,
            "zip": self.zip,
            "seeds": self.seeds,
            "tables": list(self.tables),
            "plait": __version__,
            "core": __core_id__,
        }


def run_key(canonical: Mapping[str, Any], kernel: str | None = None) -> str:
    """The content hash of a resolved scenario (seed included) and plait's version. A
    simulation also hashes the simulator's source identity (``plait.__core_id__``, hashed from
    the core's source at build time), so a run made by other simulator code is never reused,
    whatever the package version says. A run on the kernel testbed (`kernel`: the kernel's
    release, ``uname -r``) hashes where it ran instead (``"source": "kernel"`` and the
    release), so a kernel run and a simulation of the same scenario and seed never share a
    key, a run on another kernel is a new run, and a kernel run stays valid when the
    simulator changes."""
    fields: dict[str, Any] = {"scenario": canonical, "plait": __version__}
    if kernel is None:
        fields["core"] = __core_id__
    else:
        fields.update(source="kernel", kernel=kernel)
    identity = json.dumps(
        fields,
        sort_keys=True,
        separators=(",", ":"),
        allow_nan=False,
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


def _describe(run: Run) -> str:
    shown = ", ".join(f"{p}={v!r}" for p, v in run.params.items())
    return f"({shown}{', ' if shown else ''}seed {run.seed})"


def _point_error(message: str, source: str, grid: Mapping[str, Any]) -> str:
    """A core error about one point, pointed at the sweep parameter that caused it (the core
    names overrides as `--set KEY=VALUE`)."""

    def name(m: re.Match[str]) -> str:
        key = m.group(1)
        section = "grid" if key in grid else "zip"
        return f'sweep.{section}."{key}"' + (" = " if m.group(2) else "")

    return _SET.sub(name, message)


_SET = re.compile(r"--set ([^=:()\s]+)(=)?")


def load(
    scenario: Scenario,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Sequence[int] | None = None,
    tables: Sequence[str] | None = None,
) -> Sweep:
    """A :class:`Sweep` from a scenario (a file, possibly with a ``[sweep]`` table, or a dict)
    and the given fields, which replace the file's. Checks everything but the runs."""
    text, source, fmt = _load(scenario)
    table = _sweep_table(text, source, fmt)
    unknown = [k for k in table if k not in SWEEP_KEYS]
    if unknown:
        raise SweepError(
            f"{source}: sweep.{unknown[0]}: unknown field (expected one of: "
            f"{', '.join(SWEEP_KEYS)})"
        )
    given = {"grid": grid, "zip": zip, "seeds": seeds, "tables": tables}
    fields = {k: (v if v is not None else table.get(k)) for k, v in given.items()}
    out = Sweep(text, source, fmt)
    out.grid = _parameters(fields["grid"], "grid", source, "grid" in table or grid is not None)
    out.zip = _parameters(fields["zip"], "zip", source, "zip" in table or zip is not None)
    both = [p for p in out.grid if p in out.zip]
    if both:
        raise SweepError(f'{source}: sweep.zip."{both[0]}": already in sweep.grid; use one')
    if out.zip:
        lengths = {p: len(v) for p, v in out.zip.items()}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f'"{p}" has {n}' for p, n in lengths.items())
            raise SweepError(
                f"{source}: sweep.zip: lists varied together must have one length ({shown})"
            )
    out.seeds = _seeds(fields["seeds"], source, text, fmt)
    out.tables = _tables(fields["tables"], source)
    total = math.prod(len(v) for v in out.grid.values()) * len(out.seeds)
    total *= len(next(iter(out.zip.values()))) if out.zip else 1
    if total > MAX_RUNS:
        raise SweepError(f"{source}: sweep: {total} runs; at most {MAX_RUNS} in one sweep")
    return out


def _sweep_table(text: str, source: str, fmt: str) -> dict[str, Any]:
    if fmt == "json":
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            # Nested too deep for Python's parser: the core says so, naming the file.
            doc = {}
    else:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            doc = {}
    if not isinstance(doc, dict):
        doc = {}
    table = doc.get("sweep", {})
    if doc.get("sweep") is not None and not isinstance(table, dict):
        raise SweepError(f"{source}: sweep: expected a table ([sweep])")
    if not table:
        # A syntax error or a bad scenario is reported by the core, with line and column.
        _core.validate_scenario(text, source, fmt, [])
    return table or {}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "table"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def _parameters(value: Any, name: str, source: str, given: bool) -> dict[str, list[Any]]:
    """`{path: [values]}`, checked: non-empty, one type per parameter, no repeats."""
    where = f"{source}: sweep.{name}"
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SweepError(f"{where}: expected a table of parameter paths to lists of values")
    if not value and given:
        raise SweepError(
            f"{where}: empty; give at least one parameter path with a list of values, "
            f'e.g. {{ "flow.bulk.count" = [1, 2, 4] }}'
        )
    out: dict[str, list[Any]] = {}
    for path, values in value.items():
        here = f'{where}."{path}"'
        if not isinstance(path, str) or not path.strip():
            raise SweepError(f"{where}: a parameter path is empty")
        if path.strip() in RESERVED:
            raise SweepError(f"{here}: {RESERVED[path.strip()]}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise SweepError(f"{here}: expected a list of values, got {values!r}")
        values = list(values)
        if not values:
            raise SweepError(f"{here}: empty list; give at least one value")
        kinds = {_kind(v) for v in values}
        if len(kinds) > 1:
            raise SweepError(
                f"{here}: values of different types ({', '.join(sorted(kinds))}); "
                "give one type per parameter"
            )
        for v in values:
            try:
                _toml_literal(v)
            except ValueError as e:
                raise SweepError(f"{here}: {e}") from None
        texts = [_toml_literal(v) for v in values]
        repeated = next((v for i, v in enumerate(texts) if v in texts[:i]), None)
        if repeated is not None:
            raise SweepError(f"{here}: value {repeated} appears twice")
        out[path] = values
    return out


def _seeds(value: Any, source: str, text: str, fmt: str) -> list[int]:
    where = f"{source}: sweep.seeds"
    if value is None:
        return [int(_core.validate_scenario(text, source, fmt, [])["seed"])]
    if isinstance(value, bool):
        raise SweepError(f"{where}: expected a count or a list of seeds, got {value!r}")
    if isinstance(value, int):
        if not 1 <= value <= MAX_RUNS:
            raise SweepError(f"{where}: expected a count in [1, {MAX_RUNS}], got {value}")
        return list(range(1, value + 1))
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise SweepError(f"{where}: expected a count (10) or a non-empty list of seeds ([1, 7])")
    seeds = list(value)
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_SEED:
            raise SweepError(f"{where}: expected whole numbers in [0, 2**64), got {s!r}")
    repeated = next((s for i, s in enumerate(seeds) if s in seeds[:i]), None)
    if repeated is not None:
        raise SweepError(f"{where}: seed {repeated} appears twice")
    return seeds


def _tables(value: Any, source: str) -> tuple[str, ...]:
    where = f"{source}: sweep.tables"
    if value is None:
        return ("flows",)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not value:
        raise SweepError(f"{where}: expected a non-empty list of: {', '.join(TABLES)}")
    for t in value:
        if t not in TABLES:
            raise SweepError(f"{where}: unknown table {t!r} (expected one of: {', '.join(TABLES)})")
    if len(set(value)) != len(value):
        raise SweepError(f"{where}: a table is listed twice")
    return tuple(value)
