"""User-supplied text (flow and link names, file names, messages quoting them) made safe to
print: control characters such as ANSI escapes, and the bidirectional controls that reorder
what follows them, are shown as escapes instead of reaching the terminal, and nothing is read
as rich markup."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

# C0 controls except tab and newline, DEL and the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# The bidirectional controls (marks, embeddings, overrides, isolates: U+202E shows the rest of
# a line reversed, "Trojan Source", CVE-2021-42574) and the line and paragraph separators.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def safe(value: object) -> str:
    """`value` as a string with control characters escaped (`\\x1b` for ESC, `\\u202e` for the
    right-to-left override), and bytes that are not UTF-8 (file names decoded with surrogate
    escapes) shown as `\\xff`."""
    text = str(value)
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
        raw = text.encode("utf-8", "backslashreplace")
    text = raw.decode("utf-8", "backslashreplace")
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_warnings(lines: list[str]) -> None:
    """Prints each of a scenario's warnings (`file: field: what`) on standard error as
    `plait: warning: ...`."""
    import sys

    for line in lines:
        print(f"plait: warning: {safe(line)}", file=sys.stderr)


def plain(value: object, style: str = "") -> Text:
    """A rich cell or title showing `value` literally: `[bold]x[/]` stays as written."""
    from rich.text import Text

    return Text(safe(value), style=style)


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """`1 flow`, `2 flows`, `0 flows`."""
    return f"{count} {noun if count == 1 else (plural_form or noun + 's')}"
