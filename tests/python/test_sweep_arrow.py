"""A sweep worker's Arrow tables (`plait.sweeps.arrow`) against the tables through pandas.

For every table of every golden scenario, the table built from the core's columns with a kept
schema equals the one ``pa.Table.from_pandas`` makes of the run's DataFrame, metadata and
all, so a sweep's Parquet files are the same bytes either way.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from plait import _core
from plait.api import TABLES, Result, _load
from plait.sweeps import arrow

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"
SCENARIOS = sorted(GOLDEN.glob("*.toml"))


def _raw(path: Path, seed: int = 1) -> dict:
    text, source, fmt = _load(path)
    # Drops traced and series sampled, so that every table has rows somewhere.
    overrides = [("simulation.trace_drops", "true"), ("simulation.sample_interval", "0.5s")]
    return _core.run_scenario(text, source, fmt, seed, overrides, None)


def _through_pandas(raw: dict) -> dict[str, pa.Table]:
    frames = Result._tables_from_core(raw, TABLES)
    return {name: pa.Table.from_pandas(frames[name], preserve_index=False) for name in TABLES}


def test_the_golden_scenarios_are_there():
    assert len(SCENARIOS) >= 10


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_tables_built_from_the_columns_equal_those_through_pandas(path):
    raw = _raw(path)
    expected = _through_pandas(raw)
    for name in TABLES:
        built = arrow._direct(raw, name, expected[name].schema)
        assert built is not None, f"{path.stem}: {name}: columns do not follow the schema"
        assert built.equals(expected[name], check_metadata=True), f"{path.stem}: {name}"
        # NaN read as null, as from_pandas reads it; the Parquet bytes are the same.
        assert _parquet_bytes(built) == _parquet_bytes(expected[name]), f"{path.stem}: {name}"


def test_a_second_run_of_the_same_shape_uses_the_kept_schema(monkeypatch):
    path = GOLDEN / "dumbbell_reno.toml"
    first = arrow.arrow_tables(_raw(path, 1), TABLES)
    calls = []
    real = Result._tables_from_core
    monkeypatch.setattr(
        Result, "_tables_from_core", staticmethod(lambda *a: calls.append(a) or real(*a))
    )
    raw = _raw(path, 2)
    second = arrow.arrow_tables(raw, TABLES)
    assert calls == [], "every table had a kept schema"
    expected = _through_pandas(raw)
    for name in TABLES:
        assert second[name].equals(expected[name], check_metadata=True), name
        assert second[name].schema.equals(first[name].schema, check_metadata=True)


def test_a_run_of_another_shape_gives_the_same_tables():
    # Fewer flows than the kept schema's: the index columns' dictionaries differ in size.
    path = GOLDEN / "dumbbell_reno.toml"
    text, source, fmt = _load(path)
    raw = _core.run_scenario(text, source, fmt, 3, [("flow.bulk.count", "1")], None)
    tables = arrow.arrow_tables(raw, TABLES)
    expected = _through_pandas(raw)
    for name in TABLES:
        assert tables[name].equals(expected[name], check_metadata=True), name


def test_nan_becomes_null_as_from_pandas_makes_it():
    raw = _raw(GOLDEN / "datagram_sources.toml")
    flows = arrow.arrow_tables(raw, ("flows",))["flows"]
    rtt = raw["flows"]["rtt_mean_s"]
    nan = np.isnan(rtt)
    assert nan.any(), "a datagram flow measures no RTT"
    column = flows.column("rtt_mean_s").to_pylist()
    assert [v is None for v in column] == list(nan)
    assert all(math.isclose(a, b) for a, b in zip(column, rtt) if a is not None)


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    return buf.getvalue().to_pybytes()
