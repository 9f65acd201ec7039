"""One layer of the optimal solve (:mod:`.layered`): its successors packed, and its values swept.

For one layer the successors are built from the move kernel in chunks and packed: a move into the layer is
a local index (and whether the mover throws again), a move out of it (a piece off, the end of the game) is a
value already known, and the best of those per throw is kept as one constant. The layer's values are then
swept Gauss-Seidel (or Jacobi, to compare) until no value moves by more than the tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

from .kernel import AGAIN, GAME_OVER, kernel_args, move_value, moves_kernel
from .layers import CHUNK
from .rules import UrRules
from .state import UrSpace

__all__ = ["METHODS", "PackedLayer", "pack_layer", "sweep_layer"]

#: Sweeps: Gauss-Seidel with each position and its mirror solved together, plain Gauss-Seidel, Jacobi.
METHODS = ("pairs", "gs", "jacobi")


# ----------------------------------------------------------------------------- packing a layer


@numba.njit(cache=True, parallel=True)
def _count(succ, events, n_moves, loc):
    """Per position of a chunk: packed entries and constants it needs."""
    k, nt = n_moves.shape
    ne = np.zeros(k, np.int64)
    nc = np.zeros(k, np.int64)
    for i in prange(k):
        e = 0
        c = 0
        for t in range(nt):
            const = False
            for m in range(n_moves[i, t]):
                if events[i, t, m] & GAME_OVER or loc[succ[i, t, m]] < 0:
                    const = True
                else:
                    e += 1
            if const:
                e += 1
                c += 1
        ne[i] = e
        nc[i] = c
    return ne, nc


@numba.njit(cache=True, parallel=True)
def _pack(succ, events, n_moves, loc, v, e_start, c_start, cnt, ent, cval, row0):
    """Fill the packed entries of a chunk (``row0`` its first row in the layer)."""
    k, nt = n_moves.shape
    for i in prange(k):
        e = e_start[i]
        c = c_start[i]
        for t in range(nt):
            best = -1.0
            m_in = 0
            for m in range(n_moves[i, t]):
                ev = events[i, t, m]
                j = -1 if ev & GAME_OVER else loc[succ[i, t, m]]
                if j >= 0:
                    ent[e] = 2 * j + (1 if ev & AGAIN else 0)
                    e += 1
                    m_in += 1
                    continue
                val = move_value(ev, v, succ[i, t, m])
                if val > best:
                    best = val
            if best >= 0.0:
                cval[c] = best
                ent[e] = -(c + 1)
                e += 1
                c += 1
                m_in += 1
            cnt[row0 + i, t] = m_in


@dataclass
class PackedLayer:
    """A layer's successors, packed (see the module docstring)."""

    members: np.ndarray  # int64 ranks, in sweep order
    cnt: np.ndarray  # (n, T) uint8 entries per position and throw
    start: np.ndarray  # (n + 1,) int64 first entry of each position
    ent: np.ndarray  # int32: 2 * local + again, or -(constant + 1)
    cval: np.ndarray  # float64 constants
    flag: np.ndarray  # int8 per position: 0 swept alone, 1 and 2 a position and its mirror


def pack_layer(space: UrSpace, rules: UrRules, members: np.ndarray, flag: np.ndarray, v: np.ndarray,
               loc: np.ndarray, tick: Callable[[int], None] | None = None) -> PackedLayer:
    """Build the packed successors of ``members`` (``loc`` maps a rank to its place in the layer, else -1).

    ``v`` must hold the final values of the layers above.
    """
    throws, ros, total, flags = kernel_args(rules)
    n, nt = members.size, len(throws)
    cnt = np.zeros((n, nt), np.uint8)
    start = np.zeros(n + 1, np.int64)
    # Room for the most entries there can be (7 moves a throw, one constant a throw): untouched
    # pages of np.empty are never resident, so this costs only what is used, and nothing is copied.
    ent = np.empty(max(1, n * nt * 7), np.int32)
    cval = np.empty(max(1, n * nt), np.float64)
    e_used = c_used = 0
    for lo in range(0, n, CHUNK):
        chunk = members[lo:lo + CHUNK]
        succ, _frm, events, n_moves, _over, _win = moves_kernel(space.tables, chunk, throws, ros, total, flags)
        del _frm
        ne, nc = _count(succ, events, n_moves, loc)
        e_start = np.empty(chunk.size + 1, np.int64)
        e_start[0] = e_used
        np.cumsum(ne, out=e_start[1:])
        e_start[1:] += e_used
        c_start = np.empty(chunk.size, np.int64)
        c_start[0] = c_used
        if chunk.size > 1:
            np.cumsum(nc[:-1], out=c_start[1:])
            c_start[1:] += c_used
        e_end, c_end = int(e_start[-1]), c_used + int(nc.sum())
        _pack(succ, events, n_moves, loc, v, e_start, c_start, cnt, ent, cval, lo)
        start[lo:lo + chunk.size] = e_start[:-1]
        e_used, c_used = e_end, c_end
        del succ, events, n_moves
        if tick is not None:
            tick(chunk.size)
    start[n] = e_used
    return PackedLayer(members, cnt, start, ent[:e_used], cval[:c_used], flag)


