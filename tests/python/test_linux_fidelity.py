"""The linux-fidelity experiment (plait.experiments.linux_fidelity): its grid, a tiny sweep
through the whole pipeline, the seed variation of the linux profile, and verdicts computed
from the data."""

from __future__ import annotations

import io
import math
import sys

import pandas as pd
import plait
import pytest
from plait.experiments import Options, experiments
from plait.experiments import linux_fidelity as lf
from plait.experiments.framework import save_figure
from plait.report import Claim, Section, render

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9 and 3.10
    import tomli as tomllib

#: A short run of the experiment's scenario: 3 s, the first second discarded.
SHORT = {"simulation.duration": "3s", "simulation.warmup": "1s"}


def test_registered_for_plait_reproduce():
    assert experiments()["linux-fidelity"] is lf.EXPERIMENT


def test_the_grid_is_the_specified_960_runs(tmp_path):
    g = lf.grid()
    assert g["flow.bulk.count"] == [1, 3, 6, 10]
    assert g["link.bottleneck.queue.packets"] == [5, 20, 100]
    # Base RTT = 2 x (1 ms + delay + 1 ms): 20 and 100 ms.
    assert g["link.bottleneck.delay"] == ["8ms", "48ms"]
    assert g["flow.bulk.cc"] == ["reno", "cubic"]
    assert g["tcp.profile"] == ["linux", "rfc"]
    assert (g["simulation.duration"], g["simulation.warmup"]) == (["30s"], ["5s"])
    points = math.prod(len(v) for v in g.values())
    assert points == 96
    full = Options(out=tmp_path, seeds=list(range(1, 11)))
    assert lf.settings(full) == lf.Settings()  # the defaults are the full version's
    assert lf.packet_runs(lf.settings(full)) == 960
    # With the MPTCP part: 2 controllers x with and without the TCP flow x 2 profiles.
    assert lf.EXPERIMENT.runs(full) == 960 + 8 * 10
    quick = Options(out=tmp_path, seeds=list(range(1, 11)), quick=True)
    assert lf.settings(quick).seeds == [1, 2]
    assert lf.settings(quick).duration < lf.settings(full).duration
    assert lf.packet_runs(lf.settings(quick)) == 192


def test_scenario_is_the_testbed_dumbbell():
    scenario = tomllib.loads(lf.SCENARIO.read_text())
    links = {link["name"]: link for link in scenario["link"]}
    assert links["bottleneck"]["rate"] == "10Mbps"
    assert links["bottleneck"]["queue"] == {
        "kind": "droptail",
        "packets": 20,
        "limit_includes_service": True,
    }
    assert {links["access_src"]["delay"], links["access_dst"]["delay"]} == {"1ms"}
    assert scenario["flow"][0]["start"] == {"uniform": ["0s", "100ms"]}
    plait.validate(lf.SCENARIO)


