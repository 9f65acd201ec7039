"""The report page of a points board: win shares, ties, bankruptcy, final points, the board drawn."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from ..core.text import option_text
from ..engine import page as kit
from ..engine.text import fmt
from .results import PuntiResults
from .rules import PuntiRules

# ----------------------------------------------------------------------------- points pages (punti)

_PUNTI_BETS = {
    "never": "nobody ever bets on Pulcinella",
    "always": "every seat bets whenever it may (standing on a Pulcinella square at the start of its turn, with "
              "the stake in hand), and on the double square bets the second time too",
    "optimal": "each seat bets only when betting raises its own win share, the other seats playing their "
               "policies (see docs/punti.md, “The bet as a decision”)",
}
_PUNTI_OVERSHOOT = {
    "bounce": "a throw past the end square bounces back by the excess",
    "finish": "reaching or passing the end square arrives",
}
# Square colours by the kind of effect (the legend of the board picture).
_PUNTI_KINDS = {
    "pay_bank": ("#e8836f", "pays the bank"),
    "collect_bank": ("#7cc47c", "collects from the bank"),
    "pay_each": ("#f4b860", "pays each other player"),
    "collect_each": ("#72aee0", "collects from each other player"),
    "pulcinella": ("#c7a3e3", "Pulcinella (a bet at the next turn)"),
}
_PUNTI_SEAT_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _punti_quantiles(pmf: Mapping[int, float], qs: Sequence[float]) -> list[int]:
    """The smallest values whose cumulative chance reaches each of ``qs`` (as ``punti_text`` prints them)."""
    from .report import quantiles

    return quantiles(dict(pmf), tuple(qs))


def _punti_examples(r: PuntiRules) -> kit.Para | None:
    """What the rule file itself marks as an example (title, summary, square names), if anything."""
    marked = [s for s, sq in r.squares.items() if "example" in sq.name.lower()]
    where = [w for w, text in (("its title", r.title), ("its summary", r.summary)) if "example" in text.lower()]
    if not marked and not where:
        return None
    if marked:
        where.append(f"the names of squares {', '.join(map(str, marked))}")
    return kit.para("Example amounts: the rule file says so in " + " and ".join(where)
                    + ". The amounts (and the squares "
              "so marked) were chosen for the file, not read from the rule text, so the numbers below are those of "
              "this example board, not of a historical one.")


def _punti_square_kind(sq) -> str:
    return sq.kind or ("pulcinella" if sq.pulcinella else "")


def punti_page(r: PuntiRules, res: PuntiResults) -> tuple[str, list[kit.Block]]:
    """The report page of a solved points board: its title and blocks.

    Parameters
    ----------
    r : PuntiRules
        The rules as read.
    res : PuntiResults
        What the solve found for them.
    """
    n = res.players
    head = f"{res.title} with {kit.plural(n, 'player')}"
    blocks = kit.title_blocks(head, res, f"; {kit.plural(n, 'player')}, seat 1 (the head of the game) throws first; "
                              "bets: ", kit.Code(res.bet), ".")
    parts = (_intro_blocks(r, res), _rules_blocks(r, res), _policy_blocks(res), _wins_blocks(res),
             _how_long_blocks(res), _board_blocks(r, res), kit.solver_blocks(res.solver, res.timings))
    return head, blocks + [b for part in parts for b in part]


def _intro_blocks(r: PuntiRules, res: PuntiResults) -> list[kit.Block]:
    """The rule file's summary, its example marks, how it was solved and the notes."""
    blocks: list[kit.Block] = []
    if r.summary:
        blocks.append(kit.para(f"The rule file's summary: {r.summary}."))
    note = _punti_examples(r)
    if note is not None:
        blocks.append(note)
    if res.states is not None:
        blocks.append(kit.para(f"Solved exactly as a Markov chain of {res.states:,} states and {res.transitions:,} "
                         f"transitions (floating point; {res.method} solve) by markov_oca.", small=True))
    for text in res.notes:
        blocks.append(kit.para(f"Note: {text}.", small=True))

    return blocks


def _start_text(r: PuntiRules, n: int) -> str:
    """What each seat starts with, in words."""
    starts = r.initial_balances(n)
    if len(set(starts)) == 1:
        return f"each seat starts with {starts[0]} points"
    if n == 2:
        return f"seat 1 starts with {starts[0]} points, seat 2 with {starts[1]}"
    if len(set(starts[1:])) == 1:
        return f"seat 1 starts with {starts[0]} points, seats 2–{n} with {starts[1]} each"
    return "the seats start with " + ", ".join(map(str, starts)) + " points"


