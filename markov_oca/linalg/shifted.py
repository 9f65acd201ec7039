"""Expected visits of a chain seen from the player to move: one column per seat, coupled by seat shifts.

x[s, a] is the value of state s when seat a moves there. A branch from s to t with
seat shift d carries column a of s to column (a + d) mod m of t, so the m columns are
one system of n m unknowns coupled by the shifts. It runs on the kernels of the fused
SGS-BiCGSTAB driver (:mod:`~markov_oca.linalg.sweeps`) with each entry's source
column permuted; the Krylov scalars are shared by the whole block.
"""

from __future__ import annotations

import numba
import numpy as np

from ..core.errors import SolverError
from .bicgstab import _restart, _start
from .report import SolveReport, checked
from .residual import _shifted_adjoint_residual
from .split import _split_transposed_shifted
from .sweeps import _lower_half, _lower_solve, _scaled_residual, _upper_half


@numba.njit(cache=True, nogil=True)
def _sh_update(u, r, r_hat, p, s, t, alpha, omega):
    """``u += alpha p + omega s`` and ``r = s - omega t`` over the block; returns ``(r_hat . r, max |r|)``."""
    rho_new = 0.0
    worst = 0.0
    for i in range(u.shape[0]):
        for k in range(u.shape[1]):
            u[i, k] += alpha * p[i, k] + omega * s[i, k]
            rk = s[i, k] - omega * t[i, k]
            r[i, k] = rk
            rho_new += r_hat[i, k] * rk
            if not abs(rk) <= worst:
                worst = abs(rk)
    return rho_new, worst


@numba.njit(cache=True, nogil=True)
def _sh_bicgstab(lp, lx, lv, lsh, up, ux, uv, ush, spec, g, sc, c, u, tol, max_iter):
    """BiCGSTAB on ``K u = c`` for the whole shifted block (one set of scalars); the iterations."""
    n, m = c.shape
    lo = (lsh, spec, g, sc)
    hi = (ush, spec, g, sc)
    tb = np.empty_like(c)
    w = np.empty_like(c)
    r = np.empty_like(c)
    r_hat = np.empty_like(c)
    p = np.zeros_like(c)
    v = np.zeros_like(c)
    s = np.empty_like(c)
    t = np.empty_like(c)
    _start(lp, lx, lv, lo, up, ux, uv, hi, 0.0, 0.0, c, u, r, r_hat, tb, w)
    rho_new = 0.0
    worst = 0.0
    for i in range(n):
        for k in range(m):
            rho_new += r[i, k] * r[i, k]
            worst = max(worst, abs(r[i, k]))
    rho = alpha = omega = 1.0
    it = 0
    while it < max_iter and worst > tol:
        it += 1
        if abs(rho_new) < 1e-300 or abs(omega) < 1e-300:
            rho_new = _restart(0, m, r, r_hat, p, v)  # breakdown: restart from the current residual
            rho = alpha = omega = 1.0
        beta = (rho_new / rho) * (alpha / omega)
        _upper_half(up, ux, uv, hi, r, v, beta, -beta * omega, p, tb)  # p = r + beta (p - omega v)
        den, _, _ = _lower_half(lp, lx, lv, lo, p, tb, w, v, r_hat, None, None, None)  # v = K p
        alpha = rho_new / den if den != 0.0 else 0.0
        _upper_half(up, ux, uv, hi, r, v, 0.0, -alpha, s, tb)  # s = r - alpha v
        _, tt, ts = _lower_half(lp, lx, lv, lo, s, tb, w, t, s, None, None, None)  # t = K s
        omega = ts / tt if tt > 0.0 else 0.0
        rho = rho_new
        rho_new, worst = _sh_update(u, r, r_hat, p, s, t, alpha, omega)
    return it


def _circulant_apply(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row by row, the circulant with first column ``g[r]`` times ``y[r]``."""
    m = y.shape[1]
    k = (np.arange(m)[:, None] - np.arange(m)[None, :]) % m  # [c, b] -> (c - b) mod m
    return np.einsum("rcb,rb->rc", g[:, k], y)


def _circulants(self_num: np.ndarray, selfd: np.ndarray, denom: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose self-loops change the seat (a piece sent back onto the mover's square can leave the
    same position seen from the next seat) have a circulant diagonal block: ``spec[i]`` its index or -1,
    and ``g`` the first columns of the inverses."""
    rows = np.flatnonzero(selfd[:, 1:].any(axis=1))
    spec = np.full(selfd.shape[0], -1, np.int32)
    spec[rows] = np.arange(rows.size, dtype=np.int32)
    dn = (denom - self_num[rows]).astype(np.float64)
    col = -selfd[rows].astype(np.float64) / dn[:, None]
    col[:, 0] = 1.0
    g = np.ascontiguousarray(np.fft.ifft(1.0 / np.fft.fft(col, axis=1), axis=1).real) if rows.size else \
        np.zeros((1, m))
    return spec, g


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
    spec, g = _circulants(self_num, selfd, denom, m)
    del selfd, self_num
    bh = b2[ids] / d[:, None]
    rows = np.flatnonzero(spec >= 0)
    if rows.size:
        bh[rows] = _circulant_apply(g, bh[rows])
    lo, hi = (lsh, spec, g, sc), (ush, spec, g, sc)
    c = np.empty_like(bh)
    _lower_solve(lp, lx, lv, lo, bh, c)
    u = c.copy()
    x = np.empty_like(u)
    scratch = np.empty_like(u)
    scale = max(1.0, float(np.abs(b2).max()))
    total = 0
    for _attempt in range(6):
        total += _sh_bicgstab(lp, lx, lv, lsh, up, ux, uv, ush, spec, g, sc, c, u, 0.5 * tol * scale, max_iter - total)
        _upper_half(up, ux, uv, hi, u, u, 0.0, 0.0, scratch, x)  # x = (I + U)^-1 u
        res = _scaled_residual(lp, lx, lv, lo, up, ux, uv, hi, d, bh, x).max()
        if res <= tol * scale or total >= max_iter:
            break
    del lp, lx, lv, lsh, up, ux, uv, ush, c, u, scratch, bh, lo, hi
    v[ids] = x
    residual = float(_shifted_adjoint_residual(nxt, pnum, shift, 1.0 / denom, active, b2, v))
    return v, checked(SolveReport("BiCGSTAB, symmetric Gauss-Seidel preconditioned, adjoint, seat-shifted block",
                                  residual, total), b2)
