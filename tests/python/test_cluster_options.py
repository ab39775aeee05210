"""Where a sweep's runs go, checked before anything is written, and a cluster that fails ends
the sweep with one line, in bounded time.

Before: `--scheduler notaurl`, `--scheduler tcp://127.0.0.1:1` (after 20 s) and `--job-memory
lots` exited 2 but left `sweep.json`, table folders and the lock, with messages that did not
name the option; `--slurm` on a host without `sbatch` printed a tornado traceback and then
waited without end (Ctrl-C then exited 0), leaving the folder and its lock.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from plait.cli import main as cli_main
from test_sweep import (
    EXAMPLE_SWEEP,
    base,
    cli,  # noqa: F401 - the fixture
    one_error_line,
    write,
)


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    return write(tmp_path / "s.toml", base() + EXAMPLE_SWEEP)


@pytest.fixture
def no_job_system(tmp_path: Path, monkeypatch) -> Path:
    """A PATH without sbatch, scancel, qsub or qdel (the tests' own interpreter is run by its
    full path)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return empty


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--scheduler", "notaurl"], "--scheduler notaurl: expected an address such as tcp://"),
        (["--scheduler", "tcp://host:port"], "--scheduler tcp://host:port: expected an address"),
        (["--scheduler", "tcp://host:0"], "--scheduler tcp://host:0: expected an address"),
        (["--scheduler", "foo://host:8786"], "--scheduler foo://host:8786: unknown protocol 'foo'"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler tcp://127.0.0.1:1: cannot connect"),
        (["--slurm", "--job-memory", "lots"], "--job-memory lots: expected a size such as 2GiB"),
        (["--pbs", "--job-memory", "0"], "--job-memory 0: expected a size"),
        (["--slurm", "--queue", "short\n#SBATCH -A x"], "--queue 'short\\n#SBATCH -A x':"),
        (["--slurm"], "--slurm: 'sbatch' and 'scancel' not found on the PATH"),
        (["--pbs"], "--pbs: 'qsub' and 'qdel' not found on the PATH"),
    ],
)
@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_bad_cluster_options_write_nothing_and_name_the_option(
    command, options, message, sweep_file, tmp_path, no_job_system, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    before = files_under(tmp_path)
    what = ["s.toml"] if command == "sweep" else ["parallel-tcp", "--quick"]
    started = time.monotonic()
    code = cli_main([command, *what, "--out", "OUT", *options])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in one_error_line(err), err
    assert took < 5.0
    assert files_under(tmp_path) == before


FAILING_SBATCH = """#!/bin/sh
echo "sbatch: error: invalid partition specified: short" >&2
exit 1
"""
SILENT_SBATCH = """#!/bin/sh
echo "Submitted batch job 7"
"""


@pytest.mark.parametrize(
    ("sbatch", "options", "message"),
    [
        (
            FAILING_SBATCH,
            [],
            "plait: error: --slurm: sbatch failed (exit code 1): "
            "sbatch: error: invalid partition specified: short",
        ),
        # A job that never starts: the sweep waits --worker-wait seconds for a worker.
        (
            SILENT_SBATCH,
            ["--worker-wait", "2"],
            "plait: error: no Dask worker for 2 s while runs wait (SLURM jobs",
        ),
    ],
    ids=["sbatch-fails", "job-never-starts"],
)
def test_a_failing_job_system_ends_the_sweep_with_one_line(
    cli,  # noqa: F811
    tmp_path,
    sweep_file,
    sbatch,
    options,
    message,
):
    pytest.importorskip("dask_jobqueue")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write(bin_dir / "sbatch", sbatch).chmod(0o755)
    write(bin_dir / "scancel", "#!/bin/sh\nexit 0\n").chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "DASK_CONFIG": str(tmp_path / "dask-config"),
    }
    started = time.monotonic()
    sweep = cli("sweep", "s.toml", "--out", "OUT", "--slurm", "--quiet", *options, env=env)
    code = sweep.wait(timeout=60)
    err = sweep.stderr
    assert code == 3, err
    assert one_error_line(err).startswith(message), err
    assert time.monotonic() - started < 30


def test_checking_a_job_system_keeps_the_interrupt_handler(tmp_path):
    # dask_jobqueue's runner module sets SIGINT to `sys.exit()` when imported: a sweep's Ctrl-C
    # became a bare SystemExit, and in a test process every later Ctrl-C test failed.
    import subprocess
    import sys

    pytest.importorskip("dask_jobqueue")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command in ("sbatch", "scancel"):
        write(bin_dir / command, "#!/bin/sh\nexit 0\n").chmod(0o755)
    code = (
        "import signal\n"
        "def mine(*_): pass\n"
        "signal.signal(signal.SIGINT, mine)\n"
        "from plait.sweeps.engine import JobQueue, check_options\n"
        "check_options(None, JobQueue('slurm'))\n"
        "print(signal.getsignal(signal.SIGINT) is mine)\n"
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.split() == ["True"], done.stderr[-2000:]


def test_a_taken_dashboard_port_adds_no_line_to_the_error(cli, tmp_path, sweep_file):  # noqa: F811
    # With Dask's dashboard port (8787) taken by another Dask on the machine, distributed
    # warned on stderr and the sweep's one-line error came with three more lines.
    import socket

    pytest.importorskip("dask_jobqueue")
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        taken.bind(("", 8787))
    except OSError:
        taken.close()
        pytest.skip("port 8787 is in use here already")
    taken.listen(1)
    try:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        write(bin_dir / "sbatch", FAILING_SBATCH).chmod(0o755)
        write(bin_dir / "scancel", "#!/bin/sh\nexit 0\n").chmod(0o755)
        env = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "DASK_CONFIG": str(tmp_path / "dask-config"),
        }
        sweep = cli("sweep", "s.toml", "--out", "OUT", "--slurm", "--quiet", env=env)
        code = sweep.wait(timeout=60)
        err = sweep.stderr
        assert code == 3, err
        assert "already in use" not in err, err
        assert one_error_line(err).startswith("plait: error: --slurm: sbatch failed"), err
    finally:
        taken.close()
