"""The report page: one solve laid out for people, as a web page and its markdown twin.

:func:`write_report` solves a rule set (a goose board with every seat's landing
chances; an Ur rule set with its optimal values; a points board under a bet
policy) and lays the results out once,
as a list of blocks (headings, paragraphs, tables, pictures). The blocks are
written twice into one directory: ``index.html``, self-contained (a small inline
stylesheet, the pictures embedded as base64 PNG, nothing fetched from anywhere,
so it opens offline), and ``report.md`` with the same text and numbers, its
pictures written as PNG files beside it. Numbers are formatted as in
:mod:`markov_oca.report`, so the page, the markdown and ``markov-oca solve`` print
the same digits. Pictures are drawn on matplotlib's Agg canvas directly (no
pyplot, no display, no change to the process-wide backend); matplotlib is
imported only when a report is written.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import api
from .errors import RulesError
from .goose.rules import GooseRules
from .progress import progress_bar
from .report import fmt
from .results import LengthSummary, SolveResults

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .chain import Chain
    from .punti.analysis import PuntiResults
    from .punti.rules import PuntiRules
    from .ur.rules import UrRules

__all__ = ["write_report"]

HTML_NAME = "index.html"
MARKDOWN_NAME = "report.md"
LENGTH_PNG = "length.png"
BOARD_PNG = "board.png"
POINTS_PNG = "points.png"
_DPI = 100
_CMAP = "YlGnBu"
# Ur chains above this many states get no occupancy picture (a second build and a forward pass).
_UR_OCCUPANCY_LIMIT = 3_000_000


# ----------------------------------------------------------------------------- the blocks of a page


@dataclass(frozen=True)
class Code:
    """Inline code: an option's name or value, a position in its notation."""

    text: str


@dataclass(frozen=True)
class Num:
    """A number as printed (right-aligned in tables)."""

    text: str


Inline = str | Code | Num


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    parts: list[Inline]
    small: bool = False


@dataclass
class Bullets:
    items: list[list[Inline]]


@dataclass
class Table:
    header: list[str]
    rows: list[list[Inline]]


@dataclass
class Picture:
    name: str  # file name beside report.md
    png: bytes
    alt: str
    caption: str

    @property
    def size(self) -> tuple[int, int]:
        """Width and height in pixels, read from the PNG header."""
        return int.from_bytes(self.png[16:20], "big"), int.from_bytes(self.png[20:24], "big")


Block = Heading | Para | Bullets | Table | Picture


def _p(*parts: Inline, small: bool = False) -> Para:
    return Para(list(parts), small)


# ----------------------------------------------------------------------------- writing


def write_report(rules: str | Path | GooseRules | PuntiRules, out: Path, *, players: int | None = None,
                 options: Mapping[str, Any] | None = None, pieces: int | None = None,
                 light: str = "optimal", dark: str = "optimal", bet: str = "never",
                 landings: bool | None = None, progress: bool = False) -> list[Path]:
    """Solve a rule set and write its report page into the directory ``out``.

    Parameters
    ----------
    rules:
        A shipped rule set (``"oca-moderna"``, ``"ur"``, ``"gioco-oca-punti"``), a path
        to a TOML file, or loaded :class:`~markov_oca.goose.rules.GooseRules` or
        :class:`~markov_oca.punti.rules.PuntiRules`.
    out:
        The directory to write into (created when missing; files of the same
        names are replaced).
    players:
        Goose and points boards: the number of players (default: the rule set's).
        Ur is played by two sides; only ``None`` or 2 are accepted there.
    options:
        Option values to put in force, by name (strings are converted).
    pieces, light, dark:
        Ur only: pieces per side (overrides ``options["pieces"]``) and the two
        sides' policies (``random``, ``greedy``, ``optimal``).
    bet:
        Points boards only: the Pulcinella bet policy (``never``, ``always``,
        ``optimal``); other families accept only the default ``never``.
    landings:
        Goose boards: compute the landing chances that colour the board (``None``:
        for chains of up to 20,000 states, as ``solve`` does; above, the board is
        drawn uncoloured with a note).
    progress:
        Show progress bars on stderr while solving.

    Returns
    -------
    The files written: ``index.html``, ``report.md`` and the pictures beside it
    (``length.png`` and ``board.png``; a points board also ``points.png``, first).

    Example
    -------
    >>> import tempfile
    >>> paths = write_report("examples/snakes_and_ladders.toml", Path(tempfile.mkdtemp()))
    >>> [p.name for p in paths]
    ['index.html', 'report.md', 'length.png', 'board.png']
    """
    from .punti import BETS
    from .punti.rules import PuntiRules

    out = Path(out)
    fam = ("goose" if isinstance(rules, GooseRules) else "punti" if isinstance(rules, PuntiRules)
           else api.family(rules))
    if fam not in ("goose", "ur", "punti"):
        raise RulesError(f"no report page for rule sets of the '{fam}' family yet (goose, ur and punti have one)")
    if fam != "punti" and bet != "never":
        raise RulesError(f"bet applies to points boards (the punti family), not to the '{fam}' family")
    if fam == "punti":
        if bet not in BETS:
            raise RulesError(f"the bet policy is one of {', '.join(BETS)}, not {bet!r}")
        if pieces is not None:
            raise RulesError("pieces applies to Ur rule sets, not to points boards")
        if isinstance(rules, PuntiRules) and options:
            raise RulesError("options are given when loading rules; pass a rule set's name or path instead")
        from .punti import load_punti, solve_punti

        loaded_p = rules if isinstance(rules, PuntiRules) else load_punti(rules, options)
        pres = solve_punti(loaded_p, players, bet=bet, progress=progress)
        with progress_bar(progress) as bar:
            bar.add_task("drawing the report", total=None)
            title, blocks = _punti_page(loaded_p, pres)
    elif fam == "goose":
        if pieces is not None:
            raise RulesError("pieces applies to Ur rule sets, not to goose boards")
        if isinstance(rules, GooseRules):
            if options:
                raise RulesError("options are given when loading rules; pass a rule set's name or path instead")
            loaded = rules
        else:
            loaded = api.load(rules, options)
        # Landing chances colour the board; as in ``solve``, big chains skip them unless asked.
        res = api.solve(loaded, players, landings=landings, progress=progress)
        with progress_bar(progress) as bar:
            bar.add_task("drawing the report", total=None)
            title, blocks = _goose_page(loaded, res)
    else:
        if players not in (None, 2):
            raise RulesError(f"the Royal Game of Ur is played by two sides, not {players} players")
        opts = dict(options or {})
        if pieces is not None:
            opts["pieces"] = pieces
        title, blocks = _ur_page(rules, opts, light, dark, progress)
    return _write(out, title, blocks)


