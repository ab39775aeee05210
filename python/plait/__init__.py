"""plait: a laboratory for multipath and aggregate congestion control.

The package imports lazily so that `import plait` stays light; the public API is

- :func:`plait.run` — run a scenario (a TOML file or a dict) and get result tables;
- :func:`plait.validate` — check a scenario without running it;
- :mod:`plait.models` — closed-form models; :mod:`plait.fluid` — the AIMD fluid simulator.
"""

from __future__ import annotations

from typing import Any

from plait._core import ScenarioError, __version__

__all__ = ["ScenarioError", "Result", "__version__", "run", "validate"]


def __getattr__(name: str) -> Any:
    if name in ("run", "validate", "Result"):
        from plait import api

        return getattr(api, name)
    raise AttributeError(f"module 'plait' has no attribute {name!r}")
