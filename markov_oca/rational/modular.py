"""Word-prime arithmetic for Dixon lifting: a sparse LU modulo ``p``, its triangular solves, the lifting steps.

Products of two residues are below ``2**52``, so sums of up to ``2**11`` of them
fit in int64: the kernels reduce once per row (or per 2,000 updates), not per
product.
"""

from __future__ import annotations

import flint
import numba
import numpy as np

from .coupling import coupled_term

PRIME_BITS = 26
CHUNK = 2000  # products of two residues summed before a reduction (2**11 * 2**52 < 2**63)


def primes_below(bound: int, count: int) -> list[int]:
    """The ``count`` largest primes below ``bound``."""
    out = []
    q = bound - 1
    while len(out) < count:
        if flint.fmpz(q).is_prime():
            out.append(q)
        q -= 1
    return out


PRIMES = primes_below(1 << PRIME_BITS, 4)






@numba.njit(cache=True)
def _inv_mod(a, p):
    # extended Euclid; a in [1, p)
    t, new_t, r, new_r = 0, 1, p, a
    while new_r != 0:
        q = r // new_r
        t, new_t = new_t, t - q * new_t
        r, new_r = new_r, r - q * new_r
    if t < 0:
        t += p
    return t


@numba.njit(cache=True)
def _lu_mod(n, a_ptr, a_idx, a_val, l_ptr, l_idx, u_ptr, u_idx, p):
    """Left-looking LU of a CSC matrix modulo ``p`` over a known pattern (unit ``L``).

    ``L`` columns start with their diagonal, ``U`` columns end with theirs (rows
    ascending). Returns (L values, U values, 0) or (.., .., k + 1) for a zero pivot in column k.
    """
    l_val = np.zeros(l_idx.size, np.int64)
    u_val = np.zeros(u_idx.size, np.int64)
    w = np.zeros(n, np.int64)
    for k in range(n):
        for e in range(a_ptr[k], a_ptr[k + 1]):
            w[a_idx[e]] = a_val[e] % p
        cnt = 0
        for e in range(u_ptr[k], u_ptr[k + 1] - 1):
            j = u_idx[e]
            xj = w[j] % p
            u_val[e] = xj
            w[j] = 0
            if xj == 0:
                continue
            for f in range(l_ptr[j] + 1, l_ptr[j + 1]):
                w[l_idx[f]] -= l_val[f] * xj
            cnt += 1
            if cnt == CHUNK:
                cnt = 0
                for g in range(e + 1, u_ptr[k + 1]):
                    w[u_idx[g]] %= p
                for g in range(l_ptr[k] + 1, l_ptr[k + 1]):
                    w[l_idx[g]] %= p
        d = u_ptr[k + 1] - 1
        ukk = w[k] % p
        w[k] = 0
        u_val[d] = ukk
        if ukk == 0:
            return l_val, u_val, k + 1
        inv = _inv_mod(ukk, p)
        l_val[l_ptr[k]] = 1
        for f in range(l_ptr[k] + 1, l_ptr[k + 1]):
            i = l_idx[f]
            l_val[f] = (w[i] % p) * inv % p
            w[i] = 0
    return l_val, u_val, 0


@numba.njit(cache=True)
def _row_dot1(ptr, idx, val, i, x, p):
    """``sum_e val[e] * x[idx[e]]`` over row ``i``, reduced modulo ``p`` every CHUNK products."""
    s = 0
    lo, hi = ptr[i], ptr[i + 1]
    for start in range(lo, hi, CHUNK):
        stop = min(start + CHUNK, hi)
        for e in range(start, stop):
            s += np.int64(val[e]) * x[idx[e]]
        s %= p
    return s


@numba.njit(cache=True, inline="always")
def _sub_row2(ptr, idx, val, i, rhs, a0, a1, p):
    """``a - sum_e val[e] rhs[idx[e]]`` over row ``i`` for two columns, reduced every CHUNK products."""
    lo, hi = ptr[i], ptr[i + 1]
    for start in range(lo, hi, CHUNK):
        for e in range(start, min(start + CHUNK, hi)):
            j = idx[e]
            v = np.int64(val[e])
            a0 -= v * rhs[j, 0]
            a1 -= v * rhs[j, 1]
        a0 %= p
        a1 %= p
    return a0, a1


@numba.njit(cache=True, inline="always")
def _sub_row(ptr, idx, val, i, rhs, acc, p):
    """``acc = rhs[i] - sum_e val[e] rhs[idx[e]]`` over row ``i``, reduced every CHUNK products."""
    m = acc.size
    for c in range(m):
        acc[c] = rhs[i, c]
    lo, hi = ptr[i], ptr[i + 1]
    for start in range(lo, hi, CHUNK):
        for e in range(start, min(start + CHUNK, hi)):
            j = idx[e]
            v = np.int64(val[e])
            for c in range(m):
                acc[c] -= v * rhs[j, c]
        for c in range(m):
            acc[c] %= p


@numba.njit(cache=True)
def _solve_mod2(n, lr_ptr, lr_idx, lr_val, ur_ptr, ur_idx, ur_val, u_inv, rhs, p):
    """:func:`_solve_mod` for two columns, in two registers."""
    for i in range(n):
        a0, a1 = _sub_row2(lr_ptr, lr_idx, lr_val, i, rhs, rhs[i, 0], rhs[i, 1], p)
        rhs[i, 0] = a0 % p
        rhs[i, 1] = a1 % p
    for i in range(n - 1, -1, -1):
        a0, a1 = _sub_row2(ur_ptr, ur_idx, ur_val, i, rhs, rhs[i, 0], rhs[i, 1], p)
        inv = u_inv[i]
        rhs[i, 0] = (a0 % p) * inv % p
        rhs[i, 1] = (a1 % p) * inv % p


