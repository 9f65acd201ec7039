"""Linear solves on chains in branch form, and the residual of every solve.

A chain in branch form lists, for each state, its branches: next state and
probability numerator over a common denominator. The systems we solve are all
``x = b + Q x`` on a set of *active* (transient) states, where ``Q`` follows the
branches that stay active and are not *stopped* (a stopped branch is one that
reaches a target event, as when a seat lands on the square we ask about).

Small systems go to SciPy's direct sparse LU (factorised once, reused for
every right-hand side). Large ones go to BiCGSTAB on all right-hand sides at
once (in groups of at most ``GROUP`` columns; two groups run in two threads),
preconditioned by a symmetric Gauss-Seidel sweep (forward, then backward) in
the given sweep order, applied with Eisenstat's trick so that one application
of the preconditioned operator costs one pass over the matrix. Plain
Gauss-Seidel needs 600-900 sweeps on these chains, direct LU drowns in fill-in
(see ``docs/design.md``). The sweep order matters: successors first (the
reverse of breadth-first discovery, or better, see :func:`progress_order`,
decreasing total progress in a race). Either way the true residual
``||(I-Q)x - b||_inf`` is computed afterwards and returned.

The system is stored scaled to a unit diagonal, ``A' = D^-1 (I - Q) = I + L + U``
with ``L`` and ``U`` strictly lower and upper in sweep order (int32 columns), and
BiCGSTAB runs on ``K u = c`` with ``K = (I + L)^-1 A' (I + U)^-1``,
``c = (I + L)^-1 D^-1 b`` and ``x = (I + U)^-1 u``. Since ``b - (I - Q) x =
D (I + L) (c - K u)`` and ``||D (I + L)||_inf <= 2``, the true residual is at most
twice the recursive one, on which each column stops (at half its tolerance);
the true residual is then checked and the iteration resumed if it lags.
The memory traffic of the vector updates is what limits the speed on these
chains, so the updates and dot products ride along the two sweeps.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..core.errors import SolverError

DIRECT_LIMIT = 1_500  # active states up to which the direct LU is used
GROUP = 4  # right-hand sides per pass of a kernel (the kernels unroll 4 columns)
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


@numba.njit(cache=True, nogil=True, inline="always")
def _row4(a, i):
    """Row ``i`` of an (n, m <= 4) array as four numbers (zero past column m)."""
    m = a.shape[1]
    return a[i, 0], a[i, 1] if m > 1 else 0.0, a[i, 2] if m > 2 else 0.0, a[i, 3] if m > 3 else 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _eliminate(ptr, idx, val, i, x, a0, a1, a2, a3):
    """``x[i] = a - sum_k val[k] x[idx[k]]`` over row ``i``'s entries: one step of a triangular solve
    with a unit diagonal, on at most 4 columns kept in registers."""
    m = x.shape[1]
    for k in range(ptr[i], ptr[i + 1]):
        j = idx[k]
        q = val[k]
        a0 -= q * x[j, 0]
        if m > 1:
            a1 -= q * x[j, 1]
            if m > 2:
                a2 -= q * x[j, 2]
                if m > 3:
                    a3 -= q * x[j, 3]
    x[i, 0] = a0
    if m > 1:
        x[i, 1] = a1
    if m > 2:
        x[i, 2] = a2
    if m > 3:
        x[i, 3] = a3


@numba.njit(cache=True, nogil=True)
def _lower_solve(lp, lx, lv, b, w):
    """``w = (I + L)^-1 b``, L strictly lower; at most 4 columns."""
    for i in range(b.shape[0]):
        a0, a1, a2, a3 = _row4(b, i)
        _eliminate(lp, lx, lv, i, w, a0, a1, a2, a3)


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
def _fused_u1(up, ux, uv, r, p, v, beta, omega, tb):
    """BiCGSTAB direction ``p = r + beta (p - omega v)``, then ``tb = (I + U)^-1 p``."""
    n, m = tb.shape
    for i in range(n - 1, -1, -1):
        for c in range(m):
            p[i, c] = r[i, c] + beta[c] * (p[i, c] - omega[c] * v[i, c])
        a0, a1, a2, a3 = _row4(p, i)
        _eliminate(up, ux, uv, i, tb, a0, a1, a2, a3)


@numba.njit(cache=True, nogil=True)
def _fused_l1(lp, lx, lv, p, tb, r_hat, w, v, den):
    """``w = (I + L)^-1 (p - tb)``, ``v = tb + w`` (= K p) and ``den += r_hat . v``."""
    n, m = w.shape
    for i in range(n):
        a0, a1, a2, a3 = _row4(p, i)
        b0, b1, b2, b3 = _row4(tb, i)
        _eliminate(lp, lx, lv, i, w, a0 - b0, a1 - b1, a2 - b2, a3 - b3)
        for c in range(m):
            vi = tb[i, c] + w[i, c]
            v[i, c] = vi
            den[c] += r_hat[i, c] * vi


@numba.njit(cache=True, nogil=True)
def _fused_u2(up, ux, uv, r, v, alpha, s, tb):
    """``s = r - alpha v``, then ``tb = (I + U)^-1 s``."""
    n, m = tb.shape
    for i in range(n - 1, -1, -1):
        for c in range(m):
            s[i, c] = r[i, c] - alpha[c] * v[i, c]
        a0, a1, a2, a3 = _row4(s, i)
        _eliminate(up, ux, uv, i, tb, a0, a1, a2, a3)


@numba.njit(cache=True, nogil=True)
def _fused_l2(lp, lx, lv, s, tb, w, t, tt, ts):
    """``w = (I + L)^-1 (s - tb)``, ``t = tb + w`` (= K s), ``tt += t . t``, ``ts += t . s``."""
    n, m = w.shape
    for i in range(n):
        a0, a1, a2, a3 = _row4(s, i)
        b0, b1, b2, b3 = _row4(tb, i)
        _eliminate(lp, lx, lv, i, w, a0 - b0, a1 - b1, a2 - b2, a3 - b3)
        for c in range(m):
            ti = tb[i, c] + w[i, c]
            t[i, c] = ti
            tt[c] += ti * ti
            ts[c] += ti * s[i, c]


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
    zero = np.zeros(m)
    _fused_u2(up, ux, uv, u, u, zero, r, tb)  # r = u (scratch), tb = (I + U)^-1 u
    _fused_l2(lp, lx, lv, r, tb, w, r_hat, np.zeros(m), np.zeros(m))  # r_hat = K u
    for i in range(n):
        for k in range(m):
            r[i, k] = c[i, k] - r_hat[i, k]
            r_hat[i, k] = r[i, k]
    p = np.zeros_like(c)
    v = np.zeros_like(c)
    s = np.empty_like(c)
    t = np.empty_like(c)
    rho = np.ones(m)
    alpha = np.ones(m)
    omega = np.ones(m)
    rho_new = np.zeros(m)
    beta = np.zeros(m)
    om_old = np.zeros(m)
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
            om_old[k] = omega[k] if live[k] else 0.0
        _fused_u1(up, ux, uv, r, p, v, beta, om_old, tb)
        den[:] = 0.0
        _fused_l1(lp, lx, lv, p, tb, r_hat, w, v, den)
        for k in range(m):
            alpha[k] = rho_new[k] / den[k] if (live[k] and den[k] != 0.0) else 0.0
        _fused_u2(up, ux, uv, r, v, alpha, s, tb)
        tt[:] = 0.0
        ts[:] = 0.0
        _fused_l2(lp, lx, lv, s, tb, w, t, tt, ts)
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


def _solve_group(a: SplitMatrix, bh: np.ndarray, tol: np.ndarray,
                 max_iter: int) -> tuple[np.ndarray, int, np.ndarray]:
    """One group of at most ``GROUP`` scaled right-hand sides: (x, iterations, true residuals)."""
    args = (a.lp, a.lx, a.lv, a.up, a.ux, a.uv)
    m = bh.shape[1]
    c = np.empty_like(bh)
    _lower_solve(a.lp, a.lx, a.lv, bh, c)
    u = c.copy()  # x = (I + U)^-1 (I + L)^-1 b': one symmetric Gauss-Seidel sweep
    x = np.empty_like(u)
    scratch = np.empty_like(u)
    total = 0
    res = np.full(m, np.inf)
    for _attempt in range(6):
        total += _bicgstab_sgs(*args, c, u, 0.5 * tol, max_iter - total)
        _fused_u2(a.up, a.ux, a.uv, u, u, np.zeros(m), scratch, x)  # x = (I + U)^-1 u
        res = _scaled_residual(*args, a.d, bh, x)
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


@numba.njit(cache=True)
def _split_transposed(nxt, pnum, denom, active, ids, pos):
    """:class:`SplitMatrix` arrays of ``D^-1 (I - Q)^T`` in the order ``ids``, straight from branch form.

    Row ``i`` of the transpose gathers the branches into state ``ids[i]``; two
    passes (count, then fill) so that nothing larger than the result is held.
    Columns within a row are not merged or sorted: the sweeps do not need it.
    """
    n = ids.size
    J = nxt.shape[1]
    self_num = np.zeros(n, np.int64)
    n_lo = np.zeros(n + 1, np.int64)
    n_up = np.zeros(n + 1, np.int64)
    for s in ids:
        i_s = pos[s]
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                break
            if not active[t]:
                continue
            i_t = pos[t]
            if i_t == i_s:
                self_num[i_s] += pnum[s, j]
            elif i_s < i_t:
                n_lo[i_t + 1] += 1
            else:
                n_up[i_t + 1] += 1
    lp = np.cumsum(n_lo)
    up = np.cumsum(n_up)
    lx = np.empty(lp[n], np.int32)
    lv = np.empty(lp[n], np.float64)
    ux = np.empty(up[n], np.int32)
    uv = np.empty(up[n], np.float64)
    d = np.empty(n, np.float64)
    for i in range(n):
        d[i] = (denom - self_num[i]) / denom
    fl = lp[:n].copy()
    fu = up[:n].copy()
    for s in ids:
        i_s = pos[s]
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                break
            if not active[t]:
                continue
            i_t = pos[t]
            if i_t == i_s:
                continue
            dn = denom - self_num[i_t]
            v = -pnum[s, j] / dn if dn > 0 else 0.0
            if i_s < i_t:
                lx[fl[i_t]] = i_s
                lv[fl[i_t]] = v
                fl[i_t] += 1
            else:
                ux[fu[i_t]] = i_s
                uv[fu[i_t]] = v
                fu[i_t] += 1
    return lp, lx, lv, up, ux, uv, d


@numba.njit(cache=True)
def _adjoint_residual(nxt, pnum, inv_denom, active, b, v):
    """``max |v - b - Q^T v|`` over the active states and columns."""
    n, m = b.shape
    acc = np.zeros((n, m))
    for s in range(n):
        if not active[s]:
            continue
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            if not active[t]:
                continue
            p = pnum[s, j] * inv_denom
            for c in range(m):
                acc[t, c] += p * v[s, c]
    worst = 0.0
    for s in range(n):
        if not active[s]:
            continue
        for c in range(m):
            r = abs(v[s, c] - b[s, c] - acc[s, c])
            if not r <= worst:
                worst = r
    return worst


def progress_order(key: np.ndarray) -> np.ndarray:
    """A Gauss-Seidel sweep order for a race: decreasing ``key``, ties in reverse state numbering.

    ``key[s]`` should grow along the race (for a board race, the players'
    total progress in buckets of a few squares, then the seat to move); the
    reverse numbering keeps breadth-first neighbours together, which the
    sweeps' memory access likes. Pass the result as ``order``.
    """
    key = np.asarray(key)
    rev = np.arange(key.size - 1, -1, -1)
    return rev[np.argsort(-key[rev], kind="stable")]


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
        a symmetric Gauss-Seidel sweep) or ``"auto"``: direct up to ``DIRECT_LIMIT`` states.
    """

    def __init__(self, nxt: np.ndarray, pnum: np.ndarray, denom: int, active: np.ndarray,
                 stop: np.ndarray | None = None, order: np.ndarray | None = None, method: str = "auto"):
        self.nxt, self.pnum, self.denom, self.active = nxt, pnum, denom, active
        self.stop = np.zeros(nxt.shape, bool) if stop is None else stop
        n = nxt.shape[0]
        n_active = int(np.count_nonzero(active))
        if method == "auto":
            method = "direct" if n_active <= DIRECT_LIMIT else "bicgstab"
        if method not in ("direct", "bicgstab"):
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
        self._a = None
        self.split = None
        if method != "direct":
            pos = np.full(n, -1, np.int64)
            pos[order] = np.arange(order.size)
            arrays = _split_branches(nxt, pnum, np.int64(denom), active, self.stop, order, pos)
            self.split = SplitMatrix(*arrays)
            if not (self.split.d > 0).all():
                raise SolverError("an active state never leaves itself: the system is singular")

    @property
    def a(self) -> sp.csr_array:
        """``I - Q`` as CSR, rows and columns in sweep order (built on first use)."""
        if self._a is None:
            a, ids = system_matrix(self.nxt, self.pnum, self.denom, self.active,
                                   None if not self.stop.any() else self.stop)
            pos = np.full(self.nxt.shape[0], -1, np.int64)
            pos[ids] = np.arange(ids.size)
            perm = pos[self.ids]
            a = a[perm][:, perm].tocsr()
            a.sort_indices()
            self._a = a
        return self._a

    def _split_matrix(self) -> SplitMatrix:
        if self.split is None:
            self.split = SplitMatrix.from_csr(self.a)
        return self.split

    def precondition(self, r: np.ndarray) -> np.ndarray:
        """The symmetric Gauss-Seidel preconditioner ``(D + U)^-1 D (D + L)^-1 r`` (a forward,
        then a backward sweep from zero) on ``(n_active,)`` or ``(n_active, m)`` values in
        sweep order; about the cost of one mat-vec."""
        return self._sweeps(r, symmetric=True)

    def _sweeps(self, r: np.ndarray, symmetric: bool = True) -> np.ndarray:
        a = self._split_matrix()
        r2 = np.asarray(r, np.float64).reshape(r.shape[0], -1)
        out = np.empty_like(r2)
        for g in range(0, r2.shape[1], GROUP):
            part = np.ascontiguousarray(r2[:, g:g + GROUP] / a.d[:, None])
            w = np.empty_like(part)
            _lower_solve(a.lp, a.lx, a.lv, part, w)
            if symmetric:
                _fused_u2(a.up, a.ux, a.uv, w, w, np.zeros(w.shape[1]), part, w)  # in place is safe
            out[:, g:g + GROUP] = w
        return out.reshape(r.shape)

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
            sol, iters = _split_solve(self.split, b2[self.ids], tol, 5000)
            x[self.ids] = sol
            report = SolveReport("BiCGSTAB, symmetric Gauss-Seidel preconditioned", 0.0, iters)
        report.residual = float(_residual(self.nxt, self.pnum, 1.0 / self.denom, self.active, self.stop, b2, x))
        if not np.isfinite(report.residual) or report.residual > 1e-6 * max(1.0, float(np.abs(b2).max())):
            raise SolverError(f"{report.method}: residual {report.residual:.3g} is too large")
        return (x[:, 0] if squeeze else x), report


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
    :class:`LinearSystem` uses when every column shares one matrix. Returns the
    solution and the iterations.
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