def _write(out: Path, title: str, blocks: list[Block]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    page = out / HTML_NAME
    page.write_text(render_html(title, blocks), encoding="utf-8")
    md = out / MARKDOWN_NAME
    md.write_text(render_markdown(blocks), encoding="utf-8")
    paths = [page, md]
    for b in blocks:
        if isinstance(b, Picture):
            (out / b.name).write_bytes(b.png)
            paths.append(out / b.name)
    return paths


# ----------------------------------------------------------------------------- HTML

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; background: #fff;
       max-width: 62rem; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: 0.3rem; }
h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
table { border-collapse: collapse; margin: 0.4rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f1f1f1; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td:first-child { white-space: nowrap; }
code { background: #f4f4f4; padding: 0 0.2rem; border-radius: 3px; }
figure { margin: 1rem 0; }
img { max-width: 100%; height: auto; }
figcaption, .small { font-size: 0.9rem; color: #555; }
"""


def _html_inline(x: Inline) -> str:
    if isinstance(x, Code):
        return f"<code>{html.escape(x.text)}</code>"
    if isinstance(x, Num):
        return html.escape(x.text)
    return html.escape(x)


def render_html(title: str, blocks: Sequence[Block]) -> str:
    """The blocks as one self-contained HTML5 page."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="markov_oca">',
        f"<title>{html.escape(title)} · markov_oca</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
    ]
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{html.escape(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            cls = ' class="small"' if b.small else ""
            out.append(f"<p{cls}>{''.join(_html_inline(x) for x in b.parts)}</p>")
        elif isinstance(b, Bullets):
            out.append("<ul>")
            out += [f"<li>{''.join(_html_inline(x) for x in item)}</li>" for item in b.items]
            out.append("</ul>")
        elif isinstance(b, Table):
            out.append("<table>")
            out.append("<thead><tr>" + "".join(f'<th scope="col">{html.escape(h)}</th>' for h in b.header)
                       + "</tr></thead>")
            out.append("<tbody>")
            for row in b.rows:
                cells = "".join(f'<td class="num">{_html_inline(c)}</td>' if isinstance(c, Num)
                                else f"<td>{_html_inline(c)}</td>" for c in row)
                out.append(f"<tr>{cells}</tr>")
            out.append("</tbody>")
            out.append("</table>")
        elif isinstance(b, Picture):
            w, h = b.size
            data = base64.b64encode(b.png).decode("ascii")
            out.append("<figure>")
            out.append(f'<img src="data:image/png;base64,{data}" alt="{html.escape(b.alt, quote=True)}" '
                       f'width="{w}" height="{h}">')
            out.append(f"<figcaption>{html.escape(b.caption)}</figcaption>")
            out.append("</figure>")
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- markdown

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def _md_text(s: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", s)


def _md_inline(x: Inline) -> str:
    if isinstance(x, Code):
        return f"`` {x.text} ``" if "`" in x.text else f"`{x.text}`"
    if isinstance(x, Num):
        return x.text
    return _md_text(x)


def render_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as markdown (GitHub flavour), pictures referenced by their file names."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + _md_text(b.text), ""]
        elif isinstance(b, Para):
            text = "".join(_md_inline(x) for x in b.parts)
            out += [text, ""]
        elif isinstance(b, Bullets):
            out += ["- " + "".join(_md_inline(x) for x in item) for item in b.items]
            out.append("")
        elif isinstance(b, Table):
            right = [bool(b.rows) and all(isinstance(r[i], Num) for r in b.rows) for i in range(len(b.header))]
            out.append("| " + " | ".join(_md_text(h) for h in b.header) + " |")
            out.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
            out += ["| " + " | ".join(_md_inline(c) for c in row) + " |" for row in b.rows]
            out.append("")
        elif isinstance(b, Picture):
            out += [f"![{_md_text(b.alt)}]({b.name})", "", f"*{_md_text(b.caption)}*", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- goose pages

_OVERSHOOT = {
    "bounce": "a throw past the goal bounces back by the excess",
    "stay": "a throw past the goal leaves the piece where it was",
    "finish": "reaching or passing the goal finishes",
}


def _opt(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _q(x: float) -> str:
    return "never" if math.isinf(x) else str(int(x))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _goose_page(rules: GooseRules, res: SolveResults) -> tuple[str, list[Block]]:
    players = res.players
    head = f"{res.title} with {_plural(players, 'player')}"
    blocks: list[Block] = [
        Heading(1, head),
        _p(Code(res.rules), f"{', seed ' + res.seed if res.seed else ''}, read from ", Code(res.source),
           f"; {_plural(players, 'player')}, seat 1 moves first."),
    ]
    if rules.summary:
        blocks.append(_p(f"The rule file's summary: {rules.summary}."))
    blocks.append(_p(f"Solved exactly as a Markov chain of {res.states:,} states and {res.transitions:,} "
                     "transitions (floating point) by markov_oca.", small=True))

    # The rules as read.
    blocks.append(Heading(2, "The rules as read"))
    dice = f"{rules.dice.describe()} thrown" + "".join(f", {d.describe()} from square {s} on"
                                                      for s, d in rules.dice_from)
    blocks.append(_p(f"Squares 0 (the start, off the board) to {rules.goal} (the goal); {dice}; "
                     f"{_OVERSHOOT[rules.overshoot]}."))
    if rules.first_throw:
        effect = "applies" if rules.first_throw_effect else "does not apply"
        blocks.append(_p(f"First-throw rule: a first throw (from square 0) of these faces goes straight to a "
                         f"square; the target's effect {effect}."))
        blocks.append(Table(["Throw", "Goes to square"],
                            [["+".join(map(str, faces)), Num(str(t))] for faces, t in rules.first_throw]))
    rows: list[list[Inline]] = [[Num(str(s)), sq.name or "", sq.describe()] for s, sq in rules.squares.items()]
    goal_effect = ("the first to reach it wins and the game stops" if rules.until == "first"
                   else "a piece that reaches it finishes; the others play on for the places")
    rows.append([Num(str(rules.goal)), "goal", goal_effect])
    blocks.append(_p("Squares with an effect:"))
    blocks.append(Table(["Square", "Name", "Effect"], rows))
    blocks.append(_p("Options in force:"))
    blocks.append(_options_table(rules.options, rules.option_choices, rules.option_docs))

    # Who wins.
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
    blocks.append(_p("Chance of deadlock (the game never ends): ", Num(fmt(res.deadlock)),
                     "." if float(res.deadlock) == 0 else
                     ": every piece still in the game is stuck waiting forever."))

    # How long.
    blocks.append(Heading(2, "How long it lasts"))
    blocks.append(_p("Expected totals over the whole game, and given that the game ends. A turn is each time "
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
    blocks += _length_blocks(res.length, "all seats' turns, missed ones included")

    # The board.
    blocks.append(Heading(2, "The board"))
    chance = _landing_chances(res, seat=1)
    spiral = rules.goal == 63
    shape = ("as a spiral: square 1 at the outer corner, winding inwards to 63 in the centre, as on a "
             "printed board" if spiral else
             "as rows of ten, square 1 at the bottom left, each row running the other way from the one below")
    what = ("the chance that seat 1 ever lands on the square (a landing is every square whose effect a throw "
            "applies, and the square where the piece comes to rest; a piece sent back by another, or released "
            "from a waiting square, does not land)" if chance is not None else "nothing: landings not computed")
    letters = _initials(rules)
    legend = "; ".join(f"{k}: {v}" for k, v in _legend(rules, letters).items())
    blocks.append(Picture(
        BOARD_PNG,
        _goose_board_png(rules, chance, letters, spiral),
        f"The board of {res.title} drawn {shape.split(':')[0]}, each square coloured by {what.split(' (')[0]}",
        f"The board drawn {shape}. Colour: {what}. Special squares have a thick outline and a letter ({legend})."
        + (" Arrows show where a jump goes (green forward, red back)." if not spiral else ""),
    ))
    if res.landings:
        blocks.append(_p("Landing on special squares, by seat: the chance of ever landing there, and the "
                         "expected number of landings."))
        blocks.append(_landing_table(rules, res))
    elif res.landings_note:
        blocks.append(_p(res.landings_note))

    blocks += _solver_blocks(res.solver, res.timings)
    return head, blocks


def _options_table(options: Mapping[str, Any], choices: Mapping[str, Sequence[Any]],
                   docs: Mapping[str, str]) -> Table:
    rows: list[list[Inline]] = []
    for k, v in options.items():
        ch = choices.get(k) or (("true", "false") if isinstance(v, bool) else ())
        rows.append([Code(k), Code(_opt(v)), ", ".join(_opt(c) for c in ch), docs.get(k, "")])
    return Table(["Option", "Value", "Choices", "What it means"], rows)


def _landing_chances(res: SolveResults, seat: int) -> np.ndarray | None:
    if not res.landings:
        return None
    g = max(x.square for x in res.landings)
    out = np.zeros(g + 1)
    for x in res.landings:
        if x.seat == seat:
            out[x.square] = float(x.chance)
    return out


def _landing_table(rules: GooseRules, res: SolveResults) -> Table:
    by = {(x.seat, x.square): x for x in res.landings or []}
    hdr = ["Square", "Name"]
    for i in range(1, res.players + 1):
        hdr += [f"Seat {i}: chance", f"Seat {i}: expected landings"]
    rows: list[list[Inline]] = []
    for sq in res.special_squares:
        name = rules.square(sq).name or ("goal" if sq == rules.goal else "first-throw target"
                                         if any(t == sq for _, t in rules.first_throw) else "")
        row: list[Inline] = [Num(str(sq)), name]
        for i in range(1, res.players + 1):
            x = by.get((i, sq))
            row += [Num(f"{float(x.chance):.4f}"), Num(f"{float(x.expected):.4f}")] if x else ["", ""]
        rows.append(row)
    return Table(hdr, rows)


def _length_blocks(L: LengthSummary, unit: str) -> list[Block]:
    text = (f"Game length in turns ({unit}): mean given it ends {fmt(L.mean_given_end, 4)}; median "
            f"{_q(L.median)}, 90th percentile {_q(L.p90)}, 99th percentile {_q(L.p99)}.")
    if L.never_ends > 0:
        text += (f" The game never ends with chance {L.never_ends:.6g}; of the games that end: median "
                 f"{_q(L.given_end['median'])}, 90th percentile {_q(L.given_end['p90'])}, 99th percentile "
                 f"{_q(L.given_end['p99'])}.")
    text += f" The distribution is computed to a tail mass of {L.tail_mass:.1e}."
    return [_p(text), Picture(
        LENGTH_PNG, _length_png(L),
        "Two panels over the number of turns: above, the chance that the game ends on each turn; below, the "
        "chance that it has ended by then",
        "The length of the game in turns. Above: the chance that the game ends on turn t (the pmf). Below: "
        "the chance that it has ended by turn t (the cdf)"
        + ("; the dashed line is the chance that it ends at all." if L.never_ends > 0 else "."),
    )]


def _solver_blocks(solver: list[dict], timings: Mapping[str, float]) -> list[Block]:
    res = max((s["residual"] for s in solver), default=0.0)
    t = ", ".join(f"{k} {v:.2f} s" for k, v in timings.items())
    return [Heading(2, "How this was computed"),
            _p(f"Largest residual of the {len(solver)} linear solves: {res:.2e}. Time spent: {t}.", small=True)]


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


# ----------------------------------------------------------------------------- pictures


def _new_figure(w: float, h: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=_DPI)
    FigureCanvasAgg(fig)  # the Agg canvas, explicitly: no display, no global backend
    return fig


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, facecolor="white", metadata={"Software": None})
    return buf.getvalue()


def _length_png(L: LengthSummary) -> bytes:
    pmf = np.asarray(L.pmf, float)
    cdf = np.cumsum(pmf)
    ends = 1.0 - L.never_ends
    # Show the turns that hold nearly all of the games that end; the far tail is flat.
    reach = np.flatnonzero(cdf >= ends * 0.999)
    last = int(reach[0]) if reach.size else pmf.size - 1
    xmax = max(10, int(last * 1.08) + 1)
    t = np.arange(pmf.size)
    fig = _new_figure(8.5, 6.0)
    ax1, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"hspace": 0.08})
    fig.subplots_adjust(left=0.1, right=0.97, top=0.94, bottom=0.09)
    shown = min(pmf.size, xmax + 1)
    # One filled outline, not a patch per turn: bars centred on whole turns.
    ax1.stairs(pmf[:shown], np.arange(shown + 1) - 0.5, fill=True, color="#3b78b0")
    ax1.set_ylabel("ends on turn t")
    ax1.set_title("Length of the game in turns")
    ax2.step(t[:shown], cdf[:shown], where="post", color="#1f4e79", lw=1.8)
    if L.never_ends > 0:
        ax2.axhline(ends, ls="--", color="#888", lw=1)
        ax2.text(xmax * 0.98, ends - 0.04, f"ends at all: {ends:.4f}", ha="right", va="top", color="#555")
    for q, label in ((L.given_end.get("median", L.median), "median"), (L.given_end.get("p90", L.p90), "90%")):
        if math.isfinite(q) and q < xmax:
            for ax in (ax1, ax2):
                ax.axvline(q, color="#c0504d", lw=0.9, ls=":")
            ax2.text(q, 0.03, f" {label} {int(q)}", color="#c0504d", va="bottom", ha="left", fontsize=9)
    ax2.set_ylim(0, 1.02)
    ax2.set_xlim(0, xmax)
    ax2.set_xlabel("turn t")
    ax2.set_ylabel("ended by turn t")
    for ax in (ax1, ax2):
        ax.grid(True, color="#e4e4e4", lw=0.6)
        ax.set_axisbelow(True)
    return _png(fig)


def _text_colour(rgba: Sequence[float]) -> str:
    r, g, b = rgba[:3]
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"


def _colour_scale(values: np.ndarray | None):
    """A colour map and a scale from 0 to a little over the largest value (1 when there are none)."""
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    cmap = colormaps[_CMAP]
    top = float(np.max(values)) if values is not None and values.size else 1.0
    top = math.ceil(max(top, 1e-9) * 10) / 10 if top > 0.05 else max(top, 1e-9)
    return cmap, Normalize(0.0, top)


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


def _row_cell(q: int, width: int) -> tuple[int, int]:
    """(column, row) of square ``q`` (from 1) on a board drawn in rows of ``width``, boustrophedon:
    square 1 at the bottom left, each row running the other way from the one below."""
    row, k = divmod(q - 1, width)
    return (k if row % 2 == 0 else width - 1 - k), row


def _goose_board_png(rules: GooseRules, chance: np.ndarray | None, letters: Mapping[int, str],
                     spiral: bool) -> bytes:
    from matplotlib.cm import ScalarMappable
    from matplotlib.patches import FancyArrowPatch, Polygon, Rectangle

    goal = rules.goal
    # The scale is set by the squares before the goal; the goal (the chance to finish) may lie above it.
    cmap, norm = _colour_scale(chance[1:goal] if chance is not None else None)
    over = chance is not None and chance[goal] > norm.vmax

    def colour(q: int):
        return cmap(min(norm(chance[q]), 1.0)) if chance is not None else (1.0, 1.0, 1.0, 1.0)

    special = set(rules.squares)
    edge_special = "#8b1a1a"
    if spiral:
        outlines, centres, centre, R = _spiral(goal - 1)
        fig = _new_figure(9.0, 9.6)
        ax = fig.add_axes((0.02, 0.13, 0.96, 0.86))
        for q in range(1, goal):
            sp = q in special
            ax.add_patch(Polygon(outlines[q - 1], closed=True, facecolor=colour(q),
                                 edgecolor=edge_special if sp else "#555", lw=2.4 if sp else 0.8,
                                 zorder=3 if sp else 2))
        ax.add_patch(Polygon(centre, closed=True, facecolor=colour(goal), edgecolor=edge_special, lw=2.4, zorder=3))
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
        size = 10
    else:
        width = min(10, goal)
        nrows = math.ceil(goal / width)
        fig_h = 0.9 * nrows + 1.6
        fig = _new_figure(max(4.0, 0.9 * width + 1.2), fig_h)
        ax = fig.add_axes((0.04, 1.25 / fig_h, 0.92, 1 - 1.4 / fig_h))
        cells = {}
        for q in range(1, goal + 1):
            col, row = _row_cell(q, width)
            sp = q in special or q == goal
            ax.add_patch(Rectangle((col, row), 1, 1, facecolor=colour(q), edgecolor=edge_special if sp else "#555",
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
        size = 9
    for q in range(1, goal + 1):
        x, y = cells[q]
        fg = _text_colour(colour(q))
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
    bar.set_label("chance that seat 1 ever lands on the square" if chance is not None else "not computed")
    legend = "   ".join(f"{k} {v}" for k, v in _legend(rules, letters).items())
    if legend:
        fig.text(0.5, 0.1 / h, legend, ha="center", va="bottom", fontsize=10, color=edge_special, wrap=True)
    return _png(fig)


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
    from .punti.report import quantiles

    return quantiles(dict(pmf), tuple(qs))


def _punti_examples(r: PuntiRules) -> Para | None:
    """What the rule file itself marks as an example (title, summary, square names), if anything."""
    marked = [s for s, sq in r.squares.items() if "example" in sq.name.lower()]
    where = [w for w, text in (("its title", r.title), ("its summary", r.summary)) if "example" in text.lower()]
    if not marked and not where:
        return None
    if marked:
        where.append(f"the names of squares {', '.join(map(str, marked))}")
    return _p("Example amounts: the rule file says so in " + " and ".join(where) + ". The amounts (and the squares "
              "so marked) were chosen for the file, not read from the seed, so the numbers below are those of "
              "this example board, not of a historical one.")


def _punti_square_kind(sq) -> str:
    return sq.kind or ("pulcinella" if sq.pulcinella else "")


def _punti_page(r: PuntiRules, res: PuntiResults) -> tuple[str, list[Block]]:
    n = res.players
    head = f"{res.title} with {_plural(n, 'player')}"
    blocks: list[Block] = [
        Heading(1, head),
        _p(Code(res.rules), f"{', seed ' + res.seed if res.seed else ''}, read from ", Code(res.source),
           f"; {_plural(n, 'player')}, seat 1 (the head of the game) throws first; bets: ", Code(res.bet), "."),
    ]
    if r.summary:
        blocks.append(_p(f"The rule file's summary: {r.summary}."))
    note = _punti_examples(r)
    if note is not None:
        blocks.append(note)
    if res.states is not None:
        blocks.append(_p(f"Solved exactly as a Markov chain of {res.states:,} states and {res.transitions:,} "
                         f"transitions (floating point; {res.method} solve) by markov_oca.", small=True))
    for text in res.notes:
        blocks.append(_p(f"Note: {text}.", small=True))

    # The rules as read.
    blocks.append(Heading(2, "The rules as read"))
    starts = r.initial_balances(n)
    if r.head_fee == 0:
        fee = ""
    elif r.head_fee_to == "seat-1":
        fee = (f"a head-of-game fee of {r.head_fee} (seat 1, the head of the game, pays no fee and collects "
               f"{r.head_fee} from each other seat)")
    else:
        fee = f"a head-of-game fee of {r.head_fee} to the bank"
    if len(set(starts)) == 1:
        start_text = f"each seat starts with {starts[0]} points"
    elif n == 2:
        start_text = f"seat 1 starts with {starts[0]} points, seat 2 with {starts[1]}"
    elif len(set(starts[1:])) == 1:
        start_text = f"seat 1 starts with {starts[0]} points, seats 2–{n} with {starts[1]} each"
    else:
        start_text = "the seats start with " + ", ".join(map(str, starts)) + " points"
    num, den = r.aid_chance
    aid_p = Fraction(num, den)
    if r.aid_uses:
        aid_text = (f"a loss a player cannot cover calls for mutual aid, once per player: with chance "
                    f"{aid_p} (hitting a declared number in {_plural(r.aid_throws, 'throw')}) every other player "
                    f"gives {r.aid} points (or all they hold, if less); if the loss still cannot be paid, the "
                    "player goes bankrupt")
    else:
        aid_text = "there is no mutual aid: a loss a player cannot cover makes them bankrupt"
    blocks.append(Bullets([
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
    rows: list[list[Inline]] = [[Num("1"), "start", "every piece begins here; no effect"]]
    for s, sq in r.squares.items():
        effect = sq.describe()
        if s == r.goal:
            effect += " (the end square: on arrival)"
        rows.append([Num(str(s)), sq.name or "", effect])
    if r.goal not in r.squares:
        rows.append([Num(str(r.goal)), "end", "the end square: no effect"])
    blocks.append(_p("Squares with an effect:"))
    blocks.append(Table(["Square", "Name", "Effect"], rows))
    blocks.append(_p("Options in force (the economy and the board's play):"))
    blocks.append(_options_table(r.options, r.option_choices, r.option_docs))

    # The bet policy.
    blocks.append(Heading(2, "The bet policy"))
    blocks.append(_p("Bets: ", Code(res.bet), f": {_PUNTI_BETS.get(res.bet, res.bet)}. Expected Pulcinella bets "
                     "in a game: ", Num(fmt(res.expected["bets"], 4)), "."))
    if res.policy:
        items: list[list[Inline]] = []
        if res.policy.get("method"):
            items.append([f"How it was found: {res.policy['method']}."])
        for k in ("rounds", "converged", "sweeps", "residual", "decision_states", "bet_states",
                  "decision_process_states"):
            if k in res.policy:
                v = res.policy[k]
                text = (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else
                        f"{v:.2e}" if isinstance(v, float) else _opt(v))
                items.append([f"{k.replace('_', ' ').capitalize()}: ", Num(text)])
        blocks.append(Bullets(items))

    # Who wins.
    blocks.append(Heading(2, "Who wins"))
    blocks.append(_p("The winner holds the most points at the end. Ties are counted as in ",
                     Code("markov-oca solve"), ": the chance to win counts a tie of k seats as 1/k of a win (the "
                     "win share), so the seats' chances add up to 1; “wins alone” is the chance to hold the most "
                     "points alone, “ties” the chance to share the most with others, “bankrupt” the chance to go "
                     "bankrupt. Points are the seat's points at the end of the game (0 for a bankrupt seat): their "
                     "expected value, and the median with the 10th and 90th percentiles."))
    win_rows: list[list[Inline]] = []
    for s in res.seats:
        med, lo, hi = _punti_quantiles(s.points_pmf, (0.5, 0.1, 0.9))
        win_rows.append([f"seat {s.seat}", Num(str(s.start_points)), Num(fmt(s.win_share)), Num(fmt(s.win)),
                         Num(fmt(s.tie)), Num(fmt(s.bankrupt)), Num(fmt(s.points, 4)), Num(f"{med} ({lo}–{hi})")])
    blocks.append(Table(["Seat", "Starts with", "Chance to win", "Wins alone", "Ties", "Bankrupt",
                         "Expected points", "Median points (10%–90%)"], win_rows))
    blocks.append(_p("Each way the game can end (the set of leaders):"))
    blocks.append(Table(["Outcome", "Chance"], [[k, Num(fmt(v))] for k, v in res.outcomes.items()]))
    blocks.append(Picture(
        POINTS_PNG, _punti_points_png(res),
        "Bars of each seat's final points, side by side for each possible number of points, one colour per seat",
        "The distribution of each seat's final points: for each number of points, the chance that the seat ends "
        "the game holding it (bars side by side, one colour per seat). Dashed lines mark the points each seat "
        "started with" + ("; the hatched part of a bar at 0 is the chance to go bankrupt." if
                          any(s.bankrupt > 0 for s in res.seats) else "."),
    ))
    blocks.append(_p("Bets and mutual aid, by seat:"))
    blocks.append(Table(["Seat", "Expected turns", "Expected bets", "Asks for mutual aid", "Gets it"],
                        [[f"seat {s.seat}", Num(fmt(s.turns, 4)), Num(fmt(s.bets, 4)), Num(fmt(s.aid)),
                          Num(fmt(s.aid_success))] for s in res.seats]))

    # How long.
    blocks.append(Heading(2, "How long it lasts"))
    blocks.append(_p("Expected totals over the whole game. A turn is each time the turn comes to a player (a bet "
                     "does not start a new turn); a throw is one movement throw of the die."))
    blocks.append(Table(["Expected", "Whole game"],
                        [[k, Num(fmt(v, 4))] for k, v in res.expected.items()]))
    if res.length is not None:
        blocks += _length_blocks(res.length, "all seats' turns")

    # The board.
    blocks.append(Heading(2, "The board"))
    legend = "; ".join(f"{text}: {colour_name}" for colour_name, text in
                       (("red", _PUNTI_KINDS["pay_bank"][1]), ("green", _PUNTI_KINDS["collect_bank"][1]),
                        ("orange", _PUNTI_KINDS["pay_each"][1]), ("blue", _PUNTI_KINDS["collect_each"][1]),
                        ("purple", _PUNTI_KINDS["pulcinella"][1])))
    blocks.append(Picture(
        BOARD_PNG, _punti_board_png(r),
        f"The board of {res.title} in rows of ten, each square with an effect coloured by its kind of effect",
        "The board drawn as rows of ten, square 1 (the start) at the bottom left, each row running the other way "
        f"from the one below, to the end square {r.goal} (thick outline). Colour: the kind of effect ({legend}); "
        "white squares have none. Each square shows its number and the amount (− a cost, + a gain; “each”: to or "
        "from every other player; P a Pulcinella bet). Landing chances are not computed for points boards.",
    ))

    blocks += _solver_blocks(res.solver, res.timings)
    return head, blocks


def _punti_points_png(res: PuntiResults) -> bytes:
    from matplotlib.ticker import MultipleLocator

    seats = res.seats
    n = len(seats)
    values = sorted({v for s in seats for v in s.points_pmf})
    unit = res.unit or 1
    fig = _new_figure(9.0, 4.6)
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
    return _png(fig)


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
    fig = _new_figure(max(4.0, 0.9 * width + 1.2), fig_h)
    ax = fig.add_axes((0.04, 0.7 / fig_h, 0.92, 1 - 0.8 / fig_h))
    edge_special = "#8b1a1a"
    for q in range(1, goal + 1):
        col, row = _row_cell(q, width)
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
    return _png(fig)


# ----------------------------------------------------------------------------- Ur pages


def _ur_page(rules: str | Path, opts: Mapping[str, Any], light: str, dark: str,
             progress: bool) -> tuple[str, list[Block]]:
    from .ur.chain import check_chain_memory, ur_chain
    from .ur.optimal import solve_optimal
    from .ur.rules import load_ur
    from .ur.state import UrSpace

    r = load_ur(rules, opts)
    check_chain_memory(r)
    # The optimal values serve the move tables whatever the policies; the policy chain serves
    # both the results and the occupancy. Each is computed once.
    with progress_bar(progress) as bar:
        bar.add_task("optimal values for the move table", total=None)
        t0 = time.perf_counter()
        sol = solve_optimal(r)
        values = sol.values
        t1 = time.perf_counter()
        chain = ur_chain(r, light, dark, values)
        t2 = time.perf_counter()
    res = api.solve_ur(r, light, dark, progress=progress, chain=chain,
                       optimal=sol if "optimal" in (light, dark) else None)
    res.timings = {"optimal": t1 - t0, "build": t2 - t1, **res.timings}
    occ = None
    if 4 * res.positions <= _UR_OCCUPANCY_LIMIT:
        with progress_bar(progress) as bar:
            bar.add_task("where the pieces stand", total=None)
            occ = _ur_occupancy(chain, r.pieces)

    head = f"{res.title} with {_plural(res.pieces, 'piece')} a side"
    blocks: list[Block] = [
        Heading(1, head),
        _p(Code(res.rules), f"{', seed ' + res.seed if res.seed else ''}, read from ", Code(res.source),
           f"; light (moves first) plays {light}, dark plays {dark}."),
    ]
    if r.summary:
        blocks.append(_p(f"The rule file's summary: {r.summary}."))
    blocks.append(_p(f"Positions per side to move: {res.positions:,}; the chain of this pair of policies has "
                     f"{res.states:,} states and {res.transitions:,} transitions (floating point).", small=True))

    blocks.append(Heading(2, "The rules as read"))
    blocks.append(Bullets([
        [f"Throw: {r.describe_throw()}; a throw of 0, or one with no legal move, passes."],
        [f"Path: {r.path_length} squares a side: 1–4 its own, {r.shared[0]}–{r.shared[1]} the shared lane, "
         f"13–14 its own, then off the board (15); pieces wait in hand (0). A move takes one piece forward by the "
         "throw; it may not land on its own piece and must reach 15 exactly to leave. Landing on an opponent's "
         "piece in the shared lane sends it back to its owner's hand."],
        [_rosettes_text(r)],
        [f"End: {r.describe_end()}."],
    ]))
    blocks.append(Table(["Throw", "Chance"], [[Num(str(v)), Num(f"{p} = {float(p):.4f}" if isinstance(p, Fraction)
                                                                 and p.denominator > 1 else f"{float(p):.4f}")]
                                              for v, p in r.throws]))
    blocks.append(_p("Options in force:"))
    blocks.append(_options_table(r.options, r.option_choices, r.option_docs))

    blocks.append(Heading(2, "Who wins"))
    blocks.append(Table(["Side", "Plays", "Chance to win"],
                        [["light (moves first)", light, Num(fmt(res.wins["light"]))],
                         ["dark", dark, Num(fmt(res.wins["dark"]))]]))
    deadlock = max(0.0, 1.0 - float(res.wins["light"]) - float(res.wins["dark"]))
    blocks.append(_p("Chance of deadlock (the game never ends): ", Num(fmt(deadlock)),
                     " (one minus the two chances to win)."))
    start = UrSpace(r.pieces).rank(0, 0, r.pieces, 0, 0, r.pieces, 0)
    blocks.append(_p(f"Light's chance when both play optimally: {float(values[start]):.6f} (value iteration to "
                     f"a final change of {sol.residual:.1e})."))

    blocks.append(Heading(2, "How long it lasts"))
    blocks.append(_p("Expected totals (a rosette's extra throw is part of the same turn):"))
    blocks.append(Table(["Expected", "Whole game", "Given that the game ends"],
                        [[k, Num(fmt(e.total, 4)), Num(fmt(e.given_end, 4))] for k, e in res.expected.items()]))
    blocks += _length_blocks(res.length, "both sides' turns")

    blocks.append(Heading(2, "The board"))
    what = ("the share of all turns at whose start a piece of that side stands on the square, under these "
            "policies (the expected number of such turns divided by the expected number of turns)")
    blocks.append(Picture(
        BOARD_PNG, _ur_board_png(r, occ),
        "The Ur board, three rows of eight with two squares missing at the top and bottom, rosettes drawn, "
        "light's squares above, dark's below, the shared lane in the middle"
        + (", coloured by how often a piece stands there" if occ is not None else ""),
        "The board as on the real one: three rows of eight with two squares missing in the top and bottom rows. "
        "Light's own squares are the top row, dark's the bottom row, the shared lane the middle row (each lane "
        "square split: light above, dark below). Small numbers are path squares: a side enters at 1, runs to 4, "
        "along the lane 5–12, back to 13 and 14 and off. Rosettes are drawn as flowers. "
        + (f"Colour and number: {what}." if occ is not None else
           "Colour: none (the chain is too large for a second pass)."),
    ))
    if occ is not None:
        blocks.append(_p("Expected pieces in hand and off the board at the start of a turn, averaged over the "
                         f"turns: light {occ[0, 0]:.3f} in hand, {occ[0, 15]:.3f} off; dark {occ[1, 0]:.3f} "
                         f"in hand, {occ[1, 15]:.3f} off."))

    blocks.append(Heading(2, "Best moves under optimal play"))
    blocks.append(_p("For a few positions with light to move: for each throw, the move of greatest value and "
                     "the value of every other legal move. A move's value is the mover's chance to win after it, "
                     "both sides playing optimally from there. Positions are written as in ",
                     Code("markov-oca ur best-move"),
                     ": one path square per piece, 0 in hand, 1–14 on the board, 15 off."))
    blocks += _ur_move_blocks(r, values)
    blocks += _solver_blocks(res.solver, res.timings)
    return head, blocks


def _rosettes_text(r: UrRules) -> str:
    safe = [s for s in r.rosettes if r.shared[0] <= s <= r.shared[1]]
    text = f"Rosettes (ending a move there gives another throw): {', '.join(map(str, r.rosettes))}"
    if safe:
        text += (f"; {', '.join(map(str, safe))} in the shared lane "
                 f"{'is' if len(safe) == 1 else 'are'} safe: no capture there, and a piece may not land on it "
                 "while the opponent holds it")
    return text + "."


def _ur_occupancy(chain: Chain, pieces: int) -> np.ndarray:
    """``occ[side, q]``: the expected number of pieces of ``side`` (0 light, 1 dark) on path square ``q``
    at the start of a turn, averaged over the turns of a game.

    The chance of each chain state at each throw, summed over throws, is the expected
    number of visits (one forward pass, carried until 1e-10 of the mass is still in play, as the length
    distribution is).
    """
    from .ur.state import LANE_SQUARES, PRIVATE_SQUARES, UrSpace

    pt = chain.P.T.tocsr()
    outcome = np.array(list(chain.outcomes.values()))
    v = np.zeros(chain.n)
    v[chain.init] = 1.0
    visits = np.zeros(chain.n)
    for _ in range(1_000_000):
        visits += v
        v = pt @ v
        v[outcome] = 0.0
        if v.sum() < 1e-10:
            break
    live = chain.mover >= 0
    weight = np.where(chain.turn_start, visits, 0.0)[live]
    ids = np.asarray(chain.state_ids)[live]
    pos = UrSpace(pieces).unrank_many(ids // 4)
    light_moves = (ids // 2) % 2 == 0
    occ = np.zeros((2, 16))
    for side in (0, 1):
        mine = light_moves if side == 0 else ~light_moves
        mask = np.where(mine, pos.mine_mask, pos.their_mask).astype(np.int64)
        colour = np.where(mine, 1, 2)
        for bit, q in enumerate(PRIVATE_SQUARES):
            occ[side, q] = weight @ ((mask >> bit) & 1)
        lane = pos.lane.astype(np.int64)
        for digit, q in enumerate(LANE_SQUARES):
            occ[side, q] = weight @ ((lane // 3**digit) % 3 == colour)
        occ[side, 0] = weight @ np.where(mine, pos.mine_hand, pos.their_hand).astype(float)
        occ[side, 15] = weight @ np.where(mine, pos.mine_off, pos.their_off).astype(float)
    return occ / weight.sum()


def _ur_cell(q: int, side: int) -> tuple[int, int]:
    """(column, row) of path square ``q`` of ``side`` on the 3 x 8 grid (row 2 light, 1 lane, 0 dark)."""
    if 5 <= q <= 12:
        return q - 5, 1
    return (4 - q if q <= 4 else 20 - q), (2 if side == 0 else 0)


def _ur_board_png(r: UrRules, occ: np.ndarray | None) -> bytes:
    from matplotlib.cm import ScalarMappable
    from matplotlib.patches import Circle, Rectangle

    cmap, norm = _colour_scale(occ[:, 1:15] if occ is not None else None)

    def colour(side: int, q: int):
        return cmap(norm(occ[side, q])) if occ is not None else (1.0, 1.0, 1.0, 1.0)

    fig = _new_figure(10.0, 4.3)
    ax = fig.add_axes((0.02, 0.24, 0.96, 0.74))
    lane_q = range(r.shared[0], r.shared[1] + 1)
    for q in range(1, r.path_length + 1):
        if q in lane_q:
            x, y = _ur_cell(q, 0)
            for side, y0 in ((0, y + 0.5), (1, y)):
                ax.add_patch(Rectangle((x, y0), 1, 0.5, facecolor=colour(side, q), edgecolor="none"))
                if occ is not None:
                    ax.text(x + 0.5, y0 + (0.36 if side == 0 else 0.14), f"{occ[side, q]:.3f}", ha="center",
                            va="center", fontsize=9, color=_text_colour(colour(side, q)), zorder=6)
            ax.add_patch(Rectangle((x, y), 1, 1, facecolor="none", edgecolor="#333", lw=1.2, zorder=3))
            ax.text(x + 0.06, y + 0.5, str(q), ha="left", va="center", fontsize=8, color="#555", zorder=6)
            continue
        for side in (0, 1):
            x, y = _ur_cell(q, side)
            ax.add_patch(Rectangle((x, y), 1, 1, facecolor=colour(side, q), edgecolor="#333", lw=1.2, zorder=2))
            ax.text(x + 0.06, y + 0.9, str(q), ha="left", va="top", fontsize=8, color=_text_colour(colour(side, q)),
                    zorder=6)
            if occ is not None:
                ax.text(x + 0.5, y + 0.12, f"{occ[side, q]:.3f}", ha="center", va="center", fontsize=9,
                        color=_text_colour(colour(side, q)), zorder=6)
    ax.add_patch(Rectangle((0, 1), 8, 1, facecolor="none", edgecolor="#7a4a12", lw=3.0, zorder=4))
    for q in r.rosettes:
        for side in ((0,) if q in lane_q else (0, 1)):
            x, y = _ur_cell(q, side)
            cx, cy = x + 0.5, y + 0.5
            for k in range(8):
                a = k * math.pi / 4
                ax.add_patch(Circle((cx + 0.17 * math.cos(a), cy + 0.17 * math.sin(a)), 0.09, facecolor="none",
                                    edgecolor="#8b1a1a", lw=1.4, zorder=5))
            ax.add_patch(Circle((cx, cy), 0.07, facecolor="#8b1a1a", edgecolor="none", zorder=5))
    for y, label in ((2.5, "light"), (1.5, "shared lane\n(light above,\ndark below)"), (0.5, "dark")):
        ax.text(-0.12, y, label, ha="right", va="center", fontsize=11)
    for y in (2, 0):
        ax.text(4.08, y + 0.7, "\u2190 in to 1", ha="left", va="center", fontsize=9, color="#555")
        ax.text(5.92, y + 0.3, "off \u2190 14", ha="right", va="center", fontsize=9, color="#555")
    ax.set_xlim(-1.4, 8.1)
    ax.set_ylim(-0.05, 3.05)
    ax.set_aspect("equal")
    ax.axis("off")
    cax = fig.add_axes((0.25, 0.12, 0.6, 0.04))
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), cax=cax, orientation="horizontal")
    bar.set_label("pieces of that side on the square at the start of a turn, averaged over the turns"
                  if occ is not None else "not computed")
    return _png(fig)


def _ur_positions(n: int) -> list[tuple[str, list[int], list[int]]]:
    """A few positions for the move table: the opening and some mid-game choices, for ``n`` pieces."""

    def side(board: list[int], rest: int) -> list[int]:
        return (board + [rest] * n)[:n]

    def where(squares: list[int]) -> str:
        on = [str(q) for q in squares if 0 < q < 15]
        return " and ".join(on) if on else "nowhere on the board"

    out = [("The opening: every piece in hand", [0] * n, [0] * n)]
    for title, lt, dk in (("A rosette or a step ahead", side([4], 0), side([6], 0)),
                          ("In the shared lane", side([7, 2], 0), side([9, 12], 0)),
                          ("The race home", side([13, 10], 15), side([12, 6], 15))):
        out.append((f"{title}: light at {where(lt)}, dark at {where(dk)}", lt, dk))
    return out


def _move_text(source: int, target: int, events: Sequence[str]) -> str:
    if source < 0:
        return "pass"
    src = "hand" if source == 0 else str(source)
    dst = "off" if target == 15 else str(target)
    ev = [e for e in events if e != "pass"]
    return f"{src} → {dst}" + (f" ({', '.join(ev)})" if ev else "")


def _notation(light: Sequence[int], dark: Sequence[int]) -> str:
    return f"light:{','.join(map(str, light))} dark:{','.join(map(str, dark))}"


def _ur_move_blocks(r: UrRules, values: np.ndarray) -> list[Block]:
    from .ur.bestmove import best_moves

    blocks: list[Block] = []
    seen = set()
    for title, light, dark in _ur_positions(r.pieces):
        key = (tuple(sorted(light)), tuple(sorted(dark)))
        if key in seen:
            continue
        seen.add(key)
        try:
            value, moves = best_moves(r, light, dark, "light", values)
        except RulesError:
            continue
        blocks.append(Heading(3, title))
        blocks.append(_p(Code(_notation(light, dark)), f": light to move wins with {value:.6f} under optimal play."))
        rows: list[list[Inline]] = []
        for throw in dict.fromkeys(m.throw for m in moves):
            these = [m for m in moves if m.throw == throw]
            best = next(m for m in these if m.best)
            others = "; ".join(f"{_move_text(m.source, m.target, m.events)}: {fmt(m.value)}"
                               for m in these if m is not best)
            rows.append([Num(str(throw)), Num(f"{best.probability:.4f}"),
                         _move_text(best.source, best.target, best.events), Num(fmt(best.value)),
                         others or ("no legal move" if best.source < 0 else "none (the only legal move)")])
        blocks.append(Table(["Throw", "Chance of the throw", "Best move", "Its value", "The other moves (value)"],
                            rows))
    return blocks

