"""Hostile command lines for every `plait` subcommand, drawn by hypothesis.

Each invocation calls `plait.cli.main(argv)` in-process, in a fresh sandbox folder (the current
folder while it runs), and checks:

* the exit code is 0 or 2 (130 only for Ctrl-C, never sent here) and an exit code of 2 comes
  with a `plait...: error:` line;
* main() raises nothing and standard error shows no traceback;
* a failed call leaves the sandbox exactly as it was: nothing named by --out, --json or --plot
  half-exists, no temporary is left behind, no folder is created;
* a successful call leaves every named output whole (JSON parses, Parquet reads, PNG starts with
  its signature), changes nothing else and leaves no temporary behind.

Standard output is a UTF-8 stream with the `strict` error handler, as under an `en_US.UTF-8`
locale; standard error uses `backslashreplace`, as Python always does.

Values are drawn from a mix of random text (control characters, markup, surrogates standing
for bytes that are not UTF-8, very long strings), number-like strings and awkward paths. Valid
values that would make a call expensive are kept small: guards refuse a drawn command line that
would run for long (they use the CLI's own argument parsers to tell).

The cases these tests found are kept at the end of the file as plain examples (regressions);
a defect not fixed yet is marked xfail(strict=True) there, and the property tests steer clear
of it (`_known_defect`) so that they keep checking the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest
from conftest import SCENARIO_TOML
from hypothesis import HealthCheck, assume, event, given, reject, settings
from hypothesis import strategies as st
from plait.api import estimate_memory, validate
from plait.cli import main
from plait.cli.fluid import MAX_EVENTS, MAX_RECORD, MAX_RECORDED_RATES
from plait.cli.fluid import MAX_N as FLUID_MAX_N
from plait.cli.model import parse_values
from plait.cli.options import bounded_float, bounded_int, memory_size
from plait.experiments import _REGISTRY as experiments_registry
from plait.experiments import experiments, parallel_tcp, parallel_tcp_claims

# The entry point of the `plait` console script (pyproject: plait = "plait.cli:main").
_ENTRY = "import sys; from plait.cli import main; sys.exit(main(sys.argv[1:]))"

PNG = b"\x89PNG\r\n\x1a\n"

# The shared small scenario (conftest.py), shortened to two Reno flows for two simulated seconds:
# milliseconds a run.
SCENARIO = (
    SCENARIO_TOML.replace('duration = "3s"', 'duration = "2s"')
    .replace('warmup = "1s"', 'warmup = "500ms"')
    .replace("count = 3", "count = 2")
    .replace('start = { uniform = ["0s", "1s"] }', 'start = { uniform = ["0s", "500ms"] }')
)
assert 'duration = "2s"' in SCENARIO and "count = 2" in SCENARIO

# The same scenario as JSON.
SCENARIO_DICT = {
    "simulation": {"duration": "2s", "warmup": "500ms", "seed": 5, "sample_interval": "500ms"},
    "link": [
        {"name": "access", "from": "src", "to": "r1", "rate": "100Mbps", "delay": "1ms"},
        {
            "name": "bottleneck",
            "from": "r1",
            "to": "dst",
            "rate": "10Mbps",
            "delay": "10ms",
            "queue": {"kind": "droptail", "packets": 50},
        },
    ],
    "flow": [
        {
            "name": "bulk",
            "count": 2,
            "kind": "tcp",
            "cc": "reno",
            "src": "src",
            "dst": "dst",
            "start": {"uniform": ["0s", "500ms"]},
        }
    ],
}

RUN_OUTPUTS = (
    "flows.parquet",
    "links.parquet",
    "paths.parquet",
    "flow_series.parquet",
    "link_series.parquet",
    "path_series.parquet",
    "picks.parquet",
    "drops.parquet",
    "refusals.parquet",
)
#: What `plait reproduce parallel-tcp --out OUT` writes besides OUT/report.html.
EXPERIMENT_OUTPUTS = tuple(f"parallel-tcp/{name}" for name in parallel_tcp.OUTPUT_FILES.values())


#: A parallel-tcp reproduction of a few seconds: N = 1 and 2, runs of 5 s, the scenario read
#: from `scenario` (settings passed to the experiment).
def _tiny_settings(options, scenario: Path):
    return parallel_tcp_claims.Settings([1, 2], 5.0, 1.0, 1000, list(options.seeds), scenario)


# --- the sandbox ----------------------------------------------------------------------------


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


@contextlib.contextmanager
def sandbox() -> Iterator[Path]:
    """A fresh folder `root/cwd`, made the current folder, holding the small scenario and
    the things hostile paths point at. Relative paths cannot leave `root`."""
    with tempfile.TemporaryDirectory(prefix="plait-hostile-") as d:
        root = Path(d)
        cwd = root / "cwd"
        cwd.mkdir()
        (cwd / "scenario.toml").write_text(SCENARIO, encoding="utf-8")
        (cwd / "afile").write_text("keep me\n", encoding="utf-8")
        (cwd / "adir").mkdir()
        (cwd / "adir" / "inner").write_text("inner\n", encoding="utf-8")
        (cwd / "link-to-afile").symlink_to("afile")
        (cwd / "link-to-adir").symlink_to("adir")
        (cwd / "dangling").symlink_to("nowhere/x")
        (cwd / "loop").symlink_to("loop")
        # `plait reproduce parallel-tcp` reads its scenario from its folder in the repository
        # (and must never write there): a copy inside the sandbox stands in for it, so that a
        # write there is seen. Its runs are cut to a few seconds.
        home = root / "experiment"
        home.mkdir()
        shutil.copy(parallel_tcp.EXPERIMENT_DIR / "scenario.toml", home / "scenario.toml")
        # Every experiment registered first: the patched registry is restored whole on exit.
        experiments()
        tiny = parallel_tcp_claims.EXPERIMENT.with_settings(
            lambda options: _tiny_settings(options, home / "scenario.toml")
        )
        with _chdir(cwd), mock.patch.object(parallel_tcp, "EXPERIMENT_DIR", home):
            with mock.patch.dict(experiments_registry, {"parallel-tcp": tiny}):
                yield cwd


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root`: kind, and content hash and mode for files."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            st_ = os.lstat(path)
            if stat.S_ISLNK(st_.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st_.st_mode):
                state[rel] = ("dir",)
            elif stat.S_ISREG(st_.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[rel] = ("file", digest, stat.S_IMODE(st_.st_mode))
            else:
                state[rel] = ("other", st_.st_mode)
    return state


def _is_temporary(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith(".plait-probe-") or (name.startswith(".") and ".tmp" in name)


# --- calling the command line ---------------------------------------------------------------


@dataclass
class Call:
    argv: list[str]
    code: int
    out: bytes
    err: str

    def where(self) -> str:
        return f"argv={self.argv!r}\nexit code {self.code}\nstderr:\n{self.err[-2000:]}"


class Crash(Exception):
    """main() raised: the traceback case."""

    def __init__(self, argv: list[str], error: BaseException) -> None:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        super().__init__(f"main({argv!r}) raised {type(error).__name__}: {error}\n{text[-3000:]}")
        self.argv = argv
        self.error = error


def call(argv: list[str]) -> Call:
    """`main(argv)` with standard output and error captured as a terminal would take them."""
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(
        err_bytes, encoding="utf-8", errors="backslashreplace", write_through=True
    )
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except BaseException as e:  # noqa: BLE001 - any escape from main() is the defect
                raise Crash(list(argv), e) from None
        out.flush()
        err.flush()
        return Call(list(argv), code, out_bytes.getvalue(), err_bytes.getvalue().decode())
    finally:
        out.detach()
        err.detach()


@dataclass(frozen=True)
class Output:
    """An output named on the command line: `json` (a file), `parquet` (run --out),
    `png` (fluid --plot) or `reproduce` (reproduce parallel-tcp --out)."""

    kind: str
    value: str


def _json(data: bytes, where: str) -> object:
    try:
        return json.loads(data)
    except ValueError as e:
        raise AssertionError(f"not JSON ({e}): {data[:200]!r}\n{where}") from None


def _printed_help(c: Call) -> bool:
    return c.out.startswith(b"usage:")


def check(c: Call, outputs: list[Output], before: dict[str, tuple], cwd: Path) -> None:
    """The invariants of the module doc for one call."""
    root = cwd.parent
    where = c.where()
    assert c.code in (0, 2), where
    assert "Traceback" not in c.err, where
    after = snapshot(root)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if c.code != 0:
        assert "error:" in c.err, f"exit code 2 without an error message\n{where}"
        assert not changed, f"a failed call changed {changed}\n{where}"
        return
    if _printed_help(c):  # -h or --help among the arguments: nothing else is done
        assert not changed, f"--help changed {changed}\n{where}"
        return
    allowed: list[str] = []
    for o in outputs:
        if o.value == "-":
            if o.kind == "json":
                _json(c.out, where)  # all of standard output
            elif o.kind == "png":
                assert PNG in c.out, where
            continue
        path = Path(os.path.realpath(cwd / o.value))
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue  # /dev/null and the like
        allowed.append("" if rel == "." else rel)
        if o.kind == "json":
            _json(path.read_bytes(), where)
        elif o.kind == "png":
            assert path.read_bytes().startswith(PNG), where
        elif o.kind == "parquet":
            for name in RUN_OUTPUTS:
                assert not pd.read_parquet(path / name).columns.empty, where
        elif o.kind == "reproduce":
            csv_name, md_name, png_name = EXPERIMENT_OUTPUTS
            assert (path / "report.html").read_text(encoding="utf-8").startswith("<!"), where
            assert not pd.read_csv(path / csv_name).empty, where
            assert (path / md_name).read_text(encoding="utf-8").startswith("|"), where
            assert (path / png_name).read_bytes().startswith(PNG), where
    removed = sorted(before.keys() - after.keys())
    assert not removed, f"a successful call removed {removed}\n{where}"
    temporaries = sorted(k for k in after if _is_temporary(k))
    assert not temporaries, f"temporaries left behind: {temporaries}\n{where}"
    for k in changed:
        inside = any(
            a in ("", k) or k.startswith(a + "/") or a.startswith(k + "/") for a in allowed
        )
        assert inside, f"{k} changed but is no output of the call\n{where}"


def run_and_check(argv: list[str], outputs: list[Output], cwd: Path) -> Call:
    if _known_defect(argv) is not None:
        reject()
    before = snapshot(cwd.parent)
    c = call(argv)
    check(c, outputs, before, cwd)
    written = sum(o.value not in ("", "-") for o in outputs)
    event(f"exit {c.code}" + (f", {written} output(s) named" if written else ""))
    return c


# --- defects found, steered clear of in the property tests ----------------------------------


def _known_defect(argv: list[str]) -> str | None:
    """The reason when `argv` is a defect reproduced, marked xfail, at the end of this file;
    None for anything else (none are open)."""
    return None


# --- strategies -----------------------------------------------------------------------------

_CURATED_TEXT = [
    "",
    " ",
    "[bold]",
    "[/]",
    "[bold red]x[/]",
    "[link=file:///etc/passwd]x",
    "\x1b[31mred",
    "\x1b]0;title\x07",
    "\x00",
    "\n",
    "\r",
    "\t",
    "%s%n",
    "{}",
    "{0}",
    "é",
    "\u202e",
    "\ufeff",
    "☃",
    "😀",
    "--",
    "-",
    "-h",
    "--help",
    "\\",
    "'",
    '"',
    "null",
    "true",
    "~",
    "$HOME",
    "*",
    ".",
    "..",
    "\udcff",
    "a\udc80b",
]

hostile_text = st.one_of(
    st.sampled_from(_CURATED_TEXT),
    st.text(max_size=30),
    st.text(st.characters(min_codepoint=0, max_codepoint=0x9F), max_size=10),
    st.integers(300, 20_000).map(lambda n: "x" * n),
)

_CURATED_NUMBERS = [
    "0",
    "-0",
    "-0.0",
    "1",
    "-1",
    "2",
    "1.5",
    "0.5",
    "1e30",
    "-1e30",
    "1e308",
    "1e309",
    "1e-308",
    "5e-324",
    "1e400",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "0x10",
    "0b1",
    "1_000",
    "1e6",
    "1E6",
    " 1 ",
    "+1",
    "١",
    "²",
    "1..1e9",
    "1..10",
    "0.5..2:0.5",
    "1..3,5,8",
    "10..1",
    "1..2:0",
    "1..2:-1",
    "1..",
    "..",
    "...",
    ",",
    "1,",
    ",1",
    "1,,2",
    "--",
    "-",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    "9" * 5000,
    "1" + "0" * 400,
]

_small_float = st.floats(-10, 10, allow_nan=False).map(lambda x: f"{x:g}")

number_text = st.one_of(
    st.sampled_from(_CURATED_NUMBERS),
    st.integers(-(2**70), 2**70).map(str),
    st.floats().map(repr),
    st.floats().map(lambda x: f"{x:g}"),
    st.builds(lambda a, b: f"{a}..{b}", _small_float, _small_float),
    st.builds(lambda a, b, c: f"{a}..{b}:{c}", _small_float, _small_float, _small_float),
)

hostile_value = st.one_of(number_text, hostile_text)

# Number lists and ranges as `plait model` and `plait fluid` take them.
number_list = st.one_of(
    number_text,
    st.lists(st.one_of(number_text, st.sampled_from(["", " "])), min_size=2, max_size=4).map(
        ",".join
    ),
)

_CURATED_PATHS = [
    "new.json",
    "missing/deep/x",
    "afile",
    "afile/sub",
    "adir",
    "adir/",
    "adir/inner",
    "link-to-afile",
    "link-to-adir",
    "dangling",
    "loop",
    "-",
    "",
    ".",
    "..",
    "/dev/null",
    "/dev/full",
    "/proc/x",
    "/proc/self/status",
    "x" * 300,
]

# Random names stay inside the sandbox: no "/", so at worst ".." (the sandbox root).
hostile_path = st.one_of(
    st.sampled_from(_CURATED_PATHS),
    hostile_text.map(lambda s: s.replace("/", "_")),
)

# Destinations that can be written: new files (and folders) anywhere in the sandbox, a file
# replaced through a symbolic link, a character device, standard output.
good_file = ["out.json", "new/deep/out.json", "afile", "link-to-afile", "/dev/null", "-"]
good_folder = ["tables", "new/deep/tables", "adir", "adir/", "link-to-adir", "."]


def mostly(valid: list[str], hostile: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A valid value about three times in four, else a hostile one. Both are always drawn:
    hypothesis does not repeat a sequence of choices, so a short list of valid values alone
    would soon be exhausted and leave only hostile ones."""
    return st.tuples(st.integers(0, 3), st.sampled_from(valid), hostile).map(
        lambda t: t[1] if t[0] else t[2]
    )


