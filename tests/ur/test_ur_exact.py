"""Exact Ur at the position level (markov_oca/ur/exact.py) and the certificate of optimal play."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from markov_oca.core.errors import SolverError, TooLargeError
from markov_oca.ur.exact import (
    mirror_systems,
    scc_blocks,
    side_system,
    solve_exact,
    solve_ur_exact,
    weakly_chained_dominant,
)
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace

ON_14 = 1 << 5  # private-square mask bit of path square 14
ON_13 = 1 << 4


@pytest.fixture(scope="module")
def one():
    return load_ur("ur", {"pieces": 1})


def test_one_piece_races_by_hand(one):
    # tests/test_ur_optimal.py derives them: from square 14 each the mover wins 4/7, from 13 against 14 116/161
    # (one piece has no choice, so every policy gives these)
    win, _ = mirror_systems(one, "random", reachable=False)
    sol = solve_exact(win.A, win.B, 0)
    sp_ = UrSpace(1)
    row = {int(p): i for i, p in enumerate(win.index)}
    assert sol.fraction(0, row[sp_.rank(0, ON_14, 0, 0, ON_14, 0, 0)]) == Fraction(4, 7)
    assert sol.fraction(0, row[sp_.rank(0, ON_13, 0, 0, ON_14, 0, 0)]) == Fraction(116, 161)
    # the whole solution solves the system exactly
    A = win.A
    for i in range(win.n):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        assert sum(int(a) * sol.z[0][j] for a, j in zip(A.data[lo:hi], A.indices[lo:hi], strict=True)) \
            == sol.d * int(win.B[i, 0])


def test_one_piece_mirror_and_sides_agree_fraction_for_fraction(one):
    # two different systems (one unknown per position; one per position and side) for the same game
    mirror = solve_ur_exact(one, "random", "random")
    sides = solve_ur_exact(one, "greedy", "random")  # one piece: every policy plays the only move
    assert mirror.wins == sides.wins
    assert sides.wins["light"] + sides.wins["dark"] == 1  # two columns solved apart: sum exactly 1
    assert mirror.expected["throws"].total == sides.expected["throws"].total
    assert mirror.expected["turns"].total == sides.expected["turns"].total
    assert isinstance(mirror.wins["light"], Fraction) and mirror.wins["light"].denominator > 10**200
    assert float(mirror.wins["light"]) == pytest.approx(0.5300498395248594, abs=1e-15)


def test_one_piece_exact_equals_the_float_chain(one):
    from markov_oca.ur.solve import solve_ur

    ex = solve_ur_exact(one, "optimal", "optimal")
    fl = solve_ur(one, "optimal", "optimal", method="chain")
    assert abs(float(ex.wins["light"]) - fl.wins["light"]) < 1e-12
    for k in ("throws", "turns"):
        assert abs(float(ex.expected[k].total) - float(fl.expected[k].total)) < 1e-12
    assert float(ex.length.mean_given_end) == pytest.approx(float(fl.expected["turns"].total), abs=1e-12)


def test_throw_and_turn_totals_of_a_tiny_system():
    # one position, throw: 1/2 a rosette (again), 1/2 the game ends. Throws Y = 1 + Y/2 -> 2;
    # turns Z = 1 + (Z - 1)/2 -> 1 (the rosette's throw continues the turn).
    A = sp.csr_array(np.array([[2 - 1]], np.int64))
    sol = solve_exact(A, np.array([[2, 2 - 1]], np.int64), 0)
    assert sol.fraction(0, 0) == 2 and sol.fraction(1, 0) == 1


def test_gamblers_ruin_closed_form():
    # a walk on 1..n-1 stepping down with 1/3 and up with 2/3: P(reach n from i) = (1 - 2^-i) / (1 - 2^-n)
    n = 40
    A = sp.lil_array((n - 1, n - 1), dtype=np.int64)
    B = np.zeros((n - 1, 1), np.int64)
    for i in range(1, n):
        A[i - 1, i - 1] = 3
        if i > 1:
            A[i - 1, i - 2] = -1
        if i < n - 1:
            A[i - 1, i] = -2
        else:
            B[i - 1, 0] = 2
    sol = solve_exact(sp.csr_array(A), B, 0)
    for i in range(1, n):
        assert sol.fraction(0, i - 1) == (1 - Fraction(1, 2**i)) / (1 - Fraction(1, 2**n))


def test_too_many_bits_a_step_fall_back():
    # 40 bits asked on a system whose float solve is poorer: the lifting steps down and stays exact
    A = sp.csr_array(np.array([[10**6, -(10**6 - 1)], [-(10**6 - 1), 10**6]], np.int64))
    sol = solve_exact(A, np.array([[1], [0]], np.int64), 0, bits=40)
    assert sol.bits < 40
    assert sol.fraction(0, 0) == Fraction(10**6, 10**12 - (10**6 - 1) ** 2)


def test_a_singular_or_not_dominant_matrix_is_refused():
    assert not weakly_chained_dominant(sp.csr_array(np.array([[1, -1], [-1, 1]])))
    assert not weakly_chained_dominant(sp.csr_array(np.array([[1, -2], [0, 1]])))
    assert weakly_chained_dominant(sp.csr_array(np.array([[1, -1], [0, 1]])))
    with pytest.raises(SolverError, match="not proved nonsingular"):
        solve_exact(sp.csr_array(np.array([[1, -1], [-1, 1]], np.int64)), np.array([[1], [1]], np.int64), 0)


def test_scc_blocks_are_lower_triangular(one):
    win, _ = mirror_systems(one, "random", reachable=False)
    blocks = scc_blocks(win.A, target=1)
    coo = sp.coo_array(win.A)
    assert (blocks[coo.col] <= blocks[coo.row]).all() and blocks.max() > 10


def test_sides_system_shape(one):
    s = side_system(one, "random", "greedy")
    assert s.columns == ["light wins", "dark wins", "throws", "turns"] and s.n == 2 * 217
    assert (s.B >= 0).all() and weakly_chained_dominant(s.A)


def test_three_pieces_refused_up_front_with_an_estimate():
    with pytest.raises(TooLargeError, match=r"264,304 positions would take about [\d,.]+ hours and [\d.]+ GiB"):
        solve_ur_exact(load_ur("ur", {"pieces": 3}), "random", "random")


def test_solve_ur_exact_through_the_api_and_json():
    from markov_oca import api

    res = api.solve("ur", pieces=1, exact=True, light="random", dark="random")
    assert isinstance(res.wins["light"], Fraction)
    d = json.loads(json.dumps(res.to_dict()))
    num, den = (int(x) for x in d["wins"]["light"]["fraction"].split("/"))
    assert Fraction(num, den) == res.wins["light"] and d["wins"]["light"]["value"] == float(res.wins["light"])
    assert "light 0.530050" in res.text()


def test_one_piece_certificate(one):
    from markov_oca.ur.certify import certify_optimal

    cert = certify_optimal(one)
    assert cert.optimal and cert.decisions == 0 and cert.positions == 217
    assert cert.value == solve_ur_exact(one, "optimal", "optimal").wins["light"]
    assert cert.max_float_gap < 1e-11


@pytest.mark.slow
def test_two_pieces_exact_equals_the_float_chain():
    # about 25 s of CPU: the win system and the totals system, 12,786 unknowns each
    from markov_oca.ur.solve import solve_ur

    rules = load_ur("ur", {"pieces": 2})
    ex = solve_ur_exact(rules, "optimal", "optimal")
    fl = solve_ur(rules, "optimal", "optimal", method="chain")
    assert abs(float(ex.wins["light"]) - fl.wins["light"]) < 1e-12
    for k in ("throws", "turns"):
        assert abs(float(ex.expected[k].total) - float(fl.expected[k].total)) < 1e-12
    assert ex.wins["light"].denominator.bit_length() > 38_000


@pytest.mark.slow
def test_two_pieces_random_win_chance():
    # about 10 s of CPU; on this system the random combination misses a factor 7 of three rows'
    # denominators, which the final check finds and adds (no second lifting)
    win, _ = mirror_systems(load_ur("ur", {"pieces": 2}), "random")
    sol = solve_exact(win.A, win.B, win.start, keep_all=False)
    assert abs(float(sol.fraction(0, win.start)) - 0.52425687992405889) < 1e-15
    assert sol.d.bit_length() > 43_000


@pytest.mark.slow
def test_two_piece_certificate_is_fast():
    # about 8 s of CPU (was 80 s through the sparse p-adic solver): no improving move in 30,301 choices
    from markov_oca.ur.certify import certify_optimal

    cert = certify_optimal(load_ur("ur", {"pieces": 2}))
    assert cert.optimal and cert.decisions == 30_301 and cert.improving == 0
    assert abs(float(cert.value) - cert.float_value) < 1e-12 and cert.max_float_gap < 1e-11
