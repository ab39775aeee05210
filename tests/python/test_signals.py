"""SIGTERM and SIGHUP stop a command as Ctrl-C does, and a sweep's workers die with it.

SIGTERM is what `kill`, `timeout` and a batch job's wall-time limit send; SIGHUP what a closed
terminal sends. Either used to kill `plait` wherever it was: hidden temporaries beside the
outputs, or some of the Parquet files renamed into place and not the others. Now nothing is
half-written and the exit code is 128 + the signal's number (143, 129). A `plait sweep` killed
with SIGKILL (no time to close anything) used to leave its forked Dask workers running,
reparented, writing into the folder that the resumed sweep uses.

Every command runs in a fresh interpreter, so that a real signal reaches it.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_sweep import (
    TIMEOUT,
    alive,
    assert_all_whole,
    cli,  # noqa: F401 - the fixture
    dask_workers,
    long_sweep,
    manifest,
    parquet_files,
    partial_files,
    wait_until,
    write,
)

REPO = Path(__file__).resolve().parents[2]
DUMBBELL = REPO / "experiments" / "dumbbell" / "dumbbell.toml"


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def scenario(tmp_path: Path, duration: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        DUMBBELL.read_text(encoding="utf-8").replace(
            'duration = "60s"', f'duration = "{duration}"'
        ),
        encoding="utf-8",
    )
    return path


def plait(code: str, *args: str, cwd: Path) -> subprocess.Popen:
    """`plait ARGS` in a fresh interpreter, after `code` (which may patch plait)."""
    entry = (
        textwrap.dedent(code)
        + "\nimport sys\nfrom plait.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", entry, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signal_during_a_run_exits_128_plus_its_number_and_writes_nothing(tmp_path, sig, code):
    scenario(tmp_path, "1000000s")
    proc = plait("", "run", "s.toml", "--json", "o.json", "--out", "o", cwd=tmp_path)
    time.sleep(2.0)
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert time.monotonic() - sent < 5.0
    assert err.strip() == f"plait: stopped by {signal.Signals(sig).name}; nothing written"
    assert files_under(tmp_path) == ["s.toml"]


# SIGTERM sent to itself at the worst moments of writing the outputs: after the first Parquet
# file is written to its temporary, and between two renames into place.
DURING_THE_WRITING = """
import os, signal
import pyarrow.parquet as pq
real = pq.write_table
def write_table(*args, **kwargs):
    real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)
    import time; time.sleep(2)
pq.write_table = write_table
"""
DURING_THE_RENAMES = """
import os, signal
from plait import output
real = os.replace
calls = []
def replace(src, dst):
    calls.append(dst)
    real(src, dst)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGTERM)
