"""Two results side by side: ``plait compare A B`` and :func:`plait.compare` (this module's
:func:`compare`; the module is named `comparison` so that it does not hide the function).

A side is one of

- a folder written by ``plait run --out DIR`` (``flows.parquet``, ``links.parquet``,
  ``flow_series.parquet``): one run;
- a sweep's store (``plait sweep --out``, or the ``runs`` folder of a ``plait reproduce``
  experiment; it has a ``sweep.json``): the runs of its last sweep, which must be seeds of one
  scenario (a store of several parameter points is refused);
- a JSON summary written by ``plait run --json FILE``: one run, without series;
- a :class:`plait.Result` (Python only).

Flows are matched by name, links by name and direction. For each metric (a numeric column
both sides have, see docs/results.md) of each matched row, the comparison gives each side's
mean over its runs, min and max, the relative difference of the means ``(B - A) / |A|``, and a
verdict:

- ``inside``: A's mean lies in B's min-max range over B's runs, or B's mean in A's (a side's
  range counts only when it holds two runs or more);
- ``within tolerance``: ``|B - A| <= tolerance * |A|`` (default 10 %);
- ``differs``: neither;
- ``n/a``: one side has no value (a column the kernel cannot give is null there); nothing is
  invented for it.

A metric null on both sides is left out. Rows present on one side only are listed with the
verdict ``only in A`` or ``only in B`` and no metric.
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
else:
    from plait._lazy import lazy_import

    pd = lazy_import("pandas")

__all__ = ["Comparison", "CompareError", "Side", "compare", "load", "verdict"]

#: The default tolerance of the "within tolerance" verdict: 10 % of A's mean.
DEFAULT_TOLERANCE = 0.1

INSIDE = "inside"
WITHIN = "within tolerance"
DIFFERS = "differs"
NOT_AVAILABLE = "n/a"
ONLY_A = "only in A"
ONLY_B = "only in B"
VERDICTS = (INSIDE, WITHIN, DIFFERS, NOT_AVAILABLE, ONLY_A, ONLY_B)

#: Columns that identify a row or describe the set-up rather than measure it.
_NOT_METRICS = {"seed", "run", "start_s", "rate_bps", "path"}
#: The series drawn overlaid in the report (flow_series columns).
SERIES = (("cwnd_bytes", "congestion window", "bytes"), ("goodput_bps", "goodput", "bit/s"))
#: Flows drawn per figure at most (the caption names them); the tables list every flow.
MAX_FLOWS_DRAWN = 8


class CompareError(ValueError):
    """A side cannot be compared: the message names its path and why."""


@dataclass
class Side:
    """One side of a comparison: the tables of one or more runs of one scenario."""

    label: str
    """The path as given (or ``<result>``)."""
    kind: str
    """``run folder``, ``sweep store``, ``JSON summary`` or ``result``."""
    flows: pd.DataFrame
    links: pd.DataFrame | None
    """None when the side has no links table (a sweep that stored flows only)."""
    flow_series: pd.DataFrame | None
    duration_s: float | None = None
    warmup_s: float | None = None

    @property
    def seeds(self) -> list[int]:
        if "seed" not in self.flows.columns:
            return []
        return sorted({int(s) for s in self.flows["seed"].dropna()})

    @property
    def runs(self) -> int:
        return max(len(self.seeds), 1)


# ---- Loading -------------------------------------------------------------------------------


def load(source: Any) -> Side:
    """A side from a path (a run's folder, a sweep's store, a JSON summary) or a
    :class:`plait.Result`; :class:`CompareError` naming the path when it is none of these.
    A :class:`Side` (as `plait testbed run --compare` builds) is taken as it is."""
    if isinstance(source, Side):
        return _checked(source.label, source)
    if hasattr(source, "flows") and hasattr(source, "links"):
        return Side(
            "<result>",
            "result",
            _with_seed(source.flows, getattr(source, "seed", None)),
            _with_seed(source.links, getattr(source, "seed", None)),
            getattr(source, "flow_series", None),
            getattr(source, "duration_s", None),
            getattr(source, "warmup_s", None),
        )
    shown = os.fspath(source)
    path = Path(shown)
    if not path.exists():
        raise CompareError(f"{shown}: no such file or folder")
    if path.is_dir():
        if (path / "sweep.json").exists():
            side = _load_store(shown, path)
        elif (path / "flows.parquet").exists():
            side = _load_run_folder(shown, path)
        else:
            raise CompareError(
                f"{shown}: not a plait result (no flows.parquet of plait run --out, no "
                "sweep.json of a sweep)"
            )
    else:
        side = _load_summary(shown, path)
    return _checked(shown, side)


def _checked(shown: str, side: Side) -> Side:
    side.flows = _keyed(shown, "flows", side.flows, ("name",))
    side.links = _keyed(shown, "links", side.links, ("name", "direction"))
    if side.flow_series is not None and not {"flow", "time_s"} <= set(side.flow_series.columns):
        side.flow_series = None
    return side


def _keyed(shown: str, table: str, frame: Any, keys: Sequence[str]) -> Any:
    """`frame` checked to have the columns that identify its rows; an empty table without
    them becomes an empty table with them."""
    if frame is None:
        return None
    missing = [k for k in keys if k not in frame.columns]
    if not missing:
        return frame
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "seed"])
    raise CompareError(f"{shown}: its {table} table has no column {missing[0]!r}")


def _with_seed(frame: pd.DataFrame | None, seed: Any) -> pd.DataFrame | None:
    if frame is None or "seed" in frame.columns or seed is None:
        return frame
    return frame.assign(seed=seed)


def _read(shown: str, files: list[Path]) -> pd.DataFrame:
    from plait.sweeps.store import read_parquet_files

    try:
        return read_parquet_files(files)
    except Exception as e:  # noqa: BLE001 - any unreadable file is the input's fault
        raise CompareError(f"{shown}: cannot read its tables ({type(e).__name__}: {e})") from None


def _load_run_folder(shown: str, path: Path) -> Side:
    def table(name: str) -> pd.DataFrame | None:
        file = path / f"{name}.parquet"
        return _read(shown, [file]) if file.exists() else None

    flows = table("flows")
    if flows is None or flows.empty:
        raise CompareError(f"{shown}: flows.parquet holds no flows")
    return Side(shown, "run folder", flows, table("links"), table("flow_series"))


def _load_store(shown: str, path: Path) -> Side:
    from plait.sweeps.store import is_complete_parquet

    try:
        manifest = json.loads((path / "sweep.json").read_text(encoding="utf-8"))
        keys = [str(k) for k in manifest["keys"]]
        parameters = [str(p) for p in manifest.get("parameters", [])]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CompareError(f"{shown}: sweep.json is not a sweep's record ({e})") from None

    def table(name: str) -> pd.DataFrame | None:
        folder = path / name
        if not folder.is_dir():
            return None
        files = [folder / f"{k}.parquet" for k in keys]
        return _read(shown, [f for f in files if is_complete_parquet(f)])

    flows = table("flows")
    if flows is None or flows.empty:
        raise CompareError(f"{shown}: the sweep's store holds no stored runs")
    points = [p for p in parameters if p in flows.columns]
    if points:
        n = len(flows[points].astype(str).drop_duplicates())
        if n > 1:
            raise CompareError(
                f"{shown}: holds {n} parameter points ({', '.join(points)}); compare needs the "
                "seeds of one scenario per side"
            )
    return Side(shown, "sweep store", flows, table("links"), table("flow_series"))


def _load_summary(shown: str, path: Path) -> Side:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CompareError(
            f"{shown}: not a plait result (neither a result folder nor a JSON summary: {e})"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("flows"), list):
        raise CompareError(f"{shown}: not a plait run summary (no list of flows)")
    if not data["flows"] or not all(isinstance(r, dict) for r in data["flows"]):
        raise CompareError(f"{shown}: the summary holds no flows")
    links = data.get("links")
    seed = data.get("seed")
    return Side(
        shown,
        "JSON summary",
        _with_seed(_records_frame(data["flows"]), seed),
        _with_seed(_records_frame(links), seed) if isinstance(links, list) else None,
        None,
        _number(data.get("duration_s")),
        _number(data.get("warmup_s")),
    )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _records_frame(rows: list[Any]) -> pd.DataFrame:
    """Rows of a JSON summary as a DataFrame; a column of numbers and nulls (NaN written as
    null) becomes float, with NaN for null."""
    frame = pd.DataFrame.from_records([r for r in rows if isinstance(r, dict)])
    for column in frame.columns:
        values = [v for v in frame[column] if v is not None]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame


# ---- Verdicts ------------------------------------------------------------------------------


def _clean(values: Sequence[Any]) -> list[float]:
    out = []
    for v in values:
        if v is None:
            continue
        try:
            x = float(v)
        except (TypeError, ValueError):
            continue
        if not math.isnan(x):
            out.append(x)
    return out


def _mean(xs: Sequence[float]) -> float:
    """The mean, exactly the value when all are equal (three runs of 0.05 average to 0.05)."""
    low, high = min(xs), max(xs)
    return low if low == high else math.fsum(xs) / len(xs)


def relative_difference(a: float, b: float) -> float:
    """``(b - a) / |a|``; 0 when both are 0, NaN when only `a` is 0 (no scale to measure by)."""
    if a == b:
        return 0.0
    if a == 0:
        return math.nan
    return (b - a) / abs(a)


def verdict(a: Sequence[Any], b: Sequence[Any], tolerance: float = DEFAULT_TOLERANCE) -> str:
    """The verdict on one metric from each side's values over its runs (null values dropped):
    ``inside`` when A's mean is in B's range or B's mean in A's (a range of two runs or more),
    else ``within tolerance`` when the relative difference of the means is at most
    `tolerance`, else ``differs``; ``n/a`` when a side has no value."""
    xa, xb = _clean(a), _clean(b)
    if not xa or not xb:
        return NOT_AVAILABLE
    mean_a, mean_b = _mean(xa), _mean(xb)
    if (len(xb) >= 2 and min(xb) <= mean_a <= max(xb)) or (
        len(xa) >= 2 and min(xa) <= mean_b <= max(xa)
    ):
        return INSIDE
    rel = relative_difference(mean_a, mean_b)
    if not math.isnan(rel) and abs(rel) <= tolerance:
        return WITHIN
    return DIFFERS


# ---- Comparing -----------------------------------------------------------------------------

_STAT_COLUMNS = [
    "metric",
    "a",
    "b",
    "rel_diff",
    "a_min",
    "a_max",
    "b_min",
    "b_max",
    "a_runs",
    "b_runs",
    "verdict",
]


def _metrics(a: pd.DataFrame, b: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """Numeric columns both tables have, in A's order."""
    out = []
    for column in a.columns:
        if column in keys or column in _NOT_METRICS or column not in b.columns:
            continue
        if _numeric(a[column]) and _numeric(b[column]):
            out.append(column)
    return out


