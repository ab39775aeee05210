"""The results store of a sweep: one folder that DuckDB, polars and pandas read as tables.

Layout of ``OUT/``::

    sweep.json                 the sweep's definition and the keys of its runs
    flows/<key>.parquet        one file per run and stored table, named by the run's key
    links/<key>.parquet        (only for the tables the sweep stores; flows by default)
    failures/<key>.json        runs that failed: parameters, seed and the error

Each Parquet file holds one run's table with the run's key (``run``), its swept parameters
(columns named by their paths as written) and ``seed`` in front. With the default single table,
``duckdb.sql("select * from 'OUT/**/*.parquet'")`` is the whole sweep; with several tables,
read one at a time (``'OUT/links/*.parquet'``).

Files are written to a temporary name (not ending in ``.parquet``, so readers never see it),
flushed to disk and renamed into place, so a file under its final name is complete. A run
counts as present only when every stored table's file is there and reads as Parquet (magic
bytes at both ends and a footer that parses): a truncated or corrupt file left by a crash or by
hand is removed and the run is done again. One sweep at a time may write into a folder (a lock
file says so to a second one).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
else:
    from plait._lazy import lazy_import

    pd = lazy_import("pandas")

MANIFEST = "sweep.json"
FAILURES = "failures"
LOCK = ".plait-sweep.lock"
#: Suffix of files being written; never matched by `*.parquet`.
PARTIAL = ".partial"
_MAGIC = b"PAR1"


#: Descriptors of the lock files this process holds. A process forked from here (a local
#: cluster's worker) closes its copies at once: the lock then lives and dies with this process
#: alone, and a killed sweep's folder is free again even while its workers are going away.
_HELD: set[int] = set()


def _drop_inherited_locks() -> None:
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


class StoreError(ValueError):
    """The output folder cannot be used: the message names it and why."""


def write_atomic(path: Path, data: bytes) -> None:
    """`data` to `path` through a temporary file in the same folder, flushed to the device,
    then renamed: a file under its final name is whole. The temporary name is unique to this
    writer (workers on several hosts may write the same run's file when Dask runs a task
    again)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}{PARTIAL}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def is_complete_parquet(path: Path) -> bool:
    """Whether `path` is a whole Parquet file: `PAR1` at both ends and a footer that parses."""
    try:
        size = path.stat().st_size
        if size < 12:
            return False
        with open(path, "rb") as f:
            head = f.read(4)
            f.seek(size - 8)
            tail = f.read(8)
        footer = int.from_bytes(tail[:4], "little")
        if head != _MAGIC or tail[4:] != _MAGIC or footer + 12 > size:
            return False
        import pyarrow.parquet as pq

        # A file object, not the name: Arrow cannot encode a name that is not UTF-8.
        with open(path, "rb") as f:
            pq.read_metadata(f)
        return True
    except Exception:
        return False


