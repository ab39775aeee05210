"""TFRC, MulTFRC and CP from Python: the result columns, n changed by an event in a dict
scenario, a clear error for a bad event, and the benchmark's --kind."""

from __future__ import annotations

import json
import math

import plait
import pytest
from plait.cli import main


def scenario(events: list[dict] | None = None) -> dict:
    return {
        "simulation": {"duration": "40s", "warmup": "5s", "sample_interval": "1s", "seed": 2},
        "link": [
            {
                "name": "b",
                "from": "s",
                "to": "d",
                "rate": "20Mbps",
                "delay": "20ms",
                "loss": {"kind": "bernoulli", "p": 0.01},
            }
        ],
        "flow": [
            {"name": "m", "kind": "multfrc", "n": 1, "src": "s", "dst": "d"},
            {"name": "c", "kind": "cp", "n": 2, "src": "s", "dst": "d"},
            {"name": "t", "kind": "tcp", "src": "s", "dst": "d"},
        ],
        "event": events or [],
    }


def test_rate_based_columns_and_an_event_that_raises_n():
    r = plait.run(scenario([{"at": "20s", "flow": "m", "n": 4}]))
    flows = r.flows.set_index("name")
    assert list(flows.kind) == ["multfrc", "cp", "tcp"]
    for name in ["m", "c"]:
        assert 0 < flows.loss_event_rate[name] < 0.05
        assert flows.packets_per_loss_event[name] >= 1
        assert flows.allowed_rate_bps[name] > 0
    assert math.isnan(flows.loss_event_rate["t"])
    fs = r.flow_series
    m = fs[fs.flow == "m"].set_index("time_s").allowed_rate_bps
    before = m.loc[10:20].mean()
    after = m.loc[25:40].mean()
    assert 2.5 < after / before < 6, (before, after)
    assert fs[fs.flow == "t"].allowed_rate_bps.isna().all()


def test_a_rate_based_run_is_deterministic():
    a = plait.run(scenario()).flows
    b = plait.run(scenario()).flows
    assert a.equals(b)


def test_an_event_for_a_flow_without_n_is_an_error():
    with pytest.raises(plait.ScenarioError) as e:
        plait.run(scenario([{"at": "5s", "flow": "t", "n": 2}]))
    assert "event[0].n" in str(e.value)
    assert "n can change only for multfrc and cp flows" in str(e.value)


def test_bench_runs_tfrc_flows(capsys):
    code = main(["bench", "dumbbell", "--kind", "cp", "--flows", "2", "--duration", "5", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["flows"] == 2 and report["delivered_packets"] > 1000


def test_the_allowed_rate_is_plait_models_multfrc_rate_at_the_measured_p_and_j():
    """At every sample after the first losses, X is `plait.models.multfrc_rate` at the p, j
    and RTT the sender holds (the receive-rate limit does not bind under 1 % random loss)."""
    import numpy as np
    from plait import models

    sc = scenario()
    sc["flow"] = [{"name": "m", "kind": "multfrc", "n": 2.5, "src": "s", "dst": "d"}]
    fs = plait.run(sc).flow_series
    fs = fs[(fs.time_s >= 10) & (fs.loss_event_rate > 0)]
    assert len(fs) > 20
    expect = models.multfrc_rate(
        2.5,
        fs.loss_event_rate.to_numpy(),
        fs.packets_per_loss_event.to_numpy(),
        fs.srtt_s.to_numpy(),
        1460.0,
    )
    np.testing.assert_allclose(fs.allowed_rate_bps.to_numpy(), 8 * np.asarray(expect), rtol=1e-6)
