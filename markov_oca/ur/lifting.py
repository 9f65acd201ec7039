"""Exact solutions of integer linear systems by numeric-symbolic lifting on float block LUs (:mod:`.exact`
describes the method): :func:`solve_exact`, and the proof of nonsingularity it rests on
(:func:`weakly_chained_dominant`).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order, connected_components

from ..core.errors import SolverError

__all__ = ["SMOOTH", "ExactSolution", "scc_blocks", "solve_exact", "weakly_chained_dominant"]

#: The small primes a random combination may lose (as :data:`markov_oca.rational.dixon.SMOOTH`).
SMOOTH = 2 * 3 * 5 * 7 * 11 * 13


# ----------------------------------------------------------------------------- the solver


def weakly_chained_dominant(A: sp.csr_array) -> bool:
    """Whether ``A`` is weakly chained diagonally dominant, hence nonsingular (Shivakumar and Chew, 1974).

    Every row has ``|a_ii| >= sum_(j != i) |a_ij|``, and from every row a walk along
    nonzero entries reaches a row where the inequality is strict.
    """
    A = sp.csr_array(A, copy=True)
    A.sum_duplicates()
    A.eliminate_zeros()
    n = A.shape[0]
    absA = abs(A).astype(np.float64)
    diag = np.abs(A.diagonal()).astype(np.float64)
    off = np.asarray(absA.sum(axis=1)).ravel() - diag
    if (off > diag).any():
        return False
    strict = np.flatnonzero(off < diag)
    if strict.size == 0:
        return False
    # walks i -> j along a_ij != 0 that end in a strict row: search backwards from a node joined to the strict rows
    coo = sp.coo_array(A)
    rows = np.concatenate([coo.col, np.full(strict.size, n)])
    cols = np.concatenate([coo.row, strict])
    g = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n + 1, n + 1))
    seen = breadth_first_order(g, n, directed=True, return_predecessors=False)
    return seen.size == n + 1


@numba.njit(cache=True)
def _normalise(raw, k):
    """Signed base-``2^k`` digit rows ``raw`` (T, n, m), most significant first, as digits in ``[0, 2^k)`` (in
    place) and a head: ``sum raw[s] 2^(k (T-1-s)) = head 2^(kT) + sum digits[s] 2^(k (T-1-s))``."""
    T, n, m = raw.shape
    mask = (np.int64(1) << k) - 1
    dig = raw
    head = np.zeros((n, m), np.int64)
    for i in range(n):
        for c in range(m):
            carry = np.int64(0)
            for s in range(T - 1, -1, -1):
                v = raw[s, i, c] + carry
                dig[s, i, c] = v & mask
                carry = v >> k
            head[i, c] = carry
    return dig, head


def _rows(dig, head, k, c, chunk: int = 2048):
    """The integers of every row of column ``c`` (digits and head from :func:`_normalise`), a chunk at a time."""
    T, n = dig.shape[0], dig.shape[1]
    nb = k // 8
    sh = k * T
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        block = np.ascontiguousarray(dig[::-1, lo:hi, c].T)  # (rows, T), least significant first
        raw = np.ascontiguousarray(block.view(np.uint8).reshape(hi - lo, T, 8)[:, :, :nb]).reshape(hi - lo, T * nb)
        del block
        for h, row in zip(head[lo:hi, c].tolist(), raw, strict=True):
            yield (h << sh) + int.from_bytes(row.tobytes(), "little")


def _split_sum(x: np.ndarray, w: np.ndarray) -> list[int]:
    """``sum_i w[i] x[i, c]`` per column, exactly (x up to 2^52, w up to 2^6, n up to 2^15)."""
    hi = (x >> 24).T @ w
    lo = (x & ((1 << 24) - 1)).T @ w
    return [(int(h) << 24) + int(v) for h, v in zip(hi.tolist(), lo.tolist(), strict=True)]


def _approx_fraction(X: int, shift: int, E: int) -> Fraction | None:
    """The fraction ``p/q`` with ``|q X - p 2^shift| <= q E`` (``X / 2^shift`` within ``E / 2^shift`` of it), found as
    the shortest vector ``(q X - p 2^shift, q E)`` of a 2 x 2 lattice; None when ``2^shift`` is still too small."""
    M = 1 << shift
    red = flint.fmpz_mat([[M, 0], [X, E]]).lll()
    best = None
    for row in range(2):
        eps, qE = int(red[row, 0]), int(red[row, 1])
        if qE == 0 or qE % E:
            continue
        q = qE // E
        if q < 0:
            q, eps = -q, -eps
        if abs(eps) > q * E or (q * X - eps) % M:
            continue
        cand = Fraction((q * X - eps) >> shift, q)
        if best is None or cand.denominator < best.denominator:
            best = cand
    if best is None or 4 * best.denominator ** 2 * E > M:
        return None
    return best


@dataclass
class ExactSolution:
    """``x = z / d`` for every row and column of ``A x = B``, proved (module docstring)."""

    d: int
    z: list  # z[c][i]: a list per column (or a dict of the wanted row only, keep_all=False)
    steps: int
    bits: int  # k: bits gained per step
    fill: int
    seconds: dict[str, float] = field(default_factory=dict)

    def fraction(self, c: int, i: int) -> Fraction:
        return Fraction(self.z[c][i], self.d)


def scc_blocks(A: sp.csr_array, target: int = 1000) -> np.ndarray:
    """Blocks of rows for :class:`BlockLU`: strongly connected components in dependency order, merged.

    Row ``i`` depends on row ``j`` when ``a_ij != 0``. The components of that graph, taken so that a
    component comes after every one it depends on, make ``A`` block lower triangular; consecutive
    components are merged into blocks of about ``target`` rows (one LU each). In Ur only captures
    (and a pass answered by a pass) lead back, so the components are small: 1,278 on the 12,786
    positions of two pieces, the largest of 1,384.
    """
    import networkx as nx

    n = A.shape[0]
    k, lab = connected_components(A, directed=True, connection="strong")
    coo = sp.coo_array(A)
    cross = lab[coo.row] != lab[coo.col]
    dag = nx.DiGraph()
    dag.add_nodes_from(range(k))
    dag.add_edges_from(zip(lab[coo.col[cross]].tolist(), lab[coo.row[cross]].tolist(), strict=True))
    size = np.bincount(lab, minlength=k)
    block = np.empty(k, np.int64)
    b = rows = 0
    for comp in nx.lexicographical_topological_sort(dag):
        block[comp] = b
        rows += int(size[comp])
        if rows >= target:
            b, rows = b + 1, 0
    return block[lab] if n else np.zeros(0, np.int64)


class BlockLU:
    """Float LU of a block lower-triangular matrix, one SuperLU factorisation per diagonal block.

    ``starts`` are the first rows of the blocks (rows ``starts[b]:starts[b+1]``, contiguous);
    a block's rows reference only columns before its end, so ``A x = r`` is solved block
    after block, the earlier blocks entering as a sparse product.
    """

    def __init__(self, A: sp.csr_array, starts: np.ndarray):
        n = A.shape[0]
        starts = [int(x) for x in starts] + ([n] if not len(starts) or starts[-1] != n else [])
        opts = {"permc_spec": "MMD_AT_PLUS_A", "diag_pivot_thresh": 0.0, "options": {"SymmetricMode": True}}
        Af = sp.csr_array(A, dtype=np.float64)
        self.parts = []
        self.fill = 0
        for lo, hi in itertools.pairwise(starts):
            rows = Af[lo:hi]
            if rows.nnz and rows.indices.max() >= hi:
                raise ValueError("the blocks are not in a lower-triangular order")
            lu = spla.splu(sp.csc_array(rows[:, lo:hi]), **opts)
            self.fill += int(lu.L.nnz + lu.U.nnz)
            off = sp.csr_array(rows[:, :lo]) if lo else None
            self.parts.append((lo, hi, off if off is not None and off.nnz else None, lu))

    def log2_abs_det(self) -> float:
        """log2 |det A| from the diagonals of the U factors (permutations change only the sign)."""
        return float(sum(np.log2(np.abs(lu.U.diagonal())).sum() + np.log2(np.abs(lu.L.diagonal())).sum()
                         for _, _, _, lu in self.parts))

    def solve(self, r: np.ndarray) -> np.ndarray:
        r = np.asarray(r, np.float64)
        x = np.empty_like(r)
        for lo, hi, off, lu in self.parts:
            rhs = r[lo:hi]
            if off is not None:
                rhs = rhs - off @ x[:lo]
            x[lo:hi] = lu.solve(rhs)
        return x


class _Diverged(SolverError):
    """The float solve was not good to the bits a step asked of it."""


def solve_exact(A: sp.csr_array, B: np.ndarray, wanted: int, *, blocks: np.ndarray | None = None,
                bits: int | None = None, keep_all: bool = True, max_steps: int = 200_000,
                check_every: float = 0.0625, bar=None, task=None) -> ExactSolution:
    """The exact solution of ``A x = B`` (integers; ``A`` weakly chained diagonally dominant) by numeric lifting.

    ``wanted`` is the row whose fractions (with a random combination of all rows) give the
    common denominator. ``blocks`` (the block of each row, see :class:`BlockLU`; default
    :func:`scc_blocks`) makes the float solves block after block. ``bits`` a step: by default
    what the float solve of ``B`` is good to, less a margin, in whole bytes (at most 40); 8
    fewer after a step that did not contract. ``keep_all=False`` returns ``z`` at ``wanted``
    only (``z[c]`` is then ``{wanted: value}``; every row is still checked).
    Raises :class:`~markov_oca.errors.SolverError` if ``A`` is not proved nonsingular or the
    lifting does not converge.
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    A = sp.csr_array(A, dtype=np.int64)
    A.sort_indices()
    B = np.ascontiguousarray(np.asarray(B, np.int64))
    n, m = B.shape
    if not weakly_chained_dominant(A):
        raise SolverError("the position system is not weakly chained diagonally dominant: not proved nonsingular")
    if blocks is None:
        blocks = scc_blocks(A)
    # the blocks as contiguous ranges: rows and columns in block order (stable), undone on the way out
    order = np.argsort(blocks, kind="stable")
    where = np.empty(n, np.int64)
    where[order] = np.arange(n)
    A = sp.csr_array(A[order][:, order])
    A.sort_indices()
    B = np.ascontiguousarray(B[order])
    starts = np.searchsorted(np.asarray(blocks)[order], np.unique(blocks))
    lu = BlockLU(A, starts)
    fill = lu.fill
    # a bound on |A^-1| (infinity norm): the comparison matrix's inverse on ones (an M-matrix, A is WCDD)
    cmp_ = sp.csr_array(-abs(A).astype(np.float64))
    cmp_.setdiag(np.abs(A.diagonal()).astype(np.float64))
    inv_norm = float(np.max(BlockLU(cmp_, starts).solve(np.ones((n, 1))))) * 1.01
    seconds["factor"] = time.perf_counter() - t0
    if bits is None:
        xh = lu.solve(B.astype(np.float64))
        res = float(np.abs(B - A @ xh).max()) / max(1.0, float(np.abs(B).max()))
        good = int(-math.log2(max(res, 2.0 ** -52))) - 1  # bits the float solve is good to, less one
        bits = max(8, min(40, (good // 8) * 8))
    # digits the final z needs: d divides det(A), whose size the float LU gives
    logdet = lu.log2_abs_det()
    tracked = [int(where[wanted])]
    while True:
        top = int((logdet * 1.001 + 8 * math.log2(SMOOTH) + 256) // bits) + 2
        try:
            sol = _lift(A, B, tracked, lu, inv_norm, bits, top, max_steps, check_every, bar, task, seconds,
                        keep_all)
        except _Diverged:
            if bits <= 8:
                raise
            bits -= 8
            continue
        except _Track as more:
            if len(tracked) > 64:
                raise SolverError("numeric lifting: no common denominator found") from None
            tracked += [i for i in dict.fromkeys(more.rows) if i not in tracked][:8]
            continue
        sol.fill = fill
        _lowest_terms(sol, keep_all, tracked[0], wanted, where)
        seconds["total"] = time.perf_counter() - t0
        return sol


def _lowest_terms(sol: ExactSolution, keep_all: bool, row: int, wanted: int, where: np.ndarray) -> None:
    """Divide ``d`` and ``z`` by their common factor, and put ``z`` back in the rows' own order (``row``: the
    wanted row's place in the block order, the only one kept without ``keep_all``)."""
    # d = SMOOTH^8 d0 with d0 dividing the true common denominator, so the common factor of d and every z
    # divides SMOOTH^8 (small residues)
    g = math.gcd(SMOOTH ** 8, sol.d)
    for col in sol.z:
        for v in (col if keep_all else col.values()):
            if g == 1:
                break
            g = math.gcd(g, v % g)
    if not keep_all:  # lowest terms of the kept row only
        g = math.gcd(g, *(col[row] for col in sol.z))
    sol.d //= g
    if keep_all:
        sol.z = [[col[i] // g for i in where.tolist()] for col in sol.z]
    else:
        sol.z = [{wanted: col[row] // g} for col in sol.z]


class _Track(SolverError):
    """Rows whose denominators the tracked rows miss: lift again with them tracked."""

    def __init__(self, rows, d):
        super().__init__("rows to track")
        self.rows, self.d = rows, d


class _Lifting:
    """The state of a lifting (module docstring of :mod:`.exact`): the digit rows ``x_i`` and residual ``r``.

    Only the first ``top`` digit rows of every row are kept (what the final ``z`` needs, from the float
    log-determinant); the ``tracked`` rows and a random combination of all rows keep every digit, as big
    integers grown block by block (``acc``, the rows not yet folded in ``pending``)."""

    def __init__(self, A, B, tracked, lu, k, top):
        n, m = B.shape
        self.A, self.B, self.lu, self.k, self.top, self.m = A, B, lu, k, top, m
        self.a_row = int(abs(A).sum(axis=1).max())
        self.alpha = 1 << k
        rng = np.random.default_rng(n)
        self.rho = rng.integers(1, 64, n).astype(np.int64)
        self.rho_sum = int(self.rho.sum())
        self.sample = np.sort(rng.choice(n, min(n, 256), replace=False))
        self.tracked = np.asarray(tracked, np.int64)
        self.raw = np.zeros((top, n, m), np.int64)
        self.acc = [[0] * (self.tracked.size + 1) for _ in range(m)]  # X of the tracked rows and the combination
        self.pending: list[tuple[np.ndarray, list[int]]] = []  # digit rows not yet folded into acc
        self.r = B.copy()
        self.K = 0
        self.normal = None

    def step(self) -> None:
        """One digit row: ``x_K = round(2^k A^-1 r)``, ``r = 2^k r - A x_K``; :class:`_Diverged` when the float
        solve is not good to ``k`` bits."""
        k, r = self.k, self.r
        rmax = int(np.abs(r).max())
        xs = self.lu.solve(r.astype(np.float64)) * float(self.alpha)
        if np.abs(xs).max() >= 2.0 ** 52:
            raise _Diverged(f"numeric lifting: {k} bits a step is too many for these values")
        xi = np.rint(xs).astype(np.int64)
        if int(np.abs(xi).max()).bit_length() + self.a_row.bit_length() > 62 or rmax.bit_length() + k > 62:
            raise _Diverged("numeric lifting: the residual would overflow int64")
        self.r = self.alpha * r - (self.A @ xi).astype(np.int64).reshape(r.shape)
        if self.K < self.top:
            self.raw[self.K] = xi
        self.pending.append((xi[self.tracked].copy(), _split_sum(xi, self.rho)))
        self.K += 1
        if int(np.abs(self.r).max()) > max(rmax, 1 << 20):
            raise _Diverged("numeric lifting: a step did not contract (the float solve is not good enough)")

    def fold(self) -> None:
        """Fold the pending digit rows: X = X 2^(k b) + sum of the block's rows."""
        k, nt = self.k, self.tracked.size
        b_ = len(self.pending)
        for c in range(self.m):
            col = self.acc[c]
            for w in range(nt + 1):
                v = 0
                for rows_, comb in self.pending:
                    v = (v << k) + (int(rows_[w, c]) if w < nt else comb[c])
                col[w] = (col[w] << (k * b_)) + v
        self.pending.clear()

    def candidates(self, shift: int, E: int) -> list:
        """The fractions of the tracked rows and of the combination from their ``X``; a None among them when one
        is not found yet."""
        m, nt = self.m, self.tracked.size
        cand = []
        for c in range(m):
            cand.append(_approx_fraction(self.acc[c][0], shift, E))
            if cand[-1] is None:
                return cand
        cand += [_approx_fraction(self.acc[c][nt], shift, E * self.rho_sum) for c in range(m)]
        cand += [_approx_fraction(self.acc[c][w], shift, E) for c in range(m) for w in range(1, nt)]
        return cand

    def digits(self, T: int):
        """The normalised leading digit rows (``T`` of them)."""
        if self.K < self.top:
            return _normalise(self.raw[:T].copy(), self.k)
        if self.normal is None:  # the leading rows are final: normalise them in place, once
            self.normal = _normalise(self.raw, self.k)
        return self.normal

    def certify(self, d: int, T: int, keep_all: bool):
        """(z, d, rows far from an integer): ``z`` None unless ``A z = d B`` holds; ``d`` widened by the small
        denominators the rows missed."""
        dig, head = self.digits(T)
        z, bad = None, []
        for _ in range(4):
            bad = _far(dig, head, self.k, d, self.sample, self.m)
            if not bad:
                z, bad = _certified(self.A, self.B, dig, head, self.k, d, None if keep_all else self.tracked[:1])
            if z is not None or not bad:
                break
            wider = _missing_factor(dig, head, self.k, d, bad)  # d x_i = integer + a/b, b small: widen d by b
            if wider == 1 or self.k * T < (d * wider).bit_length() + 160:
                break
            d *= wider
        return z, d, bad


def _lift(A, B, tracked, lu, inv_norm, k, top, max_steps, check_every, bar, task, seconds,
          keep_all) -> ExactSolution:
    """The lifting (module docstring of :mod:`.exact`, :class:`_Lifting`), checked every ``check_every`` of the
    steps made: :class:`_Track` when the tracked rows miss a denominator."""
    st = _Lifting(A, B, tracked, lu, k, top)
    stable = None
    next_check = 64
    t1 = time.perf_counter()
    lift = verify = 0.0
    while st.K < max_steps:
        st.step()
        if bar is not None and task is not None:
            bar.update(task, advance=1)
        if st.K < next_check:
            continue
        next_check = st.K + max(32, int(st.K * check_every))
        lift += time.perf_counter() - t1
        t2 = time.perf_counter()
        st.fold()
        shift = k * st.K
        E = int(inv_norm * float(max(1, int(np.abs(st.r).max())))) + 2
        cand = st.candidates(shift, E)
        if all(x is not None for x in cand):
            d = SMOOTH ** 8  # small primes cancel out of a random combination with fair chance: keep them
            for x in cand:
                d = math.lcm(d, x.denominator)
            T = min(st.K, top)
            if (st.K < top or k * T >= d.bit_length() + 160) and shift >= d.bit_length() + E.bit_length() + 40:
                z, d, bad = st.certify(d, T, keep_all)
                if z is not None:
                    verify += time.perf_counter() - t2
                    seconds.update(lift=lift, verify=verify)
                    return ExactSolution(d=d, z=z, steps=st.K, bits=k, fill=0, seconds=seconds)
                if bad and cand == stable:  # the same fractions two checkpoints running: track those rows
                    raise _Track([i for i, _ in bad], d)
                stable = cand  # else the combination's fraction may be spurious yet: lift on
        verify += time.perf_counter() - t2
        t1 = time.perf_counter()
    raise SolverError(f"numeric lifting: no certified solution after {max_steps} steps")


def _missing_factor(dig, head, k, d, bad) -> int:
    """The lcm of the small denominators ``b`` with ``d x_i = integer + a / b`` at the rows ``bad`` (1: none found).

    ``d X / 2^(kT)`` is known to far more than 128 bits after the point, so a fraction of a
    denominator below ``2^48`` shows in its first bits (a continued fraction).
    """
    T = dig.shape[0]
    sh = k * T
    wider = 1
    rows = np.array(sorted({i for i, _ in bad}), np.int64)
    sub_dig, sub_head = np.ascontiguousarray(dig[:, rows]), np.ascontiguousarray(head[rows])
    for c in sorted({c for _, c in bad}):
        for x in _rows(sub_dig, sub_head, k, c):
            frac = (d * x) & ((1 << sh) - 1)
            f = Fraction(frac >> (sh - 128), 1 << 128).limit_denominator(1 << 48)
            if f.denominator > 1 and abs(Fraction(frac, 1 << sh) - f) < Fraction(1, 1 << 110):
                wider = math.lcm(wider, f.denominator)
    return wider


def _far(dig, head, k, d, rows, m) -> list[tuple[int, int]]:
    """The (row, column) pairs among ``rows`` where ``d X / 2^(kT)`` is not close to an integer."""
    T = dig.shape[0]
    shift = k * T
    one = flint.fmpz(1) << shift
    tol = flint.fmpz(1) << (shift - 32)
    fd = flint.fmpz(d)
    bad = []
    sub_dig = np.ascontiguousarray(dig[:, rows])
    sub_head = np.ascontiguousarray(head[rows])
    for c in range(m):
        for i, x in zip(rows.tolist(), _rows(sub_dig, sub_head, k, c), strict=True):
            p = fd * flint.fmpz(x)
            zi = (p + (one >> 1)) >> shift
            if abs(p - zi * one) > tol:
                bad.append((i, c))
    return bad


def _certified(A, B, dig, head, k, d, keep=None) -> tuple[list[list[int]] | None, list[tuple[int, int]]]:
    """``z = round(d X / 2^(kT))`` for every row and column when ``A z = d B`` holds exactly, else None and the
    (row, column) pairs where ``d X / 2^(kT)`` is not close to an integer (``d`` misses their denominator).

    ``X`` holds the leading ``T`` digit rows only: with ``2^(kT) > d 2^160`` the rest moves ``d X`` by far less
    than the tolerance. The products are FLINT's. With ``keep`` (rows), only those rows of ``z`` are returned
    (the others are checked and dropped: their numbers are the bulk of the memory).
    """
    n, m = B.shape
    T = dig.shape[0]
    sh = k * T
    one = flint.fmpz(1) << sh
    half = flint.fmpz(1) << (sh - 1)
    tol = flint.fmpz(1) << (sh - 32)
    fd = flint.fmpz(d)
    indptr, indices, data = A.indptr.tolist(), A.indices.tolist(), A.data.tolist()
    out = []
    bad = []
    for c in range(m):
        z = []
        for i, x in enumerate(_rows(dig, head, k, c)):
            p = fd * flint.fmpz(x)
            zi = (p + half) >> sh
            if abs(p - zi * one) > tol:
                bad.append((i, c))
                if len(bad) >= 8:
                    return None, bad
            z.append(int(zi))
        if bad:
            continue
        bc = B[:, c].tolist()
        for i in range(n):
            s = 0
            for e in range(indptr[i], indptr[i + 1]):
                s += data[e] * z[indices[e]]
            if s != d * bc[i]:
                return None, bad
        out.append(z if keep is None else {int(i): z[i] for i in keep})
        del z
    return (out if not bad else None), bad
