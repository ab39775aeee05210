"""Running scenarios from Python: :func:`run` and :func:`validate`, and the :class:`Result`.

Importing this module is cheap: numpy is imported when a run starts, pandas when a
:class:`Result`'s tables (DataFrames) are made.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from plait import _core, _interrupt
from plait.output import FolderTarget, Outputs, Transaction

if TYPE_CHECKING:
    import pandas as pd
else:
    from plait._lazy import lazy_import

    pd = lazy_import("pandas")


def prepare_numpy() -> None:
    """Imports numpy and fetches its C API for the core; call before a core function that
    returns arrays. numpy is imported by Python first: Ctrl-C during that import is a
    KeyboardInterrupt, where inside the core's lazy fetch it would be a panic."""
    import numpy  # noqa: F401

    _core.prepare_numpy()


Scenario = Union[str, os.PathLike, Mapping[str, Any]]
Overrides = Union[Mapping[str, Any], Iterable[str], None]


def _override_pairs(overrides: Overrides) -> list[tuple[str, str]]:
    """`{"simulation.seed": 3}` or `["simulation.seed=3"]` -> `[("simulation.seed", "3")]`."""
    if overrides is None:
        return []
    pairs: list[tuple[str, str]] = []
    if isinstance(overrides, Mapping):
        for key, value in overrides.items():
            pairs.append((str(key), _toml_literal(value)))
        return pairs
    for item in overrides:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ValueError(f"override '{item}': expected key.path=value")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _toml_literal(value: Any, nested: bool = False) -> str:
    """A Python value as TOML text. A top-level string stays bare (so `10Mbps` and
    `{kind="red"}` work as on the command line); dicts become inline tables; numpy scalars
    and arrays become numbers and lists."""
    if _is_numpy(value):
        value = value.tolist()
    if value is None:
        raise ValueError("override values cannot be None (leave the key out to keep its default)")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"override value {value!r}: expected a finite number")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value) if nested else value
    if isinstance(value, Mapping):
        items = ", ".join(
            f"{json.dumps(str(k))} = {_toml_literal(v, nested=True)}" for k, v in value.items()
        )
        return "{" + items + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_literal(v, nested=True) for v in value) + "]"
    raise ValueError(f"override value {value!r}: unsupported type {type(value).__name__}")


def _is_numpy(value: Any) -> bool:
    """Whether `value` is a numpy scalar or array (told without importing numpy)."""
    return type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None))


#: Deepest nesting of a scenario dict (as the core's limit for JSON text): a scenario nests a
#: few levels.
MAX_DICT_DEPTH = 128


class ScenarioDictError(_core.ScenarioError):
    """A value of a scenario dict that JSON cannot carry (NaN, an object of another type)."""

    def __init__(self, path: str, detail: str) -> None:
        from plait.cli.text import safe

        where = f"{DICT_SOURCE}: {path}: " if path else f"{DICT_SOURCE}: "
        super().__init__(safe(where + detail))
        self.file = DICT_SOURCE
        self.path = path
        self.detail = detail


#: How a scenario given as a dict is named in messages.
DICT_SOURCE = "<dict>"


