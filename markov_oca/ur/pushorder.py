"""The order the forward push visits the positions in, and how its threads share them.

The push (:mod:`.push`) keeps the mass of each position at a *place*: the positions sorted by the mover's
pips, then the opponent's (a piece on path square s has walked s, a piece off L + 1 on a path of L squares),
then rank. A rosette's
successor (the same mover, more pips) comes later, so one pass carries a turn; and the other moves of the
positions of one pair of pips (p, q) land in a few pairs (q' <= q, p' >= p) of the next turn, contiguous in
that order: the scatter stays in a cache-sized window (6 pieces: 0.8 s a turn against 1.5-2.9 s by the
mover's pips alone). ``width = (L + 1) * pieces + 1`` pips a side; level ``p * width + q`` is the run of places
of pips (p, q), ``level_start`` its first place.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .state import UrSpace, lane_pips, side_pips, unrank_at

__all__ = ["diagonal_split", "push_placement", "split_bounds", "thread_slices"]


@numba.njit(cache=True, parallel=True)
def _push_key(tables, lo, hi, width, out):
    """The push order's key of each rank: ``width * mover's pips + opponent's pips``."""
    for s in prange(lo, hi):
        lane, mm, mh, mo, tm, th, to = unrank_at(tables, s)
        lp, lq = lane_pips(tables[13], tables[14], lane)
        bit_sq, off_sq = tables[15], tables[19]
        out[s] = (side_pips(bit_sq, off_sq, mm, mo) + lp) * width + side_pips(bit_sq, off_sq, tm, to) + lq


@numba.njit(cache=True)
def _placement(pips, levels):
    """Each rank's place in the push order (int32: ascending key, ties by rank) and the first place of each key."""
    S = pips.shape[0]
    count = np.zeros(levels + 1, np.int64)
    for s in range(S):
        count[pips[s] + 1] += 1
    for lev in range(levels):
        count[lev + 1] += count[lev]
    level_start = count.copy()
    newpos = np.empty(S, np.int32)
    for s in range(S):
        p = pips[s]
        newpos[s] = count[p]
        count[p] += 1
    return newpos, level_start


def push_placement(space: UrSpace, pieces: int) -> tuple[np.ndarray, np.ndarray]:
    """Each rank's place in the push order, and the first place of each level (:func:`_push_key`).

    Parameters
    ----------
    space : UrSpace
        The ranked positions.
    pieces : int
        Pieces a side.
    """
    S = space.size
    width = space.code.off * pieces + 1
    key = np.empty(S, np.int16)
    step = 1 << 24
    for lo in range(0, S, step):
        _push_key(space.tables, lo, min(lo + step, S), width, key)
    return _placement(key, width * width)


def _opponent_cuts(level_start: np.ndarray, width: int, parts: int) -> tuple[np.ndarray, list[int]]:
    """(first place of each mover's pips then S, the threads' bounds of opponent's pips: about equal places)."""
    S = int(level_start[-1])
    by_mover = level_start[::width][:width + 1]
    qs = [0] + [int(np.searchsorted(by_mover, i * S / parts)) for i in range(1, parts)] + [width]
    return by_mover, sorted(min(max(q, 0), width) for q in qs)


def split_bounds(level_start: np.ndarray, width: int, parts: int, back: int = 14):
    """(qs, side_lo, side_off, side size) for the one-pass push of deterministic policies: the threads' ranges
    of the opponent's pips (about equal numbers of places) and their buffers for crossing captures (a captured
    piece loses ``back`` pips at most: the path's length)."""
    by_mover, qs = _opponent_cuts(level_start, width, parts)
    qs = np.array(qs, np.int64)
    side_lo = np.zeros(parts, np.int64)
    side_off = np.zeros(parts, np.int64)
    size = 0
    for i in range(parts):
        side_lo[i] = by_mover[max(int(qs[i]) - back, 0)]
        side_off[i] = size
        size += int(by_mover[qs[i]] - side_lo[i])
    return qs, side_lo, side_off, size


def thread_slices(level_start: np.ndarray, width: int, parts: int,
                  back: int = 14) -> tuple[np.ndarray, np.ndarray]:
    """For ``parts`` threads spreading a turn: each one's source ranges of places, one per mover's pips
    (parts, width, 2), and the bounds of the target places each owns (parts + 1,) (:mod:`.push`); a captured
    piece loses ``back`` pips at most."""
    by_mover, qs = _opponent_cuts(level_start, width, parts)
    tgt = np.array([int(by_mover[q]) for q in qs], np.int64)
    src = np.empty((parts, width, 2), np.int64)
    for i in range(parts):
        q0, q1 = qs[i], min(width, qs[i + 1] + back + 1)
        for p in range(width):
            src[i, p, 0] = level_start[p * width + q0]
            src[i, p, 1] = level_start[p * width + q1]
    return src, tgt


def diagonal_split(level_start: np.ndarray, width: int, parts: int) -> np.ndarray:
    """(2 width - 1, parts + 1): for each diagonal p + q = T, the mover's pips p <= q where each thread's share
    of its places begins (about equal numbers of places; the thread that takes (p, q) takes (q, p) too)."""
    sizes = np.diff(level_start).reshape(width, width)  # [p, q]
    out = np.zeros((2 * width - 1, parts + 1), np.int64)
    for T in range(2 * width - 1):
        p0, p1 = max(0, T - width + 1), T // 2 + 1
        ps = np.arange(p0, p1)
        both = sizes[ps, T - ps] + np.where(2 * ps < T, sizes[T - ps, ps], 0)
        cum = np.concatenate([[0], np.cumsum(both)])
        out[T, 0], out[T, parts] = p0, p1
        for i in range(1, parts):
            out[T, i] = p0 + int(np.searchsorted(cum, cum[-1] * i / parts))
    return out
