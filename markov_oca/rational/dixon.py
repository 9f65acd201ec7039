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
import time
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from ..core.errors import SolverError
from .coupling import Coupling, LiftReport, coupling_arrays
from .modular import PRIMES, _lift, _lu_mod, _matvec_mod
from .ordering import diagonal_lu, independent_set, schur_complement, whole_order
from .reconstruct import _from_digits, rational_reconstruct

SMOOTH = 2 * 3 * 5 * 7 * 11 * 13  # the small primes a random combination may lose


def _fold(acc: list[list[int]], out: np.ndarray, chk: np.ndarray, p: int, pk: int) -> None:
    """``X += sum_s out[s] p^(steps + s)`` (and the combination's ``chk``), each block folded into one
    integer per entry first; ``pk`` is ``p ** steps``."""
    nw = out.shape[1]
    for c, col in enumerate(acc):
        for w in range(nw + 1):
            digits = out[:, w, c] if w < nw else chk[:, c]
            if digits.any():
                col[w] += _from_digits(digits, p) * pk


def _whole_pattern(af: sp.csc_array, order: np.ndarray, ni: int, Ls, Us) -> tuple[sp.csc_array, sp.csc_array]:
    """The pattern of the whole LU in ``order`` from the Schur complement's factors:
    ``L = [[1, 0], [A_RI / d, L_S]]``, ``U = [[d, A_IR], [0, U_S]]`` in the order (I, R)."""
    n = order.size
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
    return L, U


class DixonSolver:
    """One factorisation of an integer matrix ``A`` (n x n) modulo a word prime, for many solves.

    ``A`` must be nonsingular with a nonzero diagonal that can serve as pivots
    (true of ``D (I - Q)`` on the transient states of a chain). With ``like``,
    the ordering and pattern of another solver are reused: ``A``'s pattern must
    lie inside that one's (as ``Q`` with some branches stopped does).

    Examples
    --------
    >>> A = sp.csr_array(np.array([[2, -1], [-1, 2]]))
    >>> DixonSolver(A).solve(np.array([[1], [0]]), np.array([0, 1]))
    [[Fraction(2, 3), Fraction(1, 3)]]
    """

    def __init__(self, A: sp.csr_array, orderings: tuple[str, ...] = ("COLAMD", "MMD_AT_PLUS_A"),
                 like: DixonSolver | None = None, prefer: np.ndarray | None = None):
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
        af = sp.csc_array(A, dtype=np.float64)
        best = None
        # with the independent set eliminated first, and without (MMD on the whole matrix wins on some boards)
        for ind in (independent_set(A, prefer), np.zeros(0, np.int64)):
            rest, S = schur_complement(af, ind)
            # COLAMD on the whole matrix never beat the set's orderings on the boards measured: skipped
            for spec in (orderings if ind.size else [o for o in orderings if o != "COLAMD"]):
                lu = diagonal_lu(S, spec)
                if lu is None:
                    continue  # a pivot off the diagonal: not the pattern we factor
                size = lu.L.nnz + lu.U.nnz
                if best is None or size < best[0]:
                    best = (size, spec if ind.size else spec + " (no set)", lu.perm_c.copy(), lu.L.tocsc(),
                            lu.U.tocsc(), ind, rest)
                del lu
        if best is None:
            raise SolverError("no diagonal-pivot ordering found for the exact sparse LU")
        _, spec, perm_s, Ls, Us, ind, rest = best
        order, perm = whole_order(ind, rest, perm_s)
        L, U = _whole_pattern(af, order, ind.size, Ls, Us)
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
        return coupling_arrays(couplings, self.order, np.int64, nonnegative=True)[0]

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
        couplings = couplings or []
        B = np.asarray(B, np.int64)
        if B.ndim != 2 or B.shape[0] != self.n:
            raise ValueError(f"B must be ({self.n}, m), got {B.shape}")
        if (B < 0).any():
            raise ValueError("B must be nonnegative (split a signed right-hand side in two)")
        wanted = np.arange(self.n) if wanted is None else np.asarray(wanted, np.int64)
        if B.shape[1] == 0:
            return []
        got = self._lift(B, wanted, couplings)
        if got is None:
            # still no common denominator: reconstruct every row (slow, and not met so far)
            full = self.solve(B, None, couplings)
            return [[col[i] for i in wanted.tolist()] for col in full]
        return got

    def _lift(self, B: np.ndarray, wanted: np.ndarray, couplings: list[Coupling]) -> list[list[Fraction]] | None:
        """Lift until the reconstruction repeats, then certify it; None after three failed candidates when
        rows are left out of the reconstruction."""
        p, m, nw = self.p, B.shape[1], wanted.size
        Bp = np.ascontiguousarray(B[self.order])
        # The wanted rows, and a random combination of all rows: its denominator is (almost surely) the
        # common denominator of the whole solution, which the start's value may lack (a factor of another
        # state's value can cancel out of it: oca-moderna).
        rng = np.random.default_rng(self.n)
        wpos = np.ascontiguousarray(self.perm[wanted])
        couple = self._coupling_arrays(couplings)
        r = Bp.copy()
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
            _fold(acc, out, chk, p, pk)
            pk *= p ** block
            steps += block
            cand = self._reconstruct(acc, pk)
            if cand is not None and cand == prev:
                self.report.add("lift", time.perf_counter() - t0)
                z = self._certify_candidate(Bp, cand, failed, couple, wpos)
                t0 = time.perf_counter()
                if z is not None:
                    self.report.steps += steps
                    return z
                failed += 1
                if failed >= 3 and nw < self.n:
                    return None
                cand = None  # lift further: the combination's fraction was not the true one yet
            prev = cand
            block = max(16, steps // 8)

    def _certify_candidate(self, Bp, cand, failed, couple, wpos):
        """Certify the reconstructed fractions ``cand``: the solution at ``wpos``, or None."""
        d = 1
        for col in cand:
            for _num, den in col:
                d = math.lcm(d, den)
        t1 = time.perf_counter()
        # Small primes cancel out of a combination with fair chance (a random sum is even half
        # the time): certify with d times a power of the small primes, more after a failure.
        z = self._certify(Bp, d * SMOOTH ** (8 ** failed), couple, Bp.shape[1], wpos)
        self.report.add("certify", time.perf_counter() - t1)
        if z is not None:
            out = [[Fraction(num, den) for num, den in col[:wpos.size]] for col in cand]
            if out != z:
                raise SolverError("the certified solution differs from the reconstructed fractions")
        return z

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

