"""Hitting probabilities of many events at once: "does seat k ever land on square q?".

For an event E (a set of branches), ``h(s) = P(E ever happens | s)`` solves
``h = b_E + Q_E h`` where ``b_E(s)`` is the chance that the next step from ``s``
is in E and ``Q_E`` is ``Q`` without the branches of E. Each event has its own
matrix, so the solves cannot share a factorisation; but ``Q_E`` differs from
``Q`` only by the stopped branches, so one symmetric Gauss-Seidel sweep of the plain
system still preconditions them all well. Every event is a column of one block
BiCGSTAB (:func:`markov_oca.linalg.bicgstab.block_bicgstab`, the solver's own driver), with
a mat-vec in branch form that skips each column's own stopped branches. The cost
is that of a solve with one right-hand side per event (the whole board for a seat:
G + 1 columns), carried four at a time through each pass.

Events are given compactly: ``key[s, j]`` (-1 for none) indexes a row of a
boolean ``table[key, column]``; for landings the key is (mover's square,
branch) and the table says which squares that throw lands on.
"""

from __future__ import annotations

import numba
import numpy as np

from ..core.errors import SolverError
from .bicgstab import block_bicgstab
from .certify import gamma
from .system import LinearSystem


@numba.njit(cache=True)
def _masked_matvec(lnext, lp, lkey, tab_ptr, tab_col, col_of, x, out):
    """out = (I - Q_c) x for every column c, in the system's local numbering.

    The plain ``Q`` is applied to all columns, then each branch's stopped
    columns (few: the squares one throw lands on) get their term back.
    """
    n, m = x.shape
    for i in range(n):
        for c in range(m):
            out[i, c] = x[i, c]
        for j in range(lnext.shape[1]):
            t = lnext[i, j]
            if t < 0:
                continue
            p = lp[i, j]
            for c in range(m):
                out[i, c] -= p * x[t, c]
            k = lkey[i, j]
            if k >= 0:
                for e in range(tab_ptr[k], tab_ptr[k + 1]):
                    c = col_of[tab_col[e]]
                    if c >= 0:
                        out[i, c] += p * x[t, c]


@numba.njit(cache=True)
def _event_rhs(lp_all, lkey, table, out):
    n, m = out.shape
    for i in range(n):
        for c in range(m):
            out[i, c] = 0.0
        for j in range(lkey.shape[1]):
            k = lkey[i, j]
            if k < 0:
                continue
            for c in range(m):
                if table[k, c]:
                    out[i, c] += lp_all[i, j]


def hitting_block(system: LinearSystem, key: np.ndarray, table: np.ndarray, init: int,
                  tol: float = 1e-12, max_iter: int = 5000) -> tuple[np.ndarray, float, int]:
    """Chance, from state ``init``, that each column's event ever happens.

    Returns the probabilities, a certified bound on the largest true residual (the computed one plus
    the rounding of its own evaluation, :mod:`~markov_oca.linalg.certify`) and the iterations.
    """
    ids = system.ids
    n_loc = ids.size
    m = table.shape[1]
    if n_loc == 0:
        return np.zeros(m), 0.0, 0
    pos = np.full(system.nxt.shape[0], -1, np.int64)
    pos[ids] = np.arange(n_loc)
    nxt = system.nxt[ids]
    lp_all = np.where(nxt >= 0, system.pnum[ids], 0) / system.denom
    lnext = np.where(nxt >= 0, pos[np.maximum(nxt, 0)], -1).astype(np.int64)
    lkey = key[ids].astype(np.int64)
    lp = np.where(lnext >= 0, lp_all, 0.0)
    table = np.ascontiguousarray(table)
    b = np.empty((n_loc, m))
    _event_rhs(lp_all, lkey, table, b)

    # The table as lists of columns per key, for the mat-vec's corrections.
    rows, cols = np.nonzero(table)
    tab_ptr = np.searchsorted(rows, np.arange(table.shape[0] + 1)).astype(np.int64)
    tab_col = cols.astype(np.int64)

    def amul(v: np.ndarray, columns: np.ndarray) -> np.ndarray:
        col_of = np.full(m, -1, np.int64)
        col_of[columns] = np.arange(columns.size)
        out = np.empty_like(v)
        _masked_matvec(lnext, lp, lkey, tab_ptr, tab_col, col_of, np.ascontiguousarray(v), out)
        return out

    tol_c = tol * np.maximum(1.0, np.abs(b).max(axis=0))
    x, it = block_bicgstab(amul, system.precondition, b, tol_c, max_iter=max_iter)
    # each row of (I - Q_c) x is at most 2 J + 1 terms of magnitude up to 3 max|x|, less b: its rounding
    rounding = float(gamma(2 * lnext.shape[1] + 2)) * (3.0 * float(np.abs(x).max(initial=0.0))
                                                       + float(np.abs(b).max(initial=0.0)))
    residual = float(np.abs(b - amul(x, np.arange(m))).max()) + rounding
    if residual > 1e-6:
        raise SolverError(f"hitting probabilities: residual {residual:.3g} after {it} iterations")
    i0 = pos[init]
    return (x[i0] if i0 >= 0 else np.zeros(m)), residual, it
