"""Ctrl-C ends a command within about a second, with one line (``interrupted``) and exit code 130.

Python turns SIGINT into :class:`KeyboardInterrupt` only between bytecodes of the main
thread, so a numba kernel that runs for a minute, or worker threads the main thread waits
for, hold the interrupt back until they are done. The pieces here make it prompt:

- :data:`STOP`, a one-element array that the handler :func:`install` puts on SIGINT sets.
  A long kernel takes it as an argument and returns early once ``stop[0]`` is set (one
  load per outer iteration); the caller then calls :func:`check`, which raises
  :class:`KeyboardInterrupt` in whatever thread it runs.
- :func:`markov_oca.progress.blocks` hands out ranges of work sized to take about a tenth of
  a second each, so a kernel called once per block is interrupted between blocks.
- :func:`map_threads` runs work in threads and, on an interrupt, cancels what has not
  started and stops what has (through :data:`STOP`) instead of waiting for all of it.
- :func:`run_cli` runs the command line. Its handler does not raise: it deletes the
  temporary files, prints the line and ends the process with code 130 on the spot, so
  nothing waits for worker threads (and typer, which turns an interrupt into a silent
  exit 130, never sees one).

Files are never left half-written because every output goes through
:mod:`markov_oca.atomic`: under its temporary name until whole, and the temporary
removed by the ``finally`` blocks as an exception unwinds, or by the handler before an
immediate exit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
R = TypeVar("R")

# Set to 1 by the SIGINT handler; kernels read it (pass the array, numba freezes globals).
STOP = np.zeros(1, np.uint8)

MESSAGE = "interrupted"

#: The signals the command line ends on cleanly, each with its line and its conventional exit status
#: (128 + the signal's number): Ctrl-C, and what ``kill``, ``timeout``, a job scheduler or a closed
#: terminal send.
ENDINGS = {signal.SIGINT: (MESSAGE, 130), signal.SIGTERM: ("terminated", 143), signal.SIGHUP: ("terminated", 129)}


def requested() -> bool:
    """Whether an interrupt has been asked for (the handler of :func:`install` has run)."""
    return bool(STOP[0])


def check() -> None:
    """Raise :class:`KeyboardInterrupt` if an interrupt was asked for; call it after each block."""
    if STOP[0]:
        raise KeyboardInterrupt


def clear() -> None:
    """Forget an interrupt (before new work in a process that lives on, e.g. a notebook)."""
    STOP[0] = 0


def _on_sigint(signum: int, frame: Any) -> None:
    STOP[0] = 1
    raise KeyboardInterrupt


_PROG = ["markov-oca"]


def _exit_now(signum: int, frame: Any) -> None:
    STOP[0] = 1
    _leave(_PROG[0], signum)


def install(*, exit_now: bool = False, prog: str = "markov-oca") -> bool:
    """Put the SIGINT handler in place (main thread only); False if SIGINT is ignored or this is another thread.

    The handler sets :data:`STOP` and raises :class:`KeyboardInterrupt`; with ``exit_now``
    (the command line) it instead removes the temporary files of :mod:`markov_oca.atomic`,
    prints ``{prog}: interrupted`` and ends the process with code 130 on the spot. Raising
    is what a library must do, but on the command line it costs: the exception unwinds
    through ``with`` blocks that wait for worker threads, and raised as a numba kernel
    hands back its arrays it has been seen to crash the process (SIGSEGV). A SIGINT
    ignored on entry (a background job of a non-interactive shell, ``nohup``) stays ignored.
    """
    try:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            return False
        _PROG[0] = prog
        signal.signal(signal.SIGINT, _exit_now if exit_now else _on_sigint)
        if exit_now:  # the command line ends the same way on SIGTERM and SIGHUP, unless they are ignored
            for sig in (signal.SIGTERM, signal.SIGHUP):
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    signal.signal(sig, _exit_now)
    except ValueError:
        return False
    return True


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within the block SIGINT also sets :data:`STOP` (so kernels stop); the handler before is put back after."""
    try:
        old = signal.getsignal(signal.SIGINT)
    except ValueError:
        yield
        return
    if not install():
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        clear()