def _fee_aid_texts(r: PuntiRules) -> tuple[str, str]:
    """The head-of-game fee and the mutual aid, in words (the fee empty when there is none)."""
    if r.head_fee == 0:
        fee = ""
    elif r.head_fee_to == "seat-1":
        fee = (f"a head-of-game fee of {r.head_fee} (seat 1, the head of the game, pays no fee and collects "
               f"{r.head_fee} from each other seat)")
    else:
        fee = f"a head-of-game fee of {r.head_fee} to the bank"
    num, den = r.aid_chance
    aid_p = Fraction(num, den)
    if r.aid_uses:
        aid_text = (f"a loss a player cannot cover calls for mutual aid, once per player: with chance "
                    f"{aid_p} (hitting a declared number in {kit.plural(r.aid_throws, 'throw')}) every other player "
                    f"gives {r.aid} points (or all they hold, if less); if the loss still cannot be paid, the "
                    "player goes bankrupt")
    else:
        aid_text = "there is no mutual aid: a loss a player cannot cover makes them bankrupt"
    return fee, aid_text


def _rules_blocks(r: PuntiRules, res: PuntiResults) -> list[kit.Block]:
    """The rules as read: the board, the economy, bets, bankruptcy, the end; the squares; the options."""
    blocks: list[kit.Block] = [kit.Heading(2, "The rules as read")]
    start_text = _start_text(r, res.players)
    fee, aid_text = _fee_aid_texts(r)
    blocks.append(kit.Bullets([
        [f"Board: squares 1 (the start, where every piece begins) to {r.goal} (the end square); one die of "
         f"{r.faces} faces; {_PUNTI_OVERSHOOT.get(r.overshoot, r.overshoot)}. The landing square's effect "
         "applies, the end square's on arrival."],
        [f"Economy: each player is given a dowry of {r.dowry} and pays {r.entry_tax} to the bank to enter square "
         f"1{', and ' + fee if fee else ' (there is no head-of-game fee)'}: {start_text}. The bank starts with "
         f"{res.bank_start} (its capital {r.bank_fund} plus what it collected); {res.total_points} points are in "
         f"play, constant through the game, in steps of {res.unit}. The bank pays at most what it holds."],
        [f"Pulcinella: a player who lands on a Pulcinella square may, at the start of their next turn, stake "
         f"{r.bet_cost} (paid to the bank) and call the die on a throw of its own; a right call (chance "
         f"1/{r.faces}) wins {r.bet_prize} from the bank. A square with two Pulcinellas allows a second bet "
         "after the first result."],
        [f"Bankruptcy: {aid_text}; a bankrupt player's points go to the bank and they leave the game."],
        ["End: the game ends when at most one player is still racing (the second-to-last racer reaches the end "
         "square, or bankruptcies leave one); with two players, when the first arrives or one goes bankrupt. "
         "The most points win; bankrupt players hold none and never win."],
        ["Postcards are not part of this chain (they are simulated only; see docs/punti.md)."],
    ]))
    rows: list[list[kit.Inline]] = [[kit.Num("1"), "start", "every piece begins here; no effect"]]
    for s, sq in r.squares.items():
        effect = sq.describe()
        if s == r.goal:
            effect += " (the end square: on arrival)"
        rows.append([kit.Num(str(s)), sq.name or "", effect])
    if r.goal not in r.squares:
        rows.append([kit.Num(str(r.goal)), "end", "the end square: no effect"])
    blocks += kit.squares_blocks(rows, r, "Options in force (the economy and the board's play):")

    return blocks


def _policy_blocks(res: PuntiResults) -> list[kit.Block]:
    """The bet policy, and how an optimal one was found."""
    blocks: list[kit.Block] = []
    blocks.append(kit.Heading(2, "The bet policy"))
    blocks.append(kit.para("Bets: ", kit.Code(res.bet),
                           f": {_PUNTI_BETS.get(res.bet, res.bet)}. Expected Pulcinella bets "
                     "in a game: ", kit.Num(fmt(res.expected["bets"], 4)), "."))
    if res.policy:
        items: list[list[kit.Inline]] = []
        if res.policy.get("method"):
            items.append([f"How it was found: {res.policy['method']}."])
        for k in ("rounds", "converged", "sweeps", "residual", "decision_states", "bet_states",
                  "decision_process_states"):
            if k in res.policy:
                v = res.policy[k]
                text = (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else
                        f"{v:.2e}" if isinstance(v, float) else option_text(v))
                items.append([f"{k.replace('_', ' ').capitalize()}: ", kit.Num(text)])
        blocks.append(kit.Bullets(items))

    return blocks


