"""Exact solves by numeric iterative refinement on one floating-point LU, proved exactly over the integers."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from ..core.errors import SolverError
from .certify import certify
from .coupling import Coupling, LiftReport, coupling_arrays
from .dixon import SMOOTH, DixonSolver
from .ordering import diagonal_lu, independent_set, predicted_fill, schur_complement, whole_order
from .reconstruct import approx_reconstruct
from .refine_steps import RefinementFailed, _refine

__all__ = ["RefineSolver", "RefinementFailed"]


def _factor(af: sp.csc_array, candidates: list[tuple[np.ndarray, list[str]]]):
    """SuperLU of the Schur complement for the candidate (independent set, ordering) predicted to fill least
    and that keeps its pivots on the diagonal: ``(spec, lu, ind, rest, predictions)``."""
    # Each candidate's fill is predicted (ordering.predicted_fill); only the predicted smallest is factored.
    preds = []
    for ind, specs in candidates:
        rest, S = schur_complement(af, ind)
        for spec in specs:
            pred = predicted_fill(S, spec) if sum(len(sp_) for _, sp_ in candidates) > 1 else 0
            preds.append((pred, spec, ind, rest, S))
    preds.sort(key=lambda t: t[0])
    for _pred, spec, ind, rest, S in preds:
        lu = diagonal_lu(S, spec)
        if lu is not None:
            return spec, lu, ind, rest, [(int(p_), s_, i_.size) for p_, s_, i_, _, _ in preds]
    raise SolverError("no diagonal-pivot ordering found for the sparse exact solve")


def _whole_factors(Ap: sp.csr_array, ni: int, lu) -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
    """The whole factorisation in the solver's order, ``L = [[1, 0], [A_RI / d, L_S]]``,
    ``U = [[d, A_IR], [0, U_S]]``: strictly lower L, strictly upper U and the diagonal."""
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
    L, U = sp.csr_array(L), sp.csr_array(U)
    L.sort_indices()
    U.sort_indices()
    return L, U, diag


def _fold_combinations(track: list[list[int]], out_x: np.ndarray, sh: list[int], rho: np.ndarray) -> None:
    """Append a block of digits to the two random combinations of each column, exactly (from 26-bit halves:
    ``|sum| < 2**36 n`` each)."""
    lo = out_x & ((1 << 26) - 1)
    hi = out_x >> 26
    for k in range(2):
        c_hi = np.einsum("tic,i->tc", hi, rho[k]).tolist()
        c_lo = np.einsum("tic,i->tc", lo, rho[k]).tolist()
        for c, col in enumerate(track):
            v = col[k]
            for t, sft in enumerate(sh):
                v = (v << sft) + (c_hi[t][c] << 26) + c_lo[t][c]
            col[k] = v


def _reconstruct_pending(found: list[list[tuple[int, int] | None]], track: list[list[int]], bits: int) -> None:
    """Reconstruct the combinations not found yet, stopping at the first that is not there yet."""
    for c, k in [(c, k) for c in range(len(found)) for k in range(2) if found[c][k] is None]:
        found[c][k] = approx_reconstruct(track[c][k], bits)
        if found[c][k] is None:
            break


def _denominators(found, failures: int, srcs: list[list[int]], guess: bool) -> list[int]:
    """Each column's candidate denominator (times a power of the small primes, more after each failure); a
    guess gives the coupled columns the plain columns' lcm; a coupled column's covers its sources'."""
    m = len(found)
    mp = m - len(srcs)
    dens = [math.lcm(col[0][1], col[1][1]) * SMOOTH ** (8 ** failures) if col[0] and col[1] else 1
            for col in found]
    if guess:
        every = 1
        for d in dens[:mp]:
            every = math.lcm(every, d)
        dens[mp:] = [every] * (m - mp)
    for q, sc in enumerate(srcs):
        c = mp + q
        for j in sc:
            dens[c] = math.lcm(dens[c], dens[j])
    return dens


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


    BLOCK = 8  # steps per numba call between reconstruction checks

    def __init__(self, A: sp.csr_array, orderings: tuple[str, ...] = ("COLAMD", "MMD_AT_PLUS_A"),
                 like: RefineSolver | None = None, prefer: np.ndarray | None = None):
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
            # the set and COLAMD on its Schur complement, or MMD on the whole matrix: the two winners
            # measured (docs/exact.md); MMD on the Schur complement never was
            candidates = [(independent_set(A, prefer), [o for o in orderings if o == "COLAMD"] or list(orderings)),
                          (np.zeros(0, np.int64), [o for o in orderings if o != "COLAMD"])]
        spec, lu, ind, rest, self.predicted = _factor(af, candidates)
        self._ind, self._spec = ind, spec
        self.order, self.perm = whole_order(ind, rest, lu.perm_c)
        ni = self.ni = ind.size
        Ap = sp.csr_array(A[self.order][:, self.order])
        Ap.sort_indices()
        self.A = Ap
        L, U, diag = _whole_factors(Ap, ni, lu)
        del lu
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

    def _certify(self, Bp, digits, shifts, dens, Cs, srcs, wpos, ylate):
        """:func:`~markov_oca.rational.certify.certify` on this solver's matrix."""
        return certify(self, Bp, digits, shifts, dens, Cs, srcs, wpos, ylate)

    def _bounds(self, B: np.ndarray, couplings: list[Coupling]):
        """The couplings' arrays and matrices, the bits ``head`` below which ``|A x| + |C x| < 2**61``, and
        the bound past which the residual has grown."""
        couple, Cs, cnorm = coupling_arrays(couplings, self.order, np.int32)
        norm = self._norm + cnorm
        head = 61 - max(norm, 1).bit_length()  # |A x| + |C x| < 2**61 when |x| < 2**head
        if head < 16:
            raise RefinementFailed("matrix entries too large for int64 refinement")
        return couple, Cs, head, max(1 << 24, 1024 * (norm + int(np.abs(B).max())))

    def _give_up(self, B: np.ndarray, coupled: bool) -> float:
        """Bits past which the fractions must have shown. Hadamard: every denominator divides det A (det A
        squared with couplings: the block system), ``|det A| <=`` the product of the row norms, every numerator
        is below that times ``||B|| n``: twice those bits (a safety valve: the proof, not this bound, decides)."""
        rows2 = np.sqrt(np.asarray(sp.csr_array(self.A, dtype=np.float64).multiply(self.A).sum(axis=1)).ravel())
        hadamard = float(np.log2(np.maximum(rows2, 1.0)).sum())
        return (4 if coupled else 2) * (hadamard + math.log2(max(int(np.abs(B).max()), 1) * self.n + 1)) + 1024

    def _solve(self, B, wanted, couplings, s_cap):
        t0 = time.perf_counter()
        n = self.n
        m = B.shape[1]
        couple, Cs, head, bound_r = self._bounds(B, couplings)
        srcs = [list(cp.sources) for cp in couplings]
        Bp = np.ascontiguousarray(B[self.order])
        r = Bp.copy()
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
        give_up = self._give_up(B, bool(couplings))
        ylate = 1.0
        block = self.BLOCK
        mp = m - len(srcs)
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
            _fold_combinations(track, out_x, sh, rho)
            shifts.extend(sh)
            bits += sum(sh)
            if bits > give_up:
                raise RefinementFailed(f"no certified solution after {bits} bits (Hadamard's bound passed)")
            # reconstruction costs about bits**2: tried when the bits have grown by 3 % (and at most 3 % late)
            if bits < checked * 1.03:
                continue
            checked = bits
            _reconstruct_pending(found, track, bits)
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
            dens = _denominators(found, failures, srcs, guess)
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
