"""The multfrc experiment (plait.experiments.multfrc): its scenarios, a quick run of the whole
pipeline, and metrics and verdicts computed from made-up data."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import plait
import pytest
from plait.experiments import Options, experiments
from plait.experiments import multfrc as mt
from plait.report import Section, render

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9 and 3.10
    import tomli as tomllib

SCENARIOS = (mt.FRIENDLINESS, mt.FRIENDLINESS_MULTCP, mt.FRACTIONAL, mt.INFLUENCE, mt.SMOOTHNESS)


def test_registered_for_plait_reproduce():
    assert experiments()["multfrc"] is mt.EXPERIMENT


def _links(path) -> dict:
    return {link["name"]: link for link in tomllib.loads(path.read_text())["link"]}


def test_scenarios_are_the_papers():
    for scenario in SCENARIOS:
        plait.validate(scenario)
        links = _links(scenario)
        assert (links["left"]["rate"], links["left"]["delay"]) == ("100Mbps", "2ms")
        assert (links["right"]["rate"], links["right"]["delay"]) == ("100Mbps", "1ms")
        assert links["bottleneck"]["delay"] == "20ms"
    # Every RED queue follows the rule of red_queue at its capacity.
    for scenario, mbps in (
        (mt.FRIENDLINESS, 32),
        (mt.FRIENDLINESS_MULTCP, 32),
        (mt.INFLUENCE, 32),
        (mt.FRACTIONAL, 4),
        (mt.SMOOTHNESS, 15),
    ):
        bottleneck = _links(scenario)["bottleneck"]
        assert bottleneck["rate"] == f"{mbps}Mbps"
        assert bottleneck["queue"] == mt.red_queue(mbps), scenario.name
    assert _links(mt.SMOOTHNESS)["bottleneck"]["loss"] == {"kind": "periodic", "every": 100}
    flows = {f["name"]: f for f in tomllib.loads(mt.FRIENDLINESS.read_text())["flow"]}
    assert flows["agg"]["kind"] == "multfrc" and "refine_j" not in flows["agg"]
    multcp = {f["name"]: f for f in tomllib.loads(mt.FRIENDLINESS_MULTCP.read_text())["flow"]}
    assert multcp["agg"]["cc"] == {"name": "multcp", "n": 1}


def test_queues_scale_with_the_bdp():
    assert mt.bdp_packets(32) == pytest.approx(122.67, abs=0.01)
    assert mt.red_queue(32) == {
        "kind": "red",
        "min_th": 31,
        "max_th": 93,
        "max_p": 0.1,
        "w_q": 0.002,
        "packets": 245,
        "mean_packet_size": 1500,
    }
    assert mt.red_queue(4)["min_th"] == 5 and mt.red_queue(4)["packets"] == 31
    assert mt.droptail_queue(8) == {"kind": "droptail", "packets": 31}
    assert [mt.droptail_queue(4, b)["packets"] for b in mt.DROPTAIL_BDP] == [8, 15, 31]
    assert mt.queue_label('{ kind = "droptail", packets = 8 }', mt.bdp_packets(4)) == (
        "droptail 0.5 BDP"
    )
    assert mt.queue_label('{ kind = "droptail", packets = 15 }', mt.bdp_packets(4)) == "droptail"
    assert mt.queue_label('{ kind = "droptail", packets = 31 }', mt.bdp_packets(4)) == (
        "droptail 2 BDP"
    )
    assert mt.queue_label('{ kind = "red", mode = "bytes", bytes = 46500 }', 15.3) == "red"


# ns-2.35's own automatic RED configuration, printed by Debian's `ns` (2.35) for
# `$ns duplex-link $a $b BW DELAY RED` with every Queue/RED default: thresh_, maxthresh_ (in
# packets of mean_pktsize_ = 500 bytes) and q_weight_ after the link is attached.
NS2_AUTO_RED = (
    # rate (b/s), delay (s), thresh_, maxthresh_, q_weight_
    (4e6, 0.020, 5.0, 15.0, 0.00099950016662497809),
    (32e6, 0.020, 20.0, 60.0, 0.00012499218782546784),
    (15e6, 0.020, 9.375, 28.125, 0.0002666311142713873),
    (1e9, 0.001, 625.0, 1875.0, 3.9999919999589295e-06),
)


@pytest.mark.parametrize(("rate", "delay", "thresh", "maxthresh", "q_weight"), NS2_AUTO_RED)
def test_ns2_auto_red_gives_ns2s_values(rate, delay, thresh, maxthresh, q_weight):
    q = mt.ns2_auto_red(rate, delay, limit_bytes=100_000)
    assert q["min_th"] == pytest.approx(thresh * 500, rel=1e-12)
    assert q["max_th"] == pytest.approx(maxthresh * 500, rel=1e-12)
    assert q["w_q"] == pytest.approx(q_weight, rel=1e-12)
    assert (q["mode"], q["mean_packet_size"], q["max_p"], q["bytes"]) == (
        "bytes",
        500,
        0.1,
        100_000,
    )
    assert q["gentle"] and q["wait"]
    plait.validate(mt.FRIENDLINESS, overrides={"link.bottleneck.queue": q | {"bytes": 10**6}})


def test_red_styles():
    """ns2: ns-2's automatic thresholds with our limit (2 BDP) in bytes; bdp: ours."""
    q = mt.red_queue(32, "ns2")
    assert (q["min_th"], q["max_th"], q["bytes"]) == (10_000.0, 30_000.0, 245 * 1500)
    assert mt.red_queue(32) == mt.red_queue(32, "bdp")
    with pytest.raises(ValueError, match="RED style"):
        mt.red_queue(32, "auto")
    assert mt.queue_kind('{"kind" = "red", "min_th" = 8}') == "red"
    assert mt.queue_kind('{ kind = "droptail", packets = 31 }') == "droptail"


