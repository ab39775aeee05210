"""The `linux` and `rfc` TCP profiles through the Python API: defaults, overrides, the clear
errors for bad settings, host timing noise making seeds matter, and the DropTail limit
convention."""

from __future__ import annotations

import plait
import pytest


def dumbbell(tcp: dict | None = None, flow: dict | None = None, queue: dict | None = None) -> dict:
    """Three bulk flows through a 10 Mb/s bottleneck with a small buffer, no random start."""
    scenario = {
        "simulation": {"duration": "6s", "warmup": "1s", "seed": 1},
        "link": [
            {"name": "access", "from": "src", "to": "r1", "rate": "100Mbps", "delay": "1ms"},
            {
                "name": "bottleneck",
                "from": "r1",
                "to": "dst",
                "rate": "10Mbps",
                "delay": "10ms",
                "queue": {"kind": "droptail", **(queue or {"packets": 8})},
            },
        ],
        "flow": [
            {"name": "bulk", "count": 3, "kind": "tcp", "src": "src", "dst": "dst", **(flow or {})}
        ],
    }
    if tcp is not None:
        scenario["tcp"] = tcp
    return scenario


def goodputs(result: plait.Result) -> list[float]:
    return [float(x) for x in result.flows.goodput_bps]


def test_linux_profile_runs_cubic_and_fills_the_bottleneck():
    r = plait.run(dumbbell({"profile": "linux"}))
    assert set(r.flows.cc) == {"cubic"}
    assert sum(goodputs(r)) > 8e6


def test_a_setting_given_explicitly_wins_over_the_profile():
    r = plait.run(dumbbell({"profile": "linux"}, flow={"cc": "reno"}))
    assert set(r.flows.cc) == {"reno"}
    # The same in [tcp] wins too, and the flow's own setting wins over [tcp].
    r = plait.run(dumbbell({"profile": "linux", "sack": False}, flow={"profile": "rfc"}))
    assert set(r.flows.cc) == {"reno"}


def test_profiles_differ_and_rfc_is_the_default():
    default = plait.run(dumbbell())
    rfc = plait.run(dumbbell({"profile": "rfc"}))
    linux = plait.run(dumbbell({"profile": "linux"}))
    assert goodputs(default) == goodputs(rfc)
    assert goodputs(linux) != goodputs(rfc)


def test_host_jitter_makes_seeds_independent_replications():
    # With exact timing (no random draw), the seed changes nothing; with the default send
    # jitter, the linux profile's host jitter or an explicit one every seed gives another
    # result.
    plain = [goodputs(plait.run(dumbbell({"exact_timing": True}), seed=s)) for s in (1, 2, 3)]
    assert plain[0] == plain[1] == plain[2]
    default = [goodputs(plait.run(dumbbell(), seed=s)) for s in (1, 2, 3)]
    assert len({tuple(g) for g in default}) == 3
    jittered = [goodputs(plait.run(dumbbell({"host_jitter": "5us"}), seed=s)) for s in (1, 2, 3)]
    assert len({tuple(g) for g in jittered}) == 3
    linux = [goodputs(plait.run(dumbbell({"profile": "linux"}), seed=s)) for s in (1, 2, 3)]
    assert len({tuple(g) for g in linux}) == 3
    # Same seed, same result.
    again = goodputs(plait.run(dumbbell({"profile": "linux"}), seed=2))
    assert again == linux[1]


def test_host_stalls_cost_throughput():
    calm = sum(goodputs(plait.run(dumbbell({"host_jitter": "5us"}))))
    # A 20 ms stall 10 times a second at each end: about a fifth of the time silent.
    stalled = sum(
        goodputs(
            plait.run(
                dumbbell(
                    {
                        "host_jitter": "5us",
                        "host_stall_rate": 10,
                        "host_stall_duration": "20ms",
                    }
                )
            )
        )
    )
    assert stalled < 0.95 * calm


@pytest.mark.parametrize(
    ("tcp", "message"),
    [
        ({"profile": "bsd"}, r"tcp\.profile"),
        ({"ssthresh_basis": "pipe"}, r"tcp\.ssthresh_basis"),
        ({"recovery_window": "prr2"}, r"tcp\.recovery_window"),
        ({"host_jitter": "-1us"}, r"tcp\.host_jitter"),
        ({"host_jitter": "5s"}, r"tcp\.host_jitter"),
        ({"host_stall_duration": "0s"}, r"tcp\.host_stall_duration"),
        ({"host_stall_rate": -1}, r"tcp\.host_stall_rate"),
        ({"delayed_ack_style": "bsd"}, r"tcp\.delayed_ack_style"),
    ],
)
def test_bad_settings_name_the_field(tcp, message):
    with pytest.raises(plait.ScenarioError, match=message):
        plait.run(dumbbell(tcp))


def test_limit_including_service_is_one_waiting_place_less():
    waiting_only = plait.run(dumbbell(queue={"packets": 7}))
    including = plait.run(dumbbell(queue={"packets": 8, "limit_includes_service": True}))
    assert goodputs(waiting_only) == goodputs(including)
    with pytest.raises(plait.ScenarioError, match="limit_includes_service"):
        plait.run(dumbbell(queue={"bytes": "12kB", "limit_includes_service": True}))


def test_cubic_hystart_choices_are_checked():
    with pytest.raises(plait.ScenarioError, match="hystart"):
        plait.run(dumbbell(flow={"cc": {"name": "cubic", "hystart": "maybe"}}))
    # A deep buffer: without HyStart slow start runs until the buffer overflows; with it, the
    # delay test ends slow start as the queue builds, before any loss.
    deep = {"packets": 400}
    on = plait.run(dumbbell(flow={"cc": {"name": "cubic", "hystart": "on"}}, queue=deep))
    off = plait.run(dumbbell(flow={"cc": {"name": "cubic", "hystart": "off"}}, queue=deep))
    assert sum(on.flows.fast_retransmits) < sum(off.flows.fast_retransmits)
