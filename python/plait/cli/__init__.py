"""The `plait` command line. Each subcommand lives in its own module with a `register`.

Exit codes: 0 success, 1 some runs of a sweep failed (each recorded), 2 a usage or input
mistake (one line on standard error, nothing written), 3 a sweep's cluster failed (its job
system or scheduler, or no worker came in time: one line; the runs finished are kept), 70 an
internal error (a bug in plait, not in the input: the traceback and one line asking to report
it), 130 interrupted by Ctrl-C, 143 stopped by SIGTERM (`kill`, `timeout`, a batch job's wall
time), 129 stopped by SIGHUP (the terminal closed): nothing written in these three cases; a
sweep keeps the runs it finished.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

EXIT_USAGE = 2
#: EX_SOFTWARE of sysexits.h: an internal software error.
EXIT_INTERNAL = 70
#: A sweep's cluster failed: its job system (sbatch, qsub) or scheduler, or no worker came.
EXIT_CLUSTER = 3
EXIT_INTERRUPTED = 130

#: The subcommands, in the order `plait --help` lists them, and the modules that define them
#: (each with a `register(subparsers)`).
COMMANDS = {
    "run": "plait.cli.run",
    "validate": "plait.cli.validate",
    "phase": "plait.cli.phase",
    "sweep": "plait.cli.sweep",
    "reproduce": "plait.cli.reproduce",
    "list": "plait.cli.listing",
    "bench": "plait.cli.bench",
    "model": "plait.cli.model",
    "fluid": "plait.cli.fluid",
    "compare": "plait.cli.compare",
    "testbed": "plait.cli.testbed",
}


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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `plait` parser. With `only`, a name from :data:`COMMANDS`, that subcommand alone
    is registered (and its module alone imported): :func:`main` parses a command line that
    starts with a subcommand's name so, and it parses it as the whole parser does, since
    everything after the name is the subcommand's and the usage line names no subcommand."""
    from plait import __core_id__, __version__

    parser = _Parser(
        prog="plait",
        description="A laboratory for multipath and aggregate congestion control.",
    )
    parser.add_argument(
        "--version", action="version", version=f"plait {__version__} (core {__core_id__})"
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module).register(sub)
    return parser


def fail(message: str) -> int:
    """Prints `plait: error: message` (control characters escaped) and returns exit code 2."""
    from plait.cli.text import safe

    print(f"plait: error: {safe(message)}", file=sys.stderr)
    return EXIT_USAGE


def _raised_in_a_library(e: BaseException) -> bool:
    """Whether `e` was raised in a third-party library's code (matplotlib, pandas, numpy,
    dask, ...) rather than in plait's or the standard library's: plait checks its input and
    raises ValueError itself, naming the file or option; a ValueError from inside a library
    is plait handing it something wrong, a bug."""
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    where = os.path.realpath(tb.tb_frame.f_code.co_filename)
    if where.startswith(os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep):
        return False
    parts = where.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def internal_error(e: BaseException) -> int:
    """Prints the traceback of `e` and `plait: internal error: ...` asking to report it;
    returns :data:`EXIT_INTERNAL`."""
    import traceback

    from plait.cli.text import safe

    traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    print(
        f"plait: internal error: {safe(type(e).__name__)}: {safe(str(e))}\n"
        "This is a bug in plait, not a mistake in the input: please report it with the "
        "command line and the output above.",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


def stopped() -> tuple[int, str]:
    """The exit code for the stop signal that came (128 + its number: 130 for Ctrl-C, 143 for
    SIGTERM, 129 for SIGHUP) and how to say it ("interrupted", "stopped by SIGTERM")."""
    import signal

    from plait import _interrupt

    signum = _interrupt.received()
    if signum == signal.SIGINT:
        return EXIT_INTERRUPTED, "interrupted"
    return 128 + signum, f"stopped by {signal.Signals(signum).name}"


def _interrupted() -> int:
    from plait import _interrupt

    code, how = stopped()
    print(f"plait: {how}; nothing written", file=sys.stderr)
    if _interrupt.busy():
        # A computation without a cancellation point is still running in compiled code;
        # leave now rather than let interpreter shutdown tear its thread down.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def main(argv: list[str] | None = None) -> int:
    from plait import _interrupt

    # SIGTERM and SIGHUP stop a command as Ctrl-C does: nothing half-written.
    with _interrupt.stopping_signals():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        # Only the subcommand named first is imported and registered: a command starts
        # without loading the others. Anything else (`plait --help`, a mistyped name) gets
        # the whole parser.
        parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
        args = parser.parse_args(argv)
    except SystemExit as e:
        # --help, --version (0) and usage errors (2), returned like every other outcome.
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        code, how = stopped()
        print(f"plait: {how}; nothing written", file=sys.stderr)
        return code
    from plait._core import ScenarioError

    try:
        return int(args.func(args) or 0)
    except (ScenarioError, ValueError) as e:
        # Scenario mistakes, bad argument values, unwritable outputs, resource limits.
        if not isinstance(e, ScenarioError) and _raised_in_a_library(e):
            return internal_error(e)
        return fail(str(e))
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        # The reader went away (`plait list | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 - anything else is a bug, never the user's mistake
        engine = sys.modules.get("plait.sweeps.engine")
        if engine is not None and isinstance(e, engine.ClusterError):
            # The job system or the scheduler failed while the sweep ran: not the input's
            # fault, and not a bug in plait.
            from plait.cli.text import safe

            print(f"plait: error: {safe(str(e))}", file=sys.stderr)
            return EXIT_CLUSTER
        return internal_error(e)


if __name__ == "__main__":
    sys.exit(main())