@st.composite
def command(draw, head: list[str], options, flags=(), positional=None, repeated=()):
    """`head`, then the options (`--opt value` or `--opt=value`), flags, `(option, value)`
    pairs in `repeated` and a positional argument, shuffled, one time in ten with a stray
    hostile token. `options` is a dict or a strategy of one. Returns (argv, options)."""
    chosen = draw(options) if isinstance(options, st.SearchStrategy) else options
    groups: list[list[str]] = []
    for name, value in [*chosen.items(), *repeated]:
        groups.append([f"{name}={value}"] if draw(st.booleans()) else [name, value])
    if flags:
        groups.extend([flag] for flag in draw(st.lists(st.sampled_from(flags), unique=True)))
    if positional is not None:
        groups.append([positional])
    groups = draw(st.permutations(groups))
    if draw(st.integers(0, 9)) == 7:  # not 0: hypothesis favours the bounds
        groups.insert(draw(st.integers(0, len(groups))), [draw(hostile_text)])
    return [*head, *(token for group in groups for token in group)], chosen


def _parsed(options: dict[str, str], name: str, default, parse):
    """The value argparse would give option `name`; raises ValueError when it would refuse."""
    if name not in options:
        return default
    try:
        return parse(options[name])
    except Exception as e:  # argparse turns any of these into a usage error
        raise ValueError(str(e)) from None


