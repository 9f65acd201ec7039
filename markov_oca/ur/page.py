"""The report page of an Ur policy pair: who wins, how long, where the pieces stand, best moves."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import RulesError
from ..core.progress import progress_bar
from ..engine import page as kit
from ..engine.text import fmt
from .rules import UrRules
from .solve import solve_ur
from .state import BELL

if TYPE_CHECKING:
    from ..analysis.chain import Chain

# Ur chains above this many states get no occupancy picture (a second build and a forward pass).
_UR_OCCUPANCY_LIMIT = 3_000_000


# ----------------------------------------------------------------------------- Ur pages


def _solved(r: UrRules, light: str, dark: str, progress: bool):
    """(results, optimal solution, chain, occupancy or None): the optimal values serve the move tables whatever
    the policies; the policy chain serves both the results and the occupancy. Each is computed once."""
    from .chain import check_chain_memory, ur_chain
    from .optimal import solve_optimal

    check_chain_memory(r)
    with progress_bar(progress) as bar:
        bar.add_task("optimal values for the move table", total=None)
        t0 = time.perf_counter()
        sol = solve_optimal(r)
        t1 = time.perf_counter()
        chain = ur_chain(r, light, dark, sol.values)
        t2 = time.perf_counter()
    res = solve_ur(r, light, dark, progress=progress, chain=chain,
                   optimal=sol if "optimal" in (light, dark) else None)
    res.timings = {"optimal": t1 - t0, "build": t2 - t1, **res.timings}
    occ = None
    if 4 * res.positions <= _UR_OCCUPANCY_LIMIT:
        with progress_bar(progress) as bar:
            bar.add_task("where the pieces stand", total=None)
            occ = _ur_occupancy(chain, r)
    return res, sol, occ


def _rules_blocks(r: UrRules) -> list[kit.Block]:
    """The rules as read: throw, path, rosettes, end, the throws' chances and the options."""
    return [
        kit.Heading(2, "The rules as read"),
        kit.Bullets([
            [f"Throw: {r.describe_throw()}; a throw of 0, or one with no legal move, passes."],
            [_path_text(r)],
            [_rosettes_text(r)],
            [f"End: {r.describe_end()}."],
        ]),
        kit.Table(["Throw", "Chance"], [[kit.Num(str(v)), kit.Num(f"{p} = {float(p):.4f}" if isinstance(p, Fraction)
                                                     and p.denominator > 1 else f"{float(p):.4f}")]
                                    for v, p in r.throws]),
        kit.para("Options in force:"),
        kit.options_table(r.options, r.option_choices, r.option_docs),
    ]


def _outcome_blocks(r: UrRules, res, light: str, dark: str, sol) -> list[kit.Block]:
    """Who wins, and how long the game lasts."""
    from .state import space_of

    deadlock = max(0.0, 1.0 - float(res.wins["light"]) - float(res.wins["dark"]))
    start = space_of(r.pieces, r.code).rank(0, 0, r.pieces, 0, 0, r.pieces, 0)
    return [
        kit.Heading(2, "Who wins"),
        kit.Table(["Side", "Plays", "Chance to win"],
              [["light (moves first)", light, kit.Num(fmt(res.wins["light"]))],
               ["dark", dark, kit.Num(fmt(res.wins["dark"]))]]),
        kit.para("Chance of deadlock (the game never ends): ", kit.Num(fmt(deadlock)),
             " (one minus the two chances to win)."),
        kit.para(f"Light's chance when both play optimally: {float(sol.values[start]):.6f} (value iteration to "
             f"a final change of {sol.residual:.1e})."),
        kit.Heading(2, "How long it lasts"),
        kit.para("Expected totals (a rosette's extra throw is part of the same turn):"),
        kit.Table(["Expected", "Whole game", "Given that the game ends"],
              [[k, kit.Num(fmt(e.total, 4)), kit.Num(fmt(e.given_end, 4))] for k, e in res.expected.items()]),
        *kit.length_blocks(res.length, "both sides' turns"),
    ]