def test_sweep_overrides_give_valid_runs():
    """The sweeps' values: CP in the MulTFRC file, MulTCP's table, the influence queues."""
    short = {"simulation.duration": "3s", "simulation.warmup": "1s"}
    r = plait.run(
        mt.FRIENDLINESS,
        overrides=short | {"flow.agg.kind": "cp", "flow.agg.n": 4, "flow.tcp.count": 4},
    )
    assert list(r.flows.kind) == ["cp"] + ["tcp"] * 4
    r = plait.run(
        mt.FRIENDLINESS_MULTCP,
        overrides=short | {"flow.agg.cc": mt.multcp_value(2), "flow.tcp.count": 2},
    )
    assert r.flows.cc.iloc[0] == "multcp" and mt.is_tcp(r.flows.name).sum() == 2
    for queue in (mt.red_queue(64), mt.droptail_queue(64)):
        plait.validate(
            mt.INFLUENCE,
            overrides={"link.bottleneck.rate": "64Mbps", "link.bottleneck.queue": queue},
        )


def test_run_counts():
    options = Options(out=None, seeds=[1, 2, 3, 4, 5])
    # Influence: RED and three DropTail buffers; equation DropTail: three buffers.
    assert mt.EXPERIMENT.runs(options) == 5 * (
        4 * 8 + 8 + 5 * 4 * 5 + 2 + 2 + 3 + 5 * 4 + 9 * 3 * 2
    )
    quick = Options(out=None, seeds=[1, 2, 3], quick=True)
    assert mt.EXPERIMENT.runs(quick) == 4 * 3 + 3 + 2 * 2 * 2 + 2 + 2 + 3 + 2 * 2 + 2