def test_sandbox_scenarios_are_valid_and_alike():
    # The hostile scenario files are made from these two; they must start out valid.
    with sandbox() as cwd:
        (cwd / "scenario.json").write_text(json.dumps(SCENARIO_DICT), encoding="utf-8")
        assert validate(cwd / "scenario.toml") == validate(cwd / "scenario.json")
        assert call(["run", "scenario.toml", "--quiet"]).code == 0


# --- the top level and plait list -----------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    head=st.sampled_from(
        [[], ["--version"], ["--help"], ["-h"], ["list"], ["model"], ["validate"], ["run"]]
        + [["bench"], ["experiment"], ["model", "altman"], ["--"], ["help"], ["RUN"], ["lis"]]
        + [["reproduce"], ["experiment", "parallel-tcp"]]
    ),
    tokens=st.lists(hostile_text, max_size=3),
)
def test_top_level_and_unknown_commands(head, tokens):
    with sandbox() as cwd:
        c = run_and_check([*head, *tokens], [], cwd)
    if head == ["--version"] and not tokens:
        assert c.code == 0 and c.out.startswith(b"plait "), c.where()


@settings(max_examples=30, deadline=None)
@given(
    data=command(
        ["list"],
        st.fixed_dictionaries({}, optional={"--json": hostile_text}),
        flags=("--json", "--json", "--help"),
    )
)
def test_list(data):
    argv, _ = data
    with sandbox() as cwd:
        c = run_and_check(argv, [], cwd)
    if c.code == 0 and "--json" in argv and not _printed_help(c):
        assert isinstance(_json(c.out, c.where()), list), c.where()


# --- plait model ----------------------------------------------------------------------------


def _values(valid: list[str]) -> st.SearchStrategy[str]:
    return mostly(valid, number_list)


def _scalar(valid: list[str]) -> st.SearchStrategy[str]:
    return mostly(valid, number_text)


