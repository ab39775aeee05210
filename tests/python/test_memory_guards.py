"""The memory guards and the run estimates (issue 34, items 7-10 and 19): what traces, MPTCP
subflows and MPAT application flows cost is in the estimate; a run over the limit is refused
before it is built, and before its `count` is expanded; `plait validate` refuses what `plait
run` refuses and flags a run that would take long; `plait run --quiet` builds no summary.

The refusals run in a child process whose address space is capped (RLIMIT_AS): before these
fixes each of them ran (or expanded a million flows) and died on the cap, so none of these
tests can take more than the cap, whatever the code does.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import plait
import pytest
from plait.cli import main

#: Address space of a refused command: Python, numpy and the extension map about 0.5 GB.
CAP = 1536 * 2**20


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def plait_capped(cwd: Path, *args: object) -> subprocess.CompletedProcess:
    """`plait ARGS` in a child process limited to CAP bytes of address space."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from plait.cli import main; sys.exit(main())"]
        + [str(a) for a in args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        preexec_fn=_capped,
    )


def two_paths(duration: str, rate: str, sim: str, flows: str) -> str:
    """Two disjoint paths s -> r1 -> d and s -> r2 -> d, every link at `rate`."""
    text = f'[simulation]\nduration = "{duration}"\n{sim}\n'
    for name, a, b in [("a1", "s", "r1"), ("a2", "s", "r2"), ("b1", "r1", "d"), ("b2", "r2", "d")]:
        text += (
            f'[[link]]\nname = "{name}"\nfrom = "{a}"\nto = "{b}"\nrate = "{rate}"\ndelay = "5ms"\n'
        )
    return text + flows


TWO_SUBFLOWS = 'subflows = [{ route = ["s", "r1", "d"] }, { route = ["s", "r2", "d"] }]\n'


def subflows(n: int) -> str:
    routes = ", ".join(f'{{ route = ["s", "r{1 + i % 2}", "d"] }}' for i in range(n))
    return f"subflows = [{routes}]\n"


def mptcp(count: int, n: int, extra: str = "") -> str:
    return (
        f'[[flow]]\nname = "m"\nkind = "mptcp"\nsrc = "s"\ndst = "d"\ncount = {count}\n'
        f"{subflows(n)}{extra}"
    )


def mpat(count: int, shares: int) -> str:
    weights = ", ".join(["1"] * shares)
    return (
        f'[[flow]]\nname = "g"\nkind = "mpat"\nsrc = "s"\ndst = "d"\ncount = {count}\n'
        f"shares = [{weights}]\n"
    )


LOSSY_CBR = (
    '[[flow]]\nname = "c"\nkind = "cbr"\nsrc = "s"\ndst = "d"\nroute = ["s", "r1", "d"]\n'
    'rate = "1Gbps"\n'
)


@pytest.fixture
def write(tmp_path: Path):
    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


# --- item 7: traces ------------------------------------------------------------------------


def test_scheduler_picks_are_in_the_estimate(write):
    plain = write("plain.toml", two_paths("600s", "1Gbps", "", mptcp(1, 2)))
    picks = write("picks.toml", two_paths("600s", "1Gbps", "", mptcp(1, 2, "trace_picks = true")))
    before, after = plait.estimate_memory(plain), plait.estimate_memory(picks)
    assert before["picks"] == 0 and before["bytes"] < 2**20
    # One row per segment the two 1 Gb/s paths can carry, doubled (resent segments, waits).
    assert after["picks"] == pytest.approx(2 * 2 * 1e9 * 600 / (8 * 1460), rel=1e-6)
    assert after["bytes"] > 4 * 2**30
    # Ten times shorter, ten times fewer.
    shorter = plait.estimate_memory(picks, overrides={"simulation.duration": "60s"})
    assert shorter["picks"] == pytest.approx(after["picks"] / 10, rel=1e-6)


