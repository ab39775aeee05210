"""`plait validate FILE`: check a scenario without running it."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a scenario file", description=__doc__)
    p.add_argument("file")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="K=V")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from plait.api import validate

    info = validate(args.file, overrides=args.overrides)
    print(
        f"{args.file}: ok ({info['nodes']} nodes, {info['links']} links, {info['flows']} flows, "
        f"{info['duration_s']:g} s, warm-up {info['warmup_s']:g} s, seed {info['seed']})"
    )
    return 0
