"""The yang-amer-2013 experiment (plait.experiments.yang_amer_2013): its settings and
scenarios, a tiny end-to-end version, seeds that vary the result, and verdicts computed from
made-up data."""

from __future__ import annotations

import importlib
import sys

import pandas as pd
import plait
import pytest
from plait.experiments import MODULES, Options
from plait.experiments import yang_amer_2013 as ya
from plait.report import Claim, Section, render

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9 and 3.10
    import tomli as tomllib

#: A 3 MiB transfer instead of 150 MiB, for the tests.
SMALL = {"flow.mptcp.bytes": "3MiB", "simulation.duration": "20s"}


def test_registered_for_plait_reproduce():
    """Listed in MODULES and registered under its name (without importing the other
    experiments, which may not be importable in this checkout)."""
    assert importlib.import_module(MODULES["yang-amer-2013"]) is ya
    assert ya.EXPERIMENT.name == "yang-amer-2013" and ya.EXPERIMENT.settings is ya.settings


def test_settings_are_the_papers_columns(tmp_path):
    assert [ya.label(s) for s in ya.SETTINGS["I"]] == [
        "Default",
        "P-(0.5,1.0)",
        "P-(0.7,1.0)",
        "P-(0.9,1.0)",
        "P-(0.9,1.2)",
        "P-(0.9,1.4)",
    ]
    assert [ya.label(s) for s in ya.SETTINGS["II"]] == [
        "Default",
        "P-(0.5,1.0)",
        "P-(0.9,1.0)",
        "P-(0.5,1.2)",
        "P-(0.9,1.2)",
    ]
    # Section V.C's biased-feeding: the default, a small, the default and a large gamma.
    assert [ya.label(s) for s in ya.SETTINGS["B"]] == [
        "Default",
        "P-(0.1,1.0)",
        "P-(0.5,1.0)",
        "P-(0.9,1.0)",
    ]
    for table in ("I", "II"):
        assert set(ya.PAPER_TABLES[table]) == set(ya.SETTINGS[table])
    assert ya.scheduler("default") == {"kind": "min_rtt"}
    assert ya.scheduler((0.9, 1.2)) == {"kind": "capacity", "gamma": 0.9, "delta": 1.2}
    assert ya.setting_of('{"kind" = "capacity", "gamma" = 0.7, "delta" = 1.0}') == (0.7, 1.0)
    assert ya.setting_of('{"kind" = "min_rtt"}') == "default"
    full = Options(out=tmp_path, seeds=list(range(1, 11)))
    assert ya.EXPERIMENT.runs(full) == 150
    assert ya.EXPERIMENT.runs(Options(out=tmp_path, seeds=list(range(1, 11)), quick=True)) == 30


def test_scenarios_are_the_testbed():
    for table, path in ((t, ya.SCENARIOS[t]) for t in ("I", "II")):
        scenario = tomllib.loads(path.read_text())
        links = {link["name"]: link for link in scenario["link"]}
        # Subflow 2's USB adapter queues at most 3 packets (Section IV).
        assert links["usb1"]["queue"]["packets"] == 3
        assert {link["rate"] for link in links.values()} == {"10Mbps"}
        flows = {f["name"]: f for f in scenario["flow"]}
        mp = flows["mptcp"]
        assert (mp["cc"], mp["bytes"]) == ("lia", "150MiB")
        assert [s["route"] for s in mp["subflows"]] == [["l1", "ra", "l2"], ["l1", "rb", "l2"]]
        assert ("cross" in flows) == (table == "II")
        plait.validate(path)
    cross = tomllib.loads(ya.SCENARIOS["II"].read_text())
    assert {f["name"]: f for f in cross["flow"]}["cross"]["src"] == "l3"


def test_the_connection_has_the_hosts_timing():
    """The MPTCP connection keeps the linux profile's host jitter, as the cross TCP does: no
    `host_jitter` of its own (a zero one let a drop-tail phase effect between an exactly
    timed connection and a jittered cross TCP set Table II's split at router A), and the
    jitter reaches its packets: turning it off changes the run."""
    for path in ya.SCENARIOS.values():
        scenario = tomllib.loads(path.read_text())
        assert scenario["tcp"]["profile"] == "linux"
        assert "host_jitter" not in scenario["tcp"]
        for flow in scenario["flow"]:
            assert "host_jitter" not in flow, (path.name, flow["name"])
    runs = []
    for jitter in (None, "0s"):
        extra = {} if jitter is None else {"flow.mptcp.host_jitter": jitter}
        r = plait.run(ya.SCENARIOS["I"], seed=1, overrides={**SMALL, **extra})
        f = r.flows.set_index("name").loc["mptcp"]
        runs.append((f.completion_s, int(f.retransmissions)))
    assert runs[0] != runs[1], runs


