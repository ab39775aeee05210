"""Start-up cost: what `import plait` and the `plait` command import, and the shortcuts that
keep it small giving the same output.

A command pays for every module it imports, each time it starts: pandas (with Arrow) costs
more than a short run, matplotlib and Dask as much again. They are imported where they are
used, so `plait --help`, `plait bench`, `plait validate` and `plait run` without Parquet
output import none of them; the tests here fail if one creeps back in. `plait run` prints and
writes its JSON summary from plain rows (:class:`plait.api.RunRows`) rather than DataFrames,
and `plait.cli.main` registers only the subcommand it runs: both are checked against the
whole path, output for output.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = sorted((REPO / "tests" / "golden").glob("*.toml"))

#: Never imported by `import plait`, the command line's parser, or the commands below.
HEAVY = ("pandas", "pyarrow", "matplotlib", "dask", "distributed", "dask_jobqueue")


def _imported_after(code: str) -> set[str]:
    """The top-level packages imported once `code` has run in a fresh interpreter."""
    probe = (
        code
        + "\nimport json, sys\n"
        + "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    ("code", "also_absent"),
    [
        ("import plait", ("numpy", "rich")),
        ("import plait.cli", ("numpy", "rich")),
        ("import plait.cli\nplait.cli.build_parser()", ("numpy", "rich")),
        ("import plait.api\nimport plait.sweeps\nimport plait.experiments", ("numpy", "rich")),
        ("from plait.cli import main\nmain(['--version'])", ("numpy", "rich")),
        ("from plait.cli import main\nmain(['--help'])", ("numpy", "rich")),
    ],
    ids=["plait", "plait.cli", "build_parser", "api-sweeps-experiments", "version", "help"],
)
def test_imports_stay_light(code: str, also_absent: tuple[str, ...]):
    imported = _imported_after(code)
    assert "plait" in imported
    assert not imported & {*HEAVY, *also_absent}


def test_commands_import_only_what_they_use(scenario: Path):
    main = "from plait.cli import main\n"
    # bench runs the simulator in a fresh interpreter; this process only parses and prints.
    bench = _imported_after(main + "main(['bench', 'dumbbell', '--flows', '2', '--duration', '1'])")
    assert not bench & {*HEAVY, "numpy", "rich"}
    validate = _imported_after(main + f"main(['validate', {str(scenario)!r}])")
    assert not validate & {*HEAVY, "numpy", "rich"}
    # run: the simulator's arrays are numpy's and the tables are rich's; no DataFrames.
    run = _imported_after(main + f"main(['run', {str(scenario)!r}, '--json', '-'])")
    assert not run & set(HEAVY)
    # Parquet files are written from DataFrames.
    parquet = _imported_after(
        main + f"main(['run', {str(scenario)!r}, '--quiet', '--out', {str(scenario.parent)!r}])"
    )
    assert {"pandas", "pyarrow"} <= parquet


def _both(path: Path, seed: int | None = None):
    """A run's Result and RunRows, from the same core result."""
    from plait.api import Result, RunRows, _run_core

    raw, wall = _run_core(path, seed=seed, max_memory=None)
    return Result._from_core(raw, wall), RunRows._from_core(raw, wall)


def _printed(result) -> str:
    from plait.cli.tables import print_result
    from rich.console import Console

    out = io.StringIO()
    print_result(result, title="t", console=Console(file=out, width=200))
    return out.getvalue()


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_rows_give_the_results_summary_and_tables(path: Path):
    result, rows = _both(path)
    assert rows.summary_json() == result.summary_json()
    assert rows.summary() == result.summary()
    assert _printed(rows) == _printed(result)


def test_rows_with_nan_paths_and_series(scenario: Path):
    """NaN cells (None in the summary), multipath rows, and a scenario sampling series."""
    mptcp = REPO / "tests" / "golden" / "mptcp_outage.toml"
    for path in (scenario, mptcp):
        result, rows = _both(path, seed=7)
        text = rows.summary_json()
        assert text == result.summary_json()
        assert _printed(rows) == _printed(result)
    assert "null" in text and json.loads(text)["paths"]


def _parse(parser_of, argv: list[str]):
    """What parsing `argv` prints and returns (exit code, or the parsed options)."""
    from plait.cli import build_parser

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            parsed = vars(build_parser(parser_of(argv)).parse_args(argv))
        except SystemExit as e:
            parsed = {"exit": e.code}
    return parsed, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "x.toml", "--seed", "3", "--set", "a.b=1", "--json", "-"],
        ["run", "--help"],
        ["run"],
        ["run", "x.toml", "--bogus"],
        ["run", "x.toml", "extra"],
        ["run", "x.toml", "--max-memory", "lots"],
        ["validate", "x.toml"],
        ["sweep", "x.toml", "--workers", "2", "--seeds", "1,2"],
        ["sweep", "--help"],
        ["reproduce", "nope"],
        ["list", "--json"],
        ["bench", "dumbbell", "--flows", "1e3"],
        ["bench", "nope"],
        ["reproduce", "parallel-tcp", "--seeds", "1,7", "--quick"],
        ["model", "altman", "--n", "1..4"],
        ["model"],
        ["model", "tfrc", "--p", "nan"],
        ["fluid", "--policy", "largest-rate"],
        ["fluid", "--help"],
    ],
    ids=lambda argv: "-".join(argv),
)
def test_parser_of_one_subcommand_parses_as_the_whole(argv: list[str]):
    from plait.cli import COMMANDS

    assert argv[0] in COMMANDS
    whole = _parse(lambda argv: None, argv)
    one = _parse(lambda argv: argv[0], argv)
    assert one == whole


def test_commands_table_names_each_subcommand():
    from plait.cli import COMMANDS, build_parser

    whole = build_parser()
    (sub,) = [a for a in whole._actions if a.dest == "command"]
    assert list(sub.choices) == list(COMMANDS)
    for name in COMMANDS:
        (one,) = [a for a in build_parser(name)._actions if a.dest == "command"]
        assert list(one.choices) == [name]


def test_annotations_resolve_without_importing_pandas_first():
    code = (
        "import sys, typing\n"
        "import plait, plait.sweeps\n"
        "assert 'pandas' not in sys.modules\n"
        "hints = typing.get_type_hints(plait.Result)\n"
        "import pandas\n"
        "assert hints['flows'] is pandas.DataFrame\n"
        "table = typing.get_type_hints(plait.sweeps.SweepResult.table)\n"
        "assert table['return'] is pandas.DataFrame\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
