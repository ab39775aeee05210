"""Long calls into the core that Ctrl-C can stop at once.

Python runs signal handlers only in the main thread, between bytecodes. A call into compiled
code keeps the main thread busy until it returns, so Ctrl-C would wait for it. Here the call
runs in a worker thread while the main thread waits in short steps: Ctrl-C raises
KeyboardInterrupt in the main thread within a fraction of a second, and `on_interrupt` (which
sets the core's cancellation flag) makes the worker stop at its next check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: How long the main thread waits after Ctrl-C for the worker to notice the cancellation.
STOP_GRACE_SECONDS = 1.0


#: Completion flags of the workers still running.
_running: set[threading.Event] = set()


def busy() -> bool:
    """Whether a worker is still inside the core (one whose call was interrupted and has not
    noticed yet). The process must then end with `os._exit`: at interpreter shutdown a thread
    inside compiled code is torn down by a forced unwind, which aborts the process."""
    return any(not done.is_set() for done in _running)


def call(fn: Callable[[], T], on_interrupt: Callable[[], Any] | None = None) -> T:
    """Returns `fn()`, computed in a worker thread; see the module doc."""
    if threading.current_thread() is not threading.main_thread():
        return fn()
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised in the calling thread
            box["error"] = e
        finally:
            done.set()
            _running.discard(done)

    worker = threading.Thread(target=work, name="plait-core", daemon=True)
    _running.add(done)
    worker.start()
    # Waiting on an Event, not on Thread.join: a join interrupted by Ctrl-C can leave the
    # thread marked as stopped while it still runs (CPython before 3.13).
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
        done.wait(STOP_GRACE_SECONDS)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
