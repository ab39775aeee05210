"""`plait compare A B` and `plait.compare`: results side by side (docs/compare.md)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import plait
import pytest
from conftest import SCENARIO_TOML
from plait.cli import main
from plait.comparison import CompareError, relative_difference, verdict

LINUX_TOML = SCENARIO_TOML.replace("[simulation]", '[tcp]\nprofile = "linux"\n\n[simulation]', 1)
assert LINUX_TOML != SCENARIO_TOML


# --- Constructed data ---------------------------------------------------------------------


def write_store(root: Path, runs: dict[int, list[dict]], parameters=(), links=None) -> Path:
    """A sweep's store written by hand: one flows file per seed (and links when given)."""
    keys = []
    for seed, rows in runs.items():
        key = f"run{seed}"
        keys.append(key)
        for table, data in (("flows", rows), ("links", (links or {}).get(seed))):
            if data is None:
                continue
            (root / table).mkdir(parents=True, exist_ok=True)
            frame = pd.DataFrame(data).assign(run=key, seed=seed)
            frame.to_parquet(root / table / f"{key}.parquet")
    (root / "sweep.json").write_text(
        json.dumps({"keys": keys, "parameters": list(parameters), "tables": ["flows"]})
    )
    return root


def flow(name: str, goodput: float, rtt_p99: float = 0.05) -> dict:
    return {
        "name": name,
        "kind": "tcp",
        "goodput_bps": goodput,
        "rtt_p99_s": rtt_p99,
        "completion_s": math.nan,
    }


def write_summary(path: Path, flows: list[dict], links: list[dict] | None = None) -> Path:
    data = {"seed": 1, "duration_s": 3.0, "warmup_s": 1.0, "flows": flows, "links": links or []}
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def constructed(tmp_path: Path) -> tuple[Path, Path]:
    """A: three seeds of flows f1..f3, a flow "gone" and link "l"; B: one JSON summary whose
    f3 has no p99 RTT (null, as a kernel that cannot give it), a flow "new" and link "l"."""
    a = write_store(
        tmp_path / "a",
        {
            1: [flow("f1", 10.0), flow("f2", 100.0), flow("f3", 100.0), flow("gone", 1.0)],
            2: [flow("f1", 20.0), flow("f2", 100.0), flow("f3", 100.0), flow("gone", 1.0)],
            3: [flow("f1", 30.0), flow("f2", 100.0), flow("f3", 100.0), flow("gone", 1.0)],
        },
        links={
            s: [{"name": "l", "direction": "forward", "utilization": 0.9, "drops": 0}]
            for s in (1, 2, 3)
        },
    )
    b_flows = [flow("f1", 25.0), flow("f2", 108.0), flow("f3", 150.0), flow("new", 1.0)]
    b_flows[2]["rtt_p99_s"] = None
    for row in b_flows:
        row["completion_s"] = None
    b = write_summary(
        tmp_path / "b.json",
        b_flows,
        [{"name": "l", "direction": "forward", "utilization": 0.9, "drops": 3}],
    )
    return a, b


def row(frame: pd.DataFrame, name: str, metric: str | None, key: str = "flow") -> dict:
    match = frame[(frame[key] == name) & (frame["metric"].fillna("") == (metric or ""))]
    assert len(match) == 1, (name, metric, frame)
    return match.iloc[0].to_dict()


def test_verdicts_on_constructed_data(constructed):
    a, b = constructed
    flows, links = plait.compare(a, b)
    f1 = row(flows, "f1", "goodput_bps")
    # B's 25 lies in A's range 10..30 over three seeds, though 25% above A's mean of 20.
    assert (f1["a"], f1["a_min"], f1["a_max"], f1["a_runs"]) == (20.0, 10.0, 30.0, 3)
    assert (f1["b"], f1["b_runs"], f1["rel_diff"], f1["verdict"]) == (25.0, 1, 0.25, "inside")
    f2 = row(flows, "f2", "goodput_bps")
    # 108 is outside A's range 100..100, and 8% above it.
    assert f2["rel_diff"] == pytest.approx(0.08) and f2["verdict"] == "within tolerance"
    f3 = row(flows, "f3", "goodput_bps")
    assert f3["rel_diff"] == 0.5 and f3["verdict"] == "differs"
    # A column null on one side is n/a, never a number; null on both sides is left out.
    p99 = row(flows, "f3", "rtt_p99_s")
    assert p99["verdict"] == "n/a" and math.isnan(p99["b"]) and math.isnan(p99["rel_diff"])
    assert p99["a"] == 0.05 and p99["b_runs"] == 0
    assert "completion_s" not in set(flows["metric"])
    # Rows of one side only are listed as such.
    assert row(flows, "gone", None)["verdict"] == "only in A"
    assert row(flows, "new", None)["verdict"] == "only in B"
    drops = row(links, "l", "drops", key="link")
    assert (drops["direction"], drops["a"], drops["b"], drops["verdict"]) == (
        "forward",
        0.0,
        3.0,
        "differs",
    )
    assert math.isnan(drops["rel_diff"])  # no scale when A is 0
    # The tolerance decides the rows that are not inside a range.
    wide = plait.compare(a, b, tolerance=0.6)
    assert row(wide.flows, "f3", "goodput_bps")["verdict"] == "within tolerance"
    assert any("only in A" in w and "only in B" in w for w in wide.warnings)


