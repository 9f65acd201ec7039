"""Rules of the Royal Game of Ur family (see ``docs/ur.md``) as validated data.

A rule file is TOML:

* ``[game]``: ``name``, ``family = "ur"``, ``title``, ``tradition``, ``summary`` and
  ``pieces`` (per side, 1..7);
* ``[throw]``: ``kind = "coins"`` with ``count`` (the move is the number of heads,
  0..count, binomial; with ``zero_as = k`` a throw of no heads moves k instead,
  RoyalUr's "three binary dice, 0 counts as 4"), ``kind = "die"`` with ``faces``
  (1..faces, uniform) or ``kind = "table"`` with ``values`` and ``weights`` (the
  move and its relative weight, whole numbers);
* ``[board]``: ``shape`` and ``path`` (names, shown in reports), ``light_path``
  (light's path as waypoints ``[column, row]``, see :mod:`markov_oca.ur.board`;
  dark's is its reflection; Bell's path by default), ``rosettes`` (squares
  ``[column, row]``, or path squares; each stands for its reflection too),
  ``safe_rosettes`` (true: no capture on a rosette) and ``again`` (the events that
  give another throw: ``"rosette"``, ``"capture"``; ``["rosette"]`` by default).
  Without ``light_path``, ``path_length`` (14) and ``shared`` (``[5, 12]``) may
  be given and must be Bell's;
* ``[end]``: ``rule = "all-off"`` (the first to take all pieces off wins) or
  ``rule = "total-off"`` with an odd ``total`` (the game ends when ``total``
  pieces in all are off; more off wins; a side with all its pieces off also
  ends it).

Options (strings from the CLI are converted): ``pieces`` (1..7), ``throw``
(``coins`` or ``die``; a kind the file does not describe uses 4 coins or a d4),
``end`` (``all-off`` or ``total-off``; ``total-off`` without a total uses 7) and
``total`` (an odd whole number, only with ``end = total-off``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..core.errors import RulesError
from ..core.rulefile import (
    GAME_TEXT_KEYS,
    bool_value,
    check_keys,
    game_table,
    game_texts,
    int_value,
    parse_options,
    read_toml,
    resolve_source,
    str_value,
)
from .board import PATHS, UrBoard, board_from_waypoints
from .state import PathCode

__all__ = ["UR_OPTIONS", "UrRules", "build_ur", "load_ur"]

#: Path squares of the one board the position encoding supports.
PATH_LENGTH = 14
SHARED = (5, 12)
OFF_SQUARE = PATH_LENGTH + 1
MAX_PIECES = 7

#: The options every Ur rule set accepts: (example default, doc). ``None`` means "from the file".
UR_OPTIONS: dict[str, tuple[Any, str]] = {
    "pieces": (7, "pieces per side, 1..7 (the file's [game] pieces by default)"),
    "throw": ("coins", "coins: the number of heads of the coins (0 passes); die: a die numbered 1..faces"),
    "end": ("all-off", "all-off: the first to take all pieces off wins; total-off: the game ends when "
                       "'total' pieces in all are off and more off wins"),
    "total": (7, "with end = total-off: how many pieces off in all end the game (odd, so never a tie)"),
}
_CHOICES = {"throw": ("coins", "die"), "end": ("all-off", "total-off")}
_TOP_KEYS = {"game", "throw", "board", "end"}
_GAME_KEYS = GAME_TEXT_KEYS | {"pieces"}
_THROW_KEYS = {"kind", "count", "faces", "zero_as", "values", "weights"}
_BOARD_KEYS = {"path_length", "rosettes", "shared", "shape", "path", "light_path", "safe_rosettes", "again"}
_AGAIN = ("rosette", "capture")
_PATH_NAMES = {"bell": "Bell's path", "masters": "Masters' path", "aseb": "Aseb's path"}
_MAX_MOVE = 8
_END_KEYS = {"rule", "total"}
_DEFAULT_TOTAL = 7
_MAX_COINS = 6
_MAX_FACES = 6


@dataclass(frozen=True)
class UrRules:
    """A validated Ur-family rule set with its options in force."""

    name: str
    title: str
    seed: str
    summary: str
    source: str
    pieces: int
    throw_kind: str  # "coins" or "die"
    throw_count: int  # coins: how many coins; die: how many faces
    throws: tuple[tuple[int, Fraction], ...]  # (move, probability), moves ascending
    rosettes: tuple[int, ...]  # path squares, ascending
    end: str  # "all-off" or "total-off"
    total: int | None  # with end = "total-off": pieces off in all that end the game
    options: Mapping[str, Any]  # every option in force
    option_docs: Mapping[str, str] = field(default_factory=dict)
    option_choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    path_length: int = PATH_LENGTH
    shared: tuple[int, int] = SHARED
    board: UrBoard | None = None  # the squares, paths and rosettes (Bell's board when None)
    board_name: str = "standard board, Bell's path"
    safe_rosettes: bool = True  # no capture on a rosette
    rosette_again: bool = True  # landing on a rosette gives another throw
    capture_again: bool = False  # a capture gives another throw
    throw_name: str = ""  # how the throw is described (empty: from kind and count)

    family = "ur"
    default_players = 2

    @property
    def again_after_capture(self) -> bool:
        """Whether a move that captures can give the mover another throw (a capture does, or a rosette does and
        a piece on a rosette can be taken): such a throw lowers the opponent's pips within a turn."""
        return self.capture_again or (self.rosette_again and not self.safe_rosettes)

    @property
    def throw_values(self) -> np.ndarray:
        """The moves a throw can give, ascending (int64)."""
        return np.array([v for v, _ in self.throws], np.int64)

    @property
    def throw_probabilities(self) -> np.ndarray:
        """Their probabilities (float64), in the order of :attr:`throw_values`."""
        return np.array([float(p) for _, p in self.throws])

    @property
    def code(self) -> PathCode:
        """The position encoding's view of the board (:class:`~markov_oca.ur.state.PathCode`)."""
        return self.board.code if self.board is not None else _BELL.code

    @property
    def off_square(self) -> int:
        """The path square of a piece off the board (the path's length plus 1)."""
        return self.path_length + 1

    @property
    def rosette_mask(self) -> int:
        """Bit s set for each rosette path square s."""
        return sum(1 << s for s in self.rosettes)

    @property
    def end_total(self) -> int:
        """The kernels' end parameter: ``total`` for total-off, 0 for all-off."""
        return int(self.total) if self.end == "total-off" else 0

    @property
    def decided_off(self) -> int:
        """Pieces off that decide the winner before the game ends (more than half of ``total``), 0 for all-off."""
        return (self.end_total + 1) // 2 if self.end_total else 0

    def describe_throw(self) -> str:
        if self.throw_name:
            return self.throw_name
        if self.throw_kind == "coins":
            return f"{self.throw_count} coins (the number of heads, 0..{self.throw_count})"
        return f"a {self.throw_count}-sided die (1..{self.throw_count})"

    def describe_end(self) -> str:
        if self.end == "all-off":
            return "the first to take all pieces off the board wins"
        return (f"the game ends when {self.total} pieces in all are off (or a side has all its pieces off); "
                "who took off more wins")


