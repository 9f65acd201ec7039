"""Solves by strongly connected components in topological order: against dense solves, exact fractions and the
BiCGSTAB route, on acyclic chains and on chains whose cycles are small."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

import markov_oca.analysis.absorbing as absorbing
from markov_oca.analysis.build import from_matrix, from_triples
from markov_oca.analysis.general import analyse
from markov_oca.linalg.topological import TopologicalSystem


def small_cycles(n_t: int, block: int, seed: int, exact: bool = False):
    """``n_t`` transient states in blocks of ``block`` (``n_t`` a multiple of it; each block a cycle), every
    state stepping to the next in its block (the last one also to the next block), to two random states of
    later blocks (or the ends) and to one of the two absorbing states ``n_t`` ("good") and ``n_t + 1``
    ("bad"), with random weights of 1 to 3. Returns (n, rows, cols, vals), fractions when ``exact``."""
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for s in range(n_t):
        b0 = s - s % block
        inside = [b0 + (s - b0 + 1) % block] if block > 1 else []
        if s == b0 + block - 1 and s + 1 < n_t:
            inside.append(s + 1)  # the block's last state steps on to the next block: every state is reached
        ahead = [int(x) for x in rng.integers(min(b0 + block, n_t), n_t + 2, size=2)] if b0 + block < n_t else []
        targets = inside + ahead + [n_t + int(rng.integers(0, 2))]
        weights = rng.integers(1, 4, size=len(targets))
        total = int(weights.sum())
        for t, w in zip(targets, weights, strict=True):
            rows.append(s)
            cols.append(t)
            vals.append(F(int(w), total) if exact else w / total)
    n = n_t + 2
    rows += [n_t, n_t + 1]
    cols += [n_t, n_t + 1]
    vals += [F(1), F(1)] if exact else [1.0, 1.0]
    return n, np.array(rows), np.array(cols), vals


def _dense(n, rows, cols, vals):
    P = np.zeros((n, n))
    np.add.at(P, (rows, cols), np.array([float(v) for v in vals]))
    return P


@pytest.mark.parametrize("block", [1, 3, 5])
def test_forward_and_adjoint_agree_with_a_dense_solve(block):
    n, rows, cols, vals = small_cycles(300, block, seed=block)
    chain = from_triples(n, rows, cols, vals, init=0)
    active = np.arange(n) < 300
    topo = TopologicalSystem(chain.next, chain.pnum, chain.denom, active)
    assert topo.largest == block and topo.components == 300 // block
    P = _dense(n, rows, cols, vals)
    A = np.eye(300) - P[:300, :300]
    rng = np.random.default_rng(0)
    b = np.zeros((n, 3))
    b[:300] = rng.random((300, 3))
    x, v = topo.forward(b), topo.adjoint(b)
    assert np.abs(x[:300] - np.linalg.solve(A, b[:300])).max() <= 1e-13 * np.abs(x).max()
    assert np.abs(v[:300] - np.linalg.solve(A.T, b[:300])).max() <= 1e-13 * np.abs(v).max()
    assert (x[300:] == 0).all() and (v[300:] == 0).all()
    assert np.array_equal(topo.forward(b[:, 1]), x[:, 1]) and np.array_equal(topo.adjoint(b[:, 2]), v[:, 2])


def test_a_large_component_is_refused():
    n, rows, cols, vals = small_cycles(100, 100, seed=1)
    chain = from_triples(n, rows, cols, vals, init=0)
    topo = TopologicalSystem(chain.next, chain.pnum, chain.denom, np.arange(n) < 100, limit=64)
    assert topo.largest == 100 and not topo.ok
    assert absorbing.topological(chain, np.arange(n) < 100) is None


@pytest.mark.parametrize("block", [1, 4])
def test_analysis_by_components_within_its_bounds_of_the_exact_figures(block):
    # 2,000 transient states (above the direct solver's limit): the float analysis goes by components and
    # each figure lies within its certified bound of the exact fraction.
    n, rows, cols, vals = small_cycles(2_000, block, seed=10 + block, exact=True)
    labels = {"good": [2_000], "bad": [2_001]}
    chain = from_triples(n, rows, cols, vals, init=0, labels=labels)
    fl = analyse(chain, exact=False, hit=["good"], length=False)
    assert all("topological order" in s["method"] for s in fl.solver)
    ex = analyse(from_triples(n, rows, cols, vals, init=0, labels=labels), exact=True, hit=["good"], length=False)
    for c in fl.classes:
        e = next(k for k in ex.classes if k.name == c.name)
        assert abs(c.absorption - float(e.absorption)) <= c.bound <= 1e-12
        assert abs(c.steps_given - float(e.steps_given)) <= c.steps_given_bound <= 1e-9 * c.steps_given
    assert abs(fl.steps - float(ex.steps)) <= fl.bounds["steps"] <= 1e-9 * fl.steps
    m, me = fl.moments["steps"], ex.moments["steps"]
    assert abs(m.variance - float(me.variance)) <= m.variance_bound
    assert abs(fl.hitting["good"] - float(ex.hitting["good"])) <= fl.bounds["hitting good"] <= 1e-12


def test_analysis_by_components_agrees_with_the_iterative_route(monkeypatch):
    n, rows, cols, vals = small_cycles(3_000, 5, seed=7)
    labels = {"good": [3_000]}
    by_components = analyse(from_triples(n, rows, cols, vals, init=0, labels=labels), hit=["good"])
    monkeypatch.setattr(absorbing, "COMPONENT_LIMIT", 0)  # every component too large: BiCGSTAB
    iterative = analyse(from_triples(n, rows, cols, vals, init=0, labels=labels), hit=["good"])
    assert all("BiCGSTAB" in s["method"] for s in iterative.solver)
    assert all("topological" in s["method"] for s in by_components.solver)
    for a, b in zip(by_components.classes, iterative.classes, strict=True):
        assert abs(a.absorption - b.absorption) <= a.bound + b.bound
        assert abs(a.steps_given - b.steps_given) <= a.steps_given_bound + b.steps_given_bound
    assert abs(by_components.steps - iterative.steps) <= by_components.bounds["steps"] + iterative.bounds["steps"]
    assert abs(by_components.hitting["good"] - iterative.hitting["good"]) <= 1e-12
    assert by_components.length.pmf == pytest.approx(iterative.length.pmf, abs=1e-15)


def test_tiny_absorption_probabilities_get_relative_bounds():
    # A line of 2,000 states, each stepping on with 1 - 3e-15 (about) and ending "rare" with about 1e-15:
    # P(rare) is about 2e-12, far below the residual route's absolute bound (about 1e-13).
    n_t = 2_000
    eps = F(1, 2 ** 50)
    rows, cols, vals = [], [], []
    for s in range(n_t):
        rows += [s, s]
        cols += [s + 1 if s + 1 < n_t else n_t, n_t + 1]
        vals += [1 - eps, eps]
    rows += [n_t, n_t + 1]
    cols += [n_t, n_t + 1]
    vals += [F(1), F(1)]
    labels = {"done": [n_t], "rare": [n_t + 1]}
    chain = from_triples(n_t + 2, np.array(rows), np.array(cols), vals, init=0, labels=labels)
    fl = analyse(chain, exact=False, length=False)
    assert fl.route is None
    rare = next(c for c in fl.classes if c.name == "rare")
    exact = 1 - (1 - eps) ** n_t
    assert abs(F(rare.absorption) - exact) <= F(rare.bound) and rare.bound <= 1e-10 * rare.absorption
    ex = analyse(from_triples(n_t + 2, np.array(rows), np.array(cols), vals, init=0, labels=labels), exact=True,
                 length=False)
    e = next(c for c in ex.classes if c.name == "rare")
    assert e.absorption == exact
    assert abs(rare.steps_given - float(e.steps_given)) <= rare.steps_given_bound <= 1e-9 * rare.steps_given


def test_from_matrix_acyclic_exact_fractions():
    # 0 -> 1 (1/2), 0 -> 2 (1/2); 1 -> 2 (1/3), 1 -> 3 (2/3); 2 -> 3 (1/4), 2 -> 4 (3/4); 3, 4 absorbing.
    P = [[0, F(1, 2), F(1, 2), 0, 0], [0, 0, F(1, 3), F(2, 3), 0], [0, 0, 0, F(1, 4), F(3, 4)],
         [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]]
    chain = from_matrix(P, init=0)
    topo = TopologicalSystem(chain.next, chain.pnum, chain.denom, np.array([True, True, True, False, False]))
    v = topo.adjoint(np.array([1.0, 0, 0, 0, 0]))  # expected visits: 1, 1/2, 1/2 + 1/2 * 1/3
    assert v[0] == 1.0 and v[1] == 0.5 and abs(v[2] - 2 / 3) <= 1e-16 and v[3] == v[4] == 0.0
    x = topo.forward(np.array([1.0, 1, 1, 0, 0]))  # expected steps: 1 from 2, 1 + 1/3 from 1, 1 + (4/3 + 1) / 2
    assert x[2] == 1.0 and abs(x[1] - 4 / 3) <= 1e-15 and abs(x[0] - 13 / 6) <= 1e-15
