"""Tests of sweeps: `plait sweep FILE` and `plait.sweep` (python/plait/sweeps/).

Bad definitions are checked in-process (fast); everything that starts a cluster runs the CLI in
a fresh interpreter in its own session, so that a test can SIGKILL or SIGINT the whole process
group (workers included) like a terminal would, and clean up after itself whatever happens.
Tests of the Python API share one small Dask cluster per test process (`client=`), except the
one that checks `workers=` itself.

Waits poll for a condition (files on disk, a process gone) with generous limits: the suite
runs under `pytest -n 2` on two cores, next to other tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import plait
import pyarrow.parquet as pq
import pytest
from plait.cli import main as cli_main
from plait.sweeps import StoreError, SweepError, open_results

PLAIT = [sys.executable, "-m", "plait.cli"]
#: Longest a CLI sweep may take before the test gives up (they take seconds).
TIMEOUT = 240

BASE = """\
[simulation]
duration = "{duration}"
seed = 1

[[link]]
name = "bottleneck"
from = "a"
to = "b"
rate = "{rate}"
delay = "{delay}"
queue = {{ kind = "droptail", packets = {packets} }}

[[flow]]
name = "bulk"
kind = "tcp"
src = "a"
dst = "b"
start = {{ uniform = ["0s", "0.5s"] }}
"""

# The sweep of the brief: 2 x 2 grid points, 2 zipped rows, 3 seeds = 24 runs of milliseconds.
EXAMPLE_SWEEP = """
[sweep]
seeds = 3
grid = { "flow.bulk.count" = [1, 2], "link.bottleneck.queue.packets" = [5, 20] }
zip = { "link.bottleneck.rate" = ["10Mbps", "100Mbps"], "link.bottleneck.delay" = ["50ms", "5ms"] }
"""
EXAMPLE_COLUMNS = [
    "run",
    "flow.bulk.count",
    "link.bottleneck.queue.packets",
    "link.bottleneck.rate",
    "link.bottleneck.delay",
    "seed",
]


def base(duration: str = "2s", rate: str = "10Mbps", delay: str = "10ms", packets: int = 20):
    return BASE.format(duration=duration, rate=rate, delay=delay, packets=packets)


def long_sweep(duration: str, seeds: int) -> str:
    """Runs of tens to hundreds of milliseconds (1 Gb/s for `duration`), 8 per seed."""
    return base(duration=duration, rate="1Gbps", delay="1ms", packets=1000) + (
        f'\n[sweep]\nseeds = {seeds}\ngrid = {{ "flow.bulk.count" = [1, 2, 3, 4, 5, 6, 7, 8] }}\n'
    )


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ---- Processes -----------------------------------------------------------------------------------


class Cli:
    """`plait ARGS` in a fresh interpreter and a new session (its own process group)."""

    def __init__(self, args: list, cwd: Path, env: dict | None = None) -> None:
        n = next(_serial)
        self.stdout_path = cwd / f".cli-{n}.out"
        self.stderr_path = cwd / f".cli-{n}.err"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [*PLAIT, *map(str, args)],
                cwd=cwd,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "COLUMNS": "200", **(env or {})},
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout: float = TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"plait did not finish in {timeout} s; stderr:\n{self.stderr}")

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL to the whole group (workers included), then reap."""
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


_serial = itertools.count()


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Callable[..., Cli]]:
    """Starts `plait` processes; whatever is left of their process groups is killed after."""
    started: list[Cli] = []

    def start(*args, cwd: Path = tmp_path, env: dict | None = None) -> Cli:
        c = Cli(list(args), cwd, env)
        started.append(c)
        return c

    yield start
    for c in started:
        c.kill()


def run_cli(cli, *args, **kwargs) -> tuple[int, str, str]:
    """Runs `plait ARGS` to the end: (exit code, stdout, stderr)."""
    c = cli(*args, **kwargs)
    code = c.wait()
    return code, c.stdout, c.stderr


