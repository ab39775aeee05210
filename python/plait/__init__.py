"""plait: a laboratory for multipath and aggregate congestion control.

The package imports lazily so that `import plait` stays light; the public API is

- :func:`plait.run` — run a scenario (a TOML file or a dict) and get result tables;
- :func:`plait.validate` — check a scenario without running it;
- :func:`plait.sweep` — run a scenario over a grid of parameters and seeds, on every core or a
  Dask cluster, into a results folder read as one table (:mod:`plait.sweeps`);
- :func:`plait.compare` — two results (run folders, sweep stores, JSON summaries) side by side,
  per flow and per link, with a verdict per metric (:mod:`plait.comparison`);
- :func:`plait.estimate_memory` — what a run will need (runs above 4 GiB are refused unless
  ``max_memory=`` allows them: :class:`plait.ResourceLimitError`);
- :mod:`plait.models` — closed-form models; :mod:`plait.fluid` — the AIMD fluid simulator.
"""

from __future__ import annotations

from typing import Any

from plait._core import ResourceLimitError, ScenarioError, __core_id__, __version__

__all__ = [
    "ResourceLimitError",
    "ScenarioError",
    "ScenarioWarning",
    "Result",
    "__core_id__",
    "__version__",
    "compare",
    "estimate_memory",
    "run",
    "sweep",
    "validate",
]


def __getattr__(name: str) -> Any:
    if name in ("run", "validate", "Result", "estimate_memory", "ScenarioWarning"):
        from plait import api

        return getattr(api, name)
    if name == "sweep":
        from plait.sweeps import sweep

        return sweep
    if name == "compare":
        from plait.comparison import compare

        return compare
    raise AttributeError(f"module 'plait' has no attribute {name!r}")
