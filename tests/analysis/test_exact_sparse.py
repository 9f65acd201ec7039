"""The sparse exact solver (Dixon lifting, certificate) against closed forms, the dense path and floats."""

from __future__ import annotations

import sys
from decimal import Decimal, getcontext
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from support import board

from markov_oca.analysis.chain import Chain
from markov_oca.analysis.exact import EXACT_LIMIT, ExactChain
from markov_oca.core.errors import TooLargeError
from markov_oca.goose.model import goose_model
from markov_oca.rational import refine as refine_module
from markov_oca.rational.sparse import (
    Coupling,
    DixonSolver,
    RefineSolver,
    _int_from_digits,
    approx_reconstruct,
    rational_reconstruct,
)

ROOT = Path(__file__).resolve().parents[2]


def ruin_matrix(target: int, up: int, down: int):
    """Gambler's ruin on 1..target-1 (win ``up``/(up+down)), as ``A = D (I - Q)`` and ``D b``."""
    n = target - 1
    d = up + down
    A = sp.lil_array((n, n), dtype=np.int64)
    for i in range(n):
        A[i, i] = d
        if i + 1 < n:
            A[i, i + 1] = -up
        if i > 0:
            A[i, i - 1] = -down
    b = np.zeros((n, 1), np.int64)
    b[n - 1, 0] = up
    return sp.csr_array(A), b


SOLVERS = [DixonSolver, RefineSolver]


@pytest.mark.parametrize("solver", SOLVERS)
def test_gamblers_ruin_closed_form(solver):
    # P(reach N from i) = (1 - r**i) / (1 - r**N), r = down/up: with r = 3/2 and N = 400 the
    # fractions have about 140 digits, so the lifting takes several steps and checkpoints.
    target, up, down = 400, 2, 3
    A, b = ruin_matrix(target, up, down)
    r = F(down, up)
    starts = [1, 3, 200, 399]
    got = solver(A).solve(b, np.array(starts) - 1)[0]
    want = [(1 - r**i) / (1 - r**target) for i in starts]
    assert got == want
    assert len(str(want[0].denominator)) > 100


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_denominator_the_wanted_rows_lack_is_found(solver):
    # Two uncoupled blocks: the wanted row's value is 1/3, the other row's 1/7. With the wanted
    # row's 3 alone the certificate (A z = 3 b with a zero residual) would fail; the random
    # combination of all rows brings the 7 in.
    A = sp.csr_array(np.array([[3, 0], [0, 7]]))
    s = solver(A)
    assert s.solve(np.array([[1], [1]]), np.array([0])) == [[F(1, 3)]]
    assert s.solve(np.array([[1], [1]]), None) == [[F(1, 3), F(1, 7)]]


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_denominator_of_another_class_is_found(solver):
    # The start's class alone has denominator 3; the class {1, 2} below it has 14.
    A = sp.csr_array(np.array([[3, 0, 0], [0, 4, -1], [0, -2, 4]]))
    s = solver(A)
    assert s.solve(np.array([[1], [1], [1]]), np.array([0])) == [[F(1, 3)]]
    assert s.solve(np.array([[1], [1], [1]]), None) == [[F(1, 3), F(5, 14), F(3, 7)]]


def test_a_wrong_denominator_fails_the_certificate():
    A = sp.csr_array(np.array([[3, 0, 0], [0, 4, -1], [0, -2, 4]]))
    s = DixonSolver(A)
    Bp = np.ascontiguousarray(np.array([[1], [1], [1]])[s.order])
    couple = s._coupling_arrays([])
    assert not s._certify(Bp, 3, couple, 1)
    assert not s._certify(Bp, 14, couple, 1)
    assert s._certify(Bp, 42, couple, 1)


