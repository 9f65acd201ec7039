"""A chain with one very wide row holds its rows packed (CSR): the float analysis runs at the packed size with
the same figures as from the padded table; the exact route builds that table, or is refused up front when it
does not fit."""

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import markov_oca.analysis.build as build
from markov_oca.analysis.branches import classes_of, strong_classes
from markov_oca.analysis.general import analyse
from markov_oca.core.errors import TooLargeError
from markov_oca.core.memory import set_max_memory
from markov_oca.linalg.rows import n_states, padded_rows, span
from markov_oca.linalg.system import LinearSystem

N = 300  # states 0..N-1 transient, N absorbing


def hub_entries(seed: int = 7) -> dict[tuple[int, int], Fraction]:
    """State 0 steps to every transient state; each other state to 0, to two random states, or to the end."""
    rng = np.random.default_rng(seed)
    out = {(0, t): Fraction(1, N - 1) for t in range(1, N)}
    for s in range(1, N):
        a, b = rng.integers(1, N, 2)
        for t in (0, int(a), int(b), N):
            out[s, t] = out.get((s, t), Fraction(0)) + Fraction(1, 4)
    out[N, N] = Fraction(1)
    return out


def hub_matrix() -> sp.csr_array:
    e = hub_entries()
    return sp.csr_array(([float(v) for v in e.values()], tuple(zip(*e.keys(), strict=True))), shape=(N + 1, N + 1))


def _hub_chain():
    dense = [[Fraction(0)] * (N + 1) for _ in range(N + 1)]
    for (s, t), v in hub_entries().items():
        dense[s][t] = v
    return build.from_matrix(dense, init=0, rewards={"cost": [s % 3 for s in range(N + 1)]})


@pytest.fixture
def chains(monkeypatch):
    padded = _hub_chain()
    monkeypatch.setattr(build, "PACK_BYTES", 0)
    monkeypatch.setattr(build, "PACK_RATIO", 1)
    return padded, _hub_chain()


def test_a_wide_row_is_held_packed(chains):
    padded, packed = chains
    assert not padded.packed and packed.packed
    assert "next" not in packed.__dict__  # the padded table is not built to answer these
    m = hub_matrix()
    m.sum_duplicates()
    assert packed.n == N + 1 and packed.n_transitions == padded.n_transitions == m.nnz
    assert (packed.P != padded.P).nnz == 0
    label, closed = packed.strong_classes
    ref_label, ref_closed = strong_classes(padded.next, padded.pnum, padded.denom)
    assert np.array_equal(closed[label], ref_closed[ref_label])
    assert np.array_equal(*[classes_of(c.P, c.rows)[1][classes_of(c.P, c.rows)[0]] for c in (padded, packed)])


@pytest.mark.parametrize("method", ["direct", "bicgstab"])
def test_packed_and_padded_systems_solve_alike(chains, method):
    padded, packed = chains
    active = padded.structure.transient
    b = np.where(active, 1.0, 0.0)
    x1, r1 = LinearSystem(padded.next, padded.pnum, padded.denom, active, method=method).solve(b)
    x2, r2 = LinearSystem(None, None, packed.denom, active, method=method, rows=packed.rows).solve(b)
    assert r1.residual < 1e-12 and r2.residual < 1e-12
    assert np.abs(x1 - x2).max() < 1e-10 * x1.max()
    assert x1[N] == x2[N] == 0.0


def test_expected_from_every_state_agree_within_their_bounds(chains):
    padded, packed = chains
    a = [analyse(padded, init=s, only="expected", exact=False) for s in (0, 1, 57, N)]
    b = [analyse(packed, init=s, only="expected", exact=False) for s in (0, 1, 57, N)]
    assert "next" not in packed.__dict__
    for x, y in zip(a, b, strict=True):
        assert abs(x.steps - y.steps) <= x.bounds["steps"] + y.bounds["steps"]
        assert abs(x.rewards["cost"]["total"] - y.rewards["cost"]["total"]) <= \
            x.rewards["cost"]["bound"] + y.rewards["cost"]["bound"]
    assert b[-1].steps == 0.0 and b[0].steps > b[1].steps - 1  # from the end: none; from the hub: one more step


def test_the_full_float_analysis_runs_on_packed_rows_and_agrees(chains):
    padded, packed = chains
    x, y = analyse(padded, exact=False), analyse(packed, exact=False)
    assert "next" not in packed.__dict__  # classes, visits, moments, given-class figures and the push: all packed
    assert abs(x.steps - y.steps) <= x.bounds["steps"] + y.bounds["steps"]
    for name in x.outcomes:
        assert abs(x.outcomes[name] - y.outcomes[name]) <= x.outcome_bounds[name] + y.outcome_bounds[name]
    for name in ("steps", "cost"):
        mx, my = x.moments[name], y.moments[name]
        assert abs(mx.variance - my.variance) <= mx.variance_bound + my.variance_bound
    assert y.length.median == x.length.median and y.length.p99 == x.length.p99
    assert np.allclose(y.length.pmf[:50], x.length.pmf[:50], rtol=1e-12, atol=1e-300)
    assert abs(float(np.dot(y.visits, np.ones(N + 1))) - y.steps) < 1e-9 * y.steps


