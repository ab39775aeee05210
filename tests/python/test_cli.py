"""Tests of the `plait` command line: run, validate, list, bench and reproduce.

Most tests call `plait.cli.main([...])` in-process and read the output with capsys; a few run
the command in a fresh interpreter to check the exit code the shell sees.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import plait
import pytest
from plait.cli import main

REPO = Path(__file__).resolve().parents[2]
DUMBBELL = REPO / "experiments" / "dumbbell" / "dumbbell.toml"


BENCH_KEYS = {
    "delivered_packets",
    "events",
    "wall_seconds",
    "delivered_packets_per_second",
    "peak_rss_bytes",
}

# The entry point of the `plait` console script (pyproject: plait = "plait.cli:main").
_ENTRY = "import sys; from plait.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    """rich wraps table cells to the terminal width; give it room so names stay whole."""
    monkeypatch.setenv("COLUMNS", "200")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def cli_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _ENTRY, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def without_wall(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "wall_seconds"}


# --- plait run ------------------------------------------------------------------------------


def test_run_writes_json_and_parquet_and_prints_table(capsys, scenario, tmp_path):
    summary = tmp_path / "out.json"
    out_dir = tmp_path / "tables"
    code, out, err = cli(capsys, "run", scenario, "--json", summary, "--out", out_dir)
    assert code == 0
    assert err == ""
    for name in ("bulk.0", "bulk.1", "bulk.2", "bottleneck", "seed 5"):
        assert name in out
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert data["seed"] == 5
    assert [f["name"] for f in data["flows"]] == ["bulk.0", "bulk.1", "bulk.2"]
    # The CLI writes what the API computes.
    assert without_wall(data) == without_wall(json.loads(json.dumps(plait.run(scenario).summary())))
    assert sorted(p.name for p in out_dir.iterdir()) == [
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
    flows = pd.read_parquet(out_dir / "flows.parquet")
    assert flows.name.tolist() == ["bulk.0", "bulk.1", "bulk.2"]
    assert (flows.seed == 5).all()
    assert (pd.read_parquet(out_dir / "links.parquet").seed == 5).all()


def test_run_seed_option(capsys, scenario, tmp_path):
    summary = tmp_path / "s.json"
    code, out, _ = cli(capsys, "run", scenario, "--seed", "11", "--json", summary)
    assert code == 0
    assert "seed 11" in out
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert data["seed"] == 11
    expected = plait.run(scenario, seed=11).flows.start_s.tolist()
    assert [f["start_s"] for f in data["flows"]] == expected
    assert expected != plait.run(scenario).flows.start_s.tolist()


def test_run_set_option(capsys, scenario, tmp_path):
    summary = tmp_path / "s.json"
    code, _, _ = cli(capsys, "run", scenario, "--set", "flow.bulk.cc=cubic", "--json", summary)
    assert code == 0
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert {f["cc"] for f in data["flows"]} == {"cubic"}


def test_run_set_is_repeatable_and_later_wins(capsys, scenario, tmp_path):
    summary = tmp_path / "s.json"
    code, _, _ = cli(
        capsys,
        "run",
        scenario,
        "--set",
        "flow.bulk.cc=cubic",
        "--set",
        'flow.bulk.cc={ name = "aimd", alpha = 2, beta = 0.7 }',
        "--set",
        "flow.bulk.count=2",
        "--set",
        "simulation.seed=3",
        "--json",
        summary,
    )
    assert code == 0
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert [f["name"] for f in data["flows"]] == ["bulk.0", "bulk.1"]
    assert {f["cc"] for f in data["flows"]} == {"aimd"}
    assert data["seed"] == 3


def test_run_quiet_prints_nothing(capsys, scenario, tmp_path):
    code, out, err = cli(capsys, "run", scenario, "--quiet", "--json", tmp_path / "s.json")
    assert code == 0
    assert (out, err) == ("", "")
    assert (tmp_path / "s.json").exists()


def test_run_without_goodput_prints_jain_as_undefined(capsys, tmp_path, scenario_toml):
    # Three 10 KB transfers that finish well inside the 1 s warm-up: no flow has goodput in the
    # window, so Jain's index is 0/0, undefined (docs/results.md): "n/a", and null in JSON.
    text = scenario_toml.replace(
        'start = { uniform = ["0s", "1s"] }', 'start = "0s"\nbytes = "10KB"'
    )
    path = tmp_path / "short.toml"
    path.write_text(text, encoding="utf-8")
    summary = tmp_path / "s.json"
    code, out, _ = cli(capsys, "run", path, "--json", summary)
    assert code == 0
    assert "Jain fairness n/a (no goodput)" in out
    assert "nan" not in out.lower()
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert [f["goodput_bps"] for f in data["flows"]] == [0.0, 0.0, 0.0]
    assert data["jain_fairness"] is None


# An MPTCP connection over two disjoint paths, a>b and a>c>b; link c-b is down from 1 s to
# 2 s, so the second subflow loses packets to the outage.
MULTIPATH_OUTAGE_TOML = """\
[simulation]
duration = "3s"
seed = 2

