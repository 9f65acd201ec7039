"""Players who never meet, solved from one player's race, held against the joint chain."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from support import board

from markov_oca.core.errors import RulesError
from markov_oca.engine.race import analyse
from markov_oca.goose.independent import never_meet, solve_independent
from markov_oca.goose.model import goose_model
from markov_oca.goose.rules import load_goose, special_squares
from markov_oca.goose.solve import solve_goose

SNAKES = Path(__file__).resolve().parents[2] / "examples" / "snakes_and_ladders.toml"


def joint(rules, players, landings=True):
    m = goose_model(rules, players)
    chain = m.build()
    return analyse(chain, rules=rules, players=players, special=special_squares(rules),
                   landing_events=lambda s: m.landing_events(chain, s),
                   landings=landings, tail=1e-13)


def assert_same(a, b, tol=1e-9):
    """Figure by figure: wins, places, turns, throws, stakes, rounds, length, landings."""
    assert a.outcomes.keys() == b.outcomes.keys()
    for k in a.outcomes:
        assert a.outcomes[k] == pytest.approx(b.outcomes[k], abs=tol)
    assert b.deadlock == pytest.approx(0.0, abs=1e-12)
    for sa, sb in zip(a.seats, b.seats, strict=True):
        assert sa.win == pytest.approx(sb.win, abs=tol)
        assert sa.turns.total == pytest.approx(sb.turns.total, abs=tol)
        assert sa.throws.total == pytest.approx(sb.throws.total, abs=tol)
        if sb.stakes is not None:
            assert sa.stakes.total == pytest.approx(sb.stakes.total, abs=tol)
        if sb.places is not None:
            assert sa.places == pytest.approx(sb.places, abs=tol)
    for k in ("turns", "rounds", "throws"):
        assert a.expected[k].total == pytest.approx(b.expected[k].total, abs=tol)
    n = min(len(a.length.pmf), len(b.length.pmf))
    assert n > 10
    assert np.abs(np.array(a.length.pmf[:n]) - np.array(b.length.pmf[:n])).max() < 1e-12
    assert (a.length.median, a.length.p90, a.length.p99) == (b.length.median, b.length.p90, b.length.p99)
    la = {(x.seat, x.square): x for x in a.landings}
    for x in b.landings or []:
        y = la[(x.seat, x.square)]
        assert y.chance == pytest.approx(x.chance, abs=tol)
        assert y.expected == pytest.approx(x.expected, abs=tol)


# A small board with every effect that keeps players apart: a jump back, a miss, another throw, stakes.
SQUARES = {2: {"jump": 5}, 4: {"miss": 1, "stake": 1}, 6: {"again": True}, 7: {"jump": 1, "stake": 2}}


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("until", ["first", "last"])
def test_small_board_matches_the_joint_chain(players, until):
    rules = board(9, SQUARES, faces=3, until=until)
    assert never_meet(rules)
    assert_same(solve_independent(rules, players, tail=1e-13), joint(rules, players))


def test_coin_race_by_hand():
    # Squares 0..2, a coin showing 1 or 2, bounce: P(T = t) = 2**-t, P(T > t) = 2**-t.
    # Seat 1 wins on its turn k when seat 2 has not finished in k - 1 turns:
    # sum_k 2**-k 2**-(k-1) = 2/3; seat 2 wins with sum_k 2**-k 2**-k = 1/3.
    rules = board(2)
    r = solve_independent(rules, 2, tail=1e-14)
    assert r.seats[0].win == pytest.approx(2 / 3, abs=1e-14)
    assert r.seats[1].win == pytest.approx(1 / 3, abs=1e-14)
    # The game lasts 2k - 1 turns when seat 1 wins in round k: P(1) = 1/2, P(2) = 1/4 * 1/2 ... by hand:
    # P(L = 1) = 1/2, P(L = 2) = 1/2 * 1/2 = 1/4, P(L = 3) = 1/4 * 1/2 = 1/8.
    assert r.length.pmf[:4] == pytest.approx([0, 1 / 2, 1 / 4, 1 / 8], abs=1e-15)
    # Places with until = last: seat 1 is first with the same 2/3.
    last = solve_independent(board(2, until="last"), 2, tail=1e-14)
    assert last.seats[0].places == pytest.approx([2 / 3, 1 / 3], abs=1e-14)


def test_jeu_de_l_oie_without_interaction_two_players():
    rules = load_goose("jeu-de-l-oie", {"occupancy": "none", "waiting": "turns:2"})
    assert never_meet(rules)
    assert not never_meet(load_goose("jeu-de-l-oie"))
    assert not never_meet(load_goose("jeu-de-l-oie", {"occupancy": "none"}))  # the well still holds
    assert_same(solve_independent(rules, 2, tail=1e-13), joint(rules, 2, landings=False))


def test_the_goose_solve_takes_the_route_and_says_so():
    rules = load_goose(SNAKES)
    r = solve_goose(rules, 10)
    assert "never meet" in r.solver[0]["method"]
    wins = [s.win for s in r.seats]
    assert sum(wins) == pytest.approx(1.0, abs=1e-12)
    assert all(a > b for a, b in itertools.pairwise(wins))  # moving earlier helps
    assert r.seats[0].turns.total >= r.seats[-1].turns.total
    r50 = solve_goose(rules, 50, landings=False)
    assert sum(s.win for s in r50.seats) == pytest.approx(1.0, abs=1e-12)
    exact = solve_goose(board(9, SQUARES, faces=3), 2, exact=True)  # exact answers take the joint chain
    assert exact.exact and "never meet" not in str(exact.solver)
    assert float(exact.seats[0].win) == pytest.approx(solve_goose(board(9, SQUARES, faces=3), 2).seats[0].win,
                                                      abs=1e-12)
    with pytest.raises(RulesError, match="meet"):
        solve_goose(load_goose("oca-moderna"), 3, route="independent")
    with pytest.raises(RulesError, match="from 1 to 50"):
        solve_goose(rules, 51)