def adjoint_solve(nxt: np.ndarray, pnum: np.ndarray, denom: int, active: np.ndarray, order: np.ndarray,
                  b: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, SolveReport]:
    """Solve ``v = b + Q^T v`` on the active states (expected visits when ``b`` is the start).

    The adjoint system runs with the race, so its Gauss-Seidel sweeps go the
    reverse of ``order``; its split matrix is built straight from branch form
    (:func:`_split_transposed`) and handed to the same fused driver as
    :class:`LinearSystem`. Returns ``v`` (zero off the active set) and the
    solve's report with the true residual.
    """
    squeeze = b.ndim == 1
    b2 = np.ascontiguousarray(b.reshape(b.shape[0], -1), dtype=np.float64)
    order = np.asarray(order, np.int64)
    ids = order[active[order]][::-1]  # with the race
    v = np.zeros_like(b2)
    if ids.size == 0:
        return (v[:, 0] if squeeze else v), SolveReport("none", 0.0, 0)
    pos = np.full(nxt.shape[0], -1, np.int64)
    pos[ids] = np.arange(ids.size)
    if ids.size <= DIRECT_LIMIT:
        a, act_ids = system_matrix(nxt, pnum, denom, active, None)
        at_pos = np.full(nxt.shape[0], -1, np.int64)
        at_pos[act_ids] = np.arange(act_ids.size)
        perm = at_pos[ids]
        at = sp.csr_array(a.T)[perm][:, perm].tocsc()
        v[ids] = spla.splu(at).solve(b2[ids])
        method, iters = "direct sparse LU (SuperLU), adjoint", 1
    else:
        split = SplitMatrix(*_split_transposed(nxt, pnum, np.int64(denom), active, ids, pos))
        if not (split.d > 0).all():
            raise SolverError("an active state never leaves itself: the system is singular")
        sol, iters = _split_solve(split, b2[ids], tol, 5000)
        v[ids] = sol
        method = "BiCGSTAB, symmetric Gauss-Seidel preconditioned, adjoint"
    res = _adjoint_residual(nxt, pnum, 1.0 / denom, active, b2, v)
    report = SolveReport(method, float(res), iters)
    if not np.isfinite(report.residual) or report.residual > 1e-6 * max(1.0, float(np.abs(b2).max())):
        raise SolverError(f"{method}: residual {report.residual:.3g} is too large")
    return (v[:, 0] if squeeze else v), report