def _numeric(column: pd.Series) -> bool:
    return column.dtype.kind in "iuf"


def _entities(frame: pd.DataFrame, keys: Sequence[str]) -> dict[tuple, pd.DataFrame]:
    """The rows of each entity (flow, link direction), in first-seen order."""
    out: dict[tuple, pd.DataFrame] = {}
    for key, rows in frame.groupby([frame[k].astype(str) for k in keys], sort=False):
        out[key if isinstance(key, tuple) else (key,)] = rows
    return out


def compare_tables(
    a: pd.DataFrame, b: pd.DataFrame, keys: Sequence[str], tolerance: float
) -> pd.DataFrame:
    """One row per entity (matched on `keys`) and metric, with both sides' statistics and the
    verdict; entities of one side only get one row with that verdict."""
    metrics = _metrics(a, b, keys)
    rows_a, rows_b = _entities(a, keys), _entities(b, keys)
    rows: list[dict[str, Any]] = []
    order = list(rows_a) + [k for k in rows_b if k not in rows_a]
    for key in order:
        ident = dict(zip(keys, key))
        if key not in rows_b or key not in rows_a:
            only = ONLY_A if key in rows_a else ONLY_B
            side = rows_a.get(key, rows_b.get(key))
            rows.append(
                {
                    **ident,
                    "metric": None,
                    "a_runs": len(side) if only == ONLY_A else 0,
                    "b_runs": len(side) if only == ONLY_B else 0,
                    "verdict": only,
                }
            )
            continue
        for metric in metrics:
            xa, xb = _clean(rows_a[key][metric]), _clean(rows_b[key][metric])
            if not xa and not xb:
                continue  # null on both sides: nothing to compare
            row: dict[str, Any] = {**ident, "metric": metric}
            for name, xs in (("a", xa), ("b", xb)):
                row[name] = _mean(xs) if xs else math.nan
                row[f"{name}_min"] = min(xs) if xs else math.nan
                row[f"{name}_max"] = max(xs) if xs else math.nan
                row[f"{name}_runs"] = len(xs)
            row["rel_diff"] = relative_difference(row["a"], row["b"]) if xa and xb else math.nan
            row["verdict"] = verdict(xa, xb, tolerance)
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[*keys, *_STAT_COLUMNS])
    for column in ("a_runs", "b_runs"):
        frame[column] = frame[column].fillna(0).astype("int64")
    return frame


