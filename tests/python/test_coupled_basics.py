"""The coupled-basics experiment (plait.experiments.coupled_basics): its scenarios, a tiny run
of the whole pipeline, and verdicts computed from made-up data."""

from __future__ import annotations

import pandas as pd
import plait
from plait.experiments import Options, experiments
from plait.experiments import coupled_basics as cb
from plait.report import Section, render


def test_registered_for_plait_reproduce():
    assert experiments()["coupled-basics"] is cb.EXPERIMENT


def test_scenarios_validate_and_quick_is_shorter(tmp_path):
    for scenario in (cb.SHARED, cb.DISJOINT, cb.KHALILI):
        plait.validate(scenario)
    full = Options(out=tmp_path, seeds=list(range(1, 11)))
    quick = Options(out=tmp_path, seeds=list(range(1, 11)), quick=True)
    assert cb.settings(quick).seeds == [1, 2]
    assert cb.settings(quick).duration < cb.settings(full).duration
    assert cb.settings(full) == cb.Settings(seeds=list(range(1, 11)))
    # 6 shared + 6 disjoint + 4 controllers x 2 capacities, per seed.
    assert cb.EXPERIMENT.runs(full) == 20 * 10


def test_seeds_vary_the_shared_bottleneck():
    short = {"simulation.duration": "8s", "simulation.warmup": "2s", "flow.mp.cc": "olia"}
    ratios = set()
    for seed in (1, 2):
        flows = plait.run(cb.SHARED, seed=seed, overrides=short).flows.set_index("name")
        ratios.add(round(flows.goodput_bps["mp"] / flows.goodput_bps["single"], 6))
    assert len(ratios) == 2


def test_reproduce_end_to_end(tmp_path, client):
    """Every sweep at 6 s (2 s warm-up), one seed: the section, its claims and the files."""
    options = Options(out=tmp_path / "cb", seeds=[1], where={"client": client})
    section = cb.EXPERIMENT.reproduce(options, cb.Settings(6.0, 2.0, [1]))
    assert isinstance(section, Section) and section.name == "coupled-basics"
    # Five coupled controllers + uncoupled, pooling, balancing, LIA and OLIA in scenario A.
    assert len(section.claims) == 10
    assert all(isinstance(c.agrees, bool) for c in section.claims)
    assert section.runs["packet runs"] == 20 and section.runs["failed"] == 0
    for name in cb.OUTPUT_FILES.values():
        assert (options.out / name).is_file(), name
    shared = pd.read_csv(options.out / "shared.csv")
    assert set(shared.cc) == set(cb.PAIRS) and (shared.ratio > 0).all()
    khalili = pd.read_csv(options.out / "khalili.csv")
    assert sorted(khalili.c1_over_c2.unique()) == [1.0, 2.0]
    assert "verdict" in render([section], "t", "g")


def _shared(ratios: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"cc": cc, "seed": i, "ratio": r, "mp_bps": r, "single_bps": 1.0}
            for cc, values in ratios.items()
            for i, r in enumerate(values, start=1)
        ]
    )


def test_shared_verdicts_follow_the_data():
    good = {cc: [0.95, 1.05] for cc in cb.COUPLED} | {"uncoupled:reno": [1.9, 2.1]}
    assert all(c.agrees for c in cb.shared_claims(_shared(good)))
    bad = good | {"wvegas": [2.0, 2.0], "uncoupled:reno": [1.0, 1.1]}
    verdicts = {c.claim.split()[4]: c.agrees for c in cb.shared_claims(_shared(bad))}
    assert verdicts["wvegas"] is False and verdicts["lia"] is True
    assert cb.shared_claims(_shared(bad))[-1].agrees is False


def _disjoint(bps: float, share: float, uncoupled_share: float) -> pd.DataFrame:
    rows = [
        {"cc": cc, "seed": 1, "mp_bps": bps, "congested_share": share, "cross_bps": 4e6}
        for cc in cb.COUPLED
    ]
    rows.append(
        {
            "cc": "uncoupled:reno",
            "seed": 1,
            "mp_bps": 12e6,
            "congested_share": uncoupled_share,
            "cross_bps": 3e6,
        }
    )
    return pd.DataFrame(rows)


def test_disjoint_verdicts_follow_the_data():
    pooling, balancing = cb.disjoint_claims(_disjoint(9.6e6, 0.05, 0.25))
    assert pooling.agrees and balancing.agrees
    pooling, balancing = cb.disjoint_claims(_disjoint(7e6, 0.3, 0.25))
    assert not pooling.agrees and not balancing.agrees


def _khalili(type2: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"cc": cc, "c1_over_c2": ratio, "seed": 1, "type1": 1.0, "type2": t2}
            for ratio in (1.0, 2.0)
            for cc, t2 in type2.items()
        ]
    )


def test_khalili_verdicts_follow_the_data():
    lia, olia = cb.khalili_claims(
        _khalili({"uncoupled:reno": 1.0, "lia": 0.8, "olia": 0.98, "balia": 0.9})
    )
    assert lia.agrees and olia.agrees and "-20.0 %" in lia.plait
    lia, olia = cb.khalili_claims(
        _khalili({"uncoupled:reno": 1.0, "lia": 0.99, "olia": 0.7, "balia": 0.9})
    )
    assert not lia.agrees and not olia.agrees
