"""The forward push in the (mover's pips, opponent's pips) order, its span of places, the mass it drops and its
threads split by the opponent's pips, on one and two pieces, against the chain."""

from __future__ import annotations

import numpy as np
import pytest

from markov_oca.ur.chain import ur_chain
from markov_oca.ur.layered import solve_layered
from markov_oca.ur.pushorder import push_placement, split_bounds, thread_slices
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace
from markov_oca.ur.sweeps import push_lengths


@pytest.fixture(scope="module")
def two():
    rules = load_ur("ur", {"pieces": 2})
    return rules, solve_layered(rules).values


@pytest.mark.parametrize("light,dark", [("optimal", "optimal"), ("random", "greedy")])
def test_push_pmf_is_the_chains(two, light, dark):
    rules, v = two
    ref = ur_chain(rules, light, dark, v).length_distribution(tail=1e-13)
    p = push_lengths(rules, light, dark, v, tail=1e-13)
    n = min(ref.by_outcome.shape[0], p.dist.by_outcome.shape[0])
    assert n > 100
    assert np.abs(ref.by_outcome[:n] - p.dist.by_outcome[:n]).max() < 1e-14
    # the pmf and the tail (in play + dropped) account for all the mass
    assert p.dist.pmf.sum() + p.dist.tail == pytest.approx(1.0, abs=1e-14)
    assert p.dist.tail == pytest.approx(p.left + p.dropped, abs=1e-18) and p.left < 1e-13


@pytest.mark.parametrize("name", ["ur-masters", "ur-blitz", "ur-aseb"])
@pytest.mark.parametrize("parts", [1, 2])
def test_push_is_the_chain_where_a_capture_throws_again(name, parts):
    # Masters (a rosette throws again and does not protect) and Blitz (a capture throws again): a throw after a
    # capture lowers the opponent's pips within the turn; deterministic pairs must still carry it in the turn
    rules = load_ur(name, {"pieces": 2})
    v = solve_layered(rules).values
    for light, dark in [("optimal", "optimal"), ("greedy", "random")]:
        chain = ur_chain(rules, light, dark, v)
        ref = chain.length_distribution(tail=1e-13)
        p = push_lengths(rules, light, dark, v, tail=1e-13, drop=0.0, parts=parts)
        n = min(ref.by_outcome.shape[0], p.dist.by_outcome.shape[0])
        assert n > 100
        assert np.abs(ref.by_outcome[:n] - p.dist.by_outcome[:n]).max() < 1e-14
        # the expected turns the push sums (the mass in play turn by turn) are the pmf's mean
        mean = float((np.arange(p.dist.pmf.size) * p.dist.pmf).sum())
        assert p.turns == pytest.approx(mean, rel=1e-9)
        assert p.dist.pmf.sum() + p.dist.tail == pytest.approx(1.0, abs=1e-14)


def test_placement_is_by_mover_then_opponent_pips():
    space = UrSpace(2)
    newpos, level_start = push_placement(space, 2)
    assert np.array_equal(np.sort(newpos), np.arange(space.size))  # a permutation
    width = 31
    # the start (no pips) is at place 0; a position with both sides' pieces off is last of its key
    assert newpos[space.rank(0, 0, 2, 0, 0, 2, 0)] == 0
    keys = np.repeat(np.arange(width * width), np.diff(level_start))
    # light one piece off, one on square 1 (16 pips); dark two in hand (0 pips): key 16 * 31 + 0
    s = space.rank(0, 1, 0, 1, 0, 2, 0)
    assert keys[newpos[s]] == 16 * width
    assert level_start[-1] == space.size


def test_dropped_mass_bounds_what_the_pmf_misses(two):
    rules, v = two
    full = push_lengths(rules, "random", "greedy", v, tail=1e-12, drop=0.0)
    cut = push_lengths(rules, "random", "greedy", v, tail=1e-12, drop=1e-9)
    assert full.dropped == 0.0 and 1e-9 < cut.dropped < 1e-4
    n = min(full.dist.pmf.size, cut.dist.pmf.size)
    # the push is linear with nonnegative weights: letting mass go only lowers the pmf, by at most that mass
    assert (cut.dist.pmf[:n] <= full.dist.pmf[:n] + 1e-17).all()
    missed = full.dist.pmf.sum() - cut.dist.pmf.sum()
    assert 0.0 < missed <= cut.dropped + full.left + 1e-15
    assert cut.dist.pmf.sum() + cut.dist.tail == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("parts", [2, 3])
