"""Certified residuals and sums in floating point: what a computed answer's error bound is built from.

A solve's error follows from its *true* residual, not the one floating point shows: on a nearly
singular ``I - Q`` the computed residual can be 1e-17 while the true one is 1e14. Every kernel
here returns, beside the computed value, an upper bound on how far rounding can have moved it,
from the standard model ``fl(a op b) = (a op b)(1 + e)``, ``|e| <= u = 2**-53`` (Higham,
*Accuracy and Stability of Numerical Algorithms*, ch. 2-4):

- a probability ``pnum * (1 / denom)`` times a value is three roundings, a term of relative error
  at most ``gamma_3``; a recursive sum of ``k`` such terms adds ``gamma_(k-1)`` of the sum of their
  magnitudes. The kernels use ``gamma_(2 (k + 4))`` of the computed sum of magnitudes: the doubling
  covers the rounding of that sum and of ``gamma`` itself, and :data:`TINY` per term covers
  underflow;
- compensated (Neumaier) sums of products are off by at most ``2 u |s| + (2 u + 4 k u^2) sum |p_i|``
  (Higham, 4.3), here ``(3 u + 4 k u^2)`` for the three roundings of a branch term.

Upper bounds summed in floating point over fewer than ``2**30`` nonnegative terms are multiplied
by :data:`SLACK` (``1 + 1e-6`` > ``1 + gamma_(2**30)``), so that they stay upper bounds.
"""

from __future__ import annotations

import numba
import numpy as np

from .rows import n_states, row_width, span

#: The unit roundoff of a double.
U = 2.0 ** -53
#: An absolute allowance per term for underflow (products below the normal range lose their relative accuracy).
TINY = 2.0 ** -1000
#: Factor that keeps a floating-point sum of fewer than 2**30 nonnegative upper bounds an upper bound.
SLACK = 1.0 + 1e-6


def gamma(k: np.ndarray | float) -> np.ndarray | float:
    """``gamma_(2 (k + 4))``: the relative error allowance of a recursive sum of ``k`` branch terms.

    Examples
    --------
    >>> float(gamma(1)) < 1.2e-15
    True
    """
    m = 2.0 * (np.asarray(k, np.float64) + 4.0)
    return m * U / (1.0 - m * U)


@numba.njit(inline="always")
def two_sum(s, c, x):
    """Neumaier's step: the new sum and the new compensation."""
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


@numba.njit(cache=True, nogil=True)
def forward_residual(lo, hi, nxt, pnum, inv_denom, active, b, x, res, err):
    """``res = b + Q x - x`` on the active rows (columns of ``x`` at once) and the rounding allowance ``err``.

    The chain's branches come as :class:`~markov_oca.linalg.rows.Rows` (``*chain.rows``).
    ``|true residual| <= |res| + err`` row by row, where the true residual uses the chain's exact
    probabilities ``pnum / denom``. Inactive rows get 0.
    """
    n, m = x.shape
    for i in range(n):
        for c in range(m):
            res[i, c] = 0.0
            err[i, c] = 0.0
        if not active[i]:
            continue
        k = 2
        first, last = span(lo, hi, nxt, i)
        for c in range(m):
            s = b[i, c] - x[i, c]
            a = abs(b[i, c]) + abs(x[i, c])
            for j in range(first, last):
                t = nxt[j]
                if not active[t]:
                    continue
                q = pnum[j] * inv_denom * x[t, c]
                s += q
                a += abs(q)
                if c == 0:
                    k += 1
            res[i, c] = s
            err[i, c] = a
        g = 2.0 * (k + 4.0) * 1.1102230246251565e-16
        g = g / (1.0 - g)
        for c in range(m):
            err[i, c] = err[i, c] * g + (k + 4.0) * 9.332636185032189e-302


@numba.njit(cache=True, nogil=True)
def adjoint_residual(lo, hi, nxt, pnum, inv_denom, active, e, v, res, err):
    """``res = e + Q^T v - v`` on the active states (one column) and the rounding allowance ``err`` (the chain's
    :class:`~markov_oca.linalg.rows.Rows`)."""
    n = n_states(lo, hi, nxt)
    cnt = np.zeros(n, np.int64)
    for s in range(n):
        if active[s]:
            res[s] = e[s] - v[s]
            err[s] = abs(e[s]) + abs(v[s])
        else:
            res[s] = 0.0
            err[s] = 0.0
    for u in range(n):
        if not active[u]:
            continue
        vu = v[u]
        first, last = span(lo, hi, nxt, u)
        for j in range(first, last):
            t = nxt[j]
            if not active[t]:
                continue
            q = pnum[j] * inv_denom * vu
            res[t] += q
            err[t] += abs(q)
            cnt[t] += 1
    for s in range(n):
        if active[s]:
            g = 2.0 * (cnt[s] + 6.0) * 1.1102230246251565e-16
            g = g / (1.0 - g)
            err[s] = err[s] * g + (cnt[s] + 6.0) * 9.332636185032189e-302


