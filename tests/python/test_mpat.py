"""The mpat experiment (plait.experiments.mpat): its scenarios, a quick run of the whole
pipeline, and metrics and verdicts computed from made-up data."""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import plait
import pytest
from plait.experiments import Options, experiments
from plait.experiments import mpat as mp
from plait.report import Section, render

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9 and 3.10
    import tomli as tomllib

SCENARIOS = (
    mp.DIFFERENTIATION,
    mp.DIFFERENTIATION_TCP,
    mp.SHARES,
    mp.AGGREGATES,
    mp.AGGREGATES_TCP,
    mp.VARIANCE,
    mp.VARIANCE_MULTCP,
    mp.TRANSIENT_CBR,
    mp.TRANSIENT_TCP,
    mp.MULTCP_SCALING,
    mp.MULTCP_PAIRS,
)
INTERNET = SCENARIOS[:7]
EMULAB = SCENARIOS[7:]


def test_registered_for_plait_reproduce():
    assert experiments()["mpat"] is mp.EXPERIMENT


def _doc(path) -> dict:
    return tomllib.loads(path.read_text())


def _links(path) -> dict:
    return {link["name"]: link for link in _doc(path)["link"]}


def _flows(path) -> dict:
    return {flow["name"]: flow for flow in _doc(path)["flow"]}


def test_scenarios_are_the_papers():
    for scenario in SCENARIOS:
        plait.validate(scenario)
        links = _links(scenario)
        assert links["left"]["rate"] == links["right"]["rate"] == "100Mbps", scenario.name
        assert links["left"]["delay"] == links["right"]["delay"] == "1ms"
        assert _doc(scenario)["tcp"]["mss"] == 1460  # §4: "MSS of 1460 bytes"
    for scenario in INTERNET:
        # Our path for "RTT approximately 70 msec": 2 x (1 + 33 + 1) ms, half a BDP queued.
        b = _links(scenario)["bottleneck"]
        assert (b["rate"], b["delay"]) == ("38Mbps", "33ms"), scenario.name
        assert b["queue"] == {"kind": "droptail", "packets": 111}
    for scenario in EMULAB:
        # The paper's Emulab link: 90 Mb/s and an RTT of 50 ms (2 x (1 + 23 + 1) ms).
        b = _links(scenario)["bottleneck"]
        assert (b["rate"], b["delay"]) == ("90Mbps", "23ms"), scenario.name
        assert b["queue"] == {"kind": "droptail", "packets": 50}
    diff = _flows(mp.DIFFERENTIATION)
    assert diff["agg"]["shares"] == list(mp.DIFF_SHARES)
    assert diff["tcp"]["count"] == diff["rev"]["count"] == 5
    baseline = _flows(mp.DIFFERENTIATION_TCP)
    assert (baseline["agg"]["kind"], baseline["agg"]["count"]) == ("tcp", 5)
    assert {k: v for k, v in baseline.items() if k != "agg"} == {
        k: v for k, v in diff.items() if k != "agg"
    }
    assert (diff["rev"]["src"], diff["rev"]["dst"]) == ("dst", "src")  # both directions
    aggs = _flows(mp.AGGREGATES)
    for n in mp.AGGREGATE_NS:
        assert aggs[f"agg{n}"]["shares"] == [1] * n
        assert _flows(mp.AGGREGATES_TCP)[f"agg{n}"]["count"] == n
    assert _flows(mp.VARIANCE)["agg"]["shares"] == [1] * 16
    assert _flows(mp.VARIANCE_MULTCP)["agg"]["cc"] == {"name": "multcp", "n": 16}
    assert _flows(mp.VARIANCE)["tcp"]["count"] == 10


def test_the_shares_change_every_minute():
    doc = _doc(mp.SHARES)
    assert _flows(mp.SHARES)["agg"]["shares"] == list(mp.SHARE_SEQUENCE[0])
    events = [(e["at"], tuple(e["shares"])) for e in doc["event"]]
    assert events == [(f"{60 * k}s", s) for k, s in enumerate(mp.SHARE_SEQUENCE) if k]
    assert mp.SHARE_SEQUENCE[4] == mp.EXTREME  # 95:1 from 240 to 300 s
    assert doc["simulation"]["duration"] == "540s"


