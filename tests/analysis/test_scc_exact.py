"""Exact solves by strongly connected components in topological order: against whole dense solves, by hand,
and against the certified float figures."""

from __future__ import annotations

from fractions import Fraction as F

import flint
import numpy as np
import pytest
import scipy.sparse as sp

from benchmarks.bench_any_chain import retransmission
from markov_oca.analysis import general
from markov_oca.analysis.absorbing import hitting_probability
from markov_oca.analysis.build import from_matrix, from_triples
from markov_oca.analysis.general import analyse
from markov_oca.core.errors import TooLargeError
from markov_oca.rational.blocks import BlockSolver, condensation_order


def _clustered(rng, n: int, big: int) -> np.ndarray:
    """An integer ``D (I - Q)`` (``D = 60``) on ``n`` states: a forward chain of clusters of 1 to 3 states and
    one of ``big`` states, each cluster a ring with a few more edges inside and ways out."""
    d = 60
    a = np.zeros((n, n), np.int64)
    cuts = np.sort(rng.choice(np.arange(1, n - big), size=n // 3, replace=False))
    cuts = np.unique(np.concatenate([cuts, [n - big, n]]))
    lo = 0
    for hi in cuts.tolist():
        for i in range(lo, hi):
            a[i, i] = d
            if hi - lo > 1:
                a[i, lo + (i - lo + 1) % (hi - lo)] -= 5
            inside = rng.integers(lo, hi, size=2)
            later = rng.integers(hi, n + 3, size=2)  # n.. stands for leaving the system
            for j, w in zip([*inside, *later], [15, 10, 12, 13], strict=True):
                if j < n and j != i:
                    a[i, j] -= w
        lo = hi
    return a


def _dense(a: np.ndarray, cols: list[list[int]]) -> list[list[F]]:
    x = flint.fmpq_mat(a.tolist()).solve(flint.fmpq_mat([list(r) for r in zip(*cols, strict=True)]))
    return [[F(int(x[i, c].p), int(x[i, c].q)) for i in range(x.nrows())] for c in range(x.ncols())]


def _fractions(cols) -> list[list[F]]:
    return [[F(int(v.p), int(v.q)) for v in col] for col in cols]


def test_condensation_order_puts_every_edge_downstream():
    rng = np.random.default_rng(3)
    a = _clustered(rng, 80, 12)
    label, order = condensation_order(sp.csr_array(a))
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    i, j = np.nonzero(a)
    cross = label[i] != label[j]
    assert cross.any() and (rank[label[j][cross]] < rank[label[i][cross]]).all()
    assert np.bincount(label).max() >= 12 and order.size > 20


@pytest.mark.parametrize("seed", [0, 1])
def test_block_solver_equals_one_dense_solve(seed):
    rng = np.random.default_rng(seed)
    a = _clustered(rng, 60, 9)
    cols = [rng.integers(-5, 9, size=60).tolist(), [0] * 59 + [60]]
    s = BlockSolver(sp.csr_array(a))
    assert s.largest >= 9 and 1 < s.components < 60
    assert _fractions(s.solve(cols)) == _dense(a, cols)
    assert _fractions(s.transpose().solve(cols)) == _dense(a.T.copy(), cols)
    # fractions on the right-hand side too
    half = [F(1, 2)] * 60
    assert _fractions(s.solve([half]))[0] == [x / 2 for x in _dense(a, [[1] * 60])[0]]


def _reference(chunks: int, retries: int):
    """The retransmission chain's figures from one dense solve of all its transient states (FLINT)."""
    n, rows, cols, vals, labels = retransmission(chunks, retries)
    ends = [labels["ok"][0], labels["nok"][0], labels["dk"][0]]
    m = n - 3  # the three ends are the last states
    q = [[flint.fmpq(0)] * n for _ in range(n)]
    for r, c, v in zip(rows.tolist(), cols.tolist(), vals, strict=True):
        q[r][c] += flint.fmpq(v.numerator, v.denominator)
    eye = flint.fmpq_mat([[int(i == j) - q[i][j] for j in range(m)] for i in range(m)])

    def solve(b):
        x = eye.solve(flint.fmpq_mat([[flint.fmpq(v.numerator, v.denominator)] for v in b]))
        return [F(int(x[i, 0].p), int(x[i, 0].q)) for i in range(m)]

    h = {e: solve([F(int(q[i][e].p), int(q[i][e].q)) for i in range(m)]) for e in ends}
    t = solve([F(1)] * m)
    m2 = solve([2 * x - 1 for x in t])
    steps_given_ok = solve(h[ends[0]])[0] / h[ends[0]][0]
    # hitting the retries: the chain stopped there, the first attempts alone
    retry = set(labels["retry"])
    first = [i for i in range(m) if i not in retry]
    at = {s: k for k, s in enumerate(first)}
    stopped = flint.fmpq_mat([[int(i == j) - q[i][j] for j in first] for i in first])
    b = flint.fmpq_mat([[sum((q[i][j] for j in retry), flint.fmpq(0))] for i in first])
    hit = stopped.solve(b)[at[0], 0]
    return {"ok": h[ends[0]][0], "nok": h[ends[1]][0], "dk": h[ends[2]][0], "steps": t[0],
            "variance": m2[0] - t[0] ** 2, "steps given ok": steps_given_ok, "retry": F(int(hit.p), int(hit.q))}


def _chain(chunks: int, retries: int):
    n, rows, cols, vals, labels = retransmission(chunks, retries)
    return from_triples(n, rows, cols, vals, init=0, labels=labels)


def test_retransmission_by_hand():
    # One chunk, one attempt: delivered with 49/50, acknowledged with 94/95 once the wait (1/20) is over.
    r = analyse(_chain(1, 0), exact=True, hit=["retry"])
    assert r.outcomes == {"ok": F(49, 50) * F(94, 95), "nok": 0, "dk": 1 - F(49, 50) * F(94, 95)}
    # steps: send 1, deliver/check 2 * 10/9 when delivered, ack 20/19 then; lost 50/49, sync and wait 1/49 each
    lost = F(2, 100) + F(98, 100) * F(1, 95)
    assert r.steps == 1 + F(98, 100) * (2 * F(10, 9) + F(20, 19)) + lost * F(52, 49)
    assert r.hitting["retry"] == 0


def test_retransmission_exact_equals_one_dense_solve_and_the_floats():
    ref = _reference(3, 2)
    chain = _chain(3, 2)
    r = analyse(chain, exact=True, hit=["retry"])
    assert {k: r.outcomes[k] for k in ("ok", "nok", "dk")} == {k: ref[k] for k in ("ok", "nok", "dk")}
    assert r.steps == ref["steps"] and r.moments["steps"].variance == ref["variance"]
    assert r.classes[0].name == "ok" and r.classes[0].steps_given == ref["steps given ok"]
    assert r.hitting["retry"] == ref["retry"] and 0 < ref["retry"] < 1
    assert hitting_probability(chain, "retry", exact=True)[0] == ref["retry"]
    assert "the largest of 3 states" in r.solver[-1]["method"]
    # the certified floats hold the fractions within their bounds; dk is rare (about 3e-5)
    f = analyse(chain, exact=False, hit=["retry"])
    assert 1e-5 < ref["dk"] < 1e-4
    for k in f.classes:
        assert abs(F(k.absorption) - ref[k.name]) <= F(k.bound) and k.bound <= 1e-9 * ref[k.name]
    assert abs(F(f.steps) - ref["steps"]) <= F(f.bounds["steps"])
    assert abs(F(f.hitting["retry"]) - ref["retry"]) <= F(f.bounds["hitting retry"])


def test_almost_acyclic_chain_of_thousands_of_states_is_substitution():
    # 30 chunks of 6 attempts of 7 states: 1,263 states in 720 components of at most 3 states
    chain = _chain(30, 5)
    r = analyse(chain, exact=True, length=False)
    assert "(720, the largest of 3 states" in r.solver[-1]["method"]
    p = r.outcomes
    assert sum(p.values()) == 1 and p["ok"] == (1 - p["nok"] - p["dk"])
    f = analyse(chain, exact=False, length=False)
    assert all(abs(F(f.outcomes[k]) - p[k]) <= F(f.outcome_bounds[k]) for k in p)


def test_exact_refused_beyond_the_largest_component(monkeypatch):
    h = F(1, 2)
    P = [[0, h, 0, h], [h, 0, h, 0], [0, h, 0, h], [0, 0, 0, 1]]
    chain = from_matrix(P, init=0)
    assert analyse(chain, exact=True).outcomes == {"state 3": 1}
    monkeypatch.setattr(general, "BLOCK_LIMIT", 2)
    with pytest.raises(TooLargeError, match="at most 2; its largest has 3 states"):
        analyse(chain, exact=True)


def test_small_hitting_probability_gets_a_relative_bound():
    # Gambler's ruin on 0..40 winning with 3/10, from 1: reaching 39 has chance (r - 1) / (r^39 - 1), r = 7/3,
    # about 5e-15. The residual's 1-norm alone bounds it only absolutely; h from every state makes it relative.
    p, n = F(3, 10), 40
    P = [[F(0)] * (n + 1) for _ in range(n + 1)]
    P[0][0] = P[n][n] = F(1)
    for i in range(1, n):
        P[i][i + 1], P[i][i - 1] = p, 1 - p
    r = (1 - p) / p
    exact = (r - 1) / (r ** 39 - 1)
    chain = from_matrix(P, init=1)
    loose = hitting_probability(chain, [39])
    assert abs(F(loose[0]) - exact) <= F(loose[1]["bound"]) and loose[1]["bound"] > 1e-9 * float(exact)
    h, rep = hitting_probability(chain, [39], precision=1e-9)
    assert abs(F(h) - exact) <= F(rep["bound"]) <= F(1e-9) * exact
    res = analyse(chain, exact=False, hit={"far": [39]}, conditional=0)
    assert res.route is None and abs(F(res.hitting["far"]) - exact) <= F(res.bounds["hitting far"])
