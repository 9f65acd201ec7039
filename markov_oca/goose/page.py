"""The report page of a goose board: who wins, how long, where the pieces land, the board drawn."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

from ..engine.page import (
    BOARD_PNG,
    Block,
    Code,
    Heading,
    Inline,
    Num,
    Picture,
    Table,
    colour_scale,
    length_blocks,
    new_figure,
    options_table,
    para,
    plural,
    png_bytes,
    row_cell,
    solver_blocks,
    text_colour,
)
from ..engine.race import SolveResults
from ..engine.text import fmt
from .rules import GooseRules

# ----------------------------------------------------------------------------- goose pages

_OVERSHOOT = {
    "bounce": "a throw past the goal bounces back by the excess",
    "stay": "a throw past the goal leaves the piece where it was",
    "finish": "reaching or passing the goal finishes",
}


def goose_page(rules: GooseRules, res: SolveResults) -> tuple[str, list[Block]]:
    """The page of ``res`` (a solve of ``rules``): its heading and its blocks, section by section.

    Parameters
    ----------
    rules:
        The rule set solved.
    res:
        Its results.
    """
    players = res.players
    head = f"{res.title} with {plural(players, 'player')}"
    blocks: list[Block] = [
        Heading(1, head),
        para(Code(res.rules), ", read from ", Code(res.source),
           f"; {plural(players, 'player')}, seat 1 moves first."),
        *([para(f"It follows {res.seed}.")] if res.seed else []),
    ]
    if rules.summary:
        blocks.append(para(f"The rule file's summary: {rules.summary}."))
    blocks.append(para(f"Solved exactly as a Markov chain of {res.states:,} states and {res.transitions:,} "
                     "transitions (floating point) by markov_oca.", small=True))

    blocks += _rules_blocks(rules)
    blocks += _wins_blocks(res)
    blocks += _how_long_blocks(res)
    blocks += _board_blocks(rules, res)
    blocks += solver_blocks(res.solver, res.timings)
    return head, blocks


def _rules_blocks(rules: GooseRules) -> list[Block]:
    """The rules as read: board, dice, overshoot, first-throw rule, squares with an effect, options."""
    blocks: list[Block] = []
    blocks.append(Heading(2, "The rules as read"))
    dice = f"{rules.dice.describe()} thrown" + "".join(f", {d.describe()} from square {s} on"
                                                      for s, d in rules.dice_from)
    blocks.append(para(f"Squares 0 (the start, off the board) to {rules.goal} (the goal); {dice}; "
                     f"{_OVERSHOOT[rules.overshoot]}."))
    if rules.first_throw:
        effect = "applies" if rules.first_throw_effect else "does not apply"
        blocks.append(para(f"First-throw rule: a first throw (from square 0) of these faces goes straight to a "
                         f"square; the target's effect {effect}."))
        blocks.append(Table(["Throw", "Goes to square"],
                            [["+".join(map(str, faces)), Num(str(t))] for faces, t in rules.first_throw]))
    rows: list[list[Inline]] = [[Num(str(s)), sq.name or "", sq.describe()] for s, sq in rules.squares.items()]
    goal_effect = ("the first to reach it wins and the game stops" if rules.until == "first"
                   else "a piece that reaches it finishes; the others play on for the places")
    rows.append([Num(str(rules.goal)), "goal", goal_effect])
    blocks.append(para("Squares with an effect:"))
    blocks.append(Table(["Square", "Name", "Effect"], rows))
    blocks.append(para("Options in force:"))
    blocks.append(options_table(rules.options, rules.option_choices, rules.option_docs))

    return blocks


def _wins_blocks(res: SolveResults) -> list[Block]:
    """Who wins: each seat's chance (and places), and the chance of deadlock."""
    players = res.players
    blocks: list[Block] = []
    blocks.append(Heading(2, "Who wins"))
    if res.seats and res.seats[0].places is not None:
        # The chance to win is the chance of place 1.
        hdr = ["Seat", "Chance to win"] + [f"Place {k + 1}" for k in range(1, players)]
        wins = [[f"seat {s.seat}", Num(fmt(s.win))] + [Num(fmt(p)) for p in (s.places or [])[1:]]
                for s in res.seats]
    else:
        hdr = ["Seat", "Chance to win"]
        wins = [[f"seat {s.seat}", Num(fmt(s.win))] for s in res.seats]
    blocks.append(Table(hdr, wins))
    blocks.append(para("Chance of deadlock (the game never ends): ", Num(fmt(res.deadlock)),
                     "." if float(res.deadlock) == 0 else
                     ": every piece still in the game is stuck waiting forever."))

    return blocks


