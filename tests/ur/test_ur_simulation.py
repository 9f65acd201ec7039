"""Random against random Ur, the chain against an independent plain-Python simulation of the rules."""

from __future__ import annotations

import math
import random

from markov_oca.ur.chain import ur_chain
from markov_oca.ur.rules import load_ur

ROSETTES = {4, 8, 14}


def play(rng: random.Random, n: int) -> tuple[int, int]:
    """One game, both sides choosing uniformly among legal moves; (winner 0 light / 1 dark, throws)."""
    pieces = [[0] * n, [0] * n]  # path squares: 0 hand, 1..14 board, 15 off
    side, throws = 0, 0
    while True:
        throws += 1
        k = sum(rng.randint(0, 1) for _ in range(4))
        mine, theirs = pieces[side], pieces[1 - side]
        legal = []
        if k:
            for i, s in enumerate(mine):
                if s == 15 or (s == 0 and i != mine.index(0)):
                    continue  # pieces in hand are alike: one entering move
                t = s + k
                if t > 15 or (t < 15 and t in mine):
                    continue
                if t == 8 and 8 in theirs:
                    continue
                legal.append(i)
        if not legal:
            side = 1 - side
            continue
        i = rng.choice(legal)
        t = mine[i] + k
        mine[i] = t
        if 5 <= t <= 12 and t in theirs:
            theirs[theirs.index(t)] = 0
        if all(s == 15 for s in mine):
            return side, throws
        if t not in ROSETTES:
            side = 1 - side


def test_random_pair_matches_simulation():
    n, games = 2, 20_000
    rng = random.Random(3003)
    results = [play(rng, n) for _ in range(games)]
    chain = ur_chain(load_ur("ur", {"pieces": n}), "random", "random")
    p = chain.outcome_probabilities()["light wins"]
    freq = sum(1 for w, _ in results if w == 0) / games
    assert abs(freq - p) <= 4.5 * math.sqrt(p * (1 - p) / games)
    mean = sum(t for _, t in results) / games
    sd = math.sqrt(sum((t - mean) ** 2 for _, t in results) / (games - 1))
    expected = chain.expected({"throws": chain.state_rewards["throws"]})["throws"][0]
    assert abs(mean - expected) <= 4.5 * sd / math.sqrt(games)
