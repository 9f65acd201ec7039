"""Policy pairs of Ur as Markov chains, checked against the optimal values and each other."""

from __future__ import annotations

from fractions import Fraction

import pytest

from markov_oca.analysis.exact import ExactChain
from markov_oca.ur.chain import ur_chain
from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace


@pytest.mark.parametrize("name", ["ur", "ur-simplificado"])
def test_optimal_pair_chain_matches_value_iteration(name):
    # Evaluating optimal against optimal as a chain (a linear solve) must give the value
    # that value iteration found for the start position.
    rules = load_ur(name, {"pieces": 2})
    sol = solve_optimal(rules)
    chain = ur_chain(rules, "optimal", "optimal", sol.values)
    assert (chain.row_sums() == chain.denom).all()
    start = UrSpace(2).rank(0, 0, 2, 0, 0, 2, 0)
    p = chain.outcome_probabilities()
    assert p["light wins"] == pytest.approx(sol.values[start], abs=1e-10)
    assert p["light wins"] + p["dark wins"] == pytest.approx(1.0, abs=1e-12)


def test_one_piece_has_no_choices():
    # With one piece there is at most one legal move: every policy pair is the same chain.
    rules = load_ur("ur", {"pieces": 1})
    wins = {(l, d): ur_chain(rules, l, d).outcome_probabilities()["light wins"]
            for l in ("random", "greedy", "optimal") for d in ("random", "optimal")}
    assert max(wins.values()) - min(wins.values()) < 1e-12


def test_optimal_beats_random_and_greedy_from_both_seats():
    rules = load_ur("ur", {"pieces": 2})
    values = solve_optimal(rules).values
    # In either seat, optimal play wins more often against a policy than that policy does
    # against itself (and optimal is never worse than the best reply).
    for other in ("random", "greedy"):
        same = ur_chain(rules, other, other, values).outcome_probabilities()
        as_light = ur_chain(rules, "optimal", other, values).outcome_probabilities()
        as_dark = ur_chain(rules, other, "optimal", values).outcome_probabilities()
        assert as_light["light wins"] > same["light wins"] + 0.05
        assert as_dark["dark wins"] > same["dark wins"] + 0.05


def test_exact_and_float_agree_on_one_piece():
    rules = load_ur("ur", {"pieces": 1})
    chain = ur_chain(rules, "random", "random")
    exact = ExactChain(chain).outcome_probabilities()
    approx = chain.outcome_probabilities()
    assert isinstance(exact["light wins"], Fraction)
    assert sum(exact.values()) == 1
    assert float(exact["light wins"]) == pytest.approx(approx["light wins"], abs=1e-12)
    vals = {"turns": chain.state_rewards["turns"], "throws": chain.state_rewards["throws"]}
    e_ex, e_fl = ExactChain(chain).expected(vals), chain.expected(vals)
    for k in vals:
        assert float(e_ex[k][0]) == pytest.approx(e_fl[k][0], rel=1e-10)
    # a throw is a turn unless a rosette gave it: more throws than turns
    assert e_ex["throws"][0] > e_ex["turns"][0]


def test_length_distribution_sums_to_one():
    rules = load_ur("ur", {"pieces": 2})
    dist = ur_chain(rules, "random", "greedy").length_distribution(tail=1e-12)
    assert dist.never_ends == 0
    assert dist.pmf.sum() == pytest.approx(1.0, abs=1e-11)


def test_callable_policy():
    # A callable that always moves the piece furthest along, entering last: the same as a
    # greedy that ignores captures and rosettes; checked against itself written as weights.
    rules = load_ur("ur", {"pieces": 2})
    calls = []

    def furthest(position, throw, moves):
        calls.append(throw)
        return max(moves)

    chain = ur_chain(rules, furthest, "random")
    assert (chain.row_sums() == chain.denom).all()
    assert calls and all(1 <= t <= 4 for t in calls)
    p = chain.outcome_probabilities()
    assert 0 < p["light wins"] < 1 and p["light wins"] + p["dark wins"] == pytest.approx(1.0, abs=1e-12)

    def illegal(position, throw, moves):
        return (99, 100)

    from markov_oca.core.errors import RulesError

    with pytest.raises(RulesError, match="not one of the legal moves"):
        ur_chain(rules, illegal, "random")


def test_callable_greedy_equals_builtin_greedy():
    # The documented greedy heuristic written as a callable from the position alone gives the
    # same chain as the built-in greedy policy.
    rules = load_ur("ur", {"pieces": 2})

    def greedy(position, throw, moves):
        mine, theirs = position
        def score(move):
            f, t = move
            wins = t == 15 and sum(1 for s in mine if s != 15) == 1
            capture = 5 <= t <= 12 and t in theirs
            return 10_000 * wins + 1_000 * capture + 100 * (t in (4, 8, 14)) + 50 * (t == 15) + max(f, 0)
        return max(moves, key=score)

    a = ur_chain(rules, greedy, "random").outcome_probabilities()
    b = ur_chain(rules, "greedy", "random").outcome_probabilities()
    assert a["light wins"] == pytest.approx(b["light wins"], abs=1e-12)


@pytest.mark.parametrize("light,dark", [("random", "random"), ("optimal", "greedy")])
def test_exact_and_float_agree_on_two_pieces(light, dark):
    # A two-piece game from a late position where a capture can still send a piece back
    # (dark on 11 hits light's 12 with a 1): a chain small enough for exact arithmetic.
    rules = load_ur("ur", {"pieces": 2})
    values = solve_optimal(rules).values
    chain = ur_chain(rules, light, dark, values, start=([12, 14], [11, 15], "light"))
    exact = ExactChain(chain)
    p_ex, p_fl = exact.outcome_probabilities(), chain.outcome_probabilities()
    assert sum(p_ex.values()) == 1
    assert float(p_ex["light wins"]) == pytest.approx(p_fl["light wins"], abs=1e-12)
    vals = {"turns": chain.state_rewards["turns"], "throws": chain.state_rewards["throws"]}
    e_ex, e_fl = exact.expected(vals), chain.expected(vals)
    for k in vals:
        assert float(e_ex[k][0]) == pytest.approx(e_fl[k][0], rel=1e-10)
    if light == "optimal" and dark == "greedy":
        # optimal play from this position is worth at least its optimal value against any reply
        from markov_oca.ur.state import UrSpace, encode

        v = values[UrSpace(2).rank(*encode([12, 14], [11, 15]))]
        assert float(p_ex["light wins"]) >= v - 1e-12