@pytest.mark.parametrize("solver", SOLVERS)
def test_coupled_columns_solve_the_block_system(solver):
    # x = A^-1 b and y = A^-1 (c + C x) on a 3-state chain, against FLINT's dense solve.
    import flint

    A = sp.csr_array(np.array([[6, -2, -1], [-1, 6, -3], [0, -2, 6]]))
    b = np.array([1, 2, 3])
    C = sp.csr_array(np.array([[2, 0, 1], [0, 3, 0], [1, 1, 1]]))
    c = np.array([0, 1, 0])
    s = solver(A)
    x_sol, y_sol = s.solve(np.column_stack([b, c]), None, [Coupling(C, [0])])
    Af = flint.fmpq_mat(A.toarray().tolist())
    x = Af.solve(flint.fmpq_mat([[int(v)] for v in b]))
    rhs = [int(c[i]) + sum(int(C[i, j]) * x[j, 0] for j in range(3)) for i in range(3)]
    y = Af.solve(flint.fmpq_mat([[v] for v in rhs]))
    assert x_sol == [F(int(x[i, 0].p), int(x[i, 0].q)) for i in range(3)]
    assert y_sol == [F(int(y[i, 0].p), int(y[i, 0].q)) for i in range(3)]


def test_refinement_takes_signed_columns_and_couplings():
    # a signed right-hand side and a signed coupling, against FLINT's dense solve
    import flint

    A = sp.csr_array(np.array([[6, -2, -1, 0], [-1, 6, -3, -1], [0, -2, 6, -1], [-3, 0, 0, 4]]))
    b = np.array([5, -2, 0, -7])
    C = sp.csr_array(np.array([[0, -1, 1, 0], [2, 0, 0, -3], [0, 0, 0, 0], [1, 1, 1, 1]]))
    c = np.array([-1, 0, 4, 0])
    x_sol, y_sol = RefineSolver(A).solve(np.column_stack([b, c]), None, [Coupling(C, [0])])
    Af = flint.fmpq_mat(A.toarray().tolist())
    x = Af.solve(flint.fmpq_mat([[int(v)] for v in b]))
    y = Af.solve(flint.fmpq_mat([[int(c[i]) + sum(int(C[i, j]) * x[j, 0] for j in range(4))] for i in range(4)]))
    assert x_sol == [F(int(x[i, 0].p), int(x[i, 0].q)) for i in range(4)]
    assert y_sol == [F(int(y[i, 0].p), int(y[i, 0].q)) for i in range(4)]
    assert any(v < 0 for v in x_sol)


def test_a_wrong_denominator_fails_the_exact_check():
    # round(d X / 2**S) with d = 3 or 14 is no integer solution of A z = d b; d = 42 is, and gives the fractions
    A = sp.csr_array(np.array([[3, 0, 0], [0, 4, -1], [0, -2, 4]]))
    s = RefineSolver(A)
    Bp = np.ascontiguousarray(np.array([[1], [1], [1]])[s.order])
    x = np.array([1 / 3, 5 / 14, 3 / 7])[s.order]
    digits = [np.stack([np.rint(np.ldexp(x, 48)).astype(np.int64)])[:, s.ni:, None]]
    wpos = s.perm[[0, 1, 2]]
    assert s._certify(Bp, digits, [48], [3], [], [], wpos, 1.0) is None
    assert s._certify(Bp, digits, [48], [14], [], [], wpos, 1.0) is None
    assert s._certify(Bp, digits, [48], [42], [], [], wpos, 1.0) == [[F(1, 3), F(5, 14), F(3, 7)]]
    assert s._certify(Bp, digits, [48], [42 * 2**20], [], [], wpos, 1.0) == "short"  # 48 bits cannot round that


def test_refinement_falls_back_to_lifting(monkeypatch):
    # a float solve that gains no bits (forced here) leaves the answer to the p-adic lifting
    monkeypatch.setattr(refine_module, "_refine", lambda *a: (0, 1))
    A, b = ruin_matrix(30, 2, 3)
    s = RefineSolver(A)
    r = F(3, 2)
    assert s.solve(b, np.array([0]))[0] == [(1 - r) / (1 - r**30)]
    assert "fell back" in s.report.ordering