def test_verdict_and_relative_difference_rules():
    assert verdict([1.0, 3.0], [2.5]) == "inside"  # B's mean in A's range
    assert verdict([2.0], [1.0, 3.0]) == "inside"  # A's mean in B's range
    assert verdict([2.0], [2.0]) == "within tolerance"  # one run each: no range
    assert verdict([100.0], [110.0]) == "within tolerance"  # exactly 10 %
    assert verdict([100.0], [110.5]) == "differs"
    assert verdict([100.0], [110.5], tolerance=0.2) == "within tolerance"
    assert verdict([1.0, None, float("nan")], [float("nan")]) == "n/a"
    assert verdict([0.0], [1.0]) == "differs"
    assert relative_difference(0.0, 0.0) == 0.0
    assert relative_difference(-2.0, -1.0) == 0.5


def test_html_report_and_terminal_show_n_a(constructed, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    a, b = constructed
    report = tmp_path / "r.html"
    assert main(["compare", str(a), str(b), "--out", str(report)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"f3\s*│\s*rtt_p99_s\s*│\s*50\.00 ms\s*│\s*n/a", out), out
    assert "1 only in A" in out and "1 only in B" in out
    page = report.read_text()
    assert "<td>n/a</td>" in page and "only in B" in page
    assert "No figures." in page  # a JSON summary has no series


# --- Simulations ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stores(tmp_path_factory, client):
    """Seeds 1..3 of the small scenario with the rfc and with the linux profile, stored by
    sweeps, and one run of the linux profile as a folder and a JSON summary."""
    root = tmp_path_factory.mktemp("compare")
    out = {}
    for name, text in (("rfc", SCENARIO_TOML), ("linux", LINUX_TOML)):
        scenario = root / f"{name}.toml"
        scenario.write_text(text)
        plait.sweep(
            scenario,
            seeds=3,
            out=root / name,
            tables=["flows", "links", "flow_series"],
            client=client,
        )
        out[name] = root / name
    assert main(["run", str(root / "linux.toml"), "--out", str(root / "one"), "--quiet"]) == 0
    assert main(["run", str(root / "linux.toml"), "--json", str(root / "one.json"), "--quiet"]) == 0
    out["one"], out["one.json"] = root / "one", root / "one.json"
    return out


def test_compare_rfc_and_linux_profiles_over_seeds(stores, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    report, data = tmp_path / "report.html", tmp_path / "cmp.json"
    code = main(
        [
            "compare",
            str(stores["rfc"]),
            str(stores["linux"]),
            "--out",
            str(report),
            "--json",
            str(data),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    summary = json.loads(data.read_text())
    assert summary["a"]["kind"] == summary["b"]["kind"] == "sweep store"
    assert summary["a"]["seeds"] == summary["b"]["seeds"] == [1, 2, 3]
    assert summary["tolerance"] == 0.1 and summary["warnings"] == []
    names = [f"bulk.{i}" for i in range(3)]
    assert sorted({r["flow"] for r in summary["flows"]}) == names
    assert {(r["link"], r["direction"]) for r in summary["links"]} == {
        (link, d) for link in ("access", "bottleneck") for d in ("forward", "reverse")
    }
    for r in summary["flows"] + summary["links"]:
        assert r["a_runs"] == r["b_runs"] == 3
        assert r["a_min"] <= r["a"] <= r["a_max"] and r["b_min"] <= r["b"] <= r["b_max"]
        assert r["verdict"] in ("inside", "within tolerance", "differs")
    goodput = {r["flow"]: r for r in summary["flows"] if r["metric"] == "goodput_bps"}
    assert set(goodput) == set(names)
    assert sum(summary["counts"].values()) == len(summary["flows"]) + len(summary["links"])
    # The bottleneck is full with either profile.
    util = next(
        r
        for r in summary["links"]
        if (r["link"], r["direction"], r["metric"]) == ("bottleneck", "forward", "utilization")
    )
    assert util["a"] > 0.95 and util["b"] > 0.95 and util["verdict"] != "differs"
    page = report.read_text()
    assert all(name in page for name in names)
    assert page.count("data:image/png;base64,") == 2  # cwnd and goodput overlaid
    assert "Congestion window: A solid, B dashed" in page
    assert all(name in printed for name in names) and "goodput_bps" in printed


def test_the_same_run_read_two_ways_is_the_same(stores):
    """A run's folder against its JSON summary: every metric equal."""
    c = plait.compare(stores["one"], stores["one.json"])
    assert c.a.kind == "run folder" and c.b.kind == "JSON summary"
    rows = pd.concat([c.flows, c.links])
    assert len(rows) > 40
    assert (rows["rel_diff"] == 0).all()
    assert set(rows["verdict"]) == {"within tolerance"}
    # Against three seeds of the same scenario: seed 5's run lies in their ranges or not,
    # but every row is compared, one run against three.
    c = plait.compare(stores["one.json"], stores["linux"])
    assert set(c.flows["a_runs"]) == {1} and set(c.flows["b_runs"]) == {3}


def test_the_function_is_not_hidden_by_its_module():
    import plait.comparison  # noqa: F401 - importing the module must not replace the function

    assert callable(plait.compare) and plait.compare.__name__ == "compare"
    assert issubclass(CompareError, ValueError)
    with pytest.raises(CompareError, match="tolerance"):
        plait.compare("a", "b", tolerance=-1)


# --- Refusals -------------------------------------------------------------------------------


def _refusals(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    good = write_summary(tmp_path / "good.json", [flow("f", 1.0)])
    other = write_summary(tmp_path / "other.json", [flow("g", 1.0)])
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "list.json").write_text("[1, 2]")
    grid = write_store(
        tmp_path / "grid",
        {1: [flow("f", 1.0)], 2: [flow("f", 2.0)]},
        parameters=["link.bottleneck.rate"],
    )
    for seed, rate in ((1, "10Mbps"), (2, "20Mbps")):
        file = grid / "flows" / f"run{seed}.parquet"
        pd.read_parquet(file).assign(**{"link.bottleneck.rate": rate}).to_parquet(file)
    return {
        "missing": ([str(tmp_path / "nothing"), str(good)], "nothing: no such file or folder"),
        "empty-folder": ([str(tmp_path / "empty"), str(good)], "empty: not a plait result"),
        "not-json": ([str(good), str(tmp_path / "notes.txt")], "notes.txt: not a plait result"),
        "not-a-summary": ([str(good), str(tmp_path / "list.json")], "list.json: not a plait run"),
        "grid": ([str(grid), str(good)], "grid: holds 2 parameter points"),
        "nothing-matches": ([str(good), str(other)], "no flow or link in common"),
    }


@pytest.mark.parametrize(
    "case", ["missing", "empty-folder", "not-json", "not-a-summary", "grid", "nothing-matches"]
)
def test_refusals_exit_2_and_write_nothing(case, tmp_path, capsys):
    args, message = _refusals(tmp_path)[case]
    out, js = tmp_path / "out" / "report.html", tmp_path / "cmp.json"
    code = main(["compare", *args, "--out", str(out), "--json", str(js)])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("plait: error: ") and message in lines[0], err
    assert not out.exists() and not out.parent.exists() and not js.exists()


def test_bad_options_exit_2(tmp_path, capsys):
    good = write_summary(tmp_path / "good.json", [flow("f", 1.0)])
    assert main(["compare", str(good), str(good), "--tolerance=-5%"]) == 2
    assert "expected a number >= 0" in capsys.readouterr().err
    assert main(["compare", str(good), str(good), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["compare", str(good), str(good), "--tolerance", "5%", "--quiet"]) == 0
    assert capsys.readouterr().out == ""


def test_results_in_python_and_json_to_stdout(tmp_path, capsys, monkeypatch):
    """plait.Result objects compare as sides; `--json -` writes the data to standard output
    and the table to standard error; different windows are warned about."""
    a = plait.run(_small(tmp_path), seed=1)
    b = plait.run(_small(tmp_path), seed=2)
    c = plait.compare(a, b)
    assert (c.a.kind, c.a.seeds, c.b.seeds) == ("result", [1], [2])
    assert set(c.flows["flow"]) == {"bulk.0", "bulk.1", "bulk.2"} and not c.warnings
    one = write_summary(tmp_path / "one.json", [flow("f", 1.0)])
    data = json.loads(one.read_text())
    data["duration_s"] = 4.0
    two = tmp_path / "two.json"
    two.write_text(json.dumps(data))
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["compare", str(one), str(two), "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["flows"][0]["verdict"] == "within tolerance"
    assert "plait: warning: " in err and "duration_s 3 and 4 differ" in err
    assert "goodput_bps" in err and "goodput_bps" not in out.split('"flows"')[0]


def _small(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SCENARIO_TOML)
    return path
