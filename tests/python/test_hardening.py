"""Regression tests for the hardening report: output destinations, special files, Ctrl-C in
every phase, resource guards, names printed literally, and the small things of the CLI.

Each test is named after what it pins; together they failed before the fixes.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import plait
import pytest
from plait import output
from plait.cli import main

REPO = Path(__file__).resolve().parents[2]
DUMBBELL = REPO / "experiments" / "dumbbell" / "dumbbell.toml"
_ENTRY = "import sys; from plait.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def endless(tmp_path: Path) -> Path:
    """A scenario that would take hours: any check made after the run would never be seen."""
    path = tmp_path / "endless.toml"
    path.write_text(
        DUMBBELL.read_text(encoding="utf-8").replace('duration = "60s"', 'duration = "1000000s"'),
        encoding="utf-8",
    )
    return path


# --- 1. output destinations are checked before the run ---------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--json", "{tmp}", "is a folder; expected a file name"),
        ("--out", "{tmp}/endless.toml", "exists and is not a folder"),
        ("--out", "{tmp}/endless.toml/sub", "is a file, not a folder"),
        ("--json", "{tmp}/endless.toml/x.json", "is a file, not a folder"),
        ("--json", "/proc/plait-test/x.json", "cannot write in '/proc'"),
        ("--out", "/proc/plait-test", "cannot write in '/proc'"),
        ("--out", "-", "expected a folder, not standard output"),
        ("--json", "", "empty path"),
    ],
)
def test_bad_destination_refused_before_the_run(capsys, tmp_path, endless, option, value, message):
    before = files_under(tmp_path)
    started = time.perf_counter()
    code, out, err = cli(capsys, "run", endless, option, value.format(tmp=tmp_path))
    assert time.perf_counter() - started < 5, "the run started before the check"
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"plait: error: {option}")
    assert message in err
    assert files_under(tmp_path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
def test_read_only_folder_refused_before_the_run(capsys, tmp_path, endless):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = cli(capsys, "run", endless, "--out", locked / "out")
    finally:
        locked.chmod(0o700)
    assert code == 2 and "cannot write in" in err
    assert files_under(locked) == []


def test_same_file_for_two_options_refused(capsys, scenario, tmp_path):
    code, _, err = cli(
        capsys, "run", scenario, "--json", tmp_path / "o" / "flows.parquet", "--out", tmp_path / "o"
    )
    assert code == 2
    assert "flows.parquet' is also written by --json" in err
    assert files_under(tmp_path) == ["small.toml"]


def test_failed_write_leaves_nothing_and_restores_what_was_there(capsys, scenario, tmp_path):
    """/dev/full fails at the end: the tables written before are removed, an existing file
    that would have been replaced is kept as it was."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "flows.parquet").write_bytes(b"earlier run")
    code, _, err = cli(capsys, "run", scenario, "--out", out_dir, "--json", "/dev/full")
    assert code == 2
    assert "--json /dev/full" in err and "No space left on device" in err
    assert files_under(out_dir) == ["flows.parquet"]
    assert (out_dir / "flows.parquet").read_bytes() == b"earlier run"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_missing_parent_folders_created_and_removed_on_failure(capsys, scenario, tmp_path):
    code, _, _ = cli(capsys, "run", scenario, "--out", tmp_path / "a" / "b", "--json", "/dev/full")
    assert code == 2
    assert files_under(tmp_path) == ["small.toml"]
    code, _, _ = cli(capsys, "run", scenario, "--out", tmp_path / "a" / "b", "--quiet")
    assert code == 0
    assert files_under(tmp_path / "a" / "b") == [
        "drops.parquet",
        "flow_series.parquet",
        "flows.parquet",
        "link_series.parquet",
        "links.parquet",
        "path_series.parquet",
        "paths.parquet",
        "picks.parquet",
        "refusals.parquet",
    ]


# --- 2. special files are honoured, not replaced --------------------------------------------


def test_json_dash_is_stdout_and_tables_go_to_stderr(capsys, scenario, tmp_path):
    code, out, err = cli(capsys, "run", scenario, "--json", "-")
    assert code == 0
    assert json.loads(out)["seed"] == 5
    assert "bulk.0" in err
    assert not (tmp_path / "-").exists()
    assert not Path("-").exists()


