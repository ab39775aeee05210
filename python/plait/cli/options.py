"""Options shared by several subcommands, and argument types that check their range, so that
a bad value is a one-line usage error (exit 2), never a traceback."""

from __future__ import annotations

import argparse
import math
import re

_SIZE = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGTP]?i?B?)?\s*$", re.IGNORECASE
)
_SCALE = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "p": 10**15,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}


def memory_size(text: str) -> int | None:
    """`4GiB`, `500MB`, `1e9` (bytes) or `none` (no limit)."""
    if text.strip().lower() in ("none", "unlimited"):
        return None
    m = _SIZE.match(text)
    unit = (m.group(2) or "").lower() if m else ""
    if not m or unit not in _SCALE:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 4GiB, 500MB or 1e9 (bytes), or none; got {text!r}"
        )
    value = float(m.group(1)) * _SCALE[unit]
    if not math.isfinite(value) or value < 1 or value >= 2**64:
        raise argparse.ArgumentTypeError(f"expected a size between 1 B and 16 EiB, got {text!r}")
    return int(value)


def bounded_int(low: int, high: int, allow_float_syntax: bool = False):
    """An argument type for whole numbers in [low, high]; `1e6` is accepted when
    `allow_float_syntax` (for counts)."""

    def parse(text: str) -> int:
        value: int | float | None = None
        try:
            value = int(text)
        except ValueError:
            if allow_float_syntax:
                try:
                    f = float(text)
                except ValueError:
                    f = math.nan
                if math.isinf(f) or (math.isfinite(f) and f.is_integer()):
                    value = f
        if value is None:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected a whole number in [{low}, {high}], got {text}"
            )
        return int(value)

    return parse


def bounded_float(low: float, high: float, low_open: bool = False):
    """An argument type for finite numbers in [low, high] (or (low, high] when `low_open`)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or value > high:
            bracket = "(" if low_open else "["
            raise argparse.ArgumentTypeError(
                f"expected a number in {bracket}{low:g}, {high:g}], got {text}"
            )
        return value

    return parse


seed_type = bounded_int(0, 2**64 - 1)


def add_seed(p: argparse.ArgumentParser, help: str, default: int | None = None) -> None:
    p.add_argument("--seed", type=seed_type, default=default, metavar="N", help=help)


def add_overrides(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a scenario field before validation (repeatable), e.g. flow[0].cc=cubic",
    )


def add_max_memory(p: argparse.ArgumentParser) -> None:
    from plait.api import DEFAULT_MAX_MEMORY

    p.add_argument(
        "--max-memory",
        type=memory_size,
        default=DEFAULT_MAX_MEMORY,
        metavar="SIZE",
        help="refuse a run estimated to need more memory than this, and stop one whose traces "
        "(trace_picks, trace_drops) grow past it (e.g. 16GiB, or none; default: 4GiB)",
    )


def finite_float(text: str) -> float:
    """Any finite number (nan and inf are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps descriptions as written and shows each option's default, unless its help already
    names it or there is none to show (flags, options without a default)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default is None
            or default is False
            or default == []
            or default is argparse.SUPPRESS
            or not action.option_strings
        ):
            return text
        if isinstance(default, list):
            shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default)
        elif isinstance(default, float):
            shown = f"{default:g}"
        else:
            shown = str(default)
        return f"{text} (default: {shown})"
