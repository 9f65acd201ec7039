"""The true residual of a solve, straight from branch form: ``x = b + Q x`` and its adjoints."""

from __future__ import annotations

import numba
import numpy as np

from .rows import row_width


@numba.njit(cache=True, nogil=True)
def _residual(lo, hi, nxt, pnum, inv_denom, active, stop, b, x):
    """``max |x - b - Q x|`` over the active states and columns, ``Q`` without the ``stop`` branches (the chain's
    :class:`~markov_oca.linalg.rows.Rows`; ``stop`` a flag per flat branch, or empty for none)."""
    worst = 0.0
    n_rhs = b.shape[1]
    acc = np.empty(n_rhs)
    stops = stop.size > 0
    for s in range(lo.size):
        if not active[s]:
            continue
        for r in range(n_rhs):
            acc[r] = x[s, r] - b[s, r]
        for j in range(lo[s], hi[s]):
            t = nxt[j]
            if (stops and stop[j]) or not active[t]:
                continue
            p = pnum[j] * inv_denom
            for r in range(n_rhs):
                acc[r] -= p * x[t, r]
        for r in range(n_rhs):
            if abs(acc[r]) > worst:
                worst = abs(acc[r])
    return worst


@numba.njit(cache=True, nogil=True)
def _transposed_residual(nxt, pnum, shift, inv_denom, active, b, v):
    """``max |v - b - Q^T v|`` over the active states and columns; with ``shift``, a branch with shift ``d``
    carries column ``c`` to column ``(c + d) mod m``."""
    n, m = b.shape
    acc = np.zeros((n, m))
    for s in range(n):
        if not active[s]:
            continue
        for j in range(row_width(nxt, s)):
            t = nxt[s, j]
            if not active[t]:
                continue
            p = pnum[s, j] * inv_denom
            for c in range(m):
                to = c if shift is None else (c + shift[s, j]) % m
                acc[t, to] += p * v[s, c]
    worst = 0.0
    for s in range(n):
        if not active[s]:
            continue
        for c in range(m):
            r = abs(v[s, c] - b[s, c] - acc[s, c])
            if not r <= worst:
                worst = r
    return worst


@numba.njit(cache=True, nogil=True)
def _adjoint_residual(nxt, pnum, inv_denom, active, b, v):
    """``max |v - b - Q^T v|`` over the active states and columns."""
    return _transposed_residual(nxt, pnum, None, inv_denom, active, b, v)


@numba.njit(cache=True, nogil=True)
def _shifted_adjoint_residual(nxt, pnum, shift, inv_denom, active, b, v):
    """``max |v - b - Q_shift^T v|`` over the active states and every column."""
    return _transposed_residual(nxt, pnum, shift, inv_denom, active, b, v)