@numba.njit(cache=True)
def _solve_mod(n, lr_ptr, lr_idx, lr_val, ur_ptr, ur_idx, ur_val, u_inv, rhs, p):
    """Solve ``L U x = rhs (mod p)`` in place; ``rhs`` (n, m) holds residues in [0, p).

    ``L`` strictly lower and ``U`` strictly upper by rows (CSR, int32 indices and
    values), ``u_inv`` the inverses of ``U``'s diagonal.
    """
    m = rhs.shape[1]
    if m == 1:
        x = rhs[:, 0].copy()
        for i in range(n):
            x[i] = (x[i] - _row_dot1(lr_ptr, lr_idx, lr_val, i, x, p)) % p
        for i in range(n - 1, -1, -1):
            x[i] = (x[i] - _row_dot1(ur_ptr, ur_idx, ur_val, i, x, p)) % p * u_inv[i] % p
        rhs[:, 0] = x
        return
    if m == 2:
        _solve_mod2(n, lr_ptr, lr_idx, lr_val, ur_ptr, ur_idx, ur_val, u_inv, rhs, p)
        return
    acc = np.empty(m, np.int64)
    for i in range(n):
        _sub_row(lr_ptr, lr_idx, lr_val, i, rhs, acc, p)
        for c in range(m):
            rhs[i, c] = acc[c] % p
    for i in range(n - 1, -1, -1):
        _sub_row(ur_ptr, ur_idx, ur_val, i, rhs, acc, p)
        inv = u_inv[i]
        for c in range(m):
            rhs[i, c] = (acc[c] % p) * inv % p


@numba.njit(cache=True)
def _lift(steps, n, lr_ptr, lr_idx, lr_val, ur_ptr, ur_idx, ur_val, u_inv,
          a_ptr, a_idx, a_val, r, feed, feed_from, c_ptr, c_idx, c_val, src, src_of,
          wanted, out, rho, chk, p):
    """``steps`` lifting steps on the residual ``r`` (n, m), in place.

    The last ``c_ptr.shape[0]`` columns are coupled: column ``m - nc + q`` gains
    ``C_q @ (sum of the columns src[src_of[q, 0]:src_of[q, 1]])`` (plain columns,
    solved first in each step). Step ``s`` first adds ``feed[s] * feed_from`` to
    the residual (a streamed right-hand side). The digits of the rows ``wanted``
    go to ``out[s]``, and ``sum_i rho[i] x[i]`` (a random combination of every row) to
    ``chk[s]`` when ``rho`` is not empty. Returns the number of nonzero residual entries at the end.
    """
    m = r.shape[1]
    nc = c_ptr.shape[0]
    mp = m - nc
    x = np.empty((n, m), np.int64)
    xp = np.empty((n, mp), np.int64)
    xc = np.empty((n, nc), np.int64)
    acc = np.empty(m, np.int64)
    for s in range(steps):
        f = feed[s]
        if f != 0:
            for i in range(n):
                for c in range(m):
                    r[i, c] += f * feed_from[i, c]
        for i in range(n):
            for c in range(mp):
                xp[i, c] = r[i, c] % p
        _solve_mod(n, lr_ptr, lr_idx, lr_val, ur_ptr, ur_idx, ur_val, u_inv, xp, p)
        for i in range(n):
            for c in range(mp):
                x[i, c] = xp[i, c]
        if nc:
            for i in range(n):
                for q in range(nc):
                    xc[i, q] = (r[i, mp + q] + coupled_term(q, i, c_ptr, c_idx, c_val, src, src_of, x)) % p
            _solve_mod(n, lr_ptr, lr_idx, lr_val, ur_ptr, ur_idx, ur_val, u_inv, xc, p)
            for i in range(n):
                for q in range(nc):
                    x[i, mp + q] = xc[i, q]
        for w in range(wanted.size):
            for c in range(m):
                out[s, w, c] = x[wanted[w], c]
        if rho.size:
            for c in range(m):
                t = 0
                for i in range(n):
                    t += rho[i] * x[i, c]
                chk[s, c] = t
        # r = (r + C x_src - A x) / p, an exact division
        for i in range(n):
            for c in range(m):
                acc[c] = r[i, c]
            for e in range(a_ptr[i], a_ptr[i + 1]):
                j = a_idx[e]
                v = a_val[e]
                for c in range(m):
                    acc[c] -= v * x[j, c]
            for q in range(nc):
                acc[mp + q] += coupled_term(q, i, c_ptr, c_idx, c_val, src, src_of, x)
            for c in range(m):
                r[i, c] = acc[c] // p
    nz = 0
    for i in range(n):
        for c in range(m):
            if r[i, c] != 0:
                nz += 1
    return nz


@numba.njit(cache=True)
def _matvec_mod_kernel(ptr, idx, val, v, p, out):
    n = ptr.size - 1
    for k in range(n):
        vk = v[k]
        for e in range(ptr[k], ptr[k + 1]):
            out[idx[e]] = (out[idx[e]] + (val[e] % p) * vk) % p


def _matvec_mod(ptr, idx, val, v, p):
    """``M v (mod p)`` for a CSC matrix ``M`` with int64 entries."""
    out = np.zeros(ptr.size - 1, np.int64)
    _matvec_mod_kernel(ptr.astype(np.int64), idx.astype(np.int64), np.asarray(val, np.int64),
                       np.asarray(v, np.int64), p, out)
    return out
