"""Certified bounds, variances and honest tails of the general analyser, against closed forms and exact answers."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from markov_oca.analysis.build import from_matrix
from markov_oca.analysis.general import analyse


def haddad_monmege(N: int, p: float = 0.7):
    """A walk on 0..2N from N: left with p, right with 1 - p; each leg goes on with 1/2 or back to N with 1/2.

    The legs are alike, so 0 is reached with probability p exactly, after about 2**N steps: ``I - Q``
    is singular to double precision (its leak, 2**-(N-1), is below a double's spacing near 1).
    """
    n = 2 * N + 1
    P = np.zeros((n, n))
    P[0, 0] = P[2 * N, 2 * N] = 1
    P[N, N - 1], P[N, N + 1] = p, 1 - p
    for x in range(1, N):
        P[x, x - 1] = P[x, N] = 0.5
    for x in range(N + 1, 2 * N):
        P[x, x + 1] = P[x, N] = 0.5
    return from_matrix(P, init=N, labels={"qtarget": [0]})


@pytest.mark.parametrize("N", [100, 300])
def test_adversarial_walk_right_in_float_mode(N):
    res = analyse(haddad_monmege(N), exact=False, hit=["qtarget"], max_steps=1000)
    p, b = res.outcomes["qtarget"], res.classes[0].bound
    assert not res.exact and abs(p - 0.7) <= b <= 1e-9 * 0.7
    assert abs(res.hitting["qtarget"] - 0.7) <= res.bounds["hitting qtarget"] <= 1e-9
    total = sum(res.outcomes.values())
    assert abs(total - 1) <= sum(res.outcome_bounds.values()) + 1e-16
    assert all(0 <= x <= 1 for x in res.outcomes.values())
    assert res.route and "exactly" in res.route
    assert res.steps > 2.0 ** (N - 1) and res.bounds["steps"] <= 1e-9 * res.steps
    d = res.to_dict(with_pmf=False)
    assert d["outcomes_bound"]["qtarget"] == b and d["length"]["median"] is None
    lo, hi = d["length"]["quantile_bounds"]["median"]
    assert lo == 1001 and hi >= res.steps  # Markov's inequality: at most 2 E[T]
    assert " inf" not in res.text()


def ruin(target: int, win, start: int, exact: bool = True):
    P = np.zeros((target + 1, target + 1), object if exact else float)
    P[0, 0] = P[target, target] = 1
    for i in range(1, target):
        P[i, i + 1], P[i, i - 1] = win, 1 - win
    return from_matrix(P, init=start, labels={"broke": [0], "rich": [target]})


@pytest.mark.parametrize("N, k", [(10, 3), (2, 1), (20, 10)])
def test_fair_ruin_duration_variance_closed_form(N, k):
    mean, var = k * (N - k), F(k * (N - k) * (k * k + (N - k) ** 2 - 2), 3)
    ex = analyse(ruin(N, F(1, 2), k))
    assert ex.exact and ex.moments["steps"].mean == mean and ex.moments["steps"].variance == var
    fl = analyse(ruin(N, 0.5, k, exact=False))
    m = fl.moments["steps"]
    assert abs(m.mean - mean) <= m.mean_bound and abs(m.variance - float(var)) <= m.variance_bound + 1e-12 * var
    assert fl.length.variance == m.variance and fl.to_dict()["moments"]["steps"]["variance_bound"] == m.variance_bound


def test_biased_ruin_moments_float_within_bounds_of_exact():
    win, N, k = F(2, 5), 12, 5
    stake = [0] + [i for i in range(1, N)] + [0]
    ex = analyse(ruin(N, win, k), rewards={"stake": stake})
    q, p = 1 - win, win
    reach = (1 - (q / p) ** k) / (1 - (q / p) ** N)
    assert ex.outcomes["rich"] == reach and ex.steps == k / (q - p) - N / (q - p) * reach
    fl = analyse(ruin(N, 0.4, k, exact=False), rewards={"stake": stake})
    for name in ("steps", "stake"):
        e, f = ex.moments[name], fl.moments[name]
        assert abs(f.mean - float(e.mean)) <= f.mean_bound + 1e-15 * float(e.mean)
        assert abs(f.second - float(e.second)) <= f.second_bound + 1e-14 * float(e.second)
        assert f.variance_bound <= 1e-9 * f.second
    for c in fl.classes:
        exact_c = next(x for x in ex.classes if x.name == c.name)
        assert abs(c.absorption - float(exact_c.absorption)) <= c.bound + 1e-16
        assert abs(c.steps_given - float(exact_c.steps_given)) <= c.steps_given_bound + 1e-14 * c.steps_given


def test_rare_event_has_a_relative_bound():
    # Up with 1/3, down with 2/3, from 1: reaching 35 before 0 has chance 1 / (2**35 - 1), about 2.9e-11.
    N = 35
    want = 1 / (2 ** N - 1)
    for conditional in (0, 16):
        res = analyse(ruin(N, 1 / 3, 1, exact=False), exact=False, conditional=conditional)
        p = res.outcomes["rich"]
        bound = next(c.bound for c in res.classes if c.name == "rich")
        assert abs(p - want) <= 1e-12 * want and bound <= 1e-9 * p
    # the probability, and the steps given so rare an end, are certified by the float solves alone (bounds
    # relative to the class: (rb N) . R_k and (y + rb_w) N . R_k), against the exact answer
    assert analyse(ruin(N, 1 / 3, 1, exact=False), conditional=0).route is None
    assert res.route is None
    ex = analyse(ruin(N, F(1, 3), 1), exact=True)
    rich, exact_rich = (next(c for c in r.classes if c.name == "rich") for r in (res, ex))
    assert abs(rich.absorption - float(exact_rich.absorption)) <= rich.bound <= 1e-9 * rich.absorption
    assert abs(rich.steps_given - float(exact_rich.steps_given)) <= rich.steps_given_bound
    assert rich.steps_given_bound <= 1e-9 * rich.steps_given


def test_tail_beyond_the_horizon_from_the_decay():
    # 41 states: a walk drifting to the middle (2/3 toward it) between absorbing 0 and 40, from 20: about 4.2e6 steps.
    n = 41
    P = np.zeros((n, n))
    P[0, 0] = P[40, 40] = 1
    P[20, 19] = P[20, 21] = 0.5
    for i in list(range(1, 20)) + list(range(21, 40)):
        toward, away = (i + 1, i - 1) if i < 20 else (i - 1, i + 1)
        P[i, toward], P[i, away] = 2 / 3, 1 / 3
    res = analyse(from_matrix(P, init=20), exact=False)
    d = res.to_dict(with_pmf=False)["length"]
    assert d["tail_mass"] > 0.9 and d["horizon"] == 100_000
    assert abs(d["mean"] - res.steps) == 0 and d["mean_bound"] <= 1e-9 * d["mean"]
    lo, hi = d["decay_rate"]
    assert 0 < lo <= hi < 1 and hi - lo < 1e-12
    # nearly geometric: the median about ln 2 times the mean
    for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99)):
        a, b = d["quantile_bounds"][name]
        assert a <= d[name] <= b and b - a < 10
        assert abs(d[name] / (-math.log(1 - q) * res.steps) - 1) < 1e-2
    assert " inf" not in res.text()


def test_a_tiny_float_entry_held_on_the_grid_is_named_in_a_note():
    # 1e-9 is held as a multiple of 2**-53 (about 1.1e-16) to within 5.6e-8 of itself: the bounds are the
    # held chain's, and a note says so; 0.25 and 0.75 are held exactly, and no note is made.
    from markov_oca import from_matrix

    tiny = from_matrix([[0.5, 1e-9, 0.5 - 1e-9], [0, 1, 0], [0, 0, 1]], init=0)
    assert any("the smallest, 1e-09, to within 6e-08 of itself" in n for n in tiny.notes)
    assert analyse(tiny, exact=False).notes == tiny.notes[-1:]
    plain = from_matrix([[0.25, 0.75], [0, 1]], init=0)
    assert not plain.notes


def test_a_states_bound_follows_its_expected_steps():
    # fair ruin on 0..40: t_i = i (40 - i), 400 in the middle, 39 next to an end. Each expected-steps figure is
    # off by 1e-9 of itself; the per-state bound max|r| t_s must hold from every state, and next to an end be
    # about ten times smaller than ||N|| max|r|, the same for every state
    from markov_oca.analysis.bounds import forward_bound
    from markov_oca.analysis.moments import Forward, forward_block

    n = 40
    P = [[F(0)] * (n + 1) for _ in range(n + 1)]
    P[0][0] = P[n][n] = F(1)
    for i in range(1, n):
        P[i][i - 1] = P[i][i + 1] = F(1, 2)
    chain = from_matrix(P, init=1)
    fwd = forward_block(chain, np.zeros((n + 1, 0)))
    exact = np.array([i * (n - i) for i in range(n + 1)], np.float64)
    x = exact * (1 + 1e-9 * np.random.default_rng(7).uniform(-1, 1, n + 1))
    b = chain.structure.transient.astype(np.float64)[:, None]
    off = Forward(x[:, None].copy(), forward_bound(chain, b, x[:, None]), fwd.norm)
    for s in range(1, n):
        assert abs(x[s] - exact[s]) <= off.delta_at(0, s) <= off.delta(0)
    assert off.delta_at(0, 1) < off.delta(0) / 5


def test_a_dot_product_of_zero_terms_is_exact():
    # a product with a zero factor is exactly 0: no underflow allowance for it, so a sum of such terms has error 0
    # (an absorbing start's visits are all 0, and its totals must then be 0 with bound 0); products of nonzeros
    # that underflow keep theirs
    from markov_oca.linalg.certify import compensated_dot

    assert compensated_dot(np.zeros(5), np.arange(5.0)) == (0.0, 0.0)
    total, err = compensated_dot(np.full(3, 1e-200), np.full(3, 1e-200))  # each product underflows to 0
    assert total == 0.0 and err >= 3 * 9.3e-302
    total, err = compensated_dot(np.array([0.1, 0.0]), np.array([0.0, 3.0]))
    assert total == 0.0 and err == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_steps_bound_reads_the_norm_from_the_block_residual(seed):
    # the norm read from the steps column's own residual proves what norm_bound's separate pass proves: both
    # at least the true ||N||_inf, and equal up to the rounding allowances; a column norm_bound would clip
    # (a negative entry) takes norm_bound's own pass, and gives exactly its answer
    from markov_oca.analysis.bounds import forward_bound, norm_bound, steps_bound

    rng = np.random.default_rng(seed)
    n = 30
    P = rng.uniform(0, 1, (n, n)) * (rng.uniform(0, 1, (n, n)) < 0.3)
    P[:, n - 1] += 0.05  # the last state absorbs: every row leaks into it
    P[n - 1] = 0
    P[n - 1, n - 1] = 1
    P /= P.sum(axis=1, keepdims=True)
    chain = from_matrix(P, init=0)
    tr = chain.structure.transient
    Q = np.asarray(P)[np.ix_(tr, tr)]
    true = np.abs(np.linalg.inv(np.eye(tr.sum()) - Q)).sum(axis=1).max()
    t = np.zeros(n)
    t[tr] = np.linalg.solve(np.eye(tr.sum()) - Q, np.ones(tr.sum())) * (1 + 1e-10 * rng.uniform(-1, 1, tr.sum()))
    b = np.column_stack([tr.astype(np.float64), rng.uniform(0, 1, n) * tr])
    x = np.column_stack([t, rng.uniform(0, 1, n) * tr])
    res, norm, d = steps_bound(chain, b, x)
    ref_norm, ref_d = norm_bound(chain, t)
    assert true <= norm and true <= ref_norm
    assert norm == pytest.approx(ref_norm, rel=1e-12) and d == pytest.approx(ref_d, abs=1e-14)
    assert np.array_equal(res, forward_bound(chain, b, x))
    b_other = b.copy()
    b_other[int(np.flatnonzero(tr)[0]), 0] = 2.0  # column 0 not the transient states' ones: norm_bound's pass
    assert steps_bound(chain, b_other, x)[1:] == norm_bound(chain, t)
    t_off = t.copy()
    t_off[n - 1] = 5.0  # not 0 off the transient states
    x[:, 0] = t_off
    assert steps_bound(chain, b, x)[1:] == norm_bound(chain, t_off)
    x[:, 0] = t
    t_neg = t.copy()
    t_neg[int(np.flatnonzero(tr)[0])] = -1.0
    x[:, 0] = t_neg
    assert steps_bound(chain, b, x)[1:] == norm_bound(chain, t_neg)
