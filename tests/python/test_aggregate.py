"""MPAT aggregates from Python: one row per application flow (with the aggregate's name),
their series, shares changed by an event, Parquet, and clear errors."""

from __future__ import annotations

import plait
import pytest


def scenario(events: list[dict] | None = None, shares: list | None = None) -> dict:
    return {
        "simulation": {"duration": "40s", "warmup": "5s", "sample_interval": "1s", "seed": 3},
        "link": [
            {
                "name": "b",
                "from": "s",
                "to": "d",
                "rate": "10Mbps",
                "delay": "20ms",
                "queue": {"kind": "droptail", "packets": 50},
            }
        ],
        "flow": [
            {"name": "agg", "kind": "mpat", "shares": shares or [1, 3], "src": "s", "dst": "d"},
            {"name": "t", "kind": "tcp", "src": "s", "dst": "d"},
        ],
        "event": events or [],
    }


def test_each_application_flow_is_a_row_named_after_its_aggregate(tmp_path):
    r = plait.run(scenario())
    flows = r.flows.set_index("name")
    assert list(flows.index) == ["agg", "t", "agg.0", "agg.1"]
    assert list(flows.aggregate_name) == ["", "", "agg", "agg"]
    assert list(flows.kind) == ["mpat", "tcp", "mpat", "mpat"]
    parts = flows.goodput_bps["agg.0"] + flows.goodput_bps["agg.1"]
    assert parts == pytest.approx(flows.goodput_bps["agg"], rel=1e-9)
    assert 2 < flows.goodput_bps["agg.1"] / flows.goodput_bps["agg.0"] < 4.5
    fs = r.flow_series
    assert set(fs.flow.astype(str)) == {"agg", "t", "agg.0", "agg.1"}
    assert len(r.paths[r.paths.flow == "agg"]) == 2
    r.to_parquet(tmp_path)
    import pandas as pd

    back = pd.read_parquet(tmp_path / "flows.parquet")
    assert list(back.aggregate_name) == ["", "", "agg", "agg"]


def test_an_event_changes_the_shares():
    r = plait.run(scenario([{"at": "20s", "flow": "agg", "shares": [3, 1]}]))
    fs = r.flow_series
    g = fs.pivot_table(index="time_s", columns="flow", values="goodput_bps", observed=True)
    before = g.loc[8:20, "agg.1"].mean() / g.loc[8:20, "agg.0"].mean()
    after = g.loc[25:40, "agg.1"].mean() / g.loc[25:40, "agg.0"].mean()
    assert before > 2 and after < 0.5, (before, after)


@pytest.mark.parametrize(
    ("shares", "message"),
    [([], "must have 1 to 4096 weights"), ([1, -1], "flow[0].shares[1]: must be a positive")],
)
def test_bad_shares_name_the_field(shares, message):
    with pytest.raises(plait.ScenarioError) as e:
        plait.run(
            scenario(shares=shares if shares else None)
            | {"flow": [{"name": "agg", "kind": "mpat", "shares": shares, "src": "s", "dst": "d"}]}
        )
    assert message in str(e.value)
