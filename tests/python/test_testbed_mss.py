"""A TCP flow's `mss` on the kernel testbed (docs/testbed.md): the sender clamps its
connection's MSS before connecting (TCP_MAXSEG), so that its segments carry the scenario's
payload bytes, and the run reports the kernel's `tcpi_snd_mss`. An `mss` the kernel cannot
give here, or one on an MPTCP flow, is refused naming the flow and the key."""

from __future__ import annotations

import json

import pytest
from _testbed_skip import needs_testbed
from plait import _core
from plait.testbed import Refusal, plan_scenario
from plait.testbed.plan import MAX_MSS, MIN_MSS
from test_testbed import SCENARIO, _mptcp, _plait

BASE = SCENARIO.format(duration="6s", warmup="2s", buffer=50)
TWO_FLOWS = (
    BASE
    + """
[[flow]]
name = "short"
kind = "tcp"
cc = "reno"
src = "a"
dst = "b"
mss = 1428
"""
)


def _plan(text: str):
    return plan_scenario(json.loads(_core.canonical_scenario(text, "s.toml", "toml", [])), None)


def test_a_flows_mss_or_the_tcp_sections_goes_to_its_sender():
    plan = _plan(TWO_FLOWS)
    assert [(f.name, f.mss) for f in plan.flows] == [("bulk", None), ("short", 1428)]
    section = _plan("[tcp]\nmss = 1000\n" + TWO_FLOWS)
    assert [(f.name, f.mss) for f in section.flows] == [("bulk", 1000), ("short", 1428)]


@pytest.mark.parametrize("mss, key", [(MAX_MSS + 1, "mss"), (MIN_MSS - 1, "mss"), (9000, "mss")])
def test_an_mss_the_kernel_cannot_give_is_refused(mss, key):
    with pytest.raises(Refusal, match=rf"flow short: {key}: {mss} bytes per segment"):
        _plan(TWO_FLOWS.replace("mss = 1428", f"mss = {mss}"))
    with pytest.raises(Refusal, match=rf"flow bulk: \[tcp\] mss: {mss} bytes per segment"):
        _plan(f"[tcp]\nmss = {mss}\n" + BASE)
    assert _plan(TWO_FLOWS.replace("mss = 1428", f"mss = {MAX_MSS}")).flows[1].mss == MAX_MSS


def test_an_mptcp_flows_mss_is_refused():
    text = _mptcp().replace('profile = "linux"', 'profile = "linux"\nmss = 1000')
    with pytest.raises(Refusal, match=r"flow mp: \[tcp\] mss: not supported for MPTCP flows"):
        _plan(text)


def test_the_command_line_refusal_is_one_line(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(TWO_FLOWS.replace("mss = 1428", "mss = 1460"))
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "x.json"))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "flow short: mss: 1460 bytes per segment" in lines[0], out.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
@needs_testbed
def test_the_kernel_sends_the_mss_asked_for(tmp_path, testbed_turn):
    p = tmp_path / "s.toml"
    p.write_text('[tcp]\nprofile = "linux"\n' + TWO_FLOWS)
    out = _plait("testbed", "run", str(p), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r.json").read_text())
    sockets = summary["testbed"]["tcp_info"]
    # The kernel's own MSS for the flow without one (1500-byte MTU, timestamps), the clamp
    # for the other.
    assert sockets["bulk"]["snd_mss"] == 1448
    assert sockets["short"]["snd_mss"] == 1428
    assert all(f["client_error"] is None for f in summary["flows"])
    assert all(f["goodput_bps"] > 0 for f in summary["flows"])