# ----------------------------------------------------------------------------- shifted blocks
# A chain seen from the player to move (the mover-rotated goose chain) keeps one column per seat:
# x[s, a] is the value of state s when seat a moves there. A branch from s to t with seat shift d
# carries column a of s to column (a + d) mod m of t, so the m columns are one system of n m
# unknowns coupled by the shifts. The kernels below are those of the fused SGS-BiCGSTAB driver
# with each entry's source column permuted; the Krylov scalars are shared by the whole block.


@numba.njit(cache=True)
def _split_transposed_shifted(nxt, pnum, shift, denom, active, ids, pos, m):
    """:func:`_split_transposed` with each entry's seat shift (``lsh``, ``ush``) and its probability as the integer
    numerator (row ``i``'s entries are those numerators times ``sc[i] = -1 / (denom - self)``:
    7 bytes an entry instead of 13); self-loops that change the seat are summed by shift in
    ``selfd`` (``(n, m)`` numerators; column 0 is unused)."""
    n = ids.size
    J = nxt.shape[1]
    self_num = np.zeros(n, np.int64)
    selfd = np.zeros((n, m), np.int32)
    n_lo = np.zeros(n + 1, np.int64)
    n_up = np.zeros(n + 1, np.int64)
    for s in ids:
        i_s = pos[s]
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                break
            if not active[t]:
                continue
            i_t = pos[t]
            if i_t == i_s:
                if shift[s, j] == 0:
                    self_num[i_s] += pnum[s, j]
                else:
                    selfd[i_s, shift[s, j]] += pnum[s, j]
            elif i_s < i_t:
                n_lo[i_t + 1] += 1
            else:
                n_up[i_t + 1] += 1
    lp = np.cumsum(n_lo)
    up = np.cumsum(n_up)
    lx = np.empty(lp[n], np.int32)
    lv = np.empty(lp[n], pnum.dtype)
    lsh = np.empty(lp[n], np.int8)
    ux = np.empty(up[n], np.int32)
    uv = np.empty(up[n], pnum.dtype)
    ush = np.empty(up[n], np.int8)
    d = np.empty(n, np.float64)
    sc = np.empty(n, np.float64)
    for i in range(n):
        dn = denom - self_num[i]
        d[i] = dn / denom
        sc[i] = -1.0 / dn if dn > 0 else 0.0
    fl = lp[:n].copy()
    fu = up[:n].copy()
    for s in ids:
        i_s = pos[s]
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                break
            if not active[t]:
                continue
            i_t = pos[t]
            if i_t == i_s:
                continue
            v = pnum[s, j]
            if i_s < i_t:
                lx[fl[i_t]] = i_s
                lv[fl[i_t]] = v
                lsh[fl[i_t]] = shift[s, j]
                fl[i_t] += 1
            else:
                ux[fu[i_t]] = i_s
                uv[fu[i_t]] = v
                ush[fu[i_t]] = shift[s, j]
                fu[i_t] += 1
    return lp, lx, lv, lsh, up, ux, uv, ush, d, sc, self_num, selfd


