"""Writing results so that they never half-exist.

Every command that writes files does it in two steps:

1. **Before any work**, :class:`Outputs` checks each destination (``--json FILE``, ``--out DIR``,
   ``--plot FILE``): that it can be created or replaced, that a folder is a folder and a file is
   not one. A mistake is an :class:`OutputError`, one line naming the option, the path and what
   is wrong, and nothing has been written.
2. **After the work**, :meth:`Outputs.writing` opens a transaction. Regular files are written
   to temporary files beside their destinations and renamed into place together when the
   transaction ends without error; if it fails or is interrupted, the temporaries are removed,
   files that were replaced are restored and folders it created are removed again.

Destinations that are not regular files are honoured rather than replaced: ``-`` is standard
output, character devices (``/dev/null``, ``/dev/stdout``) and FIFOs are written through, and a
symbolic link is followed to its target, which is then replaced atomically. New files get the
usual permissions (``0666`` less the umask); a replaced file keeps its mode.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from plait import _interrupt

STDOUT = "-"
_STDOUT_ALIASES = (STDOUT, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")
_OWN_STREAMS = ("/dev/stderr",)
_OWN_FD_DIRS = ("/dev/fd/", "/proc/self/fd/")


class OutputError(ValueError):
    """A destination cannot be written: the message names the option and the path."""


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _umask() -> int:
    # os.umask can only be read by setting it; restore it at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _nearest_existing(path: Path) -> Path:
    """The closest ancestor of `path` (or `path` itself) that exists."""
    probe = path
    while not os.path.lexists(probe):
        parent = probe.parent
        if parent == probe:
            break
        probe = parent
    return probe


def _check_folder_writable(option: str, shown: str, folder: Path) -> None:
    """Creates and removes a file in `folder`: the only check that also holds for root, ACLs
    and read-only mounts."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".plait-probe-", dir=folder)
    except OSError as e:
        raise OutputError(f"{option} {shown}: cannot write in '{folder}' ({_reason(e)})") from None
    os.close(fd)
    os.unlink(probe)


def _check_can_create(option: str, shown: str, path: Path) -> None:
    """`path` does not exist: its nearest existing ancestor must be a folder we can write."""
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise OutputError(f"{option} {shown}: '{base}' is a file, not a folder")
    _check_folder_writable(option, shown, base)


@dataclass(frozen=True)
class FileTarget:
    """A checked destination for one file."""

    option: str
    shown: str
    #: Where to write: the symlink-resolved path, or None for standard output.
    path: Path | None
    #: Written through (stdout, a character device, a FIFO) rather than replaced.
    stream: bool

    @property
    def is_stdout(self) -> bool:
        return self.path is None


@dataclass(frozen=True)
class FolderTarget:
    """A checked destination folder; files inside it are written with :meth:`file`."""

    option: str
    shown: str
    path: Path

    def file(self, name: str) -> FileTarget:
        return FileTarget(self.option, f"{self.shown}/{name}", self.path / name, stream=False)