# ----------------------------------------------------------------------------- sweeping a layer


@numba.njit(cache=True, inline="always")
def _best(k, e, ent, cval, x):
    """The best of the ``k`` entries from ``e`` (a move into the layer: its value from ``x``; a constant: the
    best move out of it), and the entry after them."""
    best = -1.0
    for _ in range(k):
        code = ent[e]
        e += 1
        if code >= 0:
            j = code >> 1
            val = x[j] if code & 1 else 1.0 - x[j]
        else:
            val = cval[-code - 1]
        if val > best:
            best = val
    return best, e


@numba.njit(cache=True, inline="always")
def _update(i, start, cnt, ent, cval, probs, x):
    e = start[i]
    new = 0.0
    for t in range(probs.shape[0]):
        best, e = _best(cnt[i, t], e, ent, cval, x)
        new += probs[t] * best
    return new


@numba.njit(cache=True, inline="always")
def _update_split(i, partner, start, cnt, ent, cval, probs, x):
    """(c, q): the update of position i without the throws that only pass to ``partner`` (the
    mirror), and the chance q of those throws: x[i] = c + q * (1 - x[partner])."""
    e = start[i]
    c = 0.0
    q = 0.0
    pcode = 2 * partner
    for t in range(probs.shape[0]):
        k = cnt[i, t]
        if k == 1 and ent[e] == pcode:
            q += probs[t]
            e += 1
            continue
        best, e = _best(k, e, ent, cval, x)
        c += probs[t] * best
    return c, q


@numba.njit(cache=True, parallel=True)
def _sweep_pairs(start, cnt, ent, cval, probs, x, flag, parts):
    """One Gauss-Seidel sweep that solves each position together with its mirror (``flag``: 0 alone,
    1 and 2 a pair), exactly for the passes between the two; the largest change."""
    n = x.shape[0]
    worst = np.zeros(parts)
    for c in prange(parts):
        lo = c * n // parts
        hi = (c + 1) * n // parts
        if lo < n and flag[lo] == 2:
            lo += 1
        if hi < n and flag[hi] == 2:
            hi += 1
        w = 0.0
        i = lo
        while i < hi:
            if flag[i] == 0:
                ci, qi = _update_split(i, i, start, cnt, ent, cval, probs, x)
                new = (ci + qi) / (1.0 + qi)
                d = abs(new - x[i])
                x[i] = new
                i += 1
            else:
                ci, qi = _update_split(i, i + 1, start, cnt, ent, cval, probs, x)
                cp, qp = _update_split(i + 1, i, start, cnt, ent, cval, probs, x)
                ni = (ci + qi * (1.0 - cp - qp)) / (1.0 - qi * qp)
                np_ = cp + qp * (1.0 - ni)
                d = max(abs(ni - x[i]), abs(np_ - x[i + 1]))
                x[i] = ni
                x[i + 1] = np_
                i += 2
            if d > w:
                w = d
        worst[c] = w
    return worst.max()


@numba.njit(cache=True, parallel=True)
def _sweep(start, cnt, ent, cval, probs, x, out, parts):
    """One sweep from ``x`` into ``out``, ``parts`` consecutive slices swept side by side; the largest change.

    ``out`` is ``x`` for Gauss-Seidel (each new value used at once), another array for Jacobi.
    (Over-relaxation diverges here: a pass makes a position's value fall as its mirror's rises.)
    """
    n = x.shape[0]
    worst = np.zeros(parts)
    for c in prange(parts):
        lo = c * n // parts
        hi = (c + 1) * n // parts
        w = 0.0
        for i in range(lo, hi):
            new = _update(i, start, cnt, ent, cval, probs, x)
            d = abs(new - x[i])
            if d > w:
                w = d
            out[i] = new
        worst[c] = w
    return worst.max()


def sweep_layer(layer: PackedLayer, probs: np.ndarray, x: np.ndarray, *, tol: float, method: str = "pairs",
                max_sweeps: int = 100_000, parts: int | None = None,
                tick: Callable[[int, float], None] | None = None) -> tuple[int, float]:
    """Sweep ``x`` (the layer's values, in place) until the largest change is at most ``tol``.

    Returns (sweeps, last change).
    """
    parts = parts or numba.get_num_threads()
    sweeps, change = 0, np.inf
    y = np.empty_like(x) if method == "jacobi" else None
    while change > tol:
        if method == "pairs":
            change = _sweep_pairs(layer.start, layer.cnt, layer.ent, layer.cval, probs, x, layer.flag, parts)
        elif method == "gs":
            change = _sweep(layer.start, layer.cnt, layer.ent, layer.cval, probs, x, x, parts)
        elif method == "jacobi":
            change = _sweep(layer.start, layer.cnt, layer.ent, layer.cval, probs, x, y, parts)
            x[:] = y
        else:
            raise ValueError(f"unknown method {method!r} (methods: {', '.join(METHODS)})")
        sweeps += 1
        if tick is not None:
            tick(sweeps, change)
        if sweeps >= max_sweeps:
            raise RuntimeError(f"layer did not reach a change of {tol} in {max_sweeps} sweeps (last {change:.2e})")
    return sweeps, float(change)
