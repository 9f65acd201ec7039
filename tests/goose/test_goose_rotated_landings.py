"""The chance of ever landing on a square, on the chain seen from the mover, against the joint chain."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import board

from markov_oca.goose.model import goose_model
from markov_oca.goose.rotated import build_rotated, rotated_structure
from markov_oca.goose.rotated_landings import NQ, landing_chances, landings_cost, special_squares
from markov_oca.goose.rules import load_goose
from markov_oca.goose.solve import solve_goose

BOARDS = {
    # occupancy sends pieces back, a waiting square makes deadlock, a jump back makes cycles
    "occupant, waiting": board(9, {2: {"jump": 5}, 4: {"miss": 1}, 6: {"wait": True}, 7: {"jump": 1}}, faces=3,
                               occupancy="occupant-returns"),
    # finished seats skipped (shifts above 1), places
    "mover returns, last": board(8, {3: {"miss": 2}, 5: {"wait": True}, 6: {"jump": 2}}, faces=3,
                                 occupancy="mover-returns", until="last"),
    # another throw in the same turn (shift 0 between rows)
    "another throw": board(10, {2: {"goose": "repeat"}, 4: {"stake": 1}, 7: {"miss": 1, "stake": 2},
                                8: {"jump": 0}}, faces=3, occupancy="occupant-returns"),
}


def _joint_chances(rules, players, squares):
    joint = solve_goose(rules, players, landings=True, route="joint")
    got = {(x.seat, x.square): x.chance for x in joint.landings}
    return np.array([[got[(a + 1, q)] for q in squares] for a in range(players)])


def _rotated_chances(rules, players, squares, **kw):
    rc = build_rotated(goose_model(rules, players))
    return landing_chances(rc, rotated_structure(rc), squares, **kw)


@pytest.mark.parametrize("case", list(BOARDS))
@pytest.mark.parametrize("players", [2, 3])
def test_tiny_boards_match_the_joint_chain(case, players):
    rules = BOARDS[case]
    squares = list(range(1, rules.goal + 1))
    want = _joint_chances(rules, players, squares)
    got, rep = _rotated_chances(rules, players, squares)
    assert np.abs(got - want).max() < 1e-9
    assert rep["residual"] <= 1e-12 and rep["sweeps"] >= 1
    assert ((got >= 0) & (got <= 1 + 1e-12)).all()
    # batches of one block of NQ squares each give the same chances
    one, rep1 = _rotated_chances(rules, players, squares, max_bytes=1)
    assert rep1["batches"] == -(-len(squares) // NQ)
    assert np.abs(one - got).max() < 1e-10


@pytest.mark.parametrize("name", ["oca-moderna", "oca-tradicional"])
def test_two_players_shipped_boards_match_the_joint_chain(name):
    rules = load_goose(name)
    squares = special_squares(rules)
    want = _joint_chances(rules, 2, squares)
    got, rep = _rotated_chances(rules, 2, squares)
    assert np.abs(got - want).max() < 1e-9
    assert rep["residual"] <= 1e-12
    # the goal: no seat lands on it more often than it wins or, here, finishes
    r = solve_goose(rules, 2, landings=False, route="rotated")
    g = squares.index(rules.goal)
    for a in range(2):
        assert got[a, g] == pytest.approx(r.seats[a].win, abs=1e-9)


def test_four_players_hook_computes_the_special_squares_when_asked():
    rules = BOARDS["occupant, waiting"]
    joint = solve_goose(rules, 4, landings=True, route="joint")
    rot = solve_goose(rules, 4, landings=True)
    assert "seen from the player to move" in rot.note
    special = set(rot.special_squares)
    want = {(x.seat, x.square): x.chance for x in joint.landings}
    for x in rot.landings:
        if x.square in special:
            assert x.chance == pytest.approx(want[(x.seat, x.square)], abs=1e-9)
        else:
            assert math.isnan(x.chance)
        assert x.expected == pytest.approx(next(y.expected for y in joint.landings
                                                if (y.seat, y.square) == (x.seat, x.square)), abs=1e-9)
    assert "sweeps" in rot.landings_note and "residual" in rot.landings_note
    # each chance computed carries its bound (||N||_inf times the landing solve's residual), null where not computed
    bj = {(x.seat, x.square): b for x, b in zip(joint.landings, joint.bounds["landings"], strict=True)}
    for x, b in zip(rot.landings, rot.bounds["landings"], strict=True):
        if x.square in special and x.chance > 0:
            assert 0 < b["chance"] <= 1e-9 * x.chance
            assert abs(x.chance - want[(x.seat, x.square)]) <= b["chance"] + bj[(x.seat, x.square)]["chance"]
        else:
            assert b["chance"] is None or (x.chance == 0 and b["chance"] >= 0)
    assert any("landing columns" in s["method"] and s["residual"] <= 1e-12 for s in rot.solver)
    # not asked for: not computed, and the note says how to ask and what it costs
    auto = solve_goose(rules, 4, landings=None)
    assert all(math.isnan(x.chance) for x in auto.landings)
    assert "--landings" in auto.landings_note and "estimated" in auto.landings_note


def test_cost_grows_with_the_blocks_of_squares():
    rules = load_goose("oca-moderna")
    rc = build_rotated(goose_model(rules, 2))
    b1, s1 = landings_cost(rc, [6])
    b15, s15 = landings_cost(rc, special_squares(rules))
    b17, s17 = landings_cost(rc, list(range(1, 18)))
    # one block of NQ squares a core: 15 squares are two blocks on two cores, 17 three (two rounds)
    assert b17 > b15 > b1 > rc.n_states * 2 * 8
    assert s15 == pytest.approx(s1) and s17 == pytest.approx(2 * s1)


def test_hours_of_landings_are_refused_up_front_with_the_estimate(monkeypatch):
    import markov_oca.goose.rotated as rotated
    import markov_oca.goose.rotated_landings as rl
    from markov_oca.core.errors import TooLargeError

    rules = BOARDS["occupant, waiting"]
    monkeypatch.setattr(rl, "MAX_SECONDS", 0.0)
    passes = []
    monkeypatch.setattr(rotated, "forward_pass", lambda *a, **k: passes.append(1))
    with pytest.raises(TooLargeError, match=r"--landings at 4 players: .* columns over .* estimated at .* h"):
        solve_goose(rules, 4, landings=True)
    assert not passes  # refused before the pass
    # not asked for: the same chain solves, with the estimate in the note
    monkeypatch.undo()
    monkeypatch.setattr(rl, "MAX_SECONDS", 0.0)
    note = solve_goose(rules, 4, landings=None).landings_note
    assert "--landings would be refused" in note and "simulate" in note and "estimated" in note
    monkeypatch.undo()
    assert "ask for it with --landings" in solve_goose(rules, 4, landings=None).landings_note


def test_landings_over_the_memory_budget_are_refused_with_the_estimate():
    from markov_oca.core.errors import TooLargeError
    from markov_oca.goose.rotated_landings import check_landings_cost

    rules = BOARDS["occupant, waiting"]
    rc = build_rotated(goose_model(rules, 4))
    need, _ = landings_cost(rc, special_squares(rules))
    check_landings_cost(rc, max_memory=2**40)  # fits
    held = rc.chain.next.nbytes + rc.chain.pnum.nbytes
    with pytest.raises(TooLargeError, match=r"--landings at 4 players: .* left of the budget \(--max-memory\)"):
        check_landings_cost(rc, max_memory=held + need // 2)
