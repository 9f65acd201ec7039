"""The layered sweep of a pair's chances (markov_oca.ur.layersums) against exact fractions and the push's sweep."""

from __future__ import annotations

import numpy as np
import pytest

from markov_oca.ur.bound import pair_sums
from markov_oca.ur.exact import solve_ur_exact
from markov_oca.ur.layered import solve_layered
from markov_oca.ur.layers import largest_layer, layers
from markov_oca.ur.layersums import (
    VALUE_BYTES,
    _neighbours,
    _readers,
    layered_pair_sums,
    layered_pairs,
    layered_sums_bytes,
)
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import space_of

SETS = ("ur", "ur-simplificado", "ur-7-rescatados", "ur-blitz", "ur-masters", "ur-aseb")
PAIRS = (("random", "optimal"), ("optimal", "greedy"), ("greedy", "random"))


def _table(name: str, pieces: int, **opts) -> tuple:
    r = load_ur(name, {"pieces": pieces, **opts})
    return r, solve_layered(r).values


@pytest.mark.parametrize("name", SETS)
def test_one_piece_within_its_bound_of_the_exact_fractions(name):
    r = load_ur(name, {"pieces": 1})
    ex = solve_ur_exact(r, "random", "greedy")  # one piece: every policy plays the only move
    s = layered_pair_sums(r, "random", "greedy")
    exact_light = float(ex.wins["light"])
    assert abs(s.win - exact_light) <= s.win_bound
    assert 0 < s.win_bound < 1e-11 * min(exact_light, 1 - exact_light)
    assert abs(s.throws - float(ex.expected["throws"].total)) <= s.throws_bound
    assert s.throws_bound < 1e-4 * s.throws  # the throws are kept in float32: a loose but certified bound


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("light,dark", PAIRS)
def test_two_pieces_agree_with_the_push_sweep_within_both_bounds(name, light, dark):
    r, v = _table(name, 2)
    a = pair_sums(r, light, dark, v, precision=1e-9)  # with the turns: the push's sweep
    b = layered_pair_sums(r, light, dark, v)
    assert abs(a.win - b.win) <= a.win_bound + b.win_bound
    assert b.win_bound <= 1e-10 * min(b.win, 1 - b.win)
    assert abs(a.throws - b.throws) <= a.throws_bound + b.throws_bound
    # the side swept is the one that does not play optimally against an optimal side
    assert b.side == (1 if (light, dark) == ("optimal", "greedy") else 0)


def test_three_pieces_with_decided_positions_agree_with_the_push_sweep():
    # total-off with a total of 3: a side with two pieces off has won while the game goes on
    r, v = _table("ur-7-rescatados", 3, total=3)
    a = pair_sums(r, "random", "optimal", v, precision=1e-9)
    b = layered_pair_sums(r, "random", "optimal", v)
    assert abs(a.win - b.win) <= a.win_bound + b.win_bound
    assert a.win < 0.1  # random play rarely beats optimal play


def test_the_same_policy_on_both_sides_keeps_the_mirror_symmetry():
    r, v = _table("ur", 2)
    s = layered_pair_sums(r, "optimal", "optimal", v)
    assert abs(s.win - float(v[space_of(2).rank(0, 0, 2, 0, 0, 2, 0)])) <= s.win_bound + 1e-12


def test_every_layer_is_read_by_its_two_lower_neighbours_only():
    r = load_ur("ur", {"pieces": 4})
    todo = layers(r)
    left = _readers(todo)
    assert left[(3, 3)] == 1  # read by (2, 3) alone
    assert left[(0, 0)] == 0 and left[(0, 1)] == 1 and left[(1, 1)] == 1 and left[(0, 2)] == 1
    assert left[(1, 2)] == 2  # by (0, 2) and (1, 1)
    # each layer is solved after every layer it reads
    seen = set()
    for p in todo:
        assert all(q in seen for q in _neighbours(p) if q in left)
        seen.add(p)


def test_the_estimate_counts_the_largest_layer_with_its_moves():
    r = load_ur("ur", {"pieces": 4})
    space = space_of(4)
    big = max(largest_layer(space, p) for p in layers(r))
    need = layered_sums_bytes(r, "random", "optimal")
    # at least: each position's index, the largest layer's values and one int32 entry a throw of it
    assert need > 4 * space.size + 2 * VALUE_BYTES * big + 4 * len(r.throws) * big
    assert need < 4 * space.size + 200 * big + 450 * 2**20


def test_a_policy_pair_needs_the_table_for_optimal():
    with pytest.raises(ValueError, match="optimal values"):
        layered_pair_sums(load_ur("ur", {"pieces": 1}), "optimal", "random")


def test_threads_do_not_change_the_figures_beyond_their_bounds():
    r, v = _table("ur-blitz", 2)
    one = layered_pair_sums(r, "random", "optimal", v, parts=1)
    two = layered_pair_sums(r, "random", "optimal", v, parts=3)
    assert abs(one.win - two.win) <= one.win_bound + two.win_bound
    assert np.isfinite(one.win_bound) and one.sweeps > 0


def test_one_sweep_gives_the_pair_with_the_sides_swapped():
    # positions are seen from the side to move: the start with dark to move is the swapped pair's start
    r, v = _table("ur-blitz", 2)
    a, b = layered_pairs(r, "random", "optimal", v)
    c = layered_pair_sums(r, "optimal", "random", v)
    push = pair_sums(r, "optimal", "random", v, precision=1e-9)
    assert abs(a.win - layered_pair_sums(r, "random", "optimal", v).win) <= 2 * a.win_bound
    assert b.side == c.side == 1  # the random side's chance, dark's in the swapped pair
    assert abs(b.win - c.win) <= b.win_bound + c.win_bound
    assert abs(b.win - push.win) <= b.win_bound + push.win_bound
    assert abs(b.throws - c.throws) <= b.throws_bound + c.throws_bound
    assert b.throws != a.throws  # the other start: light's random first move is not dark's
