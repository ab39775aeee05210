"""The mpfast experiment (plait.experiments.mpfast): its scenarios, a quick run of the whole
pipeline, and verdicts computed from made-up data."""

from __future__ import annotations

import sys

import pandas as pd
import plait
from plait.experiments import Options, experiments
from plait.experiments import mpfast as mf
from plait.report import Section, render

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9 and 3.10
    import tomli as tomllib


def test_registered_for_plait_reproduce():
    assert experiments()["mpfast"] is mf.EXPERIMENT


def test_scenarios_are_the_papers():
    eff = tomllib.loads(mf.EFFICIENCY.read_text())
    links = {link["name"]: link for link in eff["link"]}
    assert links["link1"]["rate"] == links["link2"]["rate"] == "80Mbps"
    assert links["link1"]["delay"] == "50ms"
    starts = {f["name"]: f.get("start") for f in eff["flow"]}
    # Six flows on link 1 every 3 s from 100 s, eight on link 2 every 3 s from 120 s.
    assert [starts[f"bg1_{i}"] for i in range(6)] == [f"{100 + 3 * i}s" for i in range(6)]
    assert [starts[f"bg2_{i}"] for i in range(8)] == [f"{120 + 3 * i}s" for i in range(8)]
    assert {f.get("stop") for f in eff["flow"] if f["name"] != "mp"} == {"200s"}
    bal = tomllib.loads(mf.LOADBALANCE.read_text())
    rates = [link["rate"] for link in bal["link"] if link["name"].startswith("link")]
    assert rates == ["100Mbps", "80Mbps", "160Mbps", "40Mbps"]
    fair = tomllib.loads(mf.FAIRNESS.read_text())
    assert {link["name"]: link["rate"] for link in fair["link"]}["bottleneck"] == "100Mbps"
    for scenario in (mf.EFFICIENCY, mf.FAIRNESS, mf.LOADBALANCE):
        plait.validate(scenario)


def test_seeds_vary_the_fairness_run():
    short = {"simulation.duration": "6s", "simulation.warmup": "2s"}
    results = {
        round(plait.run(mf.FAIRNESS, seed=s, overrides=short).flows.goodput_bps.sum())
        for s in (1, 2)
    }
    assert len(results) == 2


def test_quick_reproduce_end_to_end(tmp_path, client):
    """The --quick version (one seed, Reno background, the paper's 300 s runs): nine claims,
    the figure and the files."""
    options = Options(
        out=tmp_path / "mpfast", seeds=[1, 2, 3], quick=True, where={"client": client}
    )
    assert mf.EXPERIMENT.runs(options) == 4
    section = mf.EXPERIMENT.reproduce(options)
    assert isinstance(section, Section) and section.name == "mpfast"
    assert len(section.claims) == 9 and all(isinstance(c.agrees, bool) for c in section.claims)
    assert section.runs["failed"] == 0
    for name in mf.OUTPUT_FILES.values():
        assert (options.out / name).is_file(), name
    eff = pd.read_csv(options.out / "efficiency.csv")
    assert set(eff.cc) == {"mpfast", "wvegas"} and (eff.before_mbps > 50).all()
    assert "verdict" in render([section], "t", "g")


def test_phase_measures():
    series = pd.DataFrame({"time_s": [2.0, 4.0, 6.0, 8.0], "mbps": [10.0, 50.0, 90.0, 95.0]})
    assert mf.phase_mean(series, (4.0, 8.0)) == 70.0
    assert mf.first_at_least(series, 90.0) == 6.0
    assert mf.first_at_least(series, 90.0, after=6.0) == 2.0
    assert pd.isna(mf.first_at_least(series, 200.0))


def _efficiency(mpfast: dict, wvegas: dict) -> pd.DataFrame:
    rows = []
    for cc, values in (("mpfast", mpfast), ("wvegas", wvegas)):
        for seed in (1, 2):
            rows.append({"cc": cc, "background": "reno", "seed": seed, "link1_only_mbps": 1.0})
            rows[-1].update(values)
    return pd.DataFrame(rows)


def test_efficiency_verdicts_follow_the_data():
    like_paper = _efficiency(
        {"rise_s": 10.0, "during_over_before": 0.5, "recovery_s": 5.0},
        {"rise_s": 60.0, "during_over_before": 0.3, "recovery_s": float("nan")},
    )
    assert all(c.agrees for c in mf.efficiency_claims(like_paper))
    unlike = _efficiency(
        {"rise_s": float("nan"), "during_over_before": 0.1, "recovery_s": 50.0},
        {"rise_s": 60.0, "during_over_before": 0.3, "recovery_s": 5.0},
    )
    assert not any(c.agrees for c in mf.efficiency_claims(unlike))


def test_fairness_and_balance_verdicts_follow_the_data():
    fair = pd.DataFrame(
        {"seed": [1, 2], "mp_mbps": [50, 50], "fast_mbps": [50, 48], "ratio": [1.0, 1.04]}
        | {"share0": [0.5, 0.45], "share1": [0.5, 0.55]}
    )
    assert all(c.agrees for c in mf.fairness_claims(fair))
    skewed = fair.assign(ratio=[0.7, 0.7], share0=[0.9, 0.9], share1=[0.1, 0.1])
    assert not any(c.agrees for c in mf.fairness_claims(skewed))
    bal = pd.DataFrame({"seed": [1, 2], "before": [93, 94], "during": [69, 70], "after": [92, 93]})
    assert all(c.agrees for c in mf.balance_claims(bal))
    low = bal.assign(before=[70, 72], during=[50, 52], after=[60, 61])
    assert not any(c.agrees for c in mf.balance_claims(low))


def test_the_fast_background_fixed_points():
    """eq. (5)'s fixed points beside FAST-family background flows: one flow of the same α on
    link 1 throughout and none on link 2 leaves 80·1/(1 + 1) + 80 of 160 Mb/s (θ = 1 on
    link 1 is the best split: 80θ/(1 + θ) grows with θ), and the paper's joins leave well
    under half."""
    assert mf.fast_background_bound(joins=((0.0, 1), (1000.0, 1))) == 0.75
    assert abs(mf.FAST_BACKGROUND_BOUND - 0.1938) < 5e-4


def test_differences_carry_their_causes():
    """A ratio under background traffic outside the paper's half is physics (the fixed points
    above); a load-balancing shortfall beside the background flows is an open question."""
    unlike = _efficiency(
        {"rise_s": 10.0, "during_over_before": 0.17, "recovery_s": 5.0},
        {"rise_s": 60.0, "during_over_before": 0.12, "recovery_s": 60.0},
    )
    claims = mf.efficiency_claims(unlike)
    assert [c.cause for c in claims] == [None, "physics", None, None]
    assert f"{mf.FAST_BACKGROUND_BOUND:.3f}" in claims[1].detail
    bal = pd.DataFrame({"seed": [1, 2], "before": [93, 94], "during": [60, 61], "after": [92, 93]})
    assert [c.cause for c in mf.balance_claims(bal)] == [None, "unknown", None]
    assert all(
        c.cause is None
        for c in mf.efficiency_claims(
            _efficiency(
                {"rise_s": 10.0, "during_over_before": 0.5, "recovery_s": 5.0},
                {"rise_s": 60.0, "during_over_before": 0.3, "recovery_s": 60.0},
            )
        )
    )