_P = _values(["0.01", "1e-3,0.1", "0.05..0.2:0.05"])
_RTT = _values(["0.1", "0.05,0.2", "0.01..0.05:0.02"])
_MODEL_OPTIONS = {
    "altman": {"--n": _values(["1", "1..4", "2,4,8", "1..3,5,8"]), "--beta-keep": _scalar(["0.7"])},
    "tfrc": {
        "--p": _P,
        "--rtt": _RTT,
        "--s": _scalar(["1460", "1"]),
        "--t-rto": _scalar(["0.4", "1"]),
        "--b": _scalar(["1", "2"]),
    },
    "multfrc": {
        "--n": _values(["1", "0.5..2:0.5", "4"]),
        "--p": _P,
        "--j": _values(["1", "1..3"]),
        "--rtt": _RTT,
        "--s": _scalar(["1460", "1"]),
        "--t-rto": _scalar(["0.4", "1"]),
        "--b": _scalar(["1", "2"]),
        "--form": mostly(["draft", "ns2"], st.sampled_from(["NS2", "", "[bold]", "draft "])),
    },
    "pftk": {
        "--p": _P,
        "--rtt": _RTT,
        "--t0": _scalar(["0.4", "1"]),
        "--b": _scalar(["1", "2"]),
        "--wmax": _scalar(["10", "1e6"]),
        "--s": _scalar(["1", "1460"]),
    },
    "multcp": {"--n": _values(["1", "1..4", "0.5,2,8"])},
}

_MODEL_DEFAULT_LISTS = {
    "altman": {"--n": "1..10"},
    "tfrc": {"--p": "1e-4,1e-3,0.01,0.05,0.1,0.2,0.5", "--rtt": "0.1"},
    "multfrc": {"--n": "0.5,1..4", "--p": "0.01", "--j": "1", "--rtt": "0.1"},
    "pftk": {"--p": "1e-3,0.01,0.05,0.1,0.3", "--rtt": "0.1"},
    "multcp": {"--n": "1..10"},
}


@st.composite
def model_command(draw):
    name = draw(mostly(sorted(_MODEL_OPTIONS), hostile_text))
    options = _MODEL_OPTIONS.get(name, {"--n": number_list})
    flags = ("--csv", "--no-refine") if name == "multfrc" else ("--csv",)
    argv, chosen = draw(
        command(["model", name], st.fixed_dictionaries({}, optional=options), flags=flags)
    )
    return name, argv, chosen


def _model_cheap(name: str, chosen: dict[str, str]) -> bool:
    """Whether the table stays small (a few thousand rows; Altman's N up to 1e5)."""
    rows = 1
    largest_n = 0.0
    for option, default in _MODEL_DEFAULT_LISTS.get(name, {}).items():
        try:
            values = parse_values(chosen.get(option, default))
        except Exception:
            return True  # refused by argparse
        rows *= len(values)
        if option == "--n":
            largest_n = max(values)
    # Altman's largest-rate column computes N rates a row (N at most 1e5).
    return rows <= 3000 and (name != "altman" or rows * min(largest_n, 1e5) <= 10**7)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=model_command())
def test_model(data):
    name, argv, chosen = data
    assume(_model_cheap(name, chosen))
    with sandbox() as cwd:
        c = run_and_check(argv, [], cwd)
    if c.code == 0 and "--csv" in argv and not _printed_help(c):
        widths = {len(line.split(",")) for line in c.out.decode().splitlines()}
        assert len(widths) == 1, c.where()


# --- plait fluid ----------------------------------------------------------------------------

_FLUID_OPTIONS = {
    "--n": mostly(["1", "2", "3", "4", "1e1"], st.sampled_from(["1e5", "100000"]) | number_text),
    "--policy": mostly(
        ["rate_independent", "rate_proportional", "largest_rate", "beatdown", "all"],
        st.sampled_from(["rate-independent", "ALL", " all", "none"]) | hostile_text,
    ),
    "--beta": mostly(["0.5", "0.7", "0.5,0.6", "1e-308", "0.9999999999999999"], number_list),
    "--eta": mostly(["1", "2", "1,3", "1e-300"], number_list),
    "--capacity": mostly(["1", "10", "1e308", "5e-324"], number_text),
    "--seed": mostly(["0", "7", "18446744073709551615"], number_text),
    "--weights": mostly(["1,1", "1,2", "1,1,1,1"], number_list),
    "--plot": mostly(
        ["p.png", *good_file],
        hostile_path.map(lambda p: p if p in ("", "-") or "." in p else p + ".png"),
    ),
    "--record": mostly(["0", "5", "60"], number_text),
}


def _fluid_cheap(chosen: dict[str, str]) -> bool:
    """Whether the run stays small: connections x events, the recorded path, the plot."""
    whole = bounded_int
    try:
        n = _parsed(chosen, "--n", 2, whole(1, FLUID_MAX_N, allow_float_syntax=True))
        events = _parsed(chosen, "--events", 10**6, whole(1, MAX_EVENTS, allow_float_syntax=True))
        warmup = _parsed(chosen, "--warmup", 1000, whole(0, MAX_EVENTS, allow_float_syntax=True))
        default_record = 60 if "--plot" in chosen else 0
        record = _parsed(
            chosen, "--record", default_record, whole(0, MAX_RECORD, allow_float_syntax=True)
        )
    except ValueError:
        return True  # refused by argparse
    if n * record > MAX_RECORDED_RATES:
        return True  # refused before the run
    if n * (events + warmup) > 200_000 or n * record > 10**6:
        return False
    # One line and one legend entry a connection.
    return "--plot" not in chosen or (n <= 12 and record <= 10**4)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    data=command(
        ["fluid"],
        st.fixed_dictionaries(
            {
                "--events": mostly(["1", "10", "100", "1e3"], number_text),
                "--warmup": mostly(["0", "10", "1e2"], number_text),
            },
            optional=_FLUID_OPTIONS,
        ),
    )
)
def test_fluid(data):
    argv, chosen = data
    assume(_fluid_cheap(chosen))
    outputs = [Output("png", chosen["--plot"])] if "--plot" in chosen else []
    with sandbox() as cwd:
        run_and_check(argv, outputs, cwd)


