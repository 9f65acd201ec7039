"""The board compiled: what one throw from each square does to the moving piece.

For every square a piece can throw from and every *branch* of the dice thrown
there (throws the rules cannot tell apart share a branch), this module follows
the rules once, in plain Python: first-throw rule, overshoot, then the chain of
square effects (geese, jumps, turns to miss, waiting, another throw, stakes).
The result is a table the joint kernel reads; nothing here depends on the other
players. A chain of effects that would loop is reported as a rule error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.errors import RulesError
from .ruleset import GooseRules


@dataclass(frozen=True)
class Throw:
    """What one branch of a throw from one square does to the moving piece."""

    probability: Fraction
    total: int
    faces: tuple[int, ...] | None  # the faces, when the first-throw rule picked them out
    final: int  # the square where the piece comes to rest
    moved: bool  # False when an overshoot left the piece where it was
    skip: int  # turns to miss from now on
    wait: bool  # stuck on a waiting square
    again: bool  # throws again in the same turn
    stake: int  # stakes paid on the way
    landings: tuple[int, ...]  # every square whose effect was applied, in order
    finished: bool


@dataclass(frozen=True)
class CompiledBoard:
    """Every throw from every square, as Python objects and as numpy tables."""

    rules: GooseRules
    throws: tuple[tuple[Throw, ...], ...]  # throws[square] for square 0..G-1
    denominator: int  # all branch probabilities are integers over this
    # Tables indexed [square, branch]; branch count J is the widest square's.
    prob_num: np.ndarray  # int64
    final: np.ndarray  # int32
    moved: np.ndarray  # bool
    skip: np.ndarray  # int32
    wait: np.ndarray  # bool
    again: np.ndarray  # bool
    stake: np.ndarray  # int32
    finished: np.ndarray  # bool

    @property
    def goal(self) -> int:
        return self.rules.goal

    @property
    def branches(self) -> int:
        return self.prob_num.shape[1]


def _reflect(target: int, goal: int) -> int:
    while target > goal or target < 0:
        target = 2 * goal - target if target > goal else -target
    return target


def compile_board(rules: GooseRules) -> CompiledBoard:
    """Follow every throw from every square once (see the module docstring)."""
    goal = rules.goal
    geese = rules.goose_squares()
    first_targets = dict(rules.first_throw)
    per_square: list[tuple[Throw, ...]] = []
    for s in range(goal):
        dice = rules.dice_at(s)
        groups: dict[tuple[int, int], tuple[Fraction, tuple[int, ...] | None]] = {}
        for faces, p in dice.throws():
            target = first_targets.get(faces, -1) if s == 0 else -1
            key = (sum(faces), target)
            old = groups.get(key)
            groups[key] = ((old[0] if old else Fraction(0)) + p, faces if target >= 0 else None)
        throws = []
        for (total, target), (p, faces) in sorted(groups.items()):
            throws.append(_follow(rules, geese, s, total, target, p, faces))
        per_square.append(tuple(throws))

    denominator = 1
    for throws in per_square:
        for t in throws:
            denominator = math.lcm(denominator, t.probability.denominator)
    if denominator > 2**31 - 1:
        # Branch probabilities are stored as int32 numerators over this denominator.
        raise RulesError(f"the dice thrown across the board need a common denominator of {denominator:,}, "
                         "above 2**31; use fewer different dice", source=rules.source, key="dice")
    width = max(len(t) for t in per_square)
    shape = (goal, width)
    prob_num = np.zeros(shape, np.int64)
    final = np.zeros(shape, np.int32)
    moved = np.zeros(shape, bool)
    skip = np.zeros(shape, np.int32)
    wait = np.zeros(shape, bool)
    again = np.zeros(shape, bool)
    stake = np.zeros(shape, np.int32)
    finished = np.zeros(shape, bool)
    for s, throws in enumerate(per_square):
        for j, t in enumerate(throws):
            prob_num[s, j] = t.probability * denominator
            final[s, j] = t.final
            moved[s, j] = t.moved
            skip[s, j] = t.skip
            wait[s, j] = t.wait
            again[s, j] = t.again
            stake[s, j] = t.stake
            finished[s, j] = t.finished
    return CompiledBoard(rules, tuple(per_square), denominator, prob_num, final, moved, skip, wait, again,
                         stake, finished)


def _follow(rules: GooseRules, geese: list[int], start: int, total: int, first_target: int,
            p: Fraction, faces: tuple[int, ...] | None) -> Throw:
    goal = rules.goal
    if first_target >= 0:
        if not rules.first_throw_effect or first_target in (0, goal):
            return Throw(p, total, faces, first_target, True, 0, False, False, 0, (first_target,),
                         first_target == goal)
        q, direction = first_target, 1
    else:
        q, direction = start + total, 1
        if q > goal:
            if rules.overshoot == "stay":
                return Throw(p, total, None, start, False, 0, False, False, 0, (), False)
            if rules.overshoot == "finish":
                q = goal
            else:
                q, direction = _reflect(q, goal), -1

    landings: list[int] = []
    seen: set[tuple[int, int]] = set()
    skip = stake = 0
    wait = again = False
    while True:
        if (q, direction) in seen:
            path = " -> ".join(str(x) for x in [*landings, q])
            raise RulesError(f"effects loop for a throw of {total} from square {start}: {path}",
                             source=rules.source, key=f"squares.{q}")
        seen.add((q, direction))
        landings.append(q)
        if q == goal:
            break
        sq = rules.square(q)
        stake += sq.stake
        skip += sq.miss
        again = again or sq.again
        wait = wait or sq.wait
        if sq.goose == "repeat":
            step = total if (direction > 0 or rules.goose_after_bounce == "forward") else -total
            nq = q + step
            direction = 1 if step > 0 else -1
            if nq > goal:
                if rules.overshoot == "stay":
                    break  # the repeated move would overshoot: the piece stays on the goose
                if rules.overshoot == "finish":
                    nq = goal
                else:
                    nq, direction = _reflect(nq, goal), -1
            elif nq < 0:
                nq, direction = _reflect(nq, goal), 1
            q = nq
        elif sq.goose == "next":
            q = next((g for g in geese if g > q), goal)
            landings.append(q)
            break
        elif sq.jump is not None:
            q, direction = sq.jump, 1
        else:
            break
    finished = q == goal
    if finished:
        skip, wait, again = 0, False, False
    again = again and not wait and skip == 0
    return Throw(p, total, faces, q, True, skip, wait, again, stake, tuple(landings), finished)
