"""Rules of the Italian goose game played for points (see ``docs/punti.md``) as validated data.

A points board is TOML (see ``docs/punti.md``):

* ``[game]``: ``name``, ``family = "punti"``, ``title``, ``tradition``, ``summary``,
  ``goal`` (the end square, 37) and the default number of ``players``;
* ``[dice]``: ``faces`` of the one die;
* ``[economy]``: the rule text's fixed economy, every key also an option: ``dowry``
  (200), ``entry_tax`` (50, to the bank), ``head_fee`` (5 from each player) and
  ``head_fee_to`` (``seat-1``: the head of the game, who throws first; or
  ``bank``), ``bank_fund`` (the bank's own capital besides the taxes it
  collects), ``bet_cost`` (10) and ``bet_prize`` (50) of a Pulcinella bet,
  ``aid`` (10 from each other player), ``aid_throws`` (2) and ``aid_uses``
  (1: once per player; 0: no mutual aid);
* ``[rules]``: ``overshoot`` (``bounce`` back by the excess past the end square,
  or ``finish``);
* ``[squares]``: per square at most one money effect (``pay_bank``,
  ``collect_bank``, ``collect_each``: from every other player, ``pay_each``: to
  every other player) and ``pulcinella`` (1 or 2 bets at the next turn), and a
  ``name``;
* ``[postcards]``: the squares of the deck, the ``jolly`` cards and how many each
  player is dealt (used only by the simulator, :mod:`markov_oca.punti.simulate`).

The loader is the only place that reports bad input: one line naming the file
and the key (:class:`~markov_oca.errors.RulesError`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..core import rulefile as rf
from ..core.errors import RulesError

__all__ = ["PUNTI_OPTIONS", "PuntiRules", "PuntiSquare", "build_punti", "load_punti"]

#: Options every points board accepts: (default, doc). The file's [economy] and [rules] give its own defaults.
PUNTI_OPTIONS: dict[str, tuple[Any, str]] = {
    "dowry": (200, "points each player is given (the most a player can lose)"),
    "entry_tax": (50, "paid by each player to the bank to enter square 1"),
    "head_fee": (5, "paid by each player to the head of the game"),
    "head_fee_to": ("seat-1", "who receives the head-of-game fee: seat-1 (the head of the game throws first) or bank"),
    "bank_fund": (200, "the bank's own capital before the taxes (it pays out at most what it holds)"),
    "bet_cost": (10, "a Pulcinella bet: points staked, paid to the bank"),
    "bet_prize": (50, "a Pulcinella bet: points the bank pays for a right call"),
    "aid": (10, "mutual aid: points each other player gives (or all they hold, if less)"),
    "aid_throws": (2, "mutual aid: throws to hit the declared number"),
    "aid_uses": (1, "mutual aid: how many times a player may ask for it (0 or 1)"),
    "overshoot": ("bounce", "a throw past the end square: bounce back by the excess, or finish"),
    "faces": (6, "faces of the die"),
}
_CHOICES: dict[str, tuple[Any, ...]] = {
    "head_fee_to": ("seat-1", "bank"),
    "overshoot": ("bounce", "finish"),
    "aid_uses": (0, 1),
}
_ECONOMY_KEYS = set(PUNTI_OPTIONS) - {"overshoot", "faces"}
_TOP_KEYS = {"game", "dice", "economy", "rules", "squares", "postcards"}
_GAME_KEYS = rf.GAME_TEXT_KEYS | {"goal", "players"}
_DICE_KEYS = {"faces"}
_RULES_KEYS = {"overshoot"}
_MONEY = ("pay_bank", "collect_bank", "collect_each", "pay_each")
_SQUARE_KEYS = {"name", "pulcinella", *_MONEY}
_POSTCARD_KEYS = {"deck", "jolly", "per_player"}
MAX_PLAYERS = 6
MAX_AMOUNT = 10_000

#: Money effect kinds as the kernels number them.
NONE, PAY_BANK, COLLECT_BANK, COLLECT_EACH, PAY_EACH = 0, 1, 2, 3, 4
KIND_CODE = {"pay_bank": PAY_BANK, "collect_bank": COLLECT_BANK, "collect_each": COLLECT_EACH,
             "pay_each": PAY_EACH}


@dataclass(frozen=True)
class PuntiSquare:
    """The effect of one square: at most one money effect, and Pulcinellas."""

    name: str = ""
    kind: str = ""  # "", "pay_bank", "collect_bank", "collect_each", "pay_each"
    amount: int = 0
    pulcinella: int = 0  # bets the player may make at the next turn

    @property
    def code(self) -> int:
        return KIND_CODE.get(self.kind, NONE)

    def describe(self) -> str:
        parts = []
        if self.kind == "pay_bank":
            parts.append(f"pay {self.amount} to the bank")
        elif self.kind == "collect_bank":
            parts.append(f"collect {self.amount} from the bank")
        elif self.kind == "collect_each":
            parts.append(f"collect {self.amount} from every other player")
        elif self.kind == "pay_each":
            parts.append(f"pay {self.amount} to every other player")
        if self.pulcinella:
            parts.append(f"{self.pulcinella} Pulcinella bet{'s' if self.pulcinella > 1 else ''} at the next turn")
        return ", ".join(parts) if parts else "no effect"

    @property
    def sign(self) -> int:
        """+1 a square that gains its lander points, -1 one that costs, 0 neither (postcards)."""
        if self.kind in ("collect_bank", "collect_each"):
            return 1
        if self.kind in ("pay_bank", "pay_each"):
            return -1
        return 0


@dataclass(frozen=True)
class PuntiRules:
    """A validated points board with its economy and options in force."""

    name: str
    title: str
    seed: str
    summary: str
    source: str
    goal: int
    default_players: int
    faces: int
    squares: Mapping[int, PuntiSquare]
    dowry: int
    entry_tax: int
    head_fee: int
    head_fee_to: str
    bank_fund: int
    bet_cost: int
    bet_prize: int
    aid: int
    aid_throws: int
    aid_uses: int
    overshoot: str
    deck: tuple[int, ...] = ()  # postcards: the squares whose card is in the deck
    jolly: tuple[int, ...] = ()  # postcards that cancel any play
    cards_per_player: int = 3
    options: Mapping[str, Any] = field(default_factory=dict)
    option_docs: Mapping[str, str] = field(default_factory=dict)
    option_choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    family = "punti"

    def square(self, s: int) -> PuntiSquare:
        return self.squares.get(s, PuntiSquare())

    def initial_balances(self, players: int) -> list[int]:
        """Each seat's points after the dowry, the entry tax and the head-of-game fee."""
        base = self.dowry - self.entry_tax - self.head_fee
        out = [base] * players
        if self.head_fee_to == "seat-1":
            out[0] = base + self.head_fee * players  # the head pays nobody and collects from all
        return out

    def initial_bank(self, players: int) -> int:
        """The bank's points at the start: its capital, the entry taxes and (maybe) the fees."""
        bank = self.bank_fund + self.entry_tax * players
        if self.head_fee_to == "bank":
            bank += self.head_fee * players
        return bank

    def total_points(self, players: int) -> int:
        """Points in play, constant through the game: every balance plus the bank."""
        return sum(self.initial_balances(players)) + self.initial_bank(players)

    def unit(self, players: int) -> int:
        """The step of every balance: the gcd of every amount and starting balance."""
        amounts = [sq.amount for sq in self.squares.values() if sq.kind]
        amounts += [self.bet_cost, self.bet_prize, self.aid, *self.initial_balances(players),
                    self.initial_bank(players)]
        if self.head_fee_to == "seat-1":
            amounts.append(self.head_fee)
        g = 0
        for a in amounts:
            g = math.gcd(g, a)
        return max(g, 1)

    @property
    def aid_chance(self) -> tuple[int, int]:
        """(numerator, denominator) of hitting a declared number in ``aid_throws`` throws."""
        den = self.faces**self.aid_throws
        return den - (self.faces - 1) ** self.aid_throws, den