def _plain(value: Any, path: str = "", depth: int = 0) -> Any:
    """A scenario dict's `value` (at the field `path`, written as the core writes paths:
    `flow[0].route`) as plain JSON data: numpy scalars and arrays become numbers and lists;
    NaN, infinities, keys that are not strings and values of other types are refused, naming
    the field (json.dumps would write NaN as a token the JSON reader refuses, "JSON syntax
    error at line 1", or raise a bare TypeError)."""
    if depth > MAX_DICT_DEPTH:
        raise ScenarioDictError(path, f"nested deeper than {MAX_DICT_DEPTH} levels")
    if _is_numpy(value):
        value = value.tolist()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioDictError(path, f"must be a finite number, got {value!r}")
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ScenarioDictError(
                    path,
                    f"keys must be strings, got {type(key).__name__} {_short_repr(key)}",
                )
            out[key] = _plain(item, f"{path}.{key}" if path else key, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    raise ScenarioDictError(
        path,
        "expected a string, number, boolean, list or dict, got "
        f"{type(value).__name__} {_short_repr(value)}",
    )


def _short_repr(value: Any, limit: int = 60) -> str:
    """`repr(value)`, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _load(scenario: Scenario) -> tuple[str, str, str]:
    """(text, source name, format) for a path or a dict."""
    if isinstance(scenario, Mapping):
        return json.dumps(_plain(scenario), allow_nan=False), DICT_SOURCE, "json"
    path = Path(scenario)
    # The name as shown in messages: bytes that are not UTF-8 appear as \xff escapes.
    name = os.fsencode(path).decode("utf-8", "backslashreplace")
    try:
        with open(path, "rb") as f:
            # Bounded: a device such as /dev/zero or a runaway FIFO must not fill the memory.
            data = f.read(MAX_SCENARIO_BYTES + 1)
        if len(data) > MAX_SCENARIO_BYTES:
            raise ScenarioFileError(
                name, f"scenario file larger than {MAX_SCENARIO_BYTES // 2**20} MiB"
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ScenarioFileError(name, f"cannot read scenario file ({reason})") from None
    return text, name, "json" if path.suffix.lower() == ".json" else "toml"


#: Largest scenario file read (a scenario is a few kilobytes; `count` makes copies).
MAX_SCENARIO_BYTES = 64 * 2**20


class ScenarioFileError(_core.ScenarioError):
    """The scenario file could not be read."""

    def __init__(self, file: str, detail: str) -> None:
        super().__init__(f"{file}: {detail}")
        self.file = file
        self.path = ""
        self.detail = detail


def check_seed(seed: Any) -> None:
    """Seeds are unsigned 64-bit integers."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: expected an integer in [0, 2**64), got {seed!r}")


#: The result tables, in the order they are written.
TABLES = (
    "flows",
    "links",
    "paths",
    "flow_series",
    "link_series",
    "path_series",
    "picks",
    "drops",
    "refusals",
)

#: The columns each table starts with (the others follow in the core's order).
_FIRST = {
    "flows": ["name", "kind", "cc", "src", "dst"],
    "links": ["name", "direction", "from", "to"],
    "paths": ["flow", "path"],
    "flow_series": ["time_s", "flow"],
    "link_series": ["time_s", "link"],
    "path_series": ["time_s", "flow", "path"],
    "picks": ["time_s", "flow"],
    "drops": ["time_s", "flow", "link"],
    "refusals": ["flow", "link"],
}


def _identity(raw: dict[str, Any]) -> dict[str, Any]:
    """A run's identity and counts from the core's result."""
    return {
        "seed": int(raw["seed"]),
        "duration_s": float(raw["duration_s"]),
        "warmup_s": float(raw["warmup_s"]),
        "events": int(raw["events"]),
        "delivered_packets": int(raw["delivered_packets"]),
        "jain_fairness": float(raw["jain_fairness"]),
    }


def _summary(run: Any, flows: list, links: list, paths: list) -> dict[str, Any]:
    """The summary of :meth:`Result.summary` from a run's identity and its rows."""
    return {
        "seed": run.seed,
        "duration_s": run.duration_s,
        "warmup_s": run.warmup_s,
        "flows": flows,
        "links": links,
        "paths": paths,
        "jain_fairness": _clean(run.jain_fairness),
        "events": run.events,
        "delivered_packets": run.delivered_packets,
        "wall_seconds": run.wall_seconds,
    }


def _summary_json(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=2, allow_nan=False) + "\n"