def test_quick_reproduce_end_to_end(tmp_path, client):
    """The pipeline on shortened runs (one seed, small grids, 8 s instead of 60-200 s, the
    responsiveness runs kept at their 20 s: their loss steps are at 5 and 14 s), passed in as
    settings: ten claims, the figure and the files."""
    small = mt.Settings(
        seeds=[1],
        friendly_n=(1, 4),
        fractional_n=(0.5, 1.0),
        capacities=(8,),
        influence_n=(2,),
        eq_loss=(0.02,),
        eq_red_n=(2,),
        eq_capacities=(8,),
        eq_droptail_n=(5,),
        length=(8.0, 2.0),
        eq_length=(8.0, 2.0),
        smooth_from=2.0,
        droptail_bdp=(1.0, 2.0),
    )
    options = Options(out=tmp_path / "multfrc", seeds=[1, 2], quick=True, where={"client": client})
    assert mt.EXPERIMENT.runs(options, small) == 4 * 2 + 2 + 3 + 2 + 5 + 3
    section = mt.EXPERIMENT.reproduce(options, small)
    assert isinstance(section, Section) and section.name == "multfrc"
    assert len(section.claims) == 15 and all(isinstance(c.agrees, bool) for c in section.claims)
    assert section.runs["failed"] == 0 and section.runs["packet runs"] == 23
    eq = pd.read_csv(options.out / "equation.csv")
    assert set(eq.queue) == {"red", "droptail", "droptail 2 BDP"}
    assert (eq.loss_event_rate > 0).all()
    inf = pd.read_csv(options.out / "influence.csv")
    assert set(inf.queue) == {"red", "droptail", "droptail 2 BDP"}
    diag = pd.read_csv(options.out / "diagnosis.csv")
    assert list(diag.n) == [1, 4] and (diag.tcp_send_mbps > 0).all()
    assert (diag.multfrc_loss_event_rate > 0).all() and (diag.tcp_timeouts_per_flow >= 0).all()
    assert (eq.ratio > 0).all() and (eq.send_mbps > 0).all()
    rs = pd.read_csv(options.out / "responsiveness.csv")
    assert set(rs.protocol) == {
        "MulTFRC n = 2",
        "MulTFRC n = 4",
        "TFRC × 1",
        "TFRC × 2",
        "TFRC × 4",
    }
    assert (rs.response_s > 0).all() and (rs.high_loss_mbps < rs.before_mbps).all()
    for name in mt.OUTPUT_FILES.values():
        assert (options.out / name).is_file(), name
    fr = pd.read_csv(options.out / "friendliness.csv")
    assert set(fr.protocol) == set(mt.PROTOCOLS) and set(fr.n) == {1, 4}
    assert (fr.agg_mbps > 0).all() and (fr.tcp_mbps > 0).all()
    inf = pd.read_csv(options.out / "influence.csv")
    assert set(inf.capacity_mbps) == {8.0}
    sm = pd.read_csv(options.out / "smoothness.csv")
    assert set(sm.protocol) == {"multfrc", "cp"}
    assert "verdict" in render([section], "t", "g")


# ---- Metrics on made-up tables --------------------------------------------------------------


def test_loss_events_group_drops_within_an_rtt():
    assert mt.loss_events([], 0.1) == 0
    assert mt.loss_events([1.0, 1.05, 1.1, 1.11, 3.0], 0.1) == 3  # {1.0, 1.05, 1.1}, {1.11}, {3}
    assert mt.loss_events([3.0, 1.0], 0.1) == 2


def test_loss_event_sizes_and_the_saturated_rate():
    assert mt.loss_event_sizes([0.0, 0.05, 0.3, 0.31, 0.32, 0.9], 0.1) == [2, 3, 1]
    assert mt.loss_event_sizes([], 0.1) == []
    # The rate solves X = multfrc_rate(n, 1/(k W), r k W, R) with W = X R / s.
    n, k, r, rtt = 32, 1.2, 0.08, 0.075
    x = mt.saturated_rate(n, k, r, rtt)
    w = x * rtt / 1460
    again = float(plait.models.multfrc_rate(n, 1 / (k * w), r * k * w, rtt, 1460))
    assert 1.5e6 < x < 2.5e6, x  # not the degenerate crossing near 20 kB/s
    assert again == pytest.approx(x, rel=1e-9)
    # More packets lost per packet sent, more per loss event: a lower rate.
    assert mt.saturated_rate(n, k, 1.25 * r, rtt) < x


