"""The exact chain against an independent plain-Python simulation of the goose rules.

The simulator below is written from the rules in words alone, with none of the
engine's tables: it plays concrete games with a seeded random generator. Each
frequency must fall within 4.5 standard errors of the exact value (a false
alarm has odds of about 1 in 150,000 per comparison).
"""

from __future__ import annotations

import math
import random

import pytest

from markov_oca import api

GOOSE_MODERN = {9, 18, 27, 36, 45, 54}
GOOSE_TRAD = [5, 9, 14, 18, 23, 27, 32, 36, 41, 45, 50, 54, 59]


def throw(rng, n):
    return [rng.randint(1, 6) for _ in range(n)]


def first_landing(origin, dice):
    """Where a throw first lands: the first-throw rule from 0 (no effect applied), else bounce."""
    if origin == 0 and sorted(dice) == [3, 6]:
        return 26, True
    if origin == 0 and sorted(dice) == [4, 5]:
        return 53, True
    q = origin + sum(dice)
    return (126 - q if q > 63 else q), False


def play_modern(rng, players, max_turns=5000):
    """oca-moderna: returns the winning seat, or -1 for a deadlock."""
    pos = [0] * players
    skip = [0] * players
    wait = [False] * players
    seat = 0
    for _ in range(max_turns):
        if all(wait):
            return -1
        if wait[seat]:
            seat = (seat + 1) % players
            continue
        if skip[seat]:
            skip[seat] -= 1
            seat = (seat + 1) % players
            continue
        d = throw(rng, 2)
        total = sum(d)
        origin = pos[seat]
        q, first_throw = first_landing(origin, d)
        if not first_throw:
            while True:
                if q in GOOSE_MODERN:
                    q += total
                    if q > 63:
                        q = 126 - q
                elif q == 6:
                    q = 12
                elif q == 42:
                    q = 30
                elif q == 58:
                    q = 0
                else:
                    break
        if q == 63:
            return seat
        pos[seat] = q
        if q == 19:
            skip[seat] = 2
        if q in (31, 52):
            wait[seat] = True
        if q != 0:
            for k in range(players):
                if k != seat and pos[k] == q:
                    pos[k], skip[k], wait[k] = origin, 0, False
        seat = (seat + 1) % players
    return -2


def play_traditional(rng, players, max_turns=5000):
    """oca-tradicional: returns (winning seat or -1 for deadlock, stakes paid by seat 1)."""
    pos = [0] * players
    skip = [0] * players
    wait = [False] * players
    stakes = 0
    seat = 0
    again = False
    for _ in range(max_turns):
        if all(wait):
            return -1, stakes
        if not again and wait[seat]:
            seat = (seat + 1) % players
            continue
        if not again and skip[seat]:
            skip[seat] -= 1
            seat = (seat + 1) % players
            continue
        origin = pos[seat]
        d = throw(rng, 1 if origin >= 60 else 2)
        paid = 0
        again = False
        q, first_throw = first_landing(origin, d)
        if not first_throw:
            while True:
                if q in GOOSE_TRAD:
                    q = next((g for g in GOOSE_TRAD if g > q), 63)
                    again = q != 63
                    break
                if q == 6:
                    paid += 1
                    q = 19
                elif q == 19:
                    paid += 1
                    skip[seat] = 1
                    break
                elif q == 26:
                    q = 34
                elif q == 53:
                    q = 61
                elif q in (31, 52):
                    paid += 1
                    wait[seat] = True
                    break
                elif q == 42:
                    paid += 1
                    skip[seat] = 1
                    q = 30
                    break
                elif q == 58:
                    paid += 1
                    q = 0
                else:
                    break
        if seat == 0:
            stakes += paid
        if q == 63:
            return seat, stakes
        pos[seat] = q
        if q in (31, 52):
            for k in range(players):
                if k != seat and pos[k] == q:
                    wait[k] = False
        if not again:
            seat = (seat + 1) % players
    return -2, stakes


def within(freq, p, n, z=4.5):
    se = math.sqrt(max(p * (1 - p), 1e-12) / n)
    return abs(freq - p) <= z * se + 1e-12


@pytest.mark.parametrize("players", [1, 2, 3])
def test_oca_moderna_matches_simulation(players):
    n = 20_000
    rng = random.Random(20261130 + players)
    results = [play_modern(rng, players) for _ in range(n)]
    assert -2 not in results
    chain = api.build("oca-moderna", players)
    probs = chain.outcome_probabilities()
    for seat in range(players):
        assert within(results.count(seat) / n, probs[f"seat {seat + 1} wins"], n), seat
    assert within(results.count(-1) / n, probs["deadlock"], n)


def test_oca_tradicional_matches_simulation():
    n = 20_000
    rng = random.Random(63)
    games = [play_traditional(rng, 2) for _ in range(n)]
    winners = [w for w, _ in games]
    assert -2 not in winners
    r = api.solve("oca-tradicional", 2, landings=False)
    assert within(winners.count(0) / n, float(r.seats[0].win), n)
    assert within(winners.count(1) / n, float(r.seats[1].win), n)
    assert within(winners.count(-1) / n, float(r.deadlock), n)
    stakes = [s for _, s in games]
    mean = sum(stakes) / n
    sd = math.sqrt(sum((s - mean) ** 2 for s in stakes) / (n - 1))
    assert abs(mean - float(r.seats[0].stakes.total)) <= 4.5 * sd / math.sqrt(n)
