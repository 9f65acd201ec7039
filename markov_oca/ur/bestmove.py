"""The best move of an Ur position under optimal play, for each throw.

Position notation (also in the README)::

    light:0,0,5,15 dark:0,3,8,14

one path square per piece: 0 in hand, 1..14 on the board (1-4 and 13-14 the
side's own squares, 5-12 the shared lane), 15 off the board. Both sides have the
same number of pieces; the side to move is given apart (light by default). On a
path of L squares (16 for Masters' path and Aseb's board) off is L + 1, and each
side's squares are counted along its own path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import RulesError
from .kernel import AGAIN, CAPTURE, GAME_OVER, OFF, PASS, ROSETTE, move_scores, moves
from .optimal import solve_optimal
from .rules import UrRules
from .state import encode, space_of


@dataclass
class MoveValue:
    throw: int
    probability: float
    source: int  # path square moved from (0 hand), -1 for a pass
    target: int  # path square reached (the path's length + 1 off), -1 for a pass
    events: list[str]
    value: float  # the mover's chance to win after this move, both playing optimally
    best: bool


def parse_position(text: str) -> tuple[list[int], list[int]]:
    """``"light:0,0,5,15 dark:0,3,8,14"`` -> (light squares, dark squares)."""
    sides: dict[str, list[int]] = {}
    for part in text.replace(";", " ").split():
        if ":" not in part:
            raise RulesError(f"position {text!r}: expected 'light:a,b,... dark:c,d,...', got {part!r}")
        name, squares = part.split(":", 1)
        name = name.strip().lower()
        if name not in ("light", "dark"):
            raise RulesError(f"position {text!r}: a side is light or dark, not {name!r}")
        try:
            sides[name] = [int(x) for x in squares.split(",") if x.strip()]
        except ValueError:
            raise RulesError(f"position {text!r}: squares are whole numbers (0 hand, path length + 1 off)") from None
    if set(sides) != {"light", "dark"}:
        raise RulesError(f"position {text!r}: give both light:... and dark:...")
    if len(sides["light"]) != len(sides["dark"]) or not 1 <= len(sides["light"]) <= 7:
        raise RulesError(f"position {text!r}: both sides need the same number of pieces, 1 to 7")
    return sides["light"], sides["dark"]


def best_moves(rules: UrRules, light: list[int], dark: list[int], to_move: str = "light",
               values: np.ndarray | None = None) -> tuple[float, list[MoveValue]]:
    """The position's value for the side to move and every legal move's value, per throw."""
    mine, theirs = (light, dark) if to_move == "light" else (dark, light)
    if len(mine) != rules.pieces:
        raise RulesError(f"position: {rules.name} is played with {rules.pieces} pieces a side, the position has "
                         f"{len(mine)} (choose --pieces)")
    try:
        pos = encode(mine, theirs, rules.code)
    except ValueError as exc:
        raise RulesError(f"position: {exc}") from None
    space = space_of(rules.pieces, rules.code)
    idx = space.rank(*pos)
    if values is None:
        from .table import find_table

        found = find_table(rules)  # a table saved by `markov-oca ur solve`, memory-mapped
        values = found[0] if found is not None else solve_optimal(rules).values
    mv = moves(space, [idx], rules)
    names = {AGAIN: "throws again", CAPTURE: "capture", ROSETTE: "rosette", OFF: "piece off",
             GAME_OVER: "game over", PASS: "pass"}
    scores = move_scores(mv.events, mv.succ, mv.n_moves, np.asarray(values, np.float64))
    out = []
    for t, throw in enumerate(mv.throws):
        rows = []
        for m in range(int(mv.n_moves[0, t])):
            ev = int(mv.events[0, t, m])
            val = float(scores[0, t, m])
            src = int(mv.frm[0, t, m])
            rows.append(MoveValue(int(throw), float(mv.probs[t]), src, src + int(throw) if src >= 0 else -1,
                                  [n for bit, n in names.items() if ev & bit], val, False))
        if rows:
            max(rows, key=lambda r: r.value).best = True
        out.extend(rows)
    return float(values[idx]), out
