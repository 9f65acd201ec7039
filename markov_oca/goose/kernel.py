"""The goose step kernel: one throw (or one missed turn) from a state, and the passes built on it.

The board and local-state tables travel as one :class:`Tables` bundle, built
once per model (:meth:`~markov_oca.goose.model.GooseModel.tables`). A state is
either a joint id (the seat to move and every local state, see
:mod:`~markov_oca.goose.model`) or a rotated id (the local states seen from the
mover, see :mod:`~markov_oca.goose.rotated`); :func:`_step` plays both, told by
its ``rotated`` flag, so the breadth-first exploration (:func:`_successors`,
:func:`_merge`) and the writing of the branches (:func:`_write`) are written
once for both chains.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

UNTIL_FIRST, UNTIL_LAST = 0, 1
OCC_NONE, OCC_OCCUPANT, OCC_MOVER = 0, 1, 2
CHUNK = 4096  # rows a core takes at a time in the parallel passes


class Tables(NamedTuple):
    """What the step kernel reads: sizes, option codes, local-state tables and throw tables.

    ``l_*`` are indexed by local state (square, turns to miss, waiting, throws
    again, finished), ``after_skip`` gives the local state with one turn fewer
    to miss, ``throw_local[square, branch]`` the mover's new local state and
    ``bumped[square, turns to miss]`` that of a piece sent back there; ``t_*``
    are the compiled board's tables ``[square, branch]``.
    """

    players: int
    n_local: int
    goal: int
    until: int
    occupancy: int
    n_full: int  # joint ids: an outcome k is ``n_full + k``
    l_sq: np.ndarray
    l_skip: np.ndarray
    l_wait: np.ndarray
    l_again: np.ndarray
    l_fin: np.ndarray
    after_skip: np.ndarray
    throw_local: np.ndarray
    bumped: np.ndarray
    t_prob: np.ndarray
    t_final: np.ndarray
    t_moved: np.ndarray
    t_stake: np.ndarray
    t_finished: np.ndarray


class Branches(NamedTuple):
    """The arrays :func:`_write` fills, per branch ``[row, j]`` and per row; a (1, J) or (1,) array is not kept.

    ``shift`` (the seat shift), ``lead`` and ``square`` are the rotated chain's, ``mover`` and
    ``round_start`` the joint chain's; ``stake`` and ``place`` only when the rules count them.
    """

    nxt: np.ndarray
    pnum: np.ndarray
    shift: np.ndarray
    throw: np.ndarray
    stake: np.ndarray
    place: np.ndarray
    turn_start: np.ndarray
    mover: np.ndarray
    round_start: np.ndarray
    lead: np.ndarray
    square: np.ndarray


@numba.njit(cache=True)
def _decode(state, n_players, n_local, locs):
    seat = state % n_players
    rest = state // n_players
    for i in range(n_players):
        locs[i] = rest % n_local
        rest //= n_local
    return seat


@numba.njit(cache=True)
def _encode(seat, n_players, n_local, locs):
    code = 0
    for i in range(n_players - 1, -1, -1):
        code = code * n_local + locs[i]
    return seat + n_players * code


@numba.njit(cache=True)
def _rot_id(locs, start, P, L):
    """The rotated id of the local states ``locs`` seen from seat ``start``."""
    code = 0
    for i in range(P - 1, -1, -1):
        code = code * L + locs[(start + i) % P]
    return code


@numba.njit(cache=True)
def _next_seat(seat, n_players, l_fin, locs):
    for step in range(1, n_players + 1):
        k = (seat + step) % n_players
        if not l_fin[locs[k]]:
            return k
    return seat


@numba.njit(cache=True, inline="always")
def _scratch(P, J):
    """The work arrays of one :func:`_expand` caller (a thread's own, in the parallel kernels): the local
    states, a copy to change, and per branch the next id, numerator, throw, stake, place and seat shift."""
    return (np.empty(P, np.int64), np.empty(P, np.int64), np.empty(J, np.int64), np.empty(J, np.int64),
            np.empty(J, np.bool_), np.empty(J, np.int32), np.empty(J, np.int8), np.empty(J, np.int8))


@numba.njit(cache=True, inline="always")
def _pass(tb, sc, seat, m):
    """The one branch of a mover who waits or misses a turn (local state ``m``)."""
    P, L = tb.players, tb.n_local
    locs, work, out_next, out_p, out_throw, out_stake, out_place = sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], sc[6]
    denom_all = 0
    for j in range(tb.t_prob.shape[1]):
        denom_all += tb.t_prob[0, j]
    for i in range(P):
        work[i] = locs[i]
    if tb.l_skip[m] > 0:
        work[seat] = tb.after_skip[m]
    out_next[0] = _encode(_next_seat(seat, P, tb.l_fin, work), P, L, work)
    out_p[0] = denom_all
    out_throw[0] = False
    out_stake[0] = 0
    out_place[0] = 0
    return 1


@numba.njit(cache=True, inline="always")
def _finish(tb, work, seat, sq, j):
    """Where a throw that finishes goes: the next joint id, or an outcome ``n_full + k``; and the place won
    (0 when places are not counted)."""
    P, L, n_full, l_fin = tb.players, tb.n_local, tb.n_full, tb.l_fin
    if tb.until == UNTIL_FIRST:
        return n_full + seat, 0
    done = 0
    for i in range(P):
        if l_fin[work[i]]:
            done += 1
    work[seat] = tb.throw_local[sq, j]
    left = -1
    n_left = 0
    for i in range(P):
        if not l_fin[work[i]]:
            left = i
            n_left += 1
    if n_left <= 1:
        return n_full + (left if left >= 0 else seat), done + 1
    return _encode(_next_seat(seat, P, l_fin, work), P, L, work), done + 1


@numba.njit(cache=True)
def _expand(state, tb, sc):
    """Every branch of one step from joint state ``state``; returns how many.

    ``sc`` is :func:`_scratch`'s. Its next ids are joint ids; an outcome is
    ``n_full + k``: seat k won (until first), or seat k was left last (until last).
    """
    # the tables taken out of the bundle once a step: each use of a bundle's array in the loop would count a
    # reference to it (an atomic operation), a third of the time of a step (measured)
    (P, L, goal, _, occupancy, _, l_sq, l_skip, l_wait, l_again, l_fin, _, throw_local, bumped, t_prob, t_final,
     t_moved, t_stake, t_finished) = tb
    locs, work, out_next, out_p, out_throw, out_stake, out_place = sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], sc[6]
    seat = _decode(state, P, L, locs)
    m = locs[seat]
    if l_wait[m] or l_skip[m] > 0:
        return _pass(tb, sc, seat, m)
    sq = l_sq[m]
    count = 0
    for j in range(t_prob.shape[1]):
        p = t_prob[sq, j]
        if p == 0:
            continue
        for i in range(P):
            work[i] = locs[i]
        out_p[count] = p
        out_throw[count] = True
        out_stake[count] = t_stake[sq, j]
        out_place[count] = 0
        if t_finished[sq, j]:
            out_next[count], out_place[count] = _finish(tb, work, seat, sq, j)
            count += 1
            continue
        new = throw_local[sq, j]
        work[seat] = new
        f = t_final[sq, j]
        if t_moved[sq, j] and f != 0 and f != goal:
            # occupancy and release where the mover comes to rest
            for k in range(P):
                if k == seat or l_fin[work[k]] or l_sq[work[k]] != f:
                    continue
                if occupancy == OCC_OCCUPANT:
                    work[k] = bumped[sq, l_skip[work[k]]]  # to the mover's origin square
                elif occupancy == OCC_MOVER:
                    work[seat] = sq
                    new = sq
                    break
                elif l_wait[work[k]]:
                    work[k] = f  # released, stays on the square
        nseat = seat if l_again[new] else _next_seat(seat, P, l_fin, work)
        out_next[count] = _encode(nseat, P, L, work)
        count += 1
    return count


@numba.njit(cache=True)
def _step(state, tb, sc, rotated):
    """Every branch of one step from ``state``, a joint id, or with ``rotated`` a rotated id; returns how many.

    The next ids are of the same kind (a rotated one with its seat shift in ``sc[7]``), an outcome is
    ``n_full + k`` (k counted from seat 0, the mover when rotated), and ``sc[0]`` is left holding the
    state's local states.
    """
    if not rotated:
        return _expand(state, tb, sc)
    P, L, n_full = tb.players, tb.n_local, tb.n_full
    locs, work, out_next, out_shift = sc[0], sc[1], sc[2], sc[7]
    rest = state
    for i in range(P):
        locs[i] = rest % L
        rest //= L
    c = _expand(_encode(0, P, L, locs), tb, sc)
    for j in range(c):
        t = out_next[j]
        if t >= n_full:
            out_shift[j] = 0
            continue
        seat = t % P
        rest = t // P
        for i in range(P):
            work[i] = rest % L
            rest //= L
        out_next[j] = _rot_id(work, seat, P, L)
        out_shift[j] = seat
    return c


@numba.njit(cache=True, inline="always")
def _successor_row(queue, r, lo, tb, rotated, out, sc):
    """Row ``r - lo`` of ``out``: the successors of ``queue[r]`` (-1 pads, outcomes left out)."""
    c = _step(queue[r], tb, sc, rotated)
    out_next, n_full = sc[2], tb.n_full
    k = 0
    for j in range(c):
        if out_next[j] < n_full:
            out[r - lo, k] = out_next[j]
            k += 1
    for j in range(k, out.shape[1]):
        out[r - lo, j] = -1


@numba.njit(cache=True, parallel=True)
def _successors(queue, lo, hi, tb, rotated, out):
    """The successors of ``queue[lo:hi]`` (:func:`_successor_row`), on every core: the expensive half of a
    breadth-first step, whose merge (:func:`_merge`) is serial."""
    for q in numba.prange((hi - lo + CHUNK - 1) // CHUNK):
        sc = _scratch(tb.players, tb.t_prob.shape[1] + 1)
        for r in range(lo + q * CHUNK, min(hi, lo + (q + 1) * CHUNK)):
            _successor_row(queue, r, lo, tb, rotated, out, sc)


@numba.njit(cache=True)
def _successors_serial(queue, lo, hi, tb, rotated, out):
    """:func:`_successors` on this core (a few rows: starting the threads would cost more)."""
    sc = _scratch(tb.players, tb.t_prob.shape[1] + 1)
    for r in range(lo, hi):
        _successor_row(queue, r, lo, tb, rotated, out, sc)


@numba.njit(cache=True)
def _merge(out, count, seen, queue, tail):
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


@numba.njit(cache=True, inline="always")
def _first_playing(l_fin, locs):
    """The first seat not finished."""
    first = 0
    while l_fin[locs[first]]:
        first += 1
    return first


@numba.njit(cache=True, inline="always")
def _finished_before(l_fin, locs, P):
    """How many seats just before seat 0 are finished."""
    k = 0
    while k < P - 1 and l_fin[locs[P - 1 - k]]:
        k += 1
    return k


@numba.njit(cache=True, parallel=True)
def _write(ids, index, outcome_base, tb, rotated, br, lo, hi):
    """Rows ``lo:hi`` of ``br`` (:class:`Branches`; row ``r`` is state ``ids[r]``, a state id ``t`` is row
    ``index[t]``, outcome k row ``outcome_base + k``): the branches, whether a step begins a turn, and the
    arrays kept of the mover, a round's start, the finished seats before the mover and the mover's square."""
    J = tb.t_prob.shape[1] + 1
    P, n_full, l_fin, l_again, l_sq = tb.players, tb.n_full, tb.l_fin, tb.l_again, tb.l_sq
    # the arrays taken out of the bundles first: numba loses the writes into a tuple's arrays inside a prange
    nxt, pnum, shift, throw, stake, place, turn_start, mover, round_start, lead, square = br
    n_chunks = (hi - lo + CHUNK - 1) // CHUNK
    for q in numba.prange(n_chunks):
        sc = _scratch(P, J)
        locs, out_next, out_p, out_throw, out_stake, out_place, out_shift = (sc[0], sc[2], sc[3], sc[4], sc[5],
                                                                             sc[6], sc[7])
        for r in range(lo + q * CHUNK, min(hi, lo + (q + 1) * CHUNK)):
            c = _step(ids[r], tb, sc, rotated)
            for j in range(c):
                t = out_next[j]
                nxt[r, j] = index[t] if t < n_full else outcome_base + (t - n_full)
                pnum[r, j] = out_p[j]
                throw[r, j] = out_throw[j]
                if shift.shape[0] > 1:
                    shift[r, j] = out_shift[j]
                if stake.shape[0] > 1:
                    stake[r, j] = out_stake[j]
                if place.shape[0] > 1:
                    place[r, j] = out_place[j]
            seat = 0 if rotated else ids[r] % P
            turn_start[r] = not l_again[locs[seat]]
            if mover.shape[0] > 1:
                mover[r] = seat
            if round_start.shape[0] > 1:
                round_start[r] = turn_start[r] and seat == _first_playing(l_fin, locs)
            if lead.shape[0] > 1:
                lead[r] = _finished_before(l_fin, locs, P)
            if square.shape[0] > 1:
                square[r] = l_sq[locs[0]]