[[link]]
name = "direct"
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"

[[link]]
name = "via1"
from = "a"
to = "c"
rate = "10Mbps"
delay = "20ms"

[[link]]
name = "via2"
from = "c"
to = "b"
rate = "10Mbps"
delay = "1ms"

[[flow]]
name = "mp"
kind = "mptcp"
src = "a"
dst = "b"
subflows = [ { route = ["a", "b"] }, { route = ["a", "c", "b"] } ]

[[event]]
at = "1s"
link = "via2"
action = "down"

[[event]]
at = "2s"
link = "via2"
action = "up"
"""


def table_rows(out: str, title: str) -> list[list[str]]:
    """The body rows of the rich table titled `title` in `out`, as lists of cell texts."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            rows.append([cell.strip() for cell in line.strip("│").split("│")])
    return rows


@pytest.mark.parametrize("parquet", [False, True], ids=["rows", "dataframes"])
def test_run_prints_subflows_and_link_down_drops(capsys, tmp_path, parquet):
    path = tmp_path / "mp.toml"
    path.write_text(MULTIPATH_OUTAGE_TOML, encoding="utf-8")
    expected = plait.run(path)
    extra = ["--out", tmp_path / "tables"] if parquet else []
    code, out, _ = cli(capsys, "run", path, *extra)
    assert code == 0
    # One row per subflow: its flow, index and route, the share of new data it carried.
    subflows = table_rows(out, "paths of multipath flows")
    assert [row[:3] for row in subflows] == [["mp", "0", "a>b"], ["mp", "1", "a>c>b"]]
    shares = [f"{100 * s:.1f}%" for s in expected.paths.data_share]
    assert [row[4] for row in subflows] == shares
    assert [row[5] for row in subflows] == [str(n) for n in expected.paths.retransmissions]
    # The links table has a column for the packets lost while a link was down.
    links = table_rows(out, "links")
    down = {(r.name, r.direction): r.down_drops for r in expected.links.itertuples()}
    assert down[("via2", "forward")] > 0
    assert {(row[0], row[1]): int(row[5]) for row in links} == down
    assert "down drops" in out


def test_run_prints_no_paths_table_without_multipath_flows(capsys, scenario):
    code, out, _ = cli(capsys, "run", scenario)
    assert code == 0
    assert "paths of multipath flows" not in out
    assert "down drops" in out


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--set", "flow.bulk.cc=renoo"], ["flow[0].cc", "unknown controller 'renoo'"]),
        (["--set", "flow[4].cc=cubic"], ["flow[4]", "there is no flow[4]"]),
        (["--set", "link.bottleneck.qeue=3"], ["link[1].qeue", "did you mean 'queue'?"]),
        (["--set", "link.access.duplex=false"], ["flow[0].dst", "ACK"]),
    ],
    ids=["unknown-controller", "missing-entry", "unknown-field", "no-route"],
)
def test_run_scenario_error_writes_nothing(capsys, scenario, tmp_path, extra, fragments):
    summary = tmp_path / "out.json"
    out_dir = tmp_path / "tables"
    code, out, err = cli(capsys, "run", scenario, *extra, "--json", summary, "--out", out_dir)
    assert code == 2
    assert out == ""
    assert err.startswith("plait: error: ")
    assert str(scenario) in err
    for fragment in fragments:
        assert fragment in err
    assert not summary.exists()
    assert not out_dir.exists()


