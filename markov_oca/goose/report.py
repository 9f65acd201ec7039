"""The text of ``solve`` and ``explain`` for goose boards."""

from __future__ import annotations

from ..engine.text import options_lines
from .board import compile_board
from .rules import GooseRules


def explain_text(rules: GooseRules) -> str:
    board = compile_board(rules)
    lines = [
        f"{rules.title} [{rules.name}] from {rules.source}",
        *([f"it follows {rules.seed}"] if rules.seed else []),
        f"squares 0 (start, off the board) to {rules.goal} (the goal); {rules.dice.describe()} thrown"
        + "".join(f", {d.describe()} from square {s} on" for s, d in rules.dice_from),
        "",
        *options_lines(rules),
    ]
    if rules.first_throw:
        lines += ["", "first-throw rule (from square 0; the target's effect "
                  + ("applies)" if rules.first_throw_effect else "does not apply)")]
        for faces, t in rules.first_throw:
            lines.append(f"  {'+'.join(map(str, faces))} -> {t}")
    lines += ["", "squares with an effect:"]
    for s, sq in rules.squares.items():
        name = f" ({sq.name})" if sq.name else ""
        lines.append(f"  {s:3d}{name}: {sq.describe()}")
    lines += ["", "where a throw from each square ends (total -> final square, * = throws again, "
              "w = waits, mN = misses N turns, = = stays put):"]
    for s in range(rules.goal):
        cells = []
        for t in board.throws[s]:
            tag = f"{'+'.join(map(str, t.faces))}" if t.faces else str(t.total)
            end = "=" if not t.moved else str(t.final)
            flags = ("*" if t.again else "") + ("w" if t.wait else "") + (f"m{t.skip}" if t.skip else "")
            cells.append(f"{tag}->{end}{flags}")
        lines.append(f"  {s:3d}: " + " ".join(cells))
    return "\n".join(lines)


def explain_dict(rules: GooseRules) -> dict:
    """The board as the engine reads it, for ``explain --format json`` (schema ``markov_oca.explain/1``)."""
    board = compile_board(rules)
    return {
        "schema": "markov_oca.explain/1",
        "rules": rules.name, "title": rules.title, "seed": rules.seed, "source": rules.source,
        "goal": rules.goal,
        "dice": [{"from_square": 0, "count": rules.dice.count, "faces": rules.dice.faces}]
        + [{"from_square": sq, "count": d.count, "faces": d.faces} for sq, d in rules.dice_from],
        "options": {k: {"value": v, "choices": list(rules.option_choices.get(k, ())) or None,
                        "doc": rules.option_docs.get(k, "")} for k, v in rules.options.items()},
        "first_throw": [{"faces": list(f), "target": t} for f, t in rules.first_throw],
        "squares": [{"square": q, "name": sq.name, "effect": sq.describe(), "jump": sq.jump, "goose": sq.goose,
                     "again": sq.again, "miss": sq.miss, "wait": sq.wait, "stake": sq.stake}
                    for q, sq in rules.squares.items()],
        "throws": [[{"faces": list(t.faces) if t.faces else None, "total": t.total, "probability": str(t.probability),
                     "final": t.final, "moved": t.moved, "again": t.again, "wait": t.wait, "miss": t.skip,
                     "stake": t.stake, "finished": t.finished,
                     "landings": list(t.landings)} for t in board.throws[q]] for q in range(rules.goal)],
    }
