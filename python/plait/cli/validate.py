"""`plait validate FILE`: check a scenario without running it (routes are resolved too)."""

from __future__ import annotations

import argparse

from plait.cli.options import add_overrides


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a scenario file", description=__doc__)
    p.add_argument("file", help="scenario file (.toml, or .json)")
    add_overrides(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from plait.api import estimate_memory, validate
    from plait.cli.text import plural, print_warnings, safe
    from plait.output import human_bytes

    info = validate(args.file, overrides=args.overrides)
    memory = estimate_memory(args.file, overrides=args.overrides)
    print_warnings(info["warnings"])
    print(
        f"{safe(args.file)}: ok ({plural(info['nodes'], 'node')}, "
        f"{plural(info['links'], 'link')}, {plural(info['flows'], 'flow')}, "
        f"{info['duration_s']:g} s, warm-up {info['warmup_s']:g} s, seed {info['seed']}; "
        f"about {human_bytes(memory['bytes'])} of memory)"
    )
    return 0
