"""plait: a laboratory for multipath and aggregate congestion control."""

from plait._core import __version__

__all__ = ["__version__"]
