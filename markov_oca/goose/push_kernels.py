"""The kernels of the forward pass (:mod:`~markov_oca.goose.forward`): one turn's push over the chain seen
from the mover, split in parts that write apart, its mid-turn sweeps and its true residual.

When every step is a turn or part of one (the seat shift is 0 into a state where the mover throws again,
1 into any other, as without ``until = "last"``), the seat to move on turn t is t mod N: the visits block
is the one-column push of the length distribution, summed turn by turn into column t mod N, and the
seat-shifted solve is not needed. The push runs on both cores without write conflicts: a branch from
(l_0, l_1, ...) goes to (l_1, ..., x) unless the move changed another piece, so the rows are split by the
part that owns l_1 (the first digit of where they push); the few branches into the other part's rows
("exceptions": a piece sent back, a finished seat skipped) are pushed first, each by the part owning its
target. The mass that stops where the mover throws again is pushed on within the turn by sweeps in row
order over those rows (:func:`_mids_sweep`), on both parts.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _turn_shifts(nxt, shift, turn_start, n_states):
    """Whether every branch between states has shift 0 into a mid-turn state and 1 into a turn's start."""
    for s in range(n_states):
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            if t >= n_states:
                continue
            if shift[s, j] != (1 if turn_start[t] else 0):
                return False
    return True


@numba.njit(cache=True, inline="always")
def _row_slots(nxt, pnum, s, n_states, q, tgt_part, tt, tp):
    """Row ``s``'s branches as part ``q`` pushes them: distinct slots (a state, or the outcome ``k``'s slot
    ``n + q N + k`` of the part) with their numerators summed, in ``tt``/``tp``; a branch into another part's
    rows is left out (pushed apart). Returns the number of slots and of branches left out."""
    n = nxt.shape[0]
    P = n - n_states
    k = 0
    skipped = 0
    for j in range(nxt.shape[1]):
        t = nxt[s, j]
        if t < 0:
            break
        if t >= n_states:
            t = n + q * P + (t - n_states)
        elif tgt_part[t] != q:
            skipped += 1
            continue
        i = 0
        while i < k and tt[i] != t:
            i += 1
        if i == k:
            tt[k] = t
            tp[k] = 0
            k += 1
        tp[i] += pnum[s, j]
    return k, skipped