def test_run_missing_file(capsys, tmp_path):
    missing = tmp_path / "nope.toml"
    summary = tmp_path / "out.json"
    code, out, err = cli(capsys, "run", missing, "--json", summary, "--out", tmp_path / "t")
    assert code == 2
    assert out == ""
    assert str(missing) in err and "cannot read scenario file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_run_negative_seed_is_refused(capsys, scenario, tmp_path):
    code = main(["run", str(scenario), "--seed", "-3", "--json", str(tmp_path / "s.json")])
    assert code == 2
    assert "--seed" in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()


def test_run_exit_codes_in_a_subprocess(scenario, tmp_path):
    ok = cli_process("run", scenario, "--json", "ok.json", "--out", "ok", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "bulk.2" in ok.stdout
    assert json.loads((tmp_path / "ok.json").read_text(encoding="utf-8"))["seed"] == 5
    assert (tmp_path / "ok" / "flows.parquet").exists()

    bad = cli_process(
        "run",
        scenario,
        "--set",
        "flow.bulk.cc=renoo",
        "--json",
        "bad.json",
        "--out",
        "bad",
        cwd=tmp_path,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert "flow[0].cc" in bad.stderr and "unknown controller" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert not (tmp_path / "bad.json").exists()
    assert not (tmp_path / "bad").exists()


def test_validate_exit_codes_in_a_subprocess(scenario, tmp_path):
    ok = cli_process("validate", scenario, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "ok (3 nodes, 2 links, 3 flows" in ok.stdout
    bad = cli_process("validate", tmp_path / "missing.toml", cwd=tmp_path)
    assert bad.returncode == 2
    assert "missing.toml" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_python_dash_m_plait_cli(scenario, tmp_path):
    def module(*args):
        return subprocess.run(
            [sys.executable, "-m", "plait.cli", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )

    ok = module("validate", scenario)
    assert ok.returncode == 0, ok.stderr
    assert "ok (3 nodes" in ok.stdout
    bad = module("run", scenario, "--set", "flow.bulk.cc=renoo", "--json", "bad.json")
    assert bad.returncode == 2
    assert "unknown controller" in bad.stderr
    assert not (tmp_path / "bad.json").exists()


# --- plait validate -------------------------------------------------------------------------


def test_validate_ok(capsys, scenario):
    code, out, err = cli(capsys, "validate", scenario)
    assert code == 0
    assert err == ""
    assert out.strip() == (
        f"{scenario}: ok (3 nodes, 2 links, 3 flows, 3 s, warm-up 1 s, seed 5; "
        "about 59.8 KiB of memory)"
    )


def test_validate_with_set(capsys, scenario):
    code, out, _ = cli(capsys, "validate", scenario, "--set", "flow.bulk.count=7")
    assert code == 0
    assert "7 flows" in out


def test_validate_failure(capsys, tmp_path, scenario_toml):
    bad = tmp_path / "bad.toml"
    bad.write_text(scenario_toml.replace('rate = "10Mbps"', 'rate = "10MBps"'), encoding="utf-8")
    code, out, err = cli(capsys, "validate", bad)
    assert code == 2
    assert out == ""
    assert err.startswith(f"plait: error: {bad}: link[1].rate: ")


def test_dumbbell_validates_as_written(capsys):
    code, out, err = cli(capsys, "validate", DUMBBELL)
    assert code == 0, err
    assert "ok (4 nodes, 3 links, 10 flows, 60 s, warm-up 10 s, seed 1; about" in out


# --- plait list -----------------------------------------------------------------------------


def test_list_prints_controllers_and_queues(capsys):
    code, out, _ = cli(capsys, "list")
    assert code == 0
    for title in ("controllers", "queues", "sources", "loss"):
        assert title in out
    for name in ("reno", "cubic", "aimd", "droptail", "red", "threshold_dropper"):
        assert name in out
    for name in ("bernoulli", "gilbert_elliott", "onoff"):
        assert name in out
    # Each parameter with its default, type and range; required and unset ones say so.
    assert "beta = 0.7  number in (0, 1)" in out
    assert "alpha = 1  number (MSS per RTT) > 0" in out
    assert "p  probability in [0, 1], required" in out
    assert "bytes  size (bytes) ≥ 1; unset: a long-lived flow" in out
    assert "policy = first_arrival  first_arrival | rate_independent | largest_rate" in out
    assert "mss = 1460  size (bytes) in [1, 65535]  (also [tcp])" in out


PARAM_KEYS = {
    "name",
    "type",
    "unit",
    "default",
    "required",
    "when_unset",
    "range",
    "range_text",
    "choices",
    "section",
    "description",
}


def test_list_table_shows_every_entry_of_the_json(capsys):
    # The table view lists the same registry as --json: the coupled controllers and the
    # schedulers included, each under its own title.
    code, listing, _ = cli(capsys, "list", "--json")
    assert code == 0
    entries = json.loads(listing)
    code, out, _ = cli(capsys, "list")
    assert code == 0
    assert "coupled controllers" in out
    assert "packet schedulers" in out
    names = {line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")}
    for e in entries:
        assert e["name"] in names, e
    for name in ("lia", "olia", "balia", "wvegas", "mpfast", "min_rtt", "redundant", "capacity"):
        assert name in names
    # MPTCP subflows and MPAT windows take their defaults from [tcp]: no section the scenario
    # parser would reject as unknown is named.
    assert "[mptcp]" not in out
    assert "[mpat]" not in out
    for e in entries:
        for p in e["params"]:
            assert p["section"] in (None, "tcp"), (e["name"], p)


def test_list_json(capsys):
    code, out, _ = cli(capsys, "list", "--json")
    assert code == 0
    entries = json.loads(out)
    by_category: dict[str, set[str]] = {}
    for e in entries:
        assert set(e) == {"category", "name", "description", "params"}
        assert e["description"]
        for p in e["params"]:
            assert set(p) == PARAM_KEYS, p
            assert p["description"]
            assert p["required"] == (p["default"] == "required")
            assert (p["when_unset"] is not None) == (p["default"] == "none")
            if p["choices"] is not None:
                assert p["type"] == "choice"
                assert p["required"] or p["default"] in p["choices"]
            bounds = p["range"]
            if bounds is None:
                assert p["range_text"] == ""
            else:
                assert set(bounds) == {"min", "min_inclusive", "max", "max_inclusive"}
                assert p["range_text"]
                if bounds["min"] is not None and bounds["max"] is not None:
                    assert bounds["min"] < bounds["max"]
        by_category.setdefault(e["category"], set()).add(e["name"])
    assert set(by_category) == {"controller", "queue", "source", "loss", "scheduler", "coupled"}
    assert {"reno", "cubic", "aimd", "vegas", "fast"} <= by_category["controller"]
    assert by_category["coupled"] == {"lia", "olia", "balia", "wvegas", "mpfast"}
    assert by_category["queue"] == {"droptail", "red", "threshold_dropper"}
    # Every protocol of the papers and baselines; a new protocol adds itself (its declaration
    # and its line in protocols!), not a line here.
    assert {
        "tcp",
        "mptcp",
        "mpat",
        "tfrc",
        "multfrc",
        "cp",
        "cbr",
        "onoff",
    } <= by_category["source"]
    assert by_category["loss"] == {"bernoulli", "periodic", "gilbert_elliott"}
    names = [e["name"] for e in entries if e["category"] == "controller"]
    assert names == sorted(names)
    aimd = next(e for e in entries if e["name"] == "aimd")
    assert {p["name"]: p["default"] for p in aimd["params"]} == {"alpha": "1", "beta": "0.5"}
    beta = next(p for p in aimd["params"] if p["name"] == "beta")
    assert beta["type"] == "number"
    assert beta["range"] == {"min": 0.0, "min_inclusive": False, "max": 1.0, "max_inclusive": False}
    alpha = next(p for p in aimd["params"] if p["name"] == "alpha")
    assert (alpha["unit"], alpha["range_text"]) == ("MSS per RTT", "> 0")
    tcp = next(e for e in entries if e["name"] == "tcp")
    settings = {p["name"] for p in tcp["params"] if p["section"] == "tcp"}
    assert {"mss", "sack", "min_rto", "dupack_threshold"} <= settings
    assert "cc" not in settings
    mss = next(p for p in tcp["params"] if p["name"] == "mss")
    assert (mss["type"], mss["default"], mss["range_text"]) == ("size", "1460", "[1, 65535]")


def sample(p: dict):
    """A value inside a listed parameter's range, for a parameter that must be given."""
    bounds = p["range"] or {}
    lo, hi = bounds.get("min"), bounds.get("max")
    if lo is not None and hi is not None:
        x = (lo + hi) / 2
    elif lo is not None:
        x = lo + 1
    elif hi is not None:
        x = hi - 1
    else:
        x = 1.0
    return round(x) if p["type"] == "integer" else x


def test_listed_controllers_are_the_accepted_ones(capsys, scenario):
    main(["list", "--json"])
    entries = json.loads(capsys.readouterr().out)
    controllers = [e for e in entries if e["category"] == "controller"]
    for e in controllers:
        required = {p["name"]: sample(p) for p in e["params"] if p["required"]}
        if required:
            # A controller with a required parameter is refused by name alone, saying which.
            with pytest.raises(
                plait.ScenarioError, match=f"needs its parameter `{next(iter(required))}`"
            ):
                plait.validate(scenario, overrides={"flow.bulk.cc": e["name"]})
        cc = {"name": e["name"], **required} if required else e["name"]
        assert plait.validate(scenario, overrides={"flow.bulk.cc": cc})["flows"] == 3
        # Every listed default is accepted when written out.
        written = {"name": e["name"], **required}
        for p in e["params"]:
            if not p["required"] and p["when_unset"] is None:
                written[p["name"]] = p["default"]
        overrides = [f"flow.bulk.cc.{k}={v}" for k, v in written.items()]
        overrides.insert(0, "flow.bulk.cc={}")
        assert plait.validate(scenario, overrides=overrides)["flows"] == 3
    with pytest.raises(plait.ScenarioError) as info:
        plait.validate(scenario, overrides={"flow.bulk.cc": "westwood"})
    names = sorted(e["name"] for e in controllers)
    assert f"(known: {', '.join(names)})" in str(info.value)


# --- plait bench ----------------------------------------------------------------------------


def check_bench_report(report: dict, flows: int, duration: float) -> None:
    assert BENCH_KEYS <= set(report)
    assert report["flows"] == flows
    assert report["duration_s"] == duration
    assert report["delivered_packets"] > 0
    assert report["events"] > report["delivered_packets"]
    assert report["wall_seconds"] > 0
    rate = report["delivered_packets"] / report["wall_seconds"]
    assert report["delivered_packets_per_second"] == pytest.approx(rate, rel=1e-6)
    if sys.platform.startswith("linux"):
        assert report["peak_rss_bytes"] > 1_000_000


def test_bench_json(capsys):
    # The benchmark's flows start uniformly in [0 s, 4 s], so it needs more than 4 s.
    code, out, _ = cli(capsys, "bench", "dumbbell", "--flows", "2", "--duration", "5", "--json")
    assert code == 0
    check_bench_report(json.loads(out), flows=2, duration=5.0)


def test_bench_text(capsys):
    code, out, _ = cli(capsys, "bench", "dumbbell", "--flows", "1", "--duration", "4.5")
    assert code == 0
    assert out.startswith("dumbbell, 1 tcp flows, 4.5 s simulated: ")
    assert "packets delivered" in out and "peak RSS" in out


def test_bench_exact_timing_runs_without_send_jitter(capsys):
    # The default's send jitter puts each data packet on its first link at an event of its
    # own: exact timing runs the same packets in fewer events, and says so.
    args = ("bench", "dumbbell", "--flows", "2", "--duration", "5", "--json")
    code, out, _ = cli(capsys, *args)
    assert code == 0
    jittered = json.loads(out)
    code, out, _ = cli(capsys, *args, "--exact")
    assert code == 0
    exact = json.loads(out)
    check_bench_report(exact, flows=2, duration=5.0)
    assert exact["events"] < jittered["events"]
    code, out, _ = cli(capsys, "bench", "mptcp", "--connections", "1", "--duration", "5", "--exact")
    assert code == 0 and out.startswith("mptcp, 1 connections of 2 subflows, exact timing, ")


def test_bench_mptcp(capsys):
    code, out, _ = cli(
        capsys,
        "bench",
        "mptcp",
        "--connections",
        "2",
        "--subflows",
        "3",
        "--duration",
        "5",
        "--json",
    )
    assert code == 0
    report = json.loads(out)
    check_bench_report(report, flows=2, duration=5.0)
    assert report["subflows"] == 3
    code, out, _ = cli(capsys, "bench", "mptcp", "--connections", "1", "--duration", "4.5")
    assert code == 0
    assert out.startswith("mptcp, 1 connections of 2 subflows, 4.5 s simulated: ")
    code, _, err = cli(capsys, "bench", "mptcp", "--subflows", "33", "--duration", "1")
    assert code == 2
    assert "--subflows: expected a whole number in [1, 32], got 33" in err


def test_bench_rejects_bad_arguments(capsys):
    code, _, err = cli(capsys, "bench", "dumbbell", "--flows", "0", "--duration", "1")
    assert code == 2
    assert "--flows: expected a whole number in [1, 100000], got 0" in err


def test_bench_short_duration(capsys):
    code, out, _ = cli(capsys, "bench", "dumbbell", "--flows", "2", "--duration", "1", "--json")
    assert code == 0
    check_bench_report(json.loads(out), flows=2, duration=1.0)


# --- internal errors ------------------------------------------------------------------------


def _matplotlib_refuses(args):
    """A command that hands matplotlib negative error bars, as `plait reproduce` once did."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    try:
        ax.errorbar([1.0], [0.83], yerr=[[-1e-16], [0.0]])
    finally:
        plt.close("all")
    return 0


def _bug(args):
    return {}["missing"]


def _input_mistake(args):
    raise ValueError("x.toml: flow.cc: expected a controller name")


@pytest.mark.parametrize(
    ("func", "code", "line"),
    [
        (_matplotlib_refuses, 70, "plait: internal error: ValueError: 'yerr' must not contain"),
        (_bug, 70, "plait: internal error: KeyError: 'missing'"),
        (_input_mistake, 2, "plait: error: x.toml: flow.cc: expected a controller name"),
    ],
    ids=["library-value-error", "key-error", "plait-value-error"],
)
def test_an_internal_error_is_not_reported_as_an_input_mistake(
    capsys, monkeypatch, func, code, line
):
    """Regression: a ValueError raised inside matplotlib (a bug in plait's figure) exited 2 with
    one line, as if the input were wrong. A bug exits 70 (EX_SOFTWARE) with its traceback and
    a request to report it; plait's own checks still exit 2 with one line."""
    import plait.cli.listing

    monkeypatch.setattr(plait.cli.listing, "main", func)
    got, _, err = cli(capsys, "list")
    assert got == code, err
    assert line in err
    if code == 70:
        assert "Traceback" in err and "please report it" in err
    else:
        assert err.count("\n") == 1 and "Traceback" not in err


# --- interruption ---------------------------------------------------------------------------


def test_ctrl_c_stops_a_long_run_cleanly_and_writes_nothing(tmp_path):
    """SIGINT during a run: exit code 130, a one-line message, no result file, no traceback."""
    import signal
    import time

    scenario = tmp_path / "long.toml"
    scenario.write_text(
        DUMBBELL.read_text(encoding="utf-8").replace('duration = "60s"', 'duration = "100000s"'),
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", _ENTRY, "run", str(scenario), "--json", "out.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Give the interpreter time to import and start simulating (the run itself would take
    # hours), so that the interrupt lands inside the run.
    time.sleep(4.0)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    started = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.perf_counter() - started < 10
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


def test_experiment_sweep_resumes_from_saved_runs(tmp_path):
    """Each finished run is stored; a second sweep reuses stored runs instead of running them."""
    import pyarrow.parquet as pq
    from plait.experiments import parallel_tcp as exp

    store = tmp_path / "runs"
    first = exp.sweep([1], duration=20, warmup=5, seeds=[1], out=store, workers=2)
    saved = sorted((store / "links").glob("*.parquet"))
    assert len(saved) == len(exp.queues())
    # Tamper with one stored run: the second sweep must return it as stored, not re-run it.
    table = pq.read_table(saved[0]).to_pandas()
    table.loc[table.name == "bottleneck", "utilization"] = 0.123
    table.to_parquet(saved[0], index=False)
    second = exp.sweep([1], duration=20, warmup=5, seeds=[1], out=store, workers=2)
    assert (second.utilization == 0.123).sum() == 1
    untouched = second.utilization != 0.123
    assert list(second[untouched].utilization) == list(first[untouched].utilization)
    # A different seed is a different run: nothing reused.
    third = exp.sweep([1], duration=20, warmup=5, seeds=[2], out=store, workers=2)
    assert (third.utilization == 0.123).sum() == 0
    assert len(list((store / "links").glob("*.parquet"))) == 2 * len(exp.queues())


# --- plait reproduce ------------------------------------------------------------------------


def test_reproduce_writes_a_report_that_renders_in_a_browser(capsys, tmp_path):
    """The quick parallel-TCP reproduction: a report with every claim, a verdict each, and
    figures that a real browser shows; a second call reuses every stored run."""
    from browser import open_in_browser, require_browser

    out_dir = tmp_path / "repro"
    args = ("reproduce", "parallel-tcp", "--quick", "--seeds", "2", "--out", out_dir)
    code, out, _ = cli(capsys, *args)
    assert code == 0
    report = out_dir / "report.html"
    html = report.read_text(encoding="utf-8")
    assert "Parallel TCP sockets" in html
    # Every claim has a verdict; the paper's RED claim is one plait does not reproduce.
    assert html.count('<td class="verdict"><span class="badge') == 14
    assert "RED conforms reasonably to Theorem 1" in html
    assert "of 14 claims agree" in out
    stored = list((out_dir / "parallel-tcp" / "runs" / "links").glob("*.parquet"))
    assert len(stored) == 8 * 4 * 2  # queues x N x seeds
    # The utilisation table (one row per run) and its Markdown and figure, beside the runs.
    rows = pd.read_csv(out_dir / "parallel-tcp" / "utilization.csv")
    assert len(rows) == 8 * 4 * 2 and sorted(rows.n.unique()) == [1, 2, 4, 8]
    assert sorted(rows.seed.unique()) == [1, 2]
    assert (rows.utilization > 0).all() and (rows.utilization <= 1).all()
    theorem1 = 1 - 1 / (1 + 3 * rows.n)
    assert rows.theorem1.tolist() == pytest.approx(theorem1.tolist(), rel=1e-12)
    markdown = (out_dir / "parallel-tcp" / "utilization.md").read_text(encoding="utf-8")
    assert markdown.startswith("| N | theorem 1 | threshold-dropper, rate-independent |")
    png = (out_dir / "parallel-tcp" / "utilization.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    code, _, _ = cli(capsys, *args)
    assert code == 0
    assert report.read_text(encoding="utf-8").count("stored earlier") == 1
    require_browser()
    seen = open_in_browser(report)
    assert seen["figures"] == 4 and seen["images"] == 4
    assert seen["broken_images"] == [] and seen["missing_anchors"] == []
    assert seen["failed_requests"] == [] and seen["external_requests"] == []
    assert seen["console_errors"] == [] and seen["page_errors"] == []


def test_reproduce_rejects_bad_arguments(capsys, tmp_path):
    out_dir = tmp_path / "repro"
    for args, message in (
        (["nosuch"], "invalid choice: 'nosuch'"),
        (["parallel-tcp", "--seeds", "0"], "expected a count in [1, 1000]"),
        (["parallel-tcp", "--seeds", "1,1"], "a seed appears twice"),
        (["parallel-tcp", "--workers", "0"], "--workers: expected a whole number"),
    ):
        code, _, err = cli(capsys, "reproduce", *args, "--out", out_dir)
        assert code == 2, args
        assert message in err, err
        assert not out_dir.exists()
