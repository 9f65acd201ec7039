"""Progress bars on stderr for long work, silent when not wanted."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class _Silent:
    def add_task(self, *args, **kwargs) -> int:
        return 0

    def update(self, *args, **kwargs) -> None:
        pass


@contextlib.contextmanager
def progress_bar(enabled: bool, what: str = "") -> Iterator[Progress | _Silent]:
    """A rich progress display on stderr when ``enabled`` and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield _Silent()
        return
    console = Console(stderr=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        yield bar


class Pacer:
    """Sizes of the blocks of a long loop so that each block takes about ``seconds``.

    A kernel run on a block cannot be interrupted; between blocks :func:`~markov_oca.interrupt.check`
    sees a Ctrl-C. The size starts at ``first`` and follows the measured time of each block
    (at most four times larger or smaller from one block to the next), so a loop stays
    responsive whether one item costs a microsecond or a millisecond.

    >>> p = Pacer(first=1000, seconds=0.1)
    >>> p.size
    1000
    >>> p.took(0.4); p.size   # four times too slow: a quarter the size
    250
    """

    def __init__(self, first: int = 4096, seconds: float = 0.1, most: int = 1 << 30):
        self.size = max(1, int(first))
        self.seconds = seconds
        self.most = most

    def took(self, elapsed: float) -> None:
        """Record that the last block of :attr:`size` items took ``elapsed`` seconds, and check for Ctrl-C."""
        from .interrupt import check

        factor = min(4.0, max(0.25, self.seconds / max(elapsed, 1e-9)))
        self.size = max(1, min(self.most, int(self.size * factor)))
        check()


def blocks(total: int, *, first: int = 4096, seconds: float = 0.1, bar: Progress | _Silent | None = None,
           task: int | None = None) -> Iterator[tuple[int, int]]:
    """Ranges ``(lo, hi)`` covering ``range(total)``, each sized to take about ``seconds`` (see :class:`Pacer`).

    Between blocks a pending Ctrl-C is raised (also one seen by the handler of
    :func:`markov_oca.interrupt.install` while a kernel ran), and ``bar``'s ``task``
    is advanced to ``hi``.

    >>> [hi - lo for lo, hi in blocks(10, first=4)][:1], list(blocks(10, first=4))[-1][1]
    ([4], 10)
    """
    import time

    pace = Pacer(first, seconds)
    lo = 0
    while lo < total:
        hi = min(total, lo + pace.size)
        t0 = time.perf_counter()
        yield lo, hi
        if bar is not None and task is not None:
            bar.update(task, completed=hi)
        pace.took(time.perf_counter() - t0)
        lo = hi
