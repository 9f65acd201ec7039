"""The system ``I - Q`` of a chain in branch form, built for the sweeps.

:class:`SplitMatrix` holds ``D^-1 A = I + L + U`` in sweep order (L and U strictly
lower and upper, int32 columns); it is built straight from branch form, for ``I - Q``
(:func:`_split_branches`) or its transpose (:func:`_split_transposed`), and, for a
chain seen from the player to move, the transpose with each entry's seat shift
(:func:`_split_transposed_shifted`). :func:`system_matrix` gives ``I - Q`` as CSR for
the direct solves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from ..core.errors import SolverError
from .rows import Rows, n_states, row_width, span


def system_matrix(nxt: np.ndarray, pnum: np.ndarray, denom: int, active: np.ndarray,
                  stop: np.ndarray | None) -> tuple[sp.csr_array, np.ndarray]:
    """``I - Q`` restricted to the active states, and the active state ids."""
    ids = np.flatnonzero(active)
    local = np.full(nxt.shape[0], -1, np.int64)
    local[ids] = np.arange(ids.size)
    rows = np.repeat(np.arange(ids.size), nxt.shape[1])
    cols = nxt[ids].ravel().astype(np.int64)
    vals = pnum[ids].ravel() / denom
    keep = cols >= 0
    keep[keep] = active[cols[keep]]
    if stop is not None:
        keep &= ~stop[ids].ravel()
    q = sp.csr_array((vals[keep], (rows[keep], local[cols[keep]])), shape=(ids.size, ids.size))
    return sp.eye_array(ids.size, format="csr") - q, ids


def packed_system_matrix(rows: Rows, denom: int, ids: np.ndarray) -> sp.csr_array:
    """``I - Q`` on the states ``ids``, rows and columns in that order, from packed rows (CSR)."""
    a = sp.csr_array(sp.eye_array(ids.size, format="csr") - rows.matrix(denom)[ids][:, ids])
    a.sort_indices()
    return a


@dataclass
class SplitMatrix:
    """``D^-1 A = I + L + U`` in sweep order: L, U strictly lower / upper CSR, ``d`` the diagonal of A."""

    lp: np.ndarray
    lx: np.ndarray
    lv: np.ndarray
    up: np.ndarray
    ux: np.ndarray
    uv: np.ndarray
    d: np.ndarray

    @property
    def n(self) -> int:
        return int(self.d.size)

    @classmethod
    def from_csr(cls, a: sp.csr_array) -> SplitMatrix:
        a = sp.csr_array(a)
        d = np.asarray(a.diagonal(), np.float64)
        if not (d > 0).all():
            raise SolverError("the system has a zero or negative diagonal entry")
        ah = sp.csr_array(sp.diags_array(1.0 / d) @ a)
        lo = sp.csr_array(sp.tril(ah, -1, format="csr"))
        hi = sp.csr_array(sp.triu(ah, 1, format="csr"))
        lo.sort_indices()
        hi.sort_indices()
        return cls(lo.indptr.astype(np.int64), lo.indices.astype(np.int32), lo.data.astype(np.float64),
                   hi.indptr.astype(np.int64), hi.indices.astype(np.int32), hi.data.astype(np.float64), d)


@numba.njit(cache=True, inline="always")
def _insert_sorted(cols, nums, cnt, c, num):
    """Add ``num`` at column ``c`` to the first ``cnt`` (sorted) entries; returns the new count."""
    k = 0
    while k < cnt and cols[k] < c:
        k += 1
    if k < cnt and cols[k] == c:
        nums[k] += num
        return cnt
    for h in range(cnt, k, -1):
        cols[h] = cols[h - 1]
        nums[h] = nums[h - 1]
    cols[k] = c
    nums[k] = num
    return cnt + 1


@numba.njit(cache=True, nogil=True)
def _split_branches(nxt, pnum, denom, active, stop, ids, pos):
    """Build :class:`SplitMatrix` arrays straight from branch form (duplicates merged)."""
    n = ids.size
    J = nxt.shape[1]
    lp = np.zeros(n + 1, np.int64)
    up = np.zeros(n + 1, np.int64)
    lx = np.empty(n * J, np.int32)
    lv = np.empty(n * J, np.float64)
    ux = np.empty(n * J, np.int32)
    uv = np.empty(n * J, np.float64)
    d = np.empty(n, np.float64)
    cols = np.empty(J, np.int64)
    nums = np.empty(J, np.int64)
    nl = 0
    nu = 0
    for i in range(n):
        s = ids[i]
        cnt = 0
        self_num = 0
        for j in range(row_width(nxt, s)):
            t = nxt[s, j]
            if stop[s, j] or not active[t]:
                continue
            if pos[t] == i:
                self_num += pnum[s, j]
            else:
                cnt = _insert_sorted(cols, nums, cnt, pos[t], pnum[s, j])
        dn = denom - self_num
        d[i] = dn / denom
        if dn <= 0:
            d[i] = 0.0
            dn = 1
        for k in range(cnt):
            v = -nums[k] / dn
            if cols[k] < i:
                lx[nl] = cols[k]
                lv[nl] = v
                nl += 1
            else:
                ux[nu] = cols[k]
                uv[nu] = v
                nu += 1
        lp[i + 1] = nl
        up[i + 1] = nu
    return lp, lx[:nl].copy(), lv[:nl].copy(), up, ux[:nu].copy(), uv[:nu].copy(), d


@numba.njit(cache=True, inline="always")
def _count_transposed(nxt, pnum, shift, active, ids, pos, m):
    """First pass of :func:`_transposed`: self-loop numerators (by seat shift when ``shift`` is
    given: column 0 of ``selfd`` unused) and the row pointers of L and U."""
    n = ids.size
    self_num = np.zeros(n, np.int64)
    selfd = np.zeros((n, m), np.int32)
    n_lo = np.zeros(n + 1, np.int64)
    n_up = np.zeros(n + 1, np.int64)
    for s in ids:
        i_s = pos[s]
        for j in range(row_width(nxt, s)):
            t = nxt[s, j]
            if not active[t]:
                continue
            i_t = pos[t]
            if i_t == i_s:
                sh = shift[0][s, j] if isinstance(shift, tuple) else 0
                if sh == 0:
                    self_num[i_s] += pnum[s, j]
                else:
                    selfd[i_s, sh] += pnum[s, j]
            elif i_s < i_t:
                n_lo[i_t + 1] += 1
            else:
                n_up[i_t + 1] += 1
    return self_num, selfd, np.cumsum(n_lo), np.cumsum(n_up)


@numba.njit(cache=True, nogil=True)
def _transposed(nxt, pnum, shift, denom, active, ids, pos, m):
    """``D^-1 (I - Q)^T`` in the order ``ids``, with each entry's seat shift when ``shift`` is ``(shifts,)``.

    Row ``i`` of the transpose gathers the branches into state ``ids[i]``; two
    passes (count, then fill) so that nothing larger than the result is held.
    Columns within a row are not merged or sorted: the sweeps do not need it.
    Without shifts an entry is its probability over the row's diagonal, negated;
    with shifts it is the integer numerator (row ``i``'s entries are those numerators
    times ``sc[i] = -1 / (denom - self)``) and its shift goes to ``lsh`` / ``ush``.
    """
    n = ids.size
    self_num, selfd, lp, up = _count_transposed(nxt, pnum, shift, active, ids, pos, m)
    lx = np.empty(lp[n], np.int32)
    ux = np.empty(up[n], np.int32)
    if not isinstance(shift, tuple):
        lv = np.empty(lp[n], np.float64)
        uv = np.empty(up[n], np.float64)
        lsh = np.empty(0, np.int8)
        ush = np.empty(0, np.int8)
        sc = np.empty(0, np.float64)
    else:
        lv = np.empty(lp[n], pnum.dtype)
        uv = np.empty(up[n], pnum.dtype)
        lsh = np.empty(lp[n], np.int8)
        ush = np.empty(up[n], np.int8)
        sc = np.empty(n, np.float64)
    d = np.empty(n, np.float64)
    for i in range(n):
        dn = denom - self_num[i]
        d[i] = dn / denom
        if isinstance(shift, tuple):
            sc[i] = -1.0 / dn if dn > 0 else 0.0
    fl = lp[:n].copy()
    fu = up[:n].copy()
    for s in ids:
        i_s = pos[s]
        for j in range(row_width(nxt, s)):
            t = nxt[s, j]
            if not active[t]:
                continue
            i_t = pos[t]
            if i_t == i_s:
                continue
            if not isinstance(shift, tuple):
                dn = denom - self_num[i_t]
                v = -pnum[s, j] / dn if dn > 0 else 0.0
            else:
                v = pnum[s, j]
            if i_s < i_t:
                lx[fl[i_t]] = i_s
                lv[fl[i_t]] = v
                if isinstance(shift, tuple):
                    lsh[fl[i_t]] = shift[0][s, j]
                fl[i_t] += 1
            else:
                ux[fu[i_t]] = i_s
                uv[fu[i_t]] = v
                if isinstance(shift, tuple):
                    ush[fu[i_t]] = shift[0][s, j]
                fu[i_t] += 1
    return lp, lx, lv, lsh, up, ux, uv, ush, d, sc, self_num, selfd


@numba.njit(cache=True, nogil=True)
def _split_transposed(nxt, pnum, denom, active, ids, pos):
    """:class:`SplitMatrix` arrays of ``D^-1 (I - Q)^T`` in the order ``ids``, straight from branch form
    (see :func:`_transposed`)."""
    lp, lx, lv, _, up, ux, uv, _, d, _, _, _ = _transposed(nxt, pnum, None, denom, active, ids, pos, 0)
    return lp, lx, lv, up, ux, uv, d


@numba.njit(cache=True, nogil=True)
def _split_transposed_shifted(nxt, pnum, shift, denom, active, ids, pos, m):
    """:func:`_split_transposed` with each entry's seat shift (``lsh``, ``ush``) and its probability as the
    integer numerator (7 bytes an entry instead of 13); self-loops that change the seat are summed by
    shift in ``selfd`` (``(n, m)`` numerators; column 0 is unused)."""
    return _transposed(nxt, pnum, (shift,), denom, active, ids, pos, m)


@numba.njit(cache=True, nogil=True)
def _split_rows(lo, hi, nxt, pnum, inv, ids, pos, transpose):
    """:class:`SplitMatrix` arrays of ``D^-1 (I - Q)`` (or of its transpose) in the order ``ids``, straight from
    :class:`Rows` whose columns are distinct within a row (packed rows), ``pos`` each state's place in ``ids``
    (-1: not an unknown). The same floating-point operations as :func:`packed_system_matrix` then
    :meth:`SplitMatrix.from_csr` (``q = pnum * inv``, ``d = 1 - q_self``, an entry ``(1 / d) * -q``, columns
    sorted within a row), without the copies: two passes, count then fill, nothing larger than the result."""
    n = ids.size
    d = np.ones(n, np.float64)
    lp = np.zeros(n + 1, np.int64)
    up = np.zeros(n + 1, np.int64)
    for i in range(n):
        s = ids[i]
        a, b = span(lo, hi, nxt, s)
        for k in range(a, b):
            j = pos[nxt[k]]
            if j < 0:
                continue
            if j == i:
                d[i] = 1.0 - pnum[k] * inv
            else:
                row, col = (j, i) if transpose else (i, j)
                if col < row:
                    lp[row + 1] += 1
                else:
                    up[row + 1] += 1
    for i in range(n):
        lp[i + 1] += lp[i]
        up[i + 1] += up[i]
    dinv = np.empty(n, np.float64)
    for i in range(n):
        dinv[i] = 1.0 / d[i] if d[i] > 0.0 else 0.0  # a state that never leaves: refused by the caller
    lx = np.empty(lp[n], np.int32)
    lv = np.empty(lp[n], np.float64)
    ux = np.empty(up[n], np.int32)
    uv = np.empty(up[n], np.float64)
    fl = lp[:n].copy()
    fu = up[:n].copy()
    for i in range(n):  # the transpose's rows are filled in column order: sorted as they come
        s = ids[i]
        a, b = span(lo, hi, nxt, s)
        for k in range(a, b):
            j = pos[nxt[k]]
            if j < 0 or j == i:
                continue
            row, col = (j, i) if transpose else (i, j)
            v = dinv[row] * -(pnum[k] * inv)
            if col < row:
                lx[fl[row]] = col
                lv[fl[row]] = v
                fl[row] += 1
            else:
                ux[fu[row]] = col
                uv[fu[row]] = v
                fu[row] += 1
    if not transpose:  # a row's columns follow the state numbering: sort them in the order ids
        for i in range(n):
            _sort_span(lx, lv, lp[i], lp[i + 1])
            _sort_span(ux, uv, up[i], up[i + 1])
    return lp, lx, lv, up, ux, uv, d


@numba.njit(cache=True)
def _sort_span(cols, vals, a, b):
    """Sort ``cols[a:b]`` (with ``vals``): by insertion for a few entries, else by ``argsort``."""
    if b - a > 16:
        o = np.argsort(cols[a:b], kind="mergesort") + a
        c = cols[o]
        v = vals[o]
        cols[a:b] = c
        vals[a:b] = v
        return
    for k in range(a + 1, b):
        c = cols[k]
        v = vals[k]
        h = k
        while h > a and cols[h - 1] > c:
            cols[h] = cols[h - 1]
            vals[h] = vals[h - 1]
            h -= 1
        cols[h] = c
        vals[h] = v


def split_rows(rows: Rows, denom: int, ids: np.ndarray, transpose: bool = False) -> SplitMatrix:
    """:class:`SplitMatrix` of ``I - Q`` on the states ``ids`` (rows and columns in that order), or of its
    transpose, from packed rows; the same numbers as ``SplitMatrix.from_csr(packed_system_matrix(...))``
    (its transpose: ``.T``) without building the CSR matrix.

    Examples
    --------
    >>> from markov_oca.linalg.rows import packed_rows
    >>> r = packed_rows(np.array([0, 2, 4, 5]), np.array([0, 1, 0, 2, 2]), np.array([1, 1, 1, 1, 2]))
    >>> m = split_rows(r, 2, np.array([1, 0]))
    >>> m.d.tolist(), m.lv.tolist(), m.uv.tolist()
    ([1.0, 0.5], [-1.0], [-0.5])
    """
    n_all = n_states(rows.lo, rows.hi, rows.nxt)
    pos = np.full(n_all, -1, np.int64)
    ids = np.asarray(ids, np.int64)
    pos[ids] = np.arange(ids.size)
    inv = 1.0 / denom
    return SplitMatrix(*_split_rows(rows.lo, rows.hi, rows.nxt, rows.pnum, inv, ids, pos, transpose))