def load_punti(rules: str | Path, options: Mapping[str, Any] | None = None) -> PuntiRules:
    """Load and validate a points board.

    Parameters
    ----------
    rules : str or Path
        A shipped name such as ``"gioco-oca-punti"`` or a path to a TOML file.
    options : Mapping, optional
        Values of :data:`PUNTI_OPTIONS` to put in force; strings are converted.

    Examples
    --------
    >>> r = load_punti("gioco-oca-punti", {"bet_prize": "60"})
    >>> r.goal, r.bet_prize, r.initial_balances(2)
    (37, 60, [155, 145])
    """
    source, path = rf.resolve_source(rules)
    raw = rf.read_toml(source, path)
    return build_punti(raw, source, options or {})


def _amount(source: str, key: str, value: Any) -> int:
    return rf.int_value(source, key, value, lo=0, hi=MAX_AMOUNT)


def build_punti(raw: dict[str, Any], source: str, options: Mapping[str, Any]) -> PuntiRules:
    """Validate a parsed points board with options in force.

    Parameters
    ----------
    raw : dict
        The parsed TOML file.
    source : str
        The file's name or path, for the messages.
    options : Mapping
        Values of :data:`PUNTI_OPTIONS` to put in force; strings are converted.
    """
    game = rf.game_table(source, raw, _TOP_KEYS, _GAME_KEYS, "punti")
    chosen = rf.parse_options(source, options, {k: v[0] for k, v in PUNTI_OPTIONS.items()})
    texts = rf.game_texts(source, game)
    goal = rf.int_value(source, "game.goal", game.get("goal", 37), lo=2, hi=200)
    players = rf.int_value(source, "game.players", game.get("players", 2), lo=2, hi=MAX_PLAYERS)
    values = _economy(source, raw, chosen)
    faces = values["faces"]
    if goal < faces:
        raise RulesError(f"the end square must be at least the die's faces ({faces}), so a bounce stays on the "
                         "board", source=source, key="game.goal")
    squares = _squares(source, raw, goal)
    deck, jolly, per_player = _postcards(source, raw, goal)
    return PuntiRules(
        **texts,
        source=source,
        goal=goal,
        default_players=players,
        faces=faces,
        squares=MappingProxyType(dict(sorted(squares.items()))),
        deck=tuple(deck),
        jolly=tuple(jolly),
        cards_per_player=per_player,
        options=MappingProxyType(dict(values)),
        option_docs=MappingProxyType({k: d for k, (_, d) in PUNTI_OPTIONS.items()}),
        option_choices=MappingProxyType(dict(_CHOICES)),
        **{k: v for k, v in values.items() if k != "faces"},
    )