@dataclass
class Result:
    """Result tables of one run (pandas DataFrames) and the run's identity.

    `flows`, `links` and `paths` (one row per path of each multipath flow; empty otherwise)
    are over the measurement window; `flow_series`, `link_series` and `path_series` are the
    sampled time series (empty unless the scenario sets `sample_interval`), whose `flow` and
    `link` columns are categoricals of the flow and link names. `picks` holds every packet
    scheduler decision of the MPTCP flows that set ``trace_picks = true`` (empty otherwise);
    `drops` every dropped packet when ``[simulation] trace_drops = true`` (empty otherwise);
    `refusals` the segments each flow's sender had refused by its host's interface queue (links
    with ``local = true``; empty otherwise)."""

    seed: int
    duration_s: float
    warmup_s: float
    events: int
    delivered_packets: int
    jain_fairness: float
    flows: pd.DataFrame
    links: pd.DataFrame
    paths: pd.DataFrame
    flow_series: pd.DataFrame
    link_series: pd.DataFrame
    path_series: pd.DataFrame
    picks: pd.DataFrame
    drops: pd.DataFrame
    refusals: pd.DataFrame
    wall_seconds: float = math.nan

    @staticmethod
    def _tables_from_core(raw: dict[str, Any], names: Iterable[str] = TABLES) -> dict[str, Any]:
        """The result tables `names` (DataFrames) from the core's columns."""
        names = tuple(names)
        tables = {}
        # Flows and links are built when asked for, or when a table asked for indexes into
        # them (series and paths name their flow or link).
        needed = set(names)
        for name in names:
            if name not in ("flows", "links"):
                needed.update(raw[name].get("__index__", {}).values())
        for name in ("flows", "links"):
            if name in needed:
                tables[name] = _frame(raw[name], _FIRST[name], {})
        out = {}
        for name in names:
            out[name] = tables[name] if name in tables else _frame(raw[name], _FIRST[name], tables)
        return out

    @classmethod
    def _from_core(cls, raw: dict[str, Any], wall_seconds: float) -> Result:
        t = cls._tables_from_core(raw)
        return cls(**_identity(raw), wall_seconds=wall_seconds, **t)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary. Everything but `wall_seconds` depends only on the scenario
        and the seed. NaN becomes None."""
        return _summary(self, _records(self.flows), _records(self.links), _records(self.paths))

    def to_json(self, path: str | os.PathLike) -> None:
        """Writes :meth:`summary` as JSON: atomically to a file (a temporary file renamed into
        place), through to a device or FIFO, or to standard output for ``"-"``."""
        outputs = Outputs()
        target = outputs.file("json", path)
        with outputs.writing() as tx:
            tx.write_text(target, self.summary_json())

    def summary_json(self) -> str:
        """:meth:`summary` as JSON text (NaN written as null)."""
        return _summary_json(self.summary())

    def to_parquet(self, directory: str | os.PathLike) -> None:
        """Writes one Parquet file per table (:data:`PARQUET_FILES`; empty tables too, so that
        no file of an earlier run is left beside these) into `directory`, all or nothing."""
        outputs = Outputs()
        folder = outputs.folder("out", directory, PARQUET_FILES)
        with outputs.writing() as tx:
            self.stage_parquet(tx, folder)

    def stage_parquet(self, tx: Transaction, folder: FolderTarget | None) -> None:
        """Adds the Parquet tables to a transaction of :mod:`plait.output`."""
        if folder is None:
            return
        for name, file in zip(TABLES, PARQUET_FILES):
            table = getattr(self, name).assign(seed=self.seed)
            tx.write_with(
                folder.file(file),
                lambda path, t=table: t.to_parquet(path, index=False),
            )


def write_atomic(path: Path, data: bytes) -> None:
    """Writes `data` to `path` all or nothing (see :mod:`plait.output`)."""
    outputs = Outputs()
    target = outputs.file("output", path)
    with outputs.writing() as tx:
        tx.write_bytes(target, data)


def _columns(
    columns: dict[str, Any], first: list[str], named: Callable[[str, str, Any], Any]
) -> dict[str, Any]:
    """A table's columns from the core's, `first` columns first. Columns of row indices into
    another table (listed under `__index__`) become `named(table, "name", codes)`, that
    table's names; a link index becomes `link` (the name) and `direction`."""
    columns = dict(columns)
    index = columns.pop("__index__", {})
    for column, of in index.items():
        codes = columns[column]
        columns[column] = named(of, "name", codes)
        if of == "links":
            columns["direction"] = named(of, "direction", codes)
    order = [c for c in first if c in columns] + [c for c in columns if c not in first]
    if "direction" in columns and "direction" not in first and "link" in order:
        order.remove("direction")
        order.insert(order.index("link") + 1, "direction")
    return {c: columns[c] for c in order}


