"""The report page: one solve laid out for people, as a web page and its markdown twin.

:func:`write_report` solves a rule set and asks its family to lay the results out
once (``Family.page``: goose boards in :mod:`markov_oca.goose.page`, Ur in
:mod:`markov_oca.ur.page`, the points game in :mod:`markov_oca.punti.page`), as a
list of blocks (headings, paragraphs, tables, pictures) built from the pieces
here. The blocks are
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.results import LengthSummary
from ..core.atomic import atomic_files
from ..core.text import option_text
from .text import fmt

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Block", "Bullets", "Code", "Heading", "Num", "Para", "Picture", "Table", "para", "render_html",
           "render_markdown", "write_page"]

HTML_NAME = "index.html"
MARKDOWN_NAME = "report.md"
LENGTH_PNG = "length.png"
BOARD_PNG = "board.png"
POINTS_PNG = "points.png"
DPI = 100
CMAP = "YlGnBu"


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


def para(*parts: Inline, small: bool = False) -> Para:
    return Para(list(parts), small)


# ----------------------------------------------------------------------------- writing




def write_page(out: Path, title: str, blocks: list[Block]) -> list[Path]:
    """Write a page's HTML, its markdown twin and its pictures into ``out``, all files or none."""
    out.mkdir(parents=True, exist_ok=True)
    files: list[tuple[Path, bytes]] = [(out / HTML_NAME, render_html(title, blocks).encode("utf-8")),
                                       (out / MARKDOWN_NAME, render_markdown(blocks).encode("utf-8"))]
    files += [(out / b.name, b.png) for b in blocks if isinstance(b, Picture)]
    with atomic_files([p for p, _ in files]) as temps:
        for t, (_, data) in zip(temps, files, strict=True):
            t.write_bytes(data)
    return [p for p, _ in files]


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


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def options_table(options: Mapping[str, Any], choices: Mapping[str, Sequence[Any]],
                   docs: Mapping[str, str]) -> Table:
    rows: list[list[Inline]] = []
    for k, v in options.items():
        ch = choices.get(k) or (("true", "false") if isinstance(v, bool) else ())
        rows.append([Code(k), Code(option_text(v)), ", ".join(option_text(c) for c in ch), docs.get(k, "")])
    return Table(["Option", "Value", "Choices", "What it means"], rows)


def title_blocks(head: str, res: Any, *who: Inline, summary: str = "") -> list[Block]:
    """The page's heading, the rule set and its file, who plays (``who``), and the rule file's summary."""
    blocks: list[Block] = [
        Heading(1, head),
        para(Code(res.rules), ", read from ", Code(res.source), *who),
        *([para(f"It follows {res.seed}.")] if res.seed else []),
    ]
    if summary:
        blocks.append(para(f"The rule file's summary: {summary}."))
    return blocks


def squares_blocks(rows: list[list[Inline]], rules: Any, options_intro: str = "Options in force:") -> list[Block]:
    """The table of squares with an effect (``rows``: square, name, effect) and the options in force.

    ``rules`` gives ``options``, ``option_choices`` and ``option_docs`` (every family's rule set does).
    """
    return [para("Squares with an effect:"), Table(["Square", "Name", "Effect"], rows), para(options_intro),
            options_table(rules.options, rules.option_choices, rules.option_docs)]


def length_blocks(L: LengthSummary, unit: str) -> list[Block]:
    text = (f"Game length in turns ({unit}): mean given it ends {fmt(L.mean_given_end, 4)}; median "
            f"{L.quantile_text('median')}, 90th percentile {L.quantile_text('p90')}, 99th percentile "
            f"{L.quantile_text('p99')}.")
    if L.never_ends > 0:
        text += (f" The game never ends with chance {L.never_ends:.6g}; of the games that end: median "
                 f"{L.quantile_text('given_end median')}, 90th percentile {L.quantile_text('given_end p90')}, "
                 f"99th percentile {L.quantile_text('given_end p99')}.")
    text += f" The distribution is computed to a tail mass of {L.tail_mass:.1e}."
    return [para(text), Picture(
        LENGTH_PNG, length_png(L),
        "Two panels over the number of turns: above, the chance that the game ends on each turn; below, the "
        "chance that it has ended by then",
        "The length of the game in turns. Above: the chance that the game ends on turn t (the pmf). Below: "
        "the chance that it has ended by turn t (the cdf)"
        + ("; the dashed line is the chance that it ends at all." if L.never_ends > 0 else "."),
    )]


def solver_blocks(solver: list[dict], timings: Mapping[str, float]) -> list[Block]:
    res = max((s["residual"] for s in solver), default=0.0)
    t = ", ".join(f"{k} {v:.2f} s" for k, v in timings.items())
    return [Heading(2, "How this was computed"),
            para(f"Largest residual of the {len(solver)} linear solves: {res:.2e}. Time spent: {t}.", small=True)]


# ----------------------------------------------------------------------------- pictures


def new_figure(w: float, h: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=DPI)
    FigureCanvasAgg(fig)  # the Agg canvas, explicitly: no display, no global backend
    return fig


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white", metadata={"Software": None})
    return buf.getvalue()


def length_png(L: LengthSummary) -> bytes:
    pmf = np.asarray(L.pmf, float)
    cdf = np.cumsum(pmf)
    ends = 1.0 - L.never_ends
    # Show the turns that hold nearly all of the games that end; the far tail is flat.
    reach = np.flatnonzero(cdf >= ends * 0.999)
    last = int(reach[0]) if reach.size else pmf.size - 1
    xmax = max(10, int(last * 1.08) + 1)
    t = np.arange(pmf.size)
    fig = new_figure(8.5, 6.0)
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
        if q is not None and math.isfinite(q) and q < xmax:  # None: not certain, not drawn
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
    return png_bytes(fig)


def text_colour(rgba: Sequence[float]) -> str:
    r, g, b = rgba[:3]
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"


def colour_scale(values: np.ndarray | None):
    """A colour map and a scale from 0 to a little over the largest value (1 when there are none)."""
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    cmap = colormaps[CMAP]
    top = float(np.max(values)) if values is not None and values.size else 1.0
    top = math.ceil(max(top, 1e-9) * 10) / 10 if top > 0.05 else max(top, 1e-9)
    return cmap, Normalize(0.0, top)


def row_cell(q: int, width: int) -> tuple[int, int]:
    """(column, row) of square ``q`` (from 1) on a board drawn in rows of ``width``, boustrophedon:
    square 1 at the bottom left, each row running the other way from the one below."""
    row, k = divmod(q - 1, width)
    return (k if row % 2 == 0 else width - 1 - k), row
