"""The numeric refinement steps of :class:`~markov_oca.rational.refine.RefineSolver`: float triangular solves
over one LU, rounded, and the exact int64 residual update."""

from __future__ import annotations

import numba
import numpy as np

from ..core.errors import SolverError
from .coupling import coupled_term


class RefinementFailed(SolverError):
    """The floating-point solve was not accurate enough to gain bits (the caller falls back to lifting)."""


@numba.njit(cache=True)
def _bitlen(v):
    k = 0
    while v:
        v >>= 1
        k += 1
    return k


@numba.njit(cache=True, fastmath=True, inline="always")
def _sweep1(order, ptr, idx, val, scale, scaled, y, a):
    """One triangular pass over column ``a`` in the row ``order``; rows scaled by ``scale`` when ``scaled``."""
    for i in order:
        s0 = y[i, a]
        for e in range(ptr[i], ptr[i + 1]):
            s0 -= val[e] * y[idx[e], a]
        y[i, a] = s0 * scale[i] if scaled else s0


@numba.njit(cache=True, fastmath=True, inline="always")
def _sweep2(order, ptr, idx, val, scale, scaled, y, a):
    """:func:`_sweep1` over columns ``a, a+1``."""
    for i in order:
        s0, s1 = y[i, a], y[i, a + 1]
        for e in range(ptr[i], ptr[i + 1]):
            j, v = idx[e], val[e]
            s0 -= v * y[j, a]
            s1 -= v * y[j, a + 1]
        w = scale[i] if scaled else 1.0
        y[i, a], y[i, a + 1] = s0 * w, s1 * w


@numba.njit(cache=True, fastmath=True, inline="always")
def _sweep4(order, ptr, idx, val, scale, scaled, y, a):
    """:func:`_sweep1` over columns ``a .. a+3``."""
    for i in order:
        s0, s1, s2, s3 = y[i, a], y[i, a + 1], y[i, a + 2], y[i, a + 3]
        for e in range(ptr[i], ptr[i + 1]):
            j, v = idx[e], val[e]
            s0 -= v * y[j, a]
            s1 -= v * y[j, a + 1]
            s2 -= v * y[j, a + 2]
            s3 -= v * y[j, a + 3]
        w = scale[i] if scaled else 1.0
        y[i, a], y[i, a + 1], y[i, a + 2], y[i, a + 3] = s0 * w, s1 * w, s2 * w, s3 * w


@numba.njit(cache=True)
def _ftri(n, lp, li, lv, up, ui, uv, uinv, y, c0, c1):
    """``y[:, c0:c1] = U^-1 L^-1 y[:, c0:c1]`` in float64 (``L`` unit lower and ``U`` strictly upper by rows),
    four columns a pass (the pass is bound by the latency of the gathers, not by the arithmetic)."""
    a = c0
    down, up_rows = range(n), range(n - 1, -1, -1)
    while c1 - a >= 4:
        _sweep4(down, lp, li, lv, uinv, False, y, a)
        _sweep4(up_rows, up, ui, uv, uinv, True, y, a)
        a += 4
    if c1 - a >= 2:
        _sweep2(down, lp, li, lv, uinv, False, y, a)
        _sweep2(up_rows, up, ui, uv, uinv, True, y, a)
        a += 2
    if c1 - a == 1:
        _sweep1(down, lp, li, lv, uinv, False, y, a)
        _sweep1(up_rows, up, ui, uv, uinv, True, y, a)


@numba.njit(cache=True)
def _refine(steps, n, lp, li, lv, up, ui, uv, uinv, ap, ai, av, r, cp, ci, cv, src, src_of,
            s_cap, head, bound_r, out_x, out_s, y):
    """``steps`` refinement steps on the integer residual ``r`` (n, m), in place (see :class:`RefineSolver`).

    The last ``cp.shape[0]`` columns are coupled: column ``m - nc + q`` gains
    ``C_q @ (sum of the columns src[src_of[q, 0]:src_of[q, 1]])``. Digit ``t`` goes to
    ``out_x[t]`` and its shift to ``out_s[t]``. Returns (steps done, 0), or (t, 1) when
    no shift of 8 bits or more is safe, (t, 2) when the residual grew (the float solve
    is less accurate than the shift).
    """
    m = r.shape[1]
    nc = cp.shape[0]
    mp = m - nc
    acc = np.empty(m, np.int64)
    for t in range(steps):
        for i in range(n):
            for c in range(mp):
                y[i, c] = np.float64(r[i, c])
        _ftri(n, lp, li, lv, up, ui, uv, uinv, y, 0, mp)
        if nc:
            for i in range(n):
                for q in range(nc):
                    y[i, mp + q] = np.float64(r[i, mp + q]) + coupled_term(q, i, cp, ci, cv, src, src_of, y)
            _ftri(n, lp, li, lv, up, ui, uv, uinv, y, mp, m)
        ymax = 0.0
        rmax = 0
        for i in range(n):
            for c in range(m):
                ay = abs(y[i, c])
                if not ay <= ymax:  # also catches NaN
                    ymax = ay
                ar = abs(r[i, c])
                if ar > rmax:
                    rmax = ar
        if not np.isfinite(ymax):
            return t, 1
        room = min(52, head) - max(int(np.ceil(np.log2(ymax + 1.0))), 0)
        room = min(room, 61 - max(_bitlen(rmax), 1), s_cap)
        s = (room // 8) * 8
        if s < 8:
            return t, 1
        scale = np.float64(2.0) ** s
        x = out_x[t]
        for i in range(n):
            for c in range(m):
                x[i, c] = np.int64(np.rint(y[i, c] * scale))
        out_s[t] = s
        grown = False
        for i in range(n):
            for c in range(m):
                acc[c] = r[i, c] << s
            for e in range(ap[i], ap[i + 1]):
                j = ai[e]
                v = av[e]
                for c in range(m):
                    acc[c] -= v * x[j, c]
            for q in range(nc):
                for e in range(cp[q, i], cp[q, i + 1]):
                    j = ci[e]
                    sx = 0
                    for k in range(src_of[q, 0], src_of[q, 1]):
                        sx += x[j, src[k]]
                    acc[mp + q] += cv[e] * sx
            for c in range(m):
                r[i, c] = acc[c]
                if abs(acc[c]) > bound_r:
                    grown = True
        if grown and t + 1 < steps:
            return t + 1, 2
    return steps, 0