def test_seeds_give_different_results():
    """The reverse-direction chatter and the host jitter make seeds differ without cross traffic."""
    results = set()
    for seed in (1, 2, 3):
        r = plait.run(ya.SCENARIOS["I"], seed=seed, overrides=SMALL)
        f = r.flows.set_index("name").loc["mptcp"]
        results.add((f.completion_s - f.start_s, int(f.retransmissions)))
    assert len(results) == 3, results


def test_reproduce_end_to_end(tmp_path):
    """The whole experiment with a 3 MiB file in 20 s runs, four settings in Table I and
    three in Table II, two seeds, passed in as settings: runs, tables, claims, figures and
    files."""
    small = ya.Settings(
        seeds=[1, 2],
        tables={
            "I": ["default", (0.5, 1.0), (0.9, 1.2), (0.9, 1.4)],
            "II": ["default", (0.5, 1.0), (0.9, 1.0)],
        },
        file_bytes=3 * 2**20,
        duration=20.0,
    )
    options = Options(out=tmp_path / "yang-amer-2013", seeds=[1, 2], where={"workers": 1})
    assert ya.EXPERIMENT.runs(options, small) == 14
    section = ya.EXPERIMENT.reproduce(options, small)
    assert isinstance(section, Section) and section.name == "yang-amer-2013"
    assert len(section.claims) == 6 and all(isinstance(c, Claim) for c in section.claims)
    assert len(section.figures) == 2
    assert section.runs["packet runs"] == 14 and section.runs["failed"] == 0
    for name in ya.OUTPUT_FILES.values():
        assert (options.out / name).is_file(), name
    runs = pd.read_csv(options.out / "runs.csv")
    assert len(runs) == 14
    assert (runs.packets_sf1 > 0).all() and (runs.packets_sf2 > 0).all()
    assert runs.throughput_MBps.between(0.1, 2.5).all()
    table = (options.out / "tables.md").read_text()
    assert "| Throughput (MB/s) |" in table and "(1.58)" in table
    html = render([section], "t", "g")
    assert html.count('<td class="verdict"><span class="badge') == 6


def _runs(values: dict) -> pd.DataFrame:
    """Made-up runs: {(table, setting): [(throughput, retransmissions, sf1, sf2), ...]}, one
    tuple per seed."""
    rows = []
    for (table, setting), per_seed in values.items():
        for seed, (tput, retx, sf1, sf2) in enumerate(per_seed, start=1):
            rows.append(
                {
                    "table": table,
                    "setting": setting,
                    "seed": seed,
                    "transfer_s": 1.0 / tput,
                    "throughput_MBps": tput,
                    "retransmissions": retx,
                    "timeouts": 0,
                    "packets_sf1": sf1,
                    "packets_sf2": sf2,
                    "cwnd_sf1_mean_pkts": 10.0,
                    "retransmissions_sf1": 0,
                    "share_sf2": sf2 / (sf1 + sf2),
                    "label": ya.label(setting),
                }
            )
    return pd.DataFrame(rows)


#: Tables I and II without the biased-feeding runs.
TABLES_ONLY = ya.Settings(tables={t: ya.SETTINGS[t] for t in ("I", "II")})


def _paper_like() -> dict:
    """Values close to the paper's Tables I and II, two seeds each."""
    out = {}
    for table, settings in ya.PAPER_TABLES.items():
        for setting, (tput, retx, sf1, sf2) in settings.items():
            out[(table, setting)] = [(tput, retx, sf1, sf2), (tput * 1.001, retx + 1, sf1, sf2)]
    return out


def test_verdicts_agree_with_the_papers_numbers():
    runs = _runs(_paper_like())
    summary = ya.summarize(runs)
    assert len(summary) == 11 and (summary.seeds == 2).all()
    gain_i, retx, moderate, delta, gain_ii, shift = ya.claims(runs, summary, TABLES_ONLY)
    assert gain_i.agrees and "P-(0.5,1.0)" in gain_i.plait
    assert retx.agrees and "1288 → 4" not in retx.plait
    assert moderate.agrees and "(0.02 of the default)" in moderate.plait
    assert delta.agrees
    assert gain_ii.agrees
    assert shift.agrees


