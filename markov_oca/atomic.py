"""Files that appear whole or not at all.

Every file a command writes goes to a temporary name in the same folder and is
renamed into place only once it is complete, so an interrupt, a crash or a full
disk leaves the previous file (or none) under the final name, never a truncated
one. A set of files (an export's ``.tra``, ``.lab``, rewards and ``.props``) is
renamed into place together, after all of them are written; SIGINT is held off
during the renames so the set is never left half-replaced by Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any


def _temp_beside(path: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    return Path(name)


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Delay a SIGINT that arrives inside the block until its end (main thread only)."""
    try:
        old = signal.getsignal(signal.SIGINT)
        pending: list[Any] = []
        signal.signal(signal.SIGINT, lambda *a: pending.append(a))
    except ValueError:  # not the main thread: nothing to hold
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if pending and callable(old):
            old(*pending[0])


@contextlib.contextmanager
def atomic_files(paths: Sequence[str | Path]) -> Iterator[list[Path]]:
    """Temporary paths to write, renamed onto ``paths`` together when the block ends without error.

    Example
    -------
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
    finally:
        for t in temps:
            with contextlib.suppress(FileNotFoundError):
                t.unlink()


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **kw: Any) -> Iterator[IO[Any]]:
    """An open file for ``path`` that takes its final name only when the block ends without error.

    Example
    -------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "out.csv"
    >>> with atomic_write(p, encoding="utf-8") as fh:
    ...     _ = fh.write("winner,turns\\n")
    >>> p.read_text()
    'winner,turns\\n'
    """
    with atomic_files([path]) as (tmp,), open(tmp, mode, **kw) as fh:
        yield fh


__all__ = ["atomic_files", "atomic_write"]