class Outputs:
    """The destinations of one command, checked when declared."""

    def __init__(self) -> None:
        self._stdout_taken_by: str | None = None
        self._paths: dict[Path, str] = {}
        self._folders: dict[Path, str] = {}

    def _claim(self, option: str, shown: str, path: Path) -> None:
        other = self._paths.get(path) or self._folders.get(path)
        if other is not None and other != option:
            raise OutputError(f"{option} {shown}: '{path}' is also written by {other}")
        self._paths[path] = option

    def _claim_folder(self, option: str, shown: str, path: Path) -> None:
        other = self._paths.get(path)
        if other is not None and other != option:
            raise OutputError(f"{option} {shown}: '{path}' is also written by {other}")
        self._folders[path] = option

    def file(self, option: str, value: str | os.PathLike | None) -> FileTarget | None:
        """Checks a file destination (``-`` is standard output). None stays None."""
        if value is None:
            return None
        shown = os.fspath(value)
        if shown == "":
            raise OutputError(f"{option}: empty path")
        if shown in _STDOUT_ALIASES:
            if self._stdout_taken_by is not None:
                raise OutputError(
                    f"{option} {shown}: standard output is already used by {self._stdout_taken_by}"
                )
            self._stdout_taken_by = option
            return FileTarget(option, shown, None, stream=True)
        # The file descriptors of this process (/dev/stdout, /dev/fd/1): written through, as a
        # shell redirection expects; their link targets ("pipe:[123]") are not paths.
        if shown in _OWN_STREAMS or shown.startswith(_OWN_FD_DIRS):
            return FileTarget(option, shown, Path(shown), stream=True)
        path = Path(os.path.realpath(shown))
        self._claim(option, shown, path)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            _check_can_create(option, shown, path)
            return FileTarget(option, shown, path, stream=False)
        except OSError as e:
            raise OutputError(f"{option} {shown}: {_reason(e)}") from None
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(f"{option} {shown}: is a folder; expected a file name")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            if not os.access(path, os.W_OK):
                raise OutputError(f"{option} {shown}: not writable")
            return FileTarget(option, shown, path, stream=True)
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(f"{option} {shown}: not a regular file, character device or FIFO")
        _check_folder_writable(option, shown, path.parent)
        return FileTarget(option, shown, path, stream=False)

    def folder(
        self, option: str, value: str | os.PathLike | None, files: tuple[str, ...] = ()
    ) -> FolderTarget | None:
        """Checks a destination folder (created when written) into which `files` will be
        written. None stays None."""
        if value is None:
            return None
        shown = os.fspath(value)
        if shown == "":
            raise OutputError(f"{option}: empty path")
        if shown == STDOUT:
            raise OutputError(f"{option} -: expected a folder, not standard output")
        path = Path(os.path.realpath(shown))
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            _check_can_create(option, shown, path / "x")
        except OSError as e:
            raise OutputError(f"{option} {shown}: {_reason(e)}") from None
        else:
            if not stat.S_ISDIR(st.st_mode):
                raise OutputError(f"{option} {shown}: exists and is not a folder")
            _check_folder_writable(option, shown, path)
            for name in files:
                inside = path / name
                if os.path.isdir(inside):
                    raise OutputError(
                        f"{option} {shown}: '{inside}' is a folder; it would be replaced by a file"
                    )
        self._claim_folder(option, shown, path)
        for name in files:
            self._claim(option, shown, path / name)
        return FolderTarget(option, shown, path)

    @contextlib.contextmanager
    def writing(self) -> Iterator[Transaction]:
        """A transaction: everything written inside it appears together, or not at all."""
        tx = Transaction()
        try:
            yield tx
        except BaseException:
            tx.abort()
            raise
        tx.commit()


@dataclass
class _Staged:
    target: FileTarget
    temporary: Path
    mode: int