def test_verdicts_differ_when_plait_does():
    values = _paper_like()
    # No gain, retransmissions only halved, delta = 1.4 clean, no shift to subflow 2.
    for setting in ya.SETTINGS["I"][1:]:
        values[("I", setting)] = [(1.58, 644, 68000, 45500)] * 2
    for setting in ya.SETTINGS["II"][1:]:
        values[("II", setting)] = [(0.92, 10, 44459, 69573)] * 2
    runs = _runs(values)
    gain_i, retx, moderate, delta, gain_ii, shift = ya.claims(runs, ya.summarize(runs), TABLES_ONLY)
    assert not gain_i.agrees and "+0.0 %" in gain_i.plait
    assert not retx.agrees and "-50.0 %" in retx.plait
    assert not moderate.agrees and "(0.50 of the default)" in moderate.plait
    assert not delta.agrees
    assert not gain_ii.agrees
    assert not shift.agrees and "+0.0 and +0.0 points" in shift.plait


def test_markdown_puts_the_papers_value_beside_plaits():
    summary = ya.summarize(_runs(_paper_like()))
    text = ya.markdown(summary)
    assert text.count("| Throughput (MB/s) |") == 2
    assert "(1288)" in text and "(92267)" in text
    long = ya.long_table(summary)
    assert len(long) == 11 * 4
    row = long[
        (long.table == "I") & (long.setting == "Default") & (long.measure == "retransmissions")
    ]
    assert row.paper.iloc[0] == 1288 and row.plait_mean.iloc[0] == pytest.approx(1288.5)


def _biased(default, small, large, sf1_retransmissions=0) -> pd.DataFrame:
    """Made-up Table I/II runs (the paper's) plus biased-feeding runs: (throughput, packets on
    subflow 1, on subflow 2) for the default, P-(0.1,1.0) and P-(0.9,1.0), two seeds."""
    values = _paper_like()
    for setting, (tput, sf1, sf2) in (
        ("default", default),
        ((0.1, 1.0), small),
        ((0.5, 1.0), small),
        ((0.9, 1.0), large),
    ):
        values[("B", setting)] = [(tput, 0, sf1, sf2)] * 2
    runs = _runs(values)
    small_runs = (runs.table == "B") & (runs.label == "P-(0.1,1.0)")
    runs.loc[small_runs, "retransmissions_sf1"] = sf1_retransmissions
    return runs


def test_biased_feeding_claims_follow_the_runs():
    """Section V.C's three claims are the last three; the small-gamma claim that differs is
    the paper's when subflow 1 lost nothing (Figure 2's estimate never left its initial
    constant), else open."""
    paper_like = _biased((10.0, 100000, 1000), (21.0, 60000, 45000), (10.0, 100000, 1000))
    *_, default, large, small = ya.claims(paper_like, ya.summarize(paper_like))
    assert default.agrees and large.agrees and small.agrees
    assert "2.10 times" in small.plait and small.cause is None
    assert "P-(0.9,1.0)" in large.plait
    # plait's expectation: a small gamma feeds subflow 1 as the default does.
    alike = _biased((10.0, 100000, 1000), (10.0, 100000, 1000), (10.0, 100000, 1000))
    *_, default, large, small = ya.claims(alike, ya.summarize(alike))
    assert default.agrees and large.agrees
    assert not small.agrees and small.cause == "paper" and "1.00 times" in small.plait
    lossy = _biased((10.0, 100000, 1000), (10.0, 100000, 1000), (10.0, 100000, 1000), 5)
    *_, small = ya.claims(lossy, ya.summarize(lossy))
    assert not small.agrees and small.cause == "unknown"
    # Subflow 2 carrying a third with the default: no biased-feeding, open.
    spread = _biased((15.0, 60000, 30000), (21.0, 60000, 45000), (15.0, 60000, 30000))
    *_, default, large, small = ya.claims(spread, ya.summarize(spread))
    assert not default.agrees and default.cause == "unknown" and "33.3" in default.plait
    assert not large.agrees


def test_biased_scenario_states_the_papers_conditions():
    """biased.toml: subflow 1 has the shorter round trip even with the whole send buffer
    queued on it, and its path holds more than the send buffer (Section V.C)."""
    scenario = tomllib.loads(ya.SCENARIOS["B"].read_text())
    links = {link["name"]: link for link in scenario["link"]}
    mp = {f["name"]: f for f in scenario["flow"]}["mptcp"]
    assert mp["send_buffer"] == "1MiB" and "host_jitter" not in mp
    packets = 2**20 // 1448
    # Subflow 1: 100 Mb/s, 2 x 2.5 ms each way; product 86 packets + 1000 queued > 724.
    rtt1, rtt2 = 4 * 2.5e-3, 4 * 25e-3
    bdp1 = 100e6 * rtt1 / 8 / 1500
    assert links["a2"]["rate"] == "100Mbps" and links["a2"]["queue"]["packets"] == 1000
    assert bdp1 + 1000 > packets
    # Its round trip with the whole buffer in flight stays below subflow 2's propagation.
    assert rtt1 + (packets - bdp1) * 1500 * 8 / 100e6 < rtt2
    plait.validate(ya.SCENARIOS["B"])