def test_equation_rows_on_made_up_runs():
    # Two flows sending 1000 segments each in the 50 s window, 20 data drops in 10 events
    # (pairs 10 ms apart, 1 s between pairs), ACK drops ignored, RTT 100 ms.
    flows = pd.DataFrame(
        {
            "run": 0,
            "seed": 1,
            "name": ["tcp.0", "tcp.1"],
            "packets_sent": [1000, 1000],
            "rtt_mean_s": [0.1, 0.1],
            "link.bottleneck.loss.p": 0.01,
        }
    )
    times = [11.0 + k + dt for k in range(10) for dt in (0.0, 0.01)]
    drops = pd.DataFrame(
        {"run": 0, "time_s": times + [12.5], "feedback": [0] * 20 + [1], "flow": "tcp.0"}
    )
    row = mt.equation_rows(flows, drops, "red", "link.bottleneck.loss.p").iloc[0]
    assert row.n == 2 and row.x == 0.01
    assert row.loss_event_rate == pytest.approx(10 / 2000)
    assert row.packets_per_loss_event == pytest.approx(2.0)
    assert row.send_mbps == pytest.approx(2000 * 1460 * 8 / 50 / 1e6)
    expect = plait.models.multfrc_rate(2, 0.005, 2.0, 0.1, 1460.0) * 8 / 1e6
    assert row.equation_mbps == pytest.approx(float(expect))
    assert mt.mbps("32Mbps") == 32.0


def test_response_times_on_a_made_up_step():
    # 10 Mb/s until 5 s, a linear fall to 2 Mb/s by 6 s, 2 Mb/s until 14 s, then 12 Mb/s.
    t = np.round(np.arange(0.1, 20.01, 0.1), 1)
    g = np.where(t <= 5, 10.0, np.where(t <= 6, 10 - 8 * (t - 5), np.where(t <= 14, 2.0, 12.0)))
    series = pd.DataFrame(
        {"protocol": "p", "kind": "multfrc", "n": 2.0, "seed": 1, "time_s": t, "goodput_mbps": g}
    )
    monkey = mt.RESPONSE_SMOOTHING
    try:
        mt.RESPONSE_SMOOTHING = 1
        row = mt.response_rows(series).iloc[0]
    finally:
        mt.RESPONSE_SMOOTHING = monkey
    assert row.before_mbps == pytest.approx(10) and row.high_loss_mbps == pytest.approx(2)
    assert row.response_s == pytest.approx(0.5)  # half-way (6 Mb/s) at 5.5 s
    assert row.recovery_s == pytest.approx(0.1)  # the first sample after 14 s
    assert np.isnan(mt.crossing(t, g, -1.0, 5.0, True))


def _flows(runs: list[dict]) -> pd.DataFrame:
    """A flows table: per run an `agg` goodput and a list of TCP goodputs (bit/s)."""
    rows = []
    for i, run in enumerate(runs):
        tcps = run.pop("tcp")
        agg = run.pop("agg")
        names = ["tcp"] if len(tcps) == 1 else [f"tcp.{k}" for k in range(len(tcps))]
        base = {"run": f"r{i}", "seed": run.pop("seed", 1), **run}
        common = {"drops": 1, "packets_sent": 100, "timeouts": 0}
        rows.append(
            base
            | common
            | {
                "name": "agg",
                "goodput_bps": agg,
                "loss_event_rate": 0.01,
                "packets_per_loss_event": 1.5,
            }
        )
        for name, g in zip(names, tcps):
            rows.append(
                base
                | common
                | {"name": name, "goodput_bps": g, "loss_event_rate": np.nan}
                | {"packets_per_loss_event": np.nan}
            )
    frame = pd.DataFrame(rows)
    frame["name"] = frame["name"].astype("category")
    return frame


