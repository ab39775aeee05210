"""A sweep's progress and outcome: what the CLI draws its bar from (:class:`ProgressSink`), what
a sweep did (:class:`Summary`) and the Ctrl-C that carries it (:class:`_Interrupted`). Shared by
the simulated sweeps (:mod:`plait.sweeps`) and the kernel's (:mod:`plait.testbed.sweep`)."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plait.sweeps.engine import Cluster


@dataclass
class Summary:
    """What a sweep did: runs in all, already stored, run now, failed (with their errors)."""

    total: int
    reused: int = 0
    done: int = 0
    failed: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    wall_seconds: float = 0.0
    cluster: str = ""
    dashboard: str | None = None
    not_in_sweep: int = 0

    @property
    def runs_per_second(self) -> float:
        ran = self.done + self.failed
        return ran / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def reasons(self) -> list[tuple[str, int]]:
        """Distinct errors with how many runs each stopped, most frequent first."""
        return collections.Counter(e["error"] for e in self.errors).most_common()


class ProgressSink:
    """Receives a sweep's progress; the CLI draws a bar from it. Every method is optional."""

    def start(self, total: int, reused: int, cluster: Cluster) -> None:
        pass

    def advance(self, ok: bool) -> None:
        pass

    def stop(self) -> None:
        pass

    # With ``testbed=True`` (plait.testbed.sweep), also:

    def kernel_start(self, todo: int, seconds: float, kernel: str) -> None:
        """`todo` runs to do on kernel `kernel`, about `seconds` of real time."""

    def kernel_run(self, done: Any) -> None:
        """A kernel run ended (a :class:`plait.testbed.sweep.KernelRun`)."""

    def kernel_wait(self, message: str) -> None:
        """A run waits for another testbed run to end."""


class _Interrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep, carrying what was done."""

    def __init__(self, summary: Summary) -> None:
        super().__init__()
        self.summary = summary
