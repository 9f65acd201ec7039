"""A stand-alone simulator of the modern Spanish Game of the Goose (``oca-moderna``), for 2 to 4 players.

Who it is for: anyone who has written a simulator of a board game in some other language and
wants to know whether it plays the rules right. This file stands for that program: it imports
nothing from markov_oca, only Python's standard library, and it could as well be written in C
or JavaScript (``oca_simulator.js`` beside it is the same program in JavaScript, to read). It
plays games and writes one row a game, ``winner,turns,throws``: the results file that
``markov-oca crosscheck --results`` tests against the exact chain (``simulator_check.py`` does
that, and shows what the verdict looks like when a rule is played wrong).

Run::

    python examples/oca_simulator.py --games 20000 --seed 1 --out games.csv
    python examples/oca_simulator.py --games 20000 --prison 56 --out buggy.csv   # a planted bug

The rules it plays (the reading of ``markov-oca explain oca-moderna``):

- squares 0 (start, off the board) to 63 (the goal); two six-sided dice; seat 1 moves first;
- a throw of 6+3 from square 0 goes to 26, 5+4 goes to 53 (that square's effect is not applied);
- otherwise the piece moves on by the total, bouncing back from 63 by the excess;
- geese (9, 18, 27, 36, 45, 54) move the piece on again by the same total, always forward;
  the bridge (6) goes to 12, the maze (42) to 30, the skull (58) back to 0; effects chain;
- the inn (19) misses 2 turns; the well (31) and the prison (52) hold the piece until another
  piece comes to rest there;
- one piece a square: a piece that comes to rest on another's square (not 0) sends that piece to
  the square the mover threw from, where it takes no effect and loses its missed turns and its
  waiting;
- the first to reach 63 exactly wins.

Counted as the cross-check counts them: a *turn* each time the turn comes to a player (a missed
turn included), a *throw* each time the dice are thrown. A game in which every piece is held
(in the well and the prison) can never end: it is written unfinished (empty winner) at the turn
limit.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys

GOAL = 63
GEESE = frozenset({9, 18, 27, 36, 45, 54})
JUMPS = {6: 12, 42: 30, 58: 0}  # the bridge, the maze, the skull
INN, INN_TURNS = 19, 2
TURN_LIMIT = 2000  # no game of two to four players that ends lasts this long, in practice


def bounce(square: int) -> int:
    """A square past the goal bounces back by the excess."""
    return 2 * GOAL - square if square > GOAL else square


def play(players: int, rng: random.Random, prison: int = 52) -> tuple[int | None, int, int]:
    """One game: (the winning seat 1..players, or None if unfinished; turns; throws).

    ``prison`` is where the prison is: 52 is right, anything else a planted bug.
    """
    held_squares = {31, prison}  # the well and the prison
    pos = [0] * players
    miss = [0] * players  # turns still to miss (the inn)
    held = [False] * players  # in the well or the prison
    turns = throws = 0
    seat = 0
    while turns < TURN_LIMIT:
        turns += 1
        if all(held):  # nobody can ever move again
            return None, TURN_LIMIT, throws
        if held[seat] or miss[seat]:
            miss[seat] = max(miss[seat] - 1, 0)
            seat = (seat + 1) % players
            continue
        throws += 1
        a, b = rng.randint(1, 6), rng.randint(1, 6)
        origin = pos[seat]
        total = a + b
        if origin == 0 and {a, b} == {6, 3}:
            square = 26
        elif origin == 0 and {a, b} == {5, 4}:
            square = 53
        else:
            square = bounce(origin + total)
            while True:  # square effects, chained
                if square in GEESE:
                    square = bounce(square + total)
                elif square in JUMPS:
                    square = JUMPS[square]
                else:
                    break
        if square == GOAL:
            return seat + 1, turns, throws
        pos[seat] = square
        miss[seat] = INN_TURNS if square == INN else 0
        held[seat] = square in held_squares
        if square != 0:
            for other in range(players):  # one piece a square: the occupant goes where the mover came from
                if other != seat and pos[other] == square:
                    pos[other], miss[other], held[other] = origin, 0, False
        seat = (seat + 1) % players
    return None, TURN_LIMIT, throws


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--games", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prison", type=int, default=52, help="the prison's square (52 is right; anything else, a bug)")
    ap.add_argument("--out", required=True, help="the results file to write (CSV: winner,turns,throws)")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    with open(args.out, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["winner", "turns", "throws"])
        for _ in range(args.games):
            winner, turns, throws = play(args.players, rng, args.prison)
            out.writerow(["" if winner is None else winner, turns, throws])
    return 0


if __name__ == "__main__":
    sys.exit(main())
