"""Files that appear whole or not at all.

Every file a command writes goes to a temporary name in the same folder and is
renamed into place only once it is complete, so an interrupt, a crash or a full
disk leaves the previous file (or none) under the final name, never a truncated
one. A set of files (an export's ``.tra``, ``.lab``, rewards and ``.props``) is
renamed into place together, after all of them are written; SIGINT is held off
during the renames so the set is never left half-replaced by Ctrl-C. A file
written as it streams (games out of the simulator) takes :class:`AtomicFile`,
which is renamed into place by :meth:`AtomicFile.commit` and dropped otherwise.

An exit that skips the ``finally`` blocks (the command line's Ctrl-C handler ends the
process at once) calls :func:`remove_temporaries` first. The temporary files are
hidden (``.name.XXXX.part``) and get the permissions a plain ``open`` would give
(those of the file replaced, else ``0o666`` less the umask), not the private
``0o600`` of :func:`tempfile.mkstemp`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any


def _umask() -> int:
    # /proc says it without changing it (os.umask sets it, racing other threads' file creation)
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Temporary files not yet renamed or removed: what an immediate exit (Ctrl-C) must delete.
_LIVE: set[str] = set()


def remove_temporaries() -> None:
    """Delete every temporary file still open here (an exit that skips ``finally`` blocks calls this)."""
    for name in list(_LIVE):
        with contextlib.suppress(OSError):
            os.unlink(name)
        _LIVE.discard(name)


def _forget(temp: Path) -> None:
    with contextlib.suppress(OSError):
        temp.unlink()
    _LIVE.discard(str(temp))


def _temp_beside(path: Path) -> Path:
    # A Ctrl-C between the file's creation and its registration would leave it behind (the command line's
    # handler exits at once, deleting only what _LIVE names): SIGINT waits until both are done.
    with _sigint_held():
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
        _LIVE.add(name)
    try:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~_umask()
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    return Path(name)


#: The signals held while a temporary file is created and registered.
_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Delay SIGINT, SIGTERM or SIGHUP arriving inside the block until its end (main thread only)."""
    pending: list[Any] = []
    try:
        old = {sig: signal.signal(sig, lambda *a: pending.append(a)) for sig in _HELD}
    except ValueError:  # not the main thread: nothing to hold
        yield
        return
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if pending:
            handler = old[pending[0][0]]
            if callable(handler):
                handler(*pending[0])
            elif handler == signal.SIG_DFL:
                signal.raise_signal(pending[0][0])


@contextlib.contextmanager
def atomic_files(paths: Sequence[str | Path]) -> Iterator[list[Path]]:
    """Temporary paths to write, renamed onto ``paths`` together when the block ends without error.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_files([d / "a.txt", d / "b.txt"]) as (a, b):
    ...     _ = a.write_text("one"), b.write_text("two")
    >>> sorted(p.name for p in d.iterdir())
    ['a.txt', 'b.txt']
    """
    finals = [Path(p) for p in paths]
    temps: list[Path] = []
    try:
        for p in finals:
            temps.append(_temp_beside(p))
        yield temps
        with _sigint_held():
            for t, p in zip(temps, finals, strict=True):
                os.replace(t, p)
                _LIVE.discard(str(t))
    finally:
        for t in temps:
            _forget(t)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **kw: Any) -> Iterator[IO[Any]]:
    """An open file for ``path`` that takes its final name only when the block ends without error.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "out.csv"
    >>> with atomic_write(p, encoding="utf-8") as fh:
    ...     _ = fh.write("winner,turns\\n")
    >>> p.read_text()
    'winner,turns\\n'
    """
    with atomic_files([path]) as (tmp,), open(tmp, mode, **kw) as fh:
        yield fh


class AtomicFile:
    """A file opened under a temporary name beside ``path``, for output written as it streams.

    :meth:`commit` closes it and renames it onto ``path``; :meth:`discard` (or leaving a
    ``with`` block by an error or an interrupt) closes and removes it, leaving ``path``
    as it was. Opening can raise :class:`OSError` (a missing folder, no permission).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "games.csv"
    >>> f = AtomicFile(p, "w", encoding="utf-8")
    >>> _ = f.file.write("winner,turns\\n")
    >>> p.exists()
    False
    >>> f.commit(); p.read_text()
    'winner,turns\\n'
    """

    def __init__(self, path: str | Path, mode: str = "w", **kw: Any):
        self.path = Path(path)
        self.temp = _temp_beside(self.path)
        try:
            self.file: IO[Any] = open(self.temp, mode, **kw)  # closed by commit or discard
        except BaseException:
            _forget(self.temp)
            raise
        self.done = False

    def commit(self) -> None:
        """Close the file and give it its final name (once; later calls do nothing)."""
        if self.done:
            return
        try:
            self.file.close()
            with _sigint_held():
                os.replace(self.temp, self.path)
                _LIVE.discard(str(self.temp))
        finally:
            self.done = True
            _forget(self.temp)

    def discard(self) -> None:
        """Close and remove the temporary file; the final name is left untouched."""
        if self.done:
            return
        self.done = True
        with contextlib.suppress(OSError):
            self.file.close()
        _forget(self.temp)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()

    def __del__(self) -> None:  # dropped without commit: nothing appears under the final name
        with contextlib.suppress(Exception):
            self.discard()


__all__ = ["AtomicFile", "atomic_files", "atomic_write", "remove_temporaries"]