def test_tiny_sweep_gives_every_column(tmp_path, client):
    """Two settings x two profiles x two seeds, through plait.sweep, the summary, the
    side-by-side table, the claims and the written files."""
    runs, summary = lf.sweep(
        ns=[1, 3],
        buffers=[5],
        rtts_ms=[20],
        ccs=["reno"],
        duration=3,
        warmup=1,
        seeds=2,
        out=tmp_path / "runs",
        client=client,
    )
    assert summary.total == 8 and summary.failed == 0
    assert len(runs) == 8
    assert list(runs.columns) == [
        "profile",
        "cc",
        "buffer",
        "n",
        "rtt_ms",
        "seed",
        "utilization",
        "busy",
        "drops",
        "bytes_delivered",
        "timeouts",
        "fast_retransmits",
        "rto_per_s",
        "fr_per_s",
        "result",
    ]
    assert set(runs.profile) == {"linux", "rfc"} and set(runs.rtt_ms) == {20.0}
    assert runs.utilization.between(0.3, 1.0).all()
    assert (runs.rto_per_s == runs.timeouts / 2).all()
    # Utilisation is payload over capacity: the bytes delivered over the 2 s window.
    assert runs.utilization.tolist() == pytest.approx((runs.bytes_delivered * 8 / 2 / 1e7).tolist())

    per = lf.summarize(runs)
    assert len(per) == 4
    for column in ("util_mean", "util_sd", "util_min", "util_max", "rto_per_s", "fr_per_s"):
        assert per[column].notna().all(), column
    assert per.distinct.between(1, 2).all() and (per.seeds == 2).all()

    side = lf.side_by_side(per)
    assert len(side) == 2
    for column in ("util_mean_linux", "util_mean_rfc", "util_diff", "rto_per_s_linux"):
        assert column in side.columns
    table = lf.markdown(side)
    assert table.splitlines()[0].startswith("| buffer (pkts) | N | RTT (ms) | cc | util linux")
    assert len(table.splitlines()) == 4

    claims = lf.claims(per)
    assert len(claims) == 3 and all(isinstance(c.agrees, bool) for c in claims)

    files = lf.write_outputs(runs, per, tmp_path / "out")
    assert pd.read_csv(files["csv"]).shape[0] == 4
    assert files["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_linux_profile_seeds_give_different_results():
    """One small setting: three seeds of the linux profile give three different results (what
    each flow delivered; their sum can be the link's capacity every time), and the cc set for
    the run is the one used (not the profile's CUBIC)."""
    overrides = {
        **SHORT,
        "tcp.profile": "linux",
        "flow.bulk.cc": "reno",
        "flow.bulk.count": 3,
        "link.bottleneck.queue.packets": 5,
    }
    delivered = []
    for seed in (1, 2, 3):
        flows = plait.run(lf.SCENARIO, seed=seed, overrides=overrides).flows
        assert set(flows.cc) == {"reno"}
        delivered.append(tuple(int(b) for b in flows.bytes_delivered))
    assert len(set(delivered)) == 3, delivered


def _summary(values: dict[tuple[str, str], list[float]], rto: dict[str, float]) -> pd.DataFrame:
    """A made-up summary: utilisations per (profile, cc) over seeds at buffer 5, N = 3,
    20 ms, with one RTO rate per profile."""
    rows = []
    for (profile, cc), utils in values.items():
        for seed, u in enumerate(utils, start=1):
            rows.append(
                {
                    "profile": profile,
                    "cc": cc,
                    "buffer": 5,
                    "n": 3,
                    "rtt_ms": 20.0,
                    "seed": seed,
                    "utilization": u,
                    "busy": u,
                    "bytes_delivered": round(u * 1e6),
                    "result": str(round(u * 1e6)),
                    "rto_per_s": rto[profile],
                    "fr_per_s": 1.0,
                }
            )
    return lf.summarize(pd.DataFrame(rows))


def test_utilisation_figure_with_five_equal_seeds():
    """Regression: `plait reproduce linux-fidelity` with its default five seeds failed in the
    figure ("'yerr' must not contain negative values"): the rfc profile often gives every
    seed the same result, and the mean of five copies of 0.83 is 1.1e-16 below 0.83, so
    mean - min was negative."""
    same = {("linux", "reno"): [0.81, 0.82, 0.83, 0.84, 0.85], ("rfc", "reno"): [0.83] * 5}
    summary = _summary(same, {"linux": 0.0, "rfc": 0.0})
    rfc = summary[summary.profile == "rfc"].iloc[0]
    assert rfc.util_mean < rfc.util_min  # the rounding the figure must tolerate
    fig = lf.utilization_figure(summary)
    png = io.BytesIO()
    save_figure(fig, png)
    assert png.getvalue().startswith(b"\x89PNG")


def test_verdicts_follow_the_data():
    different = {
        ("linux", "reno"): [0.90, 0.91, 0.92],
        ("rfc", "reno"): [0.90, 0.90, 0.90],
    }
    per = _summary(different, {"linux": 0.5, "rfc": 1.0})
    assert per.set_index("profile").distinct.to_dict() == {"linux": 3, "rfc": 1}
    seeds, rto, util = lf.claims(per)
    assert seeds.agrees and "every seed distinct in 1 of 1 settings" in seeds.plait
    assert "a single result in 1" in seeds.plait
    assert rto.agrees and "0.500 vs 1.000" in rto.plait
    assert util.agrees and "more than 3 % apart in 0 of 1" in util.plait

    same = {
        ("linux", "reno"): [0.80, 0.80, 0.81],
        ("rfc", "reno"): [0.90, 0.91, 0.92],
    }
    seeds, rto, util = lf.claims(_summary(same, {"linux": 2.0, "rfc": 1.0}))
    assert not seeds.agrees and "2 of 3" in seeds.plait
    assert not rto.agrees and "higher in 1" in rto.plait
    assert not util.agrees and "more than 3 % apart in 1 of 1" in util.plait


#: The experiment cut to one buffer, RTT and cc (N = 1, 3), 3 s runs, seeds 1 and 2, the
#: MPTCP part with Reno only: 8 dumbbell runs and 8 MPTCP runs.
SMALL = lf.Settings(
    seeds=[1, 2],
    duration=3.0,
    warmup=1.0,
    ns=(1, 3),
    buffers=(5,),
    rtts_ms=(20,),
    ccs=("reno",),
    mptcp_ccs=("uncoupled:reno",),
)


def test_reproduce_makes_a_section_that_renders(tmp_path, client):
    """The whole experiment with small settings passed in: a section with three claims (no
    kernel runs of 3 s are stored), three figures and the tables, and the files beside the
    stored runs."""
    options = Options(out=tmp_path / "linux-fidelity", seeds=[1, 2], where={"client": client})
    assert lf.EXPERIMENT.runs(options, SMALL) == 8 + 8
    section = lf.EXPERIMENT.reproduce(options, SMALL)
    assert isinstance(section, Section) and section.name == "linux-fidelity"
    assert len(section.claims) == 3 and all(isinstance(c, Claim) for c in section.claims)
    assert len(section.figures) == 3
    assert section.runs["packet runs"] == 16 and section.runs["failed"] == 0
    assert section.runs["MPTCP packet runs (run now, stored earlier)"] == "8 (8, 0)"
    assert section.runs["kernel runs (this run length)"] == "0 dumbbell, 0 MPTCP"
    # The settings passed in, not the module's grid, are what ran and what the setup says.
    assert (
        "N = 1, 3 bulk TCP flows" in section.setup and "DropTail FIFO of 5 packets" in section.setup
    )
    assert "Runs of 3 s, the first 1 s discarded, over 2 seeds: 8 runs" in section.setup
    assert "not included" in section.setup
    runs = pd.read_csv(options.out / lf.OUTPUT_FILES["runs"])
    assert sorted(set(runs.n)) == [1, 3] and set(runs.buffer) == {5} and set(runs.cc) == {"reno"}
    mptcp = pd.read_csv(options.out / lf.KERNEL_OUTPUT_FILES["mptcp_runs"])
    assert set(mptcp.cc) == {"uncoupled:reno"} and len(mptcp) == 8
    for name in lf.OUTPUT_FILES.values():
        assert (options.out / name).is_file(), name
    html = render([section], "t", "g")
    assert html.count('<td class="verdict"><span class="badge') == 3