def _economy(source: str, raw: dict[str, Any], chosen: Mapping[str, Any]) -> dict[str, Any]:
    """Every option's value in force: the one chosen, else the file's ([dice], [rules], [economy]), else
    the default; checked one by one and together."""
    dice = raw.get("dice", {})
    rf.check_keys(source, "dice", dice, _DICE_KEYS)
    economy = raw.get("economy", {})
    rf.check_keys(source, "economy", economy, _ECONOMY_KEYS)
    rules_t = raw.get("rules", {})
    rf.check_keys(source, "rules", rules_t, _RULES_KEYS)
    values: dict[str, Any] = {}
    for key, (default, _doc) in PUNTI_OPTIONS.items():
        if key in chosen:
            where, value = f"option {key}", chosen[key]
        elif key == "faces":
            where, value = "dice.faces", dice.get("faces", default)
        elif key == "overshoot":
            where, value = "rules.overshoot", rules_t.get("overshoot", default)
        else:
            where, value = f"economy.{key}", economy.get(key, default)
        if isinstance(default, str):
            value = rf.str_value(source, where, value)
        elif key == "faces":
            value = rf.int_value(source, where, value, lo=2, hi=20)
        elif key == "aid_throws":
            value = rf.int_value(source, where, value, lo=1, hi=4)
        else:
            value = _amount(source, where, value)
        if key in _CHOICES and value not in _CHOICES[key]:
            raise RulesError(f"{value!r} is not one of {', '.join(map(str, _CHOICES[key]))}", source=source,
                             key=where)
        values[key] = value
    if values["dowry"] < values["entry_tax"] + values["head_fee"]:
        where = "option dowry" if "dowry" in chosen else "economy.dowry"
        raise RulesError(f"the dowry ({values['dowry']}) must cover the entry tax and the head-of-game fee "
                         f"({values['entry_tax'] + values['head_fee']})", source=source, key=where)
    if values["bet_cost"] == 0:
        where = "option bet_cost" if "bet_cost" in chosen else "economy.bet_cost"
        raise RulesError("a bet costs at least 1 point", source=source, key=where)
    return values


