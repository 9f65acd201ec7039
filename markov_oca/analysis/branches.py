"""Kernels over a chain in branch form, and the one computation of its closed classes.

A chain in branch form keeps, for each state, its next states (``nxt``, -1 pads a row) and
their probability numerators (``pnum``) over one common denominator. The kernels here walk
those rows directly (numba), so no matrix need be built: the matrix's entries counted, the
CSR matrix when one is wanted, one step of a vector forward or backward, the length
distribution's forward pass. :func:`strong_classes` finds the closed classes once for every
caller (:attr:`Chain.structure`, :func:`markov_oca.analysis.absorbing.closed_classes`).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..linalg.rows import Rows, n_states, padded_rows, row_width, span


@numba.njit(cache=True)
def _count_distinct(nxt, key):
    """Distinct branches summed over the rows: distinct next states (the transition matrix's entries), or,
    when ``key`` has a row per state (a seat shift), distinct (next state, key) pairs."""
    keyed = key.shape[0] > 1
    total = 0
    for s in range(nxt.shape[0]):
        for j in range(row_width(nxt, s)):
            t = nxt[s, j]
            dup = False
            for k in range(j):
                if nxt[s, k] == t and (not keyed or key[s, k] == key[s, j]):
                    dup = True
                    break
            if not dup:
                total += 1
    return total


@numba.njit(cache=True)
def _branch_csr(nxt, pnum, inv_denom):
    """CSR arrays of the transition matrix from branch form: duplicates merged, columns sorted."""
    n, J = nxt.shape
    cols = np.empty(J, np.int64)
    nums = np.empty(J, np.int64)
    indptr = np.zeros(n + 1, np.int64)
    for s in range(n):
        cnt = 0
        for j in range(row_width(nxt, s)):
            t = nxt[s, j]
            seen = False
            for k in range(cnt):
                if cols[k] == t:
                    seen = True
            if not seen:
                cols[cnt] = t
                cnt += 1
        indptr[s + 1] = indptr[s] + cnt
    indices = np.empty(indptr[n], np.int32)
    data = np.empty(indptr[n], np.float64)
    for s in range(n):
        cnt = 0
        for j in range(row_width(nxt, s)):
            t = nxt[s, j]
            k = 0
            while k < cnt and cols[k] < t:
                k += 1
            if k < cnt and cols[k] == t:
                nums[k] += pnum[s, j]
                continue
            for h in range(cnt, k, -1):
                cols[h] = cols[h - 1]
                nums[h] = nums[h - 1]
            cols[k] = t
            nums[k] = pnum[s, j]
            cnt += 1
        base = indptr[s]
        for k in range(cnt):
            indices[base + k] = cols[k]
            data[base + k] = nums[k] * inv_denom
    return indptr, indices, data


@numba.njit(cache=True)
def _branch_step(nxt, pnum, values, inv_denom):
    out = np.zeros(nxt.shape[0])
    for s in range(nxt.shape[0]):
        acc = 0.0
        for j in range(nxt.shape[1]):
            if nxt[s, j] < 0:
                break
            acc += pnum[s, j] * values[s, j]
        out[s] = acc * inv_denom
    return out


@numba.njit(cache=True)
def _flow_into(nxt, pnum, inv_denom, v, col, k):
    """``out[col[t]] += v[s] p(s, t)`` over every branch into a state with ``col[t] >= 0``."""
    out = np.zeros(k)
    for s in range(nxt.shape[0]):
        if v[s] == 0.0:
            continue
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            if col[t] >= 0:
                out[col[t]] += v[s] * pnum[s, j] * inv_denom
    return out


@numba.njit(cache=True)
def _flow_by_key(nxt, pnum, inv_denom, v, key, deadlock, n_keys):
    """Visits times branch probability summed per event key, and the keys a deadlocked state has."""
    out = np.zeros(n_keys)
    dead = np.zeros(n_keys, np.bool_)
    for s in range(nxt.shape[0]):
        for j in range(nxt.shape[1]):
            if nxt[s, j] < 0:
                break
            k = key[s, j]
            if k < 0:
                continue
            out[k] += v[s] * pnum[s, j] * inv_denom
            if deadlock[s]:
                dead[k] = True
    return out, dead


@numba.njit(cache=True)
def _classes_left(lo, hi, nxt, label, n_comp):
    """For each strongly connected class, whether some transition leaves it."""
    leaves = np.zeros(n_comp, np.bool_)
    for s in range(n_states(lo, hi, nxt)):
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
            if label[nxt[j]] != label[s]:
                leaves[label[s]] = True
    return leaves


@numba.njit(cache=True)
def _forward_sweep(lp, lx, lv, up, ux, uv, d, init, x):
    """One Gauss-Seidel sweep of ``x = e_init + Q^T x`` over the split transpose ``D^-1 (I - Q)^T`` (rows in
    sweep order, :func:`~markov_oca.solve._split_transposed`); the largest change."""
    worst = 0.0
    for i in range(d.size):
        acc = 1.0 / d[i] if i == init else 0.0
        for e in range(lp[i], lp[i + 1]):
            acc -= lv[e] * x[lx[e]]
        for e in range(up[i], up[i + 1]):
            acc -= uv[e] * x[ux[e]]
        c = abs(acc - x[i])
        if c > worst:
            worst = c
        x[i] = acc
    return worst


@numba.njit(cache=True, nogil=True)
def _push(nxt, pnum, inv_denom, v, w):
    for s in range(nxt.shape[0]):
        m = v[s]
        if m == 0.0:
            continue
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            w[t] += m * pnum[s, j] * inv_denom


@numba.njit(cache=True, nogil=True)
def _length_pmf(nxt, pnum, inv_denom, mid_turn, outcome_of, deadlock, tail, upto, pmf, acc, v0, w0, mid, state):
    """Turn by turn up to turn ``upto``: push the mass, push again what stopped mid-turn, take out the
    outcomes and deadlocks. Returns ``(pmf, done)``; ``done`` once less than ``tail`` is in play.

    Resumable: ``v0`` holds the mass in play at the start of the next turn (and on return),
    ``w0`` and ``mid`` are work arrays, ``state`` is ``[turns played, mass deadlocked, mass in
    play, pushes made]`` (the pushes, which bound the rounding of every mass, counted when given).
    Only the few special states (mid-turn, outcome, deadlocked) are visited one by one; the mass
    still in play is the total less what left, so a turn costs one pass over the branches. With a
    non-empty ``acc`` every mass pushed is added there too (the expected visits of the turns played).
    """
    sums = acc.size > 0
    n = nxt.shape[0]
    pushes = 0
    mids = np.flatnonzero(mid_turn)
    outs = np.flatnonzero(outcome_of >= 0)
    deads = np.flatnonzero(deadlock)
    v, w = v0, w0
    swapped = False
    t = int(state[0])
    dead = state[1]
    left = state[2]
    done = False
    while t < upto:
        t += 1
        w[:] = 0.0
        if sums:
            for s in range(n):
                acc[s] += v[s]
        _push(nxt, pnum, inv_denom, v, w)
        pushes += 1
        for _inner in range(10_000):
            if mids.size == 0:
                break
            mid[:] = 0.0
            any_mid = False
            for s in mids:
                if w[s] != 0.0:
                    mid[s] = w[s]
                    w[s] = 0.0
                    any_mid = True
            if not any_mid:
                break
            if sums:
                for s in mids:
                    acc[s] += mid[s]
            _push(nxt, pnum, inv_denom, mid, w)
            pushes += 1
        if t >= pmf.shape[0]:
            bigger = np.zeros((pmf.shape[0] * 2, pmf.shape[1]))
            bigger[:pmf.shape[0]] = pmf
            pmf = bigger
        gone = 0.0
        for s in outs:
            pmf[t, outcome_of[s]] += w[s]
            gone += w[s]
            w[s] = 0.0
        for s in deads:
            dead += w[s]
            gone += w[s]
            w[s] = 0.0
        # What is still in play: last turn's, less what ended now (summed afresh now and then, against drift).
        left = left - gone if t % 64 else w.sum()
        v, w = w, v
        swapped = not swapped
        if left < tail:
            left = v.sum()
            if left < tail:
                done = True
                break
    if swapped:  # the mass in play is in the other array: hand it back in v0
        v0[:] = v
    state[0] = t
    state[1] = dead
    state[2] = left
    if state.size > 3:
        state[3] += pushes
    return pmf, done


def strong_classes(nxt: np.ndarray, pnum: np.ndarray, denom: int,
                   P: sp.csr_array | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The strongly connected classes of a chain in branch form, and which of them are closed.

    Parameters
    ----------
    nxt : numpy.ndarray
        ``(n, J)`` next states, -1 padding a row.
    pnum : numpy.ndarray
        ``(n, J)`` probability numerators.
    denom : int
        Their common denominator.
    P : scipy.sparse.csr_array, optional
        The chain's transition matrix when it is at hand (otherwise built here and dropped).

    Returns
    -------
    label : numpy.ndarray
        The class of each state (``int32``).
    closed : numpy.ndarray
        For each class, whether no transition leaves it.

    Examples
    --------
    >>> nxt = np.array([[1, 2], [1, -1], [0, -1]], np.int32)
    >>> label, closed = strong_classes(nxt, np.array([[1, 1], [2, 0], [2, 0]], np.int32), 2)
    >>> [bool(closed[label[s]]) for s in range(3)]
    [False, True, False]
    """
    if P is None:
        indptr, indices, data = _branch_csr(nxt, pnum, 1.0 / denom)
        n = nxt.shape[0]
        P = sp.csr_array((data, indices, indptr), shape=(n, n))
    return classes_of(P, padded_rows(nxt, pnum))


def classes_of(P: sp.csr_array, rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    """:func:`strong_classes` of the chain whose transition matrix is ``P`` and branches ``rows``."""
    n_comp, label = connected_components(P, directed=True, connection="strong")
    label = label.astype(np.int32)
    return label, ~_classes_left(*rows[:3], label, n_comp)
