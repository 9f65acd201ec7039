"""Rules of the goose family: a board, its dice, its square effects and options.

This module is the only place that reads a goose rule file and the only place
that reports bad rule input. A rule file is TOML (the documentation's page on the rules describes it):

* ``[game]``: name, title, tradition, summary, ``goal`` (the last square, G) and the
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
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..core import rulefile as rf
from ..core.dice import Dice
from ..core.errors import RulesError
from .board import compile_board
from .ruleset import ENGINE_CHOICES, ENGINE_OPTIONS, GooseRules, OptionSpec, Square

__all__ = ["ENGINE_OPTIONS", "GooseRules", "OptionSpec", "Square", "build_goose", "load_goose", "special_squares"]

_TOP_KEYS = {"game", "dice", "rules", "first_throw", "squares", "options"}
_GAME_KEYS = rf.GAME_TEXT_KEYS | {"goal", "players"}
_DICE_KEYS = {"count", "faces", "from_square"}
_DICE_CHANGE_KEYS = {"square", "count", "faces"}
_SQUARE_KEYS = {"name", "jump", "goose", "again", "miss", "wait", "stake"}
_OPTION_KEYS = {"default", "doc", "patch"}


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

    Examples
    --------
    >>> r = load_goose("jeu-de-l-oie", {"waiting": "turns:2"})
    >>> r.waiting_turns
    2
    """
    source, path = rf.resolve_source(rules)
    raw = rf.read_toml(source, path)
    return build_goose(raw, source, options or {})


def build_goose(raw: dict[str, Any], source: str, options: Mapping[str, Any]) -> GooseRules:
    """Validate a parsed rule file with ``options`` in force: the rule set's own options patch it first, then
    the engine options, board, dice, first-throw table and squares are read.

    Parameters
    ----------
    raw:
        The parsed TOML.
    source:
        Where it came from, for the errors.
    options:
        Option values to put in force, by name.
    """
    game = rf.game_table(source, raw, _TOP_KEYS, _GAME_KEYS, "goose")
    declared = _declared_options(source, raw)
    rf.check_keys(source, "rules", raw.get("rules", {}), set(ENGINE_OPTIONS))
    chosen = rf.parse_options(source, options, {**{k: v[0] for k, v in ENGINE_OPTIONS.items()},
                                             **{k: spec.default for k, spec in declared.items()}})
    raw, own_values = _patched(source, raw, declared, chosen)
    engine = _engine_options(source, raw.get("rules", {}), chosen)
    waiting = engine["waiting"]
    goal = rf.int_value(source, "game.goal", game.get("goal", 63), lo=1, hi=10_000)
    players = rf.int_value(source, "game.players", game.get("players", 2), lo=1, hi=8)
    texts = rf.game_texts(source, game)
    dice, changes = _dice(source, raw, goal)
    rules = GooseRules(
        **texts,
        source=source,
        goal=goal,
        default_players=players,
        dice=dice,
        dice_from=tuple(changes),
        first_throw=tuple(_first_throw(source, raw, goal, dice)),
        squares=MappingProxyType(dict(sorted(_squares(source, raw, goal, waiting).items()))),
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
            **{k: v for k, v in ENGINE_CHOICES.items()},
            **{k: tuple(sorted({_option_keystr_value(s.default), *s.patches})) for k, s in declared.items()},
        }),
    )
    # Compiling the board finds loops of effects; do it now so a bad file fails at load time.
    compile_board(rules)
    return rules


def _declared_options(source: str, raw: dict[str, Any]) -> dict[str, OptionSpec]:
    """The rule set's own options (``[options.NAME]``) and their patches."""
    declared: dict[str, OptionSpec] = {}
    opts_raw = raw.get("options", {})
    if not isinstance(opts_raw, dict):
        raise RulesError("must be a table", source=source, key="options")
    for name, spec in opts_raw.items():
        where = f"options.{name}"
        rf.check_keys(source, where, spec, _OPTION_KEYS)
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
        declared[name] = OptionSpec(name, default, rf.str_value(source, f"{where}.doc", spec.get("doc", "")), patches)
    return declared


