"""Linear solves on chains in branch form, and the residual of every solve.

A chain in branch form lists, for each state, its branches: next state and
probability numerator over a common denominator. The systems we solve are all
``x = b + Q x`` on a set of *active* (transient) states, where ``Q`` follows the
branches that stay active and are not *stopped* (a stopped branch is one that
reaches a target event, as when a seat lands on the square we ask about).

Small systems go to SciPy's direct sparse LU (factorised once, reused for
every right-hand side). Large ones go to BiCGSTAB on all right-hand sides at
once (in groups of at most 8 columns, one group per thread), preconditioned by
Gauss-Seidel in a given sweep order: by default a symmetric sweep (forward,
then backward) applied with Eisenstat's trick, so that one application of the
preconditioned operator costs one pass over the matrix. Plain Gauss-Seidel
needs 600-900 sweeps on these chains, direct LU drowns in fill-in (see
``docs/design.md``). The sweep order matters: successors first (the reverse
of breadth-first discovery, or better, decreasing total progress in a race).
Either way the true residual ``||(I-Q)x - b||_inf`` is computed afterwards and
returned.

The system is stored scaled to a unit diagonal, ``A' = D^-1 (I - Q) = I + L + U``
with ``L`` and ``U`` strictly lower and upper in sweep order (int32 columns).
With ``M = I + L`` (forward Gauss-Seidel) BiCGSTAB runs on ``M^-1 A' x = M^-1 b'``;
with the symmetric sweep on ``(I + L)^-1 A' (I + U)^-1 u = (I + L)^-1 b'``,
``x = (I + U)^-1 u``. Either way the unscaled true residual is at most twice
the recursive one, which is what the iteration stops on.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .errors import SolverError

DIRECT_LIMIT = 1_500  # active states up to which the direct LU is used
GROUP = 8  # right-hand sides per pass of a kernel (the kernels unroll 8 columns)
THREADS = max(1, min(2, os.cpu_count() or 1))  # column groups solved in parallel
PARALLEL_MIN = 20_000  # unknowns from which column groups get their own threads


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


@numba.njit(cache=True)
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
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                break
            if stop[s, j] or not active[t]:
                continue
            c = pos[t]
            num = pnum[s, j]
            if c == i:
                self_num += num
                continue
            # insert keeping cols sorted, merging duplicates
            k = 0
            while k < cnt and cols[k] < c:
                k += 1
            if k < cnt and cols[k] == c:
                nums[k] += num
                continue
            for h in range(cnt, k, -1):
                cols[h] = cols[h - 1]
                nums[h] = nums[h - 1]
            cols[k] = c
            nums[k] = num
            cnt += 1
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


@numba.njit(cache=True, nogil=True)
def _lower_solve(lp, lx, lv, b, w):
    """``w = (I + L)^-1 b``, L strictly lower; at most 8 columns."""
    n, m = b.shape
    for i in range(n):
        a0 = b[i, 0]
        a1 = b[i, 1] if m > 1 else 0.0
        a2 = b[i, 2] if m > 2 else 0.0
        a3 = b[i, 3] if m > 3 else 0.0
        a4 = b[i, 4] if m > 4 else 0.0
        a5 = b[i, 5] if m > 5 else 0.0
        a6 = b[i, 6] if m > 6 else 0.0
        a7 = b[i, 7] if m > 7 else 0.0
        for k in range(lp[i], lp[i + 1]):
            j = lx[k]
            q = lv[k]
            a0 -= q * w[j, 0]
            if m > 1:
                a1 -= q * w[j, 1]
                if m > 2:
                    a2 -= q * w[j, 2]
                    if m > 3:
                        a3 -= q * w[j, 3]
                        if m > 4:
                            a4 -= q * w[j, 4]
                            if m > 5:
                                a5 -= q * w[j, 5]
                                if m > 6:
                                    a6 -= q * w[j, 6]
                                    if m > 7:
                                        a7 -= q * w[j, 7]
        w[i, 0] = a0
        if m > 1:
            w[i, 1] = a1
        if m > 2:
            w[i, 2] = a2
        if m > 3:
            w[i, 3] = a3
        if m > 4:
            w[i, 4] = a4
        if m > 5:
            w[i, 5] = a5
        if m > 6:
            w[i, 6] = a6
        if m > 7:
            w[i, 7] = a7


@numba.njit(cache=True, nogil=True)
def _upper_solve(up, ux, uv, b, t):
    """``t = (I + U)^-1 b``, U strictly upper; at most 8 columns."""
    n, m = b.shape
    for i in range(n - 1, -1, -1):
        a0 = b[i, 0]
        a1 = b[i, 1] if m > 1 else 0.0
        a2 = b[i, 2] if m > 2 else 0.0
        a3 = b[i, 3] if m > 3 else 0.0
        a4 = b[i, 4] if m > 4 else 0.0
        a5 = b[i, 5] if m > 5 else 0.0
        a6 = b[i, 6] if m > 6 else 0.0
        a7 = b[i, 7] if m > 7 else 0.0
        for k in range(up[i], up[i + 1]):
            j = ux[k]
            q = uv[k]
            a0 -= q * t[j, 0]
            if m > 1:
                a1 -= q * t[j, 1]
                if m > 2:
                    a2 -= q * t[j, 2]
                    if m > 3:
                        a3 -= q * t[j, 3]
                        if m > 4:
                            a4 -= q * t[j, 4]
                            if m > 5:
                                a5 -= q * t[j, 5]
                                if m > 6:
                                    a6 -= q * t[j, 6]
                                    if m > 7:
                                        a7 -= q * t[j, 7]
        t[i, 0] = a0
        if m > 1:
            t[i, 1] = a1
        if m > 2:
            t[i, 2] = a2
        if m > 3:
            t[i, 3] = a3
        if m > 4:
            t[i, 4] = a4
        if m > 5:
            t[i, 5] = a5
        if m > 6:
            t[i, 6] = a6
        if m > 7:
            t[i, 7] = a7


@numba.njit(cache=True, nogil=True)
def _sgs_forward(lp, lx, lv, v, t, w, z):
    """``w = (I + L)^-1 (v - t)`` and ``z = t + w``; at most 8 columns."""
    n, m = v.shape
    for i in range(n):
        a0 = v[i, 0] - t[i, 0]
        a1 = v[i, 1] - t[i, 1] if m > 1 else 0.0
        a2 = v[i, 2] - t[i, 2] if m > 2 else 0.0
        a3 = v[i, 3] - t[i, 3] if m > 3 else 0.0
        a4 = v[i, 4] - t[i, 4] if m > 4 else 0.0
        a5 = v[i, 5] - t[i, 5] if m > 5 else 0.0
        a6 = v[i, 6] - t[i, 6] if m > 6 else 0.0
        a7 = v[i, 7] - t[i, 7] if m > 7 else 0.0
        for k in range(lp[i], lp[i + 1]):
            j = lx[k]
            q = lv[k]
            a0 -= q * w[j, 0]
            if m > 1:
                a1 -= q * w[j, 1]
                if m > 2:
                    a2 -= q * w[j, 2]
                    if m > 3:
                        a3 -= q * w[j, 3]
                        if m > 4:
                            a4 -= q * w[j, 4]
                            if m > 5:
                                a5 -= q * w[j, 5]
                                if m > 6:
                                    a6 -= q * w[j, 6]
                                    if m > 7:
                                        a7 -= q * w[j, 7]
        w[i, 0] = a0
        z[i, 0] = t[i, 0] + a0
        if m > 1:
            w[i, 1] = a1
            z[i, 1] = t[i, 1] + a1
        if m > 2:
            w[i, 2] = a2
            z[i, 2] = t[i, 2] + a2
        if m > 3:
            w[i, 3] = a3
            z[i, 3] = t[i, 3] + a3
        if m > 4:
            w[i, 4] = a4
            z[i, 4] = t[i, 4] + a4
        if m > 5:
            w[i, 5] = a5
            z[i, 5] = t[i, 5] + a5
        if m > 6:
            w[i, 6] = a6
            z[i, 6] = t[i, 6] + a6
        if m > 7:
            w[i, 7] = a7
            z[i, 7] = t[i, 7] + a7


@numba.njit(cache=True, nogil=True)
def _gs_apply(lp, lx, lv, up, ux, uv, p, y, z):
    """``y = (I + L)^-1 U p`` and ``z = p + y`` (``z = M^-1 A p``, M = I + L); at most 8 columns."""
    n, m = p.shape
    for i in range(n):
        a0 = 0.0
        a1 = 0.0 if m > 1 else 0.0
        a2 = 0.0 if m > 2 else 0.0
        a3 = 0.0 if m > 3 else 0.0
        a4 = 0.0 if m > 4 else 0.0
        a5 = 0.0 if m > 5 else 0.0
        a6 = 0.0 if m > 6 else 0.0
        a7 = 0.0 if m > 7 else 0.0
        for k in range(up[i], up[i + 1]):
            j = ux[k]
            q = uv[k]
            a0 += q * p[j, 0]
            if m > 1:
                a1 += q * p[j, 1]
                if m > 2:
                    a2 += q * p[j, 2]
                    if m > 3:
                        a3 += q * p[j, 3]
                        if m > 4:
                            a4 += q * p[j, 4]
                            if m > 5:
                                a5 += q * p[j, 5]
                                if m > 6:
                                    a6 += q * p[j, 6]
                                    if m > 7:
                                        a7 += q * p[j, 7]
        for k in range(lp[i], lp[i + 1]):
            j = lx[k]
            q = lv[k]
            a0 -= q * y[j, 0]
            if m > 1:
                a1 -= q * y[j, 1]
                if m > 2:
                    a2 -= q * y[j, 2]
                    if m > 3:
                        a3 -= q * y[j, 3]
                        if m > 4:
                            a4 -= q * y[j, 4]
                            if m > 5:
                                a5 -= q * y[j, 5]
                                if m > 6:
                                    a6 -= q * y[j, 6]
                                    if m > 7:
                                        a7 -= q * y[j, 7]
        y[i, 0] = a0
        z[i, 0] = p[i, 0] + a0
        if m > 1:
            y[i, 1] = a1
            z[i, 1] = p[i, 1] + a1
        if m > 2:
            y[i, 2] = a2
            z[i, 2] = p[i, 2] + a2
        if m > 3:
            y[i, 3] = a3
            z[i, 3] = p[i, 3] + a3
        if m > 4:
            y[i, 4] = a4
            z[i, 4] = p[i, 4] + a4
        if m > 5:
            y[i, 5] = a5
            z[i, 5] = p[i, 5] + a5
        if m > 6:
            y[i, 6] = a6
            z[i, 6] = p[i, 6] + a6
        if m > 7:
            y[i, 7] = a7
            z[i, 7] = p[i, 7] + a7


@numba.njit(cache=True, nogil=True)
def _apply(lp, lx, lv, up, ux, uv, sym, v, t, w, z):
    """``z = K v``, the preconditioned operator (symmetric or forward Gauss-Seidel)."""
    if sym:
        _upper_solve(up, ux, uv, v, t)
        _sgs_forward(lp, lx, lv, v, t, w, z)
    else:
        _gs_apply(lp, lx, lv, up, ux, uv, v, w, z)


@numba.njit(cache=True, nogil=True)
def _scaled_residual(lp, lx, lv, up, ux, uv, d, b, x):
    """Per column, ``max_i |d_i (b - (I + L + U) x)_i|``: the residual of the unscaled system."""
    n, m = b.shape
    worst = np.zeros(m)
    acc = np.empty(m)
    for i in range(n):
        for c in range(m):
            acc[c] = b[i, c] - x[i, c]
        for k in range(lp[i], lp[i + 1]):
            j = lx[k]
            q = lv[k]
            for c in range(m):
                acc[c] -= q * x[j, c]
        for k in range(up[i], up[i + 1]):
            j = ux[k]
            q = uv[k]
            for c in range(m):
                acc[c] -= q * x[j, c]
        for c in range(m):
            r = abs(acc[c]) * d[i]
            if not r <= worst[c]:  # also catches nan
                worst[c] = r
    return worst


@numba.njit(cache=True, nogil=True)
def _bicgstab_run(lp, lx, lv, up, ux, uv, sym, c, u, tol, max_iter):
    """Fused BiCGSTAB on ``K u = c`` for every column (at most 8); returns the iterations.

    Each column keeps its own scalars and stops when its recursive residual is
    at most ``tol``; a column that breaks down restarts from its current iterate.
    """
    n, m = c.shape
    tb = np.empty_like(c)
    w = np.empty_like(c)
    r = np.empty_like(c)
    _apply(lp, lx, lv, up, ux, uv, sym, u, tb, w, r)
    for i in range(n):
        for k in range(m):
            r[i, k] = c[i, k] - r[i, k]
    r_hat = r.copy()
    p = np.zeros_like(c)
    v = np.zeros_like(c)
    s = np.empty_like(c)
    t = np.empty_like(c)
    rho = np.ones(m)
    alpha = np.ones(m)
    omega = np.ones(m)
    rho_new = np.zeros(m)
    beta = np.zeros(m)
    den = np.zeros(m)
    tt = np.zeros(m)
    ts = np.zeros(m)
    worst = np.zeros(m)
    live = np.ones(m, np.bool_)
    for i in range(n):
        for k in range(m):
            rho_new[k] += r_hat[i, k] * r[i, k]
            worst[k] = max(worst[k], abs(r[i, k]))
    for k in range(m):
        live[k] = worst[k] > tol[k]
    it = 0
    while it < max_iter and live.any():
        it += 1
        for k in range(m):
            if live[k] and (abs(rho_new[k]) < 1e-300 or abs(omega[k]) < 1e-300):
                # breakdown: restart this column's Krylov space from its current residual
                rr = 0.0
                for i in range(n):
                    r_hat[i, k] = r[i, k]
                    p[i, k] = 0.0
                    v[i, k] = 0.0
                    rr += r[i, k] * r[i, k]
                rho[k] = alpha[k] = omega[k] = 1.0
                rho_new[k] = rr
            beta[k] = (rho_new[k] / rho[k]) * (alpha[k] / omega[k]) if live[k] else 0.0
        for i in range(n):
            for k in range(m):
                p[i, k] = r[i, k] + beta[k] * (p[i, k] - omega[k] * v[i, k])
        _apply(lp, lx, lv, up, ux, uv, sym, p, tb, w, v)
        den[:] = 0.0
        for i in range(n):
            for k in range(m):
                den[k] += r_hat[i, k] * v[i, k]
        for k in range(m):
            alpha[k] = rho_new[k] / den[k] if (live[k] and den[k] != 0.0) else 0.0
        for i in range(n):
            for k in range(m):
                s[i, k] = r[i, k] - alpha[k] * v[i, k]
        _apply(lp, lx, lv, up, ux, uv, sym, s, tb, w, t)
        tt[:] = 0.0
        ts[:] = 0.0
        for i in range(n):
            for k in range(m):
                tt[k] += t[i, k] * t[i, k]
                ts[k] += t[i, k] * s[i, k]
        for k in range(m):
            omega[k] = ts[k] / tt[k] if (live[k] and tt[k] > 0.0) else 0.0
            if live[k]:
                rho[k] = rho_new[k]
        rho_new[:] = 0.0
        worst[:] = 0.0
        for i in range(n):
            for k in range(m):
                if live[k]:
                    u[i, k] += alpha[k] * p[i, k] + omega[k] * s[i, k]
                    rk = s[i, k] - omega[k] * t[i, k]
                    r[i, k] = rk
                    rho_new[k] += r_hat[i, k] * rk
                    if not abs(rk) <= worst[k]:
                        worst[k] = abs(rk)
        for k in range(m):
            if live[k] and worst[k] <= tol[k]:
                live[k] = False
    return it


def _solve_group(a: SplitMatrix, bh: np.ndarray, tol: np.ndarray, sym: bool,
                 max_iter: int) -> tuple[np.ndarray, int, np.ndarray]:
    """One group of at most ``GROUP`` scaled right-hand sides: (x, iterations, true residuals)."""
    args = (a.lp, a.lx, a.lv, a.up, a.ux, a.uv)
    c = np.empty_like(bh)
    _lower_solve(a.lp, a.lx, a.lv, bh, c)
    u = c.copy()  # x = one Gauss-Seidel sweep (symmetric: one forward-backward sweep)
    x = u if not sym else np.empty_like(u)
    total = 0
    res = np.full(bh.shape[1], np.inf)
    for _attempt in range(6):
        total += _bicgstab_run(*args, sym, c, u, 0.5 * tol, max_iter - total)
        if sym:
            _upper_solve(a.up, a.ux, a.uv, u, x)
        res = _scaled_residual(*args, a.d, bh, x)
        if (res <= tol).all() or total >= max_iter:
            break
    return x, total, res


def _split_solve(a: SplitMatrix, b: np.ndarray, tol: float, sym: bool,
                 max_iter: int) -> tuple[np.ndarray, int]:
    """Solve ``A x = b`` (b is ``(n, m)`` in sweep order); raises SolverError when it does not converge."""
    n, m = b.shape
    x = np.zeros((n, m))
    tol_c = tol * np.maximum(1.0, np.abs(b).max(axis=0)) if n else np.zeros(m)
    live = np.flatnonzero(np.abs(b).max(axis=0) > 0) if n else np.zeros(0, np.int64)
    if live.size == 0:
        return x, 0
    n_groups = max(-(-live.size // GROUP), min(THREADS if n >= PARALLEL_MIN else 1, live.size))
    groups = [g for g in np.array_split(live, n_groups) if g.size]
    bh = b / a.d[:, None]

    def run(g):
        return _solve_group(a, np.ascontiguousarray(bh[:, g]), tol_c[g] / 1.0, sym, max_iter)

    if len(groups) > 1 and THREADS > 1:
        with ThreadPoolExecutor(min(THREADS, len(groups))) as pool:
            outs = list(pool.map(run, groups))
    else:
        outs = [run(g) for g in groups]
    iters = 0
    for g, (xg, it, res) in zip(groups, outs):
        x[:, g] = xg
        iters = max(iters, it)
        if not (res <= 100 * tol_c[g]).all():
            raise SolverError(f"BiCGSTAB did not converge in {max_iter} iterations "
                              f"(residual {float(np.max(res)):.3g})")
    return x, iters


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
        a symmetric Gauss-Seidel sweep), ``"bicgstab-gs"`` (the same with a
        forward sweep only) or ``"auto"``: direct up to ``DIRECT_LIMIT`` states.
    """

    def __init__(self, nxt: np.ndarray, pnum: np.ndarray, denom: int, active: np.ndarray,
                 stop: np.ndarray | None = None, order: np.ndarray | None = None, method: str = "auto"):
        self.nxt, self.pnum, self.denom, self.active = nxt, pnum, denom, active
        self.stop = np.zeros(nxt.shape, bool) if stop is None else stop
        n = nxt.shape[0]
        n_active = int(np.count_nonzero(active))
        if method == "auto":
            method = "direct" if n_active <= DIRECT_LIMIT else "bicgstab"
        if method not in ("direct", "bicgstab", "bicgstab-gs"):
            raise ValueError(f"unknown method {method!r}")
        self.method = method
        if order is None:
            order = np.arange(n - 1, -1, -1)
        order = np.asarray(order, np.int64)
        order = order[active[order]]
        if order.size != n_active:
            raise ValueError("order must visit every active state exactly once")
        self.ids = order  # chain state of each unknown, in sweep order
        self._lu = None
        self.a = None
        self.split = None
        if method == "direct":
            a, ids = system_matrix(nxt, pnum, denom, active, stop)
            pos = np.full(n, -1, np.int64)
            pos[ids] = np.arange(ids.size)
            perm = pos[order]
            self.a = a[perm][:, perm].tocsr()
            self.a.sort_indices()
        else:
            pos = np.full(n, -1, np.int64)
            pos[order] = np.arange(order.size)
            arrays = _split_branches(nxt, pnum, np.int64(denom), active, self.stop, order, pos)
            self.split = SplitMatrix(*arrays)
            if not (self.split.d > 0).all():
                raise SolverError("an active state never leaves itself: the system is singular")

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
            sym = self.method == "bicgstab"
            sol, iters = _split_solve(self.split, b2[self.ids], tol, sym, 5000)
            x[self.ids] = sol
            kind = "symmetric Gauss-Seidel" if sym else "Gauss-Seidel"
            report = SolveReport(f"BiCGSTAB, {kind} preconditioned", 0.0, iters)
        report.residual = float(_residual(self.nxt, self.pnum, 1.0 / self.denom, self.active, self.stop, b2, x))
        if not np.isfinite(report.residual) or report.residual > 1e-6 * max(1.0, float(np.abs(b2).max())):
            raise SolverError(f"{report.method}: residual {report.residual:.3g} is too large")
        return (x[:, 0] if squeeze else x), report


def block_bicgstab(a: sp.csr_array, b: np.ndarray, tol: float = 1e-12,
                   max_iter: int = 5000, symmetric: bool = True) -> tuple[np.ndarray, int]:
    """BiCGSTAB on every column of ``b`` at once, preconditioned by Gauss-Seidel in row order.

    ``a`` is the system matrix (rows in sweep order, positive diagonal). The
    mat-vec and the sweeps are memory-bound, so carrying up to 8 columns
    through one pass costs little more than one; groups of columns run in
    parallel threads. Each column keeps its own scalars and stops at its own
    tolerance (``tol`` times the largest of 1 and its right-hand side, on the
    true residual); a column that breaks down restarts from its current
    iterate, and the iteration resumes if the true residual lags behind the
    recursive one. Returns the solution and the largest iteration count.
    """
    b = np.asarray(b, np.float64)
    squeeze = b.ndim == 1
    b2 = b.reshape(b.shape[0], -1)
    x, iters = _split_solve(SplitMatrix.from_csr(a), b2, tol, symmetric, max_iter)
    return (x[:, 0] if squeeze else x), iters