def test_the_exact_route_builds_the_padded_table(chains):
    padded, packed = chains
    x, y = analyse(padded, exact=True), analyse(packed, exact=True)
    assert isinstance(y.steps, Fraction) and y.steps == x.steps and y.outcomes == x.outcomes
    assert "next" in packed.__dict__
    f = analyse(packed, exact=False)
    assert abs(Fraction(f.steps) - y.steps) <= Fraction(f.bounds["steps"])


def test_a_padded_table_that_does_not_fit_is_refused_but_the_expected_steps_are_answered(chains):
    _, packed = chains
    set_max_memory(N * N * 12 // 2)  # the padded table (N + 1) * (N - 1) * 12 bytes does not fit
    try:
        got = analyse(packed, init=0, only="expected", exact=False)
        assert got.steps > 1 and got.bounds["steps"] < 1e-9 * got.steps
        assert analyse(packed, init=0, exact=False).steps == pytest.approx(got.steps, rel=1e-9)
        with pytest.raises(TooLargeError, match=r"padded to the widest.*without --exact"):
            analyse(packed, init=0, exact=True)
    finally:
        set_max_memory(None)


def test_padded_rows_are_views_of_the_table():
    nxt = np.array([[1, 2, -1], [0, -1, -1]], np.int32)
    rows = padded_rows(nxt, np.array([[1, 1, 0], [2, 0, 0]], np.int64))
    assert np.shares_memory(rows.nxt, nxt)
    assert rows.lo.size == 0 and rows.hi.tolist() == [3]  # nothing allocated per state
    assert [span(*rows[:3], s) for s in (0, 1)] == [(0, 2), (3, 4)] and n_states(*rows[:3]) == 2
    assert rows.widths().tolist() == [2, 1] and rows.widest() == 3 and rows.owners().tolist() == [0, 0, 0, 1, 1, 1]


def test_hitting_probabilities_are_answered_from_packed_rows(chains):
    padded, packed = chains
    for s in (0, 5):
        x = analyse(padded, init=s, hit={"few": [1, 2, 3]}, only="hit", exact=False)
        y = analyse(packed, init=s, hit={"few": [1, 2, 3]}, only="hit", exact=False)
        assert abs(x.hitting["few"] - y.hitting["few"]) <= x.bounds["hitting few"] + y.bounds["hitting few"]
        assert 0 < y.hitting["few"] < 1 and y.bounds["hitting few"] < 1e-9 * y.hitting["few"]
    assert "next" not in packed.__dict__


@pytest.mark.parametrize("method", [0, 10**9])
def test_packed_adjoint_systems_solve_alike(chains, method, monkeypatch):
    from markov_oca.linalg import adjoint
    monkeypatch.setattr(adjoint, "DIRECT_LIMIT", method)  # 0: the iterative driver; else the LU
    padded, packed = chains
    active = padded.structure.transient
    e = np.zeros(N + 1)
    e[0] = 1.0
    v1, r1 = adjoint.AdjointSystem(padded.next, padded.pnum, padded.denom, active, padded.order()).solve(e)
    v2, r2 = adjoint.AdjointSystem(None, None, packed.denom, active, packed.order(), rows=packed.rows).solve(e)
    assert r1.residual < 1e-12 and r2.residual < 1e-12
    assert np.abs(v1 - v2).max() < 1e-10 * v1.max() and v2[N] == 0.0


def test_a_wide_rows_rounding_weighs_by_the_visits_to_it():
    """A hub with k branches has a rounding allowance about k**2 times a short row's (k terms, each as large as
    the figures). Times ||N|| (2k) it misses 1e-9 relative from every state; solved state by state
    (Forward.sharpen), a state that never visits the hub has the short rows' bound alone, and the hub its own
    allowance once."""
    k = 3000
    rows = [0] * k + list(range(2, k + 1)) + list(range(2, k + 1)) + [1, 1, k + 1]
    cols = list(range(1, k + 1)) + list(range(1, k)) + list(range(2, k + 1)) + [1, k + 1, k + 1]
    vals = [1.0 / k] * k + [0.5] * (2 * (k - 1)) + [0.5, 0.5, 1.0]
    chain = build.from_triples(k + 2, np.array(rows), np.array(cols), np.array(vals), init=k)
    got = analyse(chain, init=k, only="expected", exact=False)
    assert got.steps == pytest.approx(2 * k, rel=1e-12) and got.bounds["steps"] <= 1e-10 * got.steps
    assert got.solver[0].get("sharpened")  # the norm-wide bound missed: ||N|| times the hub's allowance
    hub = analyse(chain, init=0, only="expected", exact=False)  # the hub's own figure
    assert abs(hub.steps - (1 + (k + 1))) <= hub.bounds["steps"] <= 1e-9 * hub.steps
