"""The threaded forward push of Ur's length distribution, its turns and throws, the push-only route of
solve_ur, and the chunked policy chain, on two pieces."""

from __future__ import annotations

import numpy as np
import pytest

from markov_oca.ur import solve as ur_solve
from markov_oca.ur.chain import ur_chain
from markov_oca.ur.layered import solve_layered
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace
from markov_oca.ur.sweeps import evaluate_policies, push_lengths


@pytest.fixture(scope="module")
def two():
    rules = load_ur("ur", {"pieces": 2})
    return rules, solve_layered(rules).values


@pytest.mark.parametrize("light,dark", [("optimal", "optimal"), ("random", "greedy")])
def test_push_sums_turns_and_throws_as_the_evaluation_gives(two, light, dark):
    rules, v = two
    ev = evaluate_policies(rules, light, dark, v)
    win, throws, turns = ev.at(UrSpace(2).rank(0, 0, 2, 0, 0, 2, 0), 0)
    p = push_lengths(rules, light, dark, v, tail=1e-12)
    assert p.turns == pytest.approx(turns, rel=1e-10) and p.throws == pytest.approx(throws, rel=1e-10)
    assert p.wins[0] == pytest.approx(win, abs=1e-11) and p.dist.tail < 1e-12
    # stopped early, the extrapolated tail carries the expectations to within 5e-8 (here 1.1e-8)
    q = push_lengths(rules, light, dark, v, tail=1e-5)
    assert q.dist.tail < 1e-5 and q.tail_turns > 1e-5
    assert q.turns == pytest.approx(turns, rel=5e-8) and q.throws == pytest.approx(throws, rel=5e-8)
    assert abs(q.turns - q.tail_turns - turns) > 10 * abs(q.turns - turns)  # the extrapolation did the work


@pytest.mark.parametrize("light,dark", [("optimal", "optimal"), ("random", "greedy")])
def test_push_threads_give_the_same_bits(two, light, dark):
    # a random side: each target's mass is added by one thread, in the same order as one thread alone adds it
    rules, v = two
    a = push_lengths(rules, light, dark, v, tail=1e-9, parts=1)
    b = push_lengths(rules, light, dark, v, tail=1e-9, parts=2)
    if light == "random":
        assert np.array_equal(a.dist.by_outcome, b.dist.by_outcome) and a.throws == b.throws
    else:  # one-pass threads (tests/test_ur_push_order.py): one thread's values, not its bits
        assert np.abs(a.dist.by_outcome - b.dist.by_outcome).max() < 1e-16
        assert b.throws == pytest.approx(a.throws, rel=1e-13)


def test_push_only_route_agrees_with_the_chain(monkeypatch):
    rules = load_ur("ur", {"pieces": 1})
    lay = solve_layered(rules, residual=True)
    v = lay.values
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    for light, dark in (("optimal", "greedy"), ("optimal", "optimal")):
        ref = ur_solve.solve_ur(rules, light, dark, optimal=lay, method="chain", tail=1e-12)
        pushed = ur_solve.solve_ur(rules, light, dark, optimal=lay, method="sweeps", tail=1e-12)
        assert "forward push" in pushed.solver[-1]["method"] and "evaluate" not in pushed.timings
        assert float(pushed.wins["light"]) == pytest.approx(float(ref.wins["light"]), abs=1e-11)
        for k in ("turns", "throws"):
            assert float(pushed.expected[k].total) == pytest.approx(float(ref.expected[k].total), rel=1e-10)
    # optimal against optimal: the chance is the table's value of the start (its Bellman residual times the
    # throws to come bound it closer than the push's tail)
    assert float(pushed.wins["light"]) == float(v[UrSpace(1).rank(0, 0, 1, 0, 0, 1, 0)])
    assert pushed.bounds["wins"]["light"] == pushed.bounds["optimal_value"] < 1e-12


def test_chain_rows_merged_and_narrow(two):
    rules, v = two
    c = ur_chain(rules, "random", "optimal", v)
    assert c.next.shape[1] < 5 * 7  # as wide as the widest row reached, not one column per (throw, move)
    live = c.next >= 0
    assert (c.pnum[live] > 0).all() and (c.pnum[~live] == 0).all()
    rows = np.sort(np.where(live, c.next, -1 - np.arange(c.next.shape[1])[None, :]), axis=1)
    assert (np.diff(rows, axis=1) != 0).all()  # no target twice in a row
    assert (c.pnum.sum(axis=1) == c.denom).all()