def test_transients_arrive_at_120_s_and_leave_at_240_s():
    cbr = _flows(mp.TRANSIENT_CBR)
    assert (cbr["cbr"]["rate"], cbr["cbr"]["start"], cbr["cbr"]["stop"]) == (
        "30Mbps",
        "120s",
        "240s",
    )
    tcp = _flows(mp.TRANSIENT_TCP)
    assert (tcp["burst"]["start"], tcp["burst"]["stop"], tcp["burst"]["count"]) == (
        "120s",
        "240s",
        10,
    )
    for flows in (cbr, tcp):
        assert flows["agg"]["shares"] == list(mp.TRANSIENT_SHARES)
        assert flows["tcp"]["count"] == flows["rev"]["count"] == 10


def test_multcp_values():
    assert mp.cc_value("multcp", 16) == {"name": "multcp", "n": 16}
    sq = mp.cc_value("sqrt", 16)
    assert sq == {"name": "aimd", "alpha": 4.0, "beta": 1 - 1 / 128}
    # The same alpha over decrease as MulTCP's: N / (1/(2N)) = sqrt(N) / (1/(2 N^1.5)).
    assert sq["alpha"] / (1 - sq["beta"]) == pytest.approx(16 / (1 / 32))
    assert mp.cc_n('{"name" = "multcp", "n" = 25}') == ("multcp", 25.0)
    assert mp.cc_n('{ name = "aimd", alpha = 1.4142135623730951, beta = 0.646 }') == ("sqrt", 2.0)
    with pytest.raises(ValueError):
        mp.cc_n('{"name" = "reno"}')
    assert mp.pair_groups([(4, 1), (9, 1), (9, 4)]) == {4: [1], 9: [1, 4]}
    for variant in mp.VARIANTS:
        plait.validate(mp.MULTCP_SCALING, overrides={"flow.multcp.cc": mp.cc_value(variant, 50)})


def test_run_counts():
    options = Options(out=None, seeds=[1, 2, 3, 4, 5])
    assert mp.EXPERIMENT.runs(options) == 5 * (9 + 2 * 11 + 10 + 3 + 2 + 8)
    quick = Options(out=None, seeds=[1, 2, 3], quick=True)
    assert mp.EXPERIMENT.runs(quick) == 9 + 4 + 3 + 3 + 2 + 2


def _shorten(text: str, times: dict[str, str]) -> str:
    """The scenario's text with its times replaced (`"120s"` -> `"30s"`, whole values)."""
    return re.sub(r'"(\d+s)"', lambda m: f'"{times.get(m.group(1), m.group(1))}"', text)


