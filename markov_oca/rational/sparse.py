"""Sparse exact solves of ``A x = B`` for integer ``A = D (I - Q)``: Dixon p-adic lifting.

A chain's probabilities are integers over one denominator ``D``, so ``A = D (I - Q)``
and the right-hand sides are small integers. We factor ``A`` once modulo a prime
``p < 2**26`` (a sparse LU over the structure SciPy's SuperLU finds for the float
matrix in a fill-reducing order, with the diagonal as pivot: ``A`` is an M-matrix),
then lift: with ``r_0 = B``, each step solves ``A x_i = r_i (mod p)`` by the two
triangular solves and sets ``r_{i+1} = (r_i - A x_i) / p`` (an exact division, and
``|r_i|`` stays below ``||A|| + ||B||``: everything is int64). After ``k`` steps
``X = sum x_i p**i`` solves ``A X = B (mod p**k)``. Only the entries asked for (the
initial state's) are accumulated as big integers and rationally reconstructed.

Products of two residues are below ``2**52``, so sums of up to ``2**11`` of them
fit in int64: the kernels reduce once per row (or per 2,000 updates), not per
product.

**Termination and certificate.** The lifting stops once the reconstruction of every
wanted entry is the same at two checkpoints; that gives a candidate common
denominator ``d`` (the lcm of the wanted entries' denominators). A second lifting
then solves ``A z = d B`` with ``d B`` fed in digit by digit (``d``'s base-``p``
digits, each times ``B``, join the residual at their step). When ``x >= 0`` (every
system here: ``(I - Q)**-1 >= 0`` and the right-hand sides are nonnegative) and
``d x`` is an integer vector, ``z = d x`` is reached exactly and the residual
becomes exactly zero once ``d`` is fed; conversely a zero residual after the last
digit means ``A Z = d B`` holds over the integers, so ``Z / d`` *is* the solution,
all of it, not only the entries reconstructed. That is the certificate; when it
fails (``d`` was not a common denominator) the first lifting resumes.

Columns may be *coupled*: ``A x_c = B_c + C x_s`` where ``x_s`` is the sum of other
columns (the chance of ending, for expectations conditioned on it). Coupled columns
lift in the same steps, the source digits feeding the coupled residual: the block
lower-triangular system solved by one factorisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..core.errors import SolverError

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
SMOOTH = 2 * 3 * 5 * 7 * 11 * 13  # the small primes a random combination may lose


# ----------------------------------------------------------------------------- kernels


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
def _coupled_term(q, i, c_ptr, c_idx, c_val, src, src_of, x):
    """Row ``i`` of ``C_q @ (sum of the source columns of x)``."""
    t = 0
    for e in range(c_ptr[q, i], c_ptr[q, i + 1]):
        j = c_idx[e]
        sx = 0
        for k in range(src_of[q, 0], src_of[q, 1]):
            sx += x[j, src[k]]
        t += c_val[e] * sx
    return t


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
                    xc[i, q] = (r[i, mp + q] + _coupled_term(q, i, c_ptr, c_idx, c_val, src, src_of, x)) % p
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
                acc[mp + q] += _coupled_term(q, i, c_ptr, c_idx, c_val, src, src_of, x)
            for c in range(m):
                r[i, c] = acc[c] // p
    nz = 0
    for i in range(n):
        for c in range(m):
            if r[i, c] != 0:
                nz += 1
    return nz


# ----------------------------------------------------------------------------- reconstruction


def rational_reconstruct(a: int, m: int) -> tuple[int, int] | None:
    """``(n, d)`` with ``n = a d (mod m)``, ``|n|, d <= sqrt(m/2)``, ``gcd(n, d) = 1``, or None.

    The pair is the shortest vector of the lattice spanned by ``(m, 0)`` and
    ``(a, 1)``, which FLINT's LLL finds several times faster than the extended
    Euclidean algorithm in Python on numbers of tens of thousands of digits; the
    conditions are checked on the result.
    """
    a %= m
    if a == 0:
        return 0, 1
    red = flint.fmpz_mat([[m, 0], [a, 1]]).lll()
    bound = math.isqrt(m // 2)
    for row in range(2):
        n, d = int(red[row, 0]), int(red[row, 1])
        if d < 0:
            n, d = -n, -d
        if 0 < d <= bound and abs(n) <= bound and (n - a * d) % m == 0 and math.gcd(n, d) == 1:
            return n, d
    return None


# ----------------------------------------------------------------------------- the solver


@dataclass
class Coupling:
    """A coupled column's right-hand side gains ``C @ (sum of the columns sources)``.

    ``C`` is an integer (n x n) matrix in the caller's numbering; the sources are
    plain (uncoupled) columns. The coupled columns are the last ones of ``B``, in
    the order of the couplings.
    """

    C: sp.csr_array
    sources: list[int]


@dataclass
class LiftReport:
    steps: int = 0
    certify_steps: int = 0
    prime: int = 0
    fill: int = 0
    ordering: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, dt: float) -> None:
        self.seconds[key] = self.seconds.get(key, 0.0) + dt


class DixonSolver:
    """One factorisation of an integer matrix ``A`` (n x n) modulo a word prime, for many solves.

    ``A`` must be nonsingular with a nonzero diagonal that can serve as pivots
    (true of ``D (I - Q)`` on the transient states of a chain). With ``like``,
    the ordering and pattern of another solver are reused: ``A``'s pattern must
    lie inside that one's (as ``Q`` with some branches stopped does).

    Example
    -------
    >>> A = sp.csr_array(np.array([[2, -1], [-1, 2]]))
    >>> DixonSolver(A).solve(np.array([[1], [0]]), np.array([0, 1]))
    [[Fraction(2, 3), Fraction(1, 3)]]
    """

    def __init__(self, A: sp.csr_array, orderings: tuple[str, ...] = ("COLAMD", "MMD_AT_PLUS_A"),
                 like: DixonSolver | None = None, prefer: np.ndarray | None = None):
        import time

        self.report = LiftReport()
        t0 = time.perf_counter()
        A = sp.csr_array(A, dtype=np.int64)
        A.sum_duplicates()
        A.sort_indices()
        n = A.shape[0]
        self.n = n
        if like is not None:
            perm, pattern = like.perm, like._pattern
            self.report.ordering, self.report.fill = like.report.ordering, like.report.fill
        else:
            perm, pattern, self.report.ordering, self.report.fill = self._ordering(A, orderings, prefer)
        self.perm = perm  # original row -> position
        self.order = np.argsort(perm)  # position -> original row
        self._pattern = pattern
        Ap = A[self.order][:, self.order]
        self.A = sp.csr_array(Ap)
        self.A.sort_indices()
        a_csc = sp.csc_array(Ap)
        a_csc.sort_indices()
        l_ptr, l_idx, u_ptr, u_idx = pattern
        self.report.add("ordering", time.perf_counter() - t0)
        t0 = time.perf_counter()
        for p in PRIMES:
            l_val, u_val, bad = _lu_mod(n, a_csc.indptr.astype(np.int64), a_csc.indices.astype(np.int64),
                                        a_csc.data.astype(np.int64), l_ptr, l_idx, u_ptr, u_idx, p)
            if not bad:
                break
        else:
            raise SolverError("the exact sparse LU met a zero pivot modulo every prime tried")
        self.p = p
        self.report.prime = p
        Lm = sp.csc_array((l_val, l_idx, l_ptr), shape=(n, n))
        Um = sp.csc_array((u_val, u_idx, u_ptr), shape=(n, n))
        diag = Um.diagonal().astype(np.int64)
        self.u_inv = np.array([pow(int(d), -1, p) for d in diag], np.int64)
        lr = sp.csr_array(sp.tril(Lm, k=-1))
        ur = sp.csr_array(sp.triu(Um, k=1))
        lr.sort_indices()
        ur.sort_indices()
        self._lr = (lr.indptr.astype(np.int64), lr.indices.astype(np.int32), lr.data.astype(np.int32))
        self._ur = (ur.indptr.astype(np.int64), ur.indices.astype(np.int32), ur.data.astype(np.int32))
        self._a = (self.A.indptr.astype(np.int64), self.A.indices.astype(np.int64), self.A.data.astype(np.int64))
        self._check(Lm, Um, a_csc)
        self.report.add("lu", time.perf_counter() - t0)

    @staticmethod
    def _ordering(A: sp.csr_array, orderings: tuple[str, ...], prefer: np.ndarray | None = None):
        """A fill-reducing order with diagonal pivots, and the structure of its L and U.

        First an independent set ``I`` of the graph of ``A`` (no two of its states
        linked; ``prefer`` ranks the candidates, lower first, then fewer links): those
        states are eliminated first without any fill, as in a race where a seat's
        throw always hands the move on. SuperLU then orders and factors the Schur
        complement ``S`` on the rest (the best of ``orderings``, diagonal pivots), and
        the structure of the whole LU follows from ``S``'s.
        """
        n = A.shape[0]
        G = sp.csr_array(abs(A) + abs(A.T))
        G.setdiag(0)
        G.eliminate_zeros()
        deg = np.diff(G.indptr)
        keys = (deg,) if prefer is None else (deg, np.asarray(prefer))
        chosen = _independent_set(G.indptr.astype(np.int64), G.indices.astype(np.int64),
                                  np.lexsort(keys).astype(np.int64))
        af = sp.csc_array(A, dtype=np.float64)
        best = None
        # with the independent set eliminated first, and without (MMD on the whole matrix wins on some boards)
        for ind in (np.flatnonzero(chosen), np.zeros(0, np.int64)):
            rest = np.setdiff1d(np.arange(n), ind)
            if ind.size:
                d_inv = 1.0 / af.diagonal()[ind]
                S = sp.csc_array(af[rest][:, rest] - af[rest][:, ind] @ sp.diags_array(d_inv) @ af[ind][:, rest])
            else:
                S = af
            # COLAMD on the whole matrix never beat the set's orderings on the boards measured: skipped
            for spec in (orderings if ind.size else [o for o in orderings if o != "COLAMD"]):
                lu = spla.splu(S, permc_spec=spec, diag_pivot_thresh=0.0, options={"SymmetricMode": True})
                if not np.array_equal(lu.perm_r, lu.perm_c):
                    continue  # a pivot off the diagonal: not the pattern we factor
                size = lu.L.nnz + lu.U.nnz
                if best is None or size < best[0]:
                    best = (size, spec if ind.size else spec + " (no set)", lu.perm_c.copy(), lu.L.tocsc(),
                            lu.U.tocsc(), ind, rest)
                del lu
        if best is None:
            raise SolverError("no diagonal-pivot ordering found for the exact sparse LU")
        _, spec, perm_s, Ls, Us, ind, rest = best
        order = np.concatenate([ind, rest[np.argsort(perm_s)]])
        perm = np.empty(n, np.int64)
        perm[order] = np.arange(n)
        # L = [[1, 0], [A_RI / d, L_S]], U = [[d, A_IR], [0, U_S]] in the order (I, R)
        ni = ind.size
        pa = sp.csc_array(af[order][:, order])
        pat = sp.csc_array((np.ones(pa.nnz), pa.indices, pa.indptr), shape=(n, n))
        if ni:
            eye_i = sp.identity(ni, format="csc")
            L = sp.csc_array(sp.bmat([[eye_i, None], [pat[ni:, :ni], Ls]], format="csc"))
            U = sp.csc_array(sp.bmat([[eye_i, pat[:ni, ni:]], [None, Us]], format="csc"))
        else:
            L, U = sp.csc_array(Ls), sp.csc_array(Us)
        L.sort_indices()
        U.sort_indices()
        pattern = (L.indptr.astype(np.int64), L.indices.astype(np.int64),
                   U.indptr.astype(np.int64), U.indices.astype(np.int64))
        return perm, pattern, spec, int(L.nnz + U.nnz)

    def _check(self, Lm, Um, a_csc) -> None:
        """``L U = A (mod p)`` on a random vector: the pattern SuperLU gave held every entry."""
        p = self.p
        v = np.random.default_rng(12345).integers(0, p, self.n)
        uv = _matvec_mod(Um.indptr, Um.indices, Um.data, v, p)
        luv = _matvec_mod(Lm.indptr, Lm.indices, Lm.data, uv, p)
        av = _matvec_mod(a_csc.indptr, a_csc.indices, a_csc.data, v, p)
        if not np.array_equal(luv, av):
            raise SolverError("the exact sparse LU does not reproduce the matrix modulo p (pattern too small)")

    # ------------------------------------------------------------------ lifting

    def _run(self, r, steps, feed, feed_from, couple, wanted, out, rho=None, chk=None):
        lr, ur, a = self._lr, self._ur, self._a
        if rho is None:
            rho, chk = np.zeros(0, np.int64), np.zeros((steps, 0), np.int64)
        return _lift(steps, self.n, *lr, *ur, self.u_inv, *a, r, feed, feed_from, *couple, wanted, out,
                     rho, chk, self.p)

    def _coupling_arrays(self, couplings: list[Coupling]):
        n = self.n
        if not couplings:
            z = np.zeros((0, n + 1), np.int64)
            return (z, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                    np.zeros((0, 2), np.int64))
        ptrs, idxs, vals, srcs, src_of = [], [], [], [], []
        base = 0
        for cp in couplings:
            C = sp.csr_array(sp.csr_array(cp.C, dtype=np.int64)[self.order][:, self.order])
            C.sort_indices()
            if C.nnz and C.data.min() < 0:
                raise ValueError("coupling matrices must be nonnegative")
            ptrs.append(C.indptr.astype(np.int64) + base)
            idxs.append(C.indices.astype(np.int64))
            vals.append(C.data.astype(np.int64))
            base += C.nnz
            src_of.append((len(srcs), len(srcs) + len(cp.sources)))
            srcs.extend(cp.sources)
        return (np.vstack(ptrs), np.concatenate(idxs), np.concatenate(vals), np.array(srcs, np.int64),
                np.array(src_of, np.int64))

    def solve_integer(self, B: np.ndarray, wanted: np.ndarray) -> tuple[int, np.ndarray, list[list[Fraction]]]:
        """The whole certified solution as ``x = z / d``: ``d``, the base-``p`` digits of ``z``, and ``x[wanted]``.

        ``digits[k, i, c]`` is digit ``k`` (least significant first) of ``z[i, c]``
        in the caller's row order: the exact integers, for comparisons that must
        not round (:mod:`markov_oca.ur.certify`).
        """
        self._keep = True
        self._wanted_for_keep = [int(i) for i in np.asarray(wanted)]
        try:
            fractions = self.solve(B, wanted)
        finally:
            self._keep = False
            self._wanted_for_keep = None
        d, digits = self._kept
        return d, digits, fractions

    def solve(self, B: np.ndarray, wanted: np.ndarray | None, couplings: list[Coupling] | None = None,
              ) -> list[list[Fraction]]:
        """The exact solution of ``A X = B`` (+ couplings) at the rows ``wanted`` (None: all rows).

        ``B`` is (n, m), integer and nonnegative, and so must the solution be (the
        certificate relies on it; ``D (I - Q)`` has a nonnegative inverse). Returns
        ``out[c][w]`` as Fractions. Every entry of the solution is certified, not
        only those returned (see the module docstring).
        """
        import time

        couplings = couplings or []
        p = self.p
        B = np.asarray(B, np.int64)
        if B.ndim != 2 or B.shape[0] != self.n:
            raise ValueError(f"B must be ({self.n}, m), got {B.shape}")
        if (B < 0).any():
            raise ValueError("B must be nonnegative (split a signed right-hand side in two)")
        m = B.shape[1]
        wanted = np.arange(self.n) if wanted is None else np.asarray(wanted, np.int64)
        if m == 0:
            return []
        Bp = np.ascontiguousarray(B[self.order])
        # The wanted rows, and a random combination of all rows: its denominator is (almost surely) the
        # common denominator of the whole solution, which the start's value may lack (a factor of another
        # state's value can cancel out of it: oca-moderna).
        rng = np.random.default_rng(self.n)
        wpos = np.ascontiguousarray(self.perm[wanted])
        couple = self._coupling_arrays(couplings)
        r = Bp.copy()
        nw = wanted.size
        acc = [[0] * (nw + 1) for _ in range(m)]  # X at the wanted rows and the combination, as big integers
        rho = rng.integers(1, 1 << 10, self.n).astype(np.int64)
        pk = 1  # p ** steps so far
        steps = 0
        prev = None
        failed = 0
        block = 32
        t0 = time.perf_counter()
        while True:
            out = np.zeros((block, nw, m), np.int64)
            chk = np.zeros((block, m), np.int64)
            self._run(r, block, np.zeros(block, np.int64), Bp, couple, wpos, out, rho, chk)
            # X += sum_s out[s] p^(steps + s): fold the block into one integer per entry first
            for c in range(m):
                col = acc[c]
                for w in range(nw + 1):
                    digits = out[:, w, c] if w < nw else chk[:, c]
                    if digits.any():
                        v = 0
                        for dgt in digits[::-1].tolist():
                            v = v * p + dgt
                        col[w] += v * pk
            pk *= p ** block
            steps += block
            cand = self._reconstruct(acc, pk)
            if cand is not None and cand == prev:
                d = 1
                for col in cand:
                    for _num, den in col:
                        d = math.lcm(d, den)
                self.report.add("lift", time.perf_counter() - t0)
                t1 = time.perf_counter()
                # Small primes cancel out of a combination with fair chance (a random sum is even half
                # the time): certify with d times a power of the small primes, more after a failure.
                z = self._certify(Bp, d * SMOOTH ** (8 ** failed), couple, m, wpos)
                self.report.add("certify", time.perf_counter() - t1)
                t0 = time.perf_counter()
                if z is not None:
                    self.report.steps += steps
                    out = [[Fraction(num, den) for num, den in col[:nw]] for col in cand]
                    if out != z:
                        raise SolverError("the certified solution differs from the reconstructed fractions")
                    return z
                failed += 1
                if failed >= 3 and nw < self.n:
                    # still no common denominator: reconstruct every row (slow, and not met so far)
                    full = self.solve(B, None, couplings)
                    return [[col[i] for i in wanted.tolist()] for col in full]
                cand = None  # lift further: the combination's fraction was not the true one yet
            prev = cand
            block = max(16, steps // 8)

    def _reconstruct(self, acc, pk):
        cols = []
        for col in acc:
            out = []
            for a in col:
                q = rational_reconstruct(a, pk)
                if q is None:
                    return None
                out.append(q)
            cols.append(tuple(out))
        return tuple(cols)

    def _certify(self, Bp, d, couple, m, wpos=None):
        """Lift ``A z = d B`` with ``d`` fed digit by digit; when the residual ends exactly zero, ``z / d``
        is the whole solution: return it at the rows ``wpos`` (positions), else None."""
        p = self.p
        digits = []
        q = d
        while q:
            q, rem = divmod(q, p)
            digits.append(rem)
        r = np.zeros_like(Bp)
        keep = getattr(self, "_keep", False)
        if keep:
            wpos = self.perm.astype(np.int64)
        elif wpos is None:
            wpos = np.zeros(0, np.int64)
        steps = len(digits) + 2  # z = d x < p**steps when x < p**2
        feed = np.array([*digits, 0, 0], np.int64)
        outs = [np.zeros((steps, wpos.size, m), np.int64)]
        nz = self._run(r, steps, feed, Bp, couple, wpos, outs[0])
        extra = 0
        while nz and extra < 4:  # a larger x: a few more digits
            outs.append(np.zeros((1, wpos.size, m), np.int64))
            nz = self._run(r, 1, np.zeros(1, np.int64), Bp, couple, wpos, outs[-1])
            extra += 1
        self.report.certify_steps += steps + extra
        if nz:
            return None
        z = np.concatenate(outs)
        if keep:
            self._kept = (d, z)
            return None if getattr(self, "_wanted_for_keep", None) is None else \
                [[Fraction(_from_digits(z[:, i, c], p), d) for i in self._wanted_for_keep] for c in range(m)]
        return [[Fraction(_from_digits(z[:, w, c], p), d) for w in range(wpos.size)] for c in range(m)]


def _from_digits(digits: np.ndarray, p: int) -> int:
    v = 0
    for dgt in digits[::-1].tolist():
        v = v * p + dgt
    return v


@numba.njit(cache=True)
def _independent_set(ptr, idx, candidates):
    """Greedy maximal independent set, taking the candidates in the order given."""
    n = ptr.size - 1
    chosen = np.zeros(n, np.bool_)
    blocked = np.zeros(n, np.bool_)
    for i in candidates:
        if not blocked[i]:
            chosen[i] = True
            for e in range(ptr[i], ptr[i + 1]):
                blocked[idx[e]] = True
    return chosen


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


# ----------------------------------------------------------------------------- numeric refinement


class RefinementFailed(SolverError):
    """The floating-point solve was not accurate enough to gain bits (the caller falls back to lifting)."""


@numba.njit(cache=True)
def _chol_count(ptr, idx, inv):
    """Twice the nonzeros of the Cholesky factor of a symmetric pattern (CSR) renumbered by ``inv``, less ``n``.

    Row by row, the row subtree of the elimination tree (built on the way, Liu's
    algorithm), in ``O(nnz(L))``: the fill of an LU with diagonal pivots of any matrix
    of that pattern is at most this.
    """
    n = ptr.size - 1
    order = np.empty(n, np.int64)
    for v in range(n):
        order[inv[v]] = v
    parent = np.full(n, -1, np.int64)
    mark = np.full(n, -1, np.int64)
    total = 0
    for k in range(n):
        v = order[k]
        mark[k] = k
        total += 1
        for e in range(ptr[v], ptr[v + 1]):
            j = inv[idx[e]]
            if j >= k:
                continue
            while mark[j] != k:
                mark[j] = k
                total += 1
                if parent[j] == -1:
                    parent[j] = k
                    break
                j = parent[j]
    return 2 * total - n


@numba.njit(cache=True)
def _bitlen(v):
    k = 0
    while v:
        v >>= 1
        k += 1
    return k


@numba.njit(cache=True, fastmath=True)
def _tri1(n, lp, li, lv, up, ui, uv, uinv, y, a):
    for i in range(n):
        s0 = y[i, a]
        for e in range(lp[i], lp[i + 1]):
            s0 -= lv[e] * y[li[e], a]
        y[i, a] = s0
    for i in range(n - 1, -1, -1):
        s0 = y[i, a]
        for e in range(up[i], up[i + 1]):
            s0 -= uv[e] * y[ui[e], a]
        y[i, a] = s0 * uinv[i]


@numba.njit(cache=True, fastmath=True)
def _tri2(n, lp, li, lv, up, ui, uv, uinv, y, a):
    for i in range(n):
        s0, s1 = y[i, a], y[i, a + 1]
        for e in range(lp[i], lp[i + 1]):
            j, v = li[e], lv[e]
            s0 -= v * y[j, a]
            s1 -= v * y[j, a + 1]
        y[i, a], y[i, a + 1] = s0, s1
    for i in range(n - 1, -1, -1):
        s0, s1 = y[i, a], y[i, a + 1]
        for e in range(up[i], up[i + 1]):
            j, v = ui[e], uv[e]
            s0 -= v * y[j, a]
            s1 -= v * y[j, a + 1]
        y[i, a], y[i, a + 1] = s0 * uinv[i], s1 * uinv[i]


@numba.njit(cache=True, fastmath=True)
def _tri4(n, lp, li, lv, up, ui, uv, uinv, y, a):
    for i in range(n):
        s0, s1, s2, s3 = y[i, a], y[i, a + 1], y[i, a + 2], y[i, a + 3]
        for e in range(lp[i], lp[i + 1]):
            j, v = li[e], lv[e]
            s0 -= v * y[j, a]
            s1 -= v * y[j, a + 1]
            s2 -= v * y[j, a + 2]
            s3 -= v * y[j, a + 3]
        y[i, a], y[i, a + 1], y[i, a + 2], y[i, a + 3] = s0, s1, s2, s3
    for i in range(n - 1, -1, -1):
        s0, s1, s2, s3 = y[i, a], y[i, a + 1], y[i, a + 2], y[i, a + 3]
        for e in range(up[i], up[i + 1]):
            j, v = ui[e], uv[e]
            s0 -= v * y[j, a]
            s1 -= v * y[j, a + 1]
            s2 -= v * y[j, a + 2]
            s3 -= v * y[j, a + 3]
        w = uinv[i]
        y[i, a], y[i, a + 1], y[i, a + 2], y[i, a + 3] = s0 * w, s1 * w, s2 * w, s3 * w


@numba.njit(cache=True)
def _ftri(n, lp, li, lv, up, ui, uv, uinv, y, c0, c1):
    """``y[:, c0:c1] = U^-1 L^-1 y[:, c0:c1]`` in float64 (``L`` unit lower and ``U`` strictly upper by rows),
    four columns a pass (the pass is bound by the latency of the gathers, not by the arithmetic)."""
    a = c0
    while c1 - a >= 4:
        _tri4(n, lp, li, lv, up, ui, uv, uinv, y, a)
        a += 4
    if c1 - a >= 2:
        _tri2(n, lp, li, lv, up, ui, uv, uinv, y, a)
        a += 2
    if c1 - a == 1:
        _tri1(n, lp, li, lv, up, ui, uv, uinv, y, a)


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
                    f = np.float64(r[i, mp + q])
                    for e in range(cp[q, i], cp[q, i + 1]):
                        j = ci[e]
                        sy = 0.0
                        for k in range(src_of[q, 0], src_of[q, 1]):
                            sy += y[j, src[k]]
                        f += cv[e] * sy
                    y[i, mp + q] = f
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


def _int_from_digits(digits: np.ndarray, shifts: list[int]) -> tuple[list[int], int]:
    """Each column's ``sum_t digits[t] 2**(shifts[t+1] + ... + shifts[-1])`` as a Python int, and that top shift.

    ``digits`` is (K, size) int64 (signed, ``|.| < 2**62``); every shift is a multiple
    of 8. The digits are normalised to ``[0, 2**shift)`` by a carry pass from the
    least significant (whole-vector numpy), packed little-endian into one byte row
    per entry and read by ``int.from_bytes``; the signed top digit is added last.
    """
    K = digits.shape[0]
    total = int(sum(shifts[1:K]))
    size = digits.shape[1]
    carry = np.zeros(size, np.int64)
    parts = []
    for t in range(K - 1, 0, -1):  # least significant first; digit 0 is the top, kept whole
        s = shifts[t]
        v = digits[t] + carry
        low = v & ((1 << s) - 1)
        carry = v >> s
        parts.append(low.astype("<u8").view(np.uint8).reshape(size, 8)[:, : s // 8])
    top = (digits[0] + carry).tolist()
    if parts:
        packed = np.ascontiguousarray(np.concatenate(parts, axis=1))
        rows = [int.from_bytes(packed[i].tobytes(), "little") for i in range(size)]
    else:
        rows = [0] * size
    return [v + (t << total) for v, t in zip(rows, top, strict=True)], total


def approx_reconstruct(v: int, bits: int, gap: int = 24) -> tuple[int, int] | None:
    """The fraction ``(t, d)`` nearest ``v / 2**bits`` with a small denominator, or None.

    The shortest vector ``(d v - t 2**bits, d)`` of the lattice spanned by
    ``(2**bits, 0)`` and ``(v mod 2**bits, 1)`` (FLINT's 2x2 LLL), accepted only when
    it is shorter than ``2**(bits/2 - gap)``: a fraction whose denominator and error
    times ``2**bits`` times its denominator are that small is the only one of its size
    (a candidate; the caller proves it).
    """
    m = 1 << bits
    a = v % m
    whole = (v - a) >> bits
    if a == 0:
        return whole, 1
    red = flint.fmpz_mat([[m, 0], [a, 1]]).lll()
    limit = 1 << max(bits // 2 - gap, 1)
    for row in range(2):
        e, d = int(red[row, 0]), int(red[row, 1])
        if d < 0:
            e, d = -e, -d
        if 0 < d < limit and abs(e) < limit:
            t, rem = divmod(d * a - e, m)
            if rem == 0:
                num = t + d * whole
                g = math.gcd(num, d)
                return num // g, d // g
    return None


class RefineSolver:
    """Exact solves of ``A X = B`` by numeric iterative refinement on one floating-point LU, proved exactly.

    The numeric-symbolic method of Wan (2006) and Pan: SuperLU factors ``A`` in
    float64 (the fill-reducing order of :class:`DixonSolver`: an independent set
    first, diagonal pivots; ``A`` is an M-matrix, so the factorisation is stable).
    With ``r_0 = B``, each step solves ``A y = r_t`` in floating point (numba, over
    those factors), rounds ``x_t = round(2**s y)`` and sets
    ``r_{t+1} = 2**s r_t - A x_t`` in exact int64 arithmetic. Then
    ``A X = 2**S B - r`` holds exactly for ``X = sum_t x_t 2**(s_{t+1} + ...)``
    whatever the rounding errors were, and ``r`` stays small while the float solve
    is accurate to more than ``s`` bits (``s`` up to 48, checked every step, with
    int64 overflow excluded by bounds). So ``X / 2**S`` approximates the solution to
    ~48 more bits a step, against 26 for a p-adic step modulo a word prime.

    The wanted rows and two random combinations of all rows (per column) are
    reconstructed as fractions (:func:`approx_reconstruct`); with ``d`` the lcm of
    their denominators (times a power of the small primes, which a combination may
    lose), ``z = round(d X / 2**S)`` is formed for every row and ``A z = d B`` is
    checked **exactly, over the integers**: that proves ``z / d`` is the solution, all
    of it; no floating-point argument enters the answer. The rows of the independent
    set follow from the others by an exact division (checked), so only the other rows
    need a big multiplication. Coupled columns (:class:`Coupling`) form the block
    lower-triangular system of :class:`DixonSolver`. Signed right-hand sides are allowed.
    """

    BLOCK = 8  # steps per numba call between reconstruction checks

    def __init__(self, A: sp.csr_array, orderings: tuple[str, ...] = ("COLAMD", "MMD_AT_PLUS_A"),
                 like: RefineSolver | None = None, prefer: np.ndarray | None = None):
        import time

        t0 = time.perf_counter()
        self.report = LiftReport()
        A = sp.csr_array(A, dtype=np.int64)
        A.sum_duplicates()
        A.sort_indices()
        self.A_orig = A
        n = self.n = A.shape[0]
        self.prefer = prefer
        af = sp.csc_array(A, dtype=np.float64)
        if like is not None:
            candidates = [(like._ind, [like._spec])]
        else:
            G = sp.csr_array(abs(A) + abs(A.T))
            G.setdiag(0)
            G.eliminate_zeros()
            deg = np.diff(G.indptr)
            keys = (deg,) if prefer is None else (deg, np.asarray(prefer))
            chosen = _independent_set(G.indptr.astype(np.int64), G.indices.astype(np.int64),
                                      np.lexsort(keys).astype(np.int64))
            # the set and COLAMD on its Schur complement, or MMD on the whole matrix: the two winners
            # measured (docs/exact.md); MMD on the Schur complement never was
            candidates = [(np.flatnonzero(chosen), [o for o in orderings if o == "COLAMD"] or list(orderings)),
                          (np.zeros(0, np.int64), [o for o in orderings if o != "COLAMD"])]
        # Each candidate's column order from SuperLU's ILU with everything dropped (the LU's own order at a
        # fifth of the cost) and its fill predicted by the symbolic Cholesky factor of the pattern of S + S^T in
        # that order (about twice the LU's fill, and in the same rank on the boards measured, docs/exact.md);
        # only the predicted smallest is factored.
        preds = []
        for ind, specs in candidates:
            rest = np.setdiff1d(np.arange(n), ind)
            if ind.size:
                d_i = af.diagonal()[ind]
                S = sp.csc_array(af[rest][:, rest] - af[rest][:, ind] @ sp.diags_array(1.0 / d_i) @ af[ind][:, rest])
            else:
                S = af
            for spec in specs:
                if sum(len(sp_) for _, sp_ in candidates) > 1:
                    il = spla.spilu(S, permc_spec=spec, drop_tol=1.0, fill_factor=1.0, diag_pivot_thresh=0.0,
                                    options={"SymmetricMode": True})
                    inv = np.empty(S.shape[0], np.int64)
                    inv[np.argsort(il.perm_c)] = np.arange(S.shape[0])
                    G = sp.csr_array(abs(S) + abs(S.T))
                    preds.append((_chol_count(G.indptr.astype(np.int64), G.indices.astype(np.int64), inv),
                                  spec, ind, rest, S))
                    del il, G
                else:
                    preds.append((0, spec, ind, rest, S))
        preds.sort(key=lambda t: t[0])
        best = None
        for _pred, spec, ind, rest, S in preds:
            lu = spla.splu(S, permc_spec=spec, diag_pivot_thresh=0.0, options={"SymmetricMode": True})
            if np.array_equal(lu.perm_r, lu.perm_c):
                best = (lu.L.nnz + lu.U.nnz, spec, lu, ind, rest)
                self.predicted = [(int(p_), s_, i_.size) for p_, s_, i_, _, _ in preds]
                break
            del lu  # a pivot off the diagonal: the next candidate
        if best is None:
            raise SolverError("no diagonal-pivot ordering found for the sparse exact solve")
        _, spec, lu, ind, rest = best
        self._ind, self._spec = ind, spec
        order = np.concatenate([ind, rest[np.argsort(lu.perm_c)]])
        self.order = order
        self.perm = np.empty(n, np.int64)
        self.perm[order] = np.arange(n)
        ni = self.ni = ind.size
        Ap = sp.csr_array(A[order][:, order])
        Ap.sort_indices()
        self.A = Ap
        # the whole factorisation in this order: L = [[1, 0], [A_RI / d, L_S]], U = [[d, A_IR], [0, U_S]]
        Ls, Us = sp.csr_array(lu.L), sp.csr_array(lu.U)
        apf = sp.csr_array(Ap, dtype=np.float64)
        if ni:
            d_i = apf.diagonal()[:ni]
            zero_ii = sp.csr_array((ni, ni))
            L = sp.bmat([[zero_ii, None], [apf[ni:, :ni] @ sp.diags_array(1.0 / d_i), sp.tril(Ls, -1)]],
                        format="csr")
            U = sp.bmat([[zero_ii, apf[:ni, ni:]], [None, sp.triu(Us, 1)]], format="csr")
            diag = np.concatenate([d_i, Us.diagonal()])
        else:
            L, U, diag = sp.tril(Ls, -1, format="csr"), sp.triu(Us, 1, format="csr"), Us.diagonal()
        del lu, Ls, Us
        L, U = sp.csr_array(L), sp.csr_array(U)
        L.sort_indices()
        U.sort_indices()
        self._lu = (L.indptr.astype(np.int64), L.indices.astype(np.int32), L.data.astype(np.float64),
                    U.indptr.astype(np.int64), U.indices.astype(np.int32), U.data.astype(np.float64),
                    (1.0 / diag).astype(np.float64))
        self._a = (Ap.indptr.astype(np.int64), Ap.indices.astype(np.int32), Ap.data.astype(np.int64))
        self.report.ordering = spec if ni else spec + " (no set)"
        self.report.fill = int(L.nnz + U.nnz + n)
        self._norm = int(abs(Ap).sum(axis=1).max()) if n else 0
        self._fallback: DixonSolver | None = None
        self.report.add("ordering", time.perf_counter() - t0)

    # ------------------------------------------------------------------ the solve

    def solve(self, B: np.ndarray, wanted: np.ndarray | None, couplings: list[Coupling] | None = None,
              ) -> list[list[Fraction]]:
        """The exact solution of ``A X = B`` (+ couplings) at the rows ``wanted`` (None: all rows).

        As :meth:`DixonSolver.solve` (``out[c][w]`` as Fractions, every entry of the
        solution proved); ``B`` may be signed. Falls back to :class:`DixonSolver` when
        the floating-point solve cannot gain bits (a matrix too ill-conditioned).
        """
        B = np.asarray(B, np.int64)
        if B.ndim != 2 or B.shape[0] != self.n:
            raise ValueError(f"B must be ({self.n}, m), got {B.shape}")
        couplings = couplings or []
        wanted = np.arange(self.n) if wanted is None else np.asarray(wanted, np.int64)
        if B.shape[1] == 0:
            return []
        # plain columns of zeros have the solution zero: left out (a coupled column's zero source adds nothing)
        m, nc = B.shape[1], len(couplings)
        live = [c for c in range(m) if c >= m - nc or B[:, c].any()]
        if len(live) < m:
            new = {c: k for k, c in enumerate(live)}
            couplings = [Coupling(cp.C, [new[j] for j in cp.sources if j in new]) for cp in couplings]
            got = self.solve(B[:, live], wanted, couplings) if live else []
            zero = [Fraction(0)] * wanted.size
            return [got[new[c]] if c in new else list(zero) for c in range(m)]
        for s_cap in (48, 40, 32, 24):
            try:
                return self._solve(B, wanted, couplings, s_cap)
            except RefinementFailed:
                continue
        return self._dixon(B, wanted, couplings)

    def _dixon(self, B, wanted, couplings):
        if self._fallback is None:
            self._fallback = DixonSolver(self.A_orig, prefer=self.prefer)
            self.report.ordering += ", fell back to p-adic lifting"
        if (B < 0).any():
            if couplings:
                raise SolverError("the p-adic fallback takes nonnegative columns with couplings")
            m = B.shape[1]
            got = self._fallback.solve(np.hstack([np.maximum(B, 0), np.maximum(-B, 0)]), wanted)
            return [[a - b for a, b in zip(got[c], got[m + c], strict=True)] for c in range(m)]
        return self._fallback.solve(B, wanted, couplings)

    def _couplings(self, couplings: list[Coupling]):
        """Couplings in the solver's order, as the kernel's arrays, and as CSR matrices for the check."""
        n = self.n
        if not couplings:
            return (np.zeros((0, n + 1), np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64),
                    np.zeros(0, np.int64), np.zeros((0, 2), np.int64)), [], 0
        ptrs, idxs, vals, srcs, src_of, mats = [], [], [], [], [], []
        base = 0
        norm = 0
        for cp in couplings:
            C = sp.csr_array(sp.csr_array(cp.C, dtype=np.int64)[self.order][:, self.order])
            C.sort_indices()
            mats.append(C)
            ptrs.append(C.indptr.astype(np.int64) + base)
            idxs.append(C.indices.astype(np.int32))
            vals.append(C.data.astype(np.int64))
            base += C.nnz
            src_of.append((len(srcs), len(srcs) + len(cp.sources)))
            srcs.extend(cp.sources)
            if C.nnz:
                norm = max(norm, int(abs(C).sum(axis=1).max()) * len(cp.sources))
        arrays = (np.vstack(ptrs), np.concatenate(idxs), np.concatenate(vals), np.array(srcs, np.int64),
                  np.array(src_of, np.int64))
        return arrays, mats, norm

    def _solve(self, B, wanted, couplings, s_cap):
        import time

        t0 = time.perf_counter()
        n = self.n
        m = B.shape[1]
        couple, Cs, cnorm = self._couplings(couplings)
        srcs = [list(cp.sources) for cp in couplings]
        norm = self._norm + cnorm
        head = 61 - max(norm, 1).bit_length()  # |A x| + |C x| < 2**61 when |x| < 2**head
        if head < 16:
            raise RefinementFailed("matrix entries too large for int64 refinement")
        Bp = np.ascontiguousarray(B[self.order])
        r = Bp.copy()
        bound_r = max(1 << 24, 1024 * (norm + int(np.abs(B).max())))
        # Two random combinations of each column's rows: their denominators' lcm is, but for small primes that
        # cancel by chance, the column's common denominator (one combination of every column would need the
        # bits of the lcm of all the columns' denominators: 43,000 against 29,000 on oca-moderna)
        rng = np.random.default_rng(self.n)
        rho = rng.integers(1, 1 << 10, (2, n)).astype(np.int64)
        wpos = self.perm[wanted]
        track = [[0, 0] for _ in range(m)]
        found: list[list[tuple[int, int] | None]] = [[None, None] for _ in range(m)]
        blocks: list[np.ndarray] = []
        shifts: list[int] = []
        y = np.empty((n, m), np.float64)
        bits = 0
        checked = 0  # bits at the last reconstruction attempt
        failures = 0
        guessed = False
        # Hadamard: every denominator divides det A (det A squared with couplings: the block system),
        # |det A| <= prod of the row norms, every numerator is below that times ||B|| n: past twice those
        # bits the fractions must have shown (a safety valve: the proof, not this bound, decides)
        rows2 = np.sqrt(np.asarray(sp.csr_array(self.A, dtype=np.float64).multiply(self.A).sum(axis=1)).ravel())
        hadamard = float(np.log2(np.maximum(rows2, 1.0)).sum())
        give_up = (4 if couplings else 2) * (hadamard + math.log2(max(int(np.abs(B).max()), 1) * n + 1)) + 1024
        ylate = 1.0
        block = self.BLOCK
        while True:
            out_x = np.empty((block, n, m), np.int64)
            out_s = np.zeros(block, np.int64)
            done, status = _refine(block, n, *self._lu, *self._a, r, *couple, s_cap, head, bound_r, out_x, out_s, y)
            if status:
                raise RefinementFailed(f"refinement stopped ({status}) after {len(shifts) + done} steps")
            if shifts:
                ylate = max(ylate, float(np.abs(y).max()))
            blocks.append(out_x[:, self.ni:, :].copy())  # the digits of the rows not in the independent set
            sh = out_s.tolist()
            # the combinations exactly, from 26-bit halves (|sum| < 2**36 n each)
            lo = out_x & ((1 << 26) - 1)
            hi = out_x >> 26
            for k in range(2):
                c_hi = np.einsum("tic,i->tc", hi, rho[k]).tolist()
                c_lo = np.einsum("tic,i->tc", lo, rho[k]).tolist()
                for c in range(m):
                    v = track[c][k]
                    for t, sft in enumerate(sh):
                        v = (v << sft) + (c_hi[t][c] << 26) + c_lo[t][c]
                    track[c][k] = v
            shifts.extend(sh)
            bits += sum(sh)
            if bits > give_up:
                raise RefinementFailed(f"no certified solution after {bits} bits (Hadamard's bound passed)")
            # reconstruction costs about bits**2: tried when the bits have grown by 3 % (and at most 3 % late)
            if bits < checked * 1.03:
                continue
            checked = bits
            pending = [(c, k) for c in range(m) for k in range(2) if found[c][k] is None]
            for c, k in pending:  # stop at the first that is not there yet
                found[c][k] = approx_reconstruct(track[c][k], bits)
                if found[c][k] is None:
                    break
            mp = m - len(srcs)
            plain_done = all(f is not None for col in found[:mp] for f in col)
            guess = False
            if any(f is None for col in found for f in col):
                # A coupled column g = A^-1 (B_g + C e) has about the denominators of e times those of A^-1 on
                # an integer vector, which the plain columns show: try their lcm once before lifting on to
                # reconstruct g itself (oca-moderna: 29,000 bits against 43,000)
                if not (srcs and plain_done and mp and not guessed):
                    continue
                guess = guessed = True
            self.report.add("lift", time.perf_counter() - t0)
            t1 = time.perf_counter()
            dens = [math.lcm(col[0][1], col[1][1]) * SMOOTH ** (8 ** failures) if col[0] and col[1] else 1
                    for col in found]
            if guess:
                every = 1
                for d in dens[:mp]:
                    every = math.lcm(every, d)
                dens[mp:] = [every] * (m - mp)
            for q, sc in enumerate(srcs):  # a coupled column's denominator covers its sources'
                c = mp + q
                for j in sc:
                    dens[c] = math.lcm(dens[c], dens[j])
            out = self._certify(Bp, blocks, shifts, dens, Cs, srcs, wpos, ylate)
            self.report.add("certify", time.perf_counter() - t1)
            t0 = time.perf_counter()
            if out == "short":
                if guess:
                    guessed = False  # try the guess again with more bits
                continue  # too few bits yet to round d X: lift further, same candidate
            if out is not None:
                self.report.steps += len(shifts)
                self.report.prime = 0
                return out
            if guess:
                continue  # the guess was not a common denominator: reconstruct the coupled columns
            # not yet a common denominator (or too few bits to round d X): lift further and look again
            failures += 1
            found = [[None, None] for _ in range(m)]
            if failures >= 3:
                raise RefinementFailed("no common denominator found")

    def _certify(self, Bp, digits, shifts, dens, Cs, srcs, wpos, ylate):
        """``z = round(d_c X / 2**S)`` per column and the exact check of ``A z = d B`` (+ couplings).

        ``digits`` are the refinement's blocks (steps, rows not in the independent set,
        columns). A coupled column and its sources share one ``d`` (the lcm). The check
        runs on 24-bit limbs modulo ``2**(24 K)`` (whole-array int64 products, carries),
        with ``2**(24 K)`` above twice the bound ``||A|| max|z| + max|d B + C z_s|``: a
        congruence that strong is the equality over the integers. The rows of the
        independent set come from the others by an exact long division by their
        diagonal. Returns the solution at ``wpos`` as Fractions, None when the check
        fails, or ``"short"`` when the digits do not yet carry the bits that rounding needs.
        """
        n, ni = self.n, self.ni
        m = Bp.shape[1]
        mp = m - len(Cs)
        A = self.A
        dens = list(dens)
        family = sorted({mp + q for q in range(len(Cs))} | {j for sc in srcs for j in sc})
        if family:
            shared = 1
            for c in family:
                shared = math.lcm(shared, dens[c])
            for c in family:
                dens[c] = shared
        # round(d X / 2**S) = d x needs 2**S > d |A^-1 r| with a margin: the digits below are dropped
        need = max(d.bit_length() for d in dens) + math.ceil(math.log2(ylate + 1.0)) + 40
        keep = 0
        total = 0
        while keep < len(shifts) and total < need:
            total += shifts[keep]
            keep += 1
        if total < need:
            return "short"
        a_ir = sp.csr_array(A[:ni, ni:]) if ni else None
        d_i = A.diagonal()[:ni].astype(np.int64)
        cnorm = max((int(abs(C).sum(axis=1).max()) * len(sc) for C, sc in zip(Cs, srcs, strict=True) if C.nnz),
                    default=0)
        bmax = int(np.abs(Bp).max()) if Bp.size else 0
        if max(self._norm, cnorm, bmax) >= 1 << 36:
            # row sums of entries times 24-bit limbs must stay below 2**60 (int64, a difference of two)
            raise RefinementFailed("entries too large for the limb check")
        limbs: dict[int, np.ndarray] = {}
        out: dict[int, list[Fraction]] = {}
        # the coupled family first (a spurious candidate shows there first: oca-moderna's coupled columns
        # reconstruct to a 14,300-bit denominator at 29,560 bits, the true one has 21,500), then the rest
        sources = sorted({j for sc in srcs for j in sc})
        order = sources + list(range(mp, m)) + [c for c in range(mp) if c not in sources]
        for c in order:
            col = np.concatenate([b[:, :, c] for b in digits[: -(-keep // digits[0].shape[0])]])[:keep]
            vals, S = _int_from_digits(col, shifts[:keep])
            S += shifts[0]  # X / 2**(every shift) approximates x
            fd = flint.fmpz(dens[c])
            half = 1 << (S - 1)
            z_r = [(int(fd * v) + half) >> S for v in vals]
            zbits = max((abs(v).bit_length() for v in z_r), default=0)
            # |A z|, |d B|, |C z_s| and their differences stay below 2**(24 K - 1)
            bound = max(zbits + max(self._norm, 1).bit_length(), dens[c].bit_length() + max(bmax, 1).bit_length(),
                        max((limbs[j].shape[1] * 24 for sc in srcs for j in sc if j in limbs), default=0)
                        + max(cnorm, 1).bit_length()) + 4
            # the set's rows z_I = (rhs_I - A_IR z_R) / a_II are below 2**(bound - 3), so A z is below
            # 2**(bound + log2 ||A||): K limbs hold all of it with a sign bit to spare
            K = (bound + max(self._norm, 1).bit_length()) // 24 + 1
            Z = np.zeros((n, K), np.int64)
            Z[ni:] = _to_limbs(z_r, K)
            rhs = np.outer(Bp[:, c], _to_limbs([dens[c]], K)[0])
            if c >= mp:
                for j in srcs[c - mp]:
                    zs_j = limbs[j]
                    ext = np.zeros((n, K), np.int64)
                    w = min(K, zs_j.shape[1])
                    ext[:, :w] = zs_j[:, :w]
                    if w < K:  # sign-extend a shorter two's complement
                        neg = zs_j[:, -1] >= 1 << 23
                        ext[neg, w:] = (1 << 24) - 1
                    rhs = rhs + Cs[c - mp] @ ext
            if ni:
                # the independent set: z_I = (rhs_I - A_IR z_R) / d_I, an exact division or no certificate
                q_i = _limb_divide(_normalise(rhs[:ni] - a_ir @ Z[ni:]), d_i)
                if q_i is None:
                    return None
                Z[:ni] = q_i
            # A z = d B (+ coupled), every row, modulo 2**(24 K)
            if _normalise(A @ Z - rhs).any():
                return None
            limbs[c] = Z
            out[c] = [Fraction(_from_limbs(Z[i]), dens[c]) for i in wpos.tolist()]
        return [out[c] for c in range(m)]


def _to_limbs(values: list[int], K: int) -> np.ndarray:
    """Python ints as (len, K) int64 24-bit limbs of their two's complement modulo ``2**(24 K)``."""
    mask = (1 << (24 * K)) - 1
    raw = b"".join((v & mask).to_bytes(3 * K, "little") for v in values)
    b = np.frombuffer(raw, np.uint8).reshape(len(values), K, 3).astype(np.int64)
    return b[:, :, 0] | (b[:, :, 1] << 8) | (b[:, :, 2] << 16)