def test_a_run_whose_picks_pass_the_limit_is_stopped_cleanly(tmp_path, write):
    # It reached 4.85 GB in 25 s and aborted (exit 134) while the estimate said 48 KiB. The
    # bound from the rates is loose, so the run is not refused before it starts: it is
    # stopped between slices once its rows pass what the limit leaves them, nothing written.
    write("picks.toml", two_paths("600s", "1Gbps", "", mptcp(1, 2, "trace_picks = true")))
    done = plait_capped(tmp_path, "run", "picks.toml", "--out", "o", "--max-memory", "64MiB")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "the run was stopped at" in done.stderr, done.stderr[-2000:]
    assert "trace_picks" in done.stderr and "--max-memory" in done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_a_run_whose_drops_pass_the_limit_is_stopped_cleanly(tmp_path, write):
    # A lossy 1 Gb/s CBR with trace_drops aborted at 5.8 GB.
    lossy = two_paths("600s", "1Gbps", "trace_drops = true", LOSSY_CBR).replace(
        'name = "b1"', 'name = "b1"\nloss = { kind = "bernoulli", p = 0.5 }'
    )
    write("drops.toml", lossy)
    estimate = plait.estimate_memory(tmp_path / "drops.toml")
    assert estimate["drops"] == 75_000_000  # one row per packet at most: 1 Gb/s of 1000 B
    done = plait_capped(tmp_path, "run", "drops.toml", "--json", "s.json", "--max-memory", "64MiB")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "the run was stopped at" in done.stderr and "trace_drops" in done.stderr
    assert not (tmp_path / "s.json").exists()


def test_traces_whose_bound_passes_the_limit_run_when_what_they_record_fits(write):
    # The bound assumes every packet is dropped; a responsive flow drops a few. The MulTFRC
    # paper's Figure 1 set-up (experiments/multfrc/equation_red.toml, bound 41 M drops, 12 GiB)
    # was refused before it started; a TCP flow on a 1 % lossy link is its small form.
    lossy = two_paths(
        "20s",
        "100Mbps",
        "trace_drops = true",
        '[[flow]]\nname = "t"\nkind = "tcp"\nsrc = "s"\ndst = "d"\nroute = ["s", "r1", "d"]\n',
    ).replace('name = "b1"', 'name = "b1"\nloss = { kind = "bernoulli", p = 0.01 }')
    path = write("tcp.toml", lossy)
    estimate = plait.estimate_memory(path)
    limit = estimate["state_bytes"] + estimate["trace_bytes"] // 10
    assert estimate["bytes"] > limit
    result = plait.run(path, max_memory=limit)
    assert 0 < len(result.drops) < estimate["drops"] / 10
    with pytest.raises(plait.ResourceLimitError, match="the run was stopped at"):
        plait.run(path, max_memory=estimate["state_bytes"] + 100 * 320)


def test_the_papers_runs_are_not_refused_for_their_traces():
    root = Path(__file__).resolve().parents[2]
    info = plait.validate(root / "experiments" / "multfrc" / "equation_red.toml")
    assert info["flows"] == 2


def test_traces_within_the_limit_run(write):
    # Picks over 1 Gb/s for 1 s: the estimate bounds what the run keeps.
    path = write("picks.toml", two_paths("1s", "1Gbps", "", mptcp(1, 2, "trace_picks = true")))
    estimate = plait.estimate_memory(path)
    result = plait.run(path, max_memory=8 * estimate["bytes"])
    assert 0 < len(result.picks) <= estimate["picks"]


# --- item 8: subflows and application flows ------------------------------------------------


def test_subflows_and_shares_grow_the_estimate(write):
    est = {
        n: plait.estimate_memory(
            write(f"m{n}.toml", two_paths("10s", "100Mbps", "", mptcp(1000, n)))
        )
        for n in (2, 32)
    }
    assert (est[2]["subflows"], est[32]["subflows"]) == (2000, 32000)
    # At least the measured ~10 KiB of each further subflow.
    assert est[32]["bytes"] - est[2]["bytes"] >= 30_000 * 10 * 2**10
    shares = {
        n: plait.estimate_memory(write(f"g{n}.toml", two_paths("10s", "100Mbps", "", mpat(10, n))))
        for n in (1, 4096)
    }
    assert shares[4096]["shares"] == 40960
    assert shares[4096]["bytes"] - shares[1]["bytes"] >= 40950 * 5 * 2**10


@pytest.mark.parametrize(
    ("flows", "what"),
    [
        # Estimated at 156 MiB, it took over 5.5 GB.
        (mptcp(20_000, 32), "640000 MPTCP subflows"),
        # Aborted at 5.8 GB, never refused.
        (mptcp(1_000_000, 32), "32000000 MPTCP subflows"),
        # Aborted in 7 s.
        (mpat(1000, 4096), "4096000 MPAT application flows"),
    ],
)
def test_many_subflows_or_shares_are_refused_before_they_are_made(tmp_path, write, flows, what):
    write("big.toml", two_paths("10s", "100Mbps", "", flows))
    for command in ("run", "validate"):
        done = plait_capped(tmp_path, command, "big.toml")
        assert done.returncode == 2, done.stderr[-2000:]
        assert what in done.stderr and "limit of 4.0 GiB" in done.stderr


# --- item 9: refused before `count` is expanded ---------------------------------------------