def test_quick_reproduce_end_to_end(tmp_path, client):
    """The pipeline on shortened runs (one seed, 26-60 s instead of 120-540 s, two N, one
    pair), passed in as settings: 31 claims, the figure and the files."""
    short = tmp_path / "scenarios"
    short.mkdir()
    # Shares change every 6 s; the transients arrive at 30 s and leave at 45 s of 60.
    shares = {f"{60 * k}s": f"{6 * k}s" for k in range(1, 10)}
    transient = {"120s": "30s", "240s": "45s", "360s": "60s"}
    copies = {}
    for scenario, times in (
        (mp.SHARES, shares),
        (mp.TRANSIENT_CBR, transient),
        (mp.TRANSIENT_TCP, transient),
    ):
        copies[scenario.stem] = short / scenario.name
        copies[scenario.stem].write_text(_shorten(scenario.read_text(), times))
    timing = mp.Timing(6.0, 1.0, 30.0, 45.0, 60.0, just_before=5.0, dip_window=5.0)
    small = mp.Settings(
        [1],
        26.0,
        26.0,
        26.0,
        26.0,
        (1, 16),
        ("multcp",),
        ((4, 1),),
        timing,
        **copies,
        hundred_duration=26.0,
        tfrc_n=(5, 20),
    )
    options = Options(out=tmp_path / "mpat", seeds=[1, 2], quick=True, where={"client": client})
    section = mp.EXPERIMENT.reproduce(options, small)
    assert isinstance(section, Section) and section.name == "mpat"
    assert len(section.claims) == 31 and all(isinstance(c.agrees, bool) for c in section.claims)
    assert section.runs["failed"] == 0 and section.runs["packet runs"] == 9 + 2 + 1 + 3 + 2 + 2
    mt = pd.read_csv(options.out / "multcp_tfrc.csv")
    assert sorted(mt.n) == [5, 20] and (mt.mtfrc_kBps > 0).all()
    web = pd.read_csv(options.out / "aggregates_web.csv")
    assert set(web["mode"]) == {"mpat", "tcp"} and set(web.n) == {2, 4, 5, 6, 8, 10}
    h = pd.read_csv(options.out / "hundred.csv")
    assert sorted(h.pattern) == ["1:2:3:4:5 x 20", "equal", "independent"]
    assert (h.flows == 100).all() and (h.total_kBps > 0).all()
    for name in mp.OUTPUT_FILES.values():
        assert (options.out / name).is_file(), name
    d = pd.read_csv(options.out / "differentiation.csv")
    assert len(d) == 1 and d.agg_kBps.iloc[0] > 0 and d.flow5_kBps.iloc[0] > d.flow1_kBps.iloc[0]
    sh = pd.read_csv(options.out / "shares.csv")
    assert list(sh.minute) == list(range(9)) and (sh.agg_kBps > 0).all()
    ag = pd.read_csv(options.out / "aggregates.csv")
    assert set(ag["mode"]) == {"mpat", "tcp"} and set(ag.n) == {2, 4, 5, 6, 8, 10}
    assert sorted(ag[ag["mode"] == "mpat"].flows) == [2, 4, 5, 6, 8, 10]
    tr = pd.read_csv(options.out / "transient.csv")
    assert set(tr.kind) == {"cbr", "tcp"} and (tr.arriving_during_mbps > 10).all()
    sc = pd.read_csv(options.out / "multcp_scaling.csv")
    assert list(sc.n) == [1, 16] and set(sc.variant) == {"multcp"}
    pairs = pd.read_csv(options.out / "multcp_pairs.csv")
    assert (pairs.n1.iloc[0], pairs.n2.iloc[0]) == (4, 1) and pairs.paper_ratio.iloc[0] > 8
    assert "verdict" in render([section], "t", "g")


# ---- Metrics on made-up tables --------------------------------------------------------------


def test_share_error_crossing_and_settling():
    parts = pd.DataFrame({"a": [1.0, 2.0, 0.0], "b": [2.0, 2.0, 0.0]})
    err = mp.share_error(parts, (1, 2))
    assert err.iloc[0] == pytest.approx(0.0) and err.iloc[1] == pytest.approx(0.5)
    assert np.isnan(err.iloc[2])  # nothing delivered
    t = np.arange(0.1, 10.01, 0.1)
    v = np.where(t < 5, 10.0, 5.0)
    assert mp.crossing(t, v, 7.5, 5.0, True) == pytest.approx(0.1, abs=1e-9)
    assert np.isnan(mp.crossing(t, v, 1.0, 5.0, True))
    # A dip below the band from 5 to 6 s, then at the level: settled from 6 s on.
    w = np.where(t < 5, 10.0, np.where(t < 6, 2.0, 5.0))
    assert mp.settle_time(t, w, 5.0, 5.0, 0.25, 2.0) == pytest.approx(1.0, abs=0.05)
    assert np.isnan(mp.settle_time(t, w, 50.0, 5.0, 0.25, 2.0))
    assert mp.cv([1.0, 3.0]) == 0.5


def _series(run: str, seed: int, flows: dict[str, np.ndarray], times, cwnd=None) -> pd.DataFrame:
    rows = []
    for name, values in flows.items():
        for t, g in zip(times, values):
            rows.append(
                {
                    "run": run,
                    "seed": seed,
                    "time_s": float(t),
                    "flow": name,
                    "goodput_bps": float(g),
                    "cwnd_bytes": float((cwnd or {}).get(name, 14600.0)),
                    "srtt_s": 0.05,
                }
            )
    return pd.DataFrame(rows)


