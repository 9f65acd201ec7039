"""The exact proof of a refined solution: ``A z = d B`` checked on 24-bit limbs, every row.

:meth:`~markov_oca.rational.refine.RefineSolver.solve` rounds ``z = d X / 2**S``
from its refinement digits; the check runs modulo ``2**(24 K)`` with ``2**(24 K)``
above twice the bound ``||A|| max|z| + max|d B + C z_s|``: a congruence that strong is
the equality over the integers. The rows of the independent set come from the others
by an exact long division by their diagonal.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import numpy as np
import scipy.sparse as sp

from .limbs import _from_limbs, _limb_divide, _normalise, _to_limbs
from .reconstruct import _int_from_digits
from .refine_steps import RefinementFailed


def _shared(dens: list[int], family: list[int]) -> list[int]:
    """``dens`` with the columns of ``family`` (a coupled column and its sources) given their lcm."""
    dens = list(dens)
    if family:
        shared = 1
        for c in family:
            shared = math.lcm(shared, dens[c])
        for c in family:
            dens[c] = shared
    return dens


def _kept(shifts: list[int], need: int) -> int | None:
    """How many refinement steps carry ``need`` bits, or None when all of them do not."""
    keep = 0
    total = 0
    while keep < len(shifts) and total < need:
        total += shifts[keep]
        keep += 1
    return keep if total >= need else None


def _coupled_rhs(rhs: np.ndarray, C: sp.csr_array, sources: list[int], limbs: dict[int, np.ndarray],
                 K: int) -> np.ndarray:
    """``rhs + C z_s`` on K limbs, the sources' limbs sign-extended when shorter."""
    n = rhs.shape[0]
    for j in sources:
        zs_j = limbs[j]
        ext = np.zeros((n, K), np.int64)
        w = min(K, zs_j.shape[1])
        ext[:, :w] = zs_j[:, :w]
        if w < K:  # sign-extend a shorter two's complement
            neg = zs_j[:, -1] >= 1 << 23
            ext[neg, w:] = (1 << 24) - 1
        rhs = rhs + C @ ext
    return rhs


def certify(solver, Bp, digits, shifts, dens, Cs, srcs, wpos, ylate):
    """``z = round(d_c X / 2**S)`` per column and the exact check of ``A z = d B`` (+ couplings).

    ``digits`` are the refinement's blocks (steps, rows not in the independent set,
    columns). A coupled column and its sources share one ``d`` (the lcm). Returns
    the solution at ``wpos`` as Fractions, None when the check fails, or ``"short"``
    when the digits do not yet carry the bits that rounding needs.
    """
    ni, norm = solver.ni, solver._norm
    m = Bp.shape[1]
    mp = m - len(Cs)
    A = solver.A
    dens = _shared(dens, sorted({mp + q for q in range(len(Cs))} | {j for sc in srcs for j in sc}))
    # round(d X / 2**S) = d x needs 2**S > d |A^-1 r| with a margin: the digits below are dropped
    keep = _kept(shifts, max(d.bit_length() for d in dens) + math.ceil(math.log2(ylate + 1.0)) + 40)
    if keep is None:
        return "short"
    cnorm = max((int(abs(C).sum(axis=1).max()) * len(sc) for C, sc in zip(Cs, srcs, strict=True) if C.nnz),
                default=0)
    bmax = int(np.abs(Bp).max()) if Bp.size else 0
    if max(norm, cnorm, bmax) >= 1 << 36:
        # row sums of entries times 24-bit limbs must stay below 2**60 (int64, a difference of two)
        raise RefinementFailed("entries too large for the limb check")
    check = _Check(A, ni, norm, cnorm, bmax, [j for sc in srcs for j in sc])
    limbs: dict[int, np.ndarray] = {}
    out: dict[int, list[Fraction]] = {}
    # the coupled family first (a spurious candidate shows there first: oca-moderna's coupled columns
    # reconstruct to a 14,300-bit denominator at 29,560 bits, the true one has 21,500), then the rest
    sources = sorted({j for sc in srcs for j in sc})
    for c in sources + list(range(mp, m)) + [c for c in range(mp) if c not in sources]:
        col = np.concatenate([b[:, :, c] for b in digits[: -(-keep // digits[0].shape[0])]])[:keep]
        coupled = (Cs[c - mp], srcs[c - mp]) if c >= mp else None
        Z = check.column(col, shifts[:keep], dens[c], Bp[:, c], coupled, limbs)
        if Z is None:
            return None
        limbs[c] = Z
        out[c] = [Fraction(_from_limbs(Z[i]), dens[c]) for i in wpos.tolist()]
    return [out[c] for c in range(m)]


class _Check:
    """The check of one column at a time against ``A`` (rows of the independent set first)."""

    def __init__(self, A: sp.csr_array, ni: int, norm: int, cnorm: int, bmax: int, sources: list[int]):
        self.A, self.ni, self.norm, self.cnorm, self.bmax, self.sources = A, ni, norm, cnorm, bmax, sources
        self.a_ir = sp.csr_array(A[:ni, ni:]) if ni else None
        self.d_i = A.diagonal()[:ni].astype(np.int64)

    def column(self, col, shifts, d, b, coupled, limbs):
        """The limbs of ``z`` for one column when ``A z = d b (+ C z_s)`` holds exactly, else None."""
        n, ni = self.A.shape[0], self.ni
        vals, S = _int_from_digits(col, shifts)
        S += shifts[0]  # X / 2**(every shift) approximates x
        fd = flint.fmpz(d)
        half = 1 << (S - 1)
        z_r = [(int(fd * v) + half) >> S for v in vals]
        zbits = max((abs(v).bit_length() for v in z_r), default=0)
        # |A z|, |d B|, |C z_s| and their differences stay below 2**(24 K - 1)
        src_bits = max((limbs[j].shape[1] * 24 for j in self.sources if j in limbs), default=0)
        bound = max(zbits + max(self.norm, 1).bit_length(), d.bit_length() + max(self.bmax, 1).bit_length(),
                    src_bits + max(self.cnorm, 1).bit_length()) + 4
        # the set's rows z_I = (rhs_I - A_IR z_R) / a_II are below 2**(bound - 3), so A z is below
        # 2**(bound + log2 ||A||): K limbs hold all of it with a sign bit to spare
        K = (bound + max(self.norm, 1).bit_length()) // 24 + 1
        Z = np.zeros((n, K), np.int64)
        Z[ni:] = _to_limbs(z_r, K)
        rhs = np.outer(b, _to_limbs([d], K)[0])
        if coupled:
            rhs = _coupled_rhs(rhs, coupled[0], coupled[1], limbs, K)
        if ni:
            # the independent set: z_I = (rhs_I - A_IR z_R) / d_I, an exact division or no certificate
            q_i = _limb_divide(_normalise(rhs[:ni] - self.a_ir @ Z[ni:]), self.d_i)
            if q_i is None:
                return None
            Z[:ni] = q_i
        # A z = d B (+ coupled), every row, modulo 2**(24 K)
        if _normalise(self.A @ Z - rhs).any():
            return None
        return Z
