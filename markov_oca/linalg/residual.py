"""The true residual of a solve, straight from branch form: ``x = b + Q x`` and its adjoints."""

from __future__ import annotations

import numba
import numpy as np

from .rows import Rows, n_states, padded_rows, span


@numba.njit(cache=True, nogil=True)
def _residual(lo, hi, nxt, pnum, inv_denom, active, stop, b, x):
    """``max |x - b - Q x|`` over the active states and columns, ``Q`` without the ``stop`` branches (the chain's
    :class:`~markov_oca.linalg.rows.Rows`; ``stop`` a flag per flat branch, or empty for none)."""
    worst = 0.0
    n_rhs = b.shape[1]
    acc = np.empty(n_rhs)
    stops = stop.size > 0
    for s in range(n_states(lo, hi, nxt)):
        if not active[s]:
            continue
        for r in range(n_rhs):
            acc[r] = x[s, r] - b[s, r]
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
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
def _transposed_residual(lo, hi, nxt, pnum, shift, inv_denom, active, b, v):
    """``max |v - b - Q^T v|`` over the active states and columns, from the chain's
    :class:`~markov_oca.linalg.rows.Rows`; with ``shift`` (one per flat branch; empty for none), a branch with
    shift ``d`` carries column ``c`` to column ``(c + d) mod m``."""
    n, m = b.shape
    shifted = shift.size > 0
    acc = np.zeros((n, m))
    for s in range(n):
        if not active[s]:
            continue
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
            t = nxt[j]
            if not active[t]:
                continue
            p = pnum[j] * inv_denom
            for c in range(m):
                to = (c + shift[j]) % m if shifted else c
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


def _adjoint_residual(rows: Rows, inv_denom: float, active: np.ndarray, b: np.ndarray, v: np.ndarray) -> float:
    """``max |v - b - Q^T v|`` over the active states and columns (the chain's :class:`Rows`)."""
    return _transposed_residual(*rows, np.zeros(0, np.int64), inv_denom, active, b, v)


def _shifted_adjoint_residual(nxt: np.ndarray, pnum: np.ndarray, shift: np.ndarray, inv_denom: float,
                              active: np.ndarray, b: np.ndarray, v: np.ndarray) -> float:
    """``max |v - b - Q_shift^T v|`` over the active states and every column (a padded branch table)."""
    return _transposed_residual(*padded_rows(nxt, pnum), np.ascontiguousarray(shift).reshape(-1), inv_denom,
                                active, b, v)