def test_dev_null_stays_a_device(capsys, scenario):
    code, _, _ = cli(capsys, "run", scenario, "--json", "/dev/null", "--quiet")
    assert code == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_fifo_is_written_through(scenario, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    proc = subprocess.run(
        [sys.executable, "-c", _ENTRY, "run", str(scenario), "--json", str(fifo), "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    received, _ = reader.communicate(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(received)["seed"] == 5
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_is_followed_to_its_target(capsys, scenario, tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "summary.json"
    link.symlink_to(tmp_path / "real" / "summary.json")
    code, _, _ = cli(capsys, "run", scenario, "--json", link, "--quiet")
    assert code == 0
    assert link.is_symlink()
    assert json.loads((tmp_path / "real" / "summary.json").read_text())["seed"] == 5


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_created_files_respect_the_umask(capsys, scenario, tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        code, _, _ = cli(
            capsys,
            "run",
            scenario,
            "--json",
            tmp_path / "s.json",
            "--out",
            tmp_path / "o",
            "--quiet",
        )
    finally:
        os.umask(previous)
    assert code == 0
    for path in [tmp_path / "s.json", *sorted((tmp_path / "o").iterdir())]:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path


def test_replaced_file_keeps_its_mode(capsys, scenario, tmp_path):
    target = tmp_path / "s.json"
    target.write_text("{}")
    target.chmod(0o640)
    code, _, _ = cli(capsys, "run", scenario, "--json", target, "--quiet")
    assert code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert json.loads(target.read_text())["seed"] == 5


# --- the transaction itself -------------------------------------------------------------------


def test_interrupted_writer_leaves_nothing(tmp_path):
    outputs = output.Outputs()
    folder = outputs.folder("--out", tmp_path / "new" / "deeper")
    with pytest.raises(KeyboardInterrupt):
        with outputs.writing() as tx:
            tx.write_text(folder.file("a.txt"), "a")

            def interrupted(path: Path) -> None:
                path.write_text("half")
                raise KeyboardInterrupt

            tx.write_with(folder.file("b.txt"), interrupted)
    assert files_under(tmp_path) == []


def test_ctrl_c_during_the_renames_undoes_them(tmp_path, monkeypatch):
    """SIGINT while the staged files are renamed into place: held back until the renames are
    done, then everything is undone and KeyboardInterrupt raised."""
    (tmp_path / "a.txt").write_text("old a")
    outputs = output.Outputs()
    a = outputs.file("--a", tmp_path / "a.txt")
    b = outputs.file("--b", tmp_path / "b.txt")
    real_replace = os.replace
    calls = []

    def replace_and_interrupt(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
        real_replace(src, dst)

    monkeypatch.setattr(output.os, "replace", replace_and_interrupt)
    with pytest.raises(KeyboardInterrupt):
        with outputs.writing() as tx:
            tx.write_text(a, "new a")
            tx.write_text(b, "new b")
    monkeypatch.setattr(output.os, "replace", real_replace)
    assert files_under(tmp_path) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "old a"


def test_result_to_json_and_to_parquet_use_the_same_checks(scenario, tmp_path):
    r = plait.run(scenario)
    with pytest.raises(output.OutputError, match="is a folder"):
        r.to_json(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(output.OutputError, match="exists and is not a folder"):
        r.to_parquet(tmp_path / "f")
    r.to_parquet(tmp_path / "ok")
    back = pd.read_parquet(tmp_path / "ok" / "flows.parquet")
    assert list(back.name) == ["bulk.0", "bulk.1", "bulk.2"]


# --- 3. Ctrl-C in every phase -------------------------------------------------------------------


def interrupt_after(args: list[str], delay: float, cwd: Path) -> tuple[int, str, float]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _ENTRY, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)
    assert proc.poll() is None, "ended before it could be interrupted"
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err, time.perf_counter() - sent


def test_ctrl_c_when_simulated_time_does_not_advance(tmp_path):
    """100 Tb/s links with no delay: one time slice holds billions of events; the run still
    answers within a second."""
    scenario = tmp_path / "fast.toml"
    scenario.write_text(
        '[simulation]\nduration = "100000s"\n'
        '[[link]]\nname = "l"\nfrom = "a"\nto = "b"\nrate = "100Tbps"\ndelay = "0s"\n'
        '[[flow]]\nname = "f"\nkind = "tcp"\nsrc = "a"\ndst = "b"\n',
        encoding="utf-8",
    )
    code, err, took = interrupt_after(
        ["run", str(scenario), "--json", "out.json", "--out", "out"], 3.0, tmp_path
    )
    assert code == 130, err
    assert took < 1.5
    assert err.strip() == "plait: interrupted; nothing written"
    assert files_under(tmp_path) == ["fast.toml"]


def test_ctrl_c_while_a_large_scenario_is_built(tmp_path):
    scenario = tmp_path / "big.toml"
    scenario.write_text(
        DUMBBELL.read_text(encoding="utf-8").replace("count = 10", "count = 400000"),
        encoding="utf-8",
    )
    # 400,000 flows are estimated at 4.6 GiB (12 KiB each, what `--json` costs): allowed here.
    code, err, took = interrupt_after(
        ["run", str(scenario), "--out", "o", "--max-memory", "none"], 1.5, tmp_path
    )
    assert code == 130, err
    assert took < 2.0
    assert "Traceback" not in err
    assert files_under(tmp_path) == ["big.toml"]


def test_ctrl_c_during_the_fluid_simulation(tmp_path):
    code, err, took = interrupt_after(
        ["fluid", "--events", "1e10", "--plot", "p.png"], 2.0, tmp_path
    )
    assert code == 130, err
    assert took < 2.0
    assert files_under(tmp_path) == []


def test_ctrl_c_during_an_experiment_sweep(tmp_path):
    # 400 runs of 1000 s: far from done after 3 s.
    code, err, took = interrupt_after(["reproduce", "parallel-tcp", "--out", "r"], 3.0, tmp_path)
    assert code == 130, err
    # The runs in progress stop at their next time slice when the sweep closes the workers
    # (about 0.5 s on an idle machine). Closing a local Dask
    # cluster on a loaded 2-core machine can take a few seconds more.
    assert took < 10.0
    # The sweep's cache of finished runs may exist; no result file does.
    assert not any(p.suffix in (".csv", ".md", ".png", ".html") for p in tmp_path.rglob("*"))


def test_api_run_can_be_cancelled_from_another_thread(scenario):
    import threading

    from plait import _core

    token = _core.CancelToken()
    long_run = {"simulation.duration": "100000s"}
    timer = threading.Timer(0.5, token.cancel)
    timer.start()
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        plait.run(scenario, overrides=long_run, cancel=token)
    assert time.perf_counter() - started < 2


# --- 4. resource guards ---------------------------------------------------------------------------


def test_one_nanosecond_sampling_is_refused_at_once(capsys, scenario, tmp_path):
    started = time.perf_counter()
    code, out, err = cli(
        capsys, "run", scenario, "--set", "simulation.sample_interval=1ns", "--out", tmp_path / "o"
    )
    assert time.perf_counter() - started < 5
    assert code == 2 and out == ""
    assert "time-series rows" in err and "sample_interval" in err and "--max-memory" in err
    assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_a_million_flows_are_refused_unless_allowed(capsys, tmp_path):
    big = tmp_path / "big.toml"
    big.write_text(
        DUMBBELL.read_text(encoding="utf-8").replace("count = 10", "count = 1000000"),
        encoding="utf-8",
    )
    code, _, err = cli(capsys, "run", big)
    assert code == 2
    assert "1000000 flows" in err and "limit of 4.0 GiB" in err
    estimate = plait.estimate_memory(big)
    assert estimate["flows"] == 1_000_000
    assert estimate["bytes"] > 4 * 2**30


def test_max_memory_option_and_parameter(scenario):
    with pytest.raises(plait.ResourceLimitError, match="limit of 1.0 KiB"):
        plait.run(scenario, max_memory=1024)
    assert plait.run(scenario, max_memory=None).seed == 5
    with pytest.raises(ValueError, match="max_memory"):
        plait.run(scenario, max_memory=-1)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("4GiB", True),
        ("500MB", True),
        ("1e9", True),
        ("none", True),
        ("0", False),
        ("lots", False),
        ("1e30", False),
        ("nan", False),
    ],
)
def test_max_memory_values(capsys, scenario, value, ok):
    code, _, err = cli(capsys, "run", scenario, "--max-memory", value, "--quiet")
    assert code == (0 if ok else 2), err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["model", "altman", "--n", "1..1e9"], "too many values"),
        (["model", "tfrc", "--p", "nan"], "expected a finite number"),
        (["fluid", "--n", "100000000"], "--n: expected a whole number in [1, 100000]"),
        (["fluid", "--events", "1e30"], "--events: expected a whole number in [1, 10000000000]"),
        (["fluid", "--capacity", "inf"], "--capacity: expected a finite number"),
        (["run", "x.toml", "--seed", "-3"], "--seed: expected a whole number in [0, "),
        (["bench", "dumbbell", "--duration", "1e30"], "--duration: expected a number in (0, "),
    ],
)
def test_numeric_ranges_are_usage_errors(capsys, args, message):
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert message in err
    assert "Traceback" not in err


# --- 5. names are printed literally -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("[/nope]", "[/nope]"),
        ("[bold red]x[/]", "[bold red]x[/]"),
        ("evil\u001b[31mred", "evil\\x1b[31mred"),
    ],
)
def test_names_are_printed_as_written(capsys, scenario, tmp_path, name, shown):
    text = scenario.read_text().replace('name = "bulk"', f"name = {json.dumps(name)}")
    scenario.write_text(text)
    code, out, err = cli(capsys, "run", scenario, "--json", tmp_path / "s.json")
    assert code == 0, err
    assert f"{shown}.0" in out
    assert "\x1b" not in out
    assert json.loads((tmp_path / "s.json").read_text())["flows"][0]["name"] == f"{name}.0"