@dataclass
class Comparison:
    """The comparison of two sides: `flows` and `links` DataFrames (see the module doc);
    ``flows, links = plait.compare(a, b)`` unpacks them."""

    a: Side
    b: Side
    tolerance: float
    flows: pd.DataFrame
    links: pd.DataFrame
    warnings: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        yield self.flows
        yield self.links

    def counts(self) -> dict[str, int]:
        """How many rows (flows and links) have each verdict."""
        verdicts = [*self.flows["verdict"], *self.links["verdict"]]
        return {v: verdicts.count(v) for v in VERDICTS if v in verdicts}

    def summary(self) -> dict[str, Any]:
        """The comparison as JSON-ready data (NaN as None)."""
        return {
            "a": _side_summary(self.a),
            "b": _side_summary(self.b),
            "tolerance": self.tolerance,
            "counts": self.counts(),
            "warnings": list(self.warnings),
            "flows": _records(self.flows),
            "links": _records(self.links),
        }

    def summary_json(self) -> str:
        return json.dumps(self.summary(), indent=2, allow_nan=False) + "\n"

    def figures(self) -> list[Any]:
        """cwnd and goodput series of both sides overlaid (when both have flow_series), as
        :class:`plait.report.Figure`."""
        return _series_figures(self)

    def html(self, generated: str | None = None) -> str:
        """A self-contained HTML page of the comparison (the style of plait's reports)."""
        return _html(self, generated)

    def to_json(self, path: str | os.PathLike) -> None:
        """Writes :meth:`summary` as JSON, atomically (see docs/results.md)."""
        _write("json", path, self.summary_json())

    def to_html(self, path: str | os.PathLike) -> None:
        """Writes :meth:`html` to `path`, atomically."""
        _write("out", path, self.html())


