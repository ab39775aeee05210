"""A run's result tables as Arrow tables, built from the core's columns.

A sweep's worker writes each run's tables as Parquet. Going through pandas
(:meth:`plait.api.Result._tables_from_core`, then ``pa.Table.from_pandas``) takes about 2 ms
for the dumbbell's flows table, half of what 2 simulated seconds of 10 flows take; built here
it takes 0.2 ms. Going through pandas gives the same Arrow table whenever the columns have the
same shape:
the same names, the same types (the Python types found in a column of strings), and the same
number of names an index column refers to (which sets the width of the dictionary's indices).

So the first table of each shape goes through pandas, and its schema (pandas metadata
included) is kept. Later tables of that shape are built from the columns with that schema:
- the same column order;
- the same types;
- NaN read as null, as ``from_pandas`` reads it;
- an index column as a dictionary of the names it refers to, in order of first appearance.

``tests/python/test_sweep_arrow.py`` checks that the two ways give equal tables, metadata
included, for every table of every golden scenario.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from plait.api import _FIRST, Result, _columns

#: Schemas of tables converted through pandas, by the shape of the core's columns.
_SCHEMAS: dict[tuple, pa.Schema] = {}


class _Names:
    """An index column: the names it refers to (distinct, in order of first appearance) and
    each row's position among them."""

    __slots__ = ("categories", "codes")

    def __init__(self, categories: list[Any], codes: np.ndarray) -> None:
        self.categories = categories
        self.codes = codes


def arrow_tables(raw: dict[str, Any], names: tuple[str, ...]) -> dict[str, pa.Table]:
    """The result tables `names` of one run as Arrow tables, equal to
    ``pa.Table.from_pandas(Result._tables_from_core(raw, names)[name], preserve_index=False)``."""
    shapes = {name: _shape(raw, name) for name in names}
    tables: dict[str, pa.Table] = {}
    for name in names:
        schema = _SCHEMAS.get(shapes[name])
        if schema is not None:
            table = _direct(raw, name, schema)
            if table is not None:
                tables[name] = table
    missing = tuple(name for name in names if name not in tables)
    if missing:
        frames = Result._tables_from_core(raw, missing)
        for name in missing:
            table = pa.Table.from_pandas(frames[name], preserve_index=False)
            _SCHEMAS.setdefault(shapes[name], table.schema)
            tables[name] = table
    return tables


def _shape(raw: dict[str, Any], name: str) -> tuple:
    """What the Arrow schema of the table `name` depends on."""
    columns = raw[name]
    parts = []
    for column, values in columns.items():
        if column == "__index__":
            continue
        if isinstance(values, list):
            parts.append((column, "list", tuple(sorted({type(v).__name__ for v in values}))))
        else:
            parts.append((column, values.dtype))
    index = tuple(
        sorted(
            (column, of, *(_count(raw[of][field]) for field in _fields(of)))
            for column, of in columns.get("__index__", {}).items()
        )
    )
    return (name, tuple(parts), index)


def _fields(of: str) -> tuple[str, ...]:
    """The fields of table `of` an index column into it is turned into (see `api._columns`)."""
    return ("name", "direction") if of == "links" else ("name",)


def _count(values: list[Any]) -> int:
    return len(dict.fromkeys(values))


def _direct(raw: dict[str, Any], name: str, schema: pa.Schema) -> pa.Table | None:
    """The table `name` built with `schema`; None if its columns do not follow the schema."""

    def named(of: str, field: str, codes: Any) -> _Names:
        values = raw[of][field]
        categories = list(dict.fromkeys(values))
        position = {v: i for i, v in enumerate(categories)}
        remap = np.fromiter((position[v] for v in values), dtype=np.int64, count=len(values))
        codes = codes.astype("int64")
        return _Names(categories, remap[codes] if len(codes) else codes)

    columns = _columns(raw[name], _FIRST[name], named)
    if list(columns) != schema.names:
        return None
    arrays = []
    for field, values in zip(schema, columns.values()):
        if isinstance(values, _Names):
            if not pa.types.is_dictionary(field.type):
                return None
            arrays.append(
                pa.DictionaryArray.from_arrays(
                    pa.array(values.codes, type=field.type.index_type),
                    pa.array(values.categories, type=field.type.value_type),
                )
            )
        else:
            arrays.append(pa.array(values, type=field.type, from_pandas=True))
    return pa.Table.from_arrays(arrays, schema=schema)