def _from_limbs(row: np.ndarray) -> int:
    """The signed integer of one row of two's complement 24-bit limbs."""
    K = row.size
    v = int.from_bytes(np.asarray(row, "<u4").astype("<u4").view(np.uint8).reshape(K, 4)[:, :3].tobytes(), "little")
    return v - (1 << (24 * K)) if row[-1] >= 1 << 23 else v


@numba.njit(cache=True)
def _carry_rows(W):
    """In place: each row's limbs carried into ``[0, 2**24)``, the carry out of the top dropped."""
    for i in range(W.shape[0]):
        carry = 0
        for t in range(W.shape[1]):
            v = W[i, t] + carry
            W[i, t] = v & 0xFFFFFF
            carry = v >> 24


@numba.njit(cache=True)
def _divide_rows(W, d, q):
    """``q`` = each two's complement limb row of ``W`` divided by ``d[i]``; False if a remainder is left."""
    ok = True
    for i in range(W.shape[0]):
        K = W.shape[1]
        rem = -1 if W[i, K - 1] >= 1 << 23 else 0  # the sign above the top limb
        di = d[i]
        for t in range(K - 1, -1, -1):
            cur = (rem << 24) + W[i, t]
            qt = cur // di
            rem = cur - qt * di
            q[i, t] = qt & 0xFFFFFF
        if rem != 0:
            ok = False
    return ok


def _normalise(W: np.ndarray) -> np.ndarray:
    """Limb rows (int64, any sizes) carried into ``[0, 2**24)``, modulo ``2**(24 K)`` (two's complement)."""
    W = np.array(W, np.int64, order="C")
    _carry_rows(W)
    return W


def _limb_divide(W: np.ndarray, d: np.ndarray) -> np.ndarray | None:
    """Two's complement limb rows divided exactly by positive ``d`` (one per row); None if one does not divide."""
    W = np.ascontiguousarray(W, np.int64)
    q = np.empty_like(W)
    return q if _divide_rows(W, np.asarray(d, np.int64), q) else None
