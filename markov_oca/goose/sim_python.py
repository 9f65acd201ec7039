"""One goose game in plain Python, with the same reading of the rules as the kernel (:mod:`.goose_kernel`).

The benchmark's baseline, and (fed the kernel's dice through
:func:`~markov_oca.goose.splitmix.game_stream`) a second reading that must
agree with the kernel game for game.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from ..core.errors import RulesError
from .rules import GooseRules
from .sim_flat import (
    DEFAULT_TURN_LIMIT,
    GOOSE_NEXT,
    GOOSE_REPEAT,
    OCC_MOVER,
    OCC_OCCUPANT,
    SQUARE_COLUMNS,
    UNFINISHED,
    UNTIL_FIRST,
    FlatGoose,
    flatten_goose,
    move_to,
)


class GameRecord(NamedTuple):
    """One game played by :func:`play_goose_python`."""

    outcome: int  # index in outcome_names(), -1 unfinished
    turns: int
    throws: int
    landed: tuple[frozenset[int], ...]  # per seat, the squares it landed on
    stakes: tuple[int, ...]  # per seat, stakes paid into the pot


class DiceSource(Protocol):
    """What :func:`play_goose_python` draws its dice from."""

    def randint(self, a: int, b: int) -> int: ...


assert SQUARE_COLUMNS == ("jump", "goose", "next_goose", "again", "miss", "wait", "stake", "dice_count",
                          "dice_faces"), "the rows are unpacked in this order"


class _Game:
    """The state of one game in play: per seat its square, turns to miss, waiting, finished, landings, stakes."""

    def __init__(self, flat: FlatGoose, players: int):
        self.sq = flat.squares.tolist()
        self.goal, self.until, self.overshoot, self.occupancy, self.backward, self.ft_effect, self.keeps = \
            flat.options.tolist()
        self.first = {tuple(f): t for f, t in zip(flat.ft_faces.tolist(), flat.ft_target.tolist(), strict=True)}
        self.name = flat.name
        self.players = players
        self.pos = [0] * players
        self.skip = [0] * players
        self.wait = [False] * players
        self.fin = [False] * players
        self.landed: list[set[int]] = [set() for _ in range(players)]
        self.stakes = [0] * players
        self.turns = self.throws = 0

    def next_seat(self, seat: int) -> int:
        for step in range(1, self.players + 1):
            k = (seat + step) % self.players
            if not self.fin[k]:
                return k
        return seat

    def record(self, outcome: int) -> GameRecord:
        return GameRecord(outcome, self.turns, self.throws, tuple(frozenset(s) for s in self.landed),
                          tuple(self.stakes))

    def follow(self, seat: int, origin: int, total: int, target: int) -> tuple[int, bool, int, bool, bool]:
        """Steps 4-6: where the throw takes the piece, every square whose effect applies (its landings, and
        stakes paid): ``(q, moved, skip, wait, again)``."""
        sq, goal = self.sq, self.goal
        path: list[int] = []
        moved, new_skip, new_wait, new_again = True, 0, False, False
        if target >= 0 and (not self.ft_effect or target in (0, goal)):
            self.landed[seat].add(target)
            return target, True, 0, False, False
        if target >= 0:
            q, direction = target, 1
        else:
            q, direction, moved = move_to(origin + total, 1, goal, self.overshoot, origin)
        while moved:
            if len(path) >= 2 * (goal + 1):
                raise RulesError("a chain of square effects loops; load rule sets with markov_oca.load",
                                 source=self.name)
            path.append(q)
            if q == goal:
                break
            jump, goose, next_goose, again, miss, wait, stake, _, _ = sq[q]  # the columns, as SQUARE_COLUMNS
            new_skip += miss
            new_again = new_again or bool(again)
            new_wait = new_wait or bool(wait)
            self.stakes[seat] += stake
            if goose == GOOSE_REPEAT:
                step = total if (direction > 0 or not self.backward) else -total
                nq, direction, on = move_to(q + step, 1 if step > 0 else -1, goal, self.overshoot, q)
                if not on:
                    break
                q = nq
            elif goose == GOOSE_NEXT:
                q = next_goose
                path.append(q)
                break
            elif jump >= 0:
                q, direction = jump, 1
            else:
                break
        self.landed[seat].update(path)
        return q, moved, new_skip, new_wait, new_again and not new_wait and new_skip == 0

    def come_to_rest(self, seat: int, q: int, origin: int, again: bool) -> bool:
        """Step 7: occupancy, or release from a waiting square; whether the mover throws again."""
        pos, skip, wait = self.pos, self.skip, self.wait
        for k in range(self.players):
            if k == seat or self.fin[k] or pos[k] != q:
                continue
            if self.occupancy == OCC_OCCUPANT:
                pos[k], wait[k] = origin, False
                if not self.keeps:
                    skip[k] = 0
            elif self.occupancy == OCC_MOVER:
                pos[seat], skip[seat], wait[seat] = origin, 0, False
                return False
            elif wait[k]:
                wait[k], skip[k] = False, 0
        return again


def play_goose_python(rules: GooseRules | FlatGoose, players: int, rng: DiceSource,
                      turn_limit: int = DEFAULT_TURN_LIMIT) -> GameRecord:
    """One game in plain Python, with the same reading of the rules as the kernel.

    Parameters
    ----------
    rules:
        A rule set, or one already flattened (saves the flattening per game).
    players:
        Seats 1..``players``.
    rng:
        Anything with ``randint(1, faces)``: a :class:`random.Random`, or
        :func:`~markov_oca.goose.splitmix.game_stream` to replay the kernel's game exactly.
    turn_limit:
        Turns after which the game is unfinished.

    Returns
    -------
    GameRecord

    Examples
    --------
    >>> import random
    >>> from markov_oca import api
    >>> g = play_goose_python(api.load("oca-moderna"), 2, random.Random(3))
    >>> g.outcome in (-1, 0, 1) and g.throws <= g.turns
    True
    """
    g = _Game(rules if isinstance(rules, FlatGoose) else flatten_goose(rules), players)
    randint = rng.randint
    pos, skip, wait, fin = g.pos, g.skip, g.wait, g.fin
    seat = 0
    again = False
    while True:
        if not again:
            if g.turns >= turn_limit:
                return g.record(UNFINISHED)
            g.turns += 1
        if wait[seat] or skip[seat]:
            if skip[seat]:
                skip[seat] -= 1
            if wait[seat] and all(fin[k] or wait[k] for k in range(players)):
                return g.record(UNFINISHED)
            seat = g.next_seat(seat)
            continue
        origin = pos[seat]
        g.throws += 1
        *_, count, n_faces = g.sq[origin]
        faces = [randint(1, n_faces) for _ in range(count)]
        target = g.first.get(tuple(sorted(faces, reverse=True)), -1) if origin == 0 else -1
        q, moved, new_skip, new_wait, again = g.follow(seat, origin, sum(faces), target)
        if q == g.goal:
            if g.until == UNTIL_FIRST:
                return g.record(seat)
            fin[seat] = True
            pos[seat], skip[seat], wait[seat] = g.goal, 0, False
            rest = [k for k in range(players) if not fin[k]]
            if len(rest) <= 1:
                return g.record(rest[0] if rest else seat)
            again = False
            seat = g.next_seat(seat)
            continue
        pos[seat], skip[seat], wait[seat] = q, new_skip, new_wait
        if moved and q != 0:
            again = g.come_to_rest(seat, q, origin, again)
        if not again:
            seat = g.next_seat(seat)