# --- plait bench ----------------------------------------------------------------------------


def _bench_cheap(chosen: dict[str, str]) -> bool:
    try:
        flows = _parsed(chosen, "--flows", 10, bounded_int(1, 100_000, allow_float_syntax=True))
        duration = _parsed(chosen, "--duration", 600.0, bounded_float(0.0, 1e6, low_open=True))
    except ValueError:
        return True
    return flows <= 3 and duration <= 2


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    data=command(
        [],
        st.fixed_dictionaries(
            {
                "--flows": mostly(["1", "3", "1e0"], number_text),
                "--duration": mostly(["0.01", "0.5", "1e-300"], number_text),
            }
        ),
        flags=("--json",),
    ),
    name=mostly(["dumbbell"], st.sampled_from(["DUMBBELL", "parking-lot", ""])),
)
def test_bench(data, name):
    argv, chosen = data
    assume(_bench_cheap(chosen))
    with sandbox() as cwd:
        c = run_and_check(["bench", name, *argv], [], cwd)
    if c.code == 0 and "--json" in argv and not _printed_help(c):
        assert _json(c.out, c.where())["flows"] >= 1, c.where()


# --- plait reproduce ------------------------------------------------------------------------

# Only parallel-tcp, cut to a few seconds by the sandbox; a call that would run more than two
# seeds is left out.
_REPRODUCE_OPTIONS = {
    "--seeds": st.one_of(st.sampled_from(["1", "2", "1,7", "0", "1,1", "1001", ""]), number_text),
    "--workers": st.one_of(st.sampled_from(["1", "2", "0", "4097"]), number_text),
}


def _reproduce_cheap(chosen: dict[str, str]) -> bool:
    """Whether the call is refused before it starts, or runs at most two seeds."""
    from plait.cli.reproduce import _seeds

    try:
        _parsed(chosen, "--workers", None, bounded_int(1, 4096))
        seeds = _parsed(chosen, "--seeds", [1, 2, 3, 4, 5], _seeds)
    except ValueError:
        return True
    return len(seeds) <= 2


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    options=st.fixed_dictionaries({}, optional=_REPRODUCE_OPTIONS),
    out=mostly(good_folder, hostile_path),
    data=st.data(),
)
def test_reproduce(options, out, data):
    chosen = {**options, "--out": out}
    assume(_reproduce_cheap(chosen))
    argv, _ = data.draw(command(["reproduce", "parallel-tcp"], chosen, flags=("--fresh",)))
    with sandbox() as cwd:
        run_and_check(argv, [Output("reproduce", out)], cwd)


# --- plait run and plait validate -----------------------------------------------------------

_GOOD_SETS = [
    "flow.bulk.cc=cubic",
    'flow.bulk.cc={ name = "aimd", alpha = 2, beta = 0.7 }',
    "flow[0].count=1",
    "simulation.seed=3",
    "link.bottleneck.rate=5Mbps",
    'link.bottleneck.queue={kind="red", packets=20, min_th=5, max_th=15, max_p=0.1, w_q=0.002}',
    "link.bottleneck.queue.packets=1",
    'link.bottleneck.loss={kind="bernoulli", p=1}',
    "link.access.rate=1bps",
    "tcp.mss=1",
    "tcp.min_rto=1ns",
    'flow.bulk.cc={name="aimd", alpha=1e308, beta=1e-308}',
]

_BAD_SETS = [
    'link.bottleneck.queue={kind="red"',
    'link.bottleneck.queue={kind="red", packets=1, min_th=0, max_th=0, max_p=1, w_q=1}',
    'link.bottleneck.queue={kind="nope"}',
    'link.bottleneck.loss={kind="bernoulli", p=2}',
    "link.bottleneck.queue.packets=0",
    "link.bottleneck.queue.packets=99999999999999",
    "link.bottleneck.rate=0bps",
    "link.bottleneck.rate=1e30",
    "link.bottleneck.delay=1e20s",
    "link.bottleneck.from=dst",
    "link.access.to=src",
    "simulation.duration=1e30s",
    "simulation.duration=1e30",
    "simulation.duration=18446744073709551616ns",
    "simulation.duration=0s",
    "simulation.duration=-1s",
    "simulation.duration=nan",
    "simulation.sample_interval=1ns",
    "simulation.sample_interval=0s",
    "simulation.warmup=2s",
    "simulation.seed=-1",
    "simulation.seed=18446744073709551616",
    "simulation.seed=1.5",
    "simulation={}",
    "simulation=1",
    "flow.bulk.count=1000000",
    "flow.bulk.count=1e300",
    "flow.bulk.count=0",
    "flow.bulk.count=-1",
    "flow.bulk.start=5s",
    "flow.bulk.start=nan",
    "flow.bulk.bytes=0B",
    "flow.bulk.src=nowhere",
    "flow.bulk.dst=src",
    'flow.bulk.cc={name="aimd", alpha=0, beta=1}',
    "flow[1].cc=reno",
    "flow[99999999999999999999].cc=reno",
    "flow[-1].cc=reno",
    "flow.nobody.cc=reno",
    "flow=[]",
    "link=[]",
    "tcp.mss=0",
    "tcp.mss=4294967296",
    "tcp.receive_buffer=0B",
    "=1",
    "=",
    "x",
    "",
    ".=1",
    "a..b=1",
    "x=1",
]

_SET_KEYS = [
    "simulation.seed",
    "simulation.warmup",
    "flow[0].cc",
    "flow.bulk.start",
    "flow.bulk.kind",
    "link.bottleneck.queue",
    "link.bottleneck.delay",
    "link[0].name",
    "tcp.mss",
]

hostile_set = st.one_of(
    st.sampled_from(_GOOD_SETS),
    st.sampled_from(_GOOD_SETS),
    st.sampled_from(_BAD_SETS),
    st.builds(
        lambda k, v: f"{k}={v}", st.one_of(st.sampled_from(_SET_KEYS), hostile_text), hostile_value
    ),
    hostile_text,
)


