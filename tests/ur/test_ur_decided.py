"""Positions whose winner is already decided (``total-off``: a side has more than half of the total off).

Every move there is equally good, so the length of optimal play hangs on how the tie is broken.
The layered solve gives those positions their exact values (1 and 0), so the first-move rule
decides, and the same game length follows from every solve, whatever the sweep method.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from markov_oca.ur.chain import ur_chain
from markov_oca.ur.layered import decided_values, layer_members, layers, solve_layered
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import space_of, unrank_at

OPTIONS = {"pieces": 3, "total": 3}


def _rules():
    return load_ur("ur-7-rescatados", OPTIONS)


@cache
def _solved(method: str = "pairs", tol: float = 1e-13):
    """The table swept by ``method``, and light's chance and the expected turns of optimal play from it."""
    r = _rules()
    values = solve_layered(r, method=method, tol=tol).values
    chain = ur_chain(r, "optimal", "optimal", values)
    turns = chain.expected({"turns": chain.state_rewards["turns"]})["turns"][0]
    return values, chain.outcome_probabilities()["light wins"], turns


def _mover_off(space, members):
    """The pieces the side to move has off, in each of the positions ``members``."""
    return np.array([unrank_at(space.tables, int(s))[3] for s in members])


def test_decided_off():
    assert _rules().decided_off == 2
    assert load_ur("ur-7-rescatados", {"pieces": 7}).decided_off == 4
    assert load_ur("ur", {"pieces": 3}).decided_off == 0


def test_decided_layers_are_exact():
    """Every position of a decided layer is worth exactly 1 to the side with 2 off, 0 to the other."""
    r = _rules()
    space = space_of(r.pieces, r.code)
    decided = [p for p in layers(r) if max(p) >= 2]
    assert decided == [(0, 2)]
    members, _ = layer_members(space, (0, 2))
    v = _solved()[0]
    mover_off = _mover_off(space, members)
    assert set(np.unique(mover_off)) == {0, 2}
    assert np.array_equal(v[members], np.where(mover_off == 2, 1.0, 0.0))
    assert np.array_equal(decided_values(r, (0, 2), members), v[members])
    assert decided_values(r, (0, 1), layer_members(space, (0, 1))[0]) is None


def test_decided_values_of_a_layer_with_pieces_off_on_both_sides():
    """Five pieces, total 7: in layer (2, 4) the side with 4 off has won, with 2 off has lost; (2, 3) is open."""
    r = load_ur("ur-7-rescatados", {"pieces": 5})
    assert r.decided_off == 4
    space = space_of(r.pieces, r.code)
    assert [p for p in layers(r) if max(p) >= 4] == [(2, 4), (1, 4), (0, 4)]
    members, _ = layer_members(space, (2, 4))
    x = decided_values(r, (2, 4), members)
    mover_off = _mover_off(space, members)
    assert set(np.unique(mover_off)) == {2, 4}
    assert np.array_equal(x, np.where(mover_off == 4, 1.0, 0.0))
    assert decided_values(r, (2, 3), layer_members(space, (2, 3))[0]) is None


@pytest.mark.parametrize("method", ["gs", "jacobi"])
def test_length_does_not_depend_on_the_solve(method):
    """Optimal play's expected length is the same from tables swept by different methods."""
    base, base_p, base_turns = _solved()
    other, p, turns = _solved(method, 1e-12)
    assert np.max(np.abs(base - other)) < 1e-10
    assert p == pytest.approx(base_p, abs=1e-10)
    assert turns == pytest.approx(base_turns, abs=1e-9)