@numba.njit(cache=True, nogil=True, inline="always")
def _sh_row(ptr, idx, val, sh, i, src, acc, m, spec, g, tmp, sc):
    """``acc -= C_i^-1 sum q src[j, c - d]`` over the entries (j, q, d) of row ``i``.

    ``q`` is the entry's numerator times the row's scale ``sc[i]``. Four columns (four
    seats) take a branch per shift, which the processor predicts (nearly every shift is
    1, the next seat); ``src`` rows stay 32 bytes, two to a cache line. ``C_i`` is the
    identity, or for a row with seat-changing self-loops (``spec[i] >= 0``) the
    circulant whose inverse has first column ``g[spec[i]]``.
    """
    if m == 4:
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for k in range(ptr[i], ptr[i + 1]):
            j = idx[k]
            q = val[k]
            x0 = src[j, 0]
            x1 = src[j, 1]
            x2 = src[j, 2]
            x3 = src[j, 3]
            d = sh[k]
            if d == 1:
                a0 += q * x3
                a1 += q * x0
                a2 += q * x1
                a3 += q * x2
            elif d == 0:
                a0 += q * x0
                a1 += q * x1
                a2 += q * x2
                a3 += q * x3
            elif d == 2:
                a0 += q * x2
                a1 += q * x3
                a2 += q * x0
                a3 += q * x1
            else:
                a0 += q * x1
                a1 += q * x2
                a2 += q * x3
                a3 += q * x0
        tmp[0] = a0
        tmp[1] = a1
        tmp[2] = a2
        tmp[3] = a3
    else:
        for c in range(m):
            tmp[c] = 0.0
        for k in range(ptr[i], ptr[i + 1]):
            j = idx[k]
            q = val[k]
            d = sh[k]
            for c in range(m):
                cc = c - d
                if cc < 0:
                    cc += m
                tmp[c] += q * src[j, cc]
    f = sc[i]
    for c in range(m):
        tmp[c] *= f
    r = spec[i]
    if r < 0:
        for c in range(m):
            acc[c] -= tmp[c]
    else:
        for c in range(m):
            x = 0.0
            for b in range(m):
                x += g[r, (c - b + m) % m] * tmp[b]
            acc[c] -= x


