"""Errors that markov_oca reports to its users.

Every problem with user input (a rule file, an option, a player count) is a
:class:`RulesError` whose message is one line naming the file, key or value at
fault. The CLI prints that line and exits with code 2.
"""

from __future__ import annotations


class MarkovOcaError(Exception):
    """Base class of the errors this library raises on purpose.

    Catch it to tell a problem the library reports (bad input, a size refused, a solve that
    did not converge) from a bug.

    Examples
    --------
    >>> import markov_oca
    >>> try:
    ...     markov_oca.load("no-such-board")
    ... except markov_oca.MarkovOcaError as exc:
    ...     print(type(exc).__name__)
    RulesError
    """


class RulesError(MarkovOcaError, ValueError):
    """A rule set, an option or a request that cannot be played as given.

    Its message is one line: the source and key at fault first, then what is wrong (the
    command line prints it and exits with code 2).

    Parameters
    ----------
    message : str
        What is wrong; a message of several lines is joined into one.
    source : str, optional
        The file or rule set at fault.
    key : str, optional
        The key or option at fault.

    Examples
    --------
    >>> str(RulesError("expected an integer, got 'x'", source="board.toml", key="goal"))
    "board.toml: goal: expected an integer, got 'x'"
    """

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
    """A chain whose estimated size does not fit the memory at hand.

    It is raised before the work starts, with the estimate in its message.

    Examples
    --------
    >>> issubclass(TooLargeError, MemoryError) and issubclass(TooLargeError, MarkovOcaError)
    True
    """


class SolverError(MarkovOcaError, RuntimeError):
    """An iterative solve that did not reach its tolerance.

    Examples
    --------
    >>> issubclass(SolverError, RuntimeError) and issubclass(SolverError, MarkovOcaError)
    True
    """