def _wins_blocks(res: PuntiResults) -> list[kit.Block]:
    """Who wins: per seat, each way to end, the final points drawn, bets and mutual aid."""
    blocks: list[kit.Block] = []
    blocks.append(kit.Heading(2, "Who wins"))
    blocks.append(kit.para("The winner holds the most points at the end. Ties are counted as in ",
                     kit.Code("markov-oca solve"), ": the chance to win counts a tie of k seats as 1/k of a win (the "
                     "win share), so the seats' chances add up to 1; “wins alone” is the chance to hold the most "
                     "points alone, “ties” the chance to share the most with others, “bankrupt” the chance to go "
                     "bankrupt. Points are the seat's points at the end of the game (0 for a bankrupt seat): their "
                     "expected value, and the median with the 10th and 90th percentiles."))
    win_rows: list[list[kit.Inline]] = []
    for s in res.seats:
        med, lo, hi = _punti_quantiles(s.points_pmf, (0.5, 0.1, 0.9))
        win_rows.append([f"seat {s.seat}", kit.Num(str(s.start_points)), kit.Num(fmt(s.win_share)), kit.Num(fmt(s.win)),
                         kit.Num(fmt(s.tie)), kit.Num(fmt(s.bankrupt)), kit.Num(fmt(s.points, 4)),
                         kit.Num(f"{med} ({lo}–{hi})")])
    blocks.append(kit.Table(["Seat", "Starts with", "Chance to win", "Wins alone", "Ties", "Bankrupt",
                         "Expected points", "Median points (10%–90%)"], win_rows))
    blocks.append(kit.para("Each way the game can end (the set of leaders):"))
    blocks.append(kit.Table(["Outcome", "Chance"], [[k, kit.Num(fmt(v))] for k, v in res.outcomes.items()]))
    blocks.append(kit.Picture(
        kit.POINTS_PNG, _punti_points_png(res),
        "Bars of each seat's final points, side by side for each possible number of points, one colour per seat",
        "The distribution of each seat's final points: for each number of points, the chance that the seat ends "
        "the game holding it (bars side by side, one colour per seat). Dashed lines mark the points each seat "
        "started with" + ("; the hatched part of a bar at 0 is the chance to go bankrupt." if
                          any(s.bankrupt > 0 for s in res.seats) else "."),
    ))
    blocks.append(kit.para("Bets and mutual aid, by seat:"))
    blocks.append(kit.Table(["Seat", "Expected turns", "Expected bets", "Asks for mutual aid", "Gets it"],
                        [[f"seat {s.seat}", kit.Num(fmt(s.turns, 4)), kit.Num(fmt(s.bets, 4)), kit.Num(fmt(s.aid)),
                          kit.Num(fmt(s.aid_success))] for s in res.seats]))

    return blocks


def _how_long_blocks(res: PuntiResults) -> list[kit.Block]:
    """The expected totals and the length distribution."""
    blocks: list[kit.Block] = []
    blocks.append(kit.Heading(2, "How long it lasts"))
    blocks.append(kit.para("Expected totals over the whole game. A turn is each time the turn comes to a player (a bet "
                     "does not start a new turn); a throw is one movement throw of the die."))
    blocks.append(kit.Table(["Expected", "Whole game"],
                        [[k, kit.Num(fmt(v, 4))] for k, v in res.expected.items()]))
    if res.length is not None:
        blocks += kit.length_blocks(res.length, "all seats' turns")

    return blocks


def _board_blocks(r: PuntiRules, res: PuntiResults) -> list[kit.Block]:
    """The board drawn, with its legend."""
    blocks: list[kit.Block] = []
    blocks.append(kit.Heading(2, "The board"))
    legend = "; ".join(f"{text}: {colour_name}" for colour_name, text in
                       (("red", _PUNTI_KINDS["pay_bank"][1]), ("green", _PUNTI_KINDS["collect_bank"][1]),
                        ("orange", _PUNTI_KINDS["pay_each"][1]), ("blue", _PUNTI_KINDS["collect_each"][1]),
                        ("purple", _PUNTI_KINDS["pulcinella"][1])))
    blocks.append(kit.Picture(
        kit.BOARD_PNG, _punti_board_png(r),
        f"The board of {res.title} in rows of ten, each square with an effect coloured by its kind of effect",
        "The board drawn as rows of ten, square 1 (the start) at the bottom left, each row running the other way "
        f"from the one below, to the end square {r.goal} (thick outline). Colour: the kind of effect ({legend}); "
        "white squares have none. Each square shows its number and the amount (− a cost, + a gain; “each”: to or "
        "from every other player; P a Pulcinella bet). Landing chances are not computed for points boards.",
    ))

    return blocks