@numba.njit(cache=True, nogil=True)
def _sh_lower_solve(lp, lx, lv, lsh, spec, g, sc, b, w):
    """``w = (I + L)^-1 b`` with shifted entries."""
    n, m = b.shape
    acc = np.empty(m)
    tmp = np.empty(m)
    for i in range(n):
        for c in range(m):
            acc[c] = b[i, c]
        _sh_row(lp, lx, lv, lsh, i, w, acc, m, spec, g, tmp, sc)
        for c in range(m):
            w[i, c] = acc[c]


@numba.njit(cache=True, nogil=True)
def _sh_upper(up, ux, uv, ush, spec, g, sc, r, v, ca, cb, out, tb):
    """``out = r + ca out + cb v`` (``out`` is not read when ``ca`` is 0), then ``tb = (I + U)^-1 out``."""
    n, m = out.shape
    acc = np.empty(m)
    tmp = np.empty(m)
    for i in range(n - 1, -1, -1):
        for c in range(m):
            x = r[i, c] + cb * v[i, c]
            if ca != 0.0:
                x += ca * out[i, c]
            out[i, c] = x
            acc[c] = x
        _sh_row(up, ux, uv, ush, i, tb, acc, m, spec, g, tmp, sc)
        for c in range(m):
            tb[i, c] = acc[c]


