"""The `plait` command line. Each subcommand lives in its own module with a `register`."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plait",
        description="A laboratory for multipath and aggregate congestion control.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from plait.cli import bench, experiment, fluid, listing, model, run, validate

    for module in (run, validate, listing, bench, experiment, model, fluid):
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from plait._core import ScenarioError

    try:
        return int(args.func(args) or 0)
    except (ScenarioError, ValueError) as e:
        # Scenario mistakes and bad argument values (overrides, seeds): one line, exit 2.
        print(f"plait: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("plait: interrupted; nothing written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