def test_normalised_throughput():
    flows = {
        "multfrc": _flows(
            [
                {"flow.agg.refine_j": True, "agg": 4e6, "tcp": [1e6, 1e6, 1e6, 1e6]},
                {"flow.agg.refine_j": False, "agg": 2e6, "tcp": [1e6] * 4},
            ]
        ),
        "cp": _flows([{"agg": 3e6, "tcp": [2e6]}]),
        "multcp": _flows([{"agg": 8e6, "tcp": [2e6, 2e6]}]),
    }
    fr = mt.friendliness_rows(flows)
    got = {(r.protocol, r.n): r.normalised for r in fr.itertuples()}
    assert got == {("multfrc", 4): 1.0, ("multfrc_old", 4): 0.5, ("cp", 1): 1.5, ("multcp", 2): 2.0}
    assert list(fr.protocol) == ["multfrc", "multfrc_old", "cp", "multcp"]


def test_fractional_and_influence_metrics():
    frac = mt.fractional_rows(_flows([{"flow.agg.n": 0.5, "agg": 1e6, "tcp": [2e6]}]))
    assert frac.ratio.iloc[0] == 0.5 and frac.ratio_over_n.iloc[0] == 1.0
    queue = '{"kind" = "droptail", "packets" = 31}'
    inf = mt.influence_rows(
        _flows(
            [
                # MulTFRC (n = 2) takes 6 of 8 Mb/s: a TCP flow has 1 of its 2 Mb/s share.
                {
                    "link.bottleneck.rate": "8Mbps",
                    "link.bottleneck.queue": queue,
                    "agg": 6e6,
                    "tcp": [1e6, 1e6],
                }
            ]
        )
    )
    row = inf.iloc[0]
    assert (row.queue, row.capacity_mbps, row.n) == ("droptail", 8.0, 2)
    assert row.total_mbps == 8.0 and row.tcp_normalised == 0.5


def test_smoothness_metric():
    t = np.arange(0.2, 20, 0.2)
    series = pd.DataFrame(
        {
            "protocol": ["multfrc"] * len(t) + ["cp"] * len(t),
            "seed": 1,
            "time_s": np.concatenate([t, t]),
            "goodput_mbps": np.concatenate([np.full(len(t), 10.0), 10 + 2 * np.sin(t)]),
            "allowed_mbps": 10.0,
        }
    )
    sm = mt.smoothness_rows(series).set_index("protocol")
    assert sm.loc["multfrc", "cv_goodput"] == 0.0
    assert sm.loc["cp", "cv_goodput"] == pytest.approx(0.14, abs=0.01)
    assert mt.cv([1.0, 3.0]) == 0.5


# ---- Verdicts on made-up tables -------------------------------------------------------------


def _friendliness(values: dict[str, dict[int, list[float]]]) -> pd.DataFrame:
    rows = []
    for protocol, per_n in values.items():
        for n, seeds in per_n.items():
            for seed, v in enumerate(seeds, 1):
                rows.append({"protocol": protocol, "n": n, "seed": seed, "normalised": v})
    return pd.DataFrame(rows)


NS = (1, 2, 4, 8, 16, 32, 64)


