"""Dice and coin throws as exact distributions.

A throw of ``count`` dice with ``faces`` faces is described by its multisets of
faces (the order of the dice does not matter in any rule we model), each with an
exact probability. The goose engine groups them into *branches*: throws that the
rules cannot tell apart (same total, same first-throw target) share a branch.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Dice:
    """``count`` fair dice, each numbered 1..``faces``."""

    count: int
    faces: int

    def throws(self) -> list[tuple[tuple[int, ...], Fraction]]:
        """Every multiset of faces (sorted high to low) with its exact probability."""
        combos: Counter[tuple[int, ...]] = Counter()
        for roll in itertools.product(range(1, self.faces + 1), repeat=self.count):
            combos[tuple(sorted(roll, reverse=True))] += 1
        total = self.faces**self.count
        return [(combo, Fraction(n, total)) for combo, n in sorted(combos.items())]

    def totals(self) -> dict[int, Fraction]:
        """The distribution of the sum of the dice."""
        dist: dict[int, Fraction] = {}
        for combo, p in self.throws():
            dist[sum(combo)] = dist.get(sum(combo), Fraction(0)) + p
        return dict(sorted(dist.items()))

    @property
    def denominator(self) -> int:
        return self.faces**self.count

    def describe(self) -> str:
        return f"{self.count}d{self.faces}" if self.count > 1 else f"1d{self.faces}"
