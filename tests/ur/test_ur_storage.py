"""The shared pieces of the Ur sweeps: one move value, one pair of move stores (fixed and packed) read and
written by the same kernels."""

from __future__ import annotations

import numba
import numpy as np

from markov_oca.ur.kernel import AGAIN, GAME_OVER, MOVER_WINS, bellman, move_scores, move_value, moves
from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace
from markov_oca.ur.storage import NO_MOVE, close_throw, put_entry, row_count, row_entry, row_first


@numba.njit(cache=True)
def _read(store, rows, nt):
    """Every entry of every row, in order, and each (row, throw)'s count."""
    out = []
    counts = np.zeros((rows, nt), np.int64)
    for r in range(rows):
        e = row_first(store, r)
        for t in range(nt):
            k = row_count(store, r, t)
            counts[r, t] = k
            for _ in range(k):
                out.append(row_entry(store, r, t, e))
                e += 1
    return out, counts


@numba.njit(cache=True)
def _write(store, codes, used):
    """Write ``codes[r, t, :used[r, t]]`` row by row through the writers."""
    e = 0
    for r in range(codes.shape[0]):
        for t in range(codes.shape[1]):
            for m in range(used[r, t]):
                put_entry(store, r, t, e, codes[r, t, m])
                e += 1
            close_throw(store, r, t, used[r, t])


def test_a_fixed_table_reads_as_a_packed_one_with_counts_of_one():
    table = np.array([[4, -1, 7], [-2, 9, 0]], np.int32)
    start = np.array([0, 3, 6], np.int64)
    cnt = np.ones((2, 3), np.uint8)
    ent = table.ravel().copy()
    fixed, fixed_counts = _read(table, 2, 3)
    packed, packed_counts = _read((start, cnt, ent), 2, 3)
    assert list(fixed) == list(packed) == [4, -1, 7, -2, 9, 0]
    assert (fixed_counts == 1).all() and (packed_counts == 1).all()


def test_the_writers_fill_either_store_and_mark_a_throw_with_no_move():
    codes = np.array([[[5, 0], [-1, 0]], [[0, 0], [6, 8]]], np.int32)
    used = np.array([[1, 1], [0, 2]], np.int64)
    packed = (np.array([0, 2, 4], np.int64), np.zeros((2, 2), np.uint8), np.zeros(4, np.int32))
    _write(packed, codes, used)
    assert packed[1].tolist() == [[1, 1], [0, 2]] and packed[2].tolist() == [5, -1, 6, 8]
    out, _ = _read(packed, 2, 2)
    assert list(out) == [5, -1, 6, 8]
    fixed = np.zeros((2, 2), np.int32)
    _write(fixed, codes, np.minimum(used, 1))
    assert fixed.tolist() == [[5, -1], [NO_MOVE, 6]]


def test_move_value_is_the_movers_chance_after_the_move():
    r = load_ur("ur", {"pieces": 2})
    space = UrSpace(2)
    values = solve_optimal(r).values
    mv = moves(space, None, r)
    scores = move_scores(mv.events, mv.succ, mv.n_moves, values)
    live = np.arange(mv.succ.shape[2])[None, None, :] < mv.n_moves[:, :, None]
    ev, succ = mv.events, np.maximum(mv.succ, 0)
    want = np.where(ev & GAME_OVER, np.where(ev & MOVER_WINS, 1.0, 0.0),
                    np.where(ev & AGAIN, values[succ], 1.0 - values[succ]))
    assert np.array_equal(scores[live], want[live]) and np.isneginf(scores[~live]).all()
    i, t, m = np.argwhere(live & ((ev & AGAIN) != 0))[0]
    assert move_value(ev[i, t, m], values, succ[i, t, m]) == values[succ[i, t, m]]
    # the optimal values are their own Bellman update, to the solve's tolerance
    probs = np.asarray(mv.probs, np.float64)
    live_pos = np.flatnonzero(~mv.terminal)[:500]
    gap = max(abs(bellman(mv.succ, mv.events, mv.n_moves, probs, values, int(s)) - values[s]) for s in live_pos)
    assert gap < 1e-10
