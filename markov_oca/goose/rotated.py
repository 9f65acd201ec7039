"""The goose race seen from the player to move: one state for every N joint states.

A joint state is the seat to move and every player's local state. Rotating the
seats so that the mover comes first forgets only *which* seat moves, and the
rules do not care (turns go round in order, every interaction is the same for
every seat), so the chain of rotated states is the joint chain's quotient by
the cyclic shift of the seats: about 1/N of its states. A rotated state is
numbered in mixed radix with the mover's local state first::

    id = l_0 + L * (l_1 + L * (...))      (l_k: the k-th player after the mover)

Each branch keeps its *seat shift*: 0 for another throw, 1 when the next seat
moves, more when finished seats are skipped (``until = "last"``); an outcome
is named relative to the mover. Everything per seat is then a block of N
columns (column ``a``: seat ``a`` moves in that state) whose columns the shift
permutes along each branch: the expected visits are one such block from one
adjoint solve (:func:`markov_oca.solve.shifted_adjoint_solve`), and every
seat's chance to win, turns, throws, stakes, places and landings are sums over
it. Quantities that do not depend on the seat (the length of the game, the
chance that it ends) are plain single-column analyses of the rotated chain.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from ..analysis.chain import Chain, LengthDistribution, Structure, _count_distinct
from ..core.errors import SolverError, TooLargeError
from ..core.memory import available_memory, gib
from ..core.progress import progress_bar
from ..linalg.solve import THREADS, SolveReport, _shifted_adjoint_residual, shifted_adjoint_solve
from .model import BASE_BYTES, GooseModel, _encode, _expand
from .rules import special_squares

# ----------------------------------------------------------------------------- kernel


@numba.njit(cache=True)
def _rot_id(locs, start, P, L):
    """The rotated id of the local states ``locs`` seen from seat ``start``."""
    code = 0
    for i in range(P - 1, -1, -1):
        code = code * L + locs[(start + i) % P]
    return code


@numba.njit(cache=True)
def _rot_expand(R, P, L, goal, until, occupancy, n_full,
                l_sq, l_skip, l_wait, l_again, l_fin, after_skip, throw_local, bumped,
                t_prob, t_final, t_moved, t_stake, t_finished,
                locs, work, out_next, out_p, out_throw, out_stake, out_place, rot_next, rot_shift):
    """Every branch of one step from rotated state ``R``: ``rot_next`` is a rotated id, or ``-1 - k``
    when the game ends with outcome ``k`` counted from the mover; ``rot_shift`` the seat shift."""
    rest = R
    for i in range(P):
        locs[i] = rest % L
        rest //= L
    full = _encode(0, P, L, locs)
    c = _expand(full, P, L, goal, until, occupancy, n_full, l_sq, l_skip, l_wait, l_again, l_fin,
                after_skip, throw_local, bumped, t_prob, t_final, t_moved, t_stake, t_finished,
                locs, work, out_next, out_p, out_throw, out_stake, out_place)
    for j in range(c):
        t = out_next[j]
        if t >= n_full:
            rot_next[j] = -1 - (t - n_full)
            rot_shift[j] = 0
            continue
        seat = t % P
        rest = t // P
        for i in range(P):
            work[i] = rest % L
            rest //= L
        rot_next[j] = _rot_id(work, seat, P, L)
        rot_shift[j] = seat
    return c


@numba.njit(cache=True, inline="always")
def _scratch(P, J):
    """The work arrays of one :func:`_rot_expand` caller (a thread's own, in the parallel kernels)."""
    return (np.empty(P, np.int64), np.empty(P, np.int64), np.empty(J, np.int64), np.empty(J, np.int64),
            np.empty(J, np.bool_), np.empty(J, np.int32), np.empty(J, np.int8), np.empty(J, np.int64),
            np.empty(J, np.int8))


@numba.njit(cache=True, parallel=True)
def _rot_successors(queue, lo, hi, P, L, goal, until, occupancy, n_full,
                    l_sq, l_skip, l_wait, l_again, l_fin, after_skip, throw_local, bumped,
                    t_prob, t_final, t_moved, t_stake, t_finished, out):
    """The rotated successors of ``queue[lo:hi]`` (row ``r - lo`` of ``out``; -1 pads, outcomes left out), on
    every core: the expensive half of a breadth-first step, whose merge (:func:`_rot_merge`) is serial."""
    J = t_prob.shape[1] + 1
    chunk = 4096
    n_chunks = (hi - lo + chunk - 1) // chunk
    for q in numba.prange(n_chunks):
        locs, work, out_next, out_p, out_throw, out_stake, out_place, rot_next, rot_shift = _scratch(P, J)
        for r in range(lo + q * chunk, min(hi, lo + (q + 1) * chunk)):
            c = _rot_expand(queue[r], P, L, goal, until, occupancy, n_full, l_sq, l_skip, l_wait, l_again, l_fin,
                            after_skip, throw_local, bumped, t_prob, t_final, t_moved, t_stake, t_finished,
                            locs, work, out_next, out_p, out_throw, out_stake, out_place, rot_next, rot_shift)
            k = 0
            for j in range(c):
                if rot_next[j] >= 0:
                    out[r - lo, k] = rot_next[j]
                    k += 1
            for j in range(k, J):
                out[r - lo, j] = -1


@numba.njit(cache=True)
def _rot_merge(out, count, seen, queue, tail):
    """Append the unseen successors of ``out[:count]`` to the queue in order (the serial breadth-first order)."""
    for r in range(count):
        for j in range(out.shape[1]):
            t = out[r, j]
            if t < 0:
                break
            if not seen[t]:
                seen[t] = True
                queue[tail] = t
                tail += 1
    return tail


@numba.njit(cache=True, parallel=True)
def _rot_write(ids, index, P, L, goal, until, occupancy, n_full,
               l_sq, l_skip, l_wait, l_again, l_fin, after_skip, throw_local, bumped,
               t_prob, t_final, t_moved, t_stake, t_finished,
               nxt, pnum, shift, throw, stake, place, turn_start, lead, square, lo, hi):
    """Rows ``lo:hi`` (state ``r`` is rotated id ``ids[r]``): branches, and per state whether a step
    begins a turn, how many seats before the mover are finished (``lead``) and the mover's square."""
    J = t_prob.shape[1] + 1
    n_states = ids.size
    chunk = 4096
    n_chunks = (hi - lo + chunk - 1) // chunk
    for q in numba.prange(n_chunks):
        locs, work, out_next, out_p, out_throw, out_stake, out_place, rot_next, rot_shift = _scratch(P, J)
        for r in range(lo + q * chunk, min(hi, lo + (q + 1) * chunk)):
            c = _rot_expand(ids[r], P, L, goal, until, occupancy, n_full, l_sq, l_skip, l_wait, l_again, l_fin,
                            after_skip, throw_local, bumped, t_prob, t_final, t_moved, t_stake, t_finished,
                            locs, work, out_next, out_p, out_throw, out_stake, out_place, rot_next, rot_shift)
            for j in range(c):
                t = rot_next[j]
                nxt[r, j] = index[t] if t >= 0 else n_states + (-1 - t)
                pnum[r, j] = out_p[j]
                shift[r, j] = rot_shift[j]
                throw[r, j] = out_throw[j]
                if stake.shape[0] > 1:
                    stake[r, j] = out_stake[j]
                if place.shape[0] > 1:
                    place[r, j] = out_place[j]
            turn_start[r] = not l_again[locs[0]]
            k = 0
            while k < P - 1 and l_fin[locs[P - 1 - k]]:
                k += 1
            lead[r] = k
            square[r] = l_sq[locs[0]]


@numba.njit(cache=True)
def _can_end(nxt, absorbing, order):
    """States from which some outcome can be reached (sweeps in ``order``, successors first, to a fixed point)."""
    n, J = nxt.shape
    ok = absorbing.copy()
    changed = True
    while changed:
        changed = False
        for s in order:
            if ok[s]:
                continue
            for j in range(J):
                t = nxt[s, j]
                if t < 0:
                    break
                if ok[t]:
                    ok[s] = True
                    changed = True
                    break
    return ok


@numba.njit(cache=True)
def _per_seat(nxt, pnum, inv_denom, v, n_states, turn_start, lead, throw, stake, place, wins, turns, rounds,
              throws, stakes, places):
    """Every per-seat total from the visits block ``v`` (column a: seat a moves)."""
    P = v.shape[1]
    for s in range(n_states):
        ts = turn_start[s]
        for a in range(P):
            x = v[s, a]
            if x == 0.0:
                continue
            if ts:
                turns[a] += x
                if a <= lead[s]:
                    rounds[0] += x
            for j in range(nxt.shape[1]):
                t = nxt[s, j]
                if t < 0:
                    break
                w = x * pnum[s, j] * inv_denom
                if t >= n_states:
                    wins[(a + t - n_states) % P] += w
                if throw[s, j]:
                    throws[a] += w
                if stake.shape[0] > 1:
                    stakes[a] += w * stake[s, j]
                if place.shape[0] > 1 and place[s, j] > 0:
                    places[a, place[s, j] - 1] += w


@numba.njit(cache=True)
def _per_seat_given_end(nxt, pnum, inv_denom, v, h, n_states, turn_start, lead, throw, stake, turns, rounds,
                        throws, stakes):
    """The same totals weighted by the chance of ending (``h`` of the state, or of where a branch goes)."""
    P = v.shape[1]
    for s in range(n_states):
        ts = turn_start[s]
        for a in range(P):
            x = v[s, a]
            if x == 0.0:
                continue
            if ts:
                turns[a] += x * h[s]
                if a <= lead[s]:
                    rounds[0] += x * h[s]
            for j in range(nxt.shape[1]):
                t = nxt[s, j]
                if t < 0:
                    break
                w = x * pnum[s, j] * inv_denom * h[t]
                if throw[s, j]:
                    throws[a] += w
                if stake.shape[0] > 1:
                    stakes[a] += w * stake[s, j]


@numba.njit(cache=True)
def _dead_reach(nxt, shift, v, transient, deadlock, n_states):
    """(state, seat to move) pairs of deadlocked states that the game reaches."""
    n, J = nxt.shape
    P = v.shape[1]
    seen = np.zeros((n, P), np.bool_)
    for s in range(n_states):
        if not transient[s]:
            continue
        for a in range(P):
            if v[s, a] == 0.0:
                continue
            for j in range(J):
                t = nxt[s, j]
                if t < 0:
                    break
                if deadlock[t]:
                    seen[t, (a + shift[s, j]) % P] = True
    changed = True
    while changed:
        changed = False
        for s in range(n_states):
            if not deadlock[s]:
                continue
            for a in range(P):
                if not seen[s, a]:
                    continue
                for j in range(J):
                    t = nxt[s, j]
                    if t < 0:
                        break
                    b = (a + shift[s, j]) % P
                    if not seen[t, b]:
                        seen[t, b] = True
                        changed = True
    return seen


@numba.njit(cache=True)
def _landing_flow(nxt, pnum, inv_denom, v, square, throw, width, n_states, n_keys, dead_seen):
    """Visits times branch probability per (seat, key): key = mover's square * width + branch."""
    P = v.shape[1]
    out = np.zeros((P, n_keys))
    dead = np.zeros((P, n_keys), np.bool_)
    for s in range(n_states):
        base = min(square[s], n_keys // width - 1) * width
        for j in range(width):
            t = nxt[s, j]
            if t < 0:
                break
            if not throw[s, j]:
                continue
            for a in range(P):
                out[a, base + j] += v[s, a] * pnum[s, j] * inv_denom
                if dead_seen[s, a]:
                    dead[a, base + j] = True
    return out, dead



# ----------------------------------------------------------------------------- the forward pass
# When every step is a turn or part of one (the seat shift is 0 into a state where the mover throws again,
# 1 into any other, as without ``until = "last"``), the seat to move on turn t is t mod N: the visits block
# is the one-column push of the length distribution, summed turn by turn into column t mod N, and the
# seat-shifted solve is not needed. The push runs on both cores without write conflicts: a branch from
# (l_0, l_1, ...) goes to (l_1, ..., x) unless the move changed another piece, so the rows are split by the
# part that owns l_1 (the first digit of where they push); the few branches into the other part's rows
# ("exceptions": a piece sent back, a finished seat skipped) are pushed first, each by the part owning its
# target. The mass that stops where the mover throws again is pushed on within the turn by sweeps in row
# order over those rows (:func:`_mids_sweep`), on both parts.


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
    The rows a part's branches reach here are its own (see :func:`forward_pass`). Returns the mass moved and
    whether some went back to a row already swept (then another sweep)."""
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
    see :func:`turn_columns`), then the skipped branches ``e_src, e_j`` into its rows (with their own shift)."""
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

# ----------------------------------------------------------------------------- the chain


@dataclass
class RotatedChain:
    """A goose chain in branch form seen from the mover (see the module docstring).

    ``chain`` is the same branches as a plain :class:`Chain` (seat shifts left
    out, outcomes named from the mover): what does not depend on the seat
    (structure, length, the chance of ending) is asked of it.
    """

    model: GooseModel
    chain: Chain
    shift: np.ndarray  # (n, J) int8
    stake: np.ndarray  # (n, J) int16, or (1, J) when the rules have no stakes
    place: np.ndarray  # (n, J) int8, or (1, J) unless until = "last"
    lead: np.ndarray  # (n,) int8: finished seats just before the mover (a round starts with seat a <= lead)
    square: np.ndarray  # (n,) int16: the mover's square
    n_states: int

    @property
    def players(self) -> int:
        return self.model.players


def rotated_phases(model: GooseModel, states: int | None = None, transitions: int | None = None) -> dict[str, int]:
    """The bytes each phase of a rotated build and solve holds at its peak (interpreter excluded).

    Without ``states``, a quarter of the rotated ids are taken as reachable (a low
    guess, used only to refuse at once what cannot fit even then: 2-4 players reach
    64%, 50% and 38% of them on ``oca-moderna``).
    Per state: the branches (next int32, numerator int16, shift, throw, and
    stake/place when kept) and five small per-state arrays. The forward pass
    (:func:`forward_pass`, taken unless ``until = "last"``) adds a copy of the
    branches for its parts (5 bytes a slot), three blocks of N columns and two
    vectors; the seat-shifted solve instead adds the split matrix of the adjoint
    (int32 + float64 + shift, 13 bytes a transition) and 14 work blocks of N
    columns, the length pass (beside it) three vectors.
    """
    N = model.players
    full = model.n_local ** N
    J = model.board.branches + 1
    if states is None:
        states = full // 4 + 1
    if transitions is None:
        transitions = states * (J - 2)
    narrow = model.board.denominator < 2**15
    per_branch = 4 + (2 if narrow else 4) + 1 + 1 + (2 if model.board.stake.any() else 0) + \
        (1 if model.rules.until == "last" else 0)
    chain = states * (J * per_branch + 1 + 1 + 2 + 8 + 8)
    if model.rules.until != "last":
        # the forward pass (turns in seat order): the parts' copy of the branches (4 + 1 bytes a slot), the
        # visits, the last N turns and the residual's block (N columns each), two mass vectors
        solve = chain + states * (J * 5 + 2 * 8 + 3 * 8 * N)
    else:
        solve = chain + transitions * 13 + states * 14 * 8 * N + states * 3 * 8
    return {
        "explore": full * (1 + 4) + states * 8,
        "build": full * 4 + chain,
        "solve": solve,
    }


def rotated_estimate(model: GooseModel, states: int | None = None, transitions: int | None = None) -> int:
    """The peak of a rotated build and solve in bytes, interpreter included."""
    return BASE_BYTES + max(rotated_phases(model, states, transitions).values())


def check_rotated_memory(model: GooseModel, states: int | None = None, avail: int | None = None) -> None:
    """Refuse, in one line with the estimate, a rotated chain that would not fit in ``avail`` bytes."""
    avail = available_memory() if avail is None else avail
    need = rotated_estimate(model, states)
    if need > avail:
        what = f"{states:,} reachable states seen from the mover" if states is not None else \
            f"{model.n_local ** model.players:,} ids seen from the mover"
        raise TooLargeError(f"{model.rules.name} with {model.players} players: {what}, about {gib(need)} to build "
                            f"and solve; {gib(avail)} available; beyond exact reach here: use simulate, or "
                            "crosscheck against a simulation")


def build_rotated(model: GooseModel, progress: bool = False, max_memory: int | None = None) -> RotatedChain:
    """Explore the rotated states from the start and write their branches, rows numbered by rotated id."""
    P, L = model.players, model.n_local
    full = L**P
    avail = available_memory() if max_memory is None else max_memory
    check_rotated_memory(model, None, avail)
    if full >= 2**31:
        raise TooLargeError(f"{model.rules.name} with {P} players: {full:,} ids seen from the mover (about "
                            f"{gib(rotated_estimate(model))} to build and solve), beyond the 32-bit ids of this "
                            "chain; use simulate, or crosscheck against a simulation")
    args = model._kernel_args()
    start = int(model.local.plain[0]) * sum(L**i for i in range(P))
    seen = np.zeros(full, np.bool_)
    queue = np.empty(full, np.int32)
    head = tail = 0
    with progress_bar(progress, "exploring states") as bar:
        task = bar.add_task("exploring states seen from the mover", total=None)
        # Breadth first, a slice of the queue at a time: its successors on every core, then merged in order.
        seen[start] = True
        queue[0] = start
        tail = 1
        out = np.empty((min(full, 262_144), model.board.branches + 1), np.int32)
        while head < tail:
            hi = min(tail, head + out.shape[0])
            _rot_successors(queue, head, hi, *args, out)
            tail = _rot_merge(out, hi - head, seen, queue, tail)
            head = hi
            bar.update(task, completed=head, total=tail)
        del out
    del seen
    ids = queue[:tail].astype(np.int64)
    del queue
    n_states = ids.size
    check_rotated_memory(model, n_states, avail)
    # Rows are numbered by rotated id (the mover's local state least significant): the successors of the
    # states sharing (l_1, l_2, ...) are the states (l_1, l_2, ..., x), so a push over the rows in order writes
    # along a few dozen sequential streams (the forward pass, :func:`_forward_pass`: 0.11-0.14 s of CPU a turn
    # on 4-player oca-moderna against 0.23-0.25 s in the race order below). The solves sweep in race order
    # (``sweep_order``): decreasing progress in buckets of 6 squares, successors first, then decreasing id.
    ids.sort()
    locs = np.empty((n_states, P), np.int64)
    rest = ids.copy()
    for i in range(P):
        locs[:, i] = rest % L
        rest //= L
    del rest
    key = model.local.square[locs].sum(axis=1) // 6
    del locs
    race = np.lexsort((-ids, -key))
    del key
    start_row = int(np.searchsorted(ids, start))
    index = np.full(full, -1, np.int32)
    index[ids] = np.arange(n_states, dtype=np.int32)
    n = n_states + P
    J = model.board.branches + 1
    nxt = np.full((n, J), -1, np.int32)
    pnum = np.zeros((n, J), np.int16 if model.board.denominator < 2**15 else np.int32)
    shift = np.zeros((n, J), np.int8)
    throw = np.zeros((n, J), np.bool_)
    has_stakes = bool(model.board.stake.any())
    stake = np.zeros((n, J) if has_stakes else (1, J),
                     np.int16 if int(model.board.stake.max(initial=0)) * 2 < 2**15 else np.int32)
    place = np.zeros((n, J) if model.rules.until == "last" else (1, J), np.int8)
    turn_start = np.zeros(n, np.bool_)
    lead = np.zeros(n, np.int8)
    square = np.zeros(n, np.int16)
    block = 1_000_000
    with progress_bar(progress, "writing transitions") as bar:
        task = bar.add_task("writing transitions", total=n_states)
        for lo in range(0, n_states, block):
            hi = min(n_states, lo + block)
            _rot_write(ids, index, *args, nxt, pnum, shift, throw, stake, place, turn_start, lead, square, lo, hi)
            bar.update(task, completed=hi)
    del index
    for k in range(P):
        nxt[n_states + k, 0] = n_states + k
        pnum[n_states + k, 0] = model.board.denominator
    names = [f"seat {k + 1} after the mover" if k else "the mover" for k in range(P)]
    chain = Chain(
        next=nxt, pnum=pnum, denom=model.board.denominator, init=start_row,
        outcomes={names[k]: n_states + k for k in range(P)}, players=P,
        mover=np.where(np.arange(n) < n_states, 0, -1).astype(np.int8),
        state_rewards={"turns": turn_start}, branch_rewards={"throws": throw},
        turn_start=turn_start, state_ids=ids,
        sweep_order=np.concatenate([race, np.arange(n_states, n)]).astype(np.int64),
    )
    return RotatedChain(model, chain, shift, stake, place, lead, square, n_states)


# ----------------------------------------------------------------------------- analyses


def rotated_structure(rc: RotatedChain) -> Structure:
    """Outcomes, deadlock and transient states; the strongly connected classes only when some state
    cannot reach an outcome (otherwise there is no deadlock and nothing else to find)."""
    chain = rc.chain
    if "structure" in chain.__dict__:
        return chain.structure
    absorbing = np.zeros(chain.n, bool)
    absorbing[list(chain.outcomes.values())] = True
    ok = _can_end(chain.next, absorbing, chain.order())
    if ok.all():
        st = Structure(absorbing, np.zeros(chain.n, bool), ~absorbing, 0)
        chain.__dict__["structure"] = st
        return st
    return chain.structure


def visits_block(rc: RotatedChain) -> tuple[np.ndarray, SolveReport]:
    """Expected visits of every (state, seat to move) from the start: one shifted adjoint solve."""
    chain = rc.chain
    st = rotated_structure(rc)
    b = np.zeros((chain.n, rc.players))
    b[chain.init, 0] = 1.0
    return shifted_adjoint_solve(chain.next, chain.pnum, rc.shift, chain.denom, st.transient, chain.order(), b)


def _length_in_thread(chain: Chain, tail: float) -> tuple[threading.Thread, dict]:
    """The length distribution (one column, the seat does not matter) on the other core."""
    box: dict = {}

    def run() -> None:
        t0 = time.perf_counter()
        try:
            box["dist"] = chain.length_distribution(tail=tail)
        except BaseException as exc:  # handed back to the caller
            box["error"] = exc
        box["seconds"] = time.perf_counter() - t0

    th = threading.Thread(target=run, name="length", daemon=True)
    th.start()
    return th, box



JOINT_LANDINGS_UPTO = 3  # players up to which landings=True takes the joint chain (goose.solve), for the chances
VISITS_L1 = 1e-10  # the forward pass goes on until the sum of its true residual is below this
POLISH_STATES = 2_000_000  # states up to which a rest that the pass leaves above VISITS_L1 is solved for (cheap)
DROP_FACTOR = 1e-12  # above POLISH_STATES, a row holding less than DROP_FACTOR * VISITS_L1 is let go
PARALLEL_PASS = 1_000_000  # states from which the forward pass runs in two parts


def turn_columns(rc: RotatedChain) -> bool:
    """Whether the seat to move on turn t is always t mod N (then :func:`forward_pass` gives the visits)."""
    c = rc.chain
    return bool(_turn_shifts(c.next, rc.shift, c.turn_start, rc.n_states))


def _parts(rc: RotatedChain, n_parts: int) -> tuple[np.ndarray, np.ndarray]:
    """Which part owns each row as a source (by l_1) and as a target (by l_0): contiguous ranges of the
    local state, balanced by the branches pushed from them."""
    c = rc.chain
    ns, L = rc.n_states, rc.model.n_local
    ids = c.state_ids
    d1 = (ids // L) % L
    weight = np.bincount(d1, weights=(c.next[:ns] >= 0).sum(axis=1), minlength=L)
    cum = np.cumsum(weight) / max(1.0, float(weight.sum()))
    part_of = np.minimum((cum * n_parts - 1e-9).astype(np.int64), n_parts - 1)
    part_of = np.maximum.accumulate(np.maximum(part_of, 0))
    return part_of[d1].astype(np.int8), part_of[ids % L].astype(np.int8)


def forward_pass(rc: RotatedChain, st: Structure, tail: float, max_turns: int = 1_000_000,
                 parts: int | None = None, progress=None) -> tuple[LengthDistribution, np.ndarray, SolveReport]:
    """The length distribution to ``tail`` and the visits block, from one push a turn (see above).

    After the length's tail, N more turns are played, each into its own column; the turns after them are
    added as a geometric series of those N (the mass in play shrinks by a steady factor by then), kept
    when the true residual of the visits' system, summed, is then under VISITS_L1. Otherwise the push goes
    on (a hundredth of the mass at a time) and tries again; a small chain solves for the rest instead.
    The report gives the largest true residual.
    """
    from ..core.interrupt import check

    c = rc.chain
    ns, N, n = rc.n_states, rc.players, c.n
    inv = 1.0 / c.denom
    # two parts from a million states (below that, a thread's start each turn costs more than it saves)
    n_parts = max(1, (min(THREADS, 2) if ns >= PARALLEL_PASS else 1) if parts is None else parts)
    src_part, tgt_part = _parts(rc, n_parts)
    # A branch into a turn's start is pushed by the part that owns the target's l_0 (every branch from the
    # rows sharing l_1 ends in rows with that l_0); a branch into a row where the mover throws again by the
    # part that owns the target's l_1 (such a branch stays among the rows sharing (l_1, l_2, ...), so with
    # its source). Any such ownership keeps the parts' writes apart; this one skips the fewest branches.
    is_mid = np.zeros(n, np.bool_)
    is_mid[:ns] = st.transient[:ns] & ~c.turn_start[:ns]
    owner = np.where(is_mid[:ns], src_part, tgt_part).astype(np.int8)
    code, end, mask, bits, e_src, e_j = _split_parts(c.next, c.pnum, ns, n_parts, src_part, owner)
    # the skipped branches by the part owning their target (pushed by it, before the parts' own branches),
    # those from rows that throw again apart (pushed after each mid-turn sweep)
    e_own = owner[c.next[e_src, e_j]] if e_src.size else np.zeros(0, np.int8)
    e_mid = is_mid[e_src]
    skipped = [(e_src[e_own == q], e_j[e_own == q]) for q in range(n_parts)]
    skipped_mid = [(e_src[e_mid & (e_own == q)], e_j[e_mid & (e_own == q)]) for q in range(n_parts)]
    mid_src = np.unique(e_src[e_mid]).astype(np.int64)  # rows whose ``pushed`` the skipped ones read
    mid_rows = [np.flatnonzero(is_mid[:ns] & (src_part == q)) for q in range(n_parts)]
    del e_src, e_j, e_own, e_mid, owner
    # segments: runs of rows owned by one part, grouped by part
    cut = np.flatnonzero(np.diff(src_part)) + 1
    lo = np.concatenate([[0], cut]).astype(np.int64)
    hi = np.concatenate([cut, [ns]]).astype(np.int64)
    owner = src_part[lo]
    by = np.argsort(owner, kind="stable")
    seg_lo, seg_hi = lo[by], hi[by]
    seg_ptr = np.searchsorted(owner[by], np.arange(n_parts + 1))
    del src_part, tgt_part, cut, lo, hi, owner, by
    pool = ThreadPoolExecutor(n_parts) if n_parts > 1 else None
    # A big chain lets go of the rows that hold less than DROP_FACTOR * VISITS_L1 (late in a long game most rows
    # hold less than 1e-22: at turn 600 of four-player oca-moderna 81% of them, 9e-17 together). What is let go
    # is counted in the length's tail and, being visits never pushed on, in the true residual (which the check
    # computes). A small one lets nothing go, and solves for what the pass leaves when the series fails.
    small = ns <= POLISH_STATES
    eps = 0.0 if small else DROP_FACTOR * VISITS_L1
    dropped = [0.0]

    def run(f, jobs) -> list:
        return [f(*a) for a in jobs] if pool is None else list(pool.map(lambda a: f(*a), jobs))

    def slots_out(w: np.ndarray) -> np.ndarray:
        slots = w[n:]
        out = slots.reshape(n_parts, N).sum(axis=0)
        slots[:] = 0.0
        return out

    def push(v: np.ndarray, w: np.ndarray, acc: np.ndarray) -> np.ndarray:
        """One turn's push of ``v`` into ``w`` (``v`` left zero); the mass into each outcome."""
        run(_push_skipped, [(c.next, c.pnum, a, b, inv, v, w, eps) for a, b in skipped])
        dropped[0] += sum(run(_push_part, [(code, end, mask, bits, seg_lo, seg_hi, int(seg_ptr[q]),
                                            int(seg_ptr[q + 1]), inv, v, w, acc, eps) for q in range(n_parts)]))
        return slots_out(w)

    mids = np.flatnonzero(is_mid)
    deads = np.flatnonzero(st.deadlock[:ns])
    bufs = [np.zeros(n + n_parts * N), np.zeros(n + n_parts * N)]  # the mass in play, and the next turn's
    mid = np.zeros(n + n_parts * N)  # the mass pushed on within a turn, and a scratch for the deadlocked
    pushed = np.zeros(n if mids.size else 1)  # what each row that throws again pushed in this turn's sweeps
    backs = [_mid_back(code, end, mask, r, is_mid) for r in mid_rows]
    acc = np.zeros((N, n))
    last = np.zeros((N, n))
    bufs[0][c.init] = 1.0 if st.transient[c.init] else 0.0

    def residual(acc: np.ndarray, last: np.ndarray, f: float) -> tuple[float, float]:
        """The true residual of the visits ``acc + f last``, largest and summed, from the branches (both parts)."""
        into = np.zeros((n, N))
        run(_residual_part, [(code, end, mask, bits, seg_lo, seg_hi, int(seg_ptr[q]), int(seg_ptr[q + 1]), c.next,
                              c.pnum, a, b, rc.shift, inv, st.transient, c.turn_start, acc, last, f, into)
                             for q, (a, b) in enumerate(skipped)])
        return _residual_sums(into, acc, last, f, st.transient, c.init)

    def play(into: np.ndarray) -> tuple[np.ndarray, float]:
        v, w = bufs
        out = push(v, w, into)
        first = None
        while mids.size:
            # each part's sweeps, then the skipped branches of what they pushed (which may stop in a row
            # that throws again: then another sweep). Throws again that can come back round (a cycle) would
            # sweep until the mass underflows: what is left below 1e-17 of the first sweep's mass stays in
            # play and is pushed with the next turn (in its seat's column: an error the residual counts).
            res = run(_mids_sweep, [(code, end, mask, bits, inv, mid_rows[q], backs[q], w, pushed, into)
                                     for q in range(n_parts)])
            moved = sum(r[0] for r in res)
            first = moved if first is None else first
            if moved > 0.0 and mid_src.size:
                run(_push_skipped, [(c.next, c.pnum, a, b, inv, pushed, w, 0.0) for a, b in skipped_mid])
                pushed[mid_src] = 0.0
            out += slots_out(w)
            if not (any(r[1] for r in res) or (moved > 0.0 and mid_src.size)) or moved <= 1e-17 * first:
                break
        dead_now = _take(deads, w, mid) if deads.size else 0.0
        if deads.size:
            mid[deads] = 0.0
        bufs.reverse()
        return out, dead_now

    pmf = np.zeros((1024, N))
    left, dead = _total(bufs[0], ns), 0.0
    lefts = [left]
    stop = tail
    t = 0
    t_len = None
    clock = time.perf_counter()
    while True:
        while left >= stop and t < max_turns:
            t += 1
            d0 = dropped[0]
            out, dead_now = play(acc[(t - 1) % N])
            if t_len is None:
                if t >= pmf.shape[0]:
                    pmf = np.concatenate([pmf, np.zeros_like(pmf)])
                pmf[t] = out
            dead += dead_now
            left = left - float(out.sum()) - dead_now - (dropped[0] - d0) if t % 64 else _total(bufs[0], ns)
            if left < stop:
                left = _total(bufs[0], ns)
            if t_len is None and left + dropped[0] < tail:
                t_len, left_len, dead_len = t, left + dropped[0], dead
            lefts.append(left)
            if time.perf_counter() - clock > 0.1:
                check()
                clock = time.perf_counter()
                if progress is not None:
                    progress(t, left)
        if t_len is None:
            t_len, left_len, dead_len = t, left + dropped[0], dead
        # N more turns, each into its own column (``last``); the turns after them are taken as a geometric
        # series of those N (by then the mass in play shrinks by a steady factor every N turns) when that
        # brings the true residual's sum, which bounds the error of every total, under VISITS_L1.
        last[:] = 0.0
        k = 0
        while k < N and t < max_turns and left > 0:
            t += 1
            k += 1
            out, dead_now = play(last[(t - 1) % N])
            dead += dead_now
            left = _total(bufs[0], ns)
            lefts.append(left)
        acc += last
        # Without the series, the residual is the mass still in play (in column t mod N) and the mass let go.
        r_max = max(float(np.abs(bufs[0][:ns]).max(initial=0.0)), eps if dropped[0] else 0.0)
        r_sum, f = left + dropped[0], 0.0
        if k == N and len(lefts) > 2 * N and lefts[-1 - N] > 0:
            q = lefts[-1] / lefts[-1 - N]
            if 0.0 < q < 1.0:
                g_max, g_sum = residual(acc, last, q / (1.0 - q))
                if g_sum < r_sum:
                    r_max, r_sum, f = g_max, g_sum, q / (1.0 - q)
        if r_sum <= VISITS_L1 or t >= max_turns or left == 0:
            break
        stop = min(stop, left) * 1e-2
    if pool is not None:
        pool.shutdown()
    dist = LengthDistribution(pmf[:t_len + 1].sum(axis=1), float(dead_len), float(left_len),
                              by_outcome=pmf[:t_len + 1].copy())
    v = bufs[0]
    code = bufs = mid = pushed = backs = is_mid = None  # let go before the visits' block
    method = f"forward pass of {t} turns" + (f" (rows under {eps:.0e} let go: {dropped[0]:.1e} in all)"
                                             if dropped[0] else "")
    if f:
        acc += f * last
        method += f", then the rest as a geometric series ({q:.4g} of the mass left after {N} turns)"
    del last
    vis = np.ascontiguousarray(acc.T)
    del acc
    vis[~st.transient] = 0.0
    residual = r_max
    if r_sum > VISITS_L1 and small:
        # a small chain: what is still in play is solved for instead (a few iterations of the shifted solve)
        if f:
            raise AssertionError("unreachable: the series is kept only under VISITS_L1")
        rest = np.zeros((n, N))
        rest[:ns, t % N] = v[:ns]
        more, rep = shifted_adjoint_solve(c.next, c.pnum, rc.shift, c.denom, st.transient, c.order(), rest,
                                          tol=1e-15)
        vis += more
        b = np.zeros((n, N))
        b[c.init, 0] = 1.0
        residual = float(_shifted_adjoint_residual(c.next, c.pnum, rc.shift, inv, st.transient, b, vis))
        method += f", then {rep.method} for the rest ({rep.iterations} iterations)"
    if not residual <= 1e-9:
        raise SolverError(f"expected visits: residual {residual:.3g} is too large")
    return dist, vis, SolveReport(method, residual, t)


def solve_rotated(model: GooseModel, *, landings: bool | None = None, tail: float = 1e-10, progress: bool = False,
                  timer: dict[str, float] | None = None, max_memory: int | None = None):
    """Every figure of ``solve`` for ``model`` from its chain seen from the mover (floating point).

    Winning chances, deadlock, each seat's turns, throws, stakes and places,
    rounds, the length distribution (computed beside the visits' solve, on the
    other core) and the expected landings per seat and square, all from one
    seat-shifted adjoint solve. The chance of ever landing on a square needs one
    N-column solve per square; it is left out (``nan``) and the note says so.
    """
    from ..analysis.results import Expectation, summarise_length
    from ..engine.race import Landing, SeatResult, SolveResults

    timer = {} if timer is None else timer
    rules, N = model.rules, model.players
    t0 = time.perf_counter()
    rc = build_rotated(model, progress=progress, max_memory=max_memory)
    if landings is True and N > JOINT_LANDINGS_UPTO:
        from .rotated_landings import check_landings_cost

        check_landings_cost(rc, max_memory)  # hours of work, or more memory than here, refused before the pass
    chain = rc.chain
    n_states = rc.n_states
    timer["build"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    st = rotated_structure(rc)
    dead_any = bool(st.deadlock.any())
    with progress_bar(progress) as bar:
        bar.add_task(f"solving {n_states:,} states seen from the mover ({N} seats each)", total=None)
        fast = turn_columns(rc)
        if fast:
            # the seat to move on turn t is t mod N: one push a turn gives the length and the visits
            t_push = time.perf_counter()
            dist, v, report = forward_pass(rc, st, tail)
            box = {"dist": dist, "seconds": time.perf_counter() - t_push}
            th = None
        else:
            th, box = _length_in_thread(chain, tail)
            v, report = visits_block(rc)
        reports = [report]
        inv = 1.0 / chain.denom
        wins = np.zeros(N)
        turns = np.zeros(N)
        rounds = np.zeros(1)
        throws = np.zeros(N)
        stakes = np.zeros(N)
        places = np.zeros((N, max(1, N - 1)))
        _per_seat(chain.next, chain.pnum, inv, v, n_states, chain.turn_start, rc.lead, chain.branch_rewards["throws"],
                  rc.stake, rc.place, wins, turns, rounds, throws, stakes, places)
        deadlock = max(0.0, 1.0 - float(wins.sum())) if dead_any else 0.0
        inf_turns = np.zeros(N, bool)
        inf_throws = np.zeros(N, bool)
        inf_stakes = np.zeros(N, bool)
        inf_rounds = False
        dead_seen = np.zeros((1, N), np.bool_)
        if dead_any:
            # Which seats keep taking turns, throwing or paying in a deadlock the game reaches.
            dead_seen = _dead_reach(chain.next, rc.shift, v, st.transient, st.deadlock, n_states)
            step_throw = chain.step_reward(chain.branch_rewards["throws"])
            step_stake = chain.step_reward(rc.stake) if rc.stake.shape[0] > 1 else np.zeros(chain.n)
            for a in range(N):
                at = dead_seen[:, a]
                inf_turns[a] = bool((at & chain.turn_start).any())
                inf_throws[a] = bool((at & (step_throw > 0)).any())
                inf_stakes[a] = bool((at & (step_stake > 0)).any())
                inf_rounds |= bool((at[:n_states] & chain.turn_start[:n_states] & (a <= rc.lead[:n_states])).any())
            # Given the end: the totals weighted by the chance of ending (one backward solve, seat-free).
            b_end = np.zeros(chain.n)
            outs = np.zeros(chain.n, bool)
            outs[n_states:] = True
            valid = chain.next >= 0
            into = valid & outs[np.maximum(chain.next, 0)]
            b_end[:] = np.where(into, chain.pnum, 0).sum(axis=1) * inv
            b_end[~st.transient] = 0.0
            h, rep_h = chain.system.solve(b_end)
            reports.append(rep_h)
            h[n_states:] = 1.0
            g_turns, g_rounds, g_throws, g_stakes = np.zeros(N), np.zeros(1), np.zeros(N), np.zeros(N)
            _per_seat_given_end(chain.next, chain.pnum, inv, v, h, n_states, chain.turn_start, rc.lead,
                                chain.branch_rewards["throws"], rc.stake, g_turns, g_rounds, g_throws, g_stakes)
            p_end = 1.0 - deadlock
            given = (lambda x: x / p_end) if p_end > 0 else (lambda x: x * np.nan)
            g_turns, g_rounds, g_throws, g_stakes = (given(x) for x in (g_turns, g_rounds, g_throws, g_stakes))
        else:
            g_turns, g_rounds, g_throws, g_stakes = turns, rounds, throws, stakes
        timer["solve"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        landing_list = None
        if landings is None or landings:
            goal, width = model.board.goal, model.board.branches
            table = np.zeros((goal * width, goal + 1), bool)
            for s, throws_at in enumerate(model.board.throws):
                for j, t in enumerate(throws_at):
                    table[s * width + j, list(t.landings)] = True
            flow, dead_keys = _landing_flow(chain.next, chain.pnum, inv, v, rc.square, chain.branch_rewards["throws"],
                                            width, n_states, goal * width, dead_seen if dead_any else
                                            np.zeros((n_states, N), np.bool_))
            counts = flow @ table.astype(np.float64)
            if dead_any:
                counts = np.where((dead_keys.astype(np.int64) @ table.astype(np.int64)) > 0, np.inf, counts)
            landing_list = [Landing(a + 1, q, float("nan"), float(counts[a, q])) for a in range(N)
                            for q in range(goal + 1)]
            ever_note = ""
            if N > JOINT_LANDINGS_UPTO:  # the chances of ever landing (rotated_landings), when asked for
                from .rotated_landings import ever_landing
                landing_list, ever_note, ever_rep = ever_landing(rc, st, landing_list, compute=landings is True,
                                                                 progress=progress)
                reports += [ever_rep] if ever_rep is not None else []
            timer["landings"] = time.perf_counter() - t2
        if th is not None:
            th.join()
    if "error" in box:
        raise box["error"]
    dist = box["dist"]
    timer["length"] = box["seconds"]

    def ex(total: float, given: float, infinite: bool) -> Expectation:
        return Expectation(float("inf") if infinite else float(total), float(given))

    seats = []
    for a in range(N):
        if rc.place.shape[0] > 1 and N > 1:
            pl = [float(places[a, k - 1]) for k in range(1, N)] + [float(wins[a])]
            win = pl[0]
        else:
            pl, win = None, float(wins[a])
        seats.append(SeatResult(seat=a + 1, win=win, turns=ex(turns[a], g_turns[a], inf_turns[a]),
                                throws=ex(throws[a], g_throws[a], inf_throws[a]),
                                stakes=ex(stakes[a], g_stakes[a], inf_stakes[a]) if rc.stake.shape[0] > 1 else None,
                                places=pl))
    expected = {
        "turns": ex(turns.sum(), g_turns.sum(), inf_turns.any()),
        "rounds": ex(rounds[0], g_rounds[0], inf_rounds),
        "throws": ex(throws.sum(), g_throws.sum(), inf_throws.any()),
    }
    names = model.outcome_names()
    transitions = int(_count_distinct(chain.next, rc.shift))
    length = summarise_length(dist, expected["turns"].given_end)
    note = (f"solved on the chain seen from the player to move: {n_states:,} states for the {N} seats' "
            f"{N * n_states:,} joint ones (transitions counted with their seat shift)")
    landings_note = ""
    if landing_list is not None:
        landings_note = (
            "chance of ever landing not computed on the chain seen from the mover; ask for it with --landings "
            "(the joint chain: one block solve, a column per square and seat)" if N <= JOINT_LANDINGS_UPTO else
            ever_note)
    return SolveResults(
        rules=rules.name, title=rules.title, seed=rules.seed, source=rules.source, players=N,
        options=dict(rules.options), states=chain.n, transitions=transitions, exact=False,
        outcomes={names[a]: float(wins[a]) for a in range(N)}, deadlock=deadlock, seats=seats, expected=expected,
        length=length, landings=landing_list, landings_note=landings_note,
        special_squares=special_squares(rules),
        solver=[{"method": r.method, "residual": r.residual, "iterations": r.iterations} for r in reports],
        timings=timer, note=note,
    )