def _board_blocks(r: UrRules, occ) -> list[kit.Block]:
    """The board picture, coloured by the occupancy when there is one."""
    what = ("the share of all turns at whose start a piece of that side stands on the square, under these "
            "policies (the expected number of such turns divided by the expected number of turns)")
    if r.code != BELL:
        return [kit.Heading(2, "The board"), kit.Picture(
            kit.BOARD_PNG, _ur_board_png(r, occ),
            f"The {r.board_name}: light's row on top, the middle row, dark's row below, rosettes drawn"
            + (", coloured by how often a piece stands there" if occ is not None else ""),
            "Each square is numbered with the path square it is for the side that passes it; a shared square is "
            "split, light above and dark below. "
            + (f"Colour and number: {what}." if occ is not None else
               "Colour: none (the chain is too large for a second pass)."))]
    blocks: list[kit.Block] = [kit.Heading(2, "The board"), kit.Picture(
        kit.BOARD_PNG, _ur_board_png(r, occ),
        "The Ur board, three rows of eight with two squares missing at the top and bottom, rosettes drawn, "
        "light's squares above, dark's below, the shared lane in the middle"
        + (", coloured by how often a piece stands there" if occ is not None else ""),
        "The board as on the real one: three rows of eight with two squares missing in the top and bottom rows. "
        "Light's own squares are the top row, dark's the bottom row, the shared lane the middle row (each lane "
        "square split: light above, dark below). Small numbers are path squares: a side enters at 1, runs to 4, "
        "along the lane 5–12, back to 13 and 14 and off. Rosettes are drawn as flowers. "
        + (f"Colour and number: {what}." if occ is not None else
           "Colour: none (the chain is too large for a second pass)."),
    )]
    if occ is not None:
        blocks.append(kit.para("Expected pieces in hand and off the board at the start of a turn, averaged over the "
                           f"turns: light {occ[0, 0]:.3f} in hand, {occ[0, -1]:.3f} off; dark {occ[1, 0]:.3f} "
                           f"in hand, {occ[1, -1]:.3f} off."))
    return blocks


def ur_page(r: UrRules, light: str, dark: str, progress: bool = False) -> tuple[str, list[kit.Block]]:
    """The page of ``r`` with light playing ``light`` and dark ``dark``: its title and blocks."""
    res, sol, occ = _solved(r, light, dark, progress)
    head = f"{res.title} with {kit.plural(res.pieces, 'piece')} a side"
    blocks = kit.title_blocks(head, res, f"; light (moves first) plays {light}, dark plays {dark}.", summary=r.summary)
    blocks.append(kit.para(f"Positions per side to move: {res.positions:,}; the chain of this pair of policies has "
                       f"{res.states:,} states and {res.transitions:,} transitions (floating point).", small=True))
    blocks += _rules_blocks(r)
    blocks += _outcome_blocks(r, res, light, dark, sol)
    blocks += _board_blocks(r, occ)
    blocks.append(kit.Heading(2, "Best moves under optimal play"))
    blocks.append(kit.para("For a few positions with light to move: for each throw, the move of greatest value and "
                       "the value of every other legal move. A move's value is the mover's chance to win after it, "
                       "both sides playing optimally from there. Positions are written as in ",
                       kit.Code("markov-oca ur best-move"),
                       f": one path square per piece, 0 in hand, 1–{r.path_length} on the board, {r.off_square} "
                       "off."))
    blocks += _ur_move_blocks(r, sol.values)
    blocks += kit.solver_blocks(res.solver, res.timings)
    return head, blocks


def _path_text(r: UrRules) -> str:
    """The path as read: Bell's in the words of the classic board, any other from its squares."""
    if r.code == BELL:
        return (f"Path: {r.path_length} squares a side: 1–4 its own, {r.shared[0]}–{r.shared[1]} the shared lane, "
                f"13–14 its own, then off the board (15); pieces wait in hand (0). A move takes one piece forward "
                "by the throw; it may not land on its own piece and must reach 15 exactly to leave. Landing on an "
                "opponent's piece in the shared lane sends it back to its owner's hand.")
    code, off = r.code, r.off_square
    tiles = " ".join(f"{q}=[{c},{w}]" for q, (c, w) in enumerate(r.board.light, start=1))
    own = ", ".join(map(str, code.private))
    met = ", ".join(f"{q} (dark's {t})" for q, t in zip(code.shared, code.theirs, strict=True) if q != t)
    return (f"Path ({r.board_name}): {r.path_length} squares a side, then off the board ({off}); pieces wait in "
            f"hand (0). Light's squares as [column, row]: {tiles}; dark walks the reflection. Squares {own} are a "
            "side's own, the others shared" + (f"; where the paths meet in opposite directions light's {met}"
                                               if met else "")
            + f". A move takes one piece forward by the throw; it may not land on its own piece and must reach "
            f"{off} exactly to leave. Landing on an opponent's piece on a shared square sends it back to its "
            "owner's hand" + ("; a capture gives another throw." if r.capture_again else "."))