def _patched(source: str, raw: dict[str, Any], declared: dict[str, OptionSpec],
             chosen: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of ``raw`` with the patches of the own options' values in force, and those values."""
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
    rf.check_keys(source, "rules", raw.get("rules", {}), set(ENGINE_OPTIONS))
    return raw, own_values


def _engine_options(source: str, rules_table: dict[str, Any], chosen: dict[str, Any]) -> dict[str, Any]:
    """The engine options in force: chosen, else the file's ``[rules]``, else the default; checked, ``waiting``
    spelled out and ``exact_finish`` made the overshoot rule's yes/no."""
    engine: dict[str, Any] = {}
    for key, (default, _doc) in ENGINE_OPTIONS.items():
        if key in chosen:
            engine[key] = chosen[key]
        elif key in rules_table:
            engine[key] = rules_table[key]
            if isinstance(default, bool):
                rf.bool_value(source, f"rules.{key}", engine[key])
            else:
                rf.str_value(source, f"rules.{key}", engine[key])
        else:
            engine[key] = default
    for key, choices in ENGINE_CHOICES.items():
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
    return engine


def _dice(source: str, raw: dict[str, Any], goal: int) -> tuple[Dice, list[tuple[int, Dice]]]:
    """The dice, and the changes of dice from a square on (ascending)."""
    dice_raw = raw.get("dice", {"count": 2, "faces": 6})
    rf.check_keys(source, "dice", dice_raw, _DICE_KEYS)
    dice = Dice(
        rf.int_value(source, "dice.count", dice_raw.get("count", 2), lo=1, hi=6),
        rf.int_value(source, "dice.faces", dice_raw.get("faces", 6), lo=1, hi=100),
    )
    changes = []
    from_sq = dice_raw.get("from_square", [])
    if not isinstance(from_sq, list):
        raise RulesError("must be a list of {square, count, faces} tables", source=source, key="dice.from_square")
    for i, ch in enumerate(from_sq):
        where = f"dice.from_square[{i}]"
        rf.check_keys(source, where, ch, _DICE_CHANGE_KEYS)
        sq = rf.int_value(source, f"{where}.square", ch.get("square"), lo=1, hi=goal - 1)
        d = Dice(rf.int_value(source, f"{where}.count", ch.get("count", dice.count), lo=1, hi=6),
                 rf.int_value(source, f"{where}.faces", ch.get("faces", dice.faces), lo=1, hi=100))
        changes.append((sq, d))
    changes.sort()
    return dice, changes


def _first_throw(source: str, raw: dict[str, Any], goal: int, dice: Dice) -> list[tuple[tuple[int, ...], int]]:
    """The first-throw table: faces (high to low) thrown from square 0, and the square each goes to."""
    first = []
    ft_raw = raw.get("first_throw", {})
    if not isinstance(ft_raw, dict):
        raise RulesError("must be a table of \"a+b\" = square", source=source, key="first_throw")
    for combo_s, target in ft_raw.items():
        where = f"first_throw.{combo_s!r}"
        try:
            faces = tuple(sorted((int(x) for x in combo_s.split("+")), reverse=True))
        except ValueError:
            raise RulesError("a throw is written as faces joined by '+', like \"6+3\"", source=source,
                             key=where) from None
        if len(faces) != dice.count or any(not 1 <= f <= dice.faces for f in faces):
            raise RulesError(f"not a throw of the dice thrown from square 0 ({dice.describe()})",
                             source=source, key=where)
        first.append((faces, rf.int_value(source, where, target, lo=0, hi=goal)))
    return first


def _squares(source: str, raw: dict[str, Any], goal: int, waiting: str) -> dict[int, Square]:
    """Every square's effect, checked (with ``waiting = "turns:K"`` a waiting square misses K turns instead)."""
    squares: dict[int, Square] = {}
    for where, s, eff in rf.square_entries(source, raw):
        if not 1 <= s <= goal - 1:
            raise RulesError(f"square {s} is off the board (1..{goal - 1} may have effects)", source=source, key=where)
        rf.check_keys(source, where, eff, _SQUARE_KEYS)
        sq = _square(source, where, s, eff, goal)
        if waiting != "until-replaced" and sq.wait:
            sq = Square(sq.name, None, None, False, int(waiting.split(":")[1]), False, sq.stake)
        squares[s] = sq
    return squares


def _square(source: str, where: str, s: int, eff: dict[str, Any], goal: int) -> Square:
    """The effect of square ``s`` as its entry ``eff`` gives it, checked."""
    jump = eff.get("jump")
    if jump is not None:
        jump = rf.int_value(source, f"{where}.jump", jump)
        if not 0 <= jump <= goal:
            raise RulesError(f"jump to {jump} is off the board (0..{goal})", source=source, key=f"{where}.jump")
        if jump == s:
            raise RulesError("a square cannot jump to itself", source=source, key=f"{where}.jump")
    goose = eff.get("goose")
    if goose is not None and goose not in ("repeat", "next"):
        raise RulesError(f"{goose!r} is not repeat or next", source=source, key=f"{where}.goose")
    sq = Square(
        name=rf.str_value(source, f"{where}.name", eff.get("name", "")),
        jump=jump,
        goose=goose,
        again=rf.bool_value(source, f"{where}.again", eff.get("again", False)),
        miss=rf.int_value(source, f"{where}.miss", eff.get("miss", 0), lo=0, hi=20),
        wait=rf.bool_value(source, f"{where}.wait", eff.get("wait", False)),
        stake=rf.int_value(source, f"{where}.stake", eff.get("stake", 0), lo=0, hi=1000),
    )
    if sq.goose and sq.jump is not None:
        raise RulesError("a square is a goose or a jump, not both", source=source, key=where)
    if sq.wait and (sq.goose or sq.jump is not None):
        raise RulesError("a waiting square cannot also move the piece", source=source, key=where)
    if sq.wait and sq.miss:
        raise RulesError("a waiting square cannot also have turns to miss", source=source, key=where)
    if sq.again and (sq.miss or sq.wait):
        raise RulesError("a square cannot give another throw and also hold the piece", source=source, key=where)
    return sq


def special_squares(rules: GooseRules) -> list[int]:
    """The squares a result reports as special: every square with an effect, the first throw's targets, the goal.

    Parameters
    ----------
    rules:
        A loaded goose rule set.
    """
    return sorted(set(rules.squares) | {t for _, t in rules.first_throw} | {rules.goal})