def _write(option: str, path: str | os.PathLike, text: str) -> None:
    from plait.output import Outputs

    outputs = Outputs()
    target = outputs.file(option, path)
    with outputs.writing() as tx:
        tx.write_text(target, text)


def _side_summary(side: Side) -> dict[str, Any]:
    return {"path": side.label, "kind": side.kind, "runs": side.runs, "seeds": side.seeds}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for row in frame.to_dict(orient="records"):
        clean = {}
        for k, v in row.items():
            if hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            clean[str(k)] = v
        out.append(clean)
    return out


def compare(a: Any, b: Any, tolerance: float = DEFAULT_TOLERANCE) -> Comparison:
    """Compares two results (paths of run folders, sweep stores or JSON summaries, or
    :class:`plait.Result` objects) flow by flow and link by link; returns a
    :class:`Comparison` whose `flows` and `links` are DataFrames (``flows, links =
    plait.compare(a, b)``). Raises :class:`CompareError` (a ``ValueError``) naming the path
    for a side that is not a result, and when the two share no flow and no link."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
        raise CompareError(f"tolerance: expected a number, got {tolerance!r}")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise CompareError(f"tolerance: expected a finite number >= 0, got {tolerance!r}")
    side_a, side_b = load(a), load(b)
    flows = compare_tables(side_a.flows, side_b.flows, ["name"], tolerance)
    flows = flows.rename(columns={"name": "flow"})
    warnings: list[str] = []
    if side_a.links is not None and side_b.links is not None:
        links = compare_tables(side_a.links, side_b.links, ["name", "direction"], tolerance).rename(
            columns={"name": "link"}
        )
    else:
        links = pd.DataFrame(columns=["link", "direction", *_STAT_COLUMNS])
        missing = side_a.label if side_a.links is None else side_b.label
        warnings.append(f"{missing}: no links table; links are not compared")
    matched_flows = (~flows["verdict"].isin([ONLY_A, ONLY_B])).any()
    matched_links = len(links) and (~links["verdict"].isin([ONLY_A, ONLY_B])).any()
    if not matched_flows and not matched_links:
        raise CompareError(
            f"{side_a.label} and {side_b.label}: no flow or link in common; results of "
            "different scenarios"
        )
    only = [
        f"{(flows['verdict'] == v).sum() + (links['verdict'] == v).sum()} {v}"
        for v in (ONLY_A, ONLY_B)
        if (flows["verdict"] == v).any() or (links["verdict"] == v).any()
    ]
    if only:
        warnings.append(
            f"{side_a.label} and {side_b.label} differ in their flows or links "
            f"({', '.join(only)}): results of different scenarios?"
        )
    for what in ("duration_s", "warmup_s"):
        x, y = getattr(side_a, what), getattr(side_b, what)
        if x is not None and y is not None and x != y:
            warnings.append(f"{side_a.label} and {side_b.label}: {what} {x:g} and {y:g} differ")
    return Comparison(side_a, side_b, float(tolerance), flows, links, warnings)


# ---- Report --------------------------------------------------------------------------------


def _series_figures(c: Comparison) -> list[Any]:
    from plait.report import Figure, figure_png

    sa, sb = c.a.flow_series, c.b.flow_series
    if sa is None or sb is None or sa.empty or sb.empty:
        return []
    common = [
        f for f in c.flows["flow"].astype(str).unique() if f in _names(sa) and f in _names(sb)
    ]
    if not common:
        return []
    drawn = common[:MAX_FLOWS_DRAWN]
    from matplotlib.figure import Figure as MplFigure

    out = []
    for column, title, unit in SERIES:
        if column not in sa.columns or column not in sb.columns:
            continue
        fig = MplFigure(figsize=(7.5, 3.6))
        ax = fig.add_subplot()
        colours = [f"C{i % 10}" for i in range(len(drawn))]
        for name, colour in zip(drawn, colours):
            for frame, style, side in ((sa, "-", "A"), (sb, "--", "B")):
                mean = _mean_series(frame, name, column)
                ax.plot(
                    mean.index, mean.values, style, color=colour, lw=1.2, label=f"{name} ({side})"
                )
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"{title} ({unit})")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="best")
        shown = ", ".join(drawn)
        rest = (
            f" ({len(common) - len(drawn)} more flows not drawn)"
            if len(common) > len(drawn)
            else ""
        )
        runs = (
            f"mean over {c.a.runs} and {c.b.runs} runs"
            if max(c.a.runs, c.b.runs) > 1
            else "one run each"
        )
        out.append(
            Figure(
                title=f"{title.capitalize()}: A solid, B dashed",
                caption=f"{column} of flows {shown}{rest}; {runs}. A: {c.a.label}; B: {c.b.label}.",
                png=figure_png(fig),
            )
        )
    return out


def _names(series: pd.DataFrame) -> set[str]:
    return set(series["flow"].astype(str).unique()) if "flow" in series.columns else set()


def _mean_series(frame: pd.DataFrame, name: str, column: str) -> pd.Series:
    rows = frame[frame["flow"].astype(str) == name]
    return rows.groupby("time_s", sort=True)[column].mean()


def format_value(value: Any, metric: str | None) -> str:
    """A metric's value as text: rates in b/s scaled, seconds in ms, fractions in %, ``n/a``
    for null."""
    if value is None:
        return NOT_AVAILABLE
    x = float(value)
    if math.isnan(x):
        return NOT_AVAILABLE
    m = metric or ""
    if m.endswith("_bps"):
        for scale, unit in ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")):
            if abs(x) >= scale:
                return f"{x / scale:.3f} {unit}"
        return f"{x:.0f} b/s"
    if m.endswith("_s"):
        return f"{x * 1e3:.2f} ms"
    if m == "utilization":
        return f"{100 * x:.2f}%"
    return f"{x:.4g}"


def format_rel(rel: Any) -> str:
    if rel is None or (isinstance(rel, float) and math.isnan(rel)):
        return NOT_AVAILABLE
    return f"{100 * float(rel):+.1f}%"


def _range(row: dict[str, Any], side: str, metric: str | None) -> str:
    """A side's min-max over its runs as text; empty for one run or no metric."""
    if not isinstance(metric, str) or row[f"{side}_runs"] < 2:
        return ""
    low = format_value(row[f"{side}_min"], metric)
    return f"{low} – {format_value(row[f'{side}_max'], metric)}"