def wait_until(condition: Callable[[], bool], what: str, proc: Cli | None = None, timeout=120):
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and not proc.running() and not condition():
            pytest.fail(f"plait exited ({proc.proc.returncode}) before {what}:\n{proc.stderr}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = _ppid(int(entry))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def dask_workers(root: int) -> list[int]:
    """Worker processes of a local cluster started (through multiprocessing) under `root`:
    spawned ones name multiprocessing on their command line, forked ones (Linux) carry the
    sweep's own command line."""
    marks = ("spawn_main", "forkserver", "--multiprocessing-fork")
    own = cmdline(root)
    return [
        p
        for p in descendants(root)
        if (any(m in cmdline(p) for m in marks) or cmdline(p) == own)
        and "resource_tracker" not in cmdline(p)
    ]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


# ---- Results folder ------------------------------------------------------------------------------

SUMMARY = re.compile(r"^(\d+) runs: (\d+) run now, (\d+) already stored, (\d+) failed, in ", re.M)


def summary_line(stderr: str) -> dict[str, int]:
    m = SUMMARY.search(stderr)
    assert m, f"no summary line in:\n{stderr}"
    return dict(zip(("total", "done", "reused", "failed"), map(int, m.groups())))


def parquet_files(out: Path, table: str = "flows") -> list[Path]:
    return sorted((out / table).glob("*.parquet"))


def stored_keys(out: Path, table: str = "flows") -> set[str]:
    return {p.stem for p in parquet_files(out, table)}


def manifest(out: Path) -> dict:
    return json.loads((out / "sweep.json").read_text(encoding="utf-8"))


def partial_files(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if p.name.endswith(".partial")]


def assert_all_whole(out: Path, table: str = "flows") -> None:
    for f in parquet_files(out, table):
        t = pq.read_table(f)  # raises on a truncated or corrupt file
        assert t.num_rows >= 1, f
        assert set(t.column("run").to_pylist()) == {f.stem}, f


def assert_complete(out: Path, runs: int) -> None:
    """Every run of the manifest stored once, nothing else, no failures, no leftovers."""
    keys = manifest(out)["keys"]
    assert len(keys) == len(set(keys)) == runs == manifest(out)["runs"]
    assert stored_keys(out) == set(keys)
    assert len(parquet_files(out)) == runs
    assert list((out / "failures").iterdir()) == []
    assert partial_files(out) == []
    assert_all_whole(out)


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert lines[0].startswith("plait: error: "), lines[0]
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def dask_client():
    """One small local cluster for the API tests of this process (started once)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


# ---- 1. Definitions and bad input ----------------------------------------------------------------

BAD_DEFINITIONS = {
    "unknown path": ('grid = { "flow.bulk.cnt" = [1, 2] }', [], 'sweep.grid."flow.bulk.cnt"'),
    "unknown path in zip": (
        'zip = { "link.bottleneck.rat" = ["1Mbps", "2Mbps"] }',
        [],
        'sweep.zip."link.bottleneck.rat"',
    ),
    "unknown element": ('grid = { "flow.other.count" = [1, 2] }', [], 'sweep.grid."flow.other'),
    "empty grid": ("grid = {}", [], "sweep.grid"),
    "empty zip": ("zip = {}", [], "sweep.zip"),
    "grid not a table": ("grid = [1, 2]", [], "sweep.grid"),
    "empty list": ('grid = { "flow.bulk.count" = [] }', [], 'sweep.grid."flow.bulk.count"'),
    "not a list": ('grid = { "flow.bulk.count" = 3 }', [], 'sweep.grid."flow.bulk.count"'),
    "string not a list": ('grid = { "flow.bulk.count" = "1,2" }', [], 'sweep.grid."flow.bulk'),
    "wrong type": ('grid = { "flow.bulk.count" = ["two"] }', [], 'sweep.grid."flow.bulk.count"'),
    "wrong type in zip": (
        'zip = { "link.bottleneck.rate" = ["fast", "slow"] }',
        [],
        'sweep.zip."link.bottleneck.rate"',
    ),
    "out of range": ('grid = { "flow.bulk.count" = [1, 0] }', [], 'sweep.grid."flow.bulk.count"'),
    "mixed types": ('grid = { "flow.bulk.count" = [1, "2"] }', [], 'sweep.grid."flow.bulk.count"'),
    "number and boolean": (
        'grid = { "flow.bulk.count" = [1, true] }',
        [],
        'sweep.grid."flow.bulk.count"',
    ),
    "duplicate value": (
        'grid = { "flow.bulk.count" = [1, 2, 1] }',
        [],
        'sweep.grid."flow.bulk.count"',
    ),
    "duplicate table value": (
        'grid = { "link.bottleneck.queue" = [{ kind = "red" }, { kind = "red" }] }',
        [],
        'sweep.grid."link.bottleneck.queue"',
    ),
    "same run twice": (
        'grid = { "flow.bulk.count" = [1, 2] }\nzip = { "flow[0].count" = [3] }',
        [],
        "sweep: runs",
    ),
    "zip lengths": (
        'zip = { "link.bottleneck.rate" = ["1Mbps", "2Mbps"], "link.bottleneck.delay" = ["5ms"] }',
        [],
        "sweep.zip",
    ),
    "path in grid and zip": (
        'grid = { "flow.bulk.count" = [1, 2] }\nzip = { "flow.bulk.count" = [3, 4] }',
        [],
        'sweep.zip."flow.bulk.count"',
    ),
    "seed in grid": ('grid = { "simulation.seed" = [1, 2] }', [], 'sweep.grid."simulation.seed"'),
    "seed in zip": ('zip = { "simulation.seed" = [1, 2] }', [], 'sweep.zip."simulation.seed"'),
    "zero seeds": ("seeds = 0", [], "sweep.seeds"),
    "negative seed count": ("seeds = -2", [], "sweep.seeds"),
    "negative seed": ("seeds = [1, -2]", [], "sweep.seeds"),
    "duplicate seed": ("seeds = [3, 1, 3]", [], "sweep.seeds"),
    "boolean seeds": ("seeds = true", [], "sweep.seeds"),
    "boolean seed": ("seeds = [true, false]", [], "sweep.seeds"),
    "no seeds": ("seeds = []", [], "sweep.seeds"),
    "fractional seeds": ("seeds = 2.5", [], "sweep.seeds"),
    "seeds as text": ('seeds = "3"', [], "sweep.seeds"),
    "unknown sweep key": ("seds = 3", [], "sweep.seds"),
    "unknown table": ('tables = ["flow"]', [], "sweep.tables"),
    "table twice": ('tables = ["flows", "flows"]', [], "sweep.tables"),
    "no tables": ("tables = []", [], "sweep.tables"),
    "--seeds 0": ("seeds = 2", ["--seeds", "0"], "sweep.seeds"),
    "--seeds repeated": ("seeds = 2", ["--seeds", "4,4"], "sweep.seeds"),
    "--tables unknown": ("seeds = 2", ["--tables", "flows,flow"], "sweep.tables"),
}


@pytest.mark.parametrize("case", BAD_DEFINITIONS)
def test_bad_definition_is_one_line_naming_file_and_field(case, tmp_path, monkeypatch, capsys):
    sweep_table, args, field = BAD_DEFINITIONS[case]
    write(tmp_path / "sweep.toml", base() + "\n[sweep]\n" + sweep_table + "\n")
    monkeypatch.chdir(tmp_path)
    # Without --out the results would go to results/sweep; with it, to a new folder.
    code = cli_main(["sweep", "sweep.toml", *args])
    out, err = capsys.readouterr()
    assert code == 2, err
    line = one_error_line(err)
    assert line.startswith("plait: error: sweep.toml: "), line
    assert field in line, line
    assert out == ""
    code = cli_main(["sweep", "sweep.toml", "--out", "new/folder", *args])
    assert code == 2
    assert one_error_line(capsys.readouterr().err) == line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.toml"]


def test_bad_definition_exit_code_in_a_shell(cli, tmp_path):
    write(tmp_path / "s.toml", base() + '\n[sweep]\ngrid = { "flow.bulk.count" = ["two"] }\n')
    code, out, err = run_cli(cli, "sweep", "s.toml", "--out", "o")
    assert code == 2
    assert 'sweep.grid."flow.bulk.count"' in one_error_line(err)
    assert out == ""
    assert not (tmp_path / "o").exists()


def test_api_rejects_bad_input_before_touching_out(tmp_path):
    path = write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)
    out = tmp_path / "out"
    bad = [
        (SweepError, r"sweep\.grid: empty", {"grid": {}}),
        (
            SweepError,
            r'sweep\.grid\."flow\.bulk\.count": expected a list',
            {"grid": {"flow.bulk.count": "12"}},
        ),  # noqa: E501
        (SweepError, r"different types", {"grid": {"flow.bulk.count": [1, None]}}),
        (SweepError, r"finite", {"grid": {"link.bottleneck.queue.packets": [float("nan")]}}),
        (SweepError, r"sweep\.seeds", {"seeds": True}),
        (SweepError, r"sweep\.seeds", {"seeds": []}),
        (SweepError, r"sweep\.seeds", {"seeds": [1, 2**64]}),
        (SweepError, r"sweep\.tables", {"tables": ["flows", "nope"]}),
        (
            SweepError,
            r"sweep\.zip: lists",
            {"zip": {"link.bottleneck.rate": ["1Mbps"], "link.bottleneck.delay": ["1ms", "2ms"]}},
        ),  # noqa: E501
        (SweepError, r"already in sweep\.grid", {"zip": {"flow.bulk.count": [1, 2, 3]}}),
        (ValueError, r"workers", {"workers": 0}),
        (ValueError, r"workers", {"workers": True}),
        (ValueError, r"batch", {"batch": 0}),
        (ValueError, r"max_memory", {"max_memory": 0}),
    ]
    for error, message, kwargs in bad:
        with pytest.raises(error, match=message):
            plait.sweep(path, out=out, **kwargs)
    assert not out.exists()


@pytest.mark.parametrize("fresh", [False, True], ids=["resume", "fresh"])
def test_out_folder_that_is_not_a_sweep_is_left_alone(fresh, tmp_path, capsys):
    path = write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)
    folder = tmp_path / "mine"
    (folder / "flows").mkdir(parents=True)
    write(folder / "notes.txt", "keep me")
    (folder / "flows" / "data.parquet").write_bytes(b"not a sweep's")

    def snapshot():
        return {
            p.relative_to(folder): (p.is_dir(), None if p.is_dir() else p.read_bytes())
            for p in folder.rglob("*")
        }

    before = snapshot()
    code = cli_main(["sweep", str(path), "--out", str(folder), *(["--fresh"] if fresh else [])])
    line = one_error_line(capsys.readouterr().err)
    assert code == 2
    assert "not empty and holds no sweep" in line and str(folder) in line
    assert snapshot() == before
    # A file where the folder should be.
    code = cli_main(["sweep", str(path), "--out", str(folder / "notes.txt")])
    assert code == 2
    assert "not a folder" in one_error_line(capsys.readouterr().err)
    assert snapshot() == before


# ---- 2. The results store ------------------------------------------------------------------------


def test_store_is_one_table_for_duckdb_polars_pandas_and_matches_plait_run(cli, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    path = write(tmp_path / "example.toml", base() + EXAMPLE_SWEEP)
    code, _, err = run_cli(cli, "sweep", "example.toml", "--out", "OUT", "--workers", "2")
    assert code == 0, err
    assert "Traceback" not in err
    assert summary_line(err) == {"total": 24, "done": 24, "reused": 0, "failed": 0}
    out = tmp_path / "OUT"
    assert_complete(out, 24)
    m = manifest(out)
    assert m["parameters"] == EXAMPLE_COLUMNS[1:5]
    assert m["seeds"] == [1, 2, 3] and m["tables"] == ["flows"]

    flows = pd.read_parquet(out / "flows")
    frames = {
        "duckdb": duckdb.sql(f"select * from '{out}/**/*.parquet'").df(),
        "polars scan": pl.scan_parquet(f"{out}/**/*.parquet").collect().to_pandas(),
        "polars read": pl.read_parquet(f"{out}/**/*.parquet").to_pandas(),
        "pandas": flows,
    }
    expected_points = {
        (count, packets, rate, delay, seed)
        for count, packets in itertools.product([1, 2], [5, 20])
        for rate, delay in [("10Mbps", "50ms"), ("100Mbps", "5ms")]
        for seed in [1, 2, 3]
    }
    for name, frame in frames.items():
        assert list(frame.columns[:6]) == EXAMPLE_COLUMNS, name
        assert "goodput_bps" in frame.columns, name
        # One row per flow: count flows in each run; 3 seeds x 2 x 2 points x (1 + 2) flows.
        assert len(frame) == 36, name
        runs = frame.groupby("run")
        assert runs.ngroups == 24, name
        assert (runs.size() == runs["flow.bulk.count"].first()).all(), name
        points = {tuple(r) for r in frame[EXAMPLE_COLUMNS[1:]].drop_duplicates().values}
        assert {(int(c), int(q), r, d, int(s)) for c, q, r, d, s in points} == expected_points
        assert set(frame["run"]) == set(m["keys"]), name
    # Column types as a reader sees them.
    schema = pq.read_schema(parquet_files(out)[0])
    assert str(schema.field("seed").type) == "uint64"
    assert str(schema.field("flow.bulk.count").type) == "int64"
    assert "string" in str(schema.field("link.bottleneck.rate").type)
    # Every file of the sweep has the same schema (or the glob would not read as one table).
    assert len({str(pq.read_schema(f)) for f in parquet_files(out)}) == 1

    # Determinism across processes: the runs equal plait.run of the same point and seed here.
    sample = flows.drop_duplicates("run").sort_values(EXAMPLE_COLUMNS[1:]).iloc[::5]
    assert len(sample) >= 4
    for _, row in sample.iterrows():
        params = {p: row[p] for p in EXAMPLE_COLUMNS[1:5]}
        params = {p: v.item() if hasattr(v, "item") else v for p, v in params.items()}
        mine = plait.run(path, seed=int(row["seed"]), overrides=params).flows
        stored = flows[flows["run"] == row["run"]].sort_values("name")
        mine = mine.sort_values("name")
        for column in ("goodput_bps", "bytes_delivered", "packets_sent", "start_s", "drops"):
            assert stored[column].tolist() == mine[column].tolist(), (column, params)
    # The seeds are applied: the random start times differ from seed to seed.
    starts = flows[flows["flow.bulk.count"] == 1].groupby("seed")["start_s"].apply(set)
    assert len({frozenset(s) for s in starts}) == 3


def test_keys_follow_the_content_and_new_seeds_run_alone(tmp_path, dask_client):
    sweep = '\n[sweep]\nseeds = 3\ngrid = { "flow.bulk.count" = [1, 2] }\n'
    path = write(tmp_path / "s.toml", base() + sweep)
    out = tmp_path / "out"
    first = plait.sweep(path, out=out, client=dask_client)
    assert (first.summary.total, first.summary.done, first.summary.reused) == (6, 6, 0)
    keys3 = set(manifest(out)["keys"])
    assert stored_keys(out) == keys3

    # Seeds 1..4: only seed 4's runs are new.
    more = plait.sweep(path, seeds=4, out=out, client=dask_client)
    assert (more.summary.total, more.summary.done, more.summary.reused) == (8, 2, 6)
    keys4 = set(manifest(out)["keys"])
    assert keys3 < keys4 and len(keys4) == 8
    new = more.flows[more.flows["run"].isin(keys4 - keys3)]
    assert set(new["seed"]) == {4}
    assert stored_keys(out) == keys4

    # The same sweep written differently (order, comments, the base seed, which every run
    # overrides, and as JSON): the same keys, nothing to run.
    rewritten = textwrap.dedent(
        """\
        # the same runs
        [[flow]]
        dst = "b"
        src = "a"
        start = { uniform = ["0s", "0.5s"] }
        kind = "tcp"
        name = "bulk"

        [[link]]
        queue = { packets = 20, kind = "droptail" }
        to = "b"
        from = "a"
        delay = "10ms"
        rate = "10Mbps"
        name = "bottleneck"

        [sweep]
        grid = { "flow[0].count" = [1, 2] }
        seeds = [4, 3, 2, 1]

        [simulation]
        seed = 99
        duration = "2s"
        """
    )
    again = plait.sweep(write(tmp_path / "other.toml", rewritten), out=out, client=dask_client)
    assert (again.summary.total, again.summary.done, again.summary.reused) == (8, 0, 8)
    assert set(manifest(out)["keys"]) == keys4
    as_json = {
        "simulation": {"duration": "2s"},
        "link": [
            {
                "name": "bottleneck",
                "from": "a",
                "to": "b",
                "rate": "10Mbps",
                "delay": "10ms",
                "queue": {"kind": "droptail", "packets": 20},
            }
        ],
        "flow": [
            {
                "name": "bulk",
                "kind": "tcp",
                "src": "a",
                "dst": "b",
                "start": {"uniform": ["0s", "0.5s"]},
            }
        ],
        "sweep": {"seeds": 4, "grid": {"flow.bulk.count": [1, 2]}},
    }
    json_path = write(tmp_path / "s.json", json.dumps(as_json))
    for scenario in (json_path, as_json):
        again = plait.sweep(scenario, out=out, client=dask_client)
        assert (again.summary.done, again.summary.reused) == (0, 8)
        assert set(manifest(out)["keys"]) == keys4
    # A value set in the base or by the sweep is the same run: count = 2 in the base and a
    # grid over the queue reaches the runs of count 2 stored above.
    count2 = base().replace('kind = "tcp"', 'kind = "tcp"\ncount = 2')
    by_base = plait.sweep(
        write(tmp_path / "count2.toml", count2),
        grid={"link.bottleneck.queue.packets": [20]},
        seeds=4,
        out=out,
        client=dask_client,
    )
    assert (by_base.summary.done, by_base.summary.reused) == (0, 4)

    # A real change of the base scenario: new keys for every run; the old runs stay, counted.
    changed = plait.sweep(
        write(tmp_path / "longer.toml", base(duration="2100ms") + sweep),
        seeds=4,
        out=out,
        client=dask_client,
    )
    assert (changed.summary.done, changed.summary.reused) == (8, 0)
    assert changed.summary.not_in_sweep == 8
    assert set(manifest(out)["keys"]).isdisjoint(keys4)
    assert len(parquet_files(out)) == 16
    # The result reads this sweep's runs only.
    assert set(changed.flows["run"]) == set(manifest(out)["keys"])
    # --fresh (fresh=True) removes everything stored before.
    fresh = plait.sweep(path, seeds=2, out=out, fresh=True, client=dask_client)
    assert (fresh.summary.done, fresh.summary.reused, fresh.summary.not_in_sweep) == (4, 0, 0)
    assert_complete(out, 4)


def test_whole_and_fractional_numbers_make_one_float_column(tmp_path, dask_client):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    text = base().replace('kind = "tcp"', 'kind = "tcp"\ncc = { name = "aimd", alpha = 1 }')
    text = text.replace(
        "packets = 20 }", 'packets = 20 }\nloss = { kind = "bernoulli", p = 0.001 }'
    )
    path = write(tmp_path / "s.toml", text)
    out = tmp_path / "out"
    result = plait.sweep(
        path,
        grid={"flow.bulk.cc.alpha": [1, 1.5, 2]},
        zip={"link.bottleneck.loss.p": [0, 0.01]},
        seeds=[1],
        out=out,
        client=dask_client,
    )
    assert result.summary.done == 6
    types = {
        str(pq.read_schema(f).field(c).type)
        for f in parquet_files(out)
        for c in ("flow.bulk.cc.alpha", "link.bottleneck.loss.p")
    }
    assert types == {"double"}
    glob = f"{out}/**/*.parquet"
    alphas = duckdb.sql(f"""select distinct "flow.bulk.cc.alpha" as a from '{glob}' order by a""")
    assert [r[0] for r in alphas.fetchall()] == [1.0, 1.5, 2.0]
    frame = pl.scan_parquet(glob).collect()
    assert sorted(set(frame["flow.bulk.cc.alpha"].to_list())) == [1.0, 1.5, 2.0]
    assert sorted(set(pd.read_parquet(out / "flows")["link.bottleneck.loss.p"])) == [0.0, 0.01]


def test_several_tables_and_open_results(tmp_path, dask_client):
    duckdb = pytest.importorskip("duckdb")
    path = write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)
    out = tmp_path / "out"
    tables = ["flows", "links", "paths"]
    result = plait.sweep(path, seeds=[7], tables=tables, out=out, client=dask_client)
    assert result.summary.done == 8
    keys = set(manifest(out)["keys"])
    assert all(stored_keys(out, t) == keys for t in tables)
    links = duckdb.sql(f"select * from '{out}/links/*.parquet'").df()
    assert list(links.columns[:6]) == EXAMPLE_COLUMNS
    assert len(links) == len(result.links) > 0
    assert set(links["seed"]) == {7}
    # No multipath flow: every run's paths table is empty, but typed like the others, so
    # that runs with and without rows read as one table.
    assert result.table("paths").empty
    front = {
        str(pq.read_schema(f).field(c))
        for f in parquet_files(out, "flows")
        for c in EXAMPLE_COLUMNS
    }
    for f in parquet_files(out, "paths"):
        assert pq.read_metadata(f).num_rows == 0
        assert {str(pq.read_schema(f).field(c)) for c in EXAMPLE_COLUMNS} <= front, f
    assert duckdb.sql(f"select count(*) from '{out}/paths/*.parquet'").fetchall() == [(0,)]
    with pytest.raises(ValueError, match="not stored"):
        result.table("flow_series")
    again = open_results(out)
    assert again.summary.total == again.summary.reused == 8
    pd.testing.assert_frame_equal(
        again.flows.sort_values(["run", "name"]).reset_index(drop=True),
        result.flows.sort_values(["run", "name"]).reset_index(drop=True),
    )
    # A run missing one of its tables is run again (both files rewritten).
    key = sorted(stored_keys(out))[0]
    (out / "links" / f"{key}.parquet").unlink()
    redo = plait.sweep(path, seeds=[7], tables=tables, out=out, client=dask_client)
    assert (redo.summary.done, redo.summary.reused) == (1, 7)
    assert_all_whole(out, "links")
    with pytest.raises(StoreError, match="no sweep results"):
        open_results(tmp_path / "nowhere")


def test_parameter_values_of_every_kind_and_extreme_seeds(tmp_path, dask_client):
    path = write(tmp_path / "s.toml", base())  # no [sweep] table: all from here
    out = tmp_path / "out"
    queues = [{"kind": "droptail", "packets": 5}, {"kind": "red", "packets": 50}]
    result = plait.sweep(
        path,
        grid={"link.bottleneck.queue": queues, "flow.bulk.sack": [True, False]},
        zip={"flow.bulk.count": [2]},
        seeds=[0, 2**63, 2**64 - 1],
        out=out,
        client=dask_client,
    )
    assert (result.summary.done, result.summary.failed) == (12, 0), result.summary.errors
    flows = result.flows
    # Tables as the TOML text they were set with, booleans as booleans, seeds as uint64.
    assert set(flows["link.bottleneck.queue"]) == {
        '{"kind" = "droptail", "packets" = 5}',
        '{"kind" = "red", "packets" = 50}',
    }
    assert flows["flow.bulk.sack"].dtype == bool
    assert sorted(set(flows["seed"].tolist())) == [0, 2**63, 2**64 - 1]
    schema = pq.read_schema(parquet_files(out)[0])
    assert str(schema.field("seed").type) == "uint64"
    # Each equals plait.run with the same seed (the largest included).
    row = flows[(flows["seed"] == 2**64 - 1) & flows["flow.bulk.sack"]].iloc[0]
    queue = next(q for q in queues if q["kind"] in row["link.bottleneck.queue"])
    overrides = {"link.bottleneck.queue": queue, "flow.bulk.sack": True, "flow.bulk.count": 2}
    mine = plait.run(path, seed=2**64 - 1, overrides=overrides).flows.sort_values("name")
    theirs = flows[flows["run"] == row["run"]].sort_values("name")
    assert theirs["goodput_bps"].tolist() == mine["goodput_bps"].tolist()
    # A first seed beyond TOML's integers is fine for the definition too.
    again = plait.sweep(
        path, grid={"flow.bulk.count": [2]}, seeds=[2**64 - 1], out=out, client=dask_client
    )
    assert again.summary.failed == 0


def test_cli_sends_runs_to_an_existing_scheduler(cli, tmp_path, dask_client, capsys):
    write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)
    address = dask_client.scheduler.address
    code, _, err = run_cli(cli, "sweep", "s.toml", "--out", "OUT", "--scheduler", address)
    assert code == 0, err
    assert summary_line(err) == {"total": 24, "done": 24, "reused": 0, "failed": 0}
    assert_complete(tmp_path / "OUT", 24)
    # The scheduler's workers stay up for the next client.
    assert len(dask_client.scheduler_info()["workers"]) == 2
    code = cli_main(["sweep", str(tmp_path / "s.toml"), "--scheduler", address, "--slurm"])
    assert code == 2
    assert "exclude each other" in one_error_line(capsys.readouterr().err)


# ---- 3. Resume after the whole sweep is killed ---------------------------------------------------


def test_resume_after_sigkill_of_the_whole_sweep(cli, tmp_path, dask_client):
    runs = 80
    write(tmp_path / "long.toml", long_sweep("3s", seeds=10))
    out = tmp_path / "OUT"
    first = cli("sweep", "long.toml", "--out", "OUT", "--workers", "2")
    wait_until(lambda: len(parquet_files(out)) >= 3, "the first results", first, timeout=TIMEOUT)
    workers = dask_workers(first.pid)
    first.signal_group(signal.SIGKILL)
    first.proc.wait(timeout=60)
    assert first.proc.returncode == -signal.SIGKILL
    wait_until(lambda: not any(alive(p) for p in workers), "the workers to go", timeout=30)
    before = stored_keys(out)
    assert 3 <= len(before) < runs, "the sweep ended before it could be killed"
    # Whatever is under a final name is whole; a file being written keeps a temporary name.
    assert_all_whole(out)
    assert before <= set(manifest(out)["keys"])

    code, _, err = run_cli(cli, "sweep", "long.toml", "--out", "OUT", "--workers", "2")
    assert code == 0, err
    assert summary_line(err) == {
        "total": runs,
        "done": runs - len(before),
        "reused": len(before),
        "failed": 0,
    }
    assert_complete(out, runs)
    assert before <= stored_keys(out)

    # Runs stored before the kill and after it equal those of a fresh, uninterrupted sweep.
    flows = pd.read_parquet(out / "flows")
    firsts = flows[flows["run"].isin(before)]
    lasts = flows[~flows["run"].isin(before)]
    sample = pd.concat([firsts.drop_duplicates("run")[:3], lasts.drop_duplicates("run")[:3]])
    fresh_out = tmp_path / "fresh"
    plait.sweep(
        tmp_path / "long.toml",
        grid={"flow.bulk.count": sorted({int(c) for c in sample["flow.bulk.count"]})},
        seeds=sorted({int(s) for s in sample["seed"]}),
        out=fresh_out,
        client=dask_client,
    )
    for key in sample["run"]:
        resumed = pq.read_table(out / "flows" / f"{key}.parquet")
        fresh = pq.read_table(fresh_out / "flows" / f"{key}.parquet")
        assert resumed.equals(fresh), key


# ---- 4. A worker dies mid-sweep ------------------------------------------------------------------


def test_worker_killed_mid_sweep_loses_nothing(cli, tmp_path):
    runs = 40
    write(tmp_path / "long.toml", long_sweep("10s", seeds=5))
    out = tmp_path / "OUT"
    sweep = cli("sweep", "long.toml", "--out", "OUT", "--workers", "2", "--batch", "1")
    wait_until(lambda: len(parquet_files(out)) >= 3, "the first results", sweep, timeout=TIMEOUT)
    workers = dask_workers(sweep.pid)
    assert len(workers) == 2, [cmdline(p) for p in descendants(sweep.pid)]
    assert sweep.pid not in workers
    os.kill(workers[0], signal.SIGKILL)
    at_kill = len(parquet_files(out))
    # The nanny starts a new worker in its place.
    wait_until(
        lambda: not sweep.running() or any(p not in workers for p in dask_workers(sweep.pid)),
        "a new worker",
    )
    code = sweep.wait()
    err = sweep.stderr
    assert code == 0, err
    assert at_kill < runs, "the sweep ended before a worker could be killed"
    assert summary_line(err) == {"total": runs, "done": runs, "reused": 0, "failed": 0}
    assert_complete(out, runs)
    assert "Traceback" not in err


# ---- 5. Corrupt and truncated result files -------------------------------------------------------


def test_corrupt_truncated_and_partial_files_are_redone(tmp_path, dask_client):
    path = write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)
    out = tmp_path / "out"
    first = plait.sweep(path, seeds=2, out=out, client=dask_client)
    total = first.summary.total
    assert total == 16 and first.summary.done == 16
    files = parquet_files(out)
    truncated, garbage, empty = files[1], files[5], files[9]
    originals = {f: pq.read_table(f) for f in (truncated, garbage, empty)}
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    garbage.write_bytes(b"PAR1" + os.urandom(600) + b"PAR1")
    empty.write_bytes(b"")
    stray = out / "flows" / f".{files[0].stem}.parquet.12345.partial"
    stray.write_bytes(data[:100])
    stray_failure = out / "failures" / f".{files[0].stem}.json.12345.partial"
    stray_failure.write_bytes(b"{")

    again = plait.sweep(path, seeds=2, out=out, client=dask_client)
    assert again.summary.reused == total - 3
    assert again.summary.done == 3 and again.summary.failed == 0
    assert not stray.exists() and not stray_failure.exists()
    assert_complete(out, total)
    for f, table in originals.items():
        assert pq.read_table(f).equals(table), f
    # The result reads every run.
    assert set(again.flows["run"]) == set(manifest(out)["keys"])


# ---- 6. SLURM and PBS without SLURM or PBS -------------------------------------------------------

FAKE_SUBMIT = """\
#!/usr/bin/env bash
# Fake {submit}: keeps a copy of the job script (dask-jobqueue deletes its own), runs it with
# bash in a session of its own in the background and prints the job id.
set -eu
dir="$FAKE_JOBS"
script="${{@: -1}}"
n=1
until mkdir "$dir/claim-$n" 2>/dev/null; do n=$((n + 1)); done
cp "$script" "$dir/job-$n.sh"
echo "$*" > "$dir/job-$n.args"
setsid nohup bash "$dir/job-$n.sh" > "$dir/job-$n.log" 2>&1 < /dev/null &
echo $! > "$dir/job-$n.pid"
echo "{reply}"
"""

FAKE_CANCEL = """\
#!/usr/bin/env bash
# Fake {cancel}: kills the process group of each job id.
dir="$FAKE_JOBS"
for id in "$@"; do
  id="${{id%%.*}}"
  echo "$id" >> "$dir/cancelled"
  pid=$(cat "$dir/job-$id.pid" 2>/dev/null) || continue
  kill -TERM -- "-$pid" 2>/dev/null || true
done
"""

FAKE_STATUS = """\
#!/usr/bin/env bash
echo "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)"
"""

SYSTEMS = {
    "slurm": {
        "submit": "sbatch",
        "cancel": "scancel",
        "status": "squeue",
        "reply": "Submitted batch job $n",
        "header": ["#SBATCH --mem=1G", "#SBATCH -t 00:10:00", "#SBATCH --cpus-per-task=1"],
        "queue": "#SBATCH -p short",
        "account": "#SBATCH -A lab",
        "directive": "#SBATCH --qos=low",
    },
    "pbs": {
        "submit": "qsub",
        "cancel": "qdel",
        "status": "qstat",
        "reply": "$n.fakepbs",
        "header": ["#PBS -l walltime=00:10:00", "mem="],
        "queue": "#PBS -q short",
        "account": "#PBS -A lab",
        "directive": "#PBS --qos=low",
    },
}


@pytest.mark.parametrize("system", SYSTEMS)
def test_jobqueue_workers_through_fake_batch_system(system, cli, tmp_path):
    pytest.importorskip("dask_jobqueue")
    s = SYSTEMS[system]
    bin_dir, jobs = tmp_path / "bin", tmp_path / "jobs"
    bin_dir.mkdir()
    jobs.mkdir()
    for name, text in (
        (s["submit"], FAKE_SUBMIT.format(submit=s["submit"], reply=s["reply"])),
        (s["cancel"], FAKE_CANCEL.format(cancel=s["cancel"])),
        (s["status"], FAKE_STATUS),
    ):
        write(bin_dir / name, text).chmod(0o755)
    write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "FAKE_JOBS": str(jobs),
        # Keep Dask's own configuration files out of it.
        "DASK_CONFIG": str(tmp_path / "dask-config"),
    }
    try:
        code, _, err = run_cli(
            cli,
            "sweep",
            "s.toml",
            "--out",
            "OUT",
            f"--{system}",
            "--max-workers",
            "2",
            "--job-memory",
            "1GiB",
            "--walltime",
            "00:10:00",
            "--queue",
            "short",
            "--account",
            "lab",
            "--job-directive=--qos=low",
            env=env,
        )
        assert code == 0, err + "".join(p.read_text() for p in jobs.glob("*.log"))
        assert summary_line(err) == {"total": 24, "done": 24, "reused": 0, "failed": 0}
        assert_complete(tmp_path / "OUT", 24)
        scripts = sorted(jobs.glob("job-*.sh"))
        assert 1 <= len(scripts)
        for script in scripts:
            text = script.read_text()
            for line in [*s["header"], s["queue"], s["account"], s["directive"]]:
                assert line in text, (line, text)
            assert "distributed.cli.dask_worker" in text and "--nthreads 1" in text
        # Every job was cancelled when the sweep ended, and its worker is gone.
        submitted = {p.stem.split("-")[1] for p in scripts}
        assert set((jobs / "cancelled").read_text().split()) >= submitted
        pids = [int(p.read_text()) for p in jobs.glob("job-*.pid")]
        wait_until(lambda: not any(alive(p) for p in pids), "the jobs to end", timeout=60)
    finally:
        for p in jobs.glob("job-*.pid"):
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.killpg(int(p.read_text()), signal.SIGKILL)


# ---- 7. Ctrl-C -----------------------------------------------------------------------------------


def test_ctrl_c_stops_cleanly_and_the_rerun_completes(cli, tmp_path, dask_client):
    runs = 80
    write(tmp_path / "long.toml", long_sweep("3s", seeds=10))
    out = tmp_path / "OUT"
    sweep = cli("sweep", "long.toml", "--out", "OUT", "--workers", "2")
    wait_until(lambda: len(parquet_files(out)) >= 3, "the first results", sweep, timeout=TIMEOUT)
    workers = dask_workers(sweep.pid)
    sweep.signal_group(signal.SIGINT)  # what a terminal does on Ctrl-C
    code = sweep.wait(timeout=60)
    err = sweep.stderr
    assert code == 130, err
    stored = len(parquet_files(out))
    assert stored < runs, "the sweep ended before Ctrl-C"
    assert "Traceback" not in err and "Error" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("plait: interrupted; "), err
    assert f"{stored} of {runs} runs stored in OUT" in last
    assert "again to resume" in last
    # Nothing is left running, every stored file is whole, the lock is free.
    wait_until(lambda: not any(alive(p) for p in workers), "the workers to go", timeout=30)
    assert_all_whole(out)
    assert partial_files(out) == []
    with open(out / ".plait-sweep.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    rest = plait.sweep(tmp_path / "long.toml", out=out, client=dask_client)
    assert (rest.summary.reused, rest.summary.done, rest.summary.failed) == (
        stored,
        runs - stored,
        0,
    )
    assert_complete(out, runs)


# ---- 8. One sweep at a time per folder -----------------------------------------------------------


def test_second_sweep_into_the_same_folder_is_refused(cli, tmp_path):
    write(tmp_path / "long.toml", long_sweep("10s", seeds=16))
    out = tmp_path / "OUT"
    first = cli("sweep", "long.toml", "--out", "OUT", "--workers", "2")
    wait_until(lambda: len(parquet_files(out)) >= 1, "the first results", first, timeout=TIMEOUT)
    started = time.monotonic()
    code, stdout, err = run_cli(cli, "sweep", "long.toml", "--out", "OUT", "--workers", "2")
    took = time.monotonic() - started
    assert first.running(), "the first sweep ended before the second one tried"
    assert code == 2, err
    line = one_error_line(err)
    assert "another sweep is writing into this folder" in line and "OUT" in line
    assert stdout == ""
    assert took < 60
    # The same from Python, and with --fresh, which must not remove anything meanwhile.
    with pytest.raises(StoreError, match="another sweep"):
        plait.sweep(tmp_path / "long.toml", out=out, fresh=True)
    assert first.running()
    assert (out / "sweep.json").exists()
    kept = stored_keys(out)
    assert kept and kept <= set(manifest(out)["keys"])
    first.signal_group(signal.SIGINT)
    assert first.wait(timeout=60) == 130
    assert kept <= stored_keys(out)


# ---- 9. Failed runs ------------------------------------------------------------------------------


def test_failed_runs_are_recorded_and_redone_alone(cli, tmp_path):
    sweep = '\n[sweep]\nseeds = 2\ngrid = { "flow.bulk.count" = [1, 200], "link.bottleneck.queue.packets" = [5, 20] }\n'  # noqa: E501
    write(tmp_path / "s.toml", base() + sweep)
    out = tmp_path / "OUT"
    # 200 flows need about 1.6 MiB by the estimate, one flow a few KiB.
    args = ["sweep", "s.toml", "--out", "OUT", "--workers", "2"]
    code, _, err = run_cli(cli, *args, "--max-memory", "1MB")
    assert code == 1, err
    assert "Traceback" not in err
    assert summary_line(err) == {"total": 8, "done": 4, "reused": 0, "failed": 4}
    assert re.search(r"^  4 failed: ResourceLimitError: s\.toml: .*memory", err, re.M), err
    assert f"failed runs are listed in {Path('OUT') / 'failures'}" in err
    keys = set(manifest(out)["keys"])
    records = {p.stem: json.loads(p.read_text()) for p in (out / "failures").glob("*.json")}
    assert len(records) == 4 and set(records) <= keys
    assert set(records).isdisjoint(stored_keys(out))
    for key, record in records.items():
        assert record["run"] == key
        assert record["flow.bulk.count"] == 200
        assert record["link.bottleneck.queue.packets"] in (5, 20)
        assert record["seed"] in (1, 2)
        assert record["error"].startswith("ResourceLimitError: ")
    assert {(r["link.bottleneck.queue.packets"], r["seed"]) for r in records.values()} == {
        (5, 1),
        (5, 2),
        (20, 1),
        (20, 2),
    }
    assert stored_keys(out) == keys - set(records)
    failures = open_results(out).failures
    assert sorted(failures["run"]) == sorted(records)

    # The same limit again: the failed runs run (and fail) again, the others are kept.
    code, _, err = run_cli(cli, *args, "--max-memory", "1MB", "--quiet")
    assert code == 1 and err == ""
    assert len(list((out / "failures").glob("*.json"))) == 4

    code, _, err = run_cli(cli, *args, "--max-memory", "1GB")
    assert code == 0, err
    assert summary_line(err) == {"total": 8, "done": 4, "reused": 4, "failed": 0}
    assert_complete(out, 8)
    assert open_results(out).failures.empty


# ---- 10. The Python API --------------------------------------------------------------------------


def test_api_in_memory_with_its_own_workers_and_grid_replacing_the_files(tmp_path):
    path = write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)
    result = plait.sweep(path, grid={"flow.bulk.count": [1, 3]}, seeds=[1, 2], workers=2)
    s = result.summary
    # The file's zip stays (2 rows); its grid and seeds are replaced: 2 x 2 x 2 runs.
    assert (s.total, s.done, s.reused, s.failed) == (8, 8, 0, 0)
    assert s.cluster == "local, 2 worker processes"
    assert not result.path.exists()  # the temporary folder is gone; the tables are in memory
    flows = result.flows
    assert list(flows.columns[:5]) == [
        "run",
        "flow.bulk.count",
        "link.bottleneck.rate",
        "link.bottleneck.delay",
        "seed",
    ]
    assert "link.bottleneck.queue.packets" not in flows.columns
    assert sorted(set(flows["flow.bulk.count"])) == [1, 3]
    assert sorted(set(flows["seed"])) == [1, 2]
    assert len(flows) == (1 + 3) * 2 * 2
    assert flows["run"].nunique() == 8
    assert result.failures.empty
    with pytest.raises(ValueError, match="not stored"):
        result.table("links")
    # One of them, against plait.run here.
    row = flows[(flows["flow.bulk.count"] == 3) & (flows["seed"] == 2)].iloc[0]
    overrides = {
        "flow.bulk.count": 3,
        "link.bottleneck.rate": row["link.bottleneck.rate"],
        "link.bottleneck.delay": row["link.bottleneck.delay"],
    }
    mine = plait.run(path, seed=2, overrides=overrides).flows.sort_values("name")
    theirs = flows[flows["run"] == row["run"]].sort_values("name")
    assert theirs["goodput_bps"].tolist() == mine["goodput_bps"].tolist()


def test_a_simulations_key_follows_the_simulators_source(monkeypatch):
    """Stored runs are keyed by the core's source identity: runs made by other simulator code
    are never reused as this code's, while a kernel run (which no simulator code made) keeps
    its key."""
    from plait.sweeps import spec

    assert re.fullmatch(r"[0-9a-f]{16}", plait.__core_id__)
    canonical = {"simulation": {"seed": 1}, "flow": [{"name": "f"}]}
    ours, kernel = spec.run_key(canonical), spec.run_key(canonical, "6.18.44")
    monkeypatch.setattr(spec, "__core_id__", "0" * 16)
    assert spec.run_key(canonical) != ours
    assert spec.run_key(canonical, "6.18.44") == kernel
    assert (
        plait.__core_id__
        in subprocess.run([*PLAIT, "--version"], capture_output=True, text=True, check=True).stdout
    )