@numba.njit(cache=True, nogil=True)
def _sh_lower(lp, lx, lv, lsh, spec, g, sc, p, tb, w, out, other):
    """``w = (I + L)^-1 (p - tb)``, ``out = tb + w`` (= K p); returns ``(other . out, out . out, out . p)``."""
    n, m = p.shape
    acc = np.empty(m)
    tmp = np.empty(m)
    d1 = 0.0
    d2 = 0.0
    d3 = 0.0
    for i in range(n):
        for c in range(m):
            acc[c] = p[i, c] - tb[i, c]
        _sh_row(lp, lx, lv, lsh, i, w, acc, m, spec, g, tmp, sc)
        for c in range(m):
            w[i, c] = acc[c]
            o = tb[i, c] + acc[c]
            out[i, c] = o
            d1 += other[i, c] * o
            d2 += o * o
            d3 += o * p[i, c]
    return d1, d2, d3


@numba.njit(cache=True, nogil=True)
def _sh_scaled_residual(lp, lx, lv, lsh, up, ux, uv, ush, spec, g, sc, d, b, x):
    """``max_i |d_i (b - (I + L + U) x)_i|`` over the whole block."""
    n, m = b.shape
    worst = 0.0
    acc = np.empty(m)
    tmp = np.empty(m)
    for i in range(n):
        for c in range(m):
            acc[c] = b[i, c] - x[i, c]
        _sh_row(lp, lx, lv, lsh, i, x, acc, m, spec, g, tmp, sc)
        _sh_row(up, ux, uv, ush, i, x, acc, m, spec, g, tmp, sc)
        for c in range(m):
            r = abs(acc[c]) * d[i]
            if not r <= worst:
                worst = r
    return worst