def _rosettes_text(r: UrRules) -> str:
    shared = r.code.shared if r.code != BELL else range(r.shared[0], r.shared[1] + 1)
    safe = [s for s in r.rosettes if s in shared] if r.safe_rosettes else []
    again = "ending a move there gives another throw" if r.rosette_again else "no extra throw"
    text = f"Rosettes ({again}): {', '.join(map(str, r.rosettes))}"
    if safe:
        text += (f"; {', '.join(map(str, safe))} in the shared lane "
                 f"{'is' if len(safe) == 1 else 'are'} safe: no capture there, and a piece may not land on it "
                 "while the opponent holds it")
    elif not r.safe_rosettes:
        text += "; not safe: a piece on a shared rosette can be captured"
    return text + "."


def _ur_occupancy(chain: Chain, r: UrRules | int) -> np.ndarray:
    """``occ[side, q]``: the expected number of pieces of ``side`` (0 light, 1 dark) on its path square ``q``
    at the start of a turn, averaged over the turns of a game (``r`` the rules, or a number of pieces on
    Bell's path).

    The chance of each chain state at each throw, summed over throws, is its expected number of
    visits (:meth:`Chain.expected_visits`, one adjoint solve).
    """
    from .state import space_of

    code, pieces = (BELL, r) if isinstance(r, int) else (r.code, r.pieces)
    visits, _report = chain.expected_visits()
    live = chain.mover >= 0
    weight = np.where(chain.turn_start, visits, 0.0)[live]
    ids = np.asarray(chain.state_ids)[live]
    pos = space_of(pieces, code).unrank_many(ids // 4)
    light_moves = (ids // 2) % 2 == 0
    occ = np.zeros((2, code.off + 1))
    lane = pos.lane.astype(np.int64)
    for side in (0, 1):
        mine = light_moves if side == 0 else ~light_moves
        mask = np.where(mine, pos.mine_mask, pos.their_mask).astype(np.int64)
        for bit, q in enumerate(code.private):
            occ[side, q] = weight @ ((mask >> bit) & 1)
        for digit, (q, t) in enumerate(zip(code.shared, code.theirs, strict=True)):
            d = (lane // 3**digit) % 3
            occ[side, q] += weight @ (mine & (d == 1))  # the side to move, on its own path square q
            occ[side, t] += weight @ (~mine & (d == 2))  # the other side, on its own path square t
        occ[side, 0] = weight @ np.where(mine, pos.mine_hand, pos.their_hand).astype(float)
        occ[side, code.off] = weight @ np.where(mine, pos.mine_off, pos.their_off).astype(float)
    return occ / weight.sum()


def _ur_cell(q: int, side: int) -> tuple[int, int]:
    """(column, row) of path square ``q`` of ``side`` on the 3 x 8 grid (row 2 light, 1 lane, 0 dark)."""
    if 5 <= q <= 12:
        return q - 5, 1
    return (4 - q if q <= 4 else 20 - q), (2 if side == 0 else 0)


def _rosette(ax, x: float, y: float) -> None:
    from matplotlib.patches import Circle

    cx, cy = x + 0.5, y + 0.5
    for k in range(8):
        a = k * math.pi / 4
        ax.add_patch(Circle((cx + 0.17 * math.cos(a), cy + 0.17 * math.sin(a)), 0.09, facecolor="none",
                            edgecolor="#8b1a1a", lw=1.4, zorder=5))
    ax.add_patch(Circle((cx, cy), 0.07, facecolor="#8b1a1a", edgecolor="none", zorder=5))


def _tiles_png(r: UrRules, occ: np.ndarray | None) -> bytes:
    """Any board from its squares: light's row on top, the middle row, dark's row below; a shared square split
    (light above, dark below), each half numbered with that side's path square."""
    from matplotlib.patches import Rectangle

    cmap, norm = kit.colour_scale(occ[:, 1:-1] if occ is not None else None)
    light_at = {t: q for q, t in enumerate(r.board.light, start=1)}
    dark_at = {t: q for q, t in enumerate(r.board.dark, start=1)}
    rows = max(w for _c, w in r.board.tiles)
    fig = kit.new_figure(1.1 * rows + 1.5, 4.3)
    ax = fig.add_axes((0.02, 0.24, 0.96, 0.74))
    for (c, w) in sorted(r.board.tiles):
        x, y = w - 1, 3 - c
        halves = [(side, at[(c, w)]) for side, at in ((0, light_at), (1, dark_at)) if (c, w) in at]
        h = 1.0 / len(halves)
        for k, (side, q) in enumerate(halves):
            y0 = y + 1 - h * (k + 1)
            face = cmap(norm(occ[side, q])) if occ is not None else (1.0, 1.0, 1.0, 1.0)
            ax.add_patch(Rectangle((x, y0), 1, h, facecolor=face, edgecolor="none"))
            label = str(q) + (f"  {occ[side, q]:.3f}" if occ is not None else "")
            ax.text(x + 0.06, y0 + h / 2, label, ha="left", va="center", fontsize=8, color=kit.text_colour(face),
                    zorder=6)
        ax.add_patch(Rectangle((x, y), 1, 1, facecolor="none", edgecolor="#333", lw=1.2, zorder=3))
        if (c, w) in r.board.rosettes:
            _rosette(ax, x, y)
    for y, label in ((2.5, "light"), (1.5, "middle row"), (0.5, "dark")):
        ax.text(-0.12, y, label, ha="right", va="center", fontsize=11)
    return _finish_board(fig, ax, rows + 0.1, cmap, norm, occ)


def _ur_board_png(r: UrRules, occ: np.ndarray | None) -> bytes:
    from matplotlib.patches import Rectangle

    if r.code != BELL:
        return _tiles_png(r, occ)
    cmap, norm = kit.colour_scale(occ[:, 1:15] if occ is not None else None)

    def colour(side: int, q: int):
        return cmap(norm(occ[side, q])) if occ is not None else (1.0, 1.0, 1.0, 1.0)

    fig = kit.new_figure(10.0, 4.3)
    ax = fig.add_axes((0.02, 0.24, 0.96, 0.74))
    lane_q = range(r.shared[0], r.shared[1] + 1)
    for q in range(1, r.path_length + 1):
        if q in lane_q:
            x, y = _ur_cell(q, 0)
            for side, y0 in ((0, y + 0.5), (1, y)):
                ax.add_patch(Rectangle((x, y0), 1, 0.5, facecolor=colour(side, q), edgecolor="none"))
                if occ is not None:
                    ax.text(x + 0.5, y0 + (0.36 if side == 0 else 0.14), f"{occ[side, q]:.3f}", ha="center",
                            va="center", fontsize=9, color=kit.text_colour(colour(side, q)), zorder=6)
            ax.add_patch(Rectangle((x, y), 1, 1, facecolor="none", edgecolor="#333", lw=1.2, zorder=3))
            ax.text(x + 0.06, y + 0.5, str(q), ha="left", va="center", fontsize=8, color="#555", zorder=6)
            continue
        for side in (0, 1):
            x, y = _ur_cell(q, side)
            ax.add_patch(Rectangle((x, y), 1, 1, facecolor=colour(side, q), edgecolor="#333", lw=1.2, zorder=2))
            ax.text(x + 0.06, y + 0.9, str(q), ha="left", va="top", fontsize=8, color=kit.text_colour(colour(side, q)),
                    zorder=6)
            if occ is not None:
                ax.text(x + 0.5, y + 0.12, f"{occ[side, q]:.3f}", ha="center", va="center", fontsize=9,
                        color=kit.text_colour(colour(side, q)), zorder=6)
    ax.add_patch(Rectangle((0, 1), 8, 1, facecolor="none", edgecolor="#7a4a12", lw=3.0, zorder=4))
    for q in r.rosettes:
        for side in ((0,) if q in lane_q else (0, 1)):
            _rosette(ax, *_ur_cell(q, side))
    for y, label in ((2.5, "light"), (1.5, "shared lane\n(light above,\ndark below)"), (0.5, "dark")):
        ax.text(-0.12, y, label, ha="right", va="center", fontsize=11)
    for y in (2, 0):
        ax.text(4.08, y + 0.7, "\u2190 in to 1", ha="left", va="center", fontsize=9, color="#555")
        ax.text(5.92, y + 0.3, "off \u2190 14", ha="right", va="center", fontsize=9, color="#555")
    return _finish_board(fig, ax, 8.1, cmap, norm, occ)


def _finish_board(fig, ax, right: float, cmap, norm, occ: np.ndarray | None) -> bytes:
    """The board's axes framed, and its colour bar: the picture's bytes."""
    from matplotlib.cm import ScalarMappable

    ax.set_xlim(-1.4, right)
    ax.set_ylim(-0.05, 3.05)
    ax.set_aspect("equal")
    ax.axis("off")
    cax = fig.add_axes((0.25, 0.12, 0.6, 0.04))
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), cax=cax, orientation="horizontal")
    bar.set_label("pieces of that side on the square at the start of a turn, averaged over the turns"
                  if occ is not None else "not computed")
    return kit.png_bytes(fig)


def _ur_positions(n: int, off: int = 15) -> list[tuple[str, list[int], list[int]]]:
    """A few positions for the move table: the opening and some mid-game choices, for ``n`` pieces (``off`` the
    path square of a piece off the board)."""

    def side(board: list[int], rest: int) -> list[int]:
        return (board + [rest] * n)[:n]

    def where(squares: list[int]) -> str:
        on = [str(q) for q in squares if 0 < q < off]
        return " and ".join(on) if on else "nowhere on the board"

    out = [("The opening: every piece in hand", [0] * n, [0] * n)]
    for title, lt, dk in (("A rosette or a step ahead", side([4], 0), side([6], 0)),
                          ("In the shared lane", side([7, 2], 0), side([9, 12], 0)),
                          ("The race home", side([off - 2, off - 5], off), side([off - 3, off - 9], off))):
        out.append((f"{title}: light at {where(lt)}, dark at {where(dk)}", lt, dk))
    return out


def _move_text(source: int, target: int, events: Sequence[str], off: int = 15) -> str:
    if source < 0:
        return "pass"
    src = "hand" if source == 0 else str(source)
    dst = "off" if target == off else str(target)
    ev = [e for e in events if e != "pass"]
    return f"{src} → {dst}" + (f" ({', '.join(ev)})" if ev else "")


def _notation(light: Sequence[int], dark: Sequence[int]) -> str:
    return f"light:{','.join(map(str, light))} dark:{','.join(map(str, dark))}"


def _ur_move_blocks(r: UrRules, values: np.ndarray) -> list[kit.Block]:
    from .bestmove import best_moves

    blocks: list[kit.Block] = []
    seen = set()
    for title, light, dark in _ur_positions(r.pieces, r.off_square):
        key = (tuple(sorted(light)), tuple(sorted(dark)))
        if key in seen:
            continue
        seen.add(key)
        try:
            value, moves = best_moves(r, light, dark, "light", values)
        except RulesError:
            continue
        blocks.append(kit.Heading(3, title))
        blocks.append(kit.para(kit.Code(_notation(light, dark)),
                               f": light to move wins with {value:.6f} under optimal play."))
        rows: list[list[kit.Inline]] = []
        for throw in dict.fromkeys(m.throw for m in moves):
            these = [m for m in moves if m.throw == throw]
            best = next(m for m in these if m.best)
            others = "; ".join(f"{_move_text(m.source, m.target, m.events, r.off_square)}: {fmt(m.value)}"
                               for m in these if m is not best)
            rows.append([kit.Num(str(throw)), kit.Num(f"{best.probability:.4f}"),
                         _move_text(best.source, best.target, best.events, r.off_square), kit.Num(fmt(best.value)),
                         others or ("no legal move" if best.source < 0 else "none (the only legal move)")])
        blocks.append(kit.Table(["Throw", "Chance of the throw", "Best move", "Its value", "The other moves (value)"],
                            rows))
    return blocks
