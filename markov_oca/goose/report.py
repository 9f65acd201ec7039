"""The text of ``solve`` and ``explain`` for goose boards."""

from __future__ import annotations

import math

from ..report import fmt, option_text, options_lines, turn_text
from ..results import SolveResults
from .board import compile_board
from .rules import GooseRules


def solve_text(r: SolveResults) -> str:
    lines = [
        f"{r.title} [{r.rules}{', seed ' + r.seed if r.seed else ''}] "
        f"with {r.players} player{'s' if r.players > 1 else ''}",
        "options: " + ", ".join(f"{k}={option_text(v)}" for k, v in r.options.items()),
        f"chain: {r.states:,} states, {r.transitions:,} transitions; "
        + ("exact rational arithmetic" if r.exact else "floating point"),
        *([r.note] if r.note else []),
        "",
        "chance to win, by seat:",
    ]
    for s in r.seats:
        lines.append(f"  seat {s.seat}: {fmt(s.win)}")
    lines.append(f"chance of deadlock (the game never ends): {fmt(r.deadlock)}")
    if r.seats and r.seats[0].places is not None:
        lines.append("")
        lines.append("finishing places (place 1, 2, ...), by seat:")
        for s in r.seats:
            lines.append(f"  seat {s.seat}: " + "  ".join(f"{float(p):.6f}" for p in s.places))
    lines.append("")
    lines.append("expected totals (whole game; and given that the game ends):")
    for k, e in r.expected.items():
        lines.append(f"  {k:7s} {fmt(e.total):>12s}   given it ends: {fmt(e.given_end)}")
    for s in r.seats:
        turns = fmt(s.turns.total, 4)
        if isinstance(s.turns.total, float) and math.isinf(s.turns.total):
            turns += f" ({fmt(s.turns.given_end, 4)} given it ends)"
        parts = [f"turns {turns}", f"throws {fmt(s.throws.total, 4)}"]
        if s.stakes is not None:
            parts.append(f"stakes paid {fmt(s.stakes.total, 4)}")
        lines.append(f"  seat {s.seat}: " + ", ".join(parts))
    L = r.length
    lines += [
        "",
        "game length in turns (all seats' turns, missed ones included):",
        f"  mean given it ends {fmt(L.mean_given_end, 4)}; median {turn_text(L.median)}, "
        f"90th percentile {turn_text(L.p90)}, "
        f"99th percentile {turn_text(L.p99)}",
        f"  distribution computed to a tail mass of {L.tail_mass:.1e}; never ends with chance {L.never_ends:.6g}",
    ]
    if L.never_ends > 0:
        lines.append(f"  of the games that end: median {turn_text(L.given_end['median'])}, 90th percentile "
                     f"{turn_text(L.given_end['p90'])}, 99th percentile {turn_text(L.given_end['p99'])}")
    if r.landings:
        lines.append("")
        lines.append("landing on special squares (chance ever / expected number of landings), by seat:")
        special = sorted({l.square for l in r.landings if l.square in r.special_squares})
        for sq in special:
            row = [l for l in r.landings if l.square == sq]
            lines.append(f"  square {sq:3d}: " + "   ".join(
                f"seat {l.seat} {_chance(l.chance)} / {float(l.expected):.4f}" for l in row))
        lines.append("  (every square in --format json)")
    if r.landings_note:
        lines += ["", r.landings_note]
    res = max((s["residual"] for s in r.solver), default=0.0)
    if not r.exact:
        lines += ["", f"largest residual of the {len(r.solver)} linear solves: {res:.2e}"]
    return "\n".join(lines)


def _chance(x) -> str:
    """A landing chance, or ``-`` where it was not computed (nan: see the results' landings note)."""
    return "-" if x is None or x != x else f"{float(x):.4f}"


def explain_text(rules: GooseRules) -> str:
    board = compile_board(rules)
    lines = [
        f"{rules.title} [{rules.name}{', seed ' + rules.seed if rules.seed else ''}] from {rules.source}",
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
