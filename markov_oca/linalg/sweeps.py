"""The Gauss-Seidel sweeps of the fused BiCGSTAB, each written once for plain and seat-shifted systems.

A sweep solves with ``I + L`` (forward) or ``I + U`` (backward) one row at a time,
and the vector updates and dot products of BiCGSTAB ride along (the memory traffic
is what limits the speed on these chains). Every kernel takes, for each triangle it
reads, ``sh``: None for a plain system (entries already scaled; at most four
columns, each its own system, kept in registers), or ``(shifts, spec, g, sc)`` for a
block of seats coupled by shifts (see :func:`_sh_row`). numba prunes the other
branch (``isinstance``, ``is None``) when it compiles each kind, so neither pays for the other.
"""

from __future__ import annotations

import numba
import numpy as np


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


@numba.njit(cache=True, nogil=True, inline="always")
def _sub_row(ptr, idx, val, sh, i, x, acc, tmp):
    """``acc -= sum_k val[k] x[idx[k]]`` over row ``i`` (shifted and scaled when ``sh`` is given)."""
    if not isinstance(sh, tuple):
        for k in range(ptr[i], ptr[i + 1]):
            j = idx[k]
            q = val[k]
            for c in range(acc.size):
                acc[c] -= q * x[j, c]
    else:
        shifts, spec, g, sc = sh
        _sh_row(ptr, idx, val, shifts, i, x, acc, acc.size, spec, g, tmp, sc)


@numba.njit(cache=True, nogil=True, inline="always")
def _solve_row(ptr, idx, val, sh, i, src, dst, acc, tmp):
    """``dst[i] = src[i] - sum_k val[k] dst[idx[k]]``: one row of a unit triangular solve (``src`` may be ``dst``)."""
    if not isinstance(sh, tuple):
        a0, a1, a2, a3 = _row4(src, i)
        _eliminate(ptr, idx, val, i, dst, a0, a1, a2, a3)
    else:
        m = dst.shape[1]
        for c in range(m):
            acc[c] = src[i, c]
        _sub_row(ptr, idx, val, sh, i, dst, acc, tmp)
        for c in range(m):
            dst[i, c] = acc[c]


@numba.njit(cache=True, nogil=True, inline="always")
def _set_row(sh, i, r, v, beta, omega, out):
    """Row ``i`` of a BiCGSTAB direction: per column ``out = r + beta (out - omega v)`` (``r - omega v`` when
    ``beta`` is None); on a shifted block, with shared scalars, ``out = r + omega v + beta out`` (``out`` not
    read when ``beta`` is 0)."""
    for c in range(out.shape[1]):
        if not isinstance(sh, tuple):
            if beta is None:
                out[i, c] = r[i, c] - omega[c] * v[i, c]
            else:
                out[i, c] = r[i, c] + beta[c] * (out[i, c] - omega[c] * v[i, c])
        else:
            x = r[i, c] + omega * v[i, c]
            if beta != 0.0:
                x += beta * out[i, c]
            out[i, c] = x


@numba.njit(cache=True, nogil=True)
def _lower_solve(lp, lx, lv, lsh, b, w):
    """``w = (I + L)^-1 b``, L strictly lower."""
    m = b.shape[1]
    acc = np.empty(m)
    tmp = np.empty(m)
    for i in range(b.shape[0]):
        _solve_row(lp, lx, lv, lsh, i, b, w, acc, tmp)


@numba.njit(cache=True, nogil=True)
def _upper_half(up, ux, uv, ush, r, v, beta, omega, out, tb):
    """A direction (:func:`_set_row`) into ``out``, then ``tb = (I + U)^-1 out``: the backward sweep of one
    application of the preconditioned operator."""
    n, m = tb.shape
    acc = np.empty(m)
    tmp = np.empty(m)
    for i in range(n - 1, -1, -1):
        _set_row(ush, i, r, v, beta, omega, out)
        _solve_row(up, ux, uv, ush, i, out, tb, acc, tmp)


@numba.njit(cache=True, nogil=True)
def _lower_half(lp, lx, lv, lsh, p, tb, w, out, other, d1, d2, d3):
    """``w = (I + L)^-1 (p - tb)`` and ``out = tb + w`` (= K p, the forward sweep), with dot products.

    Plain: per column, ``d1 += other . out`` and ``d2 += out . out``, ``d3 += out . p``
    (each skipped when None). Shifted: returns ``(other . out, out . out, out . p)``
    over the whole block.
    """
    n, m = p.shape
    acc = np.empty(m)
    tmp = np.empty(m)
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for i in range(n):
        for c in range(m):
            w[i, c] = p[i, c] - tb[i, c]
        _solve_row(lp, lx, lv, lsh, i, w, w, acc, tmp)
        for c in range(m):
            o = tb[i, c] + w[i, c]
            out[i, c] = o
            if not isinstance(lsh, tuple):
                if d1 is not None:
                    d1[c] += other[i, c] * o
                if d2 is not None:
                    d2[c] += o * o
                    d3[c] += o * p[i, c]
            else:
                s1 += other[i, c] * o
                s2 += o * o
                s3 += o * p[i, c]
    return s1, s2, s3


@numba.njit(cache=True, nogil=True)
def _scaled_residual(lp, lx, lv, lsh, up, ux, uv, ush, d, b, x):
    """Per column, ``max_i |d_i (b - (I + L + U) x)_i|``: the residual of the unscaled system."""
    n, m = b.shape
    worst = np.zeros(m)
    acc = np.empty(m)
    tmp = np.empty(m)
    for i in range(n):
        for c in range(m):
            acc[c] = b[i, c] - x[i, c]
        _sub_row(lp, lx, lv, lsh, i, x, acc, tmp)
        _sub_row(up, ux, uv, ush, i, x, acc, tmp)
        for c in range(m):
            r = abs(acc[c]) * d[i]
            if not r <= worst[c]:  # also catches nan
                worst[c] = r
    return worst