class Store:
    """The folder of one sweep's results (see the module doc)."""

    def __init__(self, root: str | os.PathLike, tables: Iterable[str]) -> None:
        self.root = Path(root)
        self.tables = tuple(tables)
        self._lock: Any = None

    # ---- Opening ---------------------------------------------------------------------------

    def open(self, fresh: bool = False) -> None:
        """Creates the folder (or checks that an existing one is a sweep's), takes the lock,
        removes leftovers of interrupted writes and, with `fresh`, every stored result."""
        root = self.root
        if root.exists() and not root.is_dir():
            raise StoreError(f"--out {root}: not a folder")
        if root.is_dir() and any(root.iterdir()) and not (root / MANIFEST).exists():
            raise StoreError(
                f"--out {root}: the folder is not empty and holds no sweep ({MANIFEST}); "
                "choose a new or empty folder"
            )
        try:
            root.mkdir(parents=True, exist_ok=True)
            self._lock = open(root / LOCK, "a+")
        except OSError as e:
            raise StoreError(f"--out {root}: cannot write there ({e.strerror or e})") from None
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            self._lock = None
            raise StoreError(
                f"--out {root}: another sweep is writing into this folder; wait for it or "
                "choose another"
            ) from None
        _HELD.add(self._lock.fileno())
        if fresh:
            self._remove_results()
        for folder in (*self.tables, FAILURES):
            (root / folder).mkdir(exist_ok=True)
        self.remove_partials()

    def remove_partials(self) -> None:
        """Removes the temporaries of writes that never ended (their writer was killed)."""
        for folder in (*self.tables, FAILURES):
            for leftover in (self.root / folder).glob(f".*{PARTIAL}"):
                leftover.unlink(missing_ok=True)

    def close(self) -> None:
        if self._lock is not None:
            _HELD.discard(self._lock.fileno())
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _remove_results(self) -> None:
        """Removes what a sweep wrote (and nothing else): stored tables, failures, manifest."""
        from plait.api import TABLES

        for folder in (*TABLES, FAILURES):
            path = self.root / folder
            if path.is_dir():
                for f in path.iterdir():
                    if f.suffix in (".parquet", ".json") or f.name.endswith(PARTIAL):
                        f.unlink()
                with contextlib.suppress(OSError):
                    path.rmdir()
        (self.root / MANIFEST).unlink(missing_ok=True)

    # ---- Runs ------------------------------------------------------------------------------

    def path(self, table: str, key: str) -> Path:
        return self.root / table / f"{key}.parquet"

    def present(self, keys: Iterable[str]) -> set[str]:
        """The keys among `keys` whose every table is stored whole. Files that are there but
        not whole are removed (their runs will be done again)."""
        out = set()
        for key in keys:
            whole = True
            for table in self.tables:
                path = self.path(table, key)
                if not path.exists():
                    whole = False
                elif not is_complete_parquet(path):
                    path.unlink(missing_ok=True)
                    whole = False
            if whole:
                out.add(key)
        return out

    def stored_keys(self) -> set[str]:
        """Every run key with a stored file of the first table (this sweep's or another's)."""
        folder = self.root / self.tables[0]
        return {p.stem for p in folder.glob("*.parquet")} if folder.is_dir() else set()

    def write_run(self, key: str, tables: dict[str, bytes]) -> None:
        """Stores one run's tables (Parquet bytes) and clears an earlier failure of it."""
        for table in self.tables:
            write_atomic(self.path(table, key), tables[table])
        (self.root / FAILURES / f"{key}.json").unlink(missing_ok=True)

    def written(self, key: str) -> None:
        """A worker stored the run's tables itself: an earlier failure of it is cleared."""
        (self.root / FAILURES / f"{key}.json").unlink(missing_ok=True)

    def write_failure(self, key: str, record: dict[str, Any]) -> None:
        write_atomic(
            self.root / FAILURES / f"{key}.json",
            json.dumps(record, indent=1, default=str).encode(),
        )

    def failures(self, keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """The failure records of `keys` (all when None)."""
        folder = self.root / FAILURES
        wanted = None if keys is None else set(keys)
        out = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            if wanted is not None and path.stem not in wanted:
                continue
            with contextlib.suppress(OSError, ValueError):
                out.append(json.loads(path.read_text(encoding="utf-8")))
        return out

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_atomic(self.root / MANIFEST, json.dumps(manifest, indent=1).encode())

    # ---- Reading ---------------------------------------------------------------------------

    def read(self, table: str, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """One stored table of the runs `keys` (all stored runs when None) as one DataFrame."""
        folder = self.root / table
        if keys is None:
            files = sorted(folder.glob("*.parquet"))
        else:
            files = [p for p in (self.path(table, k) for k in keys) if p.exists()]
        return read_parquet_files(files)


def read_parquet_files(files: list[Path]) -> pd.DataFrame:
    """The files as one DataFrame (empty when there are none)."""
    if not files:
        return pd.DataFrame()
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = []
    for path in files:
        # A file object, not the name: Arrow cannot encode a name that is not UTF-8.
        with open(path, "rb") as f:
            parts.append(pq.read_table(f))
    # "permissive": files written by other tools may use other string or integer widths.
    return pa.concat_tables(parts, promote_options="permissive").to_pandas()


@contextlib.contextmanager
def opened(root: str | os.PathLike, tables: Iterable[str], fresh: bool) -> Iterator[Store]:
    store = Store(root, tables)
    store.open(fresh)
    try:
        yield store
    finally:
        store.close()


def remove_tree(path: Path) -> None:
    """Removes a temporary store folder."""
    shutil.rmtree(path, ignore_errors=True)
