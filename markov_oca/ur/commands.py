"""The Ur family's own commands (``markov-oca ur ...``): queries of the optimal values."""

from __future__ import annotations

import json
from enum import StrEnum

import typer

from ..errors import RulesError, TooLargeError


class Format(StrEnum):
    text = "text"
    json = "json"


def _fail(message: str, code: int) -> None:
    typer.echo(f"markov-oca: error: {message}", err=True)
    raise typer.Exit(code)


app = typer.Typer(no_args_is_help=True, help="Royal Game of Ur tools.")


@app.command("best-move")
def best_move(
    position: str = typer.Argument(..., help="e.g. 'light:0,0,5,15 dark:0,3,8,14' (0 hand, 1-14 board, 15 off)"),
    to_move: str = typer.Option("light", "--to-move", help="light or dark"),
    rules: str = typer.Option("ur", "--rules", help="an Ur rule set (ur, ur-simplificado, ur-7-rescatados)"),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
) -> None:
    """The value of every legal move of a position for each throw, under optimal play."""
    from .bestmove import best_moves, parse_position
    from .rules import load_ur

    try:
        if to_move not in ("light", "dark"):
            raise RulesError(f"--to-move is light or dark, not {to_move!r}")
        light, dark = parse_position(position)
        r = load_ur(rules, {"pieces": len(light)})
        value, rows = best_moves(r, light, dark, to_move)
    except (RulesError, TooLargeError) as exc:
        _fail(str(exc), 2)
    if fmt is Format.json:
        typer.echo(json.dumps({"schema": "markov_oca.ur-best-move/1", "to_move": to_move, "value": value,
                               "moves": [vars(m) for m in rows]}, indent=1))
        return
    typer.echo(f"{to_move} to move wins with {value:.6f} under optimal play ({r.name}, {r.pieces} pieces)")
    for m in rows:
        src = "hand" if m.source == 0 else m.source
        move = "pass" if m.source < 0 else f"{src} -> {'off' if m.target == 15 else m.target}"
        mark = "  <- best" if m.best else ""
        extra = f" ({', '.join(e for e in m.events if e != 'pass')})" if m.source >= 0 and m.events else ""
        typer.echo(f"  throw {m.throw} (p {m.probability:.4f}): {move}{extra}: wins {m.value:.6f}{mark}")
