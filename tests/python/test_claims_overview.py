"""docs/reproductions.md's table of verdicts is the committed claims.json files' (PLAIT_BLESS=1
rewrites it: `make docs`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from plait.report import claims_overview

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reproductions.md"
BEGIN, END = "<!-- claims:begin -->\n", "<!-- claims:end -->"


def _committed() -> list[Path]:
    return sorted(ROOT.glob("experiments/*/results/claims.json"))


def test_the_table_is_the_committed_verdicts():
    text = DOC.read_text()
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    table = claims_overview(_committed())
    if os.environ.get("PLAIT_BLESS"):
        DOC.write_text(head + BEGIN + table + END + tail)
        return
    assert rest.split(END)[0] == table, "docs/reproductions.md is stale: run `make docs`"


def test_counts_by_cause(tmp_path):
    records = [
        {"experiment": "x", "verdict": "agrees", "cause": None},
        {"experiment": "x", "verdict": "differs", "cause": "paper"},
        {"experiment": "x", "verdict": "differs", "cause": "unknown"},
        {"experiment": "x", "verdict": "differs", "cause": None},
    ]
    f = tmp_path / "x" / "results" / "claims.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"generated": "plait 0.1.0, seeds 1", "claims": records}))
    row = claims_overview([f]).splitlines()[2]
    assert row == "| x | 4 | 1 | 1 | 0 | 1 | 1 | plait 0.1.0, seeds 1 |"
    with pytest.raises(KeyError):
        f.write_text(json.dumps({"claims": records}))
        claims_overview([f])
