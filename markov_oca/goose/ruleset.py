"""The goose rule set as data: its engine options, square effects and the validated :class:`GooseRules`.

Reading and checking a rule file is :mod:`~markov_oca.goose.rules`'s; the
board compiler (:mod:`~markov_oca.goose.board`) needs only these types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.dice import Dice

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
ENGINE_CHOICES: dict[str, tuple[str, ...]] = {
    "until": ("first", "last"),
    "overshoot": ("bounce", "stay", "finish"),
    "occupancy": ("none", "occupant-returns", "mover-returns"),
    "goose_after_bounce": ("forward", "backward"),
}


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


