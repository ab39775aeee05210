"""JSON nested 15,000 levels deep is refused at once with one line naming the file.

It used to crash the interpreter (SIGSEGV, a stack overflow in the core's JSON reader) after
about 20 s, in the CLI and in `plait.validate`; the core now refuses more than 128 levels
(a scenario nests a few) in one pass over the text.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import plait
import pytest
from plait._core import ScenarioError

DEPTH = 15_000
MESSAGE = "JSON nested deeper than 128 levels at line 1, column 143"


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    path = tmp_path / "deep.json"
    path.write_text('{"simulation": ' + "[" * DEPTH + "]" * DEPTH + "}", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["validate", "run", "sweep"])
def test_deep_json_is_one_line_in_the_cli(deep, tmp_path, command):
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "plait.cli", command, str(deep)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 10
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"plait: error: {deep}: {MESSAGE}; a scenario needs a few"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.json"]


def test_deep_json_in_the_python_api(deep):
    started = time.monotonic()
    with pytest.raises(ScenarioError, match=MESSAGE) as e:
        plait.validate(deep)
    assert str(deep) in str(e.value)
    assert time.monotonic() - started < 5
