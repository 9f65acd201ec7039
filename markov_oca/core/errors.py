"""Errors that markov_oca reports to its users.

Every problem with user input (a rule file, an option, a player count) is a
:class:`RulesError` whose message is one line naming the file, key or value at
fault. The CLI prints that line and exits with code 2.
"""

from __future__ import annotations


class MarkovOcaError(Exception):
    """Base class of the errors this library raises on purpose."""


class RulesError(MarkovOcaError, ValueError):
    """A rule set, an option or a request that cannot be played as given."""

    def __init__(self, message: str, *, source: str | None = None, key: str | None = None):
        self.source = source
        self.key = key
        parts = [p for p in (source, key) if p]
        prefix = ": ".join(parts)
        # One line, whatever a library's message under it holds (tarfile's and tomllib's run over several).
        lines = (line.strip().removeprefix("- ") for line in str(message).splitlines())
        message = "; ".join(line for line in lines if line)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class TooLargeError(MarkovOcaError, MemoryError):
    """A chain whose estimated size does not fit the memory at hand."""


class SolverError(MarkovOcaError, RuntimeError):
    """An iterative solve that did not reach its tolerance."""
