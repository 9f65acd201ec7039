"""What every command-line module shares: the output format flag and the one-line failure.

The main command line (:mod:`markov_oca.cli`) and a family's own commands (``markov-oca ur
...``, :mod:`markov_oca.ur.commands`, which ``cli`` mounts) both use these, so a family's
commands fail in the same one line with the same exit codes.
"""

from __future__ import annotations

from enum import StrEnum

import typer


class Format(StrEnum):
    text = "text"
    json = "json"


def fail(message: str, code: int) -> None:
    """Print ``markov-oca: error: MESSAGE`` on stderr and end the command with ``code``."""
    typer.echo(f"markov-oca: error: {message}", err=True)
    raise typer.Exit(code)


__all__ = ["Format", "fail"]