def display_frame(frame: pd.DataFrame, keys: Sequence[str], ranges: bool = True) -> pd.DataFrame:
    """The comparison's rows as text, for the report's and (without `ranges`) the terminal's
    tables."""
    columns = [*keys, "metric", "A", "B", "B vs A"]
    columns += ["A range", "B range", "verdict"] if ranges else ["verdict"]
    rows = []
    for r in frame.to_dict(orient="records"):
        metric = r.get("metric")
        has = isinstance(metric, str)
        row = {
            **{k: str(r[k]) for k in keys},
            "metric": metric if has else "",
            "A": format_value(r["a"], metric) if has else "",
            "B": format_value(r["b"], metric) if has else "",
            "B vs A": format_rel(r["rel_diff"]) if has else "",
            "A range": _range(r, "a", metric),
            "B range": _range(r, "b", metric),
            "verdict": r["verdict"],
        }
        rows.append({k: row[k] for k in columns})
    return pd.DataFrame(rows, columns=columns)


def _html(c: Comparison, generated: str | None) -> str:
    from plait import __core_id__, __version__
    from plait.report import _e, _figures, _table, page_start

    if generated is None:
        now = datetime.datetime.now(datetime.timezone.utc)
        generated = f"plait {__version__} (core {__core_id__}), {now:%Y-%m-%d %H:%M} UTC"
    title = f"plait compare: {c.a.label} vs {c.b.label}"
    counts = ", ".join(f"{n} {v}" for v, n in c.counts().items()) or "no rows"
    sides = "".join(
        f"<div><dt>{name}</dt><dd>{_e(s.label)} ({_e(s.kind)}, "
        f"{s.runs} run{'s' if s.runs != 1 else ''}"
        f"{', seeds ' + _e(', '.join(map(str, s.seeds))) if s.seeds else ''})</dd></div>"
        for name, s in (("A", c.a), ("B", c.b))
    )
    warnings = "".join(f'<p class="detail">Warning: {_e(w)}</p>' for w in c.warnings)
    explanation = (
        "Each row is one metric of one flow or link direction: A's and B's mean over their "
        "runs, B's relative difference from A, each side's range over its runs, and the "
        f"verdict: <em>inside</em> (one side's mean in the other's range), <em>within "
        f"tolerance</em> (|B − A| ≤ {c.tolerance:.3g} × |A|) or <em>differs</em>; "
        "<em>n/a</em> where one side has no value."
    )
    parts = [
        *page_start(title, generated),
        f'<dl class="runs">{sides}</dl>',
        f'<p class="summary">{_e(counts)}.</p>',
        f"<p>{explanation}</p>",
        warnings,
        "</header>",
        '<section class="experiment" aria-labelledby="flows">',
        '<h2 id="flows">Flows</h2>',
        _table("Flows, matched by name", display_frame(c.flows, ["flow"])),
        "</section>",
        '<section class="experiment" aria-labelledby="links">',
        '<h2 id="links">Links</h2>',
        _table(
            "Link directions, matched by name and direction",
            display_frame(c.links, ["link", "direction"]),
        ),
        "</section>",
        '<section class="experiment" aria-labelledby="figures">',
        '<h2 id="figures">Series</h2>',
        _figures(c.figures()),
        "</section>",
        "</main>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(parts)