@dataclass
class Transaction:
    """Files staged for an all-or-nothing commit; see :meth:`Outputs.writing`."""

    _staged: list[_Staged] = field(default_factory=list)
    _streams: list[tuple[FileTarget, bytes]] = field(default_factory=list)
    _created_dirs: list[Path] = field(default_factory=list)

    def write_bytes(self, target: FileTarget | None, data: bytes) -> None:
        if target is None:
            return
        if target.stream:
            self._streams.append((target, data))
            return

        def write(path: Path) -> None:
            with open(path, "wb") as f:
                f.write(data)

        self.write_with(target, write)

    def write_text(self, target: FileTarget | None, text: str) -> None:
        self.write_bytes(target, text.encode())

    def write_with(self, target: FileTarget | None, writer: Callable[[Path], None]) -> None:
        """Calls `writer(path)` to write the file at a temporary path; for writers that need
        a path (pyarrow, matplotlib). Streams receive what the writer wrote."""
        if target is None:
            return
        if target.stream:
            with tempfile.TemporaryDirectory(prefix="plait-") as d:
                scratch = Path(d) / (target.path.name if target.path else "out")
                writer(scratch)
                self._streams.append((target, scratch.read_bytes()))
            return
        assert target.path is not None
        final = target.path
        self._make_parents(target, final.parent)
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{final.name}.", suffix=f".tmp{final.suffix}", dir=final.parent
            )
        except OSError as e:
            raise OutputError(f"{target.option} {target.shown}: {_reason(e)}") from None
        os.close(fd)
        temporary = Path(tmp)
        # Registered before writing, so that an interrupted writer leaves nothing behind.
        staged = _Staged(target, temporary, self._mode_for(final))
        self._staged.append(staged)
        try:
            # In a worker thread: writing a large table takes seconds in compiled code, and
            # Ctrl-C must still be answered at once (the temporary is then removed).
            _interrupt.call(lambda: writer(temporary))
            with open(temporary, "rb+") as f:
                f.flush()
                os.fsync(f.fileno())
            os.chmod(temporary, staged.mode)
        except OSError as e:
            raise OutputError(f"{target.option} {target.shown}: {_reason(e)}") from None

    @staticmethod
    def _mode_for(final: Path) -> int:
        try:
            return stat.S_IMODE(os.stat(final).st_mode)
        except OSError:
            return 0o666 & ~_umask()

    def _make_parents(self, target: FileTarget, folder: Path) -> None:
        missing = []
        probe = folder
        while not os.path.lexists(probe):
            missing.append(probe)
            probe = probe.parent
        for d in reversed(missing):
            try:
                os.mkdir(d)
            except FileExistsError:
                continue
            except OSError as e:
                raise OutputError(f"{target.option} {target.shown}: {_reason(e)}") from None
            self._created_dirs.append(d)

    def abort(self) -> None:
        """Removes everything this transaction wrote."""
        for s in self._staged:
            with contextlib.suppress(OSError):
                os.unlink(s.temporary)
        self._staged.clear()
        self._streams.clear()
        for d in reversed(self._created_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        self._created_dirs.clear()

    def commit(self) -> None:
        """Writes the streams, then renames the staged files into place. If anything fails or
        Ctrl-C arrives, what was renamed is undone and the exception is raised."""
        try:
            for target, data in self._streams:
                _write_stream(target, data)
        except BaseException:
            self.abort()
            raise
        with _sigint_deferred() as interrupted:
            done: list[tuple[Path, Path | None]] = []
            try:
                for s in self._staged:
                    final = s.target.path
                    assert final is not None
                    backup = None
                    if os.path.lexists(final):
                        backup = s.temporary.with_name(s.temporary.name + ".old")
                        os.replace(final, backup)
                    done.append((final, backup))
                    os.replace(s.temporary, final)
            except OSError as e:
                _undo(done)
                self.abort()
                raise OutputError(f"{s.target.option} {s.target.shown}: {_reason(e)}") from None
            if interrupted():
                _undo(done)
                self.abort()
                raise KeyboardInterrupt
            for _, backup in done:
                if backup is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(backup)
        self._staged.clear()
        self._streams.clear()
        self._created_dirs.clear()


def _undo(done: list[tuple[Path, Path | None]]) -> None:
    for final, backup in reversed(done):
        with contextlib.suppress(OSError):
            if backup is not None:
                os.replace(backup, final)
            else:
                os.unlink(final)


def _write_stream(target: FileTarget, data: bytes) -> None:
    try:
        if target.is_stdout:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            assert target.path is not None
            with open(target.path, "wb") as f:
                f.write(data)
    except BrokenPipeError:
        raise
    except OSError as e:
        if e.errno == errno.EPIPE:
            raise
        raise OutputError(f"{target.option} {target.shown}: {_reason(e)}") from None


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[Callable[[], bool]]:
    """Holds Ctrl-C (and SIGTERM, SIGHUP: see `plait._interrupt.STOP_SIGNALS`) back for a few
    renames; yields a function telling whether one came."""
    came: list[int] = []
    with _interrupt.deferred(came.append):
        yield lambda: bool(came)


def human_bytes(n: int) -> str:
    """`1536` -> `1.5 KiB` (binary units, as the core's messages)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
