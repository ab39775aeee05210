"""User-supplied text (flow and link names, file names, messages quoting them) made safe to
print: control characters such as ANSI escapes are shown as escapes instead of reaching the
terminal, and nothing is read as rich markup."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

# C0 controls except tab and newline, DEL and the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(value: object) -> str:
    """`value` as a string with control characters escaped (`\\x1b` for ESC), and bytes that
    are not UTF-8 (file names decoded with surrogate escapes) shown as `\\xff`."""
    text = str(value)
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
        raw = text.encode("utf-8", "backslashreplace")
    text = raw.decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def plain(value: object, style: str = "") -> Text:
    """A rich cell or title showing `value` literally: `[bold]x[/]` stays as written."""
    from rich.text import Text

    return Text(safe(value), style=style)


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """`1 flow`, `2 flows`, `0 flows`."""
    return f"{count} {noun if count == 1 else (plural_form or noun + 's')}"
