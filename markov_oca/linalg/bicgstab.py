"""BiCGSTAB on ``K u = c``, preconditioned by symmetric Gauss-Seidel with Eisenstat's trick.

The system is stored scaled to a unit diagonal, ``A' = D^-1 (I - Q) = I + L + U``,
and BiCGSTAB runs on ``K u = c`` with ``K = (I + L)^-1 A' (I + U)^-1``,
``c = (I + L)^-1 D^-1 b`` and ``x = (I + U)^-1 u``, so that one application of ``K``
costs one pass over the matrix (:mod:`~markov_oca.linalg.sweeps`). Since
``b - (I - Q) x = D (I + L) (c - K u)`` and ``||D (I + L)||_inf <= 2``, the true
residual is at most twice the recursive one, on which each column stops (at half its
tolerance); the true residual is then checked and the iteration resumed if it lags.
Right-hand sides go in groups of at most ``GROUP`` columns; two groups run in two
threads. :func:`block_bicgstab` is the same iteration for operators given as functions.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ..core.errors import SolverError
from .split import SplitMatrix
from .sweeps import _lower_half, _lower_solve, _scaled_residual, _upper_half

GROUP = 4  # right-hand sides per pass of a kernel (the kernels unroll 4 columns)
THREADS = max(1, min(2, os.cpu_count() or 1))  # column groups solved in parallel
PARALLEL_MIN = 20_000  # unknowns from which column groups get their own threads


@numba.njit(cache=True, nogil=True)
def _start(lp, lx, lv, lsh, up, ux, uv, ush, beta, omega, c, u, r, r_hat, tb, w):
    """The residual ``r = c - K u`` of the start, and ``r_hat = r`` (``beta``, ``omega``: the scalars
    that make :func:`~markov_oca.linalg.sweeps._set_row` a copy)."""
    n, m = c.shape
    _upper_half(up, ux, uv, ush, u, u, beta, omega, r, tb)  # r = u (scratch), tb = (I + U)^-1 u
    _lower_half(lp, lx, lv, lsh, r, tb, w, r_hat, r, None, None, None)  # r_hat = K u
    for i in range(n):
        for k in range(m):
            r[i, k] = c[i, k] - r_hat[i, k]
            r_hat[i, k] = r[i, k]


@numba.njit(cache=True, nogil=True)
def _restart(k0, k1, r, r_hat, p, v):
    """Columns ``k0:k1`` break down: their Krylov space restarts from their residual; returns their ``r . r``."""
    rr = 0.0
    for i in range(r.shape[0]):
        for k in range(k0, k1):
            r_hat[i, k] = r[i, k]
            p[i, k] = 0.0
            v[i, k] = 0.0
            rr += r[i, k] * r[i, k]
    return rr


@numba.njit(cache=True, nogil=True)
def _update(u, r, r_hat, p, s, t, alpha, omega, live, rho_new, worst):
    """``u += alpha p + omega s`` and ``r = s - omega t`` on the live columns, with ``rho_new = r_hat . r``
    and the largest ``|r|`` per column."""
    m = u.shape[1]
    rho_new[:] = 0.0
    worst[:] = 0.0
    for i in range(u.shape[0]):
        for k in range(m):
            if live[k]:
                u[i, k] += alpha[k] * p[i, k] + omega[k] * s[i, k]
                rk = s[i, k] - omega[k] * t[i, k]
                r[i, k] = rk
                rho_new[k] += r_hat[i, k] * rk
                if not abs(rk) <= worst[k]:
                    worst[k] = abs(rk)


@numba.njit(cache=True, nogil=True)
def _bicgstab_sgs(lp, lx, lv, up, ux, uv, c, u, tol, max_iter):
    """Fused BiCGSTAB on ``K u = c`` for every column (at most 4); returns the iterations.

    ``K = (I + L)^-1 A' (I + U)^-1`` (symmetric Gauss-Seidel, Eisenstat's trick);
    the vector updates and dot products ride along the two sweeps of each
    application. Each column keeps its own scalars and stops when its
    recursive residual is at most ``tol``; a column that breaks down restarts
    from its current iterate.
    """
    n, m = c.shape
    tb = np.empty_like(c)
    w = np.empty_like(c)
    r = np.empty_like(c)
    r_hat = np.empty_like(c)
    _start(lp, lx, lv, None, up, ux, uv, None, None, np.zeros(m), c, u, r, r_hat, tb, w)
    p = np.zeros_like(c)
    v = np.zeros_like(c)
    s = np.empty_like(c)
    t = np.empty_like(c)
    rho, alpha, omega = np.ones(m), np.ones(m), np.ones(m)
    rho_new, beta, om_old = np.zeros(m), np.zeros(m), np.zeros(m)
    den, tt, ts, worst = np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m)
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
                rho_new[k] = _restart(k, k + 1, r, r_hat, p, v)
                rho[k] = alpha[k] = omega[k] = 1.0
            beta[k] = (rho_new[k] / rho[k]) * (alpha[k] / omega[k]) if live[k] else 0.0
            om_old[k] = omega[k] if live[k] else 0.0
        _upper_half(up, ux, uv, None, r, v, beta, om_old, p, tb)  # p = r + beta (p - omega v)
        den[:] = 0.0
        _lower_half(lp, lx, lv, None, p, tb, w, v, r_hat, den, None, None)  # v = K p, den = r_hat . v
        for k in range(m):
            alpha[k] = rho_new[k] / den[k] if (live[k] and den[k] != 0.0) else 0.0
        _upper_half(up, ux, uv, None, r, v, None, alpha, s, tb)  # s = r - alpha v
        tt[:] = 0.0
        ts[:] = 0.0
        _lower_half(lp, lx, lv, None, s, tb, w, t, None, None, tt, ts)  # t = K s, t . t, t . s
        for k in range(m):
            omega[k] = ts[k] / tt[k] if (live[k] and tt[k] > 0.0) else 0.0
            if live[k]:
                rho[k] = rho_new[k]
        _update(u, r, r_hat, p, s, t, alpha, omega, live, rho_new, worst)
        for k in range(m):
            if live[k] and worst[k] <= tol[k]:
                live[k] = False
    return it


def _solve_group(a: SplitMatrix, bh: np.ndarray, tol: np.ndarray,
                 max_iter: int) -> tuple[np.ndarray, int, np.ndarray]:
    """One group of at most ``GROUP`` scaled right-hand sides: (x, iterations, true residuals)."""
    args = (a.lp, a.lx, a.lv, a.up, a.ux, a.uv)
    m = bh.shape[1]
    c = np.empty_like(bh)
    _lower_solve(a.lp, a.lx, a.lv, None, bh, c)
    u = c.copy()  # x = (I + U)^-1 (I + L)^-1 b': one symmetric Gauss-Seidel sweep
    x = np.empty_like(u)
    scratch = np.empty_like(u)
    total = 0
    res = np.full(m, np.inf)
    for _attempt in range(6):
        total += _bicgstab_sgs(*args, c, u, 0.5 * tol, max_iter - total)
        _upper_half(a.up, a.ux, a.uv, None, u, u, None, np.zeros(m), scratch, x)  # x = (I + U)^-1 u
        res = _scaled_residual(a.lp, a.lx, a.lv, None, a.up, a.ux, a.uv, None, a.d, bh, x)
        if (res <= tol).all() or total >= max_iter:
            break
    return x, total, res


def _split_solve(a: SplitMatrix, b: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, int]:
    """Solve ``A x = b`` (b is ``(n, m)`` in sweep order); raises SolverError when it does not converge."""
    n, m = b.shape
    x = np.zeros((n, m))
    if n == 0 or m == 0:
        return x, 0
    scale = np.abs(b).max(axis=0)
    tol_c = tol * np.maximum(1.0, scale)
    live = np.flatnonzero(scale > 0)  # a zero right-hand side has the solution zero
    if live.size == 0:
        return x, 0
    threads = THREADS if n >= PARALLEL_MIN else 1
    n_groups = max(-(-live.size // GROUP), min(threads, live.size))
    groups = [g for g in np.array_split(live, n_groups) if g.size]
    bh = b / a.d[:, None]

    def run(g: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
        return _solve_group(a, np.ascontiguousarray(bh[:, g]), tol_c[g], max_iter)

    if len(groups) > 1 and threads > 1:
        with ThreadPoolExecutor(min(threads, len(groups))) as pool:
            outs = list(pool.map(run, groups))
    else:
        outs = [run(g) for g in groups]
    iters = 0
    for g, (xg, it, res) in zip(groups, outs, strict=True):
        x[:, g] = xg
        iters = max(iters, it)
        if not (res <= 100 * tol_c[g]).all():
            raise SolverError(f"BiCGSTAB did not converge in {max_iter} iterations "
                              f"(residual {float(np.max(res)):.3g})")
    return x, iters


def block_bicgstab(amul: Callable[[np.ndarray, np.ndarray], np.ndarray],
                   precondition: Callable[[np.ndarray], np.ndarray], b: np.ndarray, tol: np.ndarray,
                   x0: np.ndarray | None = None, max_iter: int = 5000,
                   inner: int = 300) -> tuple[np.ndarray, int]:
    """Right-preconditioned BiCGSTAB on every column of ``b`` at once, for operators given as functions.

    ``amul(v, columns)`` applies the system to ``v`` whose columns are the system's
    ``columns`` (each column may have its own matrix, as the hitting events do), and
    ``precondition(v)`` applies the preconditioner. Each column keeps its own
    scalars and stops when its true residual is at most ``tol[column]``; a
    breakdown restarts the remaining columns from their current iterate. This is
    the general form of the fused driver :func:`_bicgstab_sgs`, which
    :class:`~markov_oca.linalg.system.LinearSystem` uses when every column shares one
    matrix. Returns the solution and the iterations.
    """
    m = b.shape[1]
    everything = np.arange(m)
    x = precondition(b) if x0 is None else x0.copy()
    it = 0
    while it < max_iter:
        r = b - amul(x, everything)
        todo = np.flatnonzero(np.abs(r).max(axis=0) > tol)
        if todo.size == 0:
            break
        xs, rs = x[:, todo], r[:, todo]
        r_hat = rs.copy()
        rho = alpha = omega = np.ones(todo.size)
        v = np.zeros_like(rs)
        p = np.zeros_like(rs)
        for _ in range(inner):
            it += 1
            rho_new = (r_hat * rs).sum(axis=0)
            if (np.abs(rho_new) < 1e-300).any() or (np.abs(omega) < 1e-300).any():
                break
            beta = (rho_new / rho) * (alpha / omega)
            p = rs + beta * (p - omega * v)
            ph = precondition(p)
            v = amul(ph, todo)
            den = (r_hat * v).sum(axis=0)
            if (np.abs(den) < 1e-300).any():
                break
            alpha = rho_new / den
            s = rs - alpha * v
            sh = precondition(s)
            t = amul(sh, todo)
            tt = (t * t).sum(axis=0)
            omega = np.where(tt > 0, (t * s).sum(axis=0) / np.where(tt > 0, tt, 1.0), 0.0)
            xs = xs + alpha * ph + omega * sh
            rs = s - omega * t
            rho = rho_new
            if (np.abs(rs).max(axis=0) <= tol[todo]).all() or it >= max_iter:
                break
        x[:, todo] = xs
    return x, it
