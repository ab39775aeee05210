"""`python -m plait.ns2 SCENARIO.toml`: run a scenario in plait and in ns-2 and compare.

Prints one summary row per simulator and seed (docs/ns2.md), and with `--out DIR` writes
`<name>_flows.csv` and `<name>_summary.csv` there (`--name`, default the scenario's stem);
`--tcl FILE` writes the ns-2 script of the first seed instead of running anything.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plait import ns2


def _seeds(text: str) -> list[int]:
    if ".." in text:
        lo, hi = text.split("..", 1)
        return list(range(int(lo), int(hi) + 1))
    return [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plait.ns2", description=__doc__)
    parser.add_argument("scenario", help="plait scenario file (.toml)")
    parser.add_argument("--seeds", default="1", help="e.g. 1..5 or 1,3 (default 1)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a scenario field in both simulators (repeatable)",
    )
    parser.add_argument("--out", type=Path, help="write the flows and summary as CSV here")
    parser.add_argument("--name", help="file name stem for --out (default: the scenario's)")
    parser.add_argument("--tcl", type=Path, help="only write the ns-2 script to this file")
    args = parser.parse_args(argv)
    try:
        seeds = _seeds(args.seeds)
        overrides = {}
        for item in args.overrides:
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"--set {item!r}: expected KEY.PATH=VALUE")
            overrides[key.strip()] = value.strip()
        if args.tcl:
            overrides["simulation.seed"] = str(seeds[0])
            args.tcl.write_text(ns2.tcl(ns2.from_plait(args.scenario, overrides=overrides)))
            return 0
        flows, summary = ns2.compare(args.scenario, seeds, overrides)
    except (ValueError, OSError, RuntimeError) as e:
        print(f"plait.ns2: error: {e}", file=sys.stderr)
        return 2
    print(summary.to_string(index=False))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.name or Path(args.scenario).stem
        flows.to_csv(args.out / f"{stem}_flows.csv", index=False)
        summary.to_csv(args.out / f"{stem}_summary.csv", index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
