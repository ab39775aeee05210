"""`plait testbed`: scenarios on the real kernel through plait's link emulator.

The refusals run anywhere; the runs need root, /dev/net/tun and the testbed binaries
(`make build`), and are skipped with a one-line reason otherwise. Bounds are loose: CI is a
loaded 2-core machine; docs/testbed.md has the numbers measured on a quiet one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _testbed_skip import needs_testbed
from plait import _core
from plait.testbed import Refusal, plan_scenario
from plait.testbed.runner import NETNS_DIR, _Run

ROOT = Path(__file__).resolve().parents[2]
PLAIT = [sys.executable, "-m", "plait.cli"]

SCENARIO = """
[simulation]
duration = "{duration}"
warmup = "{warmup}"

[[link]]
name = "bottleneck"
from = "a"
to = "b"
rate = "20Mbps"
delay = "10ms"
queue = {{ packets = {buffer} }}

[[flow]]
name = "bulk"
kind = "tcp"
cc = "reno"
src = "a"
dst = "b"
"""


def _scenario(tmp_path: Path, duration="8s", warmup="3s", buffer=100, extra="") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO.format(duration=duration, warmup=warmup, buffer=buffer) + extra)
    return p


def _plan(text: str):
    return plan_scenario(json.loads(_core.canonical_scenario(text, "s.toml", "toml", [])), None)


def _ours() -> list[str]:
    return [e.name for e in NETNS_DIR.iterdir()] if NETNS_DIR.is_dir() else []


def _plait(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PLAIT, *args], capture_output=True, text=True, cwd=ROOT, timeout=60, **kw
    )


# -- refusals (no root needed: they come before anything is set up) -----------------------


@pytest.mark.parametrize(
    "extra, expected",
    [
        (
            '\n[[flow]]\nname = "rate"\nkind = "tfrc"\nsrc = "a"\ndst = "b"\n',
            "flow rate: kind `tfrc` is not supported",
        ),
        ('\n[tcp]\nhost_jitter = "5us"\n', "[tcp]: `host_jitter` is not supported"),
    ],
)
def test_unsupported_scenarios_are_refused_naming_the_key(tmp_path, extra, expected):
    p = _scenario(tmp_path, extra=extra)
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "x.json"))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], out.stderr
    assert not (tmp_path / "x.json").exists()


def test_the_kernel_tests_share_one_skip_and_one_turn():
    """The skip of the kernel tests (`needs_testbed`, _testbed_skip.py) and their turn at the
    machine (`testbed_turn`, conftest.py) are written once: a module that wrote its own would
    skip or wait by rules of its own (test_linux_fidelity_kernel.py had copies of both)."""
    import ast

    home = {"testbed_turn": "conftest.py", "needs_testbed": "_testbed_skip.py"}
    home["why_not_runnable"] = home["_why_not_runnable"] = "_testbed_skip.py"
    for path in sorted(Path(__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            else:
                continue
            for name in names:
                assert home.get(name, path.name) == path.name, f"{path.name} defines {name}"


def test_pcap_needs_out_and_an_existing_link(tmp_path):
    p = _scenario(tmp_path)
    out = _plait("testbed", "run", str(p), "--pcap", "bottleneck")
    assert out.returncode == 2 and "--pcap: needs --out" in out.stderr
    out = _plait("testbed", "run", str(p), "--pcap", "nope", "--out", str(tmp_path / "o"))
    assert out.returncode == 2 and "--pcap: no link named 'nope'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_kernel_less_controllers_and_fast_links_are_refused():
    # (The threshold-dropper runs: tests/python/test_testbed_events.py.)
    other = SCENARIO.format(duration="5s", warmup="1s", buffer=100).replace(
        'cc = "reno"', 'cc = "vegas"'
    )
    with pytest.raises(Refusal, match="flow bulk: cc `vegas` does not exist"):
        _plan(other)
    fast = SCENARIO.format(duration="5s", warmup="1s", buffer=100).replace("20Mbps", "1Gbps")
    with pytest.raises(Refusal, match="link bottleneck: rate 1Gbps is faster than the emulator"):
        _plan(fast)


def test_plan_routes_queues_and_counts():
    text = SCENARIO.format(duration="5s", warmup="1s", buffer=20).replace(
        'name = "bulk"', 'name = "bulk"\ncount = 3'
    )
    plan = _plan(text)
    assert [f.name for f in plan.flows] == ["bulk.0", "bulk.1", "bulk.2"]
    assert plan.hosts == ["a", "b"]
    fwd, rev = plan.links
    assert (fwd.direction, fwd.rate_bps, fwd.delay_ns, fwd.limit_packets) == (
        "forward",
        20_000_000,
        10_000_000,
        20,
    )
    assert rev.direction == "reverse" and rev.limit_packets == 20
    assert all(f.route == [0] and f.reverse == [1] for f in plan.flows)
    assert len({f.port for f in plan.flows}) == 3


def test_multi_hop_routes_follow_the_least_delay_path():
    text = (ROOT / "experiments" / "linux-fidelity" / "scenario.toml").read_text()
    plan = _plan(text)
    assert plan.hosts == ["src", "dst"]  # routers are inside the emulator, no namespace
    names = [(d.name, d.direction) for d in plan.links]
    (flow,) = plan.flows
    assert [names[i] for i in flow.route] == [
        ("access_src", "forward"),
        ("bottleneck", "forward"),
        ("access_dst", "forward"),
    ]
    assert [names[i] for i in flow.reverse] == [
        ("access_dst", "reverse"),
        ("bottleneck", "reverse"),
        ("access_src", "reverse"),
    ]
    # limit_includes_service = true, packets = 20: 19 places to wait, as in the simulator.
    assert plan.links[2].limit_packets == 19
    assert 0 <= flow.start_ns <= 100_000_000


def test_loss_tables_go_to_the_emulator_with_a_seed_per_direction():
    from plait.testbed.plan import emulator_config

    text = SCENARIO.format(duration="5s", warmup="1s", buffer=100).replace(
        'delay = "10ms"', 'delay = "10ms"\nloss = { kind = "bernoulli", p = 0.01 }'
    )
    cfg = emulator_config(_plan(text), "plait-1-", "/tmp/x", 1)
    fwd, rev = cfg["links"]
    assert fwd["loss"] == {"kind": "bernoulli", "p": 0.01} and "loss" not in rev
    seeds = {emulator_config(_plan(text), "p-", "/x", 1)["links"][0]["loss_seed"] for _ in "ab"}
    assert seeds == {fwd["loss_seed"]}


def test_not_root_is_refused(tmp_path):
    if os.geteuid() != 0:
        out = _plait("testbed", "run", str(_scenario(tmp_path)))
        assert out.returncode == 2 and "needs root" in out.stderr
        return
    # As root: drop to nobody for the child (setpriv, util-linux).
    if not Path("/usr/bin/setpriv").exists():
        pytest.skip("setpriv not found")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*nobody, sys.executable, "-c", "import plait.cli"],
                           capture_output=True, cwd="/", timeout=60)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip("user nobody cannot run this checkout's plait (private folders)")
    # A file nobody can read (pytest's own folders are private to root).
    p = Path(f"/tmp/plait-testbed-notroot-{os.getpid()}.toml")
    p.write_text(_scenario(tmp_path).read_text())
    p.chmod(0o644)
    try:
        out = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *PLAIT, "testbed",
             "run", str(p)],
            capture_output=True, text=True, cwd=ROOT, timeout=60,
        )  # fmt: skip
    finally:
        p.unlink()
    assert out.returncode == 2, out.stderr
    assert "needs root" in out.stderr


# -- runs on the kernel -------------------------------------------------------------------


@needs_testbed
def test_ping_through_an_idle_link_reads_the_configured_rtt(tmp_path, testbed_turn):
    plan = _plan(SCENARIO.format(duration="5s", warmup="1s", buffer=100))
    run = _Run(plan)
    try:
        run.lock()
        run.setup()
        ns = run.namespaces[plan.hosts.index("a")]
        out = subprocess.run(
            ["ip", "netns", "exec", ns, "ping", "-c", "20", "-i", "0.05", "-q",
             plan.addr("b")],
            capture_output=True, text=True, timeout=20,
        )  # fmt: skip
    finally:
        run.cleanup()
    assert out.returncode == 0, out.stdout + out.stderr
    # rtt min/avg/max/mdev = 20.1/20.3/21.0/0.2 ms
    stats = out.stdout.strip().splitlines()[-1].split("=")[1].split()[0].split("/")
    rtt_min, rtt_avg = float(stats[0]), float(stats[1])
    # 2 x 10 ms plus 2 x 33.6 us serialisation of an 84-byte echo at 20 Mb/s = 20.07 ms.
    print(f"ping RTT min {rtt_min} ms, avg {rtt_avg} ms (ideal 20.07 ms)")
    assert 20.0 <= rtt_min <= 23.0
    assert rtt_avg <= 25.0
    assert not [n for n in _ours() if n.startswith(run.prefix)]


@needs_testbed
def test_one_reno_flow_fills_a_100_packet_buffer_link(tmp_path, testbed_turn):
    p = _scenario(tmp_path, duration="8s", warmup="3s", buffer=100)
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"), "--out",
                 str(tmp_path / "tables"), "--set", "simulation.sample_interval=500ms")  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    (flow,) = summary["flows"]
    payload_capacity = 20e6 * 1448 / 1500
    ratio = flow["goodput_bps"] / payload_capacity
    print(f"goodput {flow['goodput_bps'] / 1e6:.3f} Mb/s = {ratio:.3f} of payload capacity")
    print("testbed", summary["testbed"])
    assert ratio >= 0.8
    assert flow["cc"] == "reno" and flow["kernel"] == os.uname().release
    assert flow["throughput_bps"] is None  # the kernel cannot give it: null, not invented
    # Both tables count the window after the warm-up: the flow's drops are the links'.
    assert flow["drops"] == sum(link["drops"] for link in summary["links"])
    assert flow["retransmissions"] is not None and flow["retransmissions"] >= 0
    fwd = summary["links"][0]
    assert fwd["direction"] == "forward" and fwd["max_queue_packets"] <= 100
    # The link's window is the flow's (the emulator snapshots at the window's end, before the
    # endpoints stop): its busy time carries the flow's goodput plus 52 header bytes a packet.
    assert fwd["utilization"] * payload_capacity == pytest.approx(flow["goodput_bps"], rel=0.03)
    tb = summary["testbed"]
    assert tb["lateness_packets"] > 1000 and tb["lateness_p50_us"] >= 0
    assert isinstance(tb["timing_flagged"], bool)
    assert tb["emulator_write_errors"] == 0 and tb["emulator_no_route_packets"] == 0
    assert {f.name for f in (tmp_path / "tables").iterdir()} >= {
        "flows.parquet",
        "links.parquet",
    }
    # The series have plait run's columns; after the warm-up the link is full.
    import pandas as pd

    series = pd.read_parquet(tmp_path / "tables" / "flow_series.parquet")
    sim_columns = ["time_s", "flow", "cwnd_bytes", "srtt_s", "goodput_bps"]
    assert list(series.columns[:5]) == sim_columns
    late = series[series.time_s >= 4.0]
    assert len(late) >= 6
    assert (late.goodput_bps.mean() / payload_capacity) >= 0.8
    assert (late.cwnd_bytes > 20 * 1448).all() and (late.srtt_s >= 0.019).all()
    assert not [n for n in _ours() if n.startswith("plait-")]


@pytest.mark.slow
@needs_testbed
def test_random_loss_on_the_link_is_counted_as_loss(tmp_path, testbed_turn):
    extra = 'delay = "10ms"\nloss = { kind = "bernoulli", p = 0.01 }'
    p = _scenario(tmp_path, duration="4s", warmup="1s")
    p.write_text(p.read_text().replace('delay = "10ms"', extra))
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    fwd, rev = summary["links"]
    (flow,) = summary["flows"]
    print(f"1 % loss: {fwd['loss_drops']} lost of {fwd['tx_packets']}, goodput "
          f"{flow['goodput_bps'] / 1e6:.2f} Mb/s")  # fmt: skip
    # About 1 % of the data packets (a few thousand a run): loose bounds.
    assert 0.002 * fwd["tx_packets"] <= fwd["loss_drops"] <= 0.03 * fwd["tx_packets"]
    assert rev["loss_drops"] == 0
    assert flow["retransmissions"] >= fwd["loss_drops"] // 2


def _pcap_records(path: Path) -> tuple[int, list[tuple[int, bytes]]]:
    """(link type, [(time_ns, packet)]) of a nanosecond libpcap file."""
    import struct

    data = path.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xA1B23C4D
    out, i = [], 24
    while i < len(data):
        sec, nsec, incl, _orig = struct.unpack("<IIII", data[i : i + 16])
        out.append((sec * 10**9 + nsec, data[i + 16 : i + 16 + incl]))
        i += 16 + incl
    return linktype, out


@pytest.mark.slow
@needs_testbed
def test_pcap_holds_what_crossed_the_link_with_real_headers(tmp_path, testbed_turn):
    p = _scenario(tmp_path, duration="3s", warmup="1s")
    out = _plait("testbed", "run", str(p), "--out", str(tmp_path / "o"), "--pcap", "bottleneck",
                 "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    linktype, records = _pcap_records(tmp_path / "o" / "bottleneck.pcap")
    assert linktype == 101  # LINKTYPE_RAW: IPv4 from the header on
    summary = json.loads((tmp_path / "r.json").read_text())
    fwd, rev = summary["links"]
    # Both directions, every packet admitted (the window's counts are a part of them).
    assert len(records) >= fwd["tx_packets"] + rev["tx_packets"]
    syn = records[0][1]
    ihl = (syn[0] & 0xF) * 4
    assert syn[0] >> 4 == 4 and syn[9] == 6  # IPv4, TCP
    assert int.from_bytes(syn[ihl + 2 : ihl + 4], "big") == 5001
    assert syn[ihl + 13] & 0x02  # SYN
    assert (syn[ihl + 12] >> 4) * 4 > 20  # with its options (MSS, SACK-permitted, ...)
    assert max(len(r) for _, r in records) == 1500  # full-sized segments: no GSO
    times = [t for t, _ in records]
    assert abs(times[0] / 1e9 - time.time()) < 60


def _wait_for_namespaces(proc: subprocess.Popen, timeout: float = 15) -> list[str]:
    prefix = f"plait-{proc.pid}-"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [n for n in _ours() if n.startswith(prefix)]
        if len(found) == 2:
            return found
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    raise AssertionError("the run did not create its namespaces")


@needs_testbed
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_cleans_up_and_exits_128_plus_the_signal(tmp_path, sig, code, testbed_turn):
    p = _scenario(tmp_path, duration="30s", warmup="1s")
    proc = subprocess.Popen(
        [*PLAIT, "testbed", "run", str(p), "--json", str(tmp_path / "r.json")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    ours = _wait_for_namespaces(proc)
    time.sleep(1.5)
    # A second run while this one holds the lock is refused, touching nothing.
    second = _plait("testbed", "run", str(p))
    assert second.returncode == 2 and "another plait testbed run" in second.stderr
    assert proc.poll() is None and set(ours) <= set(_ours())
    t = time.monotonic()
    proc.send_signal(sig)
    assert proc.wait(timeout=10) == code
    elapsed = time.monotonic() - t
    print(f"{signal.Signals(sig).name}: exit {code} after {elapsed:.2f} s")
    assert elapsed < 5
    assert not set(ours) & set(_ours())
    assert not (tmp_path / "r.json").exists()


@needs_testbed
def test_kill_9_then_clean_leaves_nothing(tmp_path, testbed_turn):
    p = _scenario(tmp_path, duration="30s", warmup="1s")
    proc = subprocess.Popen(
        [*PLAIT, "testbed", "run", str(p)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    ours = _wait_for_namespaces(proc)
    time.sleep(1.5)
    proc.kill()
    proc.wait(timeout=10)
    assert set(ours) <= set(_ours())  # SIGKILL: nothing could clean up
    out = _plait("testbed", "clean")
    assert out.returncode == 0, out.stderr
    assert not set(ours) & set(_ours())
    # The emulator and endpoints died with their parent (PR_SET_PDEATHSIG): SIGTERM, on
    # which the emulator writes its counters and joins its threads, which on a loaded
    # machine can take a few seconds (CI saw it still there after 0.5 s).
    deadline = time.monotonic() + 20
    while True:
        left = subprocess.run(["pgrep", "-f", "plait-(linkemu|tcpflow) .*plait-testbed-"],
                              capture_output=True, text=True)  # fmt: skip
        if left.stdout.strip() == "" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert left.stdout.strip() == ""


# -- MPTCP ------------------------------------------------------------------------------

MPTCP_SCENARIO = """
[simulation]
duration = "{duration}"
warmup = "{warmup}"