def _squares(source: str, raw: dict[str, Any], goal: int) -> dict[int, PuntiSquare]:
    """The [squares] table: per square at most one money effect, Pulcinellas and a name."""
    squares: dict[int, PuntiSquare] = {}
    for where, s, eff in rf.square_entries(source, raw):
        if s == 1:
            raise RulesError("square 1 is the start: no throw ever lands there, so it has no effect",
                             source=source, key=where)
        if not 2 <= s <= goal:
            raise RulesError(f"square {s} is off the board (2..{goal} may have effects)", source=source, key=where)
        rf.check_keys(source, where, eff, _SQUARE_KEYS)
        money = [k for k in _MONEY if k in eff]
        if len(money) > 1:
            raise RulesError(f"a square has one money effect, not {' and '.join(money)}", source=source, key=where)
        kind = money[0] if money else ""
        amount = _amount(source, f"{where}.{kind}", eff[kind]) if kind else 0
        if kind and amount == 0:
            raise RulesError("an amount of 0 is no effect; leave the key out", source=source, key=f"{where}.{kind}")
        pulc = rf.int_value(source, f"{where}.pulcinella", eff.get("pulcinella", 0), lo=0, hi=2)
        if pulc and s == goal:
            raise RulesError("the end square cannot hold a Pulcinella: nobody throws from it", source=source,
                             key=f"{where}.pulcinella")
        squares[s] = PuntiSquare(rf.str_value(source, f"{where}.name", eff.get("name", "")), kind, amount, pulc)
    return squares


def _postcards(source: str, raw: dict[str, Any], goal: int) -> tuple[list[int], list[int], int]:
    """The [postcards] table: (deck, jolly cards, cards dealt to each player)."""
    cards = raw.get("postcards", {})
    rf.check_keys(source, "postcards", cards, _POSTCARD_KEYS)
    deck = _square_list(source, "postcards.deck", cards.get("deck", []), goal)
    jolly = _square_list(source, "postcards.jolly", cards.get("jolly", []), goal)
    for i, s in enumerate(jolly):
        if s not in deck:
            raise RulesError(f"jolly {s} is not a card of the deck", source=source, key=f"postcards.jolly[{i}]")
    per_player = rf.int_value(source, "postcards.per_player", cards.get("per_player", 3), lo=0, hi=10)
    return deck, jolly, per_player


def _square_list(source: str, key: str, value: Any, goal: int) -> list[int]:
    if not isinstance(value, list):
        raise RulesError("must be a list of squares", source=source, key=key)
    out = [rf.int_value(source, f"{key}[{i}]", s, lo=1, hi=goal) for i, s in enumerate(value)]
    if len(set(out)) != len(out):
        raise RulesError("a square is listed twice", source=source, key=key)
    return out