@numba.njit(cache=True, nogil=True)
def _sh_bicgstab(lp, lx, lv, lsh, up, ux, uv, ush, spec, g, sc, c, u, tol, max_iter):
    """BiCGSTAB on ``K u = c`` for the whole shifted block (one set of scalars); the iterations."""
    n, m = c.shape
    tb = np.empty_like(c)
    w = np.empty_like(c)
    r = np.empty_like(c)
    r_hat = np.empty_like(c)
    p = np.zeros_like(c)
    v = np.zeros_like(c)
    s = np.empty_like(c)
    t = np.empty_like(c)
    _sh_upper(up, ux, uv, ush, spec, g, sc, u, u, 0.0, 0.0, r, tb)  # r = u (scratch), tb = (I + U)^-1 u
    _sh_lower(lp, lx, lv, lsh, spec, g, sc, r, tb, w, r_hat, r)  # r_hat = K u
    rho_new = 0.0
    worst = 0.0
    for i in range(n):
        for k in range(m):
            rk = c[i, k] - r_hat[i, k]
            r[i, k] = rk
            r_hat[i, k] = rk
            rho_new += rk * rk
            worst = max(worst, abs(rk))
    rho = alpha = omega = 1.0
    it = 0
    while it < max_iter and worst > tol:
        it += 1
        if abs(rho_new) < 1e-300 or abs(omega) < 1e-300:
            # breakdown: restart the Krylov space from the current residual
            rr = 0.0
            for i in range(n):
                for k in range(m):
                    r_hat[i, k] = r[i, k]
                    p[i, k] = 0.0
                    v[i, k] = 0.0
                    rr += r[i, k] * r[i, k]
            rho = alpha = omega = 1.0
            rho_new = rr
        beta = (rho_new / rho) * (alpha / omega)
        _sh_upper(up, ux, uv, ush, spec, g, sc, r, v, beta, -beta * omega, p, tb)  # p = r + beta (p - omega v)
        den, _, _ = _sh_lower(lp, lx, lv, lsh, spec, g, sc, p, tb, w, v, r_hat)  # v = K p
        alpha = rho_new / den if den != 0.0 else 0.0
        _sh_upper(up, ux, uv, ush, spec, g, sc, r, v, 0.0, -alpha, s, tb)  # s = r - alpha v
        _, tt, ts = _sh_lower(lp, lx, lv, lsh, spec, g, sc, s, tb, w, t, s)  # t = K s
        omega = ts / tt if tt > 0.0 else 0.0
        rho = rho_new
        rho_new = 0.0
        worst = 0.0
        for i in range(n):
            for k in range(m):
                u[i, k] += alpha * p[i, k] + omega * s[i, k]
                rk = s[i, k] - omega * t[i, k]
                r[i, k] = rk
                rho_new += r_hat[i, k] * rk
                if not abs(rk) <= worst:
                    worst = abs(rk)
    return it


@numba.njit(cache=True)
def _shifted_adjoint_residual(nxt, pnum, shift, inv_denom, active, b, v):
    """``max |v - b - Q_shift^T v|`` over the active states and every column."""
    n, m = b.shape
    acc = np.zeros((n, m))
    for s in range(n):
        if not active[s]:
            continue
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            if not active[t]:
                continue
            p = pnum[s, j] * inv_denom
            d = shift[s, j]
            for c in range(m):
                acc[t, (c + d) % m] += p * v[s, c]
    worst = 0.0
    for s in range(n):
        if not active[s]:
            continue
        for c in range(m):
            r = abs(v[s, c] - b[s, c] - acc[s, c])
            if not r <= worst:
                worst = r
    return worst