def test_control_characters_in_error_messages_are_escaped(capsys, tmp_path):
    code, _, err = cli(capsys, "validate", tmp_path / "no\u001b[2Jfile.toml")
    assert code == 2
    assert "\x1b" not in err and "\\x1b[2J" in err


# --- 7. small things ------------------------------------------------------------------------------


def test_quiet_shows_no_progress(capsys, scenario, monkeypatch):
    from plait.cli import progress

    made = []
    monkeypatch.setattr(progress.LateProgress, "__init__", _spy_init(made))
    code, out, err = cli(capsys, "run", scenario, "--quiet")
    assert code == 0 and out == "" and err == ""
    assert made == [False]


def _spy_init(made):
    original = __import__("plait.cli.progress", fromlist=["LateProgress"]).LateProgress.__init__

    def init(self, label, delay=2.0, enabled=True):
        made.append(enabled)
        original(self, label, delay=delay, enabled=enabled)

    return init


def test_progress_bar_has_bar_percentage_and_eta():
    from plait.cli.progress import LateProgress

    bar = LateProgress("/a/very/long/path/to/a/scenario/with/a/long/name.toml", delay=0)
    # Not a terminal here: the bar disables itself instead of printing lines into a log.
    bar(1.0, 10.0)
    assert bar.enabled is False and bar.progress is None
    assert bar.label == "name.toml"