@numba.njit(cache=True, nogil=True)
def compensated_dot(a, b):
    """``sum(a * b)`` by Neumaier's compensated sum, and a bound on its error (exact inputs). A product with a
    zero factor is exactly 0 and cannot underflow: only the others count for underflow, so a sum whose every
    term has a zero factor is exact (error 0)."""
    s = 0.0
    c = 0.0
    mag = 0.0
    nonzero = 0
    for i in range(a.size):
        p = a[i] * b[i]
        s, c = two_sum(s, c, p)
        mag += abs(p)
        if a[i] != 0.0 and b[i] != 0.0:
            nonzero += 1
    total = s + c
    k = float(a.size)
    err = 2.0 * 1.1102230246251565e-16 * abs(total) + (2.0 * 1.1102230246251565e-16 + 4.0 * k * 1.232595164407831e-32) \
        * mag * (1.0 + 1e-6) + float(nonzero) * 9.332636185032189e-302
    return total, err


@numba.njit(cache=True, nogil=True)
def into_classes(lo, hi, nxt, pnum, inv_denom, v, class_of, out, err):
    """``out[k] = sum_s v[s] P(s -> class k)`` over the states ``s`` with ``class_of[s] < 0``, compensated,
    and a bound ``err[k]`` on its rounding (three roundings a term: ``pnum / denom`` times ``v``); the chain's
    :class:`~markov_oca.linalg.rows.Rows`."""
    comp = np.zeros(out.size)
    mag = np.zeros(out.size)
    cnt = np.zeros(out.size)
    for s in range(n_states(lo, hi, nxt)):
        m = v[s]
        if m == 0.0 or class_of[s] >= 0:
            continue
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
            t = nxt[j]
            k = class_of[t]
            if k >= 0:
                p = m * pnum[j] * inv_denom
                out[k], comp[k] = two_sum(out[k], comp[k], p)
                mag[k] += abs(p)
                cnt[k] += 1.0
    for k in range(out.size):
        out[k] += comp[k]
        err[k] = 2.0 * 1.1102230246251565e-16 * abs(out[k]) + (4.0 * 1.1102230246251565e-16 + 4.0 * cnt[k]
                                                                 * 1.232595164407831e-32) * mag[k] * (1.0 + 1e-6) \
            + cnt[k] * 9.332636185032189e-302


def push_rounding(nxt: np.ndarray, pushes: int) -> float:
    """The relative rounding of every mass after ``pushes`` pushes of a nonnegative distribution through ``nxt``.

    A push adds into each state one term ``m * pnum * (1 / denom)`` (three roundings) per branch
    that enters it, so a mass after a push is off by ``gamma_(fan-in + 3)`` relative to the exact push
    of the masses before; the pushes compound: ``gamma_(pushes (fan-in + 3))`` at most (every term
    nonnegative, no cancellation). ``fan-in`` is the largest number of branches into one state.

    Examples
    --------
    >>> nxt = np.array([[1, -1], [1, -1]])
    >>> 0 < push_rounding(nxt, 10) < 1e-13
    True
    """
    valid = nxt[nxt >= 0]
    fan_in = int(np.bincount(valid.ravel()).max()) if valid.size else 0
    return float(gamma(pushes * (fan_in + 3.0) / 2.0))


@numba.njit(cache=True)
def shifted_adjoint_residual(nxt, pnum, shift, inv_denom, active, init, v, res, err):
    """``res = e + Q_shift^T v - v`` (``e``: 1 in column 0 of state ``init``, or ``e = 0`` when ``init`` is
    -1) on the active states of a seat-shifted block (``(n, m)``: a branch
    ``s -> t`` with seat shift ``d`` takes column ``a`` of ``s`` to column ``(a + d) % m`` of ``t``), and
    ``err[s]``, a bound on the rounding of row ``s``'s ``m`` entries together.

    ``sum_a |true residual[s, a]| <= sum_a |res[s, a]| + err[s]``; inactive rows get 0.
    """
    n, m = v.shape
    cnt = np.zeros(n, np.int64)
    for s in range(n):
        err[s] = 0.0
        for a in range(m):
            if active[s]:
                e = 1.0 if (s == init and a == 0) else 0.0
                res[s, a] = e - v[s, a]
                err[s] += e + abs(v[s, a])
            else:
                res[s, a] = 0.0
    for u in range(n):
        if not active[u]:
            continue
        for j in range(row_width(nxt, u)):
            t = nxt[u, j]
            if not active[t]:
                continue
            p = pnum[u, j] * inv_denom
            d = shift[u, j]
            cnt[t] += 1
            for a in range(m):
                q = p * v[u, a]
                res[t, (a + d) % m] += q
                err[t] += abs(q)
    for s in range(n):
        if active[s]:
            g = 2.0 * (cnt[s] + 6.0) * 1.1102230246251565e-16
            g = g / (1.0 - g)
            err[s] = err[s] * g + m * (cnt[s] + 6.0) * 9.332636185032189e-302
