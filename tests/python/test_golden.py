"""Golden results through the Python front, and determinism across processes.

`tests/golden/*.json` hold every deterministic field of the JSON summary of the scenarios beside
them (the Rust test `crates/plait-core/tests/golden.rs` compares the core with them). Here the
summary that `plait run --json` writes is compared with the same files, so a column that gets
lost on its way from Rust to Python fails; and one scenario is run in two separate processes
(different hash seeds), whose summaries must be identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
SCENARIOS = sorted(GOLDEN.glob("*.toml"))
_ENTRY = "import sys; from plait.cli import main; sys.exit(main(sys.argv[1:]))"


def _leaves(value, prefix: str, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _leaves(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            label = i
            if isinstance(v, dict) and "name" in v:
                label = v["name"] + (f":{v['direction']}" if "direction" in v else "")
            _leaves(v, f"{prefix}[{label}]", out)
    else:
        out[prefix] = value


def diff(expected: dict, actual: dict) -> list[str]:
    """The fields that differ, one line each (changed, missing, new)."""
    e: dict = {}
    a: dict = {}
    _leaves(expected, "", e)
    _leaves(actual, "", a)
    lines = [f"{k}: {v!r} -> {a[k]!r}" for k, v in e.items() if k in a and a[k] != v]
    lines += [f"{k}: {v!r} -> (missing)" for k, v in e.items() if k not in a]
    lines += [f"{k}: (new) -> {v!r}" for k, v in a.items() if k not in e]
    return lines


def _run_json(scenario: Path, hash_seed: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    proc = subprocess.run(
        [sys.executable, "-c", _ENTRY, "run", str(scenario), "--json", "-", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    summary.pop("wall_seconds")
    return summary


def test_golden_scenarios_present():
    assert len(SCENARIOS) >= 9
    for toml in SCENARIOS:
        assert toml.with_suffix(".json").exists(), f"{toml.name}: golden file missing"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_python_summary_matches_golden(scenario: Path):
    import plait

    summary = plait.run(scenario).summary()
    summary.pop("wall_seconds")
    expected = json.loads(scenario.with_suffix(".json").read_text())
    changed = diff(expected, summary)
    assert not changed, "\n".join(changed)


def test_identical_across_processes():
    """Two separate interpreters, different hash seeds: the same summary, field for field."""
    scenario = GOLDEN / "datagram_sources.toml"
    first = _run_json(scenario, "1")
    second = _run_json(scenario, "2")
    assert not diff(first, second)
    assert first == json.loads((GOLDEN / "datagram_sources.json").read_text())


def test_diff_reports_each_kind_of_change():
    e = {"flows": [{"name": "a", "x": 1.5, "y": 2}], "events": 3}
    a = {"flows": [{"name": "a", "x": 1.25, "z": 0}], "events": 3}
    assert diff(e, a) == [
        "flows[a].x: 1.5 -> 1.25",
        "flows[a].y: 2 -> (missing)",
        "flows[a].z: (new) -> 0",
    ]