def test_list_titles(capsys):
    code, out, _ = cli(capsys, "list")
    assert code == 0
    assert "losss" not in out
    for title in ("congestion controllers", "queues", "sources", "loss models"):
        assert title in out


def test_validate_counts_are_singular_when_one(capsys, tmp_path):
    one = tmp_path / "one.toml"
    one.write_text(
        '[simulation]\nduration = "1s"\n'
        '[[link]]\nname = "l"\nfrom = "a"\nto = "b"\nrate = "1Mbps"\ndelay = "1ms"\n'
        '[[flow]]\nname = "f"\nkind = "tcp"\nsrc = "a"\ndst = "b"\n'
    )
    code, out, _ = cli(capsys, "validate", one)
    assert code == 0
    assert "(2 nodes, 1 link, 1 flow, 1 s" in out


def test_version(capsys):
    code, out, _ = cli(capsys, "--version")
    assert code == 0 and out.strip() == f"plait {plait.__version__} (core {plait.__core_id__})"


def test_every_option_has_help_and_shows_its_default():
    import argparse

    from plait.cli import build_parser

    def walk(parser: argparse.ArgumentParser, name: str):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    yield from walk(sub, f"{name} {sub_name}")
            elif action.option_strings and action.dest != "help":
                yield name, action, parser

    missing = []
    for name, action, parser in walk(build_parser(), "plait"):
        if not action.help:
            missing.append(f"{name} {action.option_strings[0]}: no help")
            continue
        shown = parser.formatter_class(prog="x")._get_help_string(action)
        wants_default = action.default not in (None, False, [], argparse.SUPPRESS)
        if wants_default and "default" not in shown:
            missing.append(f"{name} {action.option_strings[0]}: default not shown")
    assert missing == []


def test_bench_default_measures_more_than_a_blink():
    from plait.cli import bench

    # 10 flows over a 100 Mb/s bottleneck for this long deliver millions of packets.
    assert bench.DEFAULT_DURATION_S >= 300


@pytest.mark.parametrize(
    "args",
    [
        ["reproduce", "parallel-tcp", "--seeds", "0"],
        ["bench", "dumbbell", "--flows", "0"],
        ["run"],
        ["nope"],
        ["model", "altman", "--n", "x"],
    ],
)
def test_usage_errors_exit_2_in_a_subprocess(tmp_path, args):
    proc = subprocess.run(
        [sys.executable, "-c", _ENTRY, *args], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("alias", ["/dev/stdout", "/dev/fd/1"])
def test_stdout_by_its_device_name_is_written_through_even_to_a_pipe(scenario, alias):
    """/dev/stdout links to "pipe:[...]" when stdout is a pipe: not a path to replace."""
    proc = subprocess.run(
        [sys.executable, "-c", _ENTRY, "run", str(scenario), "--json", alias],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seed"] == 5
    assert "bulk.0" in proc.stderr  # the tables step aside


def test_stderr_device_is_written_through(scenario):
    proc = subprocess.run(
        [sys.executable, "-c", _ENTRY, "run", str(scenario), "--json", "/dev/stderr", "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stderr)["seed"] == 5
