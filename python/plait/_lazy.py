"""Modules imported at their first use, so that importing plait stays cheap.

``pd = lazy_import("pandas")`` binds a stand-in that imports pandas when one of its attributes
is first read (``pd.DataFrame``), and costs nothing before: a module can keep using ``pd`` as
usual, and annotations naming ``pd.DataFrame`` still resolve (``typing.get_type_hints``).
"""

from __future__ import annotations

import importlib
from typing import Any


class _LazyModule:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported at first use>"


def lazy_import(name: str) -> Any:
    """A stand-in for the module `name` that imports it at the first attribute read."""
    return _LazyModule(name)