def _throws(kind: str, count: int, zero_as: int = 0) -> tuple[tuple[int, Fraction], ...]:
    if kind == "coins":
        out = [(k or zero_as, Fraction(comb(count, k), 2**count)) for k in range(count + 1)]
        return tuple(sorted(out))
    return tuple((k, Fraction(1, count)) for k in range(1, count + 1))


_BELL = board_from_waypoints("Bell's path", [list(t) for t in PATHS["bell"]], [4, 8, 14])


def load_ur(rules: str | Path, options: Mapping[str, Any] | None = None) -> UrRules:
    """Load and validate an Ur rule set.

    Parameters
    ----------
    rules:
        A shipped name such as ``"ur"`` or a path to a TOML file.
    options:
        Option values to put in force (see :data:`UR_OPTIONS`); strings are
        converted (``"3"``).

    Examples
    --------
    >>> r = load_ur("ur-7-rescatados", {"pieces": "5"})
    >>> r.pieces, r.end, r.total
    (5, 'total-off', 7)
    """
    source, path = resolve_source(rules)
    raw = read_toml(source, path)
    return build_ur(raw, source, options or {})


def _choose(source: str, value: str, choices, key: str) -> None:
    if value not in choices:
        raise RulesError(f"{value!r} is not one of {', '.join(choices)}", source=source, key=key)