@st.composite
def scenario_file(draw) -> tuple[str, bytes | None]:
    """(path, content to write there first, or None to leave the path as it is)."""
    kind = draw(st.integers(0, 9))
    if kind <= 4:
        return "scenario.toml", None
    if kind == 5:
        return draw(hostile_path), None  # /dev/full reads as endless zeros
    name = draw(st.sampled_from(["x.toml", "x.json", "x", "x.TOML", "x.JSON", "x.yaml"]))
    if kind == 6:
        return name, draw(st.binary(max_size=200))
    if kind == 7:
        # The scenario cut short, with hostile text put somewhere.
        text = SCENARIO[: draw(st.integers(0, len(SCENARIO)))]
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(hostile_text) + text[at:]
        return name, text.encode("utf-8", "surrogateescape")
    # The JSON scenario with one field replaced by a hostile JSON value.
    scenario = json.loads(json.dumps(SCENARIO_DICT))
    leaf = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(),
        hostile_text,
    )
    hostile_json = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=5)
    section = draw(st.sampled_from(["simulation", "link", "flow"]))
    table = scenario[section] if section == "simulation" else scenario[section][-1]
    key = draw(st.sampled_from(sorted(table)) | hostile_text)
    table[key] = draw(hostile_json)
    if draw(st.booleans()):
        del scenario[draw(st.sampled_from(sorted(scenario)))]
    text = json.dumps(scenario)  # NaN and Infinity as JavaScript writes them
    return name, text.encode("utf-8", "surrogateescape")


def _run_cheap(file: str, overrides: list[str], max_memory: str | None, cwd: Path) -> bool:
    """Whether the run is refused, or small: at most 5 simulated seconds, 100 flows and
    300 MB, or more memory than --max-memory lets it have."""
    try:
        limit = memory_size(max_memory) if max_memory is not None else 4 * 2**30
        # The estimate first: it is cheap for any count, where validating builds every flow.
        needed = estimate_memory(cwd / file, overrides=overrides)["bytes"]
        if limit is not None and needed > limit:
            return True
        if needed > 300 * 2**20:
            return False
        info = validate(cwd / file, overrides=overrides, max_memory=None)
    except Exception:
        return True
    return info["duration_s"] <= 5 and info["flows"] <= 100


_RUN_OPTIONS = {
    "--seed": mostly(["0", "7", "18446744073709551615"], number_text),
    "--out": mostly(good_folder, hostile_path),
    "--json": mostly(good_file, hostile_path),
    "--max-memory": mostly(
        ["4GiB", "100MB", "1e9", "none", "unlimited"],
        st.sampled_from(["1", "0", "16EiB", "-1", "1 PB", "4 gib"]) | number_text | hostile_text,
    ),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    file=scenario_file(),
    sets=st.lists(hostile_set, max_size=2),
    options=st.fixed_dictionaries({}, optional=_RUN_OPTIONS),
    data=st.data(),
)
def test_run(file, sets, options, data):
    name, content = file
    with sandbox() as cwd:
        if content is not None:
            (cwd / name).write_bytes(content)
        assume(_run_cheap(name, sets, options.get("--max-memory"), cwd))
        argv, _ = data.draw(
            command(
                ["run"],
                options,
                flags=("--quiet",),
                positional=name,
                repeated=[("--set", value) for value in sets],
            )
        )
        outputs = []
        if "--json" in options:
            outputs.append(Output("json", options["--json"]))
        if "--out" in options:
            outputs.append(Output("parquet", options["--out"]))
        run_and_check(argv, outputs, cwd)


@settings(max_examples=150, deadline=None)
@given(file=scenario_file(), sets=st.lists(hostile_set, max_size=3), data=st.data())
def test_validate(file, sets, data):
    name, content = file
    with sandbox() as cwd:
        if content is not None:
            (cwd / name).write_bytes(content)
        repeated = [("--set", value) for value in sets]
        argv, _ = data.draw(command(["validate"], {}, positional=name, repeated=repeated))
        run_and_check(argv, [], cwd)


# --- the exit code the shell sees -----------------------------------------------------------


def _process(args: list, cwd: Path, env: dict | None = None, **kwargs):
    return subprocess.run(
        [sys.executable, "-c", _ENTRY, *args],
        capture_output=True,
        cwd=cwd,
        timeout=120,
        env={**os.environ, **(env or {})},
        **kwargs,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["run", "missing.toml", "--json", "out.json", "--out", "tables"],
        [
            "run",
            "scenario.toml",
            "--set",
            'link.bottleneck.queue={kind="red"',
            "--json",
            "out.json",
        ],
        ["run", "scenario.toml", "--json", "/dev/full", "--out", "tables", "--quiet"],
        ["fluid", "--events", "1e400", "--plot", "out.png"],
        ["model", "pftk", "--p", "1..1e9"],
        ["reproduce", "parallel-tcp", "--seeds", "0", "--out", "tables"],
        ["experiment", "parallel-tcp", "--out", "tables"],
    ],
    ids=[
        "missing-file",
        "truncated-set",
        "dev-full",
        "events-1e400",
        "huge-range",
        "seeds-0",
        "no-experiment-command",
    ],
)
def test_exit_code_2_seen_by_the_shell(args):
    with sandbox() as cwd:
        before = snapshot(cwd.parent)
        p = _process(args, cwd)
        assert p.returncode == 2, p.stderr.decode()
        assert b"Traceback" not in p.stderr
        assert p.stderr.count(b"error:") == 1
        assert snapshot(cwd.parent) == before