output.os.replace = replace
"""


@pytest.mark.parametrize("patch", [DURING_THE_WRITING, DURING_THE_RENAMES], ids=["write", "rename"])
def test_sigterm_while_the_outputs_are_written_leaves_them_as_they_were(tmp_path, patch):
    scenario(tmp_path, "12s")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "flows.parquet").write_bytes(b"earlier")
    proc = plait(patch, "run", "s.toml", "--json", "o.json", "--out", "o", "--quiet", cwd=tmp_path)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip() == "plait: stopped by SIGTERM; nothing written"
    # No temporary, no new file, and the file that was there before is as it was.
    assert files_under(tmp_path) == ["o", "o/flows.parquet", "s.toml"]
    assert (tmp_path / "o" / "flows.parquet").read_bytes() == b"earlier"


def test_sigterm_to_a_sweep_keeps_finished_runs_and_leaves_nothing_half_written(cli, tmp_path):  # noqa: F811
    runs = 80
    write(tmp_path / "long.toml", long_sweep("10s", seeds=10))
    out = tmp_path / "OUT"
    sweep = cli("sweep", "long.toml", "--out", "OUT", "--workers", "2")
    wait_until(lambda: len(parquet_files(out)) >= 3, "the first results", sweep, timeout=TIMEOUT)
    workers = dask_workers(sweep.pid)
    # What `timeout` does: SIGTERM to the command's whole process group, workers included.
    sweep.signal_group(signal.SIGTERM)
    code = sweep.wait(timeout=60)
    err = sweep.stderr
    assert code == 143, err
    stored = len(parquet_files(out))
    assert stored < runs, "the sweep ended before SIGTERM"
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("plait: stopped by SIGTERM; "), err
    assert f"{stored} of {runs} runs stored in OUT" in last
    wait_until(lambda: not any(alive(p) for p in workers), "the workers to go", timeout=30)
    # Resumable: the manifest and every stored file whole, no temporaries, the lock free.
    assert manifest(out)["runs"] == runs
    assert_all_whole(out)
    assert partial_files(out) == []
    with open(out / ".plait-sweep.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_sigterm_during_reproduce_exits_143_and_writes_no_report(tmp_path):
    proc = plait(
        "", "reproduce", "parallel-tcp", "--quick", "--out", "r", "--workers", "1", cwd=tmp_path
    )
    time.sleep(4.0)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err, err
    assert not (tmp_path / "r" / "report.html").exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".partial", ".tmp.html"))]


def test_sigkill_of_a_sweep_takes_its_workers_with_it(cli, tmp_path):  # noqa: F811
    write(tmp_path / "long.toml", long_sweep("10s", seeds=10))
    out = tmp_path / "OUT"
    sweep = cli("sweep", "long.toml", "--out", "OUT", "--workers", "2")
    wait_until(lambda: len(parquet_files(out)) >= 1, "the first results", sweep, timeout=TIMEOUT)
    workers = dask_workers(sweep.pid)
    assert len(workers) == 2, workers
    # The sweep's process alone: nothing else signals the workers.
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if alive(p)], "workers outlived their sweep"


# The child of this script calls die_with_parent (as every local worker does at its start) and
# prints its pid; then it holds the GIL in one long C call (no Python thread can run: only
# the kernel's parent-death signal can end it), or sleeps with the prctl call made to fail
# (only the watchdog thread can end it).
ORPHAN = """
import os, sys, time
mode = sys.argv[1]
if mode == "watchdog":
    import ctypes
    def no_libc(*args, **kwargs):
        raise OSError("no prctl here")
    ctypes.CDLL = no_libc
from plait.sweeps.worker import die_with_parent
pid = os.fork()
if pid == 0:
    die_with_parent()
    print(os.getpid(), flush=True)
    if mode == "gil":
        sum(range(10**13))
    else:
        time.sleep(600)
    os._exit(0)
time.sleep(600)
"""


@pytest.mark.parametrize("mode", ["gil", "watchdog"])
def test_a_worker_dies_with_its_parent_even_when_stuck(tmp_path, mode):
    proc = subprocess.Popen(
        [sys.executable, "-c", ORPHAN, mode], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        child = int(proc.stdout.readline())
        time.sleep(0.3)
        assert alive(child)
        proc.kill()
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(child), f"the child outlived its parent ({mode})"
    finally:
        proc.kill()
        if "child" in locals() and alive(child):
            os.kill(child, signal.SIGKILL)


FORK = """
import os, signal
from plait import _interrupt
with _interrupt.stopping_signals():
    for deferred in (False, True):
        with _interrupt.deferred(lambda signum: None) if deferred else open(os.devnull):
            pid = os.fork()
            if pid == 0:
                ends = (signal.SIGTERM, signal.SIGHUP)
                ok = all(signal.getsignal(s) == signal.SIG_DFL for s in ends)
                os._exit(0 if ok else 1)
            _, status = os.waitpid(pid, 0)
            print(os.waitstatus_to_exitcode(status), end=" ")
    print(signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL)
print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
"""


def test_forked_processes_do_not_keep_the_commands_signal_handlers(tmp_path):
    """A local worker forked while the sweep holds SIGTERM back must still die of SIGTERM."""
    out = subprocess.run(
        [sys.executable, "-c", FORK], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.stdout.split() == ["0", "0", "True", "True"], out.stderr