def _frame(
    columns: dict[str, Any], first: list[str], tables: dict[str, pd.DataFrame]
) -> pd.DataFrame:
    """A table (DataFrame) from the core's columns (see :func:`_columns`); index columns are
    categoricals of the names."""

    def named(of: str, field: str, codes: Any) -> pd.Categorical:
        return _categorical(tables[of][field], codes.astype("int64"))

    return pd.DataFrame(_columns(columns, first, named))


def _categorical(names: pd.Series, codes) -> pd.Categorical:
    """`names[codes]` as a categorical over the distinct names, in order of first appearance."""
    values = pd.Series(names, dtype="object").to_numpy()
    categories = list(dict.fromkeys(values))
    position = {name: i for i, name in enumerate(categories)}
    mapped = [position[v] for v in values]
    remap = pd.Series(mapped, dtype="int64").to_numpy()
    return pd.Categorical.from_codes(remap[codes] if len(codes) else codes, categories=categories)


def _clean(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return _clean_rows(frame.to_dict(orient="records"))


def _clean_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with Python values (numpy scalars unboxed) and NaN as None."""
    out = []
    for row in rows:
        out.append({k: _clean(v.item() if hasattr(v, "item") else v) for k, v in row.items()})
    return out


def _lists(columns: dict[str, Any], first: list[str], tables: dict[str, dict]) -> dict[str, list]:
    """A table's columns as lists of Python values, in the order of its DataFrame
    (:func:`_frame`; an index column holds the names themselves), without pandas. `tables`
    holds the columns of the tables indexed into."""

    def named(of: str, field: str, codes: Any) -> list:
        values = tables[of][field]
        return [values[i] for i in codes.tolist()]

    ordered = _columns(columns, first, named)
    return {c: v.tolist() if hasattr(v, "tolist") else list(v) for c, v in ordered.items()}


@dataclass
class RunRows:
    """A run's identity and its `flows`, `links` and `paths` tables as rows (dicts of Python
    values; NaN stays NaN), made from the core's columns without pandas: what ``plait run``
    prints and writes as JSON when it writes no Parquet, so that it starts without importing
    pandas. Its :meth:`summary` is that of the :class:`Result` of the same run."""

    seed: int
    duration_s: float
    warmup_s: float
    events: int
    delivered_packets: int
    jain_fairness: float
    flows: list[dict[str, Any]]
    links: list[dict[str, Any]]
    paths: list[dict[str, Any]]
    wall_seconds: float = math.nan

    @classmethod
    def _from_core(cls, raw: dict[str, Any], wall_seconds: float) -> RunRows:
        tables: dict[str, dict] = {}
        rows: dict[str, list[dict]] = {}
        for name in ("flows", "links", "paths"):
            columns = tables[name] = _lists(raw[name], _FIRST[name], tables)
            rows[name] = [dict(zip(columns, row)) for row in zip(*columns.values())]
        return cls(**_identity(raw), wall_seconds=wall_seconds, **rows)

    def summary(self) -> dict[str, Any]:
        """:meth:`Result.summary`."""
        return _summary(
            self, _clean_rows(self.flows), _clean_rows(self.links), _clean_rows(self.paths)
        )

    def summary_json(self) -> str:
        """:meth:`Result.summary_json`."""
        return _summary_json(self.summary())


class ScenarioWarning(UserWarning):
    """A scenario says something legal but probably not meant (MPTCP subflows without routes
    that all take one path while the topology offers others); the message is one line,
    `file: field: what`. :func:`run` issues these with :func:`warnings.warn`."""


#: Default limit on a run's estimated memory (see :func:`estimate_memory`).
DEFAULT_MAX_MEMORY = 4 * 2**30


def validate(
    scenario: Scenario, overrides: Overrides = None, max_memory: int | None = DEFAULT_MAX_MEMORY
) -> dict[str, Any]:
    """Checks a scenario; returns counts of nodes, links and flows, and `warnings`: what is
    legal but probably not meant, one line each (see :class:`ScenarioWarning`). Raises
    :class:`plait.ScenarioError` naming the file, the field and what was expected, and
    :class:`plait.ResourceLimitError` for a scenario that :func:`run` would refuse with the
    same `max_memory` (checked first, from the flow entries before `count` is expanded)."""
    check_max_memory(max_memory)
    text, source, fmt = _load(scenario)
    return _core.validate_scenario(
        text, source, fmt, _override_pairs(overrides), max_memory=max_memory
    )


#: The files :meth:`Result.to_parquet` writes.
PARQUET_FILES = tuple(f"{name}.parquet" for name in TABLES)


def estimate_memory(scenario: Scenario, overrides: Overrides = None) -> dict[str, Any]:
    """The memory a run of `scenario` is estimated to need, in bytes (`bytes`), with what it is
    made of: `flows`, `subflows` (MPTCP), `shares` (MPAT application flows), `paths`,
    `link_directions`, `samples`, `sample_rows` (time-series rows), and upper bounds on the
    rows of `picks` and `drops` when they are traced. `state_bytes` is the estimate without
    the traces (`trace_bytes`, their upper bounds; `trace_note` says what they may add): a run
    is refused before it starts when `state_bytes` passes the limit, and stopped (nothing
    written) when its traces grow past what the limit leaves them. `packets` estimates the
    run's work (transmissions over links at the max-min fair rates) and `seconds` the wall
    time it takes at the simulator's usual speed. Made from the flow entries before `count`
    is expanded: cheap for any count (docs/results.md)."""
    text, source, fmt = _load(scenario)
    return _core.estimate_memory(text, source, fmt, _override_pairs(overrides))


def run(
    scenario: Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    progress: Callable[[float, float], None] | None = None,
    max_memory: int | None = DEFAULT_MAX_MEMORY,
    cancel: _core.CancelToken | None = None,
) -> Result:
    """Runs a scenario (path to a TOML file, or a dict with the same schema).

    `seed` replaces the scenario's seed; `overrides` sets fields before validation, as
    `{"flow[0].cc": "cubic"}` or `["link.bottleneck.rate=10Mbps"]`; `progress(now_s,
    duration_s)` is called as the run advances (from a worker thread). A run whose estimated
    memory (:func:`estimate_memory`) exceeds `max_memory` bytes is refused with
    :class:`plait.ResourceLimitError` before it starts; `None` lifts the limit. `cancel`, a
    ``plait._core.CancelToken``, lets another thread stop the run (KeyboardInterrupt is raised).

    Ctrl-C raises KeyboardInterrupt within a fraction of a second, whatever the run is doing.
    The scenario's warnings (:func:`validate`) are issued as :class:`ScenarioWarning`.
    """
    import warnings

    raw, wall_seconds = _run_core(scenario, seed, overrides, progress, max_memory, cancel)
    for line in raw.get("warnings", ()):
        warnings.warn(line, ScenarioWarning, stacklevel=2)
    return Result._from_core(raw, wall_seconds)


def _run_core(
    scenario: Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    progress: Callable[[float, float], None] | None = None,
    max_memory: int | None = DEFAULT_MAX_MEMORY,
    cancel: _core.CancelToken | None = None,
) -> tuple[dict[str, Any], float]:
    """:func:`run`'s work: the core's result (columns) and the wall seconds it took."""
    import time

    check_seed(seed)
    check_max_memory(max_memory)
    text, source, fmt = _load(scenario)
    pairs = _override_pairs(overrides)
    cancel = cancel if cancel is not None else _core.CancelToken()
    prepare_numpy()
    started = time.perf_counter()
    raw = _interrupt.call(
        lambda: _core.run_scenario(
            text, source, fmt, seed, pairs, progress, cancel=cancel, max_memory=max_memory
        ),
        on_interrupt=cancel.cancel,
    )
    return raw, time.perf_counter() - started


def check_max_memory(max_memory: Any) -> None:
    """A memory limit is a positive whole number of bytes, or None for no limit."""
    if max_memory is None:
        return
    if (
        isinstance(max_memory, bool)
        or not isinstance(max_memory, int)
        or not 0 < max_memory < 2**64
    ):
        raise ValueError(f"max_memory: expected a positive number of bytes, got {max_memory!r}")