def _table_throw(source: str, throw: dict[str, Any]) -> tuple[tuple[int, Fraction], ...]:
    """The ``values`` and ``weights`` of a ``kind = "table"`` throw as (move, probability), moves ascending."""
    values, weights = throw.get("values"), throw.get("weights")
    for key, v in (("values", values), ("weights", weights)):
        if not isinstance(v, list) or not v:
            raise RulesError("must be a non-empty list of whole numbers", source=source, key=f"throw.{key}")
    if len(values) != len(weights):
        raise RulesError(f"has {len(weights)} entries for {len(values)} values", source=source, key="throw.weights")
    moves = [int_value(source, f"throw.values[{i}]", v, lo=0, hi=_MAX_MOVE) for i, v in enumerate(values)]
    if len(set(moves)) != len(moves):
        raise RulesError("a value is listed twice", source=source, key="throw.values")
    ws = [int_value(source, f"throw.weights[{i}]", w, lo=1) for i, w in enumerate(weights)]
    return tuple(sorted((m, Fraction(w, sum(ws))) for m, w in zip(moves, ws, strict=True)))


def _throw(source: str, raw: dict[str, Any], chosen: Mapping[str, Any]):
    """(kind, coins or faces, throws, description) of the ``[throw]`` table, with the ``throw`` option in force."""
    throw = raw.get("throw", {"kind": "coins", "count": 4})
    check_keys(source, "throw", throw, _THROW_KEYS)
    kind = str_value(source, "throw.kind", throw.get("kind", "coins"))
    _choose(source, kind, (*_CHOICES["throw"], "table"), "throw.kind")
    own = {"coins": {"count", "zero_as"}, "die": {"faces"}, "table": {"values", "weights"}}[kind]
    for other in sorted(_THROW_KEYS - own - {"kind"}):
        if other in throw:
            raise RulesError(f"a throw of kind {kind!r} has {', '.join(repr(k) for k in sorted(own))}, "
                             f"not '{other}'", source=source, key=f"throw.{other}")
    if "throw" in chosen and chosen["throw"] != kind:
        return chosen["throw"], 4, _throws(chosen["throw"], 4), ""
    if kind == "table":
        table = _table_throw(source, throw)
        text = ", ".join(f"{m}: {p}" for m, p in table)
        return kind, len(table), table, f"a throw of {text}"
    if kind == "coins":
        count = int_value(source, "throw.count", throw.get("count", 4), lo=1, hi=_MAX_COINS)
        zero_as = int_value(source, "throw.zero_as", throw.get("zero_as", 0), lo=0, hi=_MAX_MOVE)
        if zero_as and zero_as <= count:
            raise RulesError(f"must be more than the {count} coins (or 0: a throw of no heads passes), "
                             f"got {zero_as}", source=source, key="throw.zero_as")
        text = (f"{count} coins (the number of heads, 1..{count}; no heads counts {zero_as})" if zero_as else "")
        return kind, count, _throws(kind, count, zero_as), text
    count = int_value(source, "throw.faces", throw.get("faces", 4), lo=1, hi=_MAX_FACES)
    return kind, count, _throws(kind, count), ""


def _board(source: str, raw: dict[str, Any]) -> tuple[UrBoard, str, bool, bool, bool]:
    """(board, its name, safe rosettes, rosette throws again, capture throws again) of the ``[board]`` table."""
    board = raw.get("board", {})
    check_keys(source, "board", board, _BOARD_KEYS)
    ros_raw = board.get("rosettes", [4, 8, 14])
    if "light_path" in board:
        for key in ("path_length", "shared"):
            if key in board:
                raise RulesError("follows from light_path; leave it out", source=source, key=f"board.{key}")
        geo = board_from_waypoints(source, board["light_path"], ros_raw)
    else:
        plen = int_value(source, "board.path_length", board.get("path_length", PATH_LENGTH))
        if plen != PATH_LENGTH:
            raise RulesError(f"only a path of {PATH_LENGTH} squares is supported without light_path, got {plen}",
                             source=source, key="board.path_length")
        shared = board.get("shared", list(SHARED))
        if not isinstance(shared, list) or len(shared) != 2 or tuple(shared) != SHARED:
            raise RulesError(f"only the shared lane {list(SHARED)} is supported without light_path, got {shared!r}",
                             source=source, key="board.shared")
        if isinstance(ros_raw, list):
            for i, v in enumerate(ros_raw):
                if not isinstance(v, list):
                    int_value(source, f"board.rosettes[{i}]", v, lo=1, hi=PATH_LENGTH)
            if len({str(v) for v in ros_raw}) != len(ros_raw):
                raise RulesError("a square is listed twice", source=source, key="board.rosettes")
        geo = board_from_waypoints(source, [list(t) for t in PATHS["bell"]], ros_raw, key="board.rosettes")
    path = str_value(source, "board.path", board.get("path", "bell" if "light_path" not in board else "own"))
    shape = str_value(source, "board.shape", board.get("shape", "standard"))
    safe = bool_value(source, "board.safe_rosettes", board.get("safe_rosettes", True))
    again = board.get("again", ["rosette"])
    if not isinstance(again, list):
        raise RulesError(f"must be a list of events among {', '.join(_AGAIN)}", source=source, key="board.again")
    for i, ev in enumerate(again):
        _choose(source, str_value(source, f"board.again[{i}]", ev), _AGAIN, f"board.again[{i}]")
    name = f"{shape} board, {_PATH_NAMES.get(path, path + ' path')}"
    return geo, name, safe, "rosette" in again, "capture" in again