def test_friendliness_verdicts_follow_the_data():
    like_paper = _friendliness(
        {
            "multfrc": {n: [1.0, 1.02] for n in NS},
            "multfrc_old": {n: [1.0, 1.02] if n < 2 else [1.2, 1.22] for n in NS},
            "cp": {n: [1.0, 1.02] if n < 16 else [1.5, 0.7] for n in NS},
            "multcp": {n: [1.1, 1.1] if n <= 8 else [2.0, 2.0] for n in NS},
        }
    )
    assert all(c.agrees for c in mt.friendliness_claims(like_paper))
    unlike = _friendliness(
        {
            "multfrc": {n: [0.5, 0.52] for n in NS},
            "multfrc_old": {n: [1.0, 1.0] for n in NS},
            "cp": {n: [1.0, 1.0] for n in NS},
            "multcp": {n: [4.5, 4.4] for n in NS},
        }
    )
    assert not any(c.agrees for c in mt.friendliness_claims(unlike))


def test_fractional_verdicts_follow_the_data():
    ns = (0.1, 0.5, 1.0, 2.0)
    good = pd.DataFrame({"n": ns, "seed": 1, "ratio": [0.1, 0.52, 1.05, 1.9]})
    good["ratio_over_n"] = good.ratio / good.n
    assert all(c.agrees for c in mt.fractional_claims(good))
    flat = good.assign(ratio=[0.6, 0.5, 0.9, 0.8])
    flat["ratio_over_n"] = flat.ratio / flat.n
    assert not any(c.agrees for c in mt.fractional_claims(flat))


def test_influence_and_smoothness_verdicts_follow_the_data():
    cells = [(q, c, n) for q in mt.QUEUES for c in (4, 32) for n in (1, 16)]
    inf = pd.DataFrame(
        [
            {"queue": q, "capacity_mbps": c, "n": n, "seed": 1, "tcp_normalised": 1.1}
            for q, c, n in cells
        ]
    )
    assert all(c.agrees for c in mt.influence_claims(inf))
    starved = inf.assign(tcp_normalised=np.where(inf.n == 16, 0.3, 1.0))
    claims = mt.influence_claims(starved)
    assert not any(c.agrees for c in claims)
    assert all(c.detail.startswith("2 cells outside") for c in claims)
    sm = pd.DataFrame(
        {"protocol": ["multfrc", "cp"], "seed": 1, "cv_goodput": [0.01, 0.2]}
        | {"cv_allowed_rate": [0.0, 0.2]}
    )
    assert mt.smoothness_claims(sm)[0].agrees
    assert not mt.smoothness_claims(sm.assign(cv_goodput=[0.3, 0.2]))[0].agrees


def test_beyond_a_hundred_flows_claim():
    rows = []
    for seed in (1, 2):
        for n, norm, loss in ((64, 0.8, 0.12), (128, 0.9, 0.17)):
            rows.append(
                {"protocol": "multfrc", "n": n, "seed": seed, "normalised": norm}
                | {"agg_drop_rate": loss, "tcp_drop_rate": loss, "agg_timeouts": 0}
            )
    fr = pd.DataFrame(rows)
    claim = mt.beyond_hundred_claim(fr)
    assert claim.agrees and "n=128: 17.0 %" in claim.plait
    # A loss rate under 15 %, or MulTFRC at or above n shares: not what the paper says.
    assert not mt.beyond_hundred_claim(fr.assign(tcp_drop_rate=0.1)).agrees
    assert not mt.beyond_hundred_claim(fr.assign(normalised=1.05)).agrees
    # No n above 100 run (the quick version): differs, saying so.
    small = mt.beyond_hundred_claim(fr[fr["n"] == 64])
    assert not small.agrees and small.plait == "no n > 100 in this run"
    assert claim.cause is None and small.cause == "unknown"
    diag = pd.DataFrame(
        {"n": [128, 128], "seed": [1, 2], "fixed_gain_tcp_drop_rate": [2.0, 3.0]}
        | {"multfrc_drop_rate": 0.23, "tcp_drop_rate": 0.19, "multfrc_rtt_s": 0.05}
        | {"tcp_rtt_s": 0.05, "tcp_send_over_equation": 1.1}
    )
    low = mt.beyond_hundred_claim(fr.assign(normalised=0.5), diag)
    assert low.cause == "unknown" and "2.50× at n=128" in low.detail
