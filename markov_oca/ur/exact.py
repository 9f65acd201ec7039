"""Exact small Ur games at the position level: winning chances, throws and turns as fractions.

The policy chains (:mod:`.chain`) carry each position four times (which real side moves,
whether the turn is under way) and are densely tied, so the exact sparse solver of the
chains does not finish on two pieces. Here the unknowns are the positions themselves, seen
from the side to move (:mod:`.state`), with the throw distribution and the policies'
choices folded into each equation.

**The systems.** With every probability an integer over ``D`` (16 for the throws, times the
lcm of the numbers of moves a random choice picks among), a position ``s`` not over, a throw
``t`` (``p_t``) and a move ``m`` chosen with weight ``w`` give ``p_t w`` to one of: the
mover wins, the mover loses, the same side moves again from ``succ`` (a rosette) or the
other side moves from ``succ`` (mirrored).

* *Both sides play the same policy* (the mirror symmetry): one unknown per position. The
  chance ``W`` that the side to move wins solves ``D W = sum_again pw W[succ] + sum_other
  pw (1 - W[succ]) + sum_win pw``: the matrix ``D I - Q_again + Q_other``. The throws
  ``Y`` and turns ``Z`` still to come (the turn under way counted once) solve
  ``(D I - Q_again - Q_other) Y = D`` and ``... Z = D - sum_again pw`` (a rosette's throw
  continues the turn). Two matrices of one pattern, on the positions the start reaches.
* *Different policies*: one unknown per position and side to move (``D I - Q``, ``Q >= 0``):
  light's and dark's chances to win, throws and turns in one system of twice the size.

**The solver** (:func:`solve_exact`): numeric-symbolic lifting (Wan's algorithm) on float
LUs. The equations' strongly connected components (only captures, and a pass answered by a
pass, lead back) taken in dependency order make the matrix block lower triangular
(:func:`scc_blocks`: 1,278 components on two pieces, the largest of 1,384); merged into
blocks of about 1,000 rows, each has its own SuperLU factorisation (fill 446K in all against
4.5M for one LU of the whole). With ``r_0 = B`` each step solves ``A x = r_i`` in floats
block after block, rounds ``x_i = round(2^k x)`` and takes the exact residual
``r_{i+1} = 2^k r_i - A x_i`` (int64; it stays small because the float solve is good to more
than ``k`` bits: ``k = 40`` here, against 26 bits a step for p-adic lifting). After ``K``
steps ``X = sum x_i 2^(k (K-1-i))`` is ``2^(kK) A^-1 B`` to within ``|A^-1| |r_K|``. The
fractions of the start and of a random combination of all rows are recovered from their
``X`` by a 2 x 2 lattice reduction (FLINT); their denominators' lcm, times ``SMOOTH^8``,
is ``d``. Then ``z = round(d X / 2^(kK))`` for every row (the leading digits of ``X``
suffice, so only as many digit rows are kept as ``d`` can need: ``d`` divides ``det A``,
whose size the float LU gives) and ``A z = d B`` is checked over the integers, row by row.
That identity *proves* ``z / d`` is the solution once ``A`` is nonsingular, which
:func:`weakly_chained_dominant` proves (every row weakly diagonally dominant, and each
reaches a strictly dominant one: the game can end from every position). Nothing rests on
the floats but the speed: a poor float step fails the contraction check and the lifting
restarts with 8 bits fewer; a wrong ``d`` fails the final check.

The reach: one piece (217 positions) in well under a second; two pieces (12,786 positions
reached, both optimal) in about 20 s of CPU, random against random about 25 s, light random
against dark optimal (25,722 unknowns, 24,722-digit denominators) about 2.2 min; three pieces
(264,304 positions) is refused with its estimate (:func:`estimate`: the kept digits alone
would need over a hundred GB).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order, connected_components

from ..core.errors import SolverError, TooLargeError
from .kernel import AGAIN, GAME_OVER, MOVER_WINS, UrMoves, moves
from .rules import UrRules
from .state import UrSpace

__all__ = ["EXACT_PIECES", "ExactSolution", "PositionSystem", "estimate", "mirror_systems", "policy_numerators",
           "side_system", "solve_exact", "solve_ur_exact", "weakly_chained_dominant"]

#: The small primes a random combination may lose (as :data:`markov_oca.exact_sparse.SMOOTH`).
SMOOTH = 2 * 3 * 5 * 7 * 11 * 13
#: Pieces a side up to which ``solve ur --exact`` runs (above: refused with the estimate).
EXACT_PIECES = 2


# ----------------------------------------------------------------------------- the systems


def policy_numerators(mv: UrMoves, policy: str | Callable, values: np.ndarray | None,
                      space: UrSpace) -> tuple[np.ndarray, int]:
    """(k, T, 7) integer weights of the moves a policy plays, over the returned common denominator.

    ``random`` weighs the ``n`` legal moves ``L / n`` (``L`` the lcm of the counts met); a
    deterministic policy (greedy, optimal, a callable) weighs its move ``1`` (``L = 1``).
    """
    from .chain import policy_weights

    w = policy_weights(mv, policy, values, space)
    counts = np.unique(mv.n_moves[mv.n_moves > 0]).tolist() if isinstance(policy, str) and policy == "random" else [1]
    L = math.lcm(*[int(c) for c in counts]) if counts else 1
    wi = np.rint(w * L).astype(np.int64)
    if np.abs(wi - w * L).max(initial=0.0) > 1e-9:
        raise SolverError(f"the {policy!r} policy's weights are not multiples of 1/{L}")
    return wi, L


def _throw_numerators(mv: UrMoves) -> tuple[np.ndarray, int]:
    probs = [Fraction(p).limit_denominator(1 << 20) for p in mv.probs]
    den = math.lcm(*(p.denominator for p in probs))
    return np.array([int(p * den) for p in probs], np.int64), den


@dataclass
class PositionSystem:
    """``A x = B`` over the unknowns ``index`` (integers; ``A = D I - ...``), one column per name."""

    A: sp.csr_array
    B: np.ndarray  # (n, m) int64, nonnegative
    columns: list[str]
    index: np.ndarray  # unknown -> position (mirror) or 2 * position + side (sides)
    start: int  # the unknown of the game's start (light to move, all pieces in hand)
    D: int
    kind: str  # "mirror" (one policy for both) or "sides"

    @property
    def n(self) -> int:
        return self.A.shape[0]


def _moves_table(mv: UrMoves, wi: np.ndarray, pn: np.ndarray):
    """Per (position, throw, move) with weight > 0: the position, p w, the successor and the event kind."""
    S = mv.succ.shape[0]
    wt = wi * pn[None, :, None]
    use = (wt > 0) & ~mv.terminal[:, None, None]
    s = np.broadcast_to(np.arange(S)[:, None, None], wt.shape)[use]
    ev = mv.events[use]
    over = (ev & GAME_OVER) != 0
    return s, wt[use], mv.succ[use].astype(np.int64), over, (ev & MOVER_WINS) != 0, (ev & AGAIN) != 0


def _reach(S: int, rows: np.ndarray, cols: np.ndarray, start: int) -> np.ndarray:
    g = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(S, S))
    return np.sort(breadth_first_order(g, start, directed=True, return_predecessors=False))


def mirror_systems(rules: UrRules, policy: str | Callable, values: np.ndarray | None = None,
                   mv: UrMoves | None = None, space: UrSpace | None = None,
                   reachable: bool = True) -> tuple[PositionSystem, PositionSystem]:
    """Both sides playing ``policy``: the win system ``W`` and the totals system (``throws``, ``turns``).

    The unknowns are the positions the start reaches (``reachable``) or every position not over.
    """
    space = space or UrSpace(rules.pieces)
    mv = mv if mv is not None else moves(space, None, rules)
    wi, L = policy_numerators(mv, policy, values, space)
    pn, den = _throw_numerators(mv)
    D = den * L
    S = space.size
    s, pw, succ, over, wins, again = _moves_table(mv, wi, pn)
    start_pos = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    go = ~over
    if reachable:
        keep = _reach(S, s[go], succ[go], start_pos)
    else:
        keep = np.flatnonzero(~mv.terminal)
    loc = np.full(S, -1, np.int64)
    loc[keep] = np.arange(keep.size)
    n = keep.size
    inside = loc[s] >= 0
    s, pw, succ, over, wins, again = (a[inside] for a in (s, pw, succ, over, wins, again))
    go = ~over
    r, c = loc[s[go]], loc[succ[go]]
    if (c < 0).any():
        raise SolverError("a move that does not end the game leaves the reachable positions")
    diag = (np.arange(n), np.arange(n))
    other = go & ~again
    b_win = np.bincount(loc[s], weights=np.where((over & wins) | other, pw, 0), minlength=n)
    aw = sp.coo_array((np.concatenate([np.where(again[go], -pw[go], pw[go]), np.full(n, D)]),
                       (np.concatenate([r, diag[0]]), np.concatenate([c, diag[1]]))), shape=(n, n)).tocsr()
    at = sp.coo_array((np.concatenate([-pw[go], np.full(n, D)]),
                       (np.concatenate([r, diag[0]]), np.concatenate([c, diag[1]]))), shape=(n, n)).tocsr()
    b_again = np.bincount(loc[s], weights=np.where(again & go, pw, 0), minlength=n)
    B_tot = np.stack([np.full(n, D), D - b_again], axis=1).astype(np.int64)
    for a in (aw, at):
        a.sum_duplicates()
    st = int(loc[start_pos])
    return (PositionSystem(sp.csr_array(aw, dtype=np.int64), np.rint(b_win).astype(np.int64)[:, None], ["win"],
                           keep, st, D, "mirror"),
            PositionSystem(sp.csr_array(at, dtype=np.int64), B_tot, ["throws", "turns"], keep, st, D, "mirror"))


def side_system(rules: UrRules, light: str | Callable, dark: str | Callable, values: np.ndarray | None = None,
                mv: UrMoves | None = None, space: UrSpace | None = None) -> PositionSystem:
    """Light and dark playing their own policies: unknowns (position, side to move), 0 light, 1 dark.

    Columns: ``light wins``, ``dark wins``, ``throws``, ``turns``.
    """
    space = space or UrSpace(rules.pieces)
    mv = mv if mv is not None else moves(space, None, rules)
    pn, den = _throw_numerators(mv)
    num = [policy_numerators(mv, p, values, space) for p in (light, dark)]
    L = math.lcm(num[0][1], num[1][1])
    D = den * L
    S = space.size
    parts = []
    for side, (wi, Ls) in enumerate(num):
        s, pw, succ, over, wins, again = _moves_table(mv, wi * (L // Ls), pn)
        nxt = 2 * succ + np.where(again, side, 1 - side)
        winner = np.where(wins, side, 1 - side)
        parts.append((2 * s + side, pw, nxt, over, winner, again))
    u, pw, nxt, over, winner, again = (np.concatenate([p[i] for p in parts]) for i in range(6))
    start = 2 * space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    go = ~over
    keep = _reach(2 * S, u[go], nxt[go], start)
    loc = np.full(2 * S, -1, np.int64)
    loc[keep] = np.arange(keep.size)
    n = keep.size
    inside = loc[u] >= 0
    u, pw, nxt, over, winner, again = (a[inside] for a in (u, pw, nxt, over, winner, again))
    go = ~over
    A = sp.coo_array((np.concatenate([-pw[go], np.full(n, D)]),
                      (np.concatenate([loc[u[go]], np.arange(n)]), np.concatenate([loc[nxt[go]], np.arange(n)]))),
                     shape=(n, n)).tocsr()
    A.sum_duplicates()
    rows = loc[u]
    cols = [np.bincount(rows, weights=np.where(over & (winner == k), pw, 0), minlength=n) for k in (0, 1)]
    cols += [np.full(n, D), D - np.bincount(rows, weights=np.where(again & go, pw, 0), minlength=n)]
    B = np.rint(np.stack(cols, axis=1)).astype(np.int64)
    return PositionSystem(sp.csr_array(A, dtype=np.int64), B, ["light wins", "dark wins", "throws", "turns"], keep,
                          int(loc[start]), D, "sides")


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
        # lowest terms: d = SMOOTH^8 d0 with d0 dividing the true common denominator, so the common
        # factor of d and every z divides SMOOTH^8 (small residues)
        g = math.gcd(SMOOTH ** 8, sol.d)
        for col in sol.z:
            for v in (col if keep_all else col.values()):
                if g == 1:
                    break
                g = math.gcd(g, v % g)
        if not keep_all:  # lowest terms of the kept row only
            g = math.gcd(g, *(col[tracked[0]] for col in sol.z))
        sol.d //= g
        if keep_all:
            sol.z = [[col[i] // g for i in where.tolist()] for col in sol.z]
        else:
            sol.z = [{wanted: col[tracked[0]] // g} for col in sol.z]
        seconds["total"] = time.perf_counter() - t0
        return sol


class _Track(SolverError):
    """Rows whose denominators the tracked rows miss: lift again with them tracked."""

    def __init__(self, rows, d):
        super().__init__("rows to track")
        self.rows, self.d = rows, d


def _lift(A, B, tracked, lu, inv_norm, k, top, max_steps, check_every, bar, task, seconds,
          keep_all) -> ExactSolution:
    """The lifting (module docstring). Only the first ``top`` digit rows of every row are kept (what the
    final ``z`` needs, from the float log-determinant); the ``tracked`` rows and a random combination of
    all rows keep every digit, as big integers grown block by block."""
    n, m = B.shape
    a_row = int(abs(A).sum(axis=1).max())
    alpha = 1 << k
    rng = np.random.default_rng(n)
    rho = rng.integers(1, 64, n).astype(np.int64)
    rho_sum = int(rho.sum())
    sample = np.sort(rng.choice(n, min(n, 256), replace=False))
    tracked = np.asarray(tracked, np.int64)
    raw = np.zeros((top, n, m), np.int64)
    acc = [[0] * (tracked.size + 1) for _ in range(m)]  # X of the tracked rows and of the combination
    pending: list[tuple[np.ndarray, list[int]]] = []  # digit rows not yet folded into acc
    r = B.copy()
    K = folded = 0
    normal = None
    stable = None
    next_check = 64
    t1 = time.perf_counter()
    lift = verify = 0.0
    while K < max_steps:
        rmax = int(np.abs(r).max())
        xh = lu.solve(r.astype(np.float64))
        xs = xh * float(alpha)
        if np.abs(xs).max() >= 2.0 ** 52:
            raise _Diverged(f"numeric lifting: {k} bits a step is too many for these values")
        xi = np.rint(xs).astype(np.int64)
        if int(np.abs(xi).max()).bit_length() + a_row.bit_length() > 62 or rmax.bit_length() + k > 62:
            raise _Diverged("numeric lifting: the residual would overflow int64")
        r = alpha * r - (A @ xi).astype(np.int64).reshape(n, m)
        if K < top:
            raw[K] = xi
        pending.append((xi[tracked].copy(), _split_sum(xi, rho)))
        K += 1
        if int(np.abs(r).max()) > max(rmax, 1 << 20):
            raise _Diverged("numeric lifting: a step did not contract (the float solve is not good enough)")
        if bar is not None and task is not None:
            bar.update(task, advance=1)
        if K < next_check:
            continue
        next_check = K + max(32, int(K * check_every))
        lift += time.perf_counter() - t1
        t2 = time.perf_counter()
        # fold the pending digit rows: X = X 2^(k b) + sum of the block's rows
        b_ = len(pending)
        for c in range(m):
            col = acc[c]
            for w in range(tracked.size + 1):
                v = 0
                for rows_, comb in pending:
                    v = (v << k) + (int(rows_[w, c]) if w < tracked.size else comb[c])
                col[w] = (col[w] << (k * b_)) + v
        pending.clear()
        folded = K
        shift = k * folded
        E = int(inv_norm * float(max(1, int(np.abs(r).max())))) + 2
        cand = []
        for c in range(m):
            cand.append(_approx_fraction(acc[c][0], shift, E))
            if cand[-1] is None:
                break
        if all(x is not None for x in cand):
            cand += [_approx_fraction(acc[c][tracked.size], shift, E * rho_sum) for c in range(m)]
            cand += [_approx_fraction(acc[c][w], shift, E) for c in range(m) for w in range(1, tracked.size)]
        if all(x is not None for x in cand):
            d = SMOOTH ** 8  # small primes cancel out of a random combination with fair chance: keep them
            for x in cand:
                d = math.lcm(d, x.denominator)
            T = min(K, top)
            if (K < top or k * T >= d.bit_length() + 160) and shift >= d.bit_length() + E.bit_length() + 40:
                if K < top:
                    dig, head = _normalise(raw[:T].copy(), k)
                else:  # the leading rows are final: normalise them in place, once
                    if normal is None:
                        normal = _normalise(raw, k)
                    dig, head = normal
                z = None
                for _ in range(4):
                    bad = _far(dig, head, k, d, sample, m)
                    if not bad:
                        z, bad = _certified(A, B, dig, head, k, d, None if keep_all else tracked[:1])
                    if z is not None or not bad:
                        break
                    wider = _missing_factor(dig, head, k, d, bad)  # d x_i = integer + a/b, b small: widen d by b
                    if wider == 1 or k * T < (d * wider).bit_length() + 160:
                        break
                    d *= wider
                if z is not None:
                    verify += time.perf_counter() - t2
                    seconds.update(lift=lift, verify=verify)
                    return ExactSolution(d=d, z=z, steps=K, bits=k, fill=0, seconds=seconds)
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


# ----------------------------------------------------------------------------- the game


def estimate(pieces: int) -> tuple[float, float]:
    """(seconds, bytes) of the exact same-policy solve for ``pieces`` a side, extrapolated from one and two pieces.

    Measured on two pieces (12,786 unknowns): 3.0 bits of denominator an unknown, 40 bits a
    step and twice the denominator's bits to lift, block fill 446K (3,395 on one piece: fill
    ~ n^1.2), about 3 ns a fill entry and column, and the leading digit rows of every row
    kept (``n log2 D / 40`` rows of 8 bytes a row and column).
    """
    n = UrSpace(pieces).size
    bits = 3.05 * n
    steps = 2 * bits / 40 * 1.07
    fill = 446e3 * (n / 12_786) ** 1.2
    seconds = 2 * steps * fill * 3e-9 * 2  # the win system and the totals (two columns)
    seconds += 2 * n * 2e-4 * (bits / 38_800) ** 1.6  # the products of the final check
    memory = (n * 4.5 / 40) * n * 8 * 2 + fill * 24
    return seconds, memory


def check_exact_size(rules: UrRules) -> None:
    """Refuse up front an exact solve above :data:`EXACT_PIECES` pieces, with its estimate."""
    if rules.pieces <= EXACT_PIECES:
        return
    from ..core.memory import gib

    secs, mem = estimate(rules.pieces)
    raise TooLargeError(f"{rules.name} with {rules.pieces} pieces: the exact position-level solve of "
                        f"{UrSpace(rules.pieces).size:,} positions would take about {secs / 3600:,.1f} hours and "
                        f"{gib(int(mem))} (extrapolated from one and two pieces); exact answers reach "
                        f"{EXACT_PIECES} pieces a side (drop --exact for floats)")


def solve_ur_exact(rules: UrRules, light: str | Callable = "optimal", dark: str | Callable = "optimal", *,
                   values: np.ndarray | None = None, tail: float = 1e-10, progress: bool = False,
                   residual: float | None = None):
    """Each side's chance to win, expected throws and turns as exact fractions (:class:`~markov_oca.results.UrResults`).

    The length distribution stays in floats (its mean given the end is the exact turns).

    Example
    -------
    >>> from markov_oca.ur.rules import load_ur
    >>> r = solve_ur_exact(load_ur("ur", {"pieces": 1}), "random", "random")
    >>> r.wins["light"] + r.wins["dark"] == 1, r.wins["light"].denominator > 1
    (True, True)
    """
    from ..analysis.results import Expectation, summarise_length
    from ..core.progress import progress_bar
    from .results import UrResults

    check_exact_size(rules)
    timer: dict[str, float] = {}
    space = UrSpace(rules.pieces)
    if values is None and "optimal" in (light, dark):
        from .optimal import solve_optimal

        t0 = time.perf_counter()
        opt = solve_optimal(rules)
        values, residual = opt.values, opt.residual
        timer["optimal"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    mv = moves(space, None, rules)
    same = (isinstance(light, str) and light == dark) or light is dark
    if same:
        systems = mirror_systems(rules, light, values, mv, space)
    else:
        systems = (side_system(rules, light, dark, values, mv, space),)
    timer["build"] = time.perf_counter() - t0
    solved = {}
    solver = []
    with progress_bar(progress) as bar:
        # two columns a lifting: every row's leading digits are kept, so memory grows with the columns
        groups = [(sys_, list(range(i, min(i + 2, len(sys_.columns))))) for sys_ in systems
                  for i in range(0, len(sys_.columns), 2)]
        for sys_, cols in groups:
            names = [sys_.columns[c] for c in cols]
            task = bar.add_task(f"exact {', '.join(names)} ({sys_.n:,} unknowns)", total=None)
            t0 = time.perf_counter()
            sol = solve_exact(sys_.A, sys_.B[:, cols], sys_.start, keep_all=False, bar=bar, task=task)
            timer["exact " + ", ".join(names)] = time.perf_counter() - t0
            for c, name in enumerate(names):
                solved[name] = sol.fraction(c, sys_.start)
            solver.append({"method": f"exact numeric lifting ({sol.bits} bits a step, verified A z = d B)",
                           "residual": 0.0, "iterations": sol.steps, "unknowns": sys_.n, "fill": sol.fill,
                           "denominator_digits": _digits(sol.d), "columns": names})
    if same:
        wins = {"light": solved["win"], "dark": 1 - solved["win"]}
    else:
        wins = {"light": solved["light wins"], "dark": solved["dark wins"]}
        if wins["light"] + wins["dark"] != 1:
            raise SolverError(f"the exact winning chances sum to {wins['light'] + wins['dark']}, not 1")
    t0 = time.perf_counter()
    dist = _length(rules, light, dark, values, tail)
    timer["length"] = time.perf_counter() - t0
    start = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    n_unknowns = sum(s.n for s in systems) if not same else systems[0].n
    return UrResults(
        rules=rules.name, title=rules.title, seed=rules.seed, source=rules.source, pieces=rules.pieces,
        light=light if isinstance(light, str) else getattr(light, "__name__", "callable"),
        dark=dark if isinstance(dark, str) else getattr(dark, "__name__", "callable"),
        options=dict(rules.options), states=n_unknowns, transitions=int(systems[0].A.nnz - systems[0].n),
        wins=wins,
        expected={k: Expectation(solved[k], solved[k]) for k in ("turns", "throws")},
        length=summarise_length(dist, solved["turns"]),
        optimal_value=float(values[start]) if values is not None else None,
        optimal_residual=residual,
        positions=space.size,
        solver=solver,
        timings=timer,
    )


def _length(rules, light, dark, values, tail):
    """The length distribution in floats: the sweeps' forward push (string policies) or the chain's."""
    if isinstance(light, str) and isinstance(dark, str):
        from .sweeps import length_distribution

        return length_distribution(rules, light, dark, values, tail=tail)
    from .chain import ur_chain

    return ur_chain(rules, light, dark, values).length_distribution(tail=tail)


def _digits(x: int) -> int:
    """Decimal digits of ``abs(x)`` (no str(): Python refuses over 4,300 digits by default)."""
    return len(str(flint.fmpz(abs(x))))
