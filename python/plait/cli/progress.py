"""A progress bar for long runs, on standard error, shown only when a run takes a while."""

from __future__ import annotations

import time
from pathlib import Path

from plait.cli.text import safe


class LateProgress:
    """A rich progress bar (bar, percentage, simulated seconds, elapsed time and ETA) that
    appears only when a run takes more than `delay` seconds and standard error is a terminal.
    Called as `progress(now_s, duration_s)`, possibly from a worker thread."""

    def __init__(self, label: str, delay: float = 2.0, enabled: bool = True) -> None:
        self.label = safe(Path(label).name or label)
        self.delay = delay
        self.enabled = enabled
        self.started = time.perf_counter()
        self.progress = None
        self.task = None

    def __call__(self, now_s: float, duration_s: float) -> None:
        if not self.enabled:
            return
        if self.progress is None:
            if time.perf_counter() - self.started < self.delay:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(stderr=True)
            if not console.is_terminal:
                self.enabled = False
                return
            self.progress = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(bar_width=None),
                TaskProgressColumn(),
                TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
                transient=True,
                expand=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=duration_s)
        self.progress.update(self.task, completed=now_s)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