def test_closed_stdout_is_not_an_error():
    # `plait list --json | head -c0`: the reader has gone before the first write.
    with sandbox() as cwd:
        proc = subprocess.Popen(
            [sys.executable, "-c", _ENTRY, "list", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        proc.stdout.close()
        err = proc.stderr.read()
        proc.stderr.close()
        assert proc.wait(timeout=60) == 0, err.decode()
        assert err == b""


# --- cases found by these tests -------------------------------------------------------------
#
# Each was a defect when found (the reason says what went wrong); kept as plain examples so that
# they stay fixed. One not fixed yet is marked with `_defect` (xfail, strict: a fix makes it
# pass, and pytest then asks for the mark to go).


def _defect(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# `plait experiment parallel-tcp --n 1 --duration 5 --warmup 1` found the first four below;
# `plait reproduce` took its place (its runs cut short by the sandbox).
_TINY = ["--seeds", "1"]


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(
            ["model", "altman", "--n", "1e19"],
            id="altman-n-1e19",  # was OverflowError: int too big to convert
        ),
        pytest.param(
            ["model", "altman", "--n", "1e9"],
            id="altman-n-1e9",  # took 12 s and 8 GB for a 1-row table
        ),
        pytest.param(
            ["model", "multfrc", "--b", "1e308"],
            id="multfrc-b-1e308",  # was ZeroDivisionError: float division by zero
        ),
        pytest.param(
            ["model", "multfrc", "--t-rto", "1e308"],
            id="multfrc-t-rto-1e308",  # was ZeroDivisionError: float division by zero
        ),
        pytest.param(
            ["fluid", "--events", "1", "--warmup", "0", "--plot", "p.png", "--record", "0"],
            id="fluid-plot-record-0",  # was AttributeError: 'NoneType' ... has no attribute 'plot'
        ),
        pytest.param(
            ["fluid", "--events", "10", "--warmup", "0", "--plot", "\udcff.png"],
            id="fluid-plot-not-utf8",  # was exit 2 (UnicodeEncodeError) with the PNG written
        ),
        pytest.param(
            ["reproduce", "parallel-tcp", *_TINY, "--out", "x" * 300, "--fresh"],
            id="reproduce-fresh-long-out",  # was OSError: [Errno 36] File name too long
        ),
        pytest.param(
            ["reproduce", "parallel-tcp", *_TINY, "--out", "[/]"],
            id="reproduce-out-markup",  # was MarkupError once the results were written
        ),
        pytest.param(
            ["reproduce", "parallel-tcp", *_TINY, "--out", "\udcff"],
            id="reproduce-out-not-utf8",  # was exit 2 (UnicodeEncodeError), results written
        ),
        pytest.param(
            ["reproduce", "parallel-tcp", *_TINY, "--out", ""],
            id="reproduce-empty-out",  # wrote into the experiment's own results/ folder
        ),
        pytest.param(
            ["run", "scenario.toml", "--quiet", "--out", "trap"],
            id="run-out-holds-a-folder-named-like-a-table",  # moved the folder aside, exit 0
        ),
        pytest.param(
            ["run", "scenario.toml", "--quiet", "--json", "same", "--out", "same"],
            id="run-json-and-out-same-path",  # the JSON replaced the --out folder, exit 0
        ),
    ],
)
def test_found_in_process(argv):
    outputs = []
    for option, kind in (("--json", "json"), ("--out", "parquet"), ("--plot", "png")):
        if option in argv:
            kind = "reproduce" if argv[0] == "reproduce" else kind
            outputs.append(Output(kind, argv[argv.index(option) + 1]))
    with sandbox() as cwd:
        trap = cwd / "trap" / "flows.parquet"
        trap.mkdir(parents=True)
        (trap / "keep").write_text("keep\n", encoding="utf-8")
        before = snapshot(cwd.parent)
        c = call(argv)
        if "" in argv or "trap" in argv or argv[-1] == "same" or "1e9" in argv:
            assert c.code == 2, c.where()  # refused before any work
        check(c, outputs, before, cwd)


# argparse (Python 3.11) dropped the "--" of `--option=--` and passed [] unchecked: TypeErrors,
# or exit 0 with an empty table. The value is now taken literally and checked.


@pytest.mark.parametrize(
    "argv",
    [
        # A path option takes "--" literally (a file named "--"), so only typed options here.
        pytest.param(argv, id=" ".join(argv[:3]))
        for argv, _was in [
            (["fluid", "--n=--"], "TypeError: '>' not supported between 'list' and 'int'"),
            (["fluid", "--capacity=--", "--events", "10"], "TypeError: float() argument ..."),
            (["fluid", "--record=--", "--events", "10"], "TypeError: '>' not supported ..."),
            (["model", "tfrc", "--s=--"], "TypeError: unsupported format string ... list"),
            (["model", "pftk", "--wmax=--"], "TypeError: unsupported format string ... list"),
            (["model", "altman", "--n=--"], "exit 0 with an empty table"),
            (["model", "multcp", "--n=--"], "exit 0 with an empty table"),
            (["bench", "dumbbell", "--flows=--", "--duration", "0.01"], "exit 1, TypeError"),
            (["bench", "dumbbell", "--duration=--", "--flows", "1"], "exit 1, TypeError"),
            (
                ["reproduce", "parallel-tcp", "--seeds=--", "--out", "tables"],
                "plait experiment --n=--: AttributeError: 'list' has no attribute 'split'",
            ),
        ]
    ],
)
def test_found_option_equals_dashes(argv):
    with sandbox() as cwd:
        before = snapshot(cwd.parent)
        c = call(argv)
        assert c.code == 2, c.where()
        check(c, [], before, cwd)


def _limit_memory() -> None:
    """1 GiB of address space more than the interpreter starts with: enough for any
    reasonable call, and a failed allocation instead of the OOM killer otherwise."""
    import resource

    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (size + 2**30, size + 2**30))


@pytest.mark.parametrize(
    "args, env",
    [
        pytest.param(
            ["model", "altman", "--n", "1e12"],
            {},
            id="altman-n-1e12",  # the process aborted: memory allocation failed
        ),
        pytest.param(
            ["fluid", "--n", "1e5", "--events", "10", "--warmup", "0", "--record", "1e6"],
            {},
            id="fluid-record-1e6-n-1e5",  # the process aborted: allocation of 52 GB failed
        ),
        pytest.param(
            ["fluid", "--events", "10", "--warmup", "0", "--plot", os.fsencode("\udcff.png")],
            {"PYTHONIOENCODING": "utf-8"},
            id="fluid-plot-not-utf8",  # was exit 2 (UnicodeEncodeError) with the PNG written
        ),
        pytest.param(
            ["validate", "/dev/zero"],
            {},
            id="validate-dev-zero",  # was read whole: MemoryError, or the OOM killer
        ),
        pytest.param(
            ["validate", os.fsencode("\udcff.toml")],
            {},
            id="validate-name-not-utf8",  # a valid scenario was refused (exit 2)
        ),
    ],
)
def test_found_in_a_process(args, env):
    with sandbox() as cwd:
        shutil.copy(cwd / "scenario.toml", cwd / os.fsdecode(b"\xff.toml"))
        before = snapshot(cwd.parent)
        p = _process(args, cwd, env, preexec_fn=_limit_memory)
        err = p.stderr.decode(errors="replace")[-2000:]
        assert p.returncode in (0, 2), err
        assert b"Traceback" not in p.stderr
        if p.returncode == 2:
            assert snapshot(cwd.parent) == before
        if args[0] == "validate" and args[1] != "/dev/zero":
            assert p.returncode == 0, err