def _how_long_blocks(res: SolveResults) -> list[Block]:
    """How long it lasts: expected totals, per seat, and the length's distribution."""
    blocks: list[Block] = []
    blocks.append(Heading(2, "How long it lasts"))
    blocks.append(para("Expected totals over the whole game, and given that the game ends. A turn is each time "
                     "the turn comes to a seat, missed and waiting turns included; a round is counted at each "
                     "turn of the lowest-numbered seat still in the game; a throw is one throw of the dice."))
    blocks.append(Table(["Expected", "Whole game", "Given that the game ends"],
                        [[k, Num(fmt(e.total)), Num(fmt(e.given_end))] for k, e in res.expected.items()]))
    seat_hdr = ["Seat", "Turns", "Turns given it ends", "Throws", "Throws given it ends"]
    has_stakes = any(s.stakes is not None for s in res.seats)
    if has_stakes:
        seat_hdr.append("Stakes paid")
    seat_rows = []
    for s in res.seats:
        row: list[Inline] = [f"seat {s.seat}", Num(fmt(s.turns.total, 4)), Num(fmt(s.turns.given_end, 4)),
                             Num(fmt(s.throws.total, 4)), Num(fmt(s.throws.given_end, 4))]
        if has_stakes:
            row.append(Num(fmt(s.stakes.total, 4)) if s.stakes is not None else "")
        seat_rows.append(row)
    blocks.append(Table(seat_hdr, seat_rows))
    blocks += length_blocks(res.length, "all seats' turns, missed ones included")

    return blocks


def _board_blocks(rules: GooseRules, res: SolveResults) -> list[Block]:
    """The board drawn, coloured by seat 1's landings, and the landings on special squares by seat."""
    blocks: list[Block] = []
    blocks.append(Heading(2, "The board"))
    lands = ("(a landing is every square whose effect a throw applies, and the square where the piece comes to "
             "rest; a piece sent back by another, or released from a waiting square, does not land)")
    values = _landing_values(res, seat=1, field="chance")
    label = "chance that seat 1 ever lands on the square"
    what = f"the chance that seat 1 ever lands on the square {lands}"
    if values is None and (values := _landing_values(res, seat=1, field="expected")) is not None:
        label = "expected landings of seat 1 on the square"
        what = f"the expected number of times seat 1 lands on the square {lands}"
    if values is None:
        label, what = "not computed", "nothing: landings not computed"
    spiral = rules.goal == 63
    shape = ("as a spiral: square 1 at the outer corner, winding inwards to 63 in the centre, as on a "
             "printed board" if spiral else
             "as rows of ten, square 1 at the bottom left, each row running the other way from the one below")
    letters = _initials(rules)
    legend = "; ".join(f"{k}: {v}" for k, v in _legend(rules, letters).items())
    blocks.append(Picture(
        BOARD_PNG,
        _goose_board_png(rules, values, letters, spiral, label),
        f"The board of {res.title} drawn {shape.split(':')[0]}, each square coloured by {what.split(' (')[0]}",
        f"The board drawn {shape}. Colour: {what}. Special squares have a thick outline and a letter ({legend})."
        + (" Arrows show where a jump goes (green forward, red back)." if not spiral else ""),
    ))
    if res.landings:
        chances = _landing_values(res, seat=1, field="chance") is not None
        blocks.append(para("Landing on special squares, by seat: " + ("the chance of ever landing there, and the "
                           "expected number of landings." if chances else "the expected number of landings.")))
        blocks.append(_landing_table(rules, res, chances))
    if res.landings_note:
        blocks.append(para(res.landings_note[0].upper() + res.landings_note[1:] + "."))

    return blocks


def _landing_values(res: SolveResults, seat: int, field: str) -> np.ndarray | None:
    """Per square, the seat's ``chance`` of ever landing or ``expected`` landings; None when not computed."""
    if not res.landings:
        return None
    g = max(x.square for x in res.landings)
    out = np.zeros(g + 1)
    for x in res.landings:
        if x.seat == seat:
            out[x.square] = float(getattr(x, field))
    return None if np.isnan(out).all() else out


