"""Long calls into the core that Ctrl-C can stop at once.

Python runs signal handlers only in the main thread, between bytecodes. A call into compiled
code keeps the main thread busy until it returns, so Ctrl-C would wait for it. Here the call
runs in a worker thread while the main thread waits in short steps: Ctrl-C raises
KeyboardInterrupt in the main thread within a fraction of a second, and `on_interrupt` (which
sets the core's cancellation flag) makes the worker stop at its next check.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: Signals that stop a command as Ctrl-C does: SIGINT (Ctrl-C), SIGTERM (what `kill`,
#: `timeout` and batch systems at the end of a job's wall time send) and SIGHUP (the terminal
#: went away). The command line (see :func:`stopping_signals`) makes the last two raise
#: KeyboardInterrupt as well, so that every path that cleans up after Ctrl-C cleans up after
#: them; it then exits with 128 + the signal's number (130, 143, 129), as a shell reports a
#: process that a signal ended.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: The stop signal that came last (None: none yet, or Ctrl-C through Python's own handler).
_received: int | None = None


def received() -> int:
    """The stop signal that stopped the command (SIGINT when none was recorded)."""
    return _received if _received is not None else int(signal.SIGINT)


def _note(signum: int) -> None:
    global _received
    _received = signum


def _raise_interrupt(signum: int, frame: Any) -> None:
    _note(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def stopping_signals() -> Iterator[None]:
    """Meanwhile, SIGTERM and SIGHUP raise KeyboardInterrupt as Ctrl-C does, unless they are
    ignored (``nohup``) or handled by someone else; the previous handlers are restored after.
    Only in the main thread (the only one where Python runs signal handlers)."""
    global _received
    _received = None
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for s in STOP_SIGNALS:
        # SIGINT keeps Python's own handler; the others end the process by default, and are
        # taken over only from that default.
        current = signal.getsignal(s)
        if s != signal.SIGINT and current == signal.SIG_DFL:
            saved[s] = current
            signal.signal(s, _raise_interrupt)
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def deferred(on_signal: Callable[[int], None]) -> Iterator[bool]:
    """Meanwhile, a stop signal that would raise KeyboardInterrupt calls `on_signal(signum)`
    instead (which may raise it itself); yields whether any was taken over. For code that must
    not be stopped at an arbitrary point (renames that go together, calls into Dask)."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    saved = {}

    def handler(signum: int, frame: Any) -> None:
        _note(signum)
        on_signal(signum)

    _OURS.add(handler)

    for s in STOP_SIGNALS:
        current = signal.getsignal(s)
        if current is _raise_interrupt or current is signal.default_int_handler:
            saved[s] = current
            signal.signal(s, handler)
    try:
        yield bool(saved)
    finally:
        for s, previous in saved.items():
            signal.signal(s, previous)
        _OURS.discard(handler)


#: The handlers installed here (besides `_raise_interrupt`).
_OURS: set[Callable[..., None]] = set()


def _default_in_child() -> None:
    """A process forked from here (a sweep's local worker) starts with SIGTERM and SIGHUP
    ending it, as by default, not with this process's handlers (which only make sense here)."""
    for s in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            current = signal.getsignal(s)
            if current is _raise_interrupt or current in _OURS:
                signal.signal(s, signal.SIG_DFL)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_default_in_child)


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
