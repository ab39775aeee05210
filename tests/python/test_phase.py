"""`plait phase` (plait.phase, docs/phase.md): whether a scenario's shares hinge on timing.

The example of docs/phase.md (two Reno flows whose packets differ by 20 bytes on a 50-packet
drop-tail queue) is phase-sensitive, and the same on RED is not; the exact runs of the
drop-tail case are the same under every seed. Bad input is one line and exit 2, with nothing
written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plait.cli import main
from plait.phase import NothingToVary, check, host_timed_kinds

REPO = Path(__file__).resolve().parents[2]
DROPTAIL = REPO / "experiments" / "phase" / "packet_size.toml"
RED = REPO / "experiments" / "phase" / "packet_size_red.toml"

TFRC_ONLY = """
[simulation]
duration = "5s"

[[link]]
name = "bottleneck"
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"

[[flow]]
name = "rate"
kind = "tfrc"
src = "a"
dst = "b"
"""


def test_packet_size_on_drop_tail_is_phase_sensitive():
    result = check(DROPTAIL)
    # The bottleneck and its service time: 1520 bytes at 10 Mb/s.
    assert result.bottleneck == "bottleneck (forward)"
    assert result.packet_bytes == 1520
    assert result.service_time_s == pytest.approx(1520 * 8 / 10e6)
    assert result.jitters == pytest.approx([0.25 * 1.216e-3, 0.5 * 1.216e-3, 1.216e-3, 2.432e-3])
    # Exact timing: even shares, the same under every seed.
    assert result.seeds_change_nothing
    shares = {f.name: f for f in result.flows}
    assert sum(f.exact for f in result.flows) == pytest.approx(1.0)
    assert shares["long"].exact == pytest.approx(0.5, abs=0.02)
    # Under jitter the longer packets take more.
    assert shares["long"].high > shares["long"].exact * 1.1
    assert result.sensitive
    assert result.verdict().startswith("phase-sensitive")
    assert len(shares["long"].jittered) == len(result.runs) == 4 * 3


def test_the_same_on_red_is_not():
    result = check(RED)
    assert not result.seeds_change_nothing  # RED draws its drops from the seed
    assert not result.sensitive, [(f.name, f.moved()) for f in result.flows]
    assert result.verdict().startswith("not phase-sensitive")


def test_the_tolerance_decides_the_verdict():
    # The same runs judged against a bound just below and just above the largest move.
    runs = check(DROPTAIL, levels=(1.0,), seeds=2)
    worst = max(f.moved() for f in runs.flows)
    assert worst > 0.02
    runs.tolerance = worst - 0.01
    assert runs.sensitive and runs.verdict().startswith("phase-sensitive")
    runs.tolerance = worst + 0.01
    assert not runs.sensitive and runs.verdict().startswith("not phase-sensitive")


def test_only_kinds_with_host_timing_are_varied():
    assert {"tcp", "mptcp", "mpat"} <= host_timed_kinds()
    assert not {"tfrc", "cbr", "onoff"} & host_timed_kinds()


def test_a_scenario_without_host_timing_is_refused(tmp_path, capsys):
    path = tmp_path / "rate.toml"
    path.write_text(TFRC_ONLY, encoding="utf-8")
    with pytest.raises(NothingToVary):
        check(path)
    out = tmp_path / "phase.json"
    assert main(["phase", str(path), "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "host delay" in err[0], err
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["--seeds", "0"],
        ["--seeds", "x"],
        ["--levels", "0,1"],
        ["--levels", ""],
        ["--tolerance", "1.5"],
        ["--packet-bytes", "0"],
        ["--set", "flow[0].cc=nope"],
    ],
)
def test_bad_options_are_one_line_and_exit_2(argv, tmp_path, capsys):
    out = tmp_path / "phase.json"
    assert main(["phase", str(DROPTAIL), *argv, "--json", str(out)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("plait")]
    assert len(err) == 1, err
    assert not out.exists()


def test_api_arguments_are_checked_before_any_run():
    for kwargs in ({"seeds": 0}, {"levels": ()}, {"levels": (0.0,)}, {"tolerance": 1.0}):
        with pytest.raises(ValueError):
            check(REPO / "no-such-file.toml", **kwargs)


def test_json_holds_every_run(tmp_path):
    out = tmp_path / "phase.json"
    assert (
        main(
            [
                "phase",
                str(DROPTAIL),
                "--seeds",
                "2",
                "--levels",
                "1",
                "--set",
                "simulation.duration=40s",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["sensitive"] in (True, False)
    assert data["seeds"] == [1, 2]
    assert [f["name"] for f in data["flows"]] == ["long", "short"]
    for f in data["flows"]:
        assert len(f["shares"]) == 2
        assert f["jittered_min"] <= f["jittered_mean"] <= f["jittered_max"]
    total = sum(f["shares"][0]["share"] for f in data["flows"])
    assert total == pytest.approx(1.0)


SWEEP = """
[simulation]
duration = "6s"
warmup = "1s"

[tcp]
exact_timing = {exact}

[[link]]
name = "bottleneck"
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
queue = { kind = "droptail", packets = 20 }

[[flow]]
name = "f"
count = 2
kind = "tcp"
src = "a"
dst = "b"
{start}
[sweep]
grid = { "link.bottleneck.rate" = ["5Mbps", "10Mbps"] }
seeds = 2
"""


def test_a_sweep_whose_seeds_change_nothing_says_so(tmp_path, capsys):
    import plait

    # Exact timing and fixed starts: nothing random. Random starts, or the default send
    # jitter, make every seed another replication.
    fixed = tmp_path / "fixed.toml"
    fixed.write_text(SWEEP.replace("{start}", "").replace("{exact}", "true"), encoding="utf-8")
    random_starts = tmp_path / "random.toml"
    random_starts.write_text(
        SWEEP.replace("{start}", 'start = { uniform = ["0s", "1s"] }').replace("{exact}", "true"),
        encoding="utf-8",
    )
    jittered = tmp_path / "jittered.toml"
    jittered.write_text(SWEEP.replace("{start}", "").replace("{exact}", "false"), encoding="utf-8")
    assert plait.sweep(fixed, workers=1, out=tmp_path / "a").seeds_change_nothing()
    assert not plait.sweep(random_starts, workers=1, out=tmp_path / "b").seeds_change_nothing()
    assert not plait.sweep(jittered, workers=1, out=tmp_path / "d").seeds_change_nothing()
    # One seed: nothing to compare.
    assert not plait.sweep(fixed, seeds=1, workers=1, out=tmp_path / "c").seeds_change_nothing()
    # The command line says it after the summary (the runs are stored already).
    capsys.readouterr()
    assert main(["sweep", str(fixed), "--workers", "1", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "every seed gave the same flows" in err and "docs/phase.md" in err
    assert main(["sweep", str(random_starts), "--workers", "1", "--out", str(tmp_path / "b")]) == 0
    assert "every seed gave the same flows" not in capsys.readouterr().err
