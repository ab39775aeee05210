"""The two test suites: `make test` leaves out the tests marked `slow` (pyproject.toml), `make
test-full` runs every test, and CI (.ci/run) runs test-full.

`make test` must stay within 5 minutes on a warm 2-core machine: the kernel testbed's runs take
seconds of real time each and one at a time (`testbed_turn`), so all but a few are slow. The
few kept in `make test` check the testbed end to end (a run's numbers and tables, the ping RTT,
interrupts and `plait testbed clean`); a new kernel run is marked slow or added to them here.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

#: The kernel runs that `make test` keeps (about 20 s of the testbed's real time).
KERNEL_RUNS_IN_MAKE_TEST = {
    "test_ping_through_an_idle_link_reads_the_configured_rtt",
    "test_one_reno_flow_fills_a_100_packet_buffer_link",
    "test_interrupt_cleans_up_and_exits_128_plus_the_signal",
    "test_kill_9_then_clean_leaves_nothing",
}


def _kernel_runs() -> dict[str, bool]:
    """Every test function that takes the testbed's turn (runs on the kernel), by
    `file::name`, and whether it is marked slow."""
    runs = {}
    for path in sorted(HERE.glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            if "testbed_turn" in [a.arg for a in node.args.args]:
                marks = [ast.unparse(d) for d in node.decorator_list]
                runs[f"{path.name}::{node.name}"] = "pytest.mark.slow" in marks
    return runs


def test_kernel_runs_are_slow_but_the_few_kept_in_make_test():
    runs = _kernel_runs()
    assert len(runs) >= 10, runs  # the scan finds them
    fast = {key.split("::")[1] for key, slow in runs.items() if not slow}
    unmarked = sorted(fast - KERNEL_RUNS_IN_MAKE_TEST)
    assert not unmarked, f"kernel runs neither marked @pytest.mark.slow nor kept: {unmarked}"
    # The ones kept are still kernel runs and still in make test.
    assert fast == KERNEL_RUNS_IN_MAKE_TEST


def test_each_experiment_through_the_command_line_in_one_suite_or_the_other():
    from test_reproduce import FAST_END_TO_END, SHRINK

    assert FAST_END_TO_END and FAST_END_TO_END < set(SHRINK)


def _make_n(target: str) -> str:
    """The commands `make -n TARGET` would run (recursive makes print theirs too)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="no make here")
def test_make_test_leaves_out_slow_tests_and_make_test_full_runs_them_in_ci():
    pytest_line = re.compile(r"^\S*/pytest .*$", re.M)
    fast, full = _make_n("test"), _make_n("test-full")
    assert pytest_line.findall(fast) == ['.venv/bin/pytest -q -n 2 -m "not slow"'], fast
    (line,) = pytest_line.findall(full)
    assert "-m" not in line.split() and "slow" not in line, full
    # The same Rust checks in both, the debug_assert! build (profile `checked`) included.
    rust = re.compile(r"^.*cargo (?:fmt|clippy|test) .*$", re.M)
    assert rust.findall(fast) == rust.findall(full)
    assert any("--profile checked" in c for c in rust.findall(fast)), fast
    # CI runs the whole suite.
    commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands[-1] == "make test-full"
