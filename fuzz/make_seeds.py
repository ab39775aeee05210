"""Writes seed inputs for the scenario_parse fuzz target into a directory.

    python3 fuzz/make_seeds.py DIR

Seeds are the repository's scenario files and the scenarios of the reference and the tests,
each in the three input modes of `plait_core::fuzzing::scenario_parse`: a first byte 0 (TOML),
1 (JSON, converted with tomllib) or 2 (TOML, a NUL byte, then `--set key=value` lines).
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The base that reference snippets (queues, losses, flows) are spliced into, as the Rust test
# `every_example_in_the_reference_is_accepted` does.
BASE = """\
[simulation]
duration = "60s"

[[link]]
name = "left"
from = "a"
to = "gateway"
rate = "100Mbps"
delay = "10ms"

[[link]]
name = "right"
from = "gateway"
to = "b"
rate = "100Mbps"
delay = "10ms"

[[flow]]
name = "base"
kind = "tcp"
src = "a"
dst = "b"
"""

OVERRIDES = [
    "simulation.seed=3",
    "link.bottleneck.rate=10Mbps",
    'flow.bulk.cc={ name = "cubic", beta = 0.8 }',
    "flow.bulk.count=5",
    "flow[0].start.uniform[1]=2s",
    'link[1].queue={ kind = "red", packets = 100 }',
    "link.right.loss={ kind = \"bernoulli\", p = 0.01 }",
    "tcp.mss=1448",
]


def code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def scenarios() -> list[str]:
    found = [p.read_text() for p in sorted(ROOT.glob("experiments/*/*.toml"))]
    reference = (ROOT / "docs/scenario.md").read_text()
    for block in code_blocks(reference, "toml"):
        first = block.lstrip()
        if first.startswith("[simulation]"):
            found.append(block)
        elif first.startswith(("queue", "loss")):
            for line in filter(str.strip, block.splitlines()):
                found.append(BASE.replace('delay = "10ms"', f'delay = "10ms"\n{line}', 1))
        elif first.startswith("[tcp]"):
            found.append(block + BASE)
        else:
            found.append(BASE + block)
    conftest = (ROOT / "tests/python/conftest.py").read_text()
    found += re.findall(r'SCENARIO_TOML = """\\\n(.*?)"""', conftest, flags=re.S)
    return found


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    seeds: list[bytes] = []
    for text in scenarios():
        seeds.append(b"\x00" + text.encode())
        try:
            seeds.append(b"\x01" + json.dumps(tomllib.loads(text), indent=1).encode())
        except tomllib.TOMLDecodeError:
            pass
        seeds.append(b"\x02" + text.encode() + b"\x00" + "\n".join(OVERRIDES).encode())
    reference = (ROOT / "docs/scenario.md").read_text()
    seeds += [b"\x01" + block.encode() for block in code_blocks(reference, "json")]
    for i, seed in enumerate(seeds):
        (out / f"seed-{i:03}").write_bytes(seed)
    print(f"{len(seeds)} seeds in {out}")


if __name__ == "__main__":
    main()
