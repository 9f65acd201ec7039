"""The chain seen from the player to move against the joint chain, figure by figure, and its seat-shifted solve."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from support import board

from markov_oca.core.errors import TooLargeError
from markov_oca.goose.model import goose_model
from markov_oca.goose.rotated import build_rotated, check_rotated_memory, solve_rotated
from markov_oca.goose.rules import load_goose
from markov_oca.goose.solve import solve_goose
from markov_oca.linalg.solve import shifted_adjoint_solve


def _figures(r) -> dict[str, float]:
    """Every figure of a solve that the two routes share, flattened."""
    out = {f"outcome {k}": v for k, v in r.outcomes.items()} | {"deadlock": r.deadlock}
    for s in r.seats:
        for name in ("turns", "throws", "stakes"):
            e = getattr(s, name)
            if e is not None:
                out[f"seat {s.seat} {name}"] = e.total
                out[f"seat {s.seat} {name} given end"] = e.given_end
        for k, p in enumerate(s.places or []):
            out[f"seat {s.seat} place {k + 1}"] = p
    for k, e in r.expected.items():
        out[k] = e.total
        out[k + " given end"] = e.given_end
    for i, p in enumerate(r.length.pmf):
        out[f"length {i}"] = p
    out |= {"median": r.length.median, "p90": r.length.p90, "never ends": r.length.never_ends}
    for x in r.landings or []:
        out[f"seat {x.seat} lands {x.square}"] = x.expected
    return out


def _same(a, b, tol):
    fa, fb = _figures(a), _figures(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        x, y = fa[k], fb[k]
        if math.isinf(x) or math.isnan(x):
            assert (math.isinf(y) and x == y) or (math.isnan(x) and math.isnan(y)), k
        else:
            assert y == pytest.approx(x, abs=tol), k


CASES = {
    # occupancy sends pieces back (and so gives seat-changing self-loops), a waiting square makes deadlock
    "occupant, waiting": (board(9, {2: {"jump": 5}, 4: {"miss": 1}, 6: {"wait": True}, 7: {"jump": 1}}, faces=3,
                                occupancy="occupant-returns"), {}),
    "mover returns, last": (board(8, {3: {"miss": 2}, 5: {"wait": True}, 6: {"jump": 2}}, faces=3,
                                  occupancy="mover-returns", until="last"), {}),
    "stakes, another throw": (board(10, {2: {"goose": "repeat"}, 4: {"stake": 1}, 7: {"miss": 1, "stake": 2},
                                         8: {"jump": 0}}, faces=3, occupancy="occupant-returns"), {}),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("players", [2, 3])
def test_rotated_chain_gives_the_joint_chains_figures(case, players):
    rules, _ = CASES[case]
    joint = solve_goose(rules, players, landings=True, route="joint")
    rot = solve_goose(rules, players, landings=True, route="rotated")
    _same(joint, rot, 1e-10)
    assert "seen from the player to move" in rot.note
    assert all(math.isnan(x.chance) for x in rot.landings) and "not computed" in rot.landings_note
    assert all(s["residual"] < 1e-10 for s in rot.solver)
    # about one state for every N joint ones (a rotation of a reachable state need not be reachable)
    assert rot.states - players < 0.6 * (joint.states - players)


def test_four_players_take_the_rotated_chain_and_match_the_joint_one():
    rules, _ = CASES["occupant, waiting"]
    auto = solve_goose(rules, 4, landings=False)
    assert "seen from the player to move" in auto.note
    joint = solve_goose(rules, 4, landings=False, route="joint")
    assert joint.note == ""
    _same(joint, auto, 1e-10)
    assert sum(auto.outcomes.values()) + auto.deadlock == pytest.approx(1.0, abs=1e-12)


def test_rotated_two_players_oca_moderna_with_deadlock():
    rules = load_goose("oca-moderna")
    joint = solve_goose(rules, 2, landings=False, route="joint")
    rot = solve_goose(rules, 2, landings=False, route="rotated")
    assert joint.deadlock > 0.16
    _same(joint, rot, 1e-9)
    # every joint transition but the outcomes' self-loops is one rotated transition seen from one of 2 seats
    assert (rot.transitions - 2) * 2 == joint.transitions - 2


def test_seat_changing_self_loops_occur_and_are_solved():
    # A bounce onto the piece just ahead swaps the two: the same position seen from the next seat.
    m = goose_model(load_goose("oca-moderna"), 2)
    rc = build_rotated(m)
    c = rc.chain
    loops = (c.next == np.arange(c.n)[:, None]) & (rc.shift != 0)
    assert loops[: rc.n_states].sum() > 100


def _lifted(nxt, pnum, shift, denom, m):
    """The (n m)-state matrix the shifted system stands for: (s, a) -> (t, (a + d) % m)."""
    n, J = nxt.shape
    rows, cols, vals = [], [], []
    for s in range(n):
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                continue
            for a in range(m):
                rows.append(s * m + a)
                cols.append(t * m + (a + shift[s, j]) % m)
                vals.append(pnum[s, j] / denom)
    return sp.csr_array((vals, (rows, cols)), shape=(n * m, n * m))


@pytest.mark.parametrize("m", [2, 3, 4])
def test_shifted_adjoint_solve_against_the_lifted_system(m):
    rng = np.random.default_rng(7 + m)
    n, J, denom = 60, 4, 24
    nxt = rng.integers(0, n, (n, J)).astype(np.int32)
    nxt[:, 0] = np.arange(n)  # self-loops, some changing the seat
    nxt[:, 1] = n - 1  # an exit
    pnum = rng.integers(1, 6, (n, J)).astype(np.int16)
    pnum[:, -1] = denom - pnum[:, :-1].sum(axis=1)
    shift = rng.integers(0, m, (n, J)).astype(np.int8)
    nxt[n - 1] = -1
    nxt[n - 1, 0] = n - 1
    pnum[n - 1] = 0
    pnum[n - 1, 0] = denom
    shift[n - 1] = 0
    active = np.ones(n, bool)
    active[n - 1] = False
    b = np.zeros((n, m))
    b[0, 0] = 1.0
    b[5, m - 1] = 0.5
    v, report = shifted_adjoint_solve(nxt, pnum, shift, denom, active, np.arange(n), b)
    Q = _lifted(nxt, pnum, shift, denom, m).toarray()
    keep = np.repeat(active, m)
    Qa = Q[np.ix_(keep, keep)]
    want = np.linalg.solve(np.eye(Qa.shape[0]) - Qa.T, b[active].ravel())
    assert v[active].ravel() == pytest.approx(want, abs=1e-12)
    assert report.residual < 1e-12
    assert (v[~active] == 0).all()


def test_five_players_refused_at_once_with_the_estimate():
    m = goose_model(load_goose("oca-moderna"), 5)
    with pytest.raises(TooLargeError, match=r"oca-moderna with 5 players: .* ids seen from the mover, about .* "
                                            r"simulate"):
        check_rotated_memory(m, avail=20 * 2**30)
    with pytest.raises(TooLargeError, match="5 players"):
        solve_rotated(m, max_memory=20 * 2**30)


def test_report_shows_uncomputed_landing_chances_as_a_dash():
    from markov_oca.engine.race import _chance

    assert _chance(float("nan")) == "-" and _chance(None) == "-"
    assert _chance(0.25) == "0.2500"


@pytest.mark.parametrize("m", [2, 3])
def test_block_residual_bounds_the_lifted_systems_residual(m):
    from fractions import Fraction

    from markov_oca.analysis.chain import Chain
    from markov_oca.engine.certified import block_residual

    rng = np.random.default_rng(3 + m)
    n, J, denom = 30, 3, 12
    nxt = rng.integers(0, n - 1, (n, J)).astype(np.int32)
    nxt[:, 1] = n - 1  # an exit
    pnum = np.full((n, J), denom // J, np.int16)
    shift = rng.integers(0, m, (n, J)).astype(np.int8)
    nxt[n - 1], pnum[n - 1], shift[n - 1] = [n - 1, -1, -1], [denom, 0, 0], 0
    chain = Chain(next=nxt, pnum=pnum, denom=denom, init=0, outcomes={"out": n - 1}, players=1,
                  mover=np.zeros(n, np.int8))
    active = chain.structure.transient
    b = np.zeros((n, m))
    b[0, 0] = 1.0
    v, _ = shifted_adjoint_solve(nxt, pnum, shift, denom, active, np.arange(n), b)
    v = v * (1 + 1e-7 * rng.standard_normal(v.shape))  # a block some way off
    res, rb = block_residual(chain, shift, v)
    # the true residual of the lifted system, in fractions
    true = [[Fraction(int(s == 0 and a == 0)) - Fraction(v[s, a]) if active[s] else Fraction(0) for a in range(m)]
            for s in range(n)]
    for s in range(n - 1):
        for j in range(J):
            t = nxt[s, j]
            if t >= 0 and active[t]:
                for a in range(m):
                    true[t][(a + shift[s, j]) % m] += Fraction(int(pnum[s, j]), denom) * Fraction(v[s, a])
    for s in range(n):
        total = sum(abs(x) for x in true[s])
        assert total <= Fraction(rb[s]) <= total + Fraction(1e-13), s  # the rounding allowance: 1e-15 a term
        assert res[s] == pytest.approx([float(x) for x in true[s]], abs=1e-15)
    assert rb.sum() > 1e-9  # the block is off: the bound is not trivially zero
