"""The `plait` command line. Each subcommand lives in its own module with a `register`."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="plait", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    from plait.cli import fluid, model

    for module in (model, fluid):
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