@numba.njit(cache=True, parallel=True)
def _count_slots(nxt, pnum, n_states, src_part, tgt_part, width, skips):
    """Per row, its slots (:func:`_row_slots`) in ``width`` and its branches left out in ``skips``."""
    chunk = 4096
    for c in numba.prange((n_states + chunk - 1) // chunk):
        tt = np.empty(nxt.shape[1], np.int64)
        tp = np.empty(nxt.shape[1], np.int64)
        for s in range(c * chunk, min(n_states, (c + 1) * chunk)):
            width[s], skips[s] = _row_slots(nxt, pnum, s, n_states, src_part[s], tgt_part, tt, tp)


@numba.njit(cache=True, parallel=True)
def _fill_slots(nxt, pnum, n_states, src_part, tgt_part, bits, code, e_ptr, e_src, e_j):
    """Each row's slots as codes ``target | numerator << bits`` (the rest of the row left at its end mark),
    and the branches left out as (row, branch) pairs from ``e_ptr[row]``, in row order."""
    chunk = 4096
    for c in numba.prange((n_states + chunk - 1) // chunk):
        tt = np.empty(nxt.shape[1], np.int64)
        tp = np.empty(nxt.shape[1], np.int64)
        for s in range(c * chunk, min(n_states, (c + 1) * chunk)):
            q = src_part[s]
            k, _ = _row_slots(nxt, pnum, s, n_states, q, tgt_part, tt, tp)
            for i in range(k):
                code[s, i] = tt[i] | (tp[i] << bits)
            e = e_ptr[s]
            for j in range(nxt.shape[1]):
                t = nxt[s, j]
                if t < 0:
                    break
                if t < n_states and tgt_part[t] != q:
                    e_src[e] = s
                    e_j[e] = j
                    e += 1


def _split_parts(nxt: np.ndarray, pnum: np.ndarray, n_states: int, n_parts: int, src_part: np.ndarray,
                 tgt_part: np.ndarray):
    """The branches each part pushes, as one row of codes a state (``code[s, i] = target | numerator << bits``:
    a state, or the outcome ``k``'s slot ``n + part N + k`` of the part; the branches into one slot merged, their
    numerators summed; ``end`` closes a row), and those into another part's rows as (row, branch) pairs, left out
    of the codes and pushed apart by the part owning their target. The codes are 4 bytes when the slots fit in 24
    bits and a row's numerators in 8 (one load a branch, a fifth of the memory the int32 target and the numerator
    took apart, in rows a few slots narrower), else 8. Returns ``code, end, mask, bits, e_src, e_j``."""
    n = nxt.shape[0]
    slots = n + n_parts * (n - n_states)
    small = slots < 2**24 and int(pnum[:n_states].sum(axis=1, dtype=np.int64).max(initial=0)) < 2**8
    dtype, bits = (np.uint32, 24) if small else (np.uint64, 32)
    width = np.zeros(n_states, np.int64)
    skips = np.zeros(n_states, np.int64)
    _count_slots(nxt, pnum, n_states, src_part, tgt_part, width, skips)
    end = np.iinfo(dtype).max
    code = np.full((n_states, max(1, int(width.max(initial=0)))), end, dtype)
    del width
    e_ptr = np.zeros(n_states + 1, np.int64)
    np.cumsum(skips, out=e_ptr[1:])
    del skips
    e_src = np.empty(int(e_ptr[-1]), np.int32)
    e_j = np.empty(int(e_ptr[-1]), np.int8)
    _fill_slots(nxt, pnum, n_states, src_part, tgt_part, bits, code, e_ptr, e_src, e_j)
    return code, dtype(end), dtype((1 << bits) - 1), dtype(bits), e_src, e_j


@numba.njit(cache=True, nogil=True)
def _push_part(code, end, mask, bits, seg_lo, seg_hi, g0, g1, inv_denom, v, w, acc, eps):
    """One part's share of a turn's push: rows of segments ``g0:g1`` push ``v`` into ``w`` through their codes
    (:func:`_split_parts`), add ``v`` to ``acc`` and are left zero in ``v``. A row holding less than ``eps`` is
    let go instead (zeroed, not counted, not pushed); the mass let go is returned."""
    W = code.shape[1]
    dropped = 0.0
    for g in range(g0, g1):
        for r in range(seg_lo[g], seg_hi[g]):
            s = np.uint64(r)  # unsigned: numba leaves out the wraparound test of each index
            m = v[s]
            if m < eps:
                if m != 0.0:
                    dropped += m
                    v[s] = 0.0
                continue
            acc[s] += m
            v[s] = 0.0
            m *= inv_denom
            for i in range(W):
                x = code[s, i]
                if x == end:
                    break
                w[x & mask] += m * (x >> bits)
    return dropped


@numba.njit(cache=True, nogil=True)
def _push_skipped(nxt, pnum, e_src, e_j, inv_denom, v, w, eps):
    """The branches the parts skip, pushed before them (rows under ``eps`` are let go by the parts)."""
    for e in range(e_src.size):
        s = e_src[e]
        m = v[s]
        if m != 0.0 and m >= eps:
            w[nxt[s, e_j[e]]] += m * inv_denom * pnum[s, e_j[e]]


@numba.njit(cache=True)
def _mid_back(code, end, mask, rows, is_mid):
    """Per row of ``rows`` (rows that throw again, in order): whether a branch goes back to one of them at or
    before it (then a sweep in row order leaves mass behind it for another sweep)."""
    out = np.zeros(rows.size, np.bool_)
    n = is_mid.size
    for i in range(rows.size):
        s = rows[i]
        for j in range(code.shape[1]):
            x = code[s, j]
            if x == end:
                break
            t = x & mask
            if t < n and t <= s and is_mid[t]:
                out[i] = True
    return out


@numba.njit(cache=True, nogil=True)
def _mids_sweep(code, end, mask, bits, inv_denom, rows, back, w, pushed, acc):
    """One part's mid-turn sweep: in row order, each of its ``rows`` (where the mover throws again) pushes on
    the mass that stopped there (taken from ``w``), so a throw that stops again further on is pushed in the
    same sweep; ``pushed`` gets what each row pushed (for its skipped branches, pushed after on one core).
    The rows a part's branches reach here are its own (see :func:`~markov_oca.goose.forward.forward_pass`).
    Returns the mass moved and whether some went back to a row already swept (then another sweep)."""
    moved = 0.0
    again = False
    for i in range(rows.size):
        s = np.uint64(rows[i])  # unsigned: no wraparound test on each index
        m = w[s]
        if m == 0.0:
            continue
        w[s] = 0.0
        acc[s] += m
        pushed[s] += m
        moved += m
        again |= back[i]
        m *= inv_denom
        for j in range(code.shape[1]):
            x = code[s, j]
            if x == end:
                break
            w[x & mask] += m * (x >> bits)
    return moved, again


@numba.njit(cache=True, nogil=True)
def _take(rows, w, into):
    """Move the mass of ``rows`` from ``w`` to ``into`` (zero elsewhere); the mass moved."""
    total = 0.0
    for s in rows:
        x = w[s]
        if x != 0.0:
            into[s] = x
            w[s] = 0.0
            total += x
    return total


@numba.njit(cache=True, nogil=True)
def _residual_part(code, end, mask, bits, seg_lo, seg_hi, g0, g1, nxt, pnum, e_src, e_j, shift, inv_denom, active,
                   turn_start, acc, last, f, into):
    """One part's share of ``Q_shift^T v`` into ``into[t, seat]`` for ``v[s, a] = acc[a, s] + f last[a, s]`` over
    the active states: its rows' codes (the seat shift 1 into a turn's start, 0 into a row that throws again,
    see :func:`~markov_oca.goose.forward.turn_columns`), then the skipped branches ``e_src, e_j`` into its rows
    (with their own shift)."""
    m = acc.shape[0]
    n = active.size
    x = np.empty(m)
    for g in range(g0, g1):
        for s in range(seg_lo[g], seg_hi[g]):
            if not active[s]:
                continue
            for a in range(m):
                x[a] = acc[a, s] + f * last[a, s]
            for i in range(code.shape[1]):
                y = code[s, i]
                if y == end:
                    break
                t = y & mask
                if t >= n or not active[t]:
                    continue
                p = (y >> bits) * inv_denom
                d = 1 if turn_start[t] else 0
                for a in range(m):
                    into[t, (a + d) % m] += p * x[a]
    for e in range(e_src.size):
        s = e_src[e]
        t = nxt[s, e_j[e]]
        if not (active[s] and active[t]):
            continue
        p = pnum[s, e_j[e]] * inv_denom
        d = shift[s, e_j[e]]
        for a in range(m):
            into[t, (a + d) % m] += p * (acc[a, s] + f * last[a, s])


@numba.njit(cache=True, parallel=True)
def _residual_sums(into, acc, last, f, active, init):
    """The largest and the summed ``|v - b - Q_shift^T v|`` (``b``: the start, seat 0) over the active states,
    ``Q_shift^T v`` in ``into`` (:func:`_residual_part`)."""
    m, n = acc.shape
    chunk = 65536
    n_chunks = (n + chunk - 1) // chunk
    worst = np.zeros(n_chunks)
    total = np.zeros(n_chunks)
    for c in numba.prange(n_chunks):
        wc = 0.0
        tc = 0.0
        for s in range(c * chunk, min(n, (c + 1) * chunk)):
            if not active[s]:
                continue
            for a in range(m):
                r = abs(acc[a, s] + f * last[a, s] - (1.0 if (s == init and a == 0) else 0.0) - into[s, a])
                tc += r
                if not r <= wc:
                    wc = r
        worst[c] = wc
        total[c] = tc
    return worst.max(), total.sum()


def _total(w: np.ndarray, n_states: int) -> float:
    return float(w[:n_states].sum())


@numba.njit(cache=True)
def _sweep_depth(nxt, is_mid):
    """The most pushes a mass can take in one mid-turn sweep: the longest run of branches from a row that
    throws again to a later one (the sweeps go through the rows in increasing order, whatever the part)."""
    n = is_mid.size
    depth = np.zeros(n, np.int64)
    deepest = 0
    for s in range(n):
        if not is_mid[s]:
            continue
        d = depth[s] + 1
        deepest = max(deepest, d)
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            if t > s and is_mid[t] and depth[t] < d:
                depth[t] = d
    return deepest