def test_differentiation_metrics():
    times = np.arange(20.5, 40.01, 0.5)
    split = {f"agg.{i}": np.full(len(times), 8e3 * 100 * (i + 1)) for i in range(5)}
    series = _series("r", 1, split, times)
    flows = pd.DataFrame(
        [
            {"run": "r", "seed": 1, "name": f"agg.{i}", "goodput_bps": 8e3 * 100 * (i + 1)}
            for i in range(5)
        ]
        + [{"run": "r", "seed": 1, "name": "agg", "goodput_bps": 8e3 * 1500}]
        + [{"run": "r", "seed": 1, "name": f"tcp.{i}", "goodput_bps": 8e3 * 300} for i in range(5)]
        + [{"run": "r", "seed": 1, "name": f"rev.{i}", "goodput_bps": 8e3 * 500} for i in range(5)]
    )
    links = pd.DataFrame(
        {"run": ["r"], "name": ["bottleneck"], "direction": ["forward"], "utilization": [0.9]}
    )
    control = pd.DataFrame(
        [{"seed": 1, "name": f"agg.{i}", "goodput_bps": 2e6} for i in range(5)]
        + [{"seed": 1, "name": f"tcp.{i}", "goodput_bps": 1e6} for i in range(5)]
    )
    assert mp.control_ratios(control).to_dict() == {1: 2.0}
    row = mp.differentiation_rows(flows, series, links, control).iloc[0]
    assert row.baseline_5tcp_over_5tcp == 2.0
    assert row.agg_kBps == pytest.approx(1500) and row.tcp_kBps == pytest.approx(300)
    assert row.agg_over_5tcp == pytest.approx(1.0) and row.split_error == pytest.approx(0)
    assert row.samples_within == 1.0 and row.utilisation == 0.9