# Scenario files found to be accepted silently or shown wrongly (issue 34, items 4, 5, 20): each
# is written into the sandbox and given to `plait validate` and `plait run`.
_TWO_PATHS = """
[simulation]
duration = "1s"

[[link]]
name = "a"
from = "h1"
to = "r"
rate = "10Mbps"
delay = "5ms"

[[link]]
name = "b"
from = "r"
to = "h2"
rate = "10Mbps"
delay = "5ms"

[[link]]
name = "c"
from = "h1"
to = "h2"
rate = "10Mbps"
delay = "20ms"
"""


def _flow(name: str, kind: str, extra: str = "") -> str:
    return f'\n[[flow]]\nname = "{name}"\nkind = "{kind}"\nsrc = "h1"\ndst = "h2"\n{extra}\n'


@pytest.mark.parametrize(
    "text, code, expected",
    [
        pytest.param(
            _TWO_PATHS + _flow("agg", "mpat", "shares = [1, 1]") + _flow("agg.0", "tcp"),
            2,
            "plait: error: s.toml: flow[1].name: duplicate flow name 'agg.0' (also application "
            "flow 0 of the mpat flow 'agg' at flow[0], one per share)",
            id="flow-named-like-an-application-flow",  # ran; two `flows` rows named agg.0
        ),
        pytest.param(
            _TWO_PATHS + _flow("mp", "mptcp", "subflows = [{}, {}]"),
            0,
            "plait: warning: s.toml: flow[0].subflows: subflows 0, 1 all take the path "
            "h1 -> r -> h2 (a subflow without a route takes the path of least propagation "
            "delay, here 10ms)",
            id="subflows-on-one-path",  # ran on one path without a word
        ),
        pytest.param(
            _TWO_PATHS
            + _flow(
                "mp",
                "mptcp",
                'send_buffer = "60000B"\nsubflows = [{ route = ["r"] }, { route = ["h1", "h2"] }]',
            ),
            0,
            "plait: warning: s.toml: flow[0].send_buffer: flow 'mp': send_buffer 60000B is below "
            "the bandwidth-delay product of its 2 paths, 75.0kB (slowest link's rate x "
            "propagation round trip): the connection will be limited by its buffer, not by the "
            "network\n",
            id="send-buffer-below-the-bdp",  # links idle without a loss, without a word
        ),
        pytest.param(
            _TWO_PATHS
            + _flow(
                "mp",
                "mptcp",
                'send_buffer = "80000B"\nsubflows = [{ route = ["r"] }, { route = ["h1", "h2"] }]',
            ),
            0,
            "",
            id="send-buffer-above-the-bdp",
        ),
        pytest.param(
            _TWO_PATHS
            + _flow(
                "mp",
                "mptcp",
                'cc = { name = "uncoupled:cubic", beta = 0.8 }\n'
                'subflows = [{ route = ["r"] }, { route = ["h1", "h2"] }]',
            ),
            0,
            "",
            id="uncoupled-with-parameters",  # was: unknown coupled controller
        ),
        pytest.param(
            _TWO_PATHS + _flow("mp", "mptcp", 'subflows = [{ route = ["r"], start = "2s" }]'),
            2,
            "plait: error: s.toml: flow[0].subflows[0].start: the subflow would join at 2s",
            id="subflow-joins-after-the-end",  # accepted silently
        ),
        pytest.param(
            _TWO_PATHS
            + _flow("t", "tcp", 'cc = { name = "cubic", beta = 5e-324 }')
            # beta in (0, 1): valid; shares below 1e-9 of the largest are not.
            + _flow("agg", "mpat", "shares = [1, 5e-324]"),
            2,
            "plait: error: s.toml: flow[1].shares: the smallest weight must be at least 1e-9 of "
            "the largest, got 5e-324 and 1\n",
            id="tiny-number-in-a-message",  # was printed with 324 digits
        ),
        pytest.param(
            _TWO_PATHS + _flow("f", "tcp").replace('dst = "h2"', 'dst = "h\u202e2"'),
            2,
            "unknown node 'h\\u{202e}2'",
            id="bidi-override-in-a-message",  # U+202E reached the terminal
        ),
    ],
)
def test_found_scenario_files(text, code, expected):
    with sandbox() as cwd:
        (cwd / "s.toml").write_text(text, encoding="utf-8")
        before = snapshot(cwd.parent)
        for argv in (["validate", "s.toml"], ["run", "s.toml", "--quiet"]):
            c = call(argv)
            assert c.code == code, c.where()
            assert expected in c.err, c.where()
            assert "\u202e" not in c.err
            if code == 2:
                assert c.err.count("\n") == 1, c.where()
                assert snapshot(cwd.parent) == before
            elif not expected:
                assert c.err == "", c.where()


def test_bidi_controls_in_names_are_escaped_in_tables():
    """A flow named with U+202E printed raw in `plait run`'s table (short names: the table's
    first column is narrow)."""
    with sandbox() as cwd:
        text = _TWO_PATHS + _flow("\u202ex", "tcp") + _flow("\u2066y", "tcp")
        (cwd / "s.toml").write_text(text, encoding="utf-8")
        c = call(["run", "s.toml"])
        assert c.code == 0, c.where()
        shown = c.out.decode("utf-8")
        assert "\\u202ex" in shown and "\\u2066y" in shown, shown
        assert "\u202e" not in shown and "\u2066" not in shown
