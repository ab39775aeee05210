"""Tests of the Python API: plait.run, plait.validate and plait.Result.

The scenarios are small (three TCP flows through a 10 Mb/s bottleneck for three simulated
seconds), so each run takes milliseconds; the assertions check the documented columns, the
recorded seed, overrides, determinism, the output files and the error messages.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import plait
import pytest

REPO = Path(__file__).resolve().parents[2]
DUMBBELL = REPO / "experiments" / "dumbbell" / "dumbbell.toml"
PARALLEL_TCP = REPO / "experiments" / "parallel-tcp" / "scenario.toml"

# Column order of FlowTable, LinkTable and TimeSeries in crates/plait-core/src/trace/results.rs.
FLOW_COLUMNS = [
    "name",
    "kind",
    "cc",
    "src",
    "dst",
    "aggregate_name",
    "start_s",
    "goodput_bps",
    "throughput_bps",
    "bytes_delivered",
    "packets_sent",
    "retransmissions",
    "fast_retransmits",
    "timeouts",
    "drops",
    "rtt_samples",
    "rtt_mean_s",
    "rtt_min_s",
    "rtt_p50_s",
    "rtt_p95_s",
    "rtt_p99_s",
    "rtt_max_s",
    "completion_s",
    "rwnd_blocked_s",
    "send_buffer_blocked_s",
    "delivery_delay_mean_s",
    "delivery_delay_max_s",
    "reinjected_bytes",
    "max_out_of_order_bytes",
    "loss_event_rate",
    "packets_per_loss_event",
    "allowed_rate_bps",
]
LINK_COLUMNS = [
    "name",
    "direction",
    "from",
    "to",
    "rate_bps",
    "utilization",
    "tx_packets",
    "tx_bytes",
    "drops",
    "loss_drops",
    "down_drops",
    "mean_queue_packets",
    "mean_queue_bytes",
    "max_queue_packets",
]
PATH_COLUMNS = [
    "flow",
    "path",
    "route",
    "reverse_route",
    "packets_sent",
    "throughput_bps",
    "fast_retransmits",
    "timeouts",
    "rtt_samples",
    "rtt_mean_s",
    "rtt_min_s",
    "bytes_sent",
    "retransmissions",
    "new_data_bytes",
    "reinjected_bytes",
    "data_share",
    "cwnd_mean_bytes",
    "cwnd_max_bytes",
    "penalisations",
]
FLOW_SERIES_COLUMNS = [
    "time_s",
    "flow",
    "cwnd_bytes",
    "srtt_s",
    "goodput_bps",
    "allowed_rate_bps",
    "loss_event_rate",
    "packets_per_loss_event",
]
LINK_SERIES_COLUMNS = ["time_s", "link", "direction", "queue_packets", "queue_bytes"]
PATH_SERIES_COLUMNS = [
    "time_s",
    "flow",
    "path",
    "cwnd_bytes",
    "srtt_s",
    "in_flight_bytes",
    "capacity_estimate",
]
PICK_COLUMNS = [
    "time_s",
    "flow",
    "subflow",
    "copies",
    "subflow_mask",
    "reason",
    "dsn",
    "reinjection",
]
SERIES = ("flow_series", "link_series", "path_series")
PARQUET_NAMES = sorted(
    f"{t}.parquet"
    for t in (
        "flows",
        "links",
        "paths",
        "flow_series",
        "link_series",
        "path_series",
        "picks",
        "drops",
        "refusals",
    )
)
SUMMARY_KEYS = {
    "seed",
    "duration_s",
    "warmup_s",
    "flows",
    "links",
    "paths",
    "jain_fairness",
    "events",
    "delivered_packets",
    "wall_seconds",
}


def scenario_dict() -> dict:
    """The `scenario_toml` fixture (conftest.py) written as the equivalent Python dict."""
    return {
        "simulation": {"duration": "3s", "warmup": "1s", "seed": 5, "sample_interval": "500ms"},
        "link": [
            {"name": "access", "from": "src", "to": "r1", "rate": "100Mbps", "delay": "1ms"},
            {
                "name": "bottleneck",
                "from": "r1",
                "to": "dst",
                "rate": "10Mbps",
                "delay": "10ms",
                "queue": {"kind": "droptail", "packets": 50},
            },
        ],
        "flow": [
            {
                "name": "bulk",
                "count": 3,
                "kind": "tcp",
                "cc": "reno",
                "src": "src",
                "dst": "dst",
                "start": {"uniform": ["0s", "1s"]},
            }
        ],
    }


@pytest.fixture
def unsampled(tmp_path: Path, scenario_toml: str) -> Path:
    """The same scenario without `sample_interval`."""
    path = tmp_path / "unsampled.toml"
    text = "\n".join(
        line for line in scenario_toml.splitlines() if not line.startswith("sample_interval")
    )
    path.write_text(text + "\n", encoding="utf-8")
    return path


def assert_same_tables(a: plait.Result, b: plait.Result) -> None:
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.links, b.links)
    for name in ("paths", *SERIES):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert (a.seed, a.events, a.delivered_packets) == (b.seed, b.events, b.delivered_packets)
    assert a.jain_fairness == b.jain_fairness


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- tables -------------------------------------------------------------------------------------


def test_result_tables_are_dataframes_with_documented_columns(scenario):
    r = plait.run(scenario)
    assert isinstance(r, plait.Result)
    for frame in (r.flows, r.links, r.paths, r.flow_series, r.link_series, r.path_series):
        assert isinstance(frame, pd.DataFrame)
    assert list(r.flows.columns) == FLOW_COLUMNS
    assert list(r.links.columns) == LINK_COLUMNS
    assert list(r.paths.columns) == PATH_COLUMNS
    assert list(r.flow_series.columns) == FLOW_SERIES_COLUMNS
    assert list(r.link_series.columns) == LINK_SERIES_COLUMNS
    assert list(r.path_series.columns) == PATH_SERIES_COLUMNS
    assert list(r.picks.columns) == PICK_COLUMNS
    # Single-path flows only: the per-path tables are present and empty.
    assert len(r.paths) == 0 and len(r.path_series) == 0 and len(r.picks) == 0
    assert (r.duration_s, r.warmup_s) == (3.0, 1.0)
    assert r.events > 0
    assert r.delivered_packets > 0
    assert math.isfinite(r.wall_seconds) and r.wall_seconds >= 0


def test_flow_table_contents(scenario):
    r = plait.run(scenario)
    flows = r.flows
    assert flows.name.tolist() == ["bulk.0", "bulk.1", "bulk.2"]
    assert set(flows.kind) == {"tcp"}
    assert set(flows.cc) == {"reno"}
    assert set(flows.src) == {"src"} and set(flows.dst) == {"dst"}
    assert flows.start_s.between(0.0, 1.0).all()
    assert flows.start_s.nunique() == 3  # each copy draws its own start time
    assert (flows.bytes_delivered > 0).all()
    # Goodput is the payload delivered over [warmup, duration].
    interval = r.duration_s - r.warmup_s
    expected = flows.bytes_delivered.astype(float) * 8 / interval
    assert flows.goodput_bps.tolist() == pytest.approx(expected.tolist(), rel=1e-9)
    # Everything delivered crossed the 10 Mb/s bottleneck during the run.
    assert flows.bytes_delivered.sum() * 8 <= 10e6 * r.duration_s
    # Wire throughput counts the data that left the senders' access link in the window: at
    # most the bottleneck's rate plus a buffer's worth (50 packets) queued behind it. (Per
    # flow it can be below goodput: data buffered out of order before the window is delivered
    # in it.)
    assert (flows.throughput_bps > 0).all()
    assert flows.throughput_bps.sum() <= 10e6 + 50 * 1500 * 8 / (r.duration_s - r.warmup_s)
    # RTT statistics from the flows' samples in the window: at least the 22 ms propagation
    # round trip. A flow can take none there (seed 5: bulk.1 starts into a full buffer at
    # 0.95 s, loses its retransmissions and spends the window in timeouts, and Karn's rule
    # takes no sample from retransmitted data); its statistics are then missing, not zero.
    sampled = flows[flows.rtt_samples > 0]
    assert len(sampled) >= 2
    assert (sampled.rtt_min_s >= 0.022).all()
    assert (sampled.rtt_min_s <= sampled.rtt_p50_s).all()
    assert flows[flows.rtt_samples == 0].rtt_min_s.isna().all()
    assert (sampled.rtt_p50_s <= sampled.rtt_max_s).all()
    # Long-lived flows never complete.
    assert flows.completion_s.isna().all()
    # Jain's index of the goodputs, (sum x)^2 / (n sum x^2).
    x = flows.goodput_bps
    assert r.jain_fairness == pytest.approx(x.sum() ** 2 / (len(x) * (x**2).sum()), rel=1e-12)


def test_link_table_contents(scenario):
    r = plait.run(scenario)
    links = r.links
    assert links.name.tolist() == ["access", "access", "bottleneck", "bottleneck"]
    assert links.direction.tolist() == ["forward", "reverse", "forward", "reverse"]
    assert links["from"].tolist() == ["src", "r1", "r1", "dst"]
    assert links["to"].tolist() == ["r1", "src", "dst", "r1"]
    assert links.rate_bps.tolist() == [100_000_000, 100_000_000, 10_000_000, 10_000_000]
    assert links.utilization.between(0.0, 1.0).all()
    bottleneck = links.iloc[2]
    assert bottleneck.utilization > 0.5
    assert bottleneck.max_queue_packets <= 50
    assert bottleneck.drops > 0
    assert (links.loss_drops == 0).all()  # no loss model configured
    # Utilisation is the time spent serialising in the window; tx_bytes counts the packets that
    # started in it, so at the link rate they differ by at most one packet at each edge.
    window = r.duration_s - r.warmup_s
    started = links.tx_bytes * 8 / (links.rate_bps * window)
    two_packets = 2 * 1500 * 8 / (links.rate_bps * window)
    assert ((links.utilization - started).abs() <= two_packets).all()


def test_series_present_when_sample_interval_set(scenario):
    r = plait.run(scenario)
    fs, ls = r.flow_series, r.link_series
    times = sorted(fs.time_s.unique())
    assert {0.5, 1.0, 1.5, 2.0, 2.5} <= set(times)
    assert all(0 < t <= 3.0 for t in times)
    assert sorted(ls.time_s.unique()) == times
    for _, rows in fs.groupby("time_s"):
        assert list(rows.flow) == ["bulk.0", "bulk.1", "bulk.2"]
    for _, rows in ls.groupby("time_s"):
        assert list(zip(rows.link, rows.direction)) == [
            ("access", "forward"),
            ("access", "reverse"),
            ("bottleneck", "forward"),
            ("bottleneck", "reverse"),
        ]
    assert (fs.cwnd_bytes > 0).all() and (fs.srtt_s >= 0).all()
    # Every flow that has an RTT sample by then reports its smoothed RTT (see
    # test_flow_table_contents for the flow that has none in this scenario).
    sampled = set(r.flows[r.flows.rtt_samples > 0].name)
    late = fs[fs.time_s == 2.5]
    assert (late[late.flow.isin(sampled)].srtt_s > 0).all() and len(sampled) >= 2
    assert not fs.goodput_bps.isna().any()
    bottleneck = ls[(ls.link == "bottleneck") & (ls.direction == "forward")]
    assert bottleneck.queue_packets.max() > 0
    # Names are categorical: one string per flow or link, not per row.
    for column in (fs.flow, ls.link, ls.direction):
        assert isinstance(column.dtype, pd.CategoricalDtype)


def test_series_names_when_a_flow_is_named_like_a_link(scenario_toml, tmp_path):
    path = tmp_path / "clash.toml"
    path.write_text(scenario_toml.replace('name = "bulk"\ncount = 3', 'name = "access"'))
    r = plait.run(path)
    assert set(r.flow_series.flow) == {"access"}
    first = r.link_series[r.link_series.time_s == r.link_series.time_s.min()]
    assert list(first.link) == ["access", "access", "bottleneck", "bottleneck"]


def test_no_series_without_sample_interval(unsampled):
    r = plait.run(unsampled)
    for name, columns in zip(
        SERIES, (FLOW_SERIES_COLUMNS, LINK_SERIES_COLUMNS, PATH_SERIES_COLUMNS)
    ):
        frame = getattr(r, name)
        assert len(frame) == 0
        assert list(frame.columns) == columns


# --- path, dict, seed, overrides -----------------------------------------------------------------


def test_run_path_and_dict_give_same_tables(scenario):
    from_file = plait.run(scenario)
    from_str = plait.run(str(scenario))
    from_dict = plait.run(scenario_dict())
    assert_same_tables(from_file, from_dict)
    assert_same_tables(from_file, from_str)


def test_dict_none_means_default():
    d = scenario_dict()
    d["simulation"]["seed"] = None  # null counts as absent: the default seed 1
    d["flow"][0]["cc"] = None  # default controller: reno
    r = plait.run(d)
    assert r.seed == 1
    assert set(r.flows.cc) == {"reno"}


def test_seed_is_recorded_and_seed_argument_overrides(scenario):
    assert plait.run(scenario).seed == 5
    r9 = plait.run(scenario, seed=9)
    assert r9.seed == 9
    assert plait.run(scenario_dict(), seed=9).seed == 9
    # seed= replaces the scenario's seed, even one set by an override.
    assert plait.run(scenario, seed=9, overrides={"simulation.seed": 4}).seed == 9


def test_same_seed_is_deterministic(scenario):
    assert_same_tables(plait.run(scenario), plait.run(scenario))
    assert_same_tables(plait.run(scenario, seed=123), plait.run(scenario, seed=123))


def test_different_seed_changes_uniform_start_times(scenario):
    a = plait.run(scenario, seed=1)
    b = plait.run(scenario, seed=2)
    assert (a.flows.start_s.to_numpy() != b.flows.start_s.to_numpy()).all()
    assert a.flows.start_s.between(0, 1).all() and b.flows.start_s.between(0, 1).all()


def test_mapping_override_changes_controller(scenario):
    r = plait.run(scenario, overrides={"flow.bulk.cc": "cubic"})
    assert set(r.flows.cc) == {"cubic"}
    assert r.seed == 5
    assert not r.flows.goodput_bps.equals(plait.run(scenario).flows.goodput_bps)


def test_list_override_sets_seed(scenario):
    listed = plait.run(scenario, overrides=["simulation.seed=4"])
    assert listed.seed == 4
    mapped = plait.run(scenario, overrides={"simulation.seed": 4})
    assert_same_tables(listed, mapped)
    assert_same_tables(listed, plait.run(scenario, seed=4))


def test_overrides_apply_in_order_and_accept_python_values(scenario):
    r = plait.run(
        scenario,
        overrides=["flow.bulk.cc=cubic", "flow.bulk.cc=aimd", "flow.bulk.count=2"],
    )
    assert set(r.flows.cc) == {"aimd"}
    assert r.flows.name.tolist() == ["bulk.0", "bulk.1"]
    r = plait.run(scenario, overrides={"simulation.duration": 2.5, "tcp.sack": False})
    assert r.duration_s == 2.5


def test_override_with_toml_table_string(scenario):
    droptail = plait.run(scenario)
    red = plait.run(scenario, overrides={"link.bottleneck.queue": '{kind="red", packets=100}'})
    forward = red.links.iloc[2]
    assert forward["name"] == "bottleneck" and forward.direction == "forward"
    assert forward.max_queue_packets <= 100
    # RED keeps the average queue near its 5..15 packet thresholds, far below a full
    # 50-packet drop-tail buffer.
    assert forward.mean_queue_packets < droptail.links.iloc[2].mean_queue_packets


def test_progress_callback(scenario):
    calls = []
    plait.run(scenario, progress=lambda now, total: calls.append((now, total)))
    assert len(calls) > 1
    assert all(total == 3.0 for _, total in calls)
    nows = [now for now, _ in calls]
    assert nows == sorted(nows)
    assert nows[-1] == 3.0


# --- summary and files ---------------------------------------------------------------------------


def test_summary_is_json_and_deterministic(scenario):
    a = plait.run(scenario).summary()
    b = plait.run(scenario).summary()
    assert set(a) == SUMMARY_KEYS
    text = json.dumps(a, allow_nan=False)  # NaN (e.g. completion_s) became None
    assert json.loads(text)["seed"] == 5
    assert [f["name"] for f in a["flows"]] == ["bulk.0", "bulk.1", "bulk.2"]
    assert set(a["flows"][0]) == set(FLOW_COLUMNS)
    assert set(a["links"][0]) == set(LINK_COLUMNS)
    assert all(f["completion_s"] is None for f in a["flows"])
    assert isinstance(a["wall_seconds"], float)
    a.pop("wall_seconds")
    b.pop("wall_seconds")
    assert a == b
    other = plait.run(scenario, seed=6).summary()
    other.pop("wall_seconds")
    assert other != a


def test_jain_fairness_is_nan_without_goodput(tmp_path, scenario_toml):
    # Transfers that end inside the warm-up leave every goodput at zero: Jain's index is 0/0,
    # NaN in the result and None in the summary, not a perfect 1.
    text = scenario_toml.replace(
        'start = { uniform = ["0s", "1s"] }', 'start = "0s"\nbytes = "10KB"'
    )
    r = plait.run(write(tmp_path, "short.toml", text))
    assert (r.flows.goodput_bps == 0).all()
    assert math.isnan(r.jain_fairness)
    assert r.summary()["jain_fairness"] is None


def test_to_json_writes_valid_json(scenario, tmp_path):
    r = plait.run(scenario)
    out = tmp_path / "nested" / "summary.json"
    r.to_json(out)
    text = out.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data == json.loads(json.dumps(r.summary()))
    assert data["seed"] == 5
    assert "NaN" not in text
    assert [p.name for p in out.parent.iterdir()] == ["summary.json"]  # no temporary left


def test_to_parquet_writes_tables_with_seed(scenario, tmp_path):
    r = plait.run(scenario, seed=8)
    out = tmp_path / "tables"
    r.to_parquet(out)
    assert sorted(p.name for p in out.iterdir()) == PARQUET_NAMES
    for name in ("flows", "links", "paths", *SERIES):
        back = pd.read_parquet(out / f"{name}.parquet")
        assert (back.seed == 8).all()
        ours = getattr(r, name)
        if len(ours):
            pd.testing.assert_frame_equal(back.drop(columns="seed"), ours)
        else:  # an empty categorical comes back without its categories
            assert list(back.columns) == [*ours.columns, "seed"] and len(back) == 0


def test_to_parquet_without_series_writes_empty_tables(unsampled, tmp_path):
    # An empty flow_series.parquet replaces one left by an earlier, sampled run in the same
    # folder: the folder never mixes two runs.
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "flow_series.parquet").write_bytes(b"from an earlier run")
    r = plait.run(unsampled)
    r.to_parquet(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == PARQUET_NAMES
    assert len(pd.read_parquet(tmp_path / "out" / "flow_series.parquet")) == 0
    flows = pd.read_parquet(tmp_path / "out" / "flows.parquet")
    assert list(flows.columns) == [*FLOW_COLUMNS, "seed"]
    assert (flows.seed == 5).all()


# --- errors and validation -----------------------------------------------------------------------


def test_scenario_error_is_value_error():
    assert issubclass(plait.ScenarioError, ValueError)


def test_unknown_controller_names_file_and_field(tmp_path, scenario_toml):
    path = write(tmp_path, "bad.toml", scenario_toml.replace('cc = "reno"', 'cc = "renoo"'))
    with pytest.raises(plait.ScenarioError) as info:
        plait.run(path)
    message = str(info.value)
    assert str(path) in message
    assert "flow[0].cc" in message
    assert "unknown controller 'renoo'" in message
    known = sorted(
        e["name"] for e in json.loads(plait._core.catalog_json()) if e["category"] == "controller"
    )
    assert {"aimd", "cubic", "reno"} <= set(known)
    assert f"(known: {', '.join(known)})" in message
    assert info.value.path == "flow[0].cc"
    assert info.value.file == str(path)
    with pytest.raises(plait.ScenarioError, match=r"flow\[0\]\.cc: unknown controller"):
        plait.validate(path)


def test_unknown_field_suggests_the_right_one(tmp_path, scenario_toml):
    path = write(tmp_path, "typo.toml", scenario_toml.replace("queue = {", "qeue = {"))
    with pytest.raises(plait.ScenarioError) as info:
        plait.validate(path)
    message = str(info.value)
    assert message.startswith(f"{path}: link[1].qeue: unknown field")
    assert "did you mean 'queue'?" in message


def test_toml_syntax_error_names_file(tmp_path):
    path = write(tmp_path, "broken.toml", "[simulation\nduration = 1\n")
    with pytest.raises(plait.ScenarioError, match="broken.toml"):
        plait.run(path)


def test_dict_error_names_field():
    d = scenario_dict()
    d["link"][1]["rate"] = "10MBps"
    with pytest.raises(plait.ScenarioError, match=r"^<dict>: link\[1\]\.rate: "):
        plait.run(d)


def test_route_error_names_flow():
    d = scenario_dict()
    for link in d["link"]:
        link["duplex"] = False  # no way back for the ACKs
    with pytest.raises(plait.ScenarioError, match=r"flow\[0\]\.dst: .*ACK"):
        plait.validate(d)


def test_missing_file_raises_scenario_error(tmp_path):
    missing = tmp_path / "does-not-exist.toml"
    for call in (plait.run, plait.validate):
        with pytest.raises(plait.ScenarioError) as info:
            call(missing)
        assert str(missing) in str(info.value)
        assert isinstance(info.value, ValueError)


def test_override_of_missing_entry(scenario):
    with pytest.raises(plait.ScenarioError) as info:
        plait.run(scenario, overrides={"flow[9].cc": "cubic"})
    assert "flow[9]" in str(info.value)
    assert "there is no flow[9] (1 flow)" in str(info.value)
    with pytest.raises(plait.ScenarioError, match="there is no flow named 'nosuch'"):
        plait.run(scenario, overrides=["flow.nosuch.cc=cubic"])


def test_override_with_bad_value_names_the_override(scenario):
    with pytest.raises(plait.ScenarioError) as info:
        plait.validate(scenario, overrides={"flow.bulk.cc": "renoo"})
    message = str(info.value)
    assert "flow[0].cc: unknown controller 'renoo'" in message
    assert "--set flow.bulk.cc=renoo" in message


def test_override_without_equals_sign(scenario):
    with pytest.raises(ValueError, match="expected key.path=value"):
        plait.run(scenario, overrides=["simulation.seed"])


def test_negative_seed_rejected(scenario):
    with pytest.raises(ValueError, match="seed"):
        plait.run(scenario, seed=-1)


def test_validate_returns_counts(scenario):
    info = plait.validate(scenario)
    assert info == {
        "nodes": 3,
        "links": 2,
        "flows": 3,
        "duration_s": 3.0,
        "warmup_s": 1.0,
        "seed": 5,
        "warnings": [],
    }
    assert plait.validate(scenario_dict()) == info
    assert plait.validate(scenario, overrides={"flow.bulk.count": 7})["flows"] == 7


def test_dumbbell_file_validates_as_written():
    info = plait.validate(DUMBBELL)
    assert {k: info[k] for k in ("nodes", "links", "flows", "seed")} == {
        "nodes": 4,
        "links": 3,
        "flows": 10,
        "seed": 1,
    }
    assert info["duration_s"] == pytest.approx(60.0, rel=1e-12)
    assert info["warmup_s"] == pytest.approx(10.0, rel=1e-12)


def test_parallel_tcp_scenario_validates():
    info = plait.validate(PARALLEL_TCP, overrides={"flow.tcp.count": 4})
    assert info["flows"] == 4
    assert (info["duration_s"], info["warmup_s"]) == (2000.0, 1000.0)


# --- known product bugs ----------------------------------------------------------------------


def test_json_scenario_file(tmp_path):
    path = write(tmp_path, "small.json", json.dumps(scenario_dict()))
    assert_same_tables(plait.run(path), plait.run(scenario_dict()))


def test_mapping_override_with_dict_value(scenario):
    as_text = plait.run(scenario, overrides={"link.bottleneck.queue": '{kind="red", packets=100}'})
    as_dict = plait.run(
        scenario, overrides={"link.bottleneck.queue": {"kind": "red", "packets": 100}}
    )
    assert_same_tables(as_dict, as_text)


def test_seed_too_large_is_value_error(scenario):
    with pytest.raises(ValueError, match="seed"):
        plait.run(scenario, seed=2**64)


def test_seconds_are_reported_exactly(scenario):
    assert plait.validate(DUMBBELL)["duration_s"] == 60.0
    r = plait.run(scenario, overrides={"flow.bulk.start": "0.3s"})
    assert r.flows.start_s.tolist() == [0.3, 0.3, 0.3]


# --- MPTCP: the trace of scheduler decisions --------------------------------------------------

MPTCP_TOML = """
[simulation]
duration = "20s"

