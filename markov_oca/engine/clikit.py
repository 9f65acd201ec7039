"""What every command-line module shares: the app class, the output format flag and the one-line failure.

The main command line (:mod:`markov_oca.cli`) and a family's own commands (``markov-oca ur
...``, :mod:`markov_oca.ur.commands`, which ``cli`` mounts) both build their commands with
:class:`App`, so every ``--help`` screen reads the same way, and both fail in the same one
line with the same exit codes.

Help in click's notation. From typer 0.2x on, typer prints a required argument as
``{file}`` in the usage line and every option's type as ``<int>``, ``<str>``,
``<list[str]>`` or ``<bool>`` (a flag too). :class:`App` makes its commands and groups
print them as click and earlier typer do: ``FILE`` in the usage line, and ``INTEGER``,
``FLOAT``, ``TEXT``, ``[text|json]`` for a value, nothing for a flag.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

_TYPE_NAMES = {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "BOOLEAN"}


def _value_metavar(param: Any, ctx: Any) -> str:
    """A parameter's value as click names it: ``INTEGER``, ``TEXT``, ``[text|json]``, ``PATH``."""
    desc = param.type_descriptor
    if desc.is_choice:
        return f"[{param.display_type(ctx)[1:-1]}]" if param.show_choices else "TEXT"
    if desc.is_path:
        return "PATH"
    kind = desc.annotation
    if desc.is_list:
        (kind,) = getattr(kind, "__args__", (str,))
    name = _TYPE_NAMES.get(kind, getattr(kind, "__name__", "TEXT").upper())
    return f"{name} RANGE" if desc.is_ranged else name


class _Argument(TyperArgument):
    """An argument shown as click shows it: ``FILE`` in the usage line, ``TEXT`` as its type."""

    def get_usage_pieces(self, ctx: Any) -> list[str]:
        name = (self.metavar or self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return [name + ("..." if self.nargs != 1 else "")]

    def get_error_hint(self, ctx: Any = None) -> str:
        return f"'{(self.metavar or self.name or '').upper()}'"

    def display_type_rich(self, ctx: Any) -> str | None:
        return _value_metavar(self, ctx)


class _Option(TyperOption):
    """An option shown as click shows it: its value's type (``INTEGER``), nothing for a flag."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.metavar is not None:
            return self.metavar
        return None if self.is_flag else _value_metavar(self, ctx)


def _in_click_notation(params: list[Any]) -> list[Any]:
    for p in params:  # the subclasses add no state: only how the parameter prints
        if type(p) is TyperArgument:
            p.__class__ = _Argument
        elif type(p) is TyperOption:
            p.__class__ = _Option
    return params


class Command(TyperCommand):
    """A command whose help prints its parameters in click's notation."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _in_click_notation(super().get_params(ctx))


class Group(TyperGroup):
    """A group of commands whose help prints its parameters in click's notation."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _in_click_notation(super().get_params(ctx))


class App(typer.Typer):
    """A :class:`typer.Typer` whose groups and commands print their help in click's notation.

    Examples
    --------
    >>> app = App(help="A tool.")
    >>> @app.command()
    ... def hello(name: str = typer.Argument(..., help="who to greet")) -> None:
    ...     typer.echo(f"hello {name}")
    """

    def __init__(self, **kw: Any) -> None:
        kw.setdefault("cls", Group)
        super().__init__(**kw)

    def command(self, name: str | None = None, **kw: Any) -> Any:
        kw["cls"] = kw.get("cls") or Command
        return super().command(name, **kw)


class Format(StrEnum):
    text = "text"
    json = "json"


def fail(message: str, code: int) -> None:
    """Print ``markov-oca: error: MESSAGE`` on stderr and end the command with ``code``."""
    typer.echo(f"markov-oca: error: {message}", err=True)
    raise typer.Exit(code)


__all__ = ["App", "Command", "Format", "Group", "fail"]
