"""The numba Ur simulator (markov_oca.ur.simulate) against the exact policy chains.

Statistical checks use a z-test at Z = 4.5 standard errors of the sample size at hand
(two-sided, a correct simulator fails one such assertion with chance about 7e-6):
a share p over n games may differ from the chain by 4.5 * sqrt(p (1 - p) / n), a mean
by 4.5 * sd / sqrt(n) with the sample standard deviation. The tolerances follow from
n alone; the seeds are fixed once and never tuned. Move generation and the greedy and
optimal choices are also compared with the kernel's move tables position by position
(the simulator itself does not use them).
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import chi2

from markov_oca.core.errors import RulesError
from markov_oca.ur.chain import policy_weights, ur_chain
from markov_oca.ur.kernel import GAME_OVER, MOVER_WINS, PASS, moves
from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.rules import build_ur, load_ur
from markov_oca.ur.simulate import OUTCOMES, SEATS, play_ur_python, simulate_ur, ur_decisions
from markov_oca.ur.state import UrSpace

Z = 4.5
#: The two-sided tail beyond Z standard errors: the failure chance of a chi-square test at the same level.
ALPHA = math.erfc(Z / math.sqrt(2))
GAMES = 100_000

_VALUES: dict[tuple, np.ndarray] = {}


def _rules(name: str, options: dict):
    return load_ur(name, options)


def _values(name: str, options: dict) -> np.ndarray:
    key = (name, tuple(sorted(options.items())))
    if key not in _VALUES:
        _VALUES[key] = solve_optimal(_rules(name, options)).values
    return _VALUES[key]


def _exact(rules, light, dark, values):
    chain = ur_chain(rules, light, dark, values)
    exp = chain.expected({"turns": chain.state_rewards["turns"], "throws": chain.state_rewards["throws"]})
    return chain, chain.outcome_probabilities()["light wins"], exp["turns"][0], exp["throws"][0]


def _sim_turns(s) -> tuple[float, float]:
    t = np.arange(s.length.size)
    n = s.finished
    mean = float((t * s.length).sum() / n)
    var = float(((t - mean) ** 2 * s.length).sum() / (n - 1))
    return mean, math.sqrt(var)


def _sim_throws(s) -> tuple[float, float]:
    n = s.finished
    mean = s.throws_sum / n
    var = (s.throws_sumsq - n * mean * mean) / (n - 1)
    return mean, math.sqrt(var)


CASES = [
    ("ur", {"pieces": 1}, "random", "random"),
    ("ur", {"pieces": 1}, "optimal", "random"),
    ("ur", {"pieces": 1}, "greedy", "optimal"),
    ("ur", {"pieces": 2}, "random", "random"),
    ("ur", {"pieces": 2}, "optimal", "random"),
    ("ur", {"pieces": 2}, "greedy", "optimal"),
    ("ur-simplificado", {"pieces": 1}, "random", "greedy"),
    ("ur-simplificado", {"pieces": 2}, "optimal", "greedy"),
    ("ur-7-rescatados", {"pieces": 2}, "random", "optimal"),
    # total 1: the first piece off ends the game (a total the rule set's options allow)
    ("ur-7-rescatados", {"pieces": 2, "total": 1}, "greedy", "random"),
    ("ur-7-rescatados", {"pieces": 2, "total": 1}, "optimal", "optimal"),
    # total 3 with 3 pieces: a side with 2 off has won before the game ends, and every move then ties
    ("ur-7-rescatados", {"pieces": 3, "total": 3}, "optimal", "optimal"),
]


@pytest.mark.parametrize(("case", "name", "options", "light", "dark"),
                         [(i, *c) for i, c in enumerate(CASES)], ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_simulation_matches_chain(case, name, options, light, dark):
    rules = _rules(name, options)
    values = _values(name, options) if "optimal" in (light, dark) else None
    _chain, p, turns, throws = _exact(rules, light, dark, values)
    s = simulate_ur(rules, light, dark, GAMES, seed=1000 + case, values=values)
    assert s.games == GAMES and s.unfinished == 0
    assert s.seats == SEATS and s.outcome_names == OUTCOMES and s.landings is None
    share = s.outcomes[0] / GAMES
    assert abs(share - p) <= Z * math.sqrt(p * (1 - p) / GAMES)
    assert s.outcomes.sum() == GAMES
    mean, sd = _sim_turns(s)
    assert abs(mean - turns) <= Z * sd / math.sqrt(GAMES)
    mean, sd = _sim_throws(s)
    assert abs(mean - throws) <= Z * sd / math.sqrt(GAMES)


def test_length_distribution_chi_square():
    """Turns per game against Chain.length_distribution: chi-square, bins pooled to >= 20 expected games."""
    rules = _rules("ur", {"pieces": 2})
    values = _values("ur", {"pieces": 2})
    chain = ur_chain(rules, "optimal", "random", values)
    pmf = chain.length_distribution(tail=1e-13).pmf
    s = simulate_ur(rules, "optimal", "random", GAMES, seed=77, values=values)
    observed = np.zeros(max(pmf.size, s.length.size))
    observed[: s.length.size] = s.length
    expected = np.zeros_like(observed)
    expected[: pmf.size] = pmf * GAMES
    assert observed[expected == 0].sum() == 0  # no game of a length the chain says impossible
    # pool left to right until a bin expects 20 games; the rest (the tail) joins the last bin
    obs_bins, exp_bins, o_acc, e_acc = [], [], 0.0, 0.0
    for o, e in zip(observed, expected, strict=True):
        o_acc += o
        e_acc += e
        if e_acc >= 20:
            obs_bins.append(o_acc)
            exp_bins.append(e_acc)
            o_acc = e_acc = 0.0
    obs_bins[-1] += o_acc
    exp_bins[-1] += e_acc + GAMES * (1 - pmf.sum())
    obs_b, exp_b = np.array(obs_bins), np.array(exp_bins)
    assert obs_b.sum() == GAMES
    stat = float(((obs_b - exp_b) ** 2 / exp_b).sum())
    assert chi2.sf(stat, obs_b.size - 1) > ALPHA, (stat, obs_b.size)


def _custom_rosettes():
    raw = {"game": {"name": "ur-custom", "family": "ur", "pieces": 3},
           "board": {"rosettes": [3, 6, 8, 12, 14]}}
    return build_ur(raw, "ur-custom.toml", {"pieces": 2})


@pytest.mark.parametrize(("rules", "policies"), [
    (load_ur("ur", {"pieces": 2}), ("greedy", "optimal")),
    (load_ur("ur-simplificado", {"pieces": 2}), ("greedy", "optimal")),
    (_custom_rosettes(), ("greedy", "optimal")),
    (load_ur("ur-7-rescatados", {"pieces": 3, "total": 3}), ("greedy", "optimal")),
], ids=["ur-2", "simplificado-2", "rosettes-3-6-8-12-14", "rescatados-3-total-3"])
def test_moves_and_choices_agree_with_kernel(rules, policies):
    """Every position, every throw: the same legal pieces, and the same greedy and optimal choice."""
    space = UrSpace(rules.pieces)
    idx = np.arange(space.size, dtype=np.int64)
    pos = space.unrank_many(idx)
    mv = moves(space, idx, rules)
    values = solve_optimal(rules).values
    if rules.end == "total-off":  # a decision with a move that ends the game and loses (value 0) is exercised
        loses = ((mv.events & GAME_OVER) != 0) & ((mv.events & MOVER_WINS) == 0)
        assert (loses & (mv.n_moves > 1)[:, :, None]).any()
    frm, _ = ur_decisions(rules, pos, "random")
    assert np.array_equal(frm, mv.frm)
    passed = (mv.events[:, :, 0] & PASS) != 0
    for policy in policies:
        _, chosen = ur_decisions(rules, pos, policy, values)
        w = policy_weights(mv, policy, values, space)
        best = np.take_along_axis(mv.frm, w.argmax(axis=2)[:, :, None], axis=2)[:, :, 0]
        best = np.where(passed | mv.terminal[:, None], -1, best)
        assert np.array_equal(chosen, best), policy


def test_reproducible_with_seed():
    rules = _rules("ur", {"pieces": 2})
    values = _values("ur", {"pieces": 2})
    rows = []
    a = simulate_ur(rules, "greedy", "optimal", 30_000, seed=5, values=values, batch=30_000)
    b = simulate_ur(rules, "greedy", "optimal", 30_000, seed=5, values=values, batch=7_001,
                    on_batch=lambda w, t, th: rows.append((w.copy(), t.copy(), th.copy())))
    c = simulate_ur(rules, "greedy", "optimal", 30_000, seed=6, values=values)
    for x in ("outcomes", "length"):
        assert np.array_equal(getattr(a, x), getattr(b, x))
    assert a.throws_sum == b.throws_sum and a.throws_sumsq == b.throws_sumsq
    assert not (np.array_equal(a.length, c.length) and a.throws_sum == c.throws_sum)
    assert len(rows) == 5 and sum(r[0].size for r in rows) == 30_000
    w, t, th = (np.concatenate(x) for x in zip(*rows, strict=True))
    assert np.array_equal(np.bincount(w, minlength=2), a.outcomes)
    assert th.sum() == a.throws_sum
    assert (t >= 1).all() and (th >= t).all()
    assert b.elapsed > 0


def test_turn_limit_counts_unfinished():
    rules = _rules("ur", {"pieces": 1})  # about 14 turns a game: many end within 10, many do not
    rows = []
    s = simulate_ur(rules, games=5_000, seed=3, turn_limit=10, on_batch=lambda w, t, th: rows.append((w, t)))
    assert s.unfinished > 0 and s.finished > 0 and s.games == 5_000
    assert s.length.size == 11 and s.length.sum() == s.finished == s.outcomes.sum()
    w, t = rows[0]
    assert (t[w < 0] == 10).all() and (t[w >= 0] <= 10).all()


def test_unknown_policy_and_bad_values():
    rules = _rules("ur", {"pieces": 1})
    with pytest.raises(RulesError):
        simulate_ur(rules, "clever", "random", 10)
    with pytest.raises(ValueError):
        simulate_ur(rules, "optimal", "random", 10, values=np.zeros(3))


def test_python_loop_matches_chain():
    """The plain-Python baseline is a second reading of the rules: it must match the chain too."""
    rules = _rules("ur", {"pieces": 2})
    values = _values("ur", {"pieces": 2})
    _chain, p, turns, throws = _exact(rules, "greedy", "optimal", values)
    rng = random.Random(2003)
    n = 4_000
    res = np.array([play_ur_python(rules, "greedy", "optimal", rng, values) for _ in range(n)])
    share = (res[:, 0] == 0).mean()
    assert abs(share - p) <= Z * math.sqrt(p * (1 - p) / n)
    for col, exact in ((1, turns), (2, throws)):
        assert abs(res[:, col].mean() - exact) <= Z * res[:, col].std(ddof=1) / math.sqrt(n)


def test_seven_pieces_random_games_finish():
    """The full game, random against random: every game ends, and numba and plain Python agree."""
    rules = load_ur("ur")
    assert rules.pieces == 7
    n = 20_000
    least = []
    s = simulate_ur(rules, games=n, seed=11, on_batch=lambda w, t, th: least.append(th.min()))
    assert s.unfinished == 0 and s.games == n
    # a throw moves one piece 4 squares at most and the winner walks 7 * 15 = 105: 27 throws at least;
    # on average 2 squares a throw (Wald), so the winner alone throws 52.5 times on average
    assert min(least) >= 27
    mean, sd = _sim_throws(s)
    assert 52.5 < mean < 1_000
    rng = random.Random(12)
    m = 1_500
    res = np.array([play_ur_python(rules, rng=rng) for _ in range(m)])
    assert abs(mean - res[:, 2].mean()) <= Z * math.sqrt(sd**2 / n + res[:, 2].var(ddof=1) / m)
    p = s.outcomes[0] / n
    q = (res[:, 0] == 0).mean()
    pooled = (s.outcomes[0] + (res[:, 0] == 0).sum()) / (n + m)
    assert abs(p - q) <= Z * math.sqrt(pooled * (1 - pooled) * (1 / n + 1 / m))
