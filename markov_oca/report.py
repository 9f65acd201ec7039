"""Reports for people: the text of ``solve`` and ``explain``.

The JSON output is ``SolveResults.to_dict()``; this module only lays results
out for reading in a terminal.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .goose.board import compile_board
from .goose.rules import GooseRules
from .results import Number, SolveResults


def fmt(x: Number, digits: int = 6) -> str:
    if isinstance(x, Fraction):
        s = f"{float(x):.{digits}f}"
        frac = f"{x.numerator}/{x.denominator}"
        return f"{s}  (= {frac})"
    if isinstance(x, float) and math.isinf(x):
        return "infinite"
    if isinstance(x, float) and math.isnan(x):
        return "n/a"
    return f"{float(x):.{digits}f}"


def solve_text(r: SolveResults) -> str:
    lines = [
        f"{r.title} [{r.rules}{', seed ' + r.seed if r.seed else ''}] "
        f"with {r.players} player{'s' if r.players > 1 else ''}",
        "options: " + ", ".join(f"{k}={_opt(v)}" for k, v in r.options.items()),
        f"chain: {r.states:,} states, {r.transitions:,} transitions; "
        + ("exact rational arithmetic" if r.exact else "floating point"),
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
        f"  mean given it ends {fmt(L.mean_given_end, 4)}; median {_q(L.median)}, 90th percentile {_q(L.p90)}, "
        f"99th percentile {_q(L.p99)}",
        f"  distribution computed to a tail mass of {L.tail_mass:.1e}; never ends with chance {L.never_ends:.6g}",
    ]
    if L.never_ends > 0:
        lines.append(f"  of the games that end: median {_q(L.given_end['median'])}, 90th percentile "
                     f"{_q(L.given_end['p90'])}, 99th percentile {_q(L.given_end['p99'])}")
    if r.landings:
        lines.append("")
        lines.append("landing on special squares (chance ever / expected number of landings), by seat:")
        special = sorted({l.square for l in r.landings if l.square in r.special_squares})
        for sq in special:
            row = [l for l in r.landings if l.square == sq]
            lines.append(f"  square {sq:3d}: " + "   ".join(
                f"seat {l.seat} {float(l.chance):.4f} / {float(l.expected):.4f}" for l in row))
        lines.append("  (every square in --format json)")
    elif r.landings_note:
        lines += ["", r.landings_note]
    res = max((s["residual"] for s in r.solver), default=0.0)
    if not r.exact:
        lines += ["", f"largest residual of the {len(r.solver)} linear solves: {res:.2e}"]
    return "\n".join(lines)


def _q(x: float) -> str:
    return "never" if math.isinf(x) else str(int(x))


def _opt(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def explain_text(rules: GooseRules) -> str:
    board = compile_board(rules)
    lines = [
        f"{rules.title} [{rules.name}{', seed ' + rules.seed if rules.seed else ''}] from {rules.source}",
        f"squares 0 (start, off the board) to {rules.goal} (the goal); {rules.dice.describe()} thrown"
        + "".join(f", {d.describe()} from square {s} on" for s, d in rules.dice_from),
        "",
        "options in force:",
    ]
    for k, v in rules.options.items():
        choices = rules.option_choices.get(k)
        extra = f"  (choices: {', '.join(choices)})" if choices else ""
        lines.append(f"  {k} = {_opt(v)}{extra}  {rules.option_docs.get(k, '')}")
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


def ur_text(r) -> str:
    """The text report of a pair of Ur policies (:class:`~markov_oca.results.UrResults`)."""
    L = r.length
    lines = [
        f"{r.title} [{r.rules}, seed {r.seed}] with {r.pieces} piece{'s' if r.pieces > 1 else ''} a side",
        f"light (moves first) plays {r.light}, dark plays {r.dark}",
        f"positions per side to move: {r.positions:,}; policy chain: {r.states:,} states, "
        f"{r.transitions:,} transitions",
        "",
        f"chance to win: light {fmt(r.wins['light'])}, dark {fmt(r.wins['dark'])}",
    ]
    if r.optimal_value is not None:
        lines.append(f"(light's chance when both play optimally: {r.optimal_value:.6f}; value iteration "
                     f"to a final change of {r.optimal_residual:.1e})")
    lines += [
        f"expected throws {fmt(r.expected['throws'].total, 4)}, turns {fmt(r.expected['turns'].total, 4)} "
        "(a rosette's extra throw is part of the same turn)",
        f"game length in turns: median {_q(L.median)}, 90th percentile {_q(L.p90)}, 99th percentile {_q(L.p99)}",
    ]
    res = max((s["residual"] for s in r.solver), default=0.0)
    lines += ["", f"largest residual of the {len(r.solver)} linear solves: {res:.2e}"]
    return "\n".join(lines)


def crosscheck_text(r) -> str:
    """A cross-check side by side: exact, simulated, the 99% interval, pass or fail (Holm)."""
    lines = [
        f"cross-check of {r.rules}, {r.setting or f'{r.players} players'}: "
        f"{r.games:,} games from {r.source}",
        f"games cut at {r.turn_limit} turns count as unfinished; exact chance of deadlock {r.exact_deadlock:.6g}",
    ]
    if r.simulated_options:
        lines.append("simulated with different options: "
                     + ", ".join(f"{k}={_opt(v)}" for k, v in r.simulated_options.items()))
    head = f"{'quantity':48s} {'exact':>12s} {'simulated':>12s}   {'99% interval':25s} {'p (Holm)':>9s}  verdict"
    lines += ["", head]
    for c in r.checks:
        if c.test.startswith("chi-square"):
            interval = f"chi2 = {c.simulated:.1f}, {c.test.split(', ')[1]}"
            exact, sim = "", ""
        else:
            exact, sim = _cell(c.exact), _cell(c.simulated)
            interval = "" if math.isnan(c.low) else f"[{_cell(c.low)}, {_cell(c.high)}]"
        lines.append(f"{c.quantity[:48]:48s} {exact:>12s} {sim:>12s}   {interval:25s} {c.adjusted:9.3g}  "
                     + ("pass" if c.passed else "FAIL"))
    lines += [""] + [f"note: {n}" for n in r.notes]
    failed = sum(not c.passed for c in r.checks)
    lines.append(f"verdict: {'PASS' if r.passed else 'FAIL'} ({len(r.checks)} tests, {failed} failed; "
                 f"Holm-corrected at {r.alpha:g} family-wise)")
    return "\n".join(lines)


def _cell(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:.0f}" if float(x).is_integer() and abs(x) >= 2 else f"{x:.6f}"


def ur_explain_dict(rules) -> dict:
    """An Ur rule set as read, for ``explain --format json`` (schema ``markov_oca.explain-ur/1``)."""
    return {
        "schema": "markov_oca.explain-ur/1",
        "rules": rules.name, "title": rules.title, "seed": rules.seed, "source": rules.source,
        "pieces": rules.pieces, "path_length": rules.path_length, "shared": list(rules.shared),
        "rosettes": list(rules.rosettes), "throw": rules.describe_throw(),
        "throws": [{"move": v, "probability": str(p)} for v, p in rules.throws],
        "end": rules.describe_end(),
        "options": {k: {"value": v, "choices": list(rules.option_choices.get(k, ())) or None,
                        "doc": rules.option_docs.get(k, "")} for k, v in rules.options.items()},
    }


def ur_explain_text(rules) -> str:
    """An Ur rule set as the engine reads it: path, rosettes, the throw, the end, the options."""
    lo, hi = rules.shared
    lines = [
        f"{rules.title} [{rules.name}{', seed ' + rules.seed if rules.seed else ''}] from {rules.source}",
        f"{rules.pieces} piece{'s' if rules.pieces > 1 else ''} a side; each walks path squares 1..{rules.path_length}"
        f" (0 is the hand, {rules.path_length + 1} off the board); squares {lo}..{hi} are shared, where a piece "
        "landing on an opponent's sends it back to the hand",
        "rosettes (another throw; the shared one cannot be taken while held): "
        + ", ".join(map(str, rules.rosettes)),
        f"throw: {rules.describe_throw()}: "
        + ", ".join(f"{v} with {p}" for v, p in rules.throws),
        f"end: {rules.describe_end()}",
        "",
        "options in force:",
    ]
    for k, v in rules.options.items():
        choices = rules.option_choices.get(k)
        extra = f"  (choices: {', '.join(map(str, choices))})" if choices else ""
        lines.append(f"  {k} = {_opt(v)}{extra}  {rules.option_docs.get(k, '')}")
    return "\n".join(lines)