def test_approximate_reconstruction():
    for num, den in [(0, 1), (1, 3), (-5, 7), (13717421, 109739369), (70, 3), (-1, 1)]:
        bits = 120
        v = (num << bits) // den
        assert approx_reconstruct(v, bits) == (num, den)
        assert approx_reconstruct(v + 5, bits) == (num, den)
    assert approx_reconstruct((1 << 60) // 3, 40) is None  # too few bits for 2**60 / 3 to show


def test_digits_to_integers():
    rng = np.random.default_rng(7)
    shifts = [48, 40, 48, 8, 24]
    digits = rng.integers(-(1 << 50), 1 << 50, (len(shifts), 6))
    got, top = _int_from_digits(digits, shifts)
    want = []
    for i in range(6):
        v = 0
        for t, s_ in enumerate(shifts):
            v = (v << (s_ if t else 0)) + int(digits[t, i])
        want.append(v)
    assert got == want and top == sum(shifts[1:])


def test_limb_arithmetic_of_the_exact_check():
    # two's complement 24-bit limbs: round trip, carries, and exact division of signed values
    from markov_oca.rational.sparse import _from_limbs, _limb_divide, _normalise, _to_limbs

    vals = [0, 1, -1, 7 * 2**100 + 5, -(3**90) * 7, 2**71 - 1]
    K = 8
    Z = _to_limbs(vals, K)
    assert [_from_limbs(row) for row in Z] == vals
    W = _normalise(Z * 3 - _to_limbs([1] * len(vals), K))  # 3 v - 1, carried
    assert [_from_limbs(row) for row in W] == [3 * v - 1 for v in vals]
    q = _limb_divide(_normalise(Z * 7), np.full(len(vals), 7))
    assert [_from_limbs(row) for row in q] == vals
    assert _limb_divide(W, np.full(len(vals), 3)) is None  # 3 v - 1 is not a multiple of 3


def test_rational_reconstruction():
    m = 67108859**8
    for n, d in [(0, 1), (1, 3), (-5, 7), (13717421, 109739369)]:
        assert rational_reconstruct(n * pow(d, -1, m) % m, m) == (n, d)
    assert rational_reconstruct(pow(3, -1, 101), 101) == (1, 3)


@pytest.mark.parametrize("method", ["refine", "dixon"])
def test_coin_race_two_players_sparse_matches_hand_derivation(method):
    # tests/test_tiny_boards.py: seat 1 wins 2/3, expected turns 2, rounds 4/3.
    rules = board(2)
    chain = goose_model(rules, 2).build()
    ex = ExactChain(chain, method)
    assert ex.sparse
    p = ex.outcome_probabilities()
    assert p == {"seat 1 wins": F(2, 3), "seat 2 wins": F(1, 3), "deadlock": 0}
    e = ex.expected({"turns": chain.state_rewards["turns"], "rounds": chain.state_rewards["rounds"]})
    assert e["turns"] == (2, 2) and e["rounds"] == (F(4, 3), F(4, 3))


@pytest.mark.parametrize("method", ["refine", "dixon"])
@pytest.mark.parametrize("squares,rules", [
    ({3: {"jump": 1}, 5: {"jump": 2}}, {"occupancy": "occupant-returns"}),
    ({2: {"wait": True}, 5: {"wait": True}, 4: {"jump": 6}}, {}),  # both held in wells: a deadlock
])
def test_sparse_equals_dense_on_a_small_two_player_board(squares, rules, method):
    # Every analysis, including the expectations conditioned on the end (coupled columns)
    # when there is a deadlock, and a signed reward (split into two columns for the lifting).
    rb = board(7, squares, faces=3, **rules)
    chain = goose_model(rb, 2).build()
    dense, sparse = ExactChain(chain, "dense"), ExactChain(chain, method)
    vals = {"turns": chain.state_rewards["turns"], "throws": chain.branch_rewards["throws"],
            "signed": np.where(chain.mover == 0, 1, -2).astype(np.int64)}
    assert sparse.outcome_probabilities() == dense.outcome_probabilities()
    assert sum(sparse.outcome_probabilities().values()) == 1
    assert sparse.expected(vals) == dense.expected(vals)
    fl = chain.expected(vals)
    for k in vals:
        for a, b in zip(sparse.expected(vals)[k], fl[k], strict=True):
            assert (a == b or (np.isnan(a) and np.isnan(b))) if isinstance(a, float) else abs(float(a) - b) < 1e-12
    m = goose_model(rb, 2)
    key, table = m.landing_events(chain, 0)
    assert sparse.hitting_probabilities(key, table[:, :4]) == dense.hitting_probabilities(key, table[:, :4])


def test_well_board_has_a_deadlock():
    # the second board above must exercise the coupled columns
    chain = goose_model(board(7, {2: {"wait": True}, 5: {"wait": True}, 4: {"jump": 6}}, faces=3), 2).build()
    assert chain.structure.deadlock.any()


def test_too_large_is_refused_up_front_with_an_estimate():
    n = EXACT_LIMIT + 2
    nxt = np.full((n, 1), -1, np.int32)
    nxt[:-1, 0] = np.arange(1, n)
    nxt[-1, 0] = n - 1
    chain = Chain(next=nxt, pnum=np.ones((n, 1), np.int32), denom=1, init=0, outcomes={"end": n - 1},
                  players=1, mover=np.zeros(n, np.int8))
    with pytest.raises(TooLargeError, match=r"estimated .* GiB"):
        ExactChain(chain)


@pytest.mark.slow
def test_snakes_and_ladders_48_matches_the_published_digits():
    # The public notebook's 2-player first-player chance (gmpy2, 99 minutes): 50 digits and
    # a numerator of 4,453 digits.
    from markov_oca.api import build

    sys.set_int_max_str_digits(0)
    chain = build(ROOT / "examples" / "snakes_and_ladders_48.toml", players=2)
    p = ExactChain(chain).outcome_probabilities()
    first = p["seat 1 wins"]
    getcontext().prec = 80
    value = (Decimal(first.numerator) / Decimal(first.denominator)).quantize(Decimal(1).scaleb(-50))
    assert str(value) == "0.50780277346091397787392387841954080716542767187942"
    assert len(str(first.numerator)) == 4453
    assert sum(p.values()) == 1
    assert abs(float(first) - chain.outcome_probabilities()["seat 1 wins"]) < 1e-12


def test_one_piece_ur_certificate_matches_the_policy_chain():
    from markov_oca.ur.certify import certify_optimal
    from markov_oca.ur.chain import ur_chain
    from markov_oca.ur.optimal import solve_optimal
    from markov_oca.ur.rules import load_ur

    rules = load_ur("ur", {"pieces": 1})
    values = solve_optimal(rules).values
    cert = certify_optimal(rules, values)
    assert cert.optimal and cert.improving == 0
    assert abs(float(cert.value) - cert.float_value) < 1e-12 and cert.max_float_gap < 1e-11
    chain = ur_chain(rules, "optimal", "optimal", values)
    p = ExactChain(chain).outcome_probabilities()
    assert p["light wins"] == cert.value
    assert sum(p.values()) == 1


@pytest.mark.slow
def test_two_piece_ur_certificate():
    # about 8 s of CPU: 12,869 positions, an 11,692-digit denominator, 30,301 choices checked
    from markov_oca.ur.certify import certify_optimal
    from markov_oca.ur.rules import load_ur

    cert = certify_optimal(load_ur("ur", {"pieces": 2}))
    assert cert.optimal and cert.decisions > 30_000
    assert abs(float(cert.value) - cert.float_value) < 1e-12


def test_fractions_of_thousands_of_digits_print_without_raising_the_digit_limit():
    # Python 3.11 refuses to print an int of more than 4,300 digits; S&L-48's fractions have 4,453.
    # The library prints them without touching that process-wide limit.
    from markov_oca.analysis.results import number
    from markov_oca.engine.text import fmt

    limit = sys.get_int_max_str_digits()
    x = F(10**5000 + 1, 3 * 10**5000)
    top = "1" + "0" * 4999 + "1"
    bottom = "3" + "0" * 5000
    assert fmt(x).startswith("0.333333") and f"{top}/{bottom}" in fmt(x)
    assert number(x)["fraction"] == f"{top}/{bottom}"
    assert sys.get_int_max_str_digits() == limit