def _circulant_apply(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row by row, the circulant with first column ``g[r]`` times ``y[r]``."""
    m = y.shape[1]
    k = (np.arange(m)[:, None] - np.arange(m)[None, :]) % m  # [c, b] -> (c - b) mod m
    return np.einsum("rcb,rb->rc", g[:, k], y)


def shifted_adjoint_solve(nxt: np.ndarray, pnum: np.ndarray, shift: np.ndarray, denom: int, active: np.ndarray,
                          order: np.ndarray, b: np.ndarray, tol: float = 1e-13,
                          max_iter: int = 5000) -> tuple[np.ndarray, SolveReport]:
    """Solve ``v[t, (a + d) % m] = b[t, a'] + sum p v[s, a]`` over the branches ``s -> t`` with seat shift
    ``d`` (``b`` and ``v`` are ``(n, m)``, one column per seat; zero off the active set).

    The expected visits of a chain seen from the player to move: column ``a`` of
    state ``s`` is the state with seat ``a`` to move. Sweeps go with the race (the
    reverse of ``order``), and the fused symmetric Gauss-Seidel BiCGSTAB runs on the
    whole block at once; a state whose self-loops change the seat has a circulant
    diagonal block, inverted exactly.
    """
    b2 = np.ascontiguousarray(b, dtype=np.float64)
    order = np.asarray(order, np.int64)
    ids = order[active[order]][::-1]
    v = np.zeros_like(b2)
    if ids.size == 0:
        return v, SolveReport("none", 0.0, 0)
    pos = np.full(nxt.shape[0], -1, np.int64)
    pos[ids] = np.arange(ids.size)
    m = b2.shape[1]
    lp, lx, lv, lsh, up, ux, uv, ush, d, sc, self_num, selfd = _split_transposed_shifted(
        nxt, pnum, shift, np.int64(denom), active, ids, pos, m)
    if not (d > 0).all():
        raise SolverError("an active state never leaves itself: the system is singular")
    # Rows whose self-loops change the seat (a piece sent back onto the mover's square can leave the
    # same position seen from the next seat): their diagonal block is a circulant, inverted here.
    rows = np.flatnonzero(selfd[:, 1:].any(axis=1))
    spec = np.full(ids.size, -1, np.int32)
    spec[rows] = np.arange(rows.size, dtype=np.int32)
    dn = (denom - self_num[rows]).astype(np.float64)
    col = -selfd[rows].astype(np.float64) / dn[:, None]
    col[:, 0] = 1.0
    g = np.ascontiguousarray(np.fft.ifft(1.0 / np.fft.fft(col, axis=1), axis=1).real) if rows.size else \
        np.zeros((1, m))
    del selfd, self_num, col
    bh = b2[ids] / d[:, None]
    if rows.size:
        bh[rows] = _circulant_apply(g, bh[rows])
    c = np.empty_like(bh)
    _sh_lower_solve(lp, lx, lv, lsh, spec, g, sc, bh, c)
    u = c.copy()
    x = np.empty_like(u)
    scratch = np.empty_like(u)
    scale = max(1.0, float(np.abs(b2).max()))
    total = 0
    res = np.inf
    for _attempt in range(6):
        total += _sh_bicgstab(lp, lx, lv, lsh, up, ux, uv, ush, spec, g, sc, c, u, 0.5 * tol * scale, max_iter - total)
        _sh_upper(up, ux, uv, ush, spec, g, sc, u, u, 0.0, 0.0, scratch, x)  # x = (I + U)^-1 u
        res = _sh_scaled_residual(lp, lx, lv, lsh, up, ux, uv, ush, spec, g, sc, d, bh, x)
        if res <= tol * scale or total >= max_iter:
            break
    del lp, lx, lv, lsh, up, ux, uv, ush, c, u, scratch, bh
    v[ids] = x
    residual = float(_shifted_adjoint_residual(nxt, pnum, shift, 1.0 / denom, active, b2, v))
    report = SolveReport("BiCGSTAB, symmetric Gauss-Seidel preconditioned, adjoint, seat-shifted block", residual,
                         total)
    if not np.isfinite(residual) or residual > 1e-6 * scale:
        raise SolverError(f"{report.method}: residual {residual:.3g} is too large")
    return v, report