def _landing_table(rules: GooseRules, res: SolveResults, chances: bool = True) -> Table:
    by = {(x.seat, x.square): x for x in res.landings or []}
    hdr = ["Square", "Name"]
    for i in range(1, res.players + 1):
        hdr += ([f"Seat {i}: chance"] if chances else []) + [f"Seat {i}: expected landings"]
    rows: list[list[Inline]] = []
    for sq in res.special_squares:
        name = rules.square(sq).name or ("goal" if sq == rules.goal else "first-throw target"
                                         if any(t == sq for _, t in rules.first_throw) else "")
        row: list[Inline] = [Num(str(sq)), name]
        for i in range(1, res.players + 1):
            x = by.get((i, sq))
            cells = ([Num(f"{float(x.chance):.4f}")] if chances else []) + [Num(f"{float(x.expected):.4f}")] \
                if x else [""] * (2 if chances else 1)
            row += cells
        rows.append(row)
    return Table(hdr, rows)


def _initials(rules: GooseRules) -> dict[int, str]:
    """A short mark per special square: its name's initial, two letters where initials clash."""
    names = sorted({sq.name for sq in rules.squares.values() if sq.name})
    # Marks start at the name's first letter or digit (a name may begin with a sign or a space).
    word = {n: n[m.start():] if (m := re.search(r"\w", n)) else n for n in names}
    mark: dict[str, str] = {}
    for n in names:
        w = word[n]
        clash = [m for m in names if word[m][:1].lower() == w[:1].lower()]
        mark[n] = w[:1].upper() if len(clash) == 1 else w[:2].capitalize()
        if mark[n] in {v for k, v in mark.items() if k != n}:
            mark[n] = w[:3].capitalize()
    return {s: mark.get(sq.name, "*") for s, sq in rules.squares.items()}


def _legend(rules: GooseRules, letters: Mapping[int, str]) -> dict[str, str]:
    legend: dict[str, str] = {}
    for s, sq in rules.squares.items():
        key = letters[s]
        text = sq.name or "no name"
        if key not in legend:
            legend[key] = text if sq.name else "a square without a name"
    return legend


def _spiral(cells: int, width: float = 1.0, inner: float = 1.5, start: float = math.radians(225)):
    """An Archimedean spiral track cut into ``cells`` cells of equal length along its middle.

    Returns the cells' outlines (inward, counter-clockwise from the outer end at
    angle ``start``), their centres, the outline of the centre left inside the
    last turn, and the outer radius.
    """
    a, b = math.pi * width, 2 * math.pi * inner
    turns = (-b + math.sqrt(b * b + 4 * a * cells * width)) / (2 * a)
    R = inner + width * turns

    def rho(phi):
        return R - width * phi / (2 * math.pi)

    def point(phi, r):
        return r * np.cos(start + phi), r * np.sin(start + phi)

    # Arc length of the middle line from the outer end: R phi - w phi^2 / (4 pi); inverted for equal cells.
    s = np.arange(cells + 1) * width
    phis = (R - np.sqrt(np.maximum(R * R - width * s / math.pi, 0.0))) * 2 * math.pi / width
    outlines, centres = [], []
    for k in range(cells):
        ph = np.linspace(phis[k], phis[k + 1], 16)
        xo, yo = point(ph, rho(ph) + width / 2)
        xi, yi = point(ph[::-1], rho(ph[::-1]) - width / 2)
        outlines.append(np.column_stack([np.r_[xo, xi], np.r_[yo, yi]]))
        mid = (phis[k] + phis[k + 1]) / 2
        centres.append(point(mid, rho(mid)))
    end = phis[-1]
    ph = np.linspace(end - 2 * math.pi, end, 120)
    xc, yc = point(ph, rho(ph) - width / 2)
    return outlines, centres, np.column_stack([xc, yc]), R


def _goose_board_png(rules: GooseRules, chance: np.ndarray | None, letters: Mapping[int, str],
                     spiral: bool, label: str = "chance that seat 1 ever lands on the square") -> bytes:
    """The board, each square coloured by ``chance`` (a value per square: the chance of ever landing, or the
    expected landings, as ``label`` says)."""
    from matplotlib.cm import ScalarMappable

    goal = rules.goal
    # The scale is set by the squares before the goal; the goal (the chance to finish) may lie above it.
    cmap, norm = colour_scale(chance[1:goal] if chance is not None else None)
    over = chance is not None and chance[goal] > norm.vmax

    def colour(q: int):
        return cmap(min(norm(chance[q]), 1.0)) if chance is not None else (1.0, 1.0, 1.0, 1.0)

    fig, ax, cells, size = _draw_spiral(rules, colour) if spiral else _draw_rows(rules, colour)
    for q in range(1, goal + 1):
        x, y = cells[q]
        fg = text_colour(colour(q))
        mark = letters.get(q, "")
        if q == goal:
            mark = "goal" if chance is None else f"goal {chance[goal]:.3f}"
        ax.text(x, y + (0.14 if mark else 0), str(q), ha="center", va="center", fontsize=size + (3 if
                q == goal and spiral else 0), color=fg, zorder=6, fontweight="bold" if q == goal else "normal")
        if mark:
            ax.text(x, y - 0.22, mark, ha="center", va="center", fontsize=size - 1, color=fg, zorder=6,
                    fontweight="bold", fontstyle="italic")
    ax.set_aspect("equal")
    ax.axis("off")
    h = fig.get_figheight()
    cax = fig.add_axes((0.2, 0.85 / h, 0.6, 0.18 / h))
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), cax=cax, orientation="horizontal",
                       extend="max" if over else "neither")
    bar.set_label(label if chance is not None else "not computed")
    legend = "   ".join(f"{k} {v}" for k, v in _legend(rules, letters).items())
    if legend:
        fig.text(0.5, 0.1 / h, legend, ha="center", va="bottom", fontsize=10, color=_EDGE_SPECIAL, wrap=True)
    return png_bytes(fig)


