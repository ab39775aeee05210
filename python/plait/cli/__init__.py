"""The `plait` command line. Each subcommand lives in its own module with a `register`.

Exit codes: 0 success, 1 some runs of a sweep failed (each recorded), 2 a usage or input
mistake (one line on standard error, nothing written), 130 interrupted by Ctrl-C (nothing
written; a sweep keeps the runs it finished).
"""

from __future__ import annotations

import argparse
import os
import sys

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse with every option's default shown in --help, descriptions kept as written,
    and control characters in echoed arguments escaped."""

    def __init__(self, *args, **kwargs) -> None:
        from plait.cli.options import HelpFormatter

        kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]):
        # Python < 3.12 drops a "--" given as an option's value (`--out=--`) and returns []
        # unchecked; take it as the literal value, converted and checked like any other.
        if action.nargs is None and action.option_strings and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)

    def error(self, message: str):  # type: ignore[override]
        from plait.cli.text import safe

        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {safe(message)}\n")


def build_parser() -> argparse.ArgumentParser:
    from plait import __version__

    parser = _Parser(
        prog="plait",
        description="A laboratory for multipath and aggregate congestion control.",
    )
    parser.add_argument("--version", action="version", version=f"plait {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    from plait.cli import (
        bench,
        experiment,
        fluid,
        listing,
        model,
        reproduce,
        run,
        sweep,
        validate,
    )

    for module in (run, validate, sweep, reproduce, listing, bench, experiment, model, fluid):
        module.register(sub)
    return parser


def fail(message: str) -> int:
    """Prints `plait: error: message` (control characters escaped) and returns exit code 2."""
    from plait.cli.text import safe

    print(f"plait: error: {safe(message)}", file=sys.stderr)
    return EXIT_USAGE


def _interrupted() -> int:
    from plait import _interrupt

    print("plait: interrupted; nothing written", file=sys.stderr)
    if _interrupt.busy():
        # A computation without a cancellation point is still running in compiled code;
        # leave now rather than let interpreter shutdown tear its thread down.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    return EXIT_INTERRUPTED


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except SystemExit as e:
        # --help, --version (0) and usage errors (2), returned like every other outcome.
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        print("plait: interrupted; nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    from plait._core import ScenarioError

    try:
        return int(args.func(args) or 0)
    except (ScenarioError, ValueError) as e:
        # Scenario mistakes, bad argument values, unwritable outputs, resource limits.
        return fail(str(e))
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        # The reader went away (`plait list | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