def test_threads_split_by_opponent_pips_give_the_same_bits(two, parts):
    # a random side: a pass over the rosettes, then the threads spread, each target's terms in one thread's order
    rules, v = two
    a = push_lengths(rules, "random", "random", v, tail=1e-9, drop=1e-15, parts=1)
    b = push_lengths(rules, "random", "random", v, tail=1e-9, drop=1e-15, parts=parts)
    assert np.array_equal(a.dist.by_outcome, b.dist.by_outcome)
    assert a.throws == b.throws and a.dropped == b.dropped and a.left == b.left


@pytest.mark.parametrize("parts", [2, 3])
def test_one_pass_threads_agree_with_one_thread(two, parts):
    # deterministic policies: one pass, each thread carrying its own rosettes; the captures that cross below a
    # thread's targets are summed apart and added after, so the bits differ from one thread's, not the values
    rules, v = two
    a = push_lengths(rules, "greedy", "optimal", v, tail=1e-12, drop=1e-15, parts=1)
    b = push_lengths(rules, "greedy", "optimal", v, tail=1e-12, drop=1e-15, parts=parts)
    c = push_lengths(rules, "greedy", "optimal", v, tail=1e-12, drop=1e-15, parts=parts)
    assert a.dist.pmf.size == b.dist.pmf.size > 100
    assert np.abs(a.dist.by_outcome - b.dist.by_outcome).max() < 1e-16
    assert b.throws == pytest.approx(a.throws, rel=1e-13) and b.turns == pytest.approx(a.turns, rel=1e-13)
    assert b.dropped == pytest.approx(a.dropped, rel=1e-12) and b.left == pytest.approx(a.left, rel=1e-12)
    assert np.array_equal(b.dist.by_outcome, c.dist.by_outcome) and b.throws == c.throws  # the same bits again
    ref = ur_chain(rules, "greedy", "optimal", v).length_distribution(tail=1e-13)
    d = push_lengths(rules, "greedy", "optimal", v, tail=1e-13, drop=0.0, parts=parts).dist
    n = min(ref.by_outcome.shape[0], d.by_outcome.shape[0])
    assert n > 100 and np.abs(ref.by_outcome[:n] - d.by_outcome[:n]).max() < 1e-14


def test_one_pass_threads_split_where_captures_cross():
    space = UrSpace(3)
    _newpos, level_start = push_placement(space, 3)
    width = 46
    qs, side_lo, side_off, size = split_bounds(level_start, width, 2)
    by_mover = level_start[::width][:width + 1]
    assert qs[0] == 0 and qs[-1] == width and 14 < qs[1] < width
    assert 0.3 < by_mover[qs[1]] / space.size < 0.7  # about half the places each
    # thread 1's crossing captures land where the mover's pips are 14 below its first or fewer: its buffer
    assert side_lo[1] == by_mover[qs[1] - 14] and size == by_mover[qs[1]] - by_mover[qs[1] - 14]
    assert side_off[1] == 0 and side_lo[0] == by_mover[0] == 0


def test_thread_slices_cover_every_source_a_target_needs():
    space = UrSpace(2)
    _newpos, level_start = push_placement(space, 2)
    src, tgt = thread_slices(level_start, 31, 2)
    assert tgt[0] == 0 and tgt[-1] == space.size and 0 < tgt[1] < space.size
    # thread 0's targets (mover's pips < Q) come from opponent's pips < Q + 15: its sources reach that far
    q = int(np.searchsorted(level_start[::31][:32], tgt[1]))
    assert level_start[::31][q] == tgt[1]
    assert src[0, 3, 1] == level_start[3 * 31 + min(31, q + 15)] and src[1, 3, 0] == level_start[3 * 31 + q]


def test_one_piece_push_against_the_chain_all_pairs():
    rules = load_ur("ur", {"pieces": 1})
    v = solve_layered(rules).values
    for light, dark in (("random", "optimal"), ("greedy", "random"), ("optimal", "optimal")):
        ref = ur_chain(rules, light, dark, v).length_distribution(tail=1e-14)
        p = push_lengths(rules, light, dark, v, tail=1e-14)
        n = min(ref.pmf.size, p.dist.pmf.size)
        assert np.abs(ref.by_outcome[:n] - p.dist.by_outcome[:n]).max() < 1e-15
