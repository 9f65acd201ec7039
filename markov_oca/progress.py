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