def _end(source: str, raw: dict[str, Any], chosen: Mapping[str, Any]) -> tuple[str, int | None]:
    """(end rule, total or None) of the ``[end]`` table, with the ``end`` and ``total`` options in force."""
    end_t = raw.get("end", {"rule": "all-off"})
    check_keys(source, "end", end_t, _END_KEYS)
    end = str_value(source, "end.rule", end_t.get("rule", "all-off"))
    _choose(source, end, _CHOICES["end"], "end.rule")
    if end == "all-off" and "total" in end_t:
        raise RulesError("'total' belongs to rule = \"total-off\"", source=source, key="end.total")
    total = None
    if end == "total-off":
        total = int_value(source, "end.total", end_t.get("total", _DEFAULT_TOTAL), lo=1, hi=2 * MAX_PIECES - 1)
    total_key = "end.total"
    if "end" in chosen and chosen["end"] != end:
        end = chosen["end"]
        total = _DEFAULT_TOTAL if end == "total-off" else None
    if "total" in chosen:
        if end != "total-off":
            raise RulesError("'total' applies only with end = total-off", source=source, key="option total")
        total = int_value(source, "option total", chosen["total"], lo=1, hi=2 * MAX_PIECES - 1)
        total_key = "option total"
    if total is not None and total % 2 == 0:
        raise RulesError(f"must be odd, so that the game cannot end in a tie, got {total}", source=source,
                         key=total_key)
    return end, total


def build_ur(raw: dict[str, Any], source: str, options: Mapping[str, Any]) -> UrRules:
    """Validate a parsed Ur rule file with options in force.

    Parameters
    ----------
    raw : dict
        The parsed rule file.
    source : str
        Where it was read from (named in errors).
    options : mapping
        Option values to put in force (see :data:`UR_OPTIONS`).
    """
    game = game_table(source, raw, _TOP_KEYS, _GAME_KEYS, "ur")
    chosen = parse_options(source, options, {k: v[0] for k, v in UR_OPTIONS.items()})
    for key, choices in _CHOICES.items():
        if key in chosen:
            _choose(source, chosen[key], choices, f"option {key}")
    texts = game_texts(source, game)
    pieces = int_value(source, "game.pieces", game.get("pieces", MAX_PIECES), lo=1, hi=MAX_PIECES)
    if "pieces" in chosen:
        pieces = int_value(source, "option pieces", chosen["pieces"], lo=1, hi=MAX_PIECES)
    kind, count, throws, throw_name = _throw(source, raw, chosen)
    geo, board_name, safe, ros_again, cap_again = _board(source, raw)
    end, total = _end(source, raw, chosen)
    values = {"pieces": pieces, "throw": kind, "end": end}
    if total is not None:
        values["total"] = total
    return UrRules(
        **texts,
        source=source,
        pieces=pieces,
        throw_kind=kind,
        throw_count=count,
        throws=throws,
        rosettes=geo.rosette_squares,
        end=end,
        total=total,
        options=MappingProxyType(values),
        option_docs=MappingProxyType({k: d for k, (_, d) in UR_OPTIONS.items()}),
        option_choices=MappingProxyType({**_CHOICES, "pieces": tuple(range(1, MAX_PIECES + 1))}),
        path_length=geo.path_length,
        shared=(min(geo.code.shared), max(geo.code.shared)),
        board=geo,
        board_name=board_name,
        safe_rosettes=safe,
        rosette_again=ros_again,
        capture_again=cap_again,
        throw_name=throw_name,
    )
