"""Linear solves on chains in branch form, and the residual of every solve.

A chain in branch form lists, for each state, its branches: next state and
probability numerator over a common denominator. The systems we solve are all
``x = b + Q x`` on a set of *active* (transient) states, where ``Q`` follows the
branches that stay active and are not *stopped* (a stopped branch is one that
reaches a target event, as when a seat lands on the square we ask about).

Small systems go to SciPy's direct sparse LU (factorised once, reused for
every right-hand side). Large ones go to BiCGSTAB on all right-hand sides at
once, preconditioned by one Gauss-Seidel sweep in an order that follows the
race backwards (the reverse of breadth-first discovery); plain Gauss-Seidel
needs 600-900 sweeps on these chains, direct LU drowns in fill-in (see
``docs/design.md``). Either way the true residual ``||(I-Q)x - b||_inf`` is
computed afterwards and returned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .errors import SolverError

DIRECT_LIMIT = 1_500  # active states up to which the direct LU is used


@dataclass
class SolveReport:
    method: str
    residual: float
    iterations: int


@numba.njit(cache=True)
def _residual(nxt, pnum, inv_denom, active, stop, b, x):
    worst = 0.0
    n_rhs = b.shape[1]
    acc = np.empty(n_rhs)
    for s in range(nxt.shape[0]):
        if not active[s]:
            continue
        for r in range(n_rhs):
            acc[r] = x[s, r] - b[s, r]
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            if stop[s, j] or not active[t]:
                continue
            p = pnum[s, j] * inv_denom
            for r in range(n_rhs):
                acc[r] -= p * x[t, r]
        for r in range(n_rhs):
            if abs(acc[r]) > worst:
                worst = abs(acc[r])
    return worst


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


class LinearSystem:
    """``x = b + Q x`` on the active states of a chain in branch form, ready to solve.

    Parameters
    ----------
    nxt, pnum, denom:
        The chain's branches: next state (-1 pads a row) and probability numerator.
    active:
        Boolean mask of the states whose values are unknown (``x = 0`` elsewhere).
    stop:
        Optional boolean mask of branches that ``Q`` does not follow.
    order:
        The order in which a Gauss-Seidel sweep visits states (successors first
        is best); default the reverse of the state numbering.
    method:
        ``"direct"`` (SuperLU), ``"bicgstab"`` (block BiCGSTAB preconditioned by
        a Gauss-Seidel sweep) or ``"auto"``: direct up to ``DIRECT_LIMIT`` states.
    """

    def __init__(self, nxt: np.ndarray, pnum: np.ndarray, denom: int, active: np.ndarray,
                 stop: np.ndarray | None = None, order: np.ndarray | None = None, method: str = "auto"):
        self.nxt, self.pnum, self.denom, self.active = nxt, pnum, denom, active
        self.stop = np.zeros(nxt.shape, bool) if stop is None else stop
        n = nxt.shape[0]
        a, ids = system_matrix(nxt, pnum, denom, active, stop)
        if method == "auto":
            method = "direct" if ids.size <= DIRECT_LIMIT else "bicgstab"
        self.method = method
        if order is None:
            order = np.arange(n - 1, -1, -1)
        order = order[active[order]]
        pos = np.full(n, -1, np.int64)
        pos[ids] = np.arange(ids.size)
        perm = pos[order]
        self.ids = ids[perm]  # chain state of each unknown, in sweep order
        self.a = a[perm][:, perm].tocsr()
        self.a.sort_indices()
        self._lu = None

    def solve(self, b: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, SolveReport]:
        """Solve for one ``(n,)`` or several ``(n, m)`` right-hand sides; ``x = 0`` off the active set."""
        squeeze = b.ndim == 1
        b2 = np.ascontiguousarray(b.reshape(b.shape[0], -1), dtype=np.float64)
        x = np.zeros_like(b2)
        if self.ids.size == 0:
            report = SolveReport("none", 0.0, 0)
        elif self.method == "direct":
            if self._lu is None:
                self._lu = spla.splu(self.a.tocsc())
            x[self.ids] = self._lu.solve(b2[self.ids])
            report = SolveReport("direct sparse LU (SuperLU)", 0.0, 1)
        else:
            sol, iters = block_bicgstab(self.a, b2[self.ids], tol=tol)
            x[self.ids] = sol
            report = SolveReport("BiCGSTAB, Gauss-Seidel preconditioned", 0.0, iters)
        report.residual = float(_residual(self.nxt, self.pnum, 1.0 / self.denom, self.active, self.stop, b2, x))
        if not np.isfinite(report.residual) or report.residual > 1e-6 * max(1.0, float(np.abs(b2).max())):
            raise SolverError(f"{report.method}: residual {report.residual:.3g} is too large")
        return (x[:, 0] if squeeze else x), report


@numba.njit(cache=True)
def _forward_sweep(indptr, indices, data, diag, r, out):
    """One Gauss-Seidel sweep from zero: solve the lower triangle of A for each column of r."""
    n, m = r.shape
    for i in range(n):
        for c in range(m):
            out[i, c] = r[i, c]
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if j < i:
                v = data[k]
                for c in range(m):
                    out[i, c] -= v * out[j, c]
        for c in range(m):
            out[i, c] /= diag[i]


@numba.njit(cache=True)
def _matmul(indptr, indices, data, x, out):
    n, m = x.shape
    for i in range(n):
        for c in range(m):
            out[i, c] = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = data[k]
            for c in range(m):
                out[i, c] += v * x[j, c]


@numba.njit(cache=True)
def _bicgstab_block(ip, ix, dv, diag, b, x, tol, max_iter):
    """Fused BiCGSTAB iterations on every column of ``b`` (see :func:`block_bicgstab`)."""
    n, m = b.shape
    r = np.empty_like(b)
    _matmul(ip, ix, dv, x, r)
    for i in range(n):
        for c in range(m):
            r[i, c] = b[i, c] - r[i, c]
    r_hat = r.copy()
    p = np.zeros_like(b)
    v = np.zeros_like(b)
    ph = np.empty_like(b)
    sh = np.empty_like(b)
    s = np.empty_like(b)
    t = np.empty_like(b)
    rho = np.ones(m)
    alpha = np.ones(m)
    omega = np.ones(m)
    rho_new = np.zeros(m)
    beta = np.zeros(m)
    den = np.zeros(m)
    tt = np.zeros(m)
    ts = np.zeros(m)
    live = np.ones(m, np.bool_)
    for c in range(m):
        worst = 0.0
        for i in range(n):
            worst = max(worst, abs(r[i, c]))
        live[c] = worst > tol[c]
    it = 0
    while it < max_iter:
        if not live.any():
            break
        it += 1
        rho_new[:] = 0.0
        for i in range(n):
            for c in range(m):
                rho_new[c] += r_hat[i, c] * r[i, c]
        for c in range(m):
            if live[c] and (abs(rho_new[c]) < 1e-300 or abs(omega[c]) < 1e-300):
                # breakdown: restart this column's Krylov space from its current residual
                rr = 0.0
                for i in range(n):
                    r_hat[i, c] = r[i, c]
                    p[i, c] = 0.0
                    v[i, c] = 0.0
                    rr += r[i, c] * r[i, c]
                rho[c] = alpha[c] = omega[c] = 1.0
                rho_new[c] = rr
            beta[c] = (rho_new[c] / rho[c]) * (alpha[c] / omega[c]) if live[c] else 0.0
        for i in range(n):
            for c in range(m):
                p[i, c] = r[i, c] + beta[c] * (p[i, c] - omega[c] * v[i, c])
        _forward_sweep(ip, ix, dv, diag, p, ph)
        _matmul(ip, ix, dv, ph, v)
        den[:] = 0.0
        for i in range(n):
            for c in range(m):
                den[c] += r_hat[i, c] * v[i, c]
        for c in range(m):
            alpha[c] = rho_new[c] / den[c] if (live[c] and den[c] != 0.0) else 0.0
        for i in range(n):
            for c in range(m):
                s[i, c] = r[i, c] - alpha[c] * v[i, c]
        _forward_sweep(ip, ix, dv, diag, s, sh)
        _matmul(ip, ix, dv, sh, t)
        tt[:] = 0.0
        ts[:] = 0.0
        for i in range(n):
            for c in range(m):
                tt[c] += t[i, c] * t[i, c]
                ts[c] += t[i, c] * s[i, c]
        for c in range(m):
            omega[c] = ts[c] / tt[c] if (live[c] and tt[c] > 0.0) else 0.0
        for c in range(m):
            if not live[c]:
                continue
            worst = 0.0
            for i in range(n):
                x[i, c] += alpha[c] * ph[i, c] + omega[c] * sh[i, c]
                r[i, c] = s[i, c] - omega[c] * t[i, c]
                worst = max(worst, abs(r[i, c]))
            rho[c] = rho_new[c]
            if worst <= tol[c]:
                live[c] = False
    return it


def block_bicgstab(a: sp.csr_array, b: np.ndarray, tol: float = 1e-12,
                   max_iter: int = 5000) -> tuple[np.ndarray, int]:
    """BiCGSTAB on every column of ``b`` at once, left-preconditioned by one Gauss-Seidel sweep.

    SciPy's solvers take one right-hand side at a time; the mat-vec and the sweep
    are memory-bound, so carrying all columns through one pass costs little more
    than one. Each column keeps its own scalars and stops at its own tolerance
    (``tol`` times the largest of 1 and its right-hand side); a column that
    breaks down restarts from its current iterate. The recursive residual can
    drift, so the true residual is checked and the iteration resumed if needed.
    """
    ip, ix, dv = a.indptr, a.indices, a.data
    diag = a.diagonal()
    b = np.ascontiguousarray(b)
    x = np.empty_like(b)
    _forward_sweep(ip, ix, dv, diag, b, x)  # one sweep is a good first guess
    tol_c = tol * np.maximum(1.0, np.abs(b).max(axis=0))
    total = 0
    for _attempt in range(5):
        total += _bicgstab_block(ip, ix, dv, diag, b, x, tol_c, max_iter - total)
        r = np.empty_like(b)
        _matmul(ip, ix, dv, x, r)
        if (np.abs(b - r).max(axis=0) <= tol_c * 10).all() or total >= max_iter:
            break
    r = np.empty_like(b)
    _matmul(ip, ix, dv, x, r)
    if not (np.abs(b - r).max(axis=0) <= tol_c * 100).all():
        raise SolverError(f"BiCGSTAB did not converge in {max_iter} iterations")
    return x, total