def test_a_million_flows_are_refused_in_a_small_process(tmp_path, write):
    # `plait validate` alone took 4.47 GB and 11 s; `plait run` 3-4.5 GB before refusing.
    flow = '[[flow]]\nname = "t"\nkind = "tcp"\nsrc = "s"\ndst = "d"\ncount = 1000000\n'
    write("big.toml", two_paths("10s", "100Mbps", "", flow))
    for command in ("run", "validate"):
        done = plait_capped(tmp_path, command, "big.toml")
        assert done.returncode == 2, done.stderr[-2000:]
        assert "1000000 flows" in done.stderr and "limit of 4.0 GiB" in done.stderr
    # A count given with --set is set aside the same way.
    write("small.toml", two_paths("10s", "100Mbps", "", flow.replace("1000000", "1")))
    done = plait_capped(tmp_path, "run", "small.toml", "--set", "flow.t.count=1000000")
    assert done.returncode == 2 and "1000000 flows" in done.stderr, done.stderr[-2000:]


# --- item 10: no summary unless it is written -------------------------------------------------


def test_quiet_run_builds_no_summary(monkeypatch, capsys, scenario, tmp_path):
    from plait.api import Result, RunRows

    def refuse(self):
        raise AssertionError("summary built")

    monkeypatch.setattr(RunRows, "summary", refuse)
    monkeypatch.setattr(Result, "summary", refuse)
    assert main(["run", str(scenario), "--quiet"]) == 0
    assert main(["run", str(scenario), "--quiet", "--out", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out == ""
    monkeypatch.undo()
    assert main(["run", str(scenario), "--quiet", "--json", str(tmp_path / "s.json")]) == 0
    assert (tmp_path / "s.json").read_text(encoding="utf-8").startswith("{")


# --- item 19: validate says what run will do ------------------------------------------------


def test_validate_refuses_what_run_refuses(capsys, scenario):
    code = main(["validate", str(scenario), "--max-memory", "1KiB"])
    validate_err = capsys.readouterr().err
    assert code == 2
    assert main(["run", str(scenario), "--max-memory", "1KiB", "--quiet"]) == 2
    run_err = capsys.readouterr().err
    assert validate_err == run_err and "limit of 1.0 KiB" in run_err
    assert main(["validate", str(scenario), "--max-memory", "none"]) == 0
    with pytest.raises(plait.ResourceLimitError, match="limit of 1.0 KiB"):
        plait.validate(scenario, max_memory=1024)
    assert plait.validate(scenario, max_memory=None)["flows"] == 3


def test_validate_flags_a_run_that_would_take_long(capsys, write):
    # 100 Tb/s without delay: about 8.6e9 segments in a second, and their ACKs.
    fast = write(
        "fast.toml",
        '[simulation]\nduration = "1s"\n'
        '[[link]]\nname = "l"\nfrom = "a"\nto = "b"\nrate = "100Tbps"\ndelay = "0s"\n'
        '[[flow]]\nname = "f"\nkind = "tcp"\nsrc = "a"\ndst = "b"\n',
    )
    assert main(["validate", str(fast)]) == 0
    out, err = capsys.readouterr()
    assert ": ok (" in out
    assert "plait: warning:" in err and "may take about" in err and "1.7e+10 packet" in err
    estimate = plait.estimate_memory(fast)
    assert estimate["packets"] == pytest.approx(2 * 100e12 / (8 * 1460), rel=1e-6)
    # The small scenario is not flagged.
    assert main(["validate", str(fast), "--set", "link.l.rate=10Mbps"]) == 0
    assert capsys.readouterr().err == ""


def test_a_sweep_point_of_a_million_flows_is_refused_without_being_made(tmp_path, write):
    # Planning a sweep made every point in full (parse, expand `count`, build) before any
    # estimate: a point of a million flows cost gigabytes before its worker refused it. Now
    # it is keyed from its text and its runs are recorded as failed, in a small process.
    text = two_paths(
        "1s",
        "10Mbps",
        "",
        '[[flow]]\nname = "t"\nkind = "tcp"\nsrc = "s"\ndst = "d"\nroute = ["s", "r1", "d"]\n'
        '\n[sweep]\ngrid = { "flow.t.count" = [1, 1000000] }\n',
    )
    write("sweep.toml", text)
    done = plait_capped(tmp_path, "sweep", "sweep.toml", "--out", "o", "--workers", "1")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "1 failed: ResourceLimitError" in done.stderr, done.stderr[-2000:]
    assert "1000000 flows" in done.stderr
    failures = list((tmp_path / "o" / "failures").glob("*.json"))
    assert len(failures) == 1
    assert '"flow.t.count": 1000000' in failures[0].read_text()