[tcp]
profile = "linux"

[[link]]
name = "p1"
from = "a"
to = "r1"
rate = "10Mbps"
delay = "10ms"
queue = {{ packets = 100 }}

[[link]]
name = "p1b"
from = "r1"
to = "b"
rate = "10Mbps"
delay = "0ms"
queue = {{ packets = 100 }}

[[link]]
name = "p2"
from = "a"
to = "r2"
rate = "10Mbps"
delay = "10ms"
queue = {{ packets = 100 }}

[[link]]
name = "p2b"
from = "r2"
to = "b"
rate = "10Mbps"
delay = "0ms"
queue = {{ packets = 100 }}

[[flow]]
name = "mp"
kind = "mptcp"
src = "a"
dst = "b"
cc = "{cc}"
subflows = [ {{ route = ["r1"] }}, {{ route = ["a", "r2", "b"] }} ]
"""


def _mptcp(duration="8s", warmup="3s", cc="uncoupled:reno") -> str:
    return MPTCP_SCENARIO.format(duration=duration, warmup=warmup, cc=cc)


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ('cc = "uncoupled:reno"', 'cc = "lia"', "flow mp: `cc` = `lia` is a coupled controller"),
        (
            'cc = "uncoupled:reno"',
            'cc = "uncoupled:reno"\nscheduler = "round_robin"',
            "flow mp: `scheduler` = `round_robin` does not exist in this kernel",
        ),
        (
            '{ route = ["a", "r2", "b"] }',
            "{ }",
            "flow mp: `subflows[1]` has no `route`",
        ),
    ],
)
def test_mptcp_needs_uncoupled_cc_the_default_scheduler_and_routes(old, new, expected):
    with pytest.raises(Refusal, match=expected.replace("[", r"\[").replace("]", r"\]")):
        _plan(_mptcp().replace(old, new))


def test_mptcp_coupled_cc_is_refused_in_one_line_before_set_up(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(_mptcp(cc="olia"))
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "x.json"))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "flow mp: `cc` = `olia` is a coupled controller" in lines[0]
    assert not (tmp_path / "x.json").exists()


def test_mptcp_plan_gives_each_subflow_its_own_address_pair_and_route():
    from plait.testbed.plan import emulator_config

    plan = _plan(_mptcp(cc="uncoupled:cubic"))
    (f,) = plan.flows
    assert f.cc == "cubic" and [s[2] for s in f.subflows] == [["a", "r1", "b"], ["a", "r2", "b"]]
    cfg = emulator_config(plan, "ns-", "/tmp", None)
    assert [h["addrs"] for h in cfg["hosts"]] == [["10.99.0.1", "10.99.201.1"], ["10.99.0.2"]]
    names = [f"{d.name}:{d.direction}" for d in plan.links]
    routes = {(r["src"], r["dst"]): [names[i] for i in r["links"]] for r in cfg["routes"]}
    assert routes[("10.99.0.1", "10.99.0.2")] == ["p1:forward", "p1b:forward"]
    assert routes[("10.99.201.1", "10.99.0.2")] == ["p2:forward", "p2b:forward"]
    assert routes[("10.99.0.2", "10.99.201.1")] == ["p2b:reverse", "p2:reverse"]


@pytest.mark.slow
@needs_testbed
def test_mptcp_over_two_disjoint_paths_uses_both(tmp_path, testbed_turn):
    if not os.path.isdir("/proc/sys/net/mptcp"):
        pytest.skip("this kernel has no MPTCP")
    p = tmp_path / "s.toml"
    p.write_text(_mptcp())
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    (flow,) = summary["flows"]
    paths = summary["paths"]
    print("goodput", flow["goodput_bps"], [(q["route"], q["wire_bytes"]) for q in paths])
    assert flow["kind"] == "mptcp" and flow["cc"] == "uncoupled:reno"
    assert [q["route"] for q in paths] == ["a>r1>b", "a>r2>b"]
    total = sum(q["wire_bytes"] for q in paths)
    assert all(q["wire_bytes"] > 0.2 * total for q in paths)
    # More than one path's payload capacity (10 Mb/s × 1448/1500): both carry data.
    assert flow["goodput_bps"] > 1.1 * 10e6 * 1448 / 1500
    assert flow["retransmissions"] is None  # TCP_INFO is one subflow's: null, not invented
    # Per-subflow TCP state from `ss` in the sender's namespace: each subflow sent about what
    # its path carried (payload, so less than the wire's bytes) and its RTT is the path's.
    for q in paths:
        assert 0.5 * q["wire_bytes"] < q["bytes_sent"] <= 1.05 * q["wire_bytes"], q
        assert q["retransmissions"] >= 0 and 0.019 <= q["rtt_min_s"] <= q["rtt_mean_s"] < 0.5
    assert summary["testbed"]["emulator_no_route_packets"] == 0
    assert not [n for n in _ours() if n.startswith("plait-")]