def map_threads(fn: Callable[[T], R], items: Iterable[T], workers: int) -> list[R]:
    """``[fn(x) for x in items]`` on ``workers`` threads; an interrupt does not wait for the queue.

    On :class:`KeyboardInterrupt` (or any error) the items not yet started are cancelled
    and :data:`STOP` is set so that running kernels that watch it return; the error is then
    raised. ``fn`` should call :func:`check` after its kernel returns.
    """
    pool = ThreadPoolExecutor(max(1, workers))
    futures = [pool.submit(fn, x) for x in items]
    try:
        out = [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        interrupted = isinstance(sys.exc_info()[1], KeyboardInterrupt)
        if interrupted:
            STOP[0] = 1
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return out


#: Threads a large pass over arrays (a file's bytes, its numbers, a table's rows) is split over, a range each.
THREADS = max(1, min(8, os.cpu_count() or 1))


def spans(total: int, parts: int) -> list[tuple[int, int]]:
    """``range(total)`` in up to ``parts`` consecutive (start, end) pieces of near equal size.

    >>> spans(10, 3)
    [(0, 3), (3, 6), (6, 10)]
    """
    cuts = [total * k // parts for k in range(parts + 1)]
    return [(a, b) for a, b in pairwise(cuts) if b > a]


def in_threads(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]``: in this thread for one item, else each item on a thread of its own
    (:func:`map_threads`)."""
    items = list(items)
    if len(items) <= 1:
        return [fn(x) for x in items]
    return map_threads(fn, items, len(items))


def _from_interrupt(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _leave(prog: str, signum: int = signal.SIGINT) -> None:
    from .atomic import remove_temporaries

    message, status = ENDINGS.get(signum, ENDINGS[signal.SIGINT])
    remove_temporaries()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        os.write(2, f"{prog}: {message}\n".encode())
    # Worker threads still inside a kernel would hold a normal exit until they finish.
    os._exit(status)


def _finish(code: Any) -> None:
    """End the process with ``code`` at once, the signal handlers still in place.

    A normal exit runs the interpreter's shutdown, during which Python puts the default signal
    handlers back: a Ctrl-C or SIGTERM arriving then would kill the process by the signal itself,
    with no line and no conventional status. Ending here leaves no such moment.
    """
    if code is None:
        code = 0
    elif not isinstance(code, int):
        with contextlib.suppress(Exception):
            print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def run_cli(main: Callable[[], Any], prog: str = "markov-oca") -> None:
    """Run ``main`` (a typer app, or a function calling one) with interrupts and terminations handled.

    SIGINT anywhere in ``main`` prints ``{prog}: interrupted`` on stderr as the only line and ends
    the process with exit code 130 at once; SIGTERM and SIGHUP print ``{prog}: terminated`` and end
    with 143 and 129 (the handler of ``install(exit_now=True)``; a :class:`KeyboardInterrupt` raised
    some other way, and typer's silent exit 130, end as SIGINT does). The temporary files of
    :mod:`markov_oca.core.atomic` are removed first. Every other exit keeps its code, and the
    process ends with the handlers still in place (:func:`_finish`).
    """
    install(exit_now=True, prog=prog)
    code: Any = 0
    try:
        main()
    except KeyboardInterrupt:
        _leave(prog)
    except SystemExit as exc:
        if STOP[0] or _from_interrupt(exc):
            _leave(prog)
        code = exc.code
    if STOP[0]:
        _leave(prog)
    _finish(code)


__all__ = ["ENDINGS", "MESSAGE", "STOP", "THREADS", "check", "clear", "in_threads", "install", "interruptible",
           "map_threads", "requested", "run_cli", "spans"]
