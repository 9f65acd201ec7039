"""The absorption-time distribution continued geometrically beyond the push, against closed forms and the full push."""

from __future__ import annotations

import numpy as np
import pytest

from markov_oca.analysis.build import from_matrix
from markov_oca.analysis.general import analyse
from markov_oca.analysis.tails import absorption_time


def _length(chain, transient, extend_error, tail=1e-10, max_steps=100_000, frontier=2):
    return absorption_time(chain.rows, chain.denom, transient, chain.init, tail, max_steps,
                           extend_error=extend_error, frontier=frontier)


def test_geometric_time_continued_within_its_bound():
    # Two states that swap with 0.4, stay with 0.5 and stop with 0.1: T is geometric, P(T = t) = 0.1 * 0.9**(t-1).
    P = np.array([[0.5, 0.4, 0.1], [0.4, 0.5, 0.1], [0, 0, 1]])
    c = from_matrix(P, init=0)
    got = _length(c, np.array([True, True, False]), 1e-11)
    t = np.arange(len(got.pmf))
    exact = np.where(t > 0, 0.1 * 0.9 ** np.maximum(t - 1, 0), 0.0)
    assert got.pushed < 40 < got.horizon and got.horizon in (219, 220)  # 0.9**219 < 1e-10 <= 0.9**218
    assert 0 < got.error < 1e-11
    assert np.abs(np.cumsum(got.pmf) - np.cumsum(exact)).max() <= got.error
    assert abs(got.tail_mass - 0.9 ** got.horizon) <= 1e-11 * got.tail_mass
    lo, hi = got.decay
    assert lo <= 0.9 <= hi and hi - lo < 1e-13


def test_continued_pmf_agrees_with_the_full_push():
    rng = np.random.default_rng(3)
    n, k, width = 3000, 4, 8
    cols = rng.integers(0, n - k, size=(n - k, width))
    cols[:, -1] = rng.integers(n - k, n, size=n - k)
    w = rng.random((n - k, width))
    w[:, -1] = rng.uniform(0.02, 0.2, size=n - k) * w[:, :-1].sum(axis=1)
    P = np.zeros((n, n))
    np.add.at(P, (np.repeat(np.arange(n - k), width), cols.ravel()), (w / w.sum(axis=1, keepdims=True)).ravel())
    P[n - k:, n - k:] = np.eye(k)
    c = from_matrix(P, init=0)
    transient = np.arange(n) < n - k
    short, full = _length(c, transient, 1e-11), _length(c, transient, 0.0)
    assert short.pushed < full.pushed == full.horizon and short.horizon in (full.horizon, full.horizon + 1)
    m = min(short.horizon, full.horizon) + 1
    a, b = np.cumsum(short.pmf)[:m], np.cumsum(full.pmf)[:m]
    assert np.abs(a - b).max() <= short.error + full.error
    pa, pb = np.array(short.pmf[1:m]), np.array(full.pmf[1:m])
    assert np.abs(pa - pb).max() <= 1e-11 * pb.max() and np.abs(pa / pb - 1).max() < 1e-10
    assert abs(short.tail_mass - full.tail_mass) < 1e-11 * full.tail_mass + 1e-20
    assert (short.median, short.p90, short.p99) == (full.median, full.p90, full.p99)
    assert short.brackets == full.brackets


def test_period_two_is_pushed_all_the_way():
    # Two states that swap with 0.9 and stop with 0.1: the pushed vector alternates, no one-step bracket.
    P = np.array([[0, 0.9, 0.1], [0.9, 0, 0.1], [0, 0, 1]])
    got = _length(from_matrix(P, init=0), np.array([True, True, False]), 1e-11)
    assert got.pushed == got.horizon == 219
    exact = 0.1 * 0.9 ** np.arange(got.horizon)
    assert np.abs(np.cumsum(got.pmf[1:]) - np.cumsum(exact)).max() <= got.error


@pytest.mark.parametrize("precision", [1e-9, 1e-6])
def test_analyse_reports_where_the_push_stopped(precision):
    P = np.array([[0.5, 0.4, 0.1, 0], [0.4, 0.5, 0, 0.1], [0, 0, 1, 0], [0, 0, 0, 1]])
    d = analyse(from_matrix(P, init=0), exact=False, precision=precision).to_dict(with_pmf=False)["length"]
    assert d["pushed"] < d["horizon"] and 0 < d["cdf_bound"] < precision * 1e-2
    assert d["median"] == 7 and d["quantile_bounds"]["median"] == [7, 7]  # 0.9**6 > 1/2 >= 0.9**7


def _pmf_by_powers(P: np.ndarray, transient: np.ndarray, init: int, steps: int) -> np.ndarray:
    """P(T = t) for t = 0..steps from dense matrix powers: the mass leaving the transient states at step t."""
    Q = P[np.ix_(transient, transient)]
    exit_ = P[np.ix_(transient, ~transient)].sum(axis=1)
    x = np.zeros(int(transient.sum()))
    x[np.flatnonzero(np.flatnonzero(transient) == init)[0]] = 1.0
    out = [0.0]
    for _ in range(steps):
        out.append(float(x @ exit_))
        x = x @ Q
    return np.array(out)


@pytest.mark.parametrize("layers, width, frontier", [(60, 3, 2), (6, 40, 8), (6, 40, 10**6)])
def test_frontier_push_agrees_with_matrix_powers(layers, width, frontier):
    # A layered chain (each state steps to the next layer or ends): the push visits only the layer holding
    # mass, a small one throughout (width 3) or, with 40 states a layer, more than one in eight of all
    # states (frontier 8: the push then goes over every row; a frontier of 16 states: from the first
    # steps); a back step in the middle makes it cyclic.
    rng = np.random.default_rng(layers)
    n_t = layers * width
    n = n_t + 2
    P = np.zeros((n, n))
    for layer in range(layers):
        for i in range(width):
            s = layer * width + i
            if layer + 1 < layers:
                nxt = (layer + 1) * width + rng.integers(0, width, size=3)
                np.add.at(P[s], nxt, 0.3)
                P[s, n_t + rng.integers(0, 2)] += 0.1
            else:
                P[s, n_t] = 0.5
                P[s, n_t + 1] = 0.5
    P[width * (layers // 2), :] = 0.0
    P[width * (layers // 2), [0, n_t]] = 0.5  # a step back to the start: a cycle
    P[n_t, n_t] = P[n_t + 1, n_t + 1] = 1.0
    transient = np.arange(n) < n_t
    got = _length(from_matrix(P, init=0), transient, 0.0, tail=1e-12, max_steps=2_000, frontier=frontier)
    every_row = _length(from_matrix(P, init=0), transient, 0.0, tail=1e-12, max_steps=2_000, frontier=10**6)
    ref = _pmf_by_powers(P, transient, 0, len(got.pmf) - 1)
    assert len(got.pmf) > layers
    assert np.abs(np.cumsum(got.pmf) - np.cumsum(ref)).max() <= got.error
    assert np.abs(np.array(got.pmf) - ref).max() <= 1e-14
    assert np.abs(np.array(got.pmf) - np.array(every_row.pmf)).max() <= 1e-16
