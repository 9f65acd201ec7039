"""A reviewed Ur game laid out for people: a text table for the terminal and a report page.

The text is a table of the actions (throw, move played, best move, chance lost, light's chance after)
and one of the players (accuracy over the choices, chance lost); the page (``index.html`` and
``report.md``, written by :func:`markov_oca.engine.page.write_page`) has the same tables and a plot of
light's winning chance through the game.
"""

from __future__ import annotations

import io
from pathlib import Path

from ..engine.page import Block, Code, Heading, Num, Picture, Table, new_figure, para, png_bytes, write_page
from .review import MoveReview, Review

__all__ = ["CHANCE_PNG", "review_blocks", "review_text", "write_review_page"]

CHANCE_PNG = "chance.png"
#: The moves that lost the most, listed apart (those losing at least this much).
BLUNDER = 0.01


def _pct(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _marked(move: str, events: list[str]) -> str:
    marks = [e for e in events if e in ("capture", "rosette", "game over")]
    return move + (f" ({', '.join(marks)})" if marks else "")


def _move_cells(m: MoveReview) -> list[str]:
    played = _marked(m.played, m.events)
    best = "" if m.agrees else _marked(m.best, m.best_events)
    kind = "forced" if not m.choice else ("best" if m.agrees else "")
    return [str(m.number), m.side, str(m.throw), played, best or kind, _pct(m.lost) if m.choice else "",
            _pct(m.light_after, 1)]


_MOVE_HEADER = ["#", "side", "throw", "played", "best", "chance lost", "light wins"]
_PLAYER_HEADER = ["side", "decisions", "choices", "agreed", "accuracy", "chance lost (total)", "mean per choice"]


def _player_cells(rev: Review) -> list[list[str]]:
    return [[s.side, str(s.decisions), str(s.choices), str(s.agreed), _pct(s.accuracy, 1), _pct(s.lost_total),
             _pct(s.lost_mean)] for s in rev.players.values()]


def _headline(rev: Review) -> str:
    who = " vs ".join(rev.tags[k] for k in ("Light", "Dark") if k in rev.tags)
    end = f"{rev.winner} won" if rev.over else "unfinished"
    return (f"{rev.title} ({rev.rules}, {rev.pieces} pieces){': ' + who if who else ''}: {len(rev.moves)} moves, "
            f"{end}; light's chance at the start {_pct(rev.light_start)}")


_NOTE = ("Chance lost: the best move's winning chance minus the played move's, for the mover, both playing "
         "optimally after. Accuracy counts only the choices (two legal moves or more); forced moves and passes "
         "lose nothing.")


def review_text(rev: Review, width: int = 110) -> str:
    """The review as text: a headline, the moves, the players, the note on what counts.

    Parameters
    ----------
    rev : Review
        A reviewed game (:func:`.review.review_game`).
    width : int
        The width of the text.
    """
    from rich.console import Console
    from rich.table import Table as RichTable

    buf = io.StringIO()
    con = Console(file=buf, width=width, no_color=True, highlight=False)
    con.print(_headline(rev))
    moves = RichTable(show_edge=False, pad_edge=False)
    for i, h in enumerate(_MOVE_HEADER):
        moves.add_column(h, justify="right" if i in (0, 2, 5, 6) else "left")
    for m in rev.moves:
        moves.add_row(*_move_cells(m))
    con.print(moves)
    players = RichTable(show_edge=False, pad_edge=False)
    for i, h in enumerate(_PLAYER_HEADER):
        players.add_column(h, justify="left" if i == 0 else "right")
    for row in _player_cells(rev):
        players.add_row(*row)
    con.print(players)
    for n in rev.notes:
        con.print(f"note: {n}")
    con.print(_NOTE)
    return buf.getvalue()


def _chance_png(rev: Review) -> bytes:
    fig = new_figure(9.0, 3.6)
    ax = fig.add_subplot(1, 1, 1)
    y = [100 * v for v in rev.light_chance]
    ax.plot(range(len(y)), y, marker=".", color="#1f5f8b", linewidth=1.6)
    ax.axhline(50, color="#999", linewidth=0.8, linestyle="--")
    for m in rev.moves:
        if m.choice and m.lost >= BLUNDER:
            ax.plot(m.number, 100 * m.light_after, "o", color="#c0392b" if m.side == "light" else "#444",
                    markersize=5)
    ax.set_ylim(0, 100)
    ax.set_xlim(0, max(1, len(y) - 1))
    ax.set_xlabel("move")
    ax.set_ylabel("light's chance to win (%)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_bytes(fig)


def review_blocks(rev: Review) -> list[Block]:
    """The review as page blocks: the game, the plot, the players, the biggest losses, every move.

    Parameters
    ----------
    rev : Review
        A reviewed game.
    """
    blocks: list[Block] = [Heading(1, f"Review of a game of {rev.title}"), para(_headline(rev))]
    if rev.tags:
        blocks.append(Table(["tag", "value"], [[Code(k), v] for k, v in rev.tags.items()]))
    blocks.append(Picture(CHANCE_PNG, _chance_png(rev), "light's chance to win through the game",
                          "Light's chance to win under optimal play from each position, at the start and after "
                          f"each move; dots mark the moves that lost {_pct(BLUNDER, 0)} or more."))
    blocks.append(Heading(2, "Players"))
    blocks.append(Table(_PLAYER_HEADER, [[c if i == 0 else Num(c) for i, c in enumerate(row)]
                                         for row in _player_cells(rev)]))
    blocks.append(para(_NOTE, small=True))
    worst = sorted((m for m in rev.moves if m.choice and m.lost >= BLUNDER), key=lambda m: -m.lost)[:5]
    if worst:
        blocks.append(Heading(2, "The moves that lost the most"))
        blocks.append(Table(["#", "side", "throw", "played", "best", "chance lost"],
                            [[Num(str(m.number)), m.side, Num(str(m.throw)), Code(m.played), Code(m.best),
                              Num(_pct(m.lost))] for m in worst]))
    blocks.append(Heading(2, "Every move"))
    blocks.append(Table(_MOVE_HEADER, [[Num(c) if i in (0, 2, 5, 6) else c for i, c in enumerate(_move_cells(m))]
                                       for m in rev.moves]))
    for n in rev.notes:
        blocks.append(para(f"Note: {n}", small=True))
    return blocks


def write_review_page(rev: Review, out: str | Path) -> list[Path]:
    """Write the review's page (``index.html``, ``report.md``, the plot) into the directory ``out``.

    Parameters
    ----------
    rev : Review
        A reviewed game.
    out : str or Path
        The directory to write into.
    """
    return write_page(Path(out), f"Review: {rev.title}", review_blocks(rev))
