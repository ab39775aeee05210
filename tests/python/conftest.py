"""Fixtures shared by the Python tests."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from hypothesis import settings

# The interrupt tests send SIGINT, SIGTERM and SIGHUP to the commands they start. A test run
# started in the background of a script (SIGINT ignored) or under nohup (SIGHUP ignored)
# passes those dispositions on to every child, and plait rightly leaves an ignored signal
# alone: put the defaults back, so that the tests test plait, not how they were started.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
for _ends in (signal.SIGTERM, signal.SIGHUP):
    if signal.getsignal(_ends) is signal.SIG_IGN:
        signal.signal(_ends, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def _keep_the_interrupt_handler():
    """A test that imports dask_jobqueue (`pytest.importorskip`) gets its side effect: its
    runner module sets SIGINT to `sys.exit()`. Put back the handler each test started with, so
    that a later Ctrl-C test in the same worker sees KeyboardInterrupt."""
    before = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not before:
        signal.signal(signal.SIGINT, before)


# Property tests draw the same examples on every run (CI included): a failure is reproducible,
# never a matter of luck. Run with HYPOTHESIS_PROFILE=explore to draw fresh examples locally.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

# Three Reno flows through a 10 Mb/s bottleneck for three simulated seconds: each run takes
# milliseconds.
SCENARIO_TOML = """\
[simulation]
duration = "3s"
warmup = "1s"
seed = 5
sample_interval = "500ms"

[[link]]
name = "access"
from = "src"
to = "r1"
rate = "100Mbps"
delay = "1ms"

[[link]]
name = "bottleneck"
from = "r1"
to = "dst"
rate = "10Mbps"
delay = "10ms"
queue = { kind = "droptail", packets = 50 }

[[flow]]
name = "bulk"
count = 3
kind = "tcp"
cc = "reno"
src = "src"
dst = "dst"
start = { uniform = ["0s", "1s"] }
"""


@pytest.fixture
def scenario_toml() -> str:
    """The text of the small scenario (SCENARIO_TOML), for tests that edit it."""
    return SCENARIO_TOML


@pytest.fixture
def scenario(tmp_path: Path, scenario_toml: str) -> Path:
    """The small scenario written to a file."""
    path = tmp_path / "small.toml"
    path.write_text(scenario_toml, encoding="utf-8")
    return path


@pytest.fixture
def testbed_turn():
    """One kernel test at a time, across pytest-xdist workers: a testbed run refuses to start
    while another holds its lock, and each needs the machine to keep time (the tests that
    take it are marked with `needs_testbed` of _testbed_skip.py)."""
    import fcntl

    with open("/run/plait-testbed-tests.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # waits for the other worker's test
        yield


@pytest.fixture(scope="session")
def client():
    """A one-worker local Dask cluster for the tests that run sweeps on it, started once per
    test process (each pytest-xdist worker has its own) rather than once per module: nine
    modules use it, and each start and stop cost about a second."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