def _punti_points_png(res: PuntiResults) -> bytes:
    from matplotlib.ticker import MultipleLocator

    seats = res.seats
    n = len(seats)
    values = sorted({v for s in seats for v in s.points_pmf})
    unit = res.unit or 1
    fig = kit.new_figure(9.0, 4.6)
    ax = fig.add_axes((0.09, 0.13, 0.88, 0.78))
    width = 0.85 * unit / n
    for i, s in enumerate(seats):
        colour = _PUNTI_SEAT_COLOURS[i % len(_PUNTI_SEAT_COLOURS)]
        xs = np.array(values, float) + (i - (n - 1) / 2) * width
        ys = np.array([s.points_pmf.get(v, 0.0) for v in values])
        ax.bar(xs, ys, width=width, color=colour, alpha=0.85,
               label=f"seat {s.seat} (started with {s.start_points}; expected {s.points:.1f})")
        ax.axvline(s.start_points, color=colour, ls="--", lw=1.1)
        if s.bankrupt > 0:
            ax.bar(xs[values.index(0)], s.bankrupt, width=width, fill=False, hatch="///", edgecolor="#333",
                   lw=0.6, label="bankrupt (hatched)" if i == 0 else None)
    ax.set_xlabel("final points")
    ax.set_ylabel("chance")
    ax.set_title("Final points by seat")
    if values:
        ax.set_xlim(values[0] - unit, values[-1] + unit)
        span = values[-1] - values[0]
        step = unit * max(1, math.ceil(span / unit / 20))
        ax.xaxis.set_major_locator(MultipleLocator(step))
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda k: labels[k].startswith("bankrupt"))
    ax.legend([handles[k] for k in order], [labels[k] for k in order], loc="upper right", fontsize=9,
              frameon=False)
    ax.grid(True, axis="y", color="#e4e4e4", lw=0.6)
    ax.set_axisbelow(True)
    return kit.png_bytes(fig)


def _punti_amount(sq) -> str:
    sign = {"pay_bank": "−", "pay_each": "−", "collect_bank": "+", "collect_each": "+"}.get(sq.kind, "")
    text = f"{sign}{sq.amount}" + (" each" if sq.kind.endswith("_each") else "") if sq.kind else ""
    if sq.pulcinella:
        text = (text + " " if text else "") + " ".join(["P"] * sq.pulcinella)
    return text


def _punti_board_png(r: PuntiRules) -> bytes:
    from matplotlib.patches import Patch, Rectangle

    goal = r.goal
    width = min(10, goal)
    nrows = math.ceil(goal / width)
    fig_h = 0.9 * nrows + 0.95
    fig = kit.new_figure(max(4.0, 0.9 * width + 1.2), fig_h)
    ax = fig.add_axes((0.04, 0.7 / fig_h, 0.92, 1 - 0.8 / fig_h))
    edge_special = "#8b1a1a"
    for q in range(1, goal + 1):
        col, row = kit.row_cell(q, width)
        sq = r.square(q)
        kind = _punti_square_kind(sq)
        face = _PUNTI_KINDS[kind][0] if kind else ("#e6e6e6" if q == 1 else "white")
        end = q == goal
        ax.add_patch(Rectangle((col, row), 1, 1, facecolor=face, edgecolor=edge_special if end else "#555",
                               lw=2.6 if end else 0.8, zorder=3 if end else 2))
        if sq.kind and sq.pulcinella:  # both: a purple band along the bottom of the square
            ax.add_patch(Rectangle((col + 0.04, row + 0.04), 0.92, 0.16, facecolor=_PUNTI_KINDS["pulcinella"][0],
                                   edgecolor="none", zorder=4))
        label = _punti_amount(sq)
        if q == 1:
            label = "start"
        elif end:
            label = ("end " + label).strip()
        ax.text(col + 0.5, row + (0.64 if label else 0.5), str(q), ha="center", va="center", fontsize=11,
                fontweight="bold" if end or q == 1 else "normal", zorder=6)
        if label:
            ax.text(col + 0.5, row + 0.3, label, ha="center", va="center", fontsize=8 if len(label) > 7 else 9,
                    zorder=6, fontstyle="italic")
    ax.set_xlim(-0.1, width + 0.1)
    ax.set_ylim(-0.1, nrows + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    used = {_punti_square_kind(sq) for sq in r.squares.values()} | {
        "pulcinella" for sq in r.squares.values() if sq.pulcinella}
    handles = [Patch(facecolor=c, edgecolor="#555", label=text) for k, (c, text) in _PUNTI_KINDS.items() if k in used]
    handles.append(Patch(facecolor="white", edgecolor="#555", label="no effect"))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=9, frameon=False,
               bbox_to_anchor=(0.5, 0.02 / fig_h))
    return kit.png_bytes(fig)