_EDGE_SPECIAL = "#8b1a1a"  # the outline and legend of the special squares


def _draw_spiral(rules: GooseRules, colour):
    """The squares of a 63-square board drawn as a spiral: the figure, its axes, each square's centre and the
    font size of the numbers."""
    from matplotlib.patches import Polygon

    goal, special = rules.goal, set(rules.squares)
    outlines, centres, centre, R = _spiral(goal - 1)
    fig = new_figure(9.0, 9.6)
    ax = fig.add_axes((0.02, 0.13, 0.96, 0.86))
    for q in range(1, goal):
        sp = q in special
        ax.add_patch(Polygon(outlines[q - 1], closed=True, facecolor=colour(q),
                             edgecolor=_EDGE_SPECIAL if sp else "#555", lw=2.4 if sp else 0.8,
                             zorder=3 if sp else 2))
    ax.add_patch(Polygon(centre, closed=True, facecolor=colour(goal), edgecolor=_EDGE_SPECIAL, lw=2.4, zorder=3))
    cells = {q: centres[q - 1] for q in range(1, goal)}
    cells[goal] = (0.0, 0.0)
    ang = math.radians(225)
    ax.annotate("start", xy=((R + 0.55) * math.cos(ang + 0.12), (R + 0.55) * math.sin(ang + 0.12)),
                xytext=((R + 0.9) * math.cos(ang - 0.1), (R + 0.9) * math.sin(ang - 0.1)),
                ha="center", va="center", fontsize=10, color="#333",
                arrowprops={"arrowstyle": "->", "color": "#333"})
    pts = np.vstack(outlines)
    ax.set_xlim(pts[:, 0].min() - 1.3, pts[:, 0].max() + 0.3)
    ax.set_ylim(pts[:, 1].min() - 0.3, pts[:, 1].max() + 0.3)
    return fig, ax, cells, 10


def _draw_rows(rules: GooseRules, colour):
    """The squares drawn as rows of ten, with an arrow for each jump: the figure, its axes, each square's
    centre and the font size of the numbers."""
    from matplotlib.patches import FancyArrowPatch, Rectangle

    goal, special = rules.goal, set(rules.squares)
    width = min(10, goal)
    nrows = math.ceil(goal / width)
    fig_h = 0.9 * nrows + 1.6
    fig = new_figure(max(4.0, 0.9 * width + 1.2), fig_h)
    ax = fig.add_axes((0.04, 1.25 / fig_h, 0.92, 1 - 1.4 / fig_h))
    cells = {}
    for q in range(1, goal + 1):
        col, row = row_cell(q, width)
        sp = q in special or q == goal
        ax.add_patch(Rectangle((col, row), 1, 1, facecolor=colour(q), edgecolor=_EDGE_SPECIAL if sp else "#555",
                               lw=2.4 if sp else 0.8, zorder=3 if sp else 2))
        cells[q] = (col + 0.5, row + 0.5)
    cells[0] = (-0.6, 0.5)
    ax.text(-0.6, 0.5, "start", ha="center", va="center", fontsize=8, color="#333", rotation=90)
    for s, sq in rules.squares.items():
        if sq.jump is None:
            continue
        (x0, y0), (x1, y1) = cells[s], cells[sq.jump]
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=12,
                                     connectionstyle="arc3,rad=0.15", lw=1.8, alpha=0.75, zorder=5,
                                     color="#2e8b57" if sq.jump > s else "#c0392b"))
    ax.set_xlim(-1.1, width + 0.1)
    ax.set_ylim(-0.1, nrows + 0.1)
    return fig, ax, cells, 9
