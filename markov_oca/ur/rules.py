"""Rules of the Royal Game of Ur family (see ``docs/ur.md``) as validated data.

A rule file is TOML:

* ``[game]``: ``name``, ``family = "ur"``, ``title``, ``tradition``, ``summary`` and
  ``pieces`` (per side, 1..7);
* ``[throw]``: ``kind = "coins"`` with ``count`` (the move is the number of heads,
  0..count, binomial) or ``kind = "die"`` with ``faces`` (1..faces, uniform);
* ``[board]``: ``path_length`` (14), ``rosettes`` (path squares that give another
  throw; those in the shared lane are safe: no capture there) and ``shared``
  (first and last square of the shared lane, ``[5, 12]``). The position encoding
  (:mod:`markov_oca.ur.state`) fixes the path and the lane, so only the
  rosettes may differ from the classic board;
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
    check_keys,
    game_table,
    game_texts,
    int_value,
    parse_options,
    read_toml,
    resolve_source,
    str_value,
)

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
_THROW_KEYS = {"kind", "count", "faces"}
_BOARD_KEYS = {"path_length", "rosettes", "shared"}
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

    family = "ur"
    default_players = 2

    @property
    def throw_values(self) -> np.ndarray:
        """The moves a throw can give, ascending (int64)."""
        return np.array([v for v, _ in self.throws], np.int64)

    @property
    def throw_probabilities(self) -> np.ndarray:
        """Their probabilities (float64), in the order of :attr:`throw_values`."""
        return np.array([float(p) for _, p in self.throws])

    @property
    def rosette_mask(self) -> int:
        """Bit s set for each rosette path square s."""
        return sum(1 << s for s in self.rosettes)

    @property
    def end_total(self) -> int:
        """The kernels' end parameter: ``total`` for total-off, 0 for all-off."""
        return int(self.total) if self.end == "total-off" else 0

    def describe_throw(self) -> str:
        if self.throw_kind == "coins":
            return f"{self.throw_count} coins (the number of heads, 0..{self.throw_count})"
        return f"a {self.throw_count}-sided die (1..{self.throw_count})"

    def describe_end(self) -> str:
        if self.end == "all-off":
            return "the first to take all pieces off the board wins"
        return (f"the game ends when {self.total} pieces in all are off (or a side has all its pieces off); "
                "who took off more wins")


def _throws(kind: str, count: int) -> tuple[tuple[int, Fraction], ...]:
    if kind == "coins":
        return tuple((k, Fraction(comb(count, k), 2**count)) for k in range(count + 1))
    return tuple((k, Fraction(1, count)) for k in range(1, count + 1))


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


def _throw(source: str, raw: dict[str, Any], chosen: Mapping[str, Any]) -> tuple[str, int]:
    """(kind, coins or faces) of the ``[throw]`` table, with the ``throw`` option in force."""
    throw = raw.get("throw", {"kind": "coins", "count": 4})
    check_keys(source, "throw", throw, _THROW_KEYS)
    kind = str_value(source, "throw.kind", throw.get("kind", "coins"))
    _choose(source, kind, _CHOICES["throw"], "throw.kind")
    own, other = ("count", "faces") if kind == "coins" else ("faces", "count")
    if other in throw:
        raise RulesError(f"a throw of kind {kind!r} has '{own}', not '{other}'", source=source,
                         key=f"throw.{other}")
    if kind == "coins":
        count = int_value(source, "throw.count", throw.get("count", 4), lo=1, hi=_MAX_COINS)
    else:
        count = int_value(source, "throw.faces", throw.get("faces", 4), lo=1, hi=_MAX_FACES)
    if "throw" in chosen and chosen["throw"] != kind:
        kind, count = chosen["throw"], 4
    return kind, count


def _rosettes(source: str, raw: dict[str, Any]) -> tuple[int, ...]:
    """The rosettes of the ``[board]`` table (whose path and shared lane must be the classic ones)."""
    board = raw.get("board", {})
    check_keys(source, "board", board, _BOARD_KEYS)
    plen = int_value(source, "board.path_length", board.get("path_length", PATH_LENGTH))
    if plen != PATH_LENGTH:
        raise RulesError(f"only a path of {PATH_LENGTH} squares is supported, got {plen}", source=source,
                         key="board.path_length")
    shared = board.get("shared", list(SHARED))
    if not isinstance(shared, list) or len(shared) != 2 or tuple(shared) != SHARED:
        raise RulesError(f"only the shared lane {list(SHARED)} is supported, got {shared!r}", source=source,
                         key="board.shared")
    ros_raw = board.get("rosettes", [4, 8, 14])
    if not isinstance(ros_raw, list):
        raise RulesError("must be a list of path squares", source=source, key="board.rosettes")
    rosettes = [int_value(source, f"board.rosettes[{i}]", s, lo=1, hi=PATH_LENGTH) for i, s in enumerate(ros_raw)]
    if len(set(rosettes)) != len(rosettes):
        raise RulesError("a square is listed twice", source=source, key="board.rosettes")
    return tuple(sorted(rosettes))


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
    kind, count = _throw(source, raw, chosen)
    rosettes = _rosettes(source, raw)
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
        throws=_throws(kind, count),
        rosettes=rosettes,
        end=end,
        total=total,
        options=MappingProxyType(values),
        option_docs=MappingProxyType({k: d for k, (_, d) in UR_OPTIONS.items()}),
        option_choices=MappingProxyType({**_CHOICES, "pieces": tuple(range(1, MAX_PIECES + 1))}),
    )