[[link]]
name = "p1"
from = "h1"
to = "h2"
rate = "10Mbps"
delay = "10ms"
[[link]]
name = "a2"
from = "h1"
to = "r2"
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "p2"
from = "r2"
to = "h2"
rate = "10Mbps"
delay = "30ms"

[[flow]]
name = "mp"
kind = "mptcp"
src = "h1"
dst = "h2"
bytes = "1MB"
scheduler = { kind = "capacity", gamma = 0.5, delta = 1.0 }
trace_picks = true
subflows = [ { route = ["h1", "h2"] }, { route = ["h1", "r2", "h2"] } ]
"""


def test_picks_table_of_an_mptcp_flow(tmp_path):
    path = tmp_path / "mp.toml"
    path.write_text(MPTCP_TOML)
    r = plait.run(path)
    picks = r.picks
    assert list(picks.columns) == PICK_COLUMNS
    assert len(picks) > 500
    assert set(picks.flow) == {"mp"}
    assert set(picks.reason) <= {"uncongested", "least_occupied", "all_congested"}
    sent = picks[picks.copies > 0]
    assert set(sent.subflow) == {0.0, 1.0}
    new = sent[sent.reinjection == 0]
    # Every new segment picked once: the DSNs start at 0 and cover the megabyte.
    assert new.dsn.is_monotonic_increasing and new.dsn.iloc[0] == 0
    assert new.dsn.iloc[-1] < 1_000_000 <= new.dsn.iloc[-1] + 1460
    assert picks[picks.copies == 0].subflow.isna().all()
    # Off unless asked for; written with the other tables.
    off = plait.run(path, overrides={"flow.mp.trace_picks": False})
    assert len(off.picks) == 0
    r.to_parquet(tmp_path / "out")
    assert len(pd.read_parquet(tmp_path / "out" / "picks.parquet")) == len(picks)


def test_trace_drops_fills_the_drops_table(tmp_path):
    """Off by default (an empty table with its columns); on, one row per dropped packet with
    the flow's and the link's names."""
    scenario = {
        "simulation": {"duration": "5s", "seed": 2},
        "link": [
            {
                "name": "b",
                "from": "s",
                "to": "d",
                "rate": "10Mbps",
                "delay": "10ms",
                "loss": {"kind": "bernoulli", "p": 0.02},
            }
        ],
        "flow": [{"name": "t", "kind": "tcp", "src": "s", "dst": "d"}],
    }
    off = plait.run(scenario)
    assert off.drops.empty
    assert list(off.drops.columns)[:3] == ["time_s", "flow", "link"]
    scenario["simulation"]["trace_drops"] = True
    on = plait.run(scenario)
    assert len(on.drops) == on.flows.drops.sum() > 0
    assert set(on.drops.flow.astype(str)) == {"t"}
    assert set(on.drops.link.astype(str)) == {"b"} and set(on.drops.cause) == {"loss"}
    on.to_parquet(tmp_path)
    assert len(pd.read_parquet(tmp_path / "drops.parquet")) == len(on.drops)


# ---- Issue 34: generated names, shared paths, values from Python (items 4, 5 and 20) --------


def two_paths(flows: list[dict]) -> dict:
    """h1 -> r -> h2 over two 5 ms links, and a direct 20 ms link h1 -> h2."""
    return {
        "simulation": {"duration": "1s", "seed": 3},
        "link": [
            {"name": "a", "from": "h1", "to": "r", "rate": "10Mbps", "delay": "5ms"},
            {"name": "b", "from": "r", "to": "h2", "rate": "10Mbps", "delay": "5ms"},
            {"name": "c", "from": "h1", "to": "h2", "rate": "10Mbps", "delay": "20ms"},
        ],
        "flow": flows,
    }


def test_flow_named_like_an_application_flow_is_refused():
    """An MPAT flow `agg` with two shares names its application flows `agg.0` and `agg.1`: a
    TCP flow `agg.0` beside it ran, and `flows` had two rows `agg.0`."""
    scenario = two_paths(
        [
            {"name": "agg", "kind": "mpat", "src": "h1", "dst": "h2", "shares": [1, 1]},
            {"name": "agg.0", "kind": "tcp", "src": "h1", "dst": "h2"},
        ]
    )
    for call in (plait.validate, plait.run):
        with pytest.raises(plait.ScenarioError) as info:
            call(scenario)
        assert str(info.value).startswith(
            "<dict>: flow[1].name: duplicate flow name 'agg.0' (also application flow 0 of the "
            "mpat flow 'agg' at flow[0], one per share)"
        )
        assert info.value.path == "flow[1].name"


def test_subflows_sharing_a_path_warn():
    """Subflows without routes all take the least-delay path (here the two-hop 10 ms one, not
    the one-hop 20 ms link): validate lists a warning, run issues a ScenarioWarning."""
    mptcp = {"name": "mp", "kind": "mptcp", "src": "h1", "dst": "h2", "subflows": [{}, {}]}
    scenario = two_paths([mptcp])
    (warning,) = plait.validate(scenario)["warnings"]
    assert warning.startswith(
        "<dict>: flow[0].subflows: subflows 0, 1 all take the path h1 -> r -> h2 (a subflow "
        "without a route takes the path of least propagation delay, here 10ms)"
    )
    with pytest.warns(plait.ScenarioWarning) as caught:
        result = plait.run(scenario)
    assert [str(w.message) for w in caught] == [warning]
    assert list(result.paths.route) == ["h1>r>h2", "h1>r>h2"]
    mptcp["subflows"] = [{"route": ["r"]}, {"route": ["h1", "h2"]}]
    assert plait.validate(scenario)["warnings"] == []


def test_non_finite_numbers_in_a_dict_name_the_field():
    """NaN went through json.dumps as a bare NaN token: "JSON syntax error at line 1, column
    29", though no JSON was written."""
    for bad, shown in [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")]:
        d = scenario_dict()
        d["simulation"]["duration"] = bad
        for call in (plait.validate, plait.run):
            with pytest.raises(plait.ScenarioError) as info:
                call(d)
            assert str(info.value) == (
                f"<dict>: simulation.duration: must be a finite number, got {shown}"
            )
            assert (info.value.file, info.value.path) == ("<dict>", "simulation.duration")
    d = scenario_dict()
    d["flow"][0]["start"]["uniform"][1] = math.nan
    with pytest.raises(plait.ScenarioError, match=r"^<dict>: flow\[0\]\.start\.uniform\[1\]: "):
        plait.validate(d)


def test_numpy_values_in_a_dict_are_numbers_and_lists():
    """numpy scalars and arrays stand for the numbers and lists they hold (they raised a bare
    TypeError); other objects are refused naming the field."""
    np = pytest.importorskip("numpy")
    d = scenario_dict()
    d["simulation"]["seed"] = np.int64(5)
    d["simulation"]["duration"] = np.float64(3.0)
    d["link"][1]["queue"]["packets"] = np.uint16(50)
    d["flow"][0]["count"] = np.int32(3)
    d["flow"][0]["route"] = np.array(["src", "r1", "dst"])
    d["flow"][0]["start"] = {"uniform": np.array([0.0, 1.0])}
    assert plait.validate(d) == plait.validate(scenario_dict())
    assert plait.run(d).summary()["flows"] == plait.run(scenario_dict()).summary()["flows"]
    d["simulation"]["duration"] = np.float32("nan")
    with pytest.raises(plait.ScenarioError, match=r"simulation\.duration: must be a finite"):
        plait.validate(d)
    d = scenario_dict()
    d["flow"][0]["route"] = {"src", "dst"}
    with pytest.raises(plait.ScenarioError) as info:
        plait.validate(d)
    assert str(info.value).startswith(
        "<dict>: flow[0].route: expected a string, number, boolean, list or dict, got set"
    )
    d = scenario_dict()
    d["link"][0][3] = 1
    with pytest.raises(plait.ScenarioError, match=r"^<dict>: link\[0\]: keys must be strings"):
        plait.validate(d)
    # Overrides take numpy values too.
    info = plait.validate(scenario_dict(), overrides={"flow.bulk.count": np.int64(2)})
    assert info["flows"] == 2


def test_uncoupled_controller_takes_parameters():
    """`{ name = "uncoupled:cubic", beta = 0.8 }` was an unknown coupled controller."""
    mptcp = {
        "name": "mp",
        "kind": "mptcp",
        "src": "h1",
        "dst": "h2",
        "cc": {"name": "uncoupled:cubic", "beta": 0.8},
        "subflows": [{"route": ["r"]}, {"route": ["h1", "h2"]}],
    }
    result = plait.run(two_paths([mptcp]))
    assert result.flows.cc[0] == "uncoupled:cubic"
    mptcp["cc"] = {"name": "uncoupled:cubic", "beta": 1.5}
    with pytest.raises(plait.ScenarioError, match=r"flow\[0\]\.cc\.beta: must be between 0 and 1"):
        plait.validate(two_paths([mptcp]))


def test_subflow_joining_after_the_end_is_refused():
    mptcp = {
        "name": "mp",
        "kind": "mptcp",
        "src": "h1",
        "dst": "h2",
        "start": "500ms",
        "subflows": [{"route": ["r"]}, {"route": ["h1", "h2"], "start": "600ms"}],
    }
    with pytest.raises(plait.ScenarioError) as info:
        plait.validate(two_paths([mptcp]))
    assert str(info.value) == (
        "<dict>: flow[0].subflows[1].start: the subflow would join at 1100ms (the flow "
        "starts at 500ms, the subflow 600ms later), not before the end of the simulation (1s)"
    )


def test_tiny_and_huge_numbers_print_compactly():
    """5e-324 was written with 324 digits."""
    d = scenario_dict()
    d["flow"][0]["cc"] = {"name": "cubic", "beta": -5e-324}
    with pytest.raises(plait.ScenarioError) as info:
        plait.validate(d)
    assert str(info.value) == (
        "<dict>: flow[0].cc.beta: must be between 0 and 1 (exclusive), got -5e-324"
    )


def test_bidirectional_controls_in_names_are_escaped():
    """A right-to-left override (U+202E) in a name reversed the rest of the printed line."""
    d = scenario_dict()
    d["flow"][0]["src"] = "s\u202erc"
    with pytest.raises(plait.ScenarioError) as info:
        plait.validate(d)
    assert "unknown node 's\\u{202e}rc'" in str(info.value)
    assert "\u202e" not in str(info.value)
