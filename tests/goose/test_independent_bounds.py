"""The certified bounds of players who never meet: they hold the joint chain's exact figures and fractions
derived by hand, meet the precision, and a precision that cannot be met refuses."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from support import board, check_tree

from markov_oca.core.errors import SolverError
from markov_oca.goose.independent import single_race, solve_independent
from markov_oca.goose.rules import load_goose
from markov_oca.goose.solve import solve_goose
from markov_oca.linalg.interval import Interval

SNAKES = Path(__file__).resolve().parents[2] / "examples" / "snakes_and_ladders.toml"
# A jump back, a miss, another throw, stakes: every effect that keeps players apart.
SQUARES = {2: {"jump": 5}, 4: {"miss": 1, "stake": 1}, 6: {"again": True}, 7: {"jump": 1, "stake": 2}}


def pairs(r) -> list[tuple[str, object, float]]:
    """Every bounded figure of a solve: (name, value, bound)."""
    b = r.bounds
    out = [(f"outcome {k}", x, b["outcomes"][k]) for k, x in r.outcomes.items()]
    out.append(("deadlock", r.deadlock, b["deadlock"]))
    for s, sb in zip(r.seats, b["seats"], strict=True):
        out.append((f"seat {s.seat} win", s.win, sb["win"]))
        for k in ("turns", "throws", "stakes"):
            if getattr(s, k) is not None:
                out += [(f"seat {s.seat} {k} {g}", getattr(getattr(s, k), g), sb[k][g]) for g in ("total", "given_end")]
        for m, (p, pb) in enumerate(zip(s.places or [], sb["places"] or [], strict=True)):
            out.append((f"seat {s.seat} place {m + 1}", p, pb))
    for k, e in r.expected.items():
        out += [(f"{k} {g}", getattr(e, g), b["expected"][k][g]) for g in ("total", "given_end")]
    out.append(("length mean", r.length.mean_given_end, b["length"]["mean_given_end"]))
    for x, lb in zip(r.landings or [], b["landings"] or [], strict=True):
        out += [(f"seat {x.seat} lands {x.square} chance", x.chance, lb["chance"]),
                (f"seat {x.seat} lands {x.square} expected", x.expected, lb["expected"])]
    return out


def assert_certified(r, precision: float = 1e-9) -> None:
    assert r.bounds is not None and r.precision == precision
    for name, x, b in pairs(r):
        assert 0 <= b <= precision * abs(x), name
    assert check_tree(r.to_dict()) > 20  # every float of the JSON has its bound, the length's included
    assert "error bounds: certified, each figure within" in r.text()


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("until", ["first", "last"])
def test_bounds_hold_the_joint_chains_fractions(players, until):
    rules = board(9, SQUARES, faces=3, until=until)
    landings = players == 2  # exact landing chances: one solve per seat and square
    exact = solve_goose(rules, players, exact=True, landings=landings)
    ind = solve_independent(rules, players, landings=landings, tail=1e-13)
    assert_certified(ind)
    truth = {name: x for name, x, _ in pairs(exact)}
    checked = 0
    for name, x, b in pairs(ind):
        assert isinstance(truth[name], Fraction), name
        assert abs(Fraction(x) - truth[name]) <= Fraction(b), name  # the bound holds the exact figure
        checked += 1
    assert checked >= (60 if landings else 20)
    # the length distribution: each entry within its bound of the joint chain's pushed one (its own bound beside)
    pmf_e, pmf_i = np.array(exact.length.pmf), np.array(ind.length.pmf)
    n = min(pmf_e.size, pmf_i.size)
    gap = np.abs(pmf_e[:n] - pmf_i[:n])
    allowed = np.array(ind.bounds["length"]["pmf"][:n]) + np.array(exact.bounds["length"]["pmf"][:n])
    assert (gap <= allowed).all() and n > 20
    for q in ("median", "p90", "p99"):
        assert getattr(ind.length, q) == getattr(exact.length, q) and ind.bounds["length"][q] == 0.0


@pytest.mark.parametrize("until", ["first", "last"])
def test_a_race_stopped_early_is_bounded_by_its_tail(until):
    # Stopped with 1e-6 of the single race still in play: the tail, not the rounding, makes the bounds, and
    # they still hold the exact figures (a loose precision, so that the race is not pushed on).
    rules = board(9, SQUARES, faces=3, until=until)
    exact = solve_goose(rules, 3, exact=True, landings=False)
    short = solve_independent(rules, 3, landings=False, race=single_race(rules, tail=1e-6), precision=1e-3)
    assert short.route == ""
    truth = {name: x for name, x, _ in pairs(exact)}
    for name, x, b in pairs(short):
        assert abs(Fraction(x) - truth[name]) <= Fraction(b), name
    gap = max(abs(Fraction(x) - truth[name]) for name, x, _ in pairs(short))
    if until == "last":
        assert gap > 1e-9  # the tail is really missing
    else:  # a game past the last turn pushed has every seat still racing: (1e-6)**3
        assert gap < 1e-12 and short.bounds["seats"][0]["win"] < 1e-12


def test_bounds_hold_the_joint_chains_float_landings_for_three():
    rules = board(9, SQUARES, faces=3)
    joint = solve_goose(rules, 3, route="joint", landings=True)
    ind = solve_independent(rules, 3, landings=True, tail=1e-13)
    assert_certified(ind)
    assert_certified(joint)
    for (name, x, b), (name_j, y, c) in zip(pairs(ind), pairs(joint), strict=True):
        assert name == name_j
        assert abs(x - y) <= b + c, name  # both bounds hold the same exact figure


def test_coin_race_by_hand_three_players():
    # Squares 0..2, a coin showing 1 or 2, bounce: P(T > t) = 2**-t. Seat j wins on its k-th turn when the seats
    # before it have T > k and those after it T > k - 1: seat 1 sum_k 2**-k 4**-(k-1) = 4/7, seat 2 2/7, seat 3 1/7.
    # Seat j's turns: sum_k P(T > k - 1) allow_j(k): 8/7, 4/7, 2/7; rounds sum_k 8**-k = 8/7; the game 2 turns.
    r = solve_independent(board(2), 3, tail=1e-14)
    assert_certified(r)
    wins = [Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)]
    turns = [Fraction(8, 7), Fraction(4, 7), Fraction(2, 7)]
    for s, sb, w, t in zip(r.seats, r.bounds["seats"], wins, turns, strict=True):
        assert abs(Fraction(s.win) - w) <= Fraction(sb["win"]) < Fraction(1, 10**12)
        assert abs(Fraction(s.turns.total) - t) <= Fraction(sb["turns"]["total"]) < Fraction(1, 10**12)
    e = r.expected
    assert abs(Fraction(e["rounds"].total) - Fraction(8, 7)) <= Fraction(r.bounds["expected"]["rounds"]["total"])
    assert abs(Fraction(e["turns"].total) - 2) <= Fraction(r.bounds["expected"]["turns"]["total"])
    # The game ends on turn 1 with 1/2, on turn 2 with 1/2 * 1/2, on turn 3 with 1/4 * 1/2 (seat 3's first turn).
    for t, p in ((1, Fraction(1, 2)), (2, Fraction(1, 4)), (3, Fraction(1, 8))):
        assert abs(Fraction(r.length.pmf[t]) - p) <= Fraction(r.bounds["length"]["pmf"][t])
    last = solve_independent(board(2, until="last"), 2, tail=1e-14)
    assert_certified(last)
    for s, sb, p in zip(last.seats, last.bounds["seats"], (Fraction(2, 3), Fraction(1, 3)), strict=True):
        assert abs(Fraction(s.places[0]) - p) <= Fraction(sb["places"][0])


@pytest.mark.parametrize(("until", "turns", "length", "places"), [
    ("first", [2, 1, 1], 4, None),
    ("last", [2, 2, 1], 5, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])])
def test_a_sure_race_by_hand(until, turns, length, places):
    # Squares 0..2 and a one-faced die: every player finishes on its second turn. Seat 1 wins on turn 4 (until
    # first); with until last seats 1 and 2 finish on turns 4 and 5 and seat 3 is last after one turn.
    r = solve_independent(board(2, faces=1, until=until), 3, tail=1e-14)
    assert_certified(r)
    for s, sb, t in zip(r.seats, r.bounds["seats"], turns, strict=True):
        assert abs(s.turns.total - t) <= sb["turns"]["total"] < 1e-13
        assert s.win == (1.0 if s.seat == 1 else 0.0)
        assert sb["win"] < 1e-13 if s.seat == 1 else sb["win"] == 0.0  # an exact 0 keeps bound 0
    if places is not None:
        assert [s.places for s in r.seats] == places
        assert all(b == 0.0 for s, sb in zip(r.seats, r.bounds["seats"], strict=True)
                   for p, b in zip(s.places, sb["places"], strict=True) if p == 0)
    assert r.length.pmf[length] == 1.0 and r.length.median == length and r.bounds["length"]["median"] == 0.0


def test_a_short_push_is_pushed_on_and_said():
    rules = board(9, SQUARES, faces=3, until="last")
    short = solve_independent(rules, 3, race=single_race(rules, tail=1e-6))
    full = solve_independent(rules, 3)
    assert short.route.startswith("the single race pushed on") and full.route == ""
    assert_certified(short)
    for (name, x, b), (_, y, c) in zip(pairs(short), pairs(full), strict=True):
        assert abs(x - y) <= b + c, name


def test_a_precision_out_of_reach_refuses_in_one_line():
    rules = load_goose(SNAKES)
    with pytest.raises(SolverError, match=r"no bound under 1e-30 .*--precision") as err:
        solve_goose(rules, 3, precision=1e-30)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("until", ["first", "last"])
def test_the_json_carries_the_joint_routes_tree(until):
    rules = board(9, SQUARES, faces=3, until=until)
    ind = solve_goose(rules, 2, route="independent", landings=True)
    joint = solve_goose(rules, 2, route="joint", landings=True)

    def keys(t):
        if isinstance(t, dict):
            return {k: keys(v) for k, v in t.items() if k not in ("pmf", "cdf")}
        if isinstance(t, list):
            return [keys(t[0])] if t else []
        return None

    d = json.loads(json.dumps(ind.to_dict(with_pmf=False)))
    assert keys(d["bounds"]) == keys(joint.to_dict(with_pmf=False)["bounds"])
    assert_certified(ind)
    for (name, x, b), (_, y, c) in zip(pairs(ind), pairs(joint), strict=True):
        assert abs(x - y) <= b + c, name


def test_intervals_hold_exact_arithmetic():
    rng = np.random.default_rng(7)
    x = rng.random(50)
    y = rng.random(50)
    X, Y = Interval(x, x), Interval(y, y)
    z = (1.0 - X ** 3 * Y) * (X + Y) @ Y
    exact = sum((1 - Fraction(a) ** 3 * Fraction(b)) * (Fraction(a) + Fraction(b)) * Fraction(b)
                for a, b in zip(x, y, strict=True))
    assert Fraction(float(z.lo)) <= exact <= Fraction(float(z.hi))
    assert float(z.hi - z.lo) < 1e-13 * float(exact)