def test_shares_metrics():
    period = mp.SHARE_PERIOD
    times = np.arange(0.5, period * len(mp.SHARE_SEQUENCE) + 0.01, 0.5)
    minute = np.minimum((times // period).astype(int), len(mp.SHARE_SEQUENCE) - 1)
    flows = {}
    for i in range(3):
        # Exactly the shares, one sample late after each change (the previous minute's).
        late = np.maximum(minute - ((times % period) < 0.75).astype(int) * (minute > 0), 0)
        shares = np.array([mp.SHARE_SEQUENCE[m][i] / sum(mp.SHARE_SEQUENCE[m]) for m in late])
        flows[f"agg.{i}"] = 1e6 * shares
    flows["tcp.0"] = np.full(len(times), 8e5)
    sh = mp.shares_rows(_series("r", 1, flows, times))
    assert len(sh) == len(mp.SHARE_SEQUENCE)
    assert sh.max_error.max() == pytest.approx(0, abs=1e-9)
    assert np.isnan(sh.adapt_s.iloc[0]) and (sh.adapt_s.iloc[1:] == 1.0).all()
    assert sh.loc[4, "ratio_1_2"] == pytest.approx(95) and sh.tcp_kBps.iloc[0] == pytest.approx(100)


def _aggregate_run(mode: str) -> pd.DataFrame:
    """A flows table of one run: aggregates (or TCP flows) agg2 and agg4 at 100 KB/s per flow,
    five background flows at 50 KB/s."""
    rows = []
    for n in (2, 4):
        if mode == "mpat":  # the aggregate's own row, with its totals
            rows.append({"name": f"agg{n}", "goodput_bps": n * 8e5, "fast_retransmits": 10 * n})
        rows += [
            {"name": f"agg{n}.{i}", "goodput_bps": 8e5, "fast_retransmits": 10} for i in range(n)
        ]
    rows += [{"name": f"tcp.{i}", "goodput_bps": 4e5, "fast_retransmits": 20} for i in range(5)]
    return pd.DataFrame(rows).assign(run=mode, seed=1, timeouts=3)


def test_aggregate_metrics():
    ag = mp.aggregates_rows(_aggregate_run("mpat"), _aggregate_run("tcp"))
    for mode in ("mpat", "tcp"):
        m = ag[ag["mode"] == mode].set_index("group")
        assert list(m.index) == ["N=2", "N=4", "bg"]
        assert list(m.flows) == [2, 4, 5] and list(m.n) == [2, 4, 5]
        assert m.loc["N=4", "per_flow_kBps"] == pytest.approx(100)
        assert m.loc["N=4", "total_kBps"] == pytest.approx(400)
        assert m.loc["bg", "fast_per_flow"] == 20 and m.loc["N=2", "timeouts_per_flow"] == 3
    table = mp.aggregate_table(ag)
    assert len(table) == 6 and set(table["mode"]) == {"mpat", "tcp"}


def test_scaling_and_pairs_metrics():
    flows = pd.DataFrame(
        [
            {"name": "multcp", "goodput_bps": 40e6, "fast_retransmits": 30, "timeouts": 10}
            | {"retransmissions": 10, "packets_sent": 1000}
        ]
        + [
            {"name": f"tcp.{i}", "goodput_bps": 4e6, "fast_retransmits": 5, "timeouts": 1}
            | {"retransmissions": 1, "packets_sent": 100}
            for i in range(10)
        ]
    ).assign(run="r", seed=1)
    flows["flow.multcp.cc"] = '{"name" = "multcp", "n" = 8}'
    times = np.arange(20.2, 30.01, 0.2)
    series = _series("r", 1, {"multcp": np.full(len(times), 40e6)}, times)
    links = pd.DataFrame(
        {"run": ["r"], "name": ["bottleneck"], "direction": ["forward"], "utilization": [0.8]}
    )
    row = mp.scaling_rows(flows, series, links).iloc[0]
    assert (row.variant, row.n, row.ratio, row.timeout_fraction) == ("multcp", 8, 10.0, 0.25)
    assert row.sample_sd_mbps == 0 and row.utilisation == 0.8 and row.resent == 0.01
    pair = pd.DataFrame(
        [
            {"name": "m1", "goodput_bps": 8e3 * 3000, "timeouts": 1},
            {"name": "m2", "goodput_bps": 8e3 * 1000, "timeouts": 2},
        ]
    ).assign(run="r", seed=1)
    pair["flow.m1.cc"] = '{"name" = "multcp", "n" = 4}'
    pair["flow.m2.cc"] = '{"name" = "multcp", "n" = 1}'
    p = mp.pairs_rows(pair, links).iloc[0]
    assert (p.n1, p.n2, p.ratio, p.ideal, p.sum_kBps) == (4, 1, 3.0, 4.0, 4000)
    assert p.paper_ratio == pytest.approx(3990 / 498)


# ---- Verdicts on made-up tables -------------------------------------------------------------


def _diff(ratio: float, split: float, sample: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "seed": [1, 2],
            "agg_over_5tcp": ratio,
            "agg_kBps": 2000.0,
            "tcp_kBps": 400.0,
            **{f"flow{i + 1}_kBps": 133.0 * (i + 1) for i in range(5)},
            "split_error": split,
            "sample_error_median": sample,
            "samples_within": 0.6,
            "windows_5s_within": 0.95,
            "utilisation": 0.9,
        }
    )


def test_differentiation_and_variance_verdicts_follow_the_data():
    assert all(c.agrees for c in mp.differentiation_claims(_diff(1.0, 0.05, 0.15)))
    assert not any(c.agrees for c in mp.differentiation_claims(_diff(0.6, 0.3, 0.4)))
    v = pd.DataFrame(
        {
            "protocol": ["mpat", "mpat", "multcp", "multcp"],
            "seed": [1, 2, 1, 2],
            "cv": [0.2, 0.3, 1.0, 1.2],
            "sd_kBps": [500.0, 600, 2000, 2500],
            "agg_over_16tcp": [1.0, 1.0, 0.5, 0.6],
            "ratio_to_background": [1.6, 1.55, 0.8, 0.9],
            "timeouts": 10,
            "fast_retransmits": 100,
            "loss_rate": 0.01,
            "utilisation": 0.9,
            "tcp_timeouts_per_flow": 5.0,
        }
    )
    assert all(c.agrees for c in mp.variance_claims(v))
    unlike = v.assign(
        cv=[1.0, 1.0, 0.2, 0.2], agg_over_16tcp=1.0, ratio_to_background=[1.0, 1.0, 1.6, 1.6]
    )
    assert not any(c.agrees for c in mp.variance_claims(unlike))


def _shares(error: float, ratio: float, adapt: float) -> pd.DataFrame:
    rows = []
    for seed in (1, 2):
        for minute, s in enumerate(mp.SHARE_SEQUENCE):
            rows.append(
                {
                    "seed": seed,
                    "minute": minute,
                    "target": ":".join(str(x) for x in s),
                    "max_error": error,
                    "ratio_1_2": ratio,
                    "ratio_1_3": ratio,
                    "share1": 0.97,
                    "share2": 0.015,
                    "share3": 0.015,
                    "smallest_window_pkts": 1.2,
                    "adapt_s": adapt if minute else np.nan,
                }
            )
    return pd.DataFrame(rows)


def test_shares_verdicts_follow_the_data():
    assert all(c.agrees for c in mp.shares_claims(_shares(0.05, 90.0, 0.5)))
    claims = mp.shares_claims(_shares(0.4, 60.0, 3.0))
    assert not any(c.agrees for c in claims)
    assert claims[0].detail.startswith("Outside: 1:1:1, 1:2:3")


def _aggregates(rel: float, counts: float) -> pd.DataFrame:
    rows = []
    for mode in ("mpat", "tcp"):
        for seed in (1, 2):
            for n in (*mp.AGGREGATE_NS, 5):
                group = "bg" if n == 5 else f"N={n}"
                agg = mode == "mpat" and group != "bg"
                per_flow = 100.0 * (rel if agg else 1.0)
                rows.append(
                    {
                        "mode": mode,
                        "seed": seed,
                        "group": group,
                        "n": n,
                        "flows": n,
                        "per_flow_kBps": per_flow,
                        "total_kBps": per_flow * n,
                        "fast_per_flow": 500.0 * (counts if agg else 1.0),
                        "timeouts_per_flow": 40.0 * (counts if agg else 1.0),
                    }
                )
    return pd.DataFrame(rows)


def test_aggregates_verdicts_follow_the_data():
    assert all(c.agrees for c in mp.aggregates_claims(_aggregates(1.02, 1.1)))
    claims = mp.aggregates_claims(_aggregates(1.5, 2.0))
    # The background flows are the same in both runs: only that claim still agrees.
    assert [c.agrees for c in claims] == [False, False, True, False, False]


def _transient(cut: float, settle: float, fraction: float, split: float) -> pd.DataFrame:
    rows = []
    for kind in ("cbr", "tcp"):
        for seed in (1, 2):
            row = {"kind": kind, "seed": seed, "cut_s": cut, "settle_s": settle, "dip": 0.6}
            row |= {"reclaim_s": 0.3, "arriving_during_mbps": 28.0}
            for p in ("before", "during", "after"):
                row |= {f"agg_{p}_mbps": 30.0, f"tcp_{p}_mbps": 30.0}
                fair = mp.fair_fraction(kind, p)
                row[f"fraction_{p}"] = fair * fraction
            row |= {
                "rate_before_mbps": 40.0,
                "rate_just_before_mbps": 40.0,
                "rate_during_mbps": 30.0,
                "rate_after_mbps": 40.0,
            }
            row |= {f"split_error_{p}": split for p in mp.transient_phases()}
            rows.append(row)
    return pd.DataFrame(rows)


def _ensemble(settle: float) -> pd.DataFrame:
    t = np.round(np.arange(mp.T_ON - 5, mp.T_ON + 20, 0.1), 1)
    v = np.where(t < mp.T_ON, 1.4, np.where(t < mp.T_ON + settle, 0.5, 1.0))
    return pd.concat(
        [pd.DataFrame({"kind": k, "time_s": t, "relative": v, "seeds": 2}) for k in ("cbr", "tcp")]
    )


def test_transient_verdicts_follow_the_data():
    good = mp.transient_claims(_transient(0.2, 1.0, 1.0, 0.1), _ensemble(1.0))
    assert all(c.agrees for c in good)
    bad = mp.transient_claims(_transient(2.0, 8.0, 1.5, 0.5), _ensemble(8.0))
    assert not any(c.agrees for c in bad)
    assert mp.fair_fraction("tcp", "during") == pytest.approx(1 / 3)
    assert mp.fair_fraction("cbr", "during") == pytest.approx(0.5)


def _scaling(ratio, timeout_fraction, sd, util) -> tuple[pd.DataFrame, pd.DataFrame]:
    ns = (1, 2, 4, 8, 16, 20, 50)
    rows = []
    for n in ns:
        for seed in (1, 2):
            rows.append(
                {
                    "variant": "multcp",
                    "n": n,
                    "seed": seed,
                    "ratio": ratio(n),
                    "timeout_fraction": timeout_fraction(n),
                    "timeouts": 100 * timeout_fraction(n),
                    "fast_retransmits": 100.0,
                    "sample_sd_mbps": sd(n),
                    "utilisation": util(n),
                    "tcp_mbps": 1.0,
                    "multcp_mbps": 50.0,
                    "resent": 0.01,
                    "tcp_timeouts_per_flow": 10.0,
                }
            )
    pairs = pd.DataFrame(
        [
            {"n1": a, "n2": b, "seed": 1, "ideal": a / b, "paper_ratio": p1 / p2}
            for (a, b), (p1, p2) in mp.PAIRS.items()
        ]
    )
    return pd.DataFrame(rows), pairs


def test_scaling_verdicts_follow_the_data():
    like, pairs = _scaling(
        lambda n: 2.0 * n if n < 20 else 40.0,
        lambda n: 0.0 if n <= 4 else 0.5,
        lambda n: float(n),
        lambda n: 0.95 if n < 16 else 0.7,
    )
    pairs = pairs.assign(ratio=pairs["ideal"] * 2, sum_kBps=np.linspace(10000, 7000, len(pairs)))
    assert all(c.agrees for c in mp.scaling_claims(like, pairs))
    unlike, pairs = _scaling(lambda n: 0.8 * n, lambda n: 0.05, lambda n: 1.0, lambda n: 0.95)
    pairs = pairs.assign(ratio=pairs["ideal"], sum_kBps=10000.0)
    assert not any(c.agrees for c in mp.scaling_claims(unlike, pairs))


def test_the_hundred_flow_scenarios():
    agg = _flows(mp.HUNDRED)
    assert agg["agg"]["kind"] == "mpat" and agg["agg"]["shares"] == [1] * 100
    assert agg["tcp"]["count"] == mp.HUNDRED_BACKGROUND == 10
    indep = _flows(mp.HUNDRED_TCP)
    assert (indep["agg"]["kind"], indep["agg"]["count"]) == ("tcp", 100)
    for shares in mp.HUNDRED_SHARES.values():
        assert len(shares) == 100
        plait.validate(mp.HUNDRED, overrides={"flow.agg.shares": list(shares)})
    assert mp.HUNDRED_PATH_PACKETS == 425


def _hundred_flows(pattern, goodputs, bg=1e6, seed=1, mode="mpat"):
    """A flows table of one run: 100 application flows (or independent ones) and ten Reno."""
    shares = str(list(mp.HUNDRED_SHARES[pattern])) if mode == "mpat" else None
    rows = [
        {"run": f"{mode}{pattern}{seed}", "seed": seed, "name": f"agg.{i}", "goodput_bps": g}
        | {"timeouts": 2, "flow.agg.shares": shares}
        for i, g in enumerate(goodputs)
    ]
    rows += [
        {"run": f"{mode}{pattern}{seed}", "seed": seed, "name": f"tcp.{i}", "goodput_bps": bg}
        | {"timeouts": 3, "flow.agg.shares": shares}
        for i in range(10)
    ]
    return pd.DataFrame(rows)


def test_hundred_rows_and_verdicts_follow_the_data():
    target = np.array(mp.HUNDRED_SHARES["1:2:3:4:5 x 20"], dtype=float)
    exact = _hundred_flows("1:2:3:4:5 x 20", target / target.sum() * 100e6)
    equal = _hundred_flows("equal", [1e6] * 100)
    base = _hundred_flows("equal", [1e6] * 100, bg=1.25e6, mode="tcp")
    rows = mp.hundred_rows(pd.concat([exact, equal]), base)
    assert list(rows.pattern) == ["1:2:3:4:5 x 20", "equal", "independent"]
    r = rows.set_index("pattern")
    assert r.loc["1:2:3:4:5 x 20", "median_error"] == pytest.approx(0, abs=1e-12)
    assert r.loc["equal", "over_fair"] == pytest.approx(1.0)
    assert r.loc["equal", "tcp_vs_independent"] == pytest.approx(0.8)
    assert r.loc["independent", "over_fair"] == pytest.approx(0.8)
    assert all(c.agrees for c in mp.hundred_claims(rows))
    # Every flow gets the same: the 1:2:3:4:5 split is lost (share-1 flows 3x their target).
    flat = _hundred_flows("1:2:3:4:5 x 20", [1e6] * 100)
    held, split = mp.hundred_claims(mp.hundred_rows(pd.concat([flat, equal]), base))
    assert held.agrees and not split.agrees
    greedy = _hundred_flows("equal", [2e6] * 100)
    held, _ = mp.hundred_claims(mp.hundred_rows(pd.concat([exact, greedy]), base))
    assert not held.agrees
    with pytest.raises(ValueError, match="not one of the 100-flow patterns"):
        mp.hundred_rows(
            _hundred_flows("equal", [1e6] * 100).assign(**{"flow.agg.shares": "[2]"}), base
        )


def test_web_background_scenarios_and_verdicts():
    for scenario, base in (
        (mp.AGGREGATES_WEB, mp.AGGREGATES),
        (mp.AGGREGATES_TCP_WEB, mp.AGGREGATES_TCP),
    ):
        flows, quiet = _flows(scenario), _flows(base)
        assert {k: v for k, v in flows.items() if not k.startswith("web_")} == quiet
        sizes = {k: (v["count"], v["bytes"]) for k, v in flows.items() if k.startswith("web_")}
        assert sizes == {
            "web_small": (3000, "20KB"),
            "web_medium": (300, "200KB"),
            "web_large": (30, "2MB"),
        }
        assert set(sizes) == {f"web_{s}" for s in mp.WEB_SIZES}
        assert _links(scenario) == _links(base)
    quiet = _aggregates(1.0, 10.0)
    web = _aggregates(1.0, 10.0)
    for col in ("fast_per_flow", "timeouts_per_flow"):
        web[col] = web[col] * 2
    assert all(c.agrees for c in mp.web_claims(web, quiet))
    # The aggregates' losses grow, the background flows' do not: not in proportion.
    uneven = web.copy()
    bg = uneven["group"] == "bg"
    uneven.loc[bg, ["fast_per_flow", "timeouts_per_flow"]] /= 2
    assert [c.agrees for c in mp.web_claims(uneven, quiet)] == [True, False]
    starved = web.assign(per_flow_kBps=np.where(web["group"] == "bg", 100.0, 50.0))
    assert not mp.web_claims(starved, quiet)[0].agrees
    names = pd.DataFrame({"name": ["agg2.0", "tcp.1", "web_small.7", "web_large.0"]})
    assert list(mp.without_web(names)["name"]) == ["agg2.0", "tcp.1"]


def test_multcp_tfrc_scenario_rows_and_claim():
    flows = _flows(mp.MULTCP_TFRC)
    assert (flows["mtfrc"]["kind"], flows["mtfrc"]["loss_over"], flows["mtfrc"]["count"]) == (
        "cp",
        "flow",
        5,
    )
    assert flows["tcp"]["count"] == 5 and mp.TFRC_N == (5, 7, 8, 9, 10, 20, 30, 40)
    for n in (5, 40):
        plait.validate(mp.MULTCP_TFRC, overrides={"flow.mtfrc.n": n})
    rows = []
    for n, (m, t) in {5: (2000.0, 400.0), 10: (2100.0, 70.0), 40: (2200.0, 5.0)}.items():
        for i in range(5):
            rows.append(
                {"run": f"r{n}", "seed": 1, "flow.mtfrc.n": float(n)}
                | {"name": f"mtfrc.{i}", "goodput_bps": m * 8e3}
            )
            rows.append(
                {"run": f"r{n}", "seed": 1, "flow.mtfrc.n": float(n)}
                | {"name": f"tcp.{i}", "goodput_bps": t * 8e3}
            )
    mt = mp.multcp_tfrc_rows(pd.DataFrame(rows))
    assert list(mt.n) == [5, 10, 40] and list(mt.ratio) == pytest.approx([5.0, 30.0, 440.0])
    assert list(mt.paper_ratio) == [5.3, 60, 322]
    assert mp.multcp_tfrc_claim(mt).agrees
    # In proportion to N (ratio = N): not "much faster than N".
    assert not mp.multcp_tfrc_claim(mt.assign(ratio=mt["n"].astype(float))).agrees
