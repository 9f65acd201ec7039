"""Played Ur games as text: RoyalUr's Royal Game Notation, a plain list of throws and moves, or JSON.

A game is read into a :class:`GameRecord` (its tags and its actions in order); :mod:`.review`
replays it against the rules. Three forms are read, told apart by their first characters:

RGN (Royal Game Notation)
-------------------------
The PGN-like notation of RoyalUr.net (RoyalUr-Java's ``net.royalur.notation.RGN``): tag lines
``[Key "value"]`` (a value made of letters, digits, ``_ . -`` may go unquoted), then the move
text. ``N.`` opens light's turn number N and ``/`` dark's turn; a turn holds one action, or more
when a piece lands on a rosette and the same side throws again. An action is a move or a throw
without a move:

* a move names its tiles: the column letter and row of the board (``A``-``C`` by ``1``-``8``),
  ``A@`` (light) or ``C@`` (dark) for a piece entering from the hand, ``A+`` / ``C+`` for a
  piece leaving the board: ``A@A2``, ``B3B5x`` (``x``: a capture), ``A@A1 *`` (``*``: the
  piece lands on a rosette; the space before it is optional), ``A7A+#`` (``#``: the move ends
  the game). The throw is not written: it is the number of squares walked;
* a throw that allows no move is written with its value and ``--``: ``0 --``, ``2 --``.

Light walks A4 A3 A2 A1 (path squares 1-4), the middle column B1..B8 (5-12), then A8 A7
(13-14); dark the same squares of column C. Those are Bell's paths; on the other boards a tile is
named the same way (RoyalUr's ``Tile.encode``: column letter, row) along that board's paths:
Masters' path (``ur-blitz``, ``ur-masters``) walks A4..A1, B1..B7, C7 C8 B8 A8 A7 for light (16
squares; dark C4..C1, B1..B7, A7 A8 B8 C8 C7), so ``B7C7`` is light's step from square 11 to 12;
Aseb's board (``ur-aseb``) walks A4..A1 then B1..B12. A piece enters with ``A@`` / ``C@`` and
leaves with ``A+`` / ``C+`` on every board (the column of the side's start and end tiles); ``*``
marks a landing on a rosette of the board (on Masters' path also the unsafe ones). Comments
(``{...}``, and ``;`` to the end of the line) are skipped, and so is a result at the end
(``1-0`` light won, ``0-1`` dark won, ``*`` unfinished). Letters may be written in either case.

Tags read: ``Rules`` (the name of RoyalUr's rule set, its ``GameSettings``: ``Finkel``,
``Finkel with Two Pieces``, ``Blitz``, ``Masters``, ``Aseb``; or the name of one of this
package's Ur rule sets such as ``ur-masters``), ``Pieces`` (pieces per side), ``Result``; the
others (players, dates) are kept and shown. The moves are read along the paths of the rule set
the tags (or ``--rules``) choose: :func:`game_tags` reads the tags alone, first.

Plain list
----------
The same tag lines may come first; then one action per line, ``#`` starting a comment::

    light 4 hand        # throw 4: a piece from the hand to square 4
    light 1 4-5         # throw 1: the piece on 4 to 5 (the target is checked against the throw)
    dark 0 pass         # a throw of 0, or one without a legal move
    dark 2 12-off       # 13 and 14 are the side's own last squares; off is 15

A move is ``FROM`` or ``FROM-TO`` in path squares: 0 or ``hand`` (the hand), 1-14 the board
(1-4 and 13-14 the side's own squares, 5-12 the shared lane), 15 or ``off``; ``pass`` (or
``-``) for no move. On the 16-square paths of Masters and Aseb the board is 1-16 and off is 17.

JSON
----
``{"rules": "ur", "pieces": 2, "moves": [{"side": "light", "throw": 4, "from": 0}, ...]}``:
``from`` is a path square (0 the hand) or ``null`` / ``"pass"``, ``to`` may be given (checked),
``tags`` (an object) may name the others.

Every error is one line naming the game file and the line or move at fault
(:class:`~markov_oca.core.errors.RulesError`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import RulesError
from .board import UrBoard

__all__ = ["Action", "GameRecord", "board_tiles", "format_move", "game_tags", "parse_game", "rules_choice"]

SIDES = ("light", "dark")
OFF = 15

_COLUMN = {"light": "A", "dark": "C"}

#: RoyalUr's names of rule sets (their ``GameSettings``) -> (this package's rule set, pieces).
ROYALUR_RULES = {"finkel": ("ur", 7), "finkel with two pieces": ("ur", 2), "blitz": ("ur-blitz", 5),
                 "masters": ("ur-masters", 7), "aseb": ("ur-aseb", 5)}

_TAG = re.compile(r'^\[\s*([A-Za-z][\w.\-]*)\s+(?:"((?:[^"\\]|\\.)*)"|([^\]\s"]+))\s*\]$')
_UNESCAPE = {'"': '"', "\\": "\\", "n": "\n", "r": "\r"}
_RGN_TOKEN = re.compile(
    r"(?P<turn>\d+\.)"
    r"|(?P<result>1-0|0-1|1/2-1/2)(?![\w@+])"
    r"|(?P<move>[A-Za-z](?:@|\d+)[A-Za-z](?:\+|\d+)x?\s?\*?#?)"
    r"|(?P<pass>--#?)"
    r"|(?P<roll>\d+)"
    r"|(?P<dark>/)"
    r"|(?P<star>\*)"
    r"|(?P<bad>\S+)")
_RGN_MOVE = re.compile(r"([A-Za-z])(@|\d+)([A-Za-z])(\+|\d+)(x?)\s?(\*?)(#?)")


@dataclass(frozen=True)
class Action:
    """One action of a played game, as the text gives it.

    ``throw`` is the throw (for an RGN move, the squares walked); ``source`` the path square of the moved
    piece (0 the hand) and ``target`` where it lands (15 off), both None for a throw without a move.
    ``capture`` and ``rosette`` say what the text claims (None: it does not say); ``ends`` whether it
    marks the game's end. ``line`` is the line of the text, ``text`` the action as written.
    """

    number: int
    side: str
    throw: int
    source: int | None
    target: int | None
    line: int
    text: str
    turn: int | None = None
    capture: bool | None = None
    rosette: bool | None = None
    ends: bool = False

    @property
    def is_pass(self) -> bool:
        return self.source is None

    @property
    def where(self) -> str:
        """``move 7 (turn 4, line 3, light: 'A1B1')``: how errors name the action."""
        turn = f"turn {self.turn}, " if self.turn is not None else ""
        side = "" if self.text.lower().startswith(self.side) else f"{self.side}: "
        return f"move {self.number} ({turn}line {self.line}, {side}{self.text!r})"


@dataclass
class GameRecord:
    """A game as read: its tags, its actions in order, the result it claims, and which form it was in."""

    source: str
    form: str  # "rgn", "plain" or "json"
    tags: dict[str, str] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)
    result: str | None = None  # "1-0", "0-1", "*" or None
    tag_lines: dict[str, int] = field(default_factory=dict)
    off: int = OFF  # the path square of a piece off the board (the path's length + 1)


def format_move(source: int | None, target: int | None, off: int = OFF) -> str:
    """``hand-4``, ``4-5``, ``14-off``, ``pass``: a move in path squares.

    Parameters
    ----------
    source, target : int or None
        Path squares (0 the hand, ``off`` off); None for a throw without a move.
    off : int
        The path square of a piece off the board (15 on Bell's path, 17 on the 16-square paths).

    Examples
    --------
    >>> format_move(0, 4), format_move(13, 15), format_move(None, None)
    ('hand-4', '13-off', 'pass')
    """
    if source is None:
        return "pass"
    return f"{'hand' if source == 0 else source}-{'off' if target == off else target}"


def board_tiles(board: UrBoard | None = None) -> dict[str, tuple[str, ...]]:
    """Each side's path squares 1..L as RoyalUr names their tiles (``A4``, ``B12``), Bell's by default.

    Parameters
    ----------
    board : UrBoard, optional
        The rule set's board (:attr:`.rules.UrRules.board`).

    Examples
    --------
    >>> from markov_oca.ur.rules import load_ur
    >>> board_tiles(load_ur("ur-masters").board)["light"][10:]
    ('B7', 'C7', 'C8', 'B8', 'A8', 'A7')
    """
    board = board if board is not None else _bell_board()
    return {side: tuple(f"{'ABC'[c - 1]}{r}" for c, r in path) for side, path in
            (("light", board.light), ("dark", board.dark))}


def _bell_board() -> UrBoard:
    from .rules import _BELL

    return _BELL


def game_tags(text: str, source: str = "game") -> GameRecord:
    """The tags of a game (RGN and plain tag lines, or the JSON form's ``rules``, ``pieces`` and ``tags``)
    without its moves: enough for :func:`rules_choice` before the moves are read along the rule set's paths.

    Parameters
    ----------
    text, source : str
        The game's text, and where it was read from (named in errors), as for :func:`parse_game`.
    """
    if text.lstrip().startswith("{"):
        rec = _parse_json(text, source, moves=False)
    else:
        rec = GameRecord(source, "rgn")
        _read_tags(text, rec)
    return rec


def parse_game(text: str, source: str = "game", board: UrBoard | None = None) -> GameRecord:
    """Read a played game in RGN, the plain list, or JSON (see the module docstring).

    Parameters
    ----------
    text : str
        The game's text.
    source : str
        Where it was read from, named in errors.
    board : UrBoard, optional
        The board of the rule set it was played under (its paths name the tiles and squares); Bell's
        by default.

    Examples
    --------
    >>> g = parse_game('[Rules "Finkel"]\\n1. A@A2 / C@C3 2. A2B1')
    >>> [(a.side, a.throw, a.source, a.target) for a in g.actions]
    [('light', 3, 0, 3), ('dark', 2, 0, 2), ('light', 2, 3, 5)]
    """
    stripped = text.lstrip()
    off = board.path_length + 1 if board is not None else OFF
    if stripped.startswith("{"):
        return _parse_json(text, source, off=off)
    rec = GameRecord(source, "rgn", off=off)
    body_start = _read_tags(text, rec)
    lines = text.splitlines()[body_start:]
    first = next((ln.split() for ln in lines if ln.split("#")[0].strip()), [""])
    if first[0].lower() in SIDES:
        rec.form = "plain"
        _parse_plain(lines, body_start, rec)
    else:
        _parse_rgn(lines, body_start, rec, board_tiles(board))
    if "Result" in rec.tags and rec.result is None:
        rec.result = rec.tags["Result"]
    return rec


def rules_choice(rec: GameRecord, rules: str | None = None, pieces: int | None = None) -> tuple[str, int | None]:
    """(rule set name, pieces or None for the rule file's) of a game: the options given win over its tags.

    Parameters
    ----------
    rec : GameRecord
        The game as read.
    rules : str, optional
        A rule set named on the command line.
    pieces : int, optional
        Pieces per side named on the command line.
    """
    name, count = "ur", None
    if "Rules" in rec.tags:
        tag = rec.tags["Rules"]
        name, count = ROYALUR_RULES.get(tag.strip().lower(), (tag.strip(), None))
    if "Pieces" in rec.tags:
        raw = rec.tags["Pieces"]
        if not raw.isdigit():
            raise RulesError(f"line {rec.tag_lines.get('Pieces', 1)}: [Pieces] is a whole number, not {raw!r}",
                             source=rec.source)
        count = int(raw)
    return (rules or name), (pieces if pieces is not None else count)


# ----------------------------------------------------------------------------- tags


def _read_tags(text: str, rec: GameRecord) -> int:
    """Read the tag lines at the top into ``rec``; the index of the first line after them."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line or line.startswith(("#", ";", "%")):
            i += 1
            continue
        if not line.startswith("["):
            break
        m = _TAG.match(line)
        if m is None:
            raise RulesError(f"line {i + 1}: a tag is [Key \"value\"], got {line!r}", source=rec.source)
        key, quoted, bare = m.groups()
        value = bare if bare is not None else re.sub(r"\\(.)", lambda e: _UNESCAPE.get(e.group(1), e.group(1)),
                                                     quoted)
        rec.tags[key] = value
        rec.tag_lines[key] = i + 1
        i += 1
    return i


# ----------------------------------------------------------------------------- RGN


def _strip_comments(line: str, in_brace: bool) -> tuple[str, bool]:
    """The line without its comments, and whether a ``{`` comment runs on past it."""
    out = []
    for ch in line:
        if in_brace:
            in_brace = ch != "}"
        elif ch == "{":
            in_brace = True
        elif ch == ";":
            break
        else:
            out.append(ch)
    return "".join(out), in_brace


def _tile_square(tile: str, side: str, where: str, rec: GameRecord, tiles: dict[str, tuple[str, ...]]) -> int:
    """The path square of a tile written in an RGN move, for the side moving; error if not on its path."""
    col, row = tile[0].upper(), tile[1:]
    if row == "@":
        sq = 0 if col == _COLUMN[side] else None
    elif row == "+":
        sq = rec.off if col == _COLUMN[side] else None
    else:
        name = f"{col}{int(row)}"
        sq = tiles[side].index(name) + 1 if name in tiles[side] else None
    if sq is None:
        raise RulesError(f"{where}: {tile!r} is not on {side}'s path", source=rec.source)
    return sq


class _RgnReader:
    """The move text's actions in order, with the side of each from the turn marks."""

    def __init__(self, rec: GameRecord, tiles: dict[str, tuple[str, ...]]):
        self.rec = rec
        self.tiles = tiles
        self.side: str | None = None
        self.turn: int | None = None
        self.roll: tuple[int, int, str] | None = None  # a throw waiting for its "--"

    def where(self, line: int, text: str) -> str:
        return f"move {len(self.rec.actions) + 1} (line {line}, {text!r})"

    def add(self, line: int, text: str, **kw: Any) -> None:
        if self.side is None:
            raise RulesError(f"{self.where(line, text)}: the move text starts with a turn mark ('1.' for light, "
                             "'/' for dark)", source=self.rec.source)
        if self.rec.result is not None:
            raise RulesError(f"{self.where(line, text)}: an action after the result {self.rec.result!r}",
                             source=self.rec.source)
        self.rec.actions.append(Action(len(self.rec.actions) + 1, self.side, line=line, text=text, turn=self.turn,
                                       **kw))

    def token(self, kind: str, tok: str, line: int) -> None:
        rec = self.rec
        if self.roll is not None and kind != "pass":
            raise RulesError(f"{self.where(line, self.roll[2])}: a throw without a move is written "
                             f"'{self.roll[0]} --'", source=rec.source)
        if kind == "turn":
            number = int(tok.rstrip("."))
            if number != (self.turn or 0) + 1:
                raise RulesError(f"{self.where(line, tok)}: light's turn {(self.turn or 0) + 1} comes next, not "
                                 f"{number}", source=rec.source)
            self.side, self.turn = "light", number
        elif kind == "dark":
            self.side = "dark"
        elif kind == "roll":
            self.roll = (int(tok), line, tok)
        elif kind == "pass":
            if self.roll is None:
                raise RulesError(f"{self.where(line, tok)}: '--' follows the throw it passes on ('2 --')",
                                 source=rec.source)
            value, _, text = self.roll
            self.roll = None
            self.add(line, f"{text} {tok}", throw=value, source=None, target=None, ends=tok.endswith("#"))
        elif kind == "move":
            self.move(tok, line)
        elif kind == "star":
            if rec.actions and rec.actions[-1].line == line and rec.actions[-1].rosette is None \
                    and rec.actions[-1].source is not None:
                last = rec.actions[-1]
                rec.actions[-1] = replace(last, rosette=True, text=last.text + " *")
            else:
                rec.result = "*"
        elif kind == "result":
            rec.result = tok
        else:
            raise RulesError(f"{self.where(line, tok)}: not RGN move text (a move is like 'A@A2', "
                             f"'B3B5x', 'A7A+'; a throw without a move like '0 --')", source=rec.source)

    def move(self, tok: str, line: int) -> None:
        text = " ".join(tok.split())
        if self.side is None:
            self.add(line, text)  # raises: no turn mark yet
        m = _RGN_MOVE.fullmatch(tok)
        assert m is not None and self.side is not None
        src_col, src_row, dst_col, dst_row, cap, star, end = m.groups()
        where = self.where(line, text)
        source = _tile_square(src_col + src_row, self.side, where, self.rec, self.tiles)
        target = _tile_square(dst_col + dst_row, self.side, where, self.rec, self.tiles)
        if target <= source:
            raise RulesError(f"{where}: a piece moves forward along its path "
                             f"({format_move(source, target, self.rec.off)})",
                             source=self.rec.source)
        self.add(line, text, throw=target - source, source=source, target=target, capture=bool(cap) or None,
                 rosette=bool(star) or None, ends=bool(end))


def _parse_rgn(lines: list[str], offset: int, rec: GameRecord, tiles: dict[str, tuple[str, ...]]) -> None:
    reader = _RgnReader(rec, tiles)
    in_brace = False
    for k, raw in enumerate(lines):
        line_no = offset + k + 1
        body, in_brace = _strip_comments(raw, in_brace)
        for m in _RGN_TOKEN.finditer(body):
            kind = m.lastgroup
            assert kind is not None
            reader.token(kind, m.group(), line_no)
    if in_brace:
        raise RulesError("a '{' comment is never closed", source=rec.source)
    if reader.roll is not None:
        value, line, text = reader.roll
        raise RulesError(f"{reader.where(line, text)}: a throw without a move is written '{value} --'",
                         source=rec.source)


# ----------------------------------------------------------------------------- plain list and JSON


def _square(word: str, where: str, rec: GameRecord, *, target: bool) -> int:
    w = word.strip().lower()
    if w == "hand" and not target:
        return 0
    off = rec.off
    if w == "off" and target:
        return off
    if not w.isdigit() or not (1 if target else 0) <= int(w) <= (off if target else off - 1):
        what = f"a target is 1..{off - 1} or off ({off})" if target else f"a piece moves from hand (0) or 1..{off - 1}"
        raise RulesError(f"{where}: {what}, not {word!r}", source=rec.source)
    return int(w)


def _plain_action(rec: GameRecord, number: int, line: int, side: str, throw: Any, move: Any, to: Any,
                  text: str) -> Action:
    """One action of the plain list or the JSON form, checked for shape (not yet against the rules)."""
    where = f"move {number} (line {line}, {text!r})" if rec.form == "plain" else f"move {number} ({text})"
    side = str(side).strip().lower()
    if side not in SIDES:
        raise RulesError(f"{where}: the side is light or dark, not {side!r}", source=rec.source)
    if isinstance(throw, bool) or not (isinstance(throw, int) or str(throw).isdigit()):
        raise RulesError(f"{where}: the throw is a whole number, not {throw!r}", source=rec.source)
    throw = int(throw)
    if move is None or str(move).strip().lower() in ("pass", "-", "--"):
        if to is not None:
            raise RulesError(f"{where}: a pass has no target", source=rec.source)
        return Action(number, side, throw, None, None, line, text)
    source = _square(str(move), where, rec, target=False)
    target = source + throw
    if to is not None:
        given = _square(str(to), where, rec, target=True)
        if given != target:
            raise RulesError(f"wrong throw at {where}: {format_move(source, given, rec.off)} walks {given - source} "
                             f"squares, the throw is {throw}", source=rec.source)
    return Action(number, side, throw, source, target, line, text)


def _parse_plain(lines: list[str], offset: int, rec: GameRecord) -> None:
    for k, raw in enumerate(lines):
        body = raw.split("#")[0].strip()
        if not body:
            continue
        line_no = offset + k + 1
        words = body.split()
        number = len(rec.actions) + 1
        if len(words) == 1 and words[0] in ("1-0", "0-1", "*"):
            rec.result = words[0]
            continue
        if len(words) != 3:
            raise RulesError(f"move {number} (line {line_no}, {body!r}): a line is 'SIDE THROW MOVE', e.g. "
                             "'light 3 hand', 'dark 2 5-7', 'light 0 pass'", source=rec.source)
        if rec.result is not None:
            raise RulesError(f"move {number} (line {line_no}): an action after the result {rec.result!r}",
                             source=rec.source)
        side, throw, move = words
        frm, to = (move.split("-", 1) if "-" in move.strip("-") else (move, None))
        rec.actions.append(_plain_action(rec, number, line_no, side, throw, frm, to, body))


def _parse_json(text: str, source: str, off: int = OFF, moves: bool = True) -> GameRecord:
    rec = GameRecord(source, "json", off=off)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RulesError(f"line {exc.lineno}: not valid JSON ({exc.msg})", source=source) from None
    if not isinstance(data, dict) or not isinstance(data.get("moves"), list):
        raise RulesError("a JSON game is an object with a list 'moves'", source=source)
    unknown = set(data) - {"rules", "pieces", "moves", "tags", "result"}
    if unknown:
        raise RulesError(f"unknown key {sorted(unknown)[0]!r} (rules, pieces, moves, tags, result)", source=source)
    tags = data.get("tags", {})
    if not isinstance(tags, dict):
        raise RulesError("'tags' is an object of strings", source=source)
    rec.tags = {str(k): str(v) for k, v in tags.items()}
    if "rules" in data:
        rec.tags["Rules"] = str(data["rules"])
    if "pieces" in data:
        rec.tags["Pieces"] = str(data["pieces"])
    rec.result = data.get("result")
    for i, m in enumerate(data["moves"] if moves else [], start=1):
        if not isinstance(m, dict) or not {"side", "throw"} <= set(m) or set(m) - {"side", "throw", "from", "to"}:
            raise RulesError(f"move {i}: an object with 'side', 'throw' and 'from' (a square, or null for a "
                             f"pass), 'to' optional; got {json.dumps(m)}", source=source)
        rec.actions.append(_plain_action(rec, i, i, m["side"], m["throw"], m.get("from"), m.get("to"),
                                         f"moves[{i - 1}]"))
    return rec
