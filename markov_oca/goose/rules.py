"""Rules of the goose family: a board, its dice, its square effects and options.

This module is the only place that reads a goose rule file and the only place
that reports bad rule input. A rule file is TOML (see ``docs/rules.md``):

* ``[game]``: name, title, seed, summary, ``goal`` (the last square, G) and the
  default number of ``players``;
* ``[dice]``: ``count`` and ``faces``, and ``from_square`` changes of dice;
* ``[rules]``: the engine options in force (``until``, ``overshoot``,
  ``occupancy``, ``waiting``, ``goose_after_bounce``, ``first_throw_effect``);
* ``[first_throw]``: from square 0, a throw such as ``"6+3"`` goes to a square;
* ``[squares]``: the effect of each special square;
* ``[options.NAME]``: options of this rule set, each a ``default``, a ``doc`` and
  a ``patch`` per value that replaces parts of the file when that value is chosen.

Every engine option can be set on every rule set; the rule set's own options
come from its file.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..core.dice import Dice
from ..core.errors import RulesError
from ..core.rulefile import (
    bool_value,
    check_keys,
    game_table,
    game_texts,
    int_value,
    parse_options,
    read_toml,
    resolve_source,
    square_entries,
    str_value,
)

#: The engine options every goose rule set accepts, with their choices.
ENGINE_OPTIONS: dict[str, tuple[Any, str]] = {
    "until": ("first", "first: the first to finish wins and the game stops; last: the others play on for the places"),
    "overshoot": ("bounce", "a throw past the goal: bounce back by the excess, stay where it was, or finish"),
    "exact_finish": (True, "false: reaching or passing the goal finishes (the same as overshoot = finish)"),
    "occupancy": ("none", "a piece that comes to rest on another: none, occupant-returns (to the mover's origin), "
                          "mover-returns"),
    "waiting": ("until-replaced", "well and prison: until-replaced, or turns:K (miss K turns instead)"),
    "goose_after_bounce": ("forward", "a goose reached by bouncing back repeats the throw forward, or backward"),
    "first_throw_effect": (False, "whether the square reached by the first-throw rule applies its effect"),
    "bumped_keeps_turns": (False, "a piece sent back by occupancy keeps the turns it still had to miss "
                                  "(it always loses its waiting status)"),
}
_CHOICES = {
    "until": ("first", "last"),
    "overshoot": ("bounce", "stay", "finish"),
    "occupancy": ("none", "occupant-returns", "mover-returns"),
    "goose_after_bounce": ("forward", "backward"),
}
_TOP_KEYS = {"game", "dice", "rules", "first_throw", "squares", "options"}
_GAME_KEYS = {"name", "family", "title", "seed", "summary", "goal", "players"}
_DICE_KEYS = {"count", "faces", "from_square"}
_DICE_CHANGE_KEYS = {"square", "count", "faces"}
_SQUARE_KEYS = {"name", "jump", "goose", "again", "miss", "wait", "stake"}
_OPTION_KEYS = {"default", "doc", "patch"}


@dataclass(frozen=True)
class Square:
    """The effect of one square. Plain squares have no effect."""

    name: str = ""
    jump: int | None = None  # go to that square and apply its effect
    goose: str | None = None  # "repeat": move on by the same total; "next": go to the next goose
    again: bool = False  # throw again in the same turn
    miss: int = 0  # turns to miss
    wait: bool = False  # stuck until another piece comes to rest here
    stake: int = 0  # stakes paid into the pot

    @property
    def is_special(self) -> bool:
        return bool(self.jump is not None or self.goose or self.again or self.miss or self.wait or self.stake)

    def describe(self) -> str:
        parts = []
        if self.goose == "repeat":
            parts.append("move on again by the same total")
        elif self.goose == "next":
            parts.append("jump to the next goose")
        if self.jump is not None:
            parts.append(f"go to {self.jump}")
        if self.miss:
            parts.append(f"miss {self.miss} turn{'s' if self.miss > 1 else ''}")
        if self.wait:
            parts.append("wait until another piece comes to rest here")
        if self.again:
            parts.append("throw again")
        if self.stake:
            parts.append(f"pay {self.stake}")
        return ", ".join(parts) if parts else "no effect"


@dataclass(frozen=True)
class OptionSpec:
    """An option declared by a rule file: its default, its doc and its patches."""

    name: str
    default: Any
    doc: str
    patches: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class GooseRules:
    """A validated goose-family rule set with its options in force."""

    name: str
    title: str
    seed: str
    summary: str
    source: str
    goal: int
    default_players: int
    dice: Dice
    dice_from: tuple[tuple[int, Dice], ...]  # (first square, dice) changes, ascending
    first_throw: tuple[tuple[tuple[int, ...], int], ...]  # (faces high-to-low, target)
    squares: Mapping[int, Square]
    until: str
    overshoot: str
    occupancy: str
    waiting: str  # "until-replaced" or "turns:K"
    goose_after_bounce: str
    first_throw_effect: bool
    options: Mapping[str, Any]  # every option in force, engine and rule set's own
    option_docs: Mapping[str, str] = field(default_factory=dict)
    option_choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    family = "goose"

    def dice_at(self, square: int) -> Dice:
        """The dice thrown from ``square``."""
        dice = self.dice
        for first, d in self.dice_from:
            if square >= first:
                dice = d
        return dice

    def square(self, s: int) -> Square:
        return self.squares.get(s, Square())

    @property
    def waiting_turns(self) -> int | None:
        """K when waiting squares make a piece miss K turns, None when it waits to be replaced."""
        if self.waiting.startswith("turns:"):
            return int(self.waiting.split(":", 1)[1])
        return None

    def goose_squares(self) -> list[int]:
        return sorted(s for s, sq in self.squares.items() if sq.goose)


# ----------------------------------------------------------------------------- loading


def _apply_patch(raw: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """Squares are replaced one by one; every other top-level key is replaced whole."""
    for key, value in patch.items():
        if key == "squares":
            raw.setdefault("squares", {})
            for sq, effect in value.items():
                raw["squares"][sq] = copy.deepcopy(effect)
        else:
            raw[key] = copy.deepcopy(value)


def _option_keystr_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def load_goose(rules: str | Path, options: Mapping[str, Any] | None = None) -> GooseRules:
    """Load, patch and validate a goose rule set.

    Parameters
    ----------
    rules:
        A shipped name such as ``"oca-moderna"`` or a path to a TOML file.
    options:
        Option values to put in force, by name; strings are converted to the
        option's type (``"false"``, ``"2"``, ``"turns:3"``).

    Example
    -------
    >>> r = load_goose("jeu-de-l-oie", {"waiting": "turns:2"})
    >>> r.waiting_turns
    2
    """
    source, path = resolve_source(rules)
    raw = read_toml(source, path)
    return build_goose(raw, source, options or {})


def build_goose(raw: dict[str, Any], source: str, options: Mapping[str, Any]) -> GooseRules:
    game = game_table(source, raw, _TOP_KEYS, _GAME_KEYS, "goose")

    # The rule set's own options and their patches.
    declared: dict[str, OptionSpec] = {}
    opts_raw = raw.get("options", {})
    if not isinstance(opts_raw, dict):
        raise RulesError("must be a table", source=source, key="options")
    for name, spec in opts_raw.items():
        where = f"options.{name}"
        check_keys(source, where, spec, _OPTION_KEYS)
        if name in ENGINE_OPTIONS:
            raise RulesError("an engine option cannot be redeclared; set it in [rules]", source=source, key=where)
        if "default" not in spec:
            raise RulesError("missing 'default'", source=source, key=f"{where}.default")
        default = spec["default"]
        if not isinstance(default, (bool, int, str)):
            raise RulesError("a default must be a boolean, a whole number or a string", source=source,
                             key=f"{where}.default")
        patches = spec.get("patch", {})
        if not isinstance(patches, dict) or any(not isinstance(p, dict) for p in patches.values()):
            raise RulesError("must be a table of tables, one per value", source=source, key=f"{where}.patch")
        for val, patch in patches.items():
            for k in patch:
                if k not in _TOP_KEYS - {"options", "game"}:
                    raise RulesError(f"a patch may replace dice, rules, first_throw or squares, not '{k}'",
                                     source=source, key=f"{where}.patch.{val}.{k}")
        declared[name] = OptionSpec(name, default, str_value(source, f"{where}.doc", spec.get("doc", "")), patches)

    # Which option values are asked for.
    rules_table = raw.get("rules", {})
    check_keys(source, "rules", rules_table, set(ENGINE_OPTIONS))
    chosen = parse_options(source, options, {**{k: v[0] for k, v in ENGINE_OPTIONS.items()},
                                             **{k: spec.default for k, spec in declared.items()}})

    raw = copy.deepcopy(raw)
    own_values: dict[str, Any] = {}
    for name, spec in declared.items():
        value = chosen.get(name, spec.default)
        choices = {_option_keystr_value(spec.default)} | set(spec.patches)
        if isinstance(spec.default, bool):
            choices |= {"true", "false"}
        if _option_keystr_value(value) not in choices:
            raise RulesError(
                f"{value!r} is not a value of this option (choices: {', '.join(sorted(choices))})",
                source=source,
                key=f"option {name}",
            )
        own_values[name] = value
        patch = spec.patches.get(_option_keystr_value(value))
        if patch:
            _apply_patch(raw, patch)
    rules_table = raw.get("rules", {})
    check_keys(source, "rules", rules_table, set(ENGINE_OPTIONS))

    engine: dict[str, Any] = {}
    for key, (default, _doc) in ENGINE_OPTIONS.items():
        if key in chosen:
            engine[key] = chosen[key]
        elif key in rules_table:
            engine[key] = rules_table[key]
            like = default
            if isinstance(like, bool):
                bool_value(source, f"rules.{key}", engine[key])
            else:
                str_value(source, f"rules.{key}", engine[key])
        else:
            engine[key] = default
    for key, choices in _CHOICES.items():
        if engine[key] not in choices:
            where = f"option {key}" if key in chosen else f"rules.{key}"
            raise RulesError(f"{engine[key]!r} is not one of {', '.join(choices)}", source=source, key=where)
    waiting = engine["waiting"]
    if waiting == "turns":
        waiting = "turns:2"
    if waiting != "until-replaced":
        k = waiting.split(":", 1)[1] if waiting.startswith("turns:") else ""
        if not k.isdigit() or int(k) < 1:
            where = "option waiting" if "waiting" in chosen else "rules.waiting"
            raise RulesError(f"{waiting!r} is not until-replaced or turns:K with K >= 1", source=source, key=where)
    engine["waiting"] = waiting
    # exact_finish is the overshoot rule seen as a yes/no question.
    if "exact_finish" in chosen or "exact_finish" in rules_table:
        if not engine["exact_finish"]:
            engine["overshoot"] = "finish"
        elif engine["overshoot"] == "finish":
            engine["overshoot"] = "bounce"
    engine["exact_finish"] = engine["overshoot"] != "finish"

    # Board.
    goal = int_value(source, "game.goal", game.get("goal", 63), lo=1, hi=10_000)
    players = int_value(source, "game.players", game.get("players", 2), lo=1, hi=8)
    texts = game_texts(source, game)
    name = texts["name"]

    dice_raw = raw.get("dice", {"count": 2, "faces": 6})
    check_keys(source, "dice", dice_raw, _DICE_KEYS)
    dice = Dice(
        int_value(source, "dice.count", dice_raw.get("count", 2), lo=1, hi=6),
        int_value(source, "dice.faces", dice_raw.get("faces", 6), lo=1, hi=100),
    )
    changes = []
    from_sq = dice_raw.get("from_square", [])
    if not isinstance(from_sq, list):
        raise RulesError("must be a list of {square, count, faces} tables", source=source, key="dice.from_square")
    for i, ch in enumerate(from_sq):
        where = f"dice.from_square[{i}]"
        check_keys(source, where, ch, _DICE_CHANGE_KEYS)
        sq = int_value(source, f"{where}.square", ch.get("square"), lo=1, hi=goal - 1)
        d = Dice(int_value(source, f"{where}.count", ch.get("count", dice.count), lo=1, hi=6),
                 int_value(source, f"{where}.faces", ch.get("faces", dice.faces), lo=1, hi=100))
        changes.append((sq, d))
    changes.sort()

    first = []
    ft_raw = raw.get("first_throw", {})
    if not isinstance(ft_raw, dict):
        raise RulesError("must be a table of \"a+b\" = square", source=source, key="first_throw")
    start_dice = dice
    for combo_s, target in ft_raw.items():
        where = f"first_throw.{combo_s!r}"
        try:
            faces = tuple(sorted((int(x) for x in combo_s.split("+")), reverse=True))
        except ValueError:
            raise RulesError("a throw is written as faces joined by '+', like \"6+3\"", source=source,
                             key=where) from None
        if len(faces) != start_dice.count or any(not 1 <= f <= start_dice.faces for f in faces):
            raise RulesError(f"not a throw of the dice thrown from square 0 ({start_dice.describe()})",
                             source=source, key=where)
        first.append((faces, int_value(source, where, target, lo=0, hi=goal)))

    squares: dict[int, Square] = {}
    for where, s, eff in square_entries(source, raw):
        if not 1 <= s <= goal - 1:
            raise RulesError(f"square {s} is off the board (1..{goal - 1} may have effects)", source=source, key=where)
        check_keys(source, where, eff, _SQUARE_KEYS)
        jump = eff.get("jump")
        if jump is not None:
            jump = int_value(source, f"{where}.jump", jump)
            if not 0 <= jump <= goal:
                raise RulesError(f"jump to {jump} is off the board (0..{goal})", source=source, key=f"{where}.jump")
            if jump == s:
                raise RulesError("a square cannot jump to itself", source=source, key=f"{where}.jump")
        goose = eff.get("goose")
        if goose is not None and goose not in ("repeat", "next"):
            raise RulesError(f"{goose!r} is not repeat or next", source=source, key=f"{where}.goose")
        sq = Square(
            name=str_value(source, f"{where}.name", eff.get("name", "")),
            jump=jump,
            goose=goose,
            again=bool_value(source, f"{where}.again", eff.get("again", False)),
            miss=int_value(source, f"{where}.miss", eff.get("miss", 0), lo=0, hi=20),
            wait=bool_value(source, f"{where}.wait", eff.get("wait", False)),
            stake=int_value(source, f"{where}.stake", eff.get("stake", 0), lo=0, hi=1000),
        )
        if sq.goose and sq.jump is not None:
            raise RulesError("a square is a goose or a jump, not both", source=source, key=where)
        if sq.wait and (sq.goose or sq.jump is not None):
            raise RulesError("a waiting square cannot also move the piece", source=source, key=where)
        if sq.wait and sq.miss:
            raise RulesError("a waiting square cannot also have turns to miss", source=source, key=where)
        if sq.again and (sq.miss or sq.wait):
            raise RulesError("a square cannot give another throw and also hold the piece", source=source, key=where)
        if waiting != "until-replaced" and sq.wait:
            sq = Square(sq.name, None, None, False, int(waiting.split(":")[1]), False, sq.stake)
        squares[s] = sq

    rules = GooseRules(
        **texts,
        source=source,
        goal=goal,
        default_players=players,
        dice=dice,
        dice_from=tuple(changes),
        first_throw=tuple(first),
        squares=MappingProxyType(dict(sorted(squares.items()))),
        until=engine["until"],
        overshoot=engine["overshoot"],
        occupancy=engine["occupancy"],
        waiting=waiting,
        goose_after_bounce=engine["goose_after_bounce"],
        first_throw_effect=engine["first_throw_effect"],
        options=MappingProxyType({**engine, **own_values}),
        option_docs=MappingProxyType({**{k: d for k, (_, d) in ENGINE_OPTIONS.items()},
                                      **{k: s.doc for k, s in declared.items()}}),
        option_choices=MappingProxyType({
            **{k: v for k, v in _CHOICES.items()},
            **{k: tuple(sorted({_option_keystr_value(s.default), *s.patches})) for k, s in declared.items()},
        }),
    )
    # Compiling the board finds loops of effects; do it now so a bad file fails at load time.
    from .board import compile_board

    compile_board(rules)
    return rules


def special_squares(rules) -> list[int]:
    """The squares a result reports as special: every square with an effect, the first throw's targets, the goal."""
    return sorted(set(rules.squares) | {t for _, t in rules.first_throw} | {rules.goal})
