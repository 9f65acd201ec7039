"""The forward pass: the length distribution and the visits block of the chain seen from the mover, from one
push a turn, when the seat to move on turn t is always t mod N (see :mod:`~markov_oca.goose.push_kernels`).

:func:`forward_pass` splits the rows in parts (:func:`_split`), then a :class:`_Pass` plays the turns
(:meth:`_Pass.march`) and :func:`_visits` makes the block of what it pushed.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..analysis.chain import LengthDistribution, Structure
from ..core.errors import SolverError
from ..linalg.certify import push_rounding
from ..linalg.solve import THREADS, SolveReport, _shifted_adjoint_residual, shifted_adjoint_solve
from .push_kernels import (
    _mid_back,
    _mids_sweep,
    _push_part,
    _push_skipped,
    _residual_part,
    _residual_sums,
    _split_parts,
    _sweep_depth,
    _take,
    _total,
    _turn_shifts,
)
from .rotated_chain import RotatedChain

VISITS_L1 = 1e-10  # the forward pass goes on until the sum of its true residual is below this
POLISH_STATES = 2_000_000  # states up to which a rest that the pass leaves above VISITS_L1 is solved for (cheap)
DROP_FACTOR = 1e-12  # above POLISH_STATES, a row holding less than DROP_FACTOR * VISITS_L1 is let go
PARALLEL_PASS = 1_000_000  # states from which the forward pass runs in two parts


def turn_columns(rc: RotatedChain) -> bool:
    """Whether the seat to move on turn t is always t mod N (then :func:`forward_pass` gives the visits)."""
    c = rc.chain
    return bool(_turn_shifts(c.next, rc.shift, c.turn_start, rc.n_states))


def _parts(rc: RotatedChain, n_parts: int) -> tuple[np.ndarray, np.ndarray]:
    """Which part owns each row as a source (by l_1) and as a target (by l_0): contiguous ranges of the
    local state, balanced by the branches pushed from them."""
    c = rc.chain
    ns, L = rc.n_states, rc.model.n_local
    ids = c.state_ids
    d1 = (ids // L) % L
    weight = np.bincount(d1, weights=(c.next[:ns] >= 0).sum(axis=1), minlength=L)
    cum = np.cumsum(weight) / max(1.0, float(weight.sum()))
    part_of = np.minimum((cum * n_parts - 1e-9).astype(np.int64), n_parts - 1)
    part_of = np.maximum.accumulate(np.maximum(part_of, 0))
    return part_of[d1].astype(np.int8), part_of[ids % L].astype(np.int8)



@dataclass
class _Split:
    """The rows split in parts that push apart (see :mod:`~markov_oca.goose.push_kernels`).

    ``code, end, mask, bits``: each row's branches as its part pushes them (:func:`_split_parts`);
    ``seg_lo, seg_hi``: runs of rows owned by one part, grouped by part from ``seg_ptr[q]``; ``skipped[q]``:
    the branches left out of the codes that part ``q`` pushes (before its own), ``skipped_mid[q]`` those of
    them from rows that throw again (pushed after each mid-turn sweep), ``mid_src`` the rows these read;
    ``mid_rows[q]``: part ``q``'s rows where the mover throws again (``is_mid``).
    """

    n_parts: int
    code: np.ndarray
    end: int
    mask: int
    bits: int
    seg_lo: np.ndarray
    seg_hi: np.ndarray
    seg_ptr: np.ndarray
    skipped: list
    skipped_mid: list
    mid_src: np.ndarray
    mid_rows: list
    is_mid: np.ndarray


def _split(rc: RotatedChain, st: Structure, n_parts: int) -> _Split:
    """The rows of ``rc`` split in ``n_parts`` parts (see :class:`_Split`)."""
    c = rc.chain
    ns, n = rc.n_states, c.n
    src_part, tgt_part = _parts(rc, n_parts)
    # A branch into a turn's start is pushed by the part that owns the target's l_0 (every branch from the
    # rows sharing l_1 ends in rows with that l_0); a branch into a row where the mover throws again by the
    # part that owns the target's l_1 (such a branch stays among the rows sharing (l_1, l_2, ...), so with
    # its source). Any such ownership keeps the parts' writes apart; this one skips the fewest branches.
    is_mid = np.zeros(n, np.bool_)
    is_mid[:ns] = st.transient[:ns] & ~c.turn_start[:ns]
    owner = np.where(is_mid[:ns], src_part, tgt_part).astype(np.int8)
    code, end, mask, bits, e_src, e_j = _split_parts(c.next, c.pnum, ns, n_parts, src_part, owner)
    # the skipped branches by the part owning their target (pushed by it, before the parts' own branches),
    # those from rows that throw again apart (pushed after each mid-turn sweep)
    e_own = owner[c.next[e_src, e_j]] if e_src.size else np.zeros(0, np.int8)
    e_mid = is_mid[e_src]
    skipped = [(e_src[e_own == q], e_j[e_own == q]) for q in range(n_parts)]
    skipped_mid = [(e_src[e_mid & (e_own == q)], e_j[e_mid & (e_own == q)]) for q in range(n_parts)]
    mid_src = np.unique(e_src[e_mid]).astype(np.int64)  # rows whose ``pushed`` the skipped ones read
    mid_rows = [np.flatnonzero(is_mid[:ns] & (src_part == q)) for q in range(n_parts)]
    del e_src, e_j, e_own, e_mid, owner
    # segments: runs of rows owned by one part, grouped by part
    cut = np.flatnonzero(np.diff(src_part)) + 1
    lo = np.concatenate([[0], cut]).astype(np.int64)
    hi = np.concatenate([cut, [ns]]).astype(np.int64)
    owner = src_part[lo]
    by = np.argsort(owner, kind="stable")
    seg_ptr = np.searchsorted(owner[by], np.arange(n_parts + 1))
    return _Split(n_parts, code, end, mask, bits, lo[by], hi[by], seg_ptr, skipped, skipped_mid, mid_src, mid_rows,
                  is_mid)


@dataclass
class _March:
    """What :meth:`_Pass.march` leaves: the length's pmf (per outcome) to turn ``t_len`` with its tail and the
    mass never ending then, the turns played, the visits ``acc`` (with the last N turns' ``last``), the true
    residual (largest, summed) and the factor ``f`` of ``last`` in the geometric series (0: none) with its
    ratio ``q``."""

    pmf: np.ndarray
    t_len: int
    left_len: float
    dead_len: float
    t: int
    acc: np.ndarray
    last: np.ndarray
    r_max: float
    r_sum: float
    f: float
    q: float


class _Pass:
    """One forward pass over ``rc``'s rows split as ``sp``: the mass in play, pushed a turn at a time.

    A big chain lets go of the rows that hold less than ``eps`` (DROP_FACTOR * VISITS_L1; late in a long game
    most rows hold less than 1e-22: at turn 600 of four-player oca-moderna 81% of them, 9e-17 together). What
    is let go (``dropped``) is counted in the length's tail and, being visits never pushed on, in the true
    residual (which the check computes).
    """

    def __init__(self, rc: RotatedChain, st: Structure, sp: _Split, eps: float):
        c = rc.chain
        self.rc, self.st, self.sp, self.eps = rc, st, sp, eps
        self.ns, self.N, self.n = rc.n_states, rc.players, c.n
        self.inv = 1.0 / c.denom
        self.dropped = 0.0
        # the pushes any mass has taken (for the rounding of every mass: the main push, then per mid-turn
        # round the deepest sweep and the skipped branches' push), and the mass a turn's sweeps left behind
        # (it ends a turn late)
        self.pushes = 0
        self.late = 0.0
        self.pool = ThreadPoolExecutor(sp.n_parts) if sp.n_parts > 1 else None
        self.mids = np.flatnonzero(sp.is_mid)
        self.deads = np.flatnonzero(st.deadlock[:self.ns])
        size = self.n + sp.n_parts * self.N
        self.bufs = [np.zeros(size), np.zeros(size)]  # the mass in play, and the next turn's
        self.mid = np.zeros(size)  # the mass pushed on within a turn, and a scratch for the deadlocked
        self.pushed = np.zeros(self.n if self.mids.size else 1)  # what each row that throws again pushed this turn
        self.backs = [_mid_back(sp.code, sp.end, sp.mask, r, sp.is_mid) for r in sp.mid_rows]
        self.depth = int(_sweep_depth(c.next, sp.is_mid)) if self.mids.size else 0

    def run(self, f, jobs) -> list:
        """``f`` on each job's arguments, on the parts' threads."""
        return [f(*a) for a in jobs] if self.pool is None else list(self.pool.map(lambda a: f(*a), jobs))

    def slots_out(self, w: np.ndarray) -> np.ndarray:
        """The mass in ``w``'s outcome slots, per outcome (the slots left zero)."""
        slots = w[self.n:]
        out = slots.reshape(self.sp.n_parts, self.N).sum(axis=0)
        slots[:] = 0.0
        return out

    def push(self, v: np.ndarray, w: np.ndarray, acc: np.ndarray) -> np.ndarray:
        """One turn's push of ``v`` into ``w`` (``v`` left zero); the mass into each outcome."""
        c, sp, inv, eps = self.rc.chain, self.sp, self.inv, self.eps
        self.run(_push_skipped, [(c.next, c.pnum, a, b, inv, v, w, eps) for a, b in sp.skipped])
        self.dropped += sum(self.run(_push_part, [(sp.code, sp.end, sp.mask, sp.bits, sp.seg_lo, sp.seg_hi,
                                                   int(sp.seg_ptr[q]), int(sp.seg_ptr[q + 1]), inv, v, w, acc, eps)
                                                  for q in range(sp.n_parts)]))
        return self.slots_out(w)

    def play(self, into: np.ndarray) -> tuple[np.ndarray, float]:
        """One turn, its visits added to ``into``: the mass into each outcome, and the mass deadlocked."""
        c, sp, inv = self.rc.chain, self.sp, self.inv
        v, w = self.bufs
        out = self.push(v, w, into)
        self.pushes += 2  # the push, and the sum of the parts' outcome slots (counted as one more)
        first = None
        while self.mids.size:
            # each part's sweeps, then the skipped branches of what they pushed (which may stop in a row
            # that throws again: then another sweep). Throws again that can come back round (a cycle) would
            # sweep until the mass underflows: what is left below 1e-17 of the first sweep's mass stays in
            # play and is pushed with the next turn (in its seat's column: an error the residual counts).
            res = self.run(_mids_sweep, [(sp.code, sp.end, sp.mask, sp.bits, inv, sp.mid_rows[q], self.backs[q], w,
                                          self.pushed, into) for q in range(sp.n_parts)])
            moved = sum(r[0] for r in res)
            self.pushes += self.depth + 2  # the sweep, the skipped branches, the outcome slots
            first = moved if first is None else first
            if moved > 0.0 and sp.mid_src.size:
                self.run(_push_skipped, [(c.next, c.pnum, a, b, inv, self.pushed, w, 0.0) for a, b in sp.skipped_mid])
                self.pushed[sp.mid_src] = 0.0
            out += self.slots_out(w)
            if not (any(r[1] for r in res) or (moved > 0.0 and sp.mid_src.size)):
                break
            if moved <= 1e-17 * first:
                self.late += 2.0 * moved  # what the last sweep pushed back into rows that throw again
                break
        dead_now = _take(self.deads, w, self.mid) if self.deads.size else 0.0
        if self.deads.size:
            self.mid[self.deads] = 0.0
        self.bufs.reverse()
        return out, dead_now

    def residual(self, acc: np.ndarray, last: np.ndarray, f: float) -> tuple[float, float]:
        """The true residual of the visits ``acc + f last``, largest and summed, from the branches (both parts)."""
        c, sp, rc = self.rc.chain, self.sp, self.rc
        into = np.zeros((self.n, self.N))
        self.run(_residual_part, [(sp.code, sp.end, sp.mask, sp.bits, sp.seg_lo, sp.seg_hi, int(sp.seg_ptr[q]),
                                   int(sp.seg_ptr[q + 1]), c.next, c.pnum, a, b, rc.shift, self.inv,
                                   self.st.transient, c.turn_start, acc, last, f, into)
                                  for q, (a, b) in enumerate(sp.skipped)])
        return _residual_sums(into, acc, last, f, self.st.transient, c.init)

    def march(self, tail: float, max_turns: int, progress, l1: float = VISITS_L1) -> _March:
        """Turns until the length's tail is under ``tail``, then N more, each into its own column; the turns
        after them are taken as a geometric series of those N (by then the mass in play shrinks by a steady
        factor every N turns) when that brings the true residual's sum, which bounds the error of every total,
        under ``l1`` (VISITS_L1 unless told). Otherwise on (a hundredth of the mass at a time) and again."""
        from ..core.interrupt import check

        N, ns, c = self.N, self.ns, self.rc.chain
        acc = np.zeros((N, self.n))
        last = np.zeros((N, self.n))
        self.bufs[0][c.init] = 1.0 if self.st.transient[c.init] else 0.0
        pmf = np.zeros((1024, N))
        left, dead = _total(self.bufs[0], ns), 0.0
        lefts = [left]
        stop = tail
        t = 0
        t_len = None
        clock = time.perf_counter()
        while True:
            while left >= stop and t < max_turns:
                t += 1
                d0 = self.dropped
                out, dead_now = self.play(acc[(t - 1) % N])
                if t_len is None:
                    if t >= pmf.shape[0]:
                        pmf = np.concatenate([pmf, np.zeros_like(pmf)])
                    pmf[t] = out
                dead += dead_now
                left = left - float(out.sum()) - dead_now - (self.dropped - d0) if t % 64 else \
                    _total(self.bufs[0], ns)
                if left < stop:
                    left = _total(self.bufs[0], ns)
                if t_len is None and left + self.dropped < tail:
                    t_len, left_len, dead_len = t, left + self.dropped, dead
                lefts.append(left)
                if time.perf_counter() - clock > 0.1:
                    check()
                    clock = time.perf_counter()
                    if progress is not None:
                        progress(t, left)
            if t_len is None:
                t_len, left_len, dead_len = t, left + self.dropped, dead
            last[:] = 0.0
            k = 0
            while k < N and t < max_turns and left > 0:
                t += 1
                k += 1
                out, dead_now = self.play(last[(t - 1) % N])
                dead += dead_now
                left = _total(self.bufs[0], ns)
                lefts.append(left)
            acc += last
            # Without the series, the residual is the mass still in play (in column t mod N) and the mass let go.
            r_max = max(float(np.abs(self.bufs[0][:ns]).max(initial=0.0)), self.eps if self.dropped else 0.0)
            r_sum, f, q = left + self.dropped, 0.0, 0.0
            if k == N and len(lefts) > 2 * N and lefts[-1 - N] > 0:
                q = lefts[-1] / lefts[-1 - N]
                if 0.0 < q < 1.0:
                    g_max, g_sum = self.residual(acc, last, q / (1.0 - q))
                    if g_sum < r_sum:
                        r_max, r_sum, f = g_max, g_sum, q / (1.0 - q)
            if r_sum <= l1 or t >= max_turns or left == 0:
                break
            stop = min(stop, left) * 1e-2
        if self.pool is not None:
            self.pool.shutdown()
        return _March(pmf, t_len, left_len, dead_len, t, acc, last, r_max, r_sum, f, q)

    def let_go(self) -> np.ndarray:
        """The mass still in play; every other buffer let go (before the visits' block is made)."""
        v = self.bufs[0]
        self.sp.code = self.bufs = self.mid = self.pushed = self.backs = self.sp.is_mid = None
        return v


def forward_pass(rc: RotatedChain, st: Structure, tail: float, max_turns: int = 1_000_000,
                 parts: int | None = None, progress=None,
                 l1: float = VISITS_L1) -> tuple[LengthDistribution, np.ndarray, SolveReport]:
    """The length distribution to ``tail`` and the visits block, from one push a turn.

    After the length's tail, N more turns are played, each into its own column; the turns after them are
    added as a geometric series of those N (the mass in play shrinks by a steady factor by then), kept
    when the true residual of the visits' system, summed, is then under ``l1``. Otherwise the push goes
    on (a hundredth of the mass at a time) and tries again; a small chain solves for the rest instead.
    The report gives the largest true residual.

    Parameters
    ----------
    rc, st:
        The chain seen from the mover and its structure; the seat to move on turn t must be t mod N
        (:func:`turn_columns`).
    tail:
        The length distribution is carried until this mass is left.
    max_turns:
        Turns after which the pass stops (a SolverError when the residual is still too large).
    parts:
        Parts the rows are split in (default: two from PARALLEL_PASS states, on two cores).
    progress:
        Called with the turn and the mass in play, about every 0.1 s.
    l1:
        The true residual's sum the visits are pushed to (the certified figures ask for less than VISITS_L1).
    """
    ns = rc.n_states
    # two parts from a million states (below that, a thread's start each turn costs more than it saves)
    n_parts = max(1, (min(THREADS, 2) if ns >= PARALLEL_PASS else 1) if parts is None else parts)
    # A small chain lets nothing go, and solves for what the pass leaves when the series fails.
    small = ns <= POLISH_STATES
    p = _Pass(rc, st, _split(rc, st, n_parts), 0.0 if small else DROP_FACTOR * VISITS_L1)
    m = p.march(tail, max_turns, progress, l1)
    # every mass is off by the rounding of its pushes; the mass let go or left a turn late moves the pmf too
    dist = LengthDistribution(m.pmf[:m.t_len + 1].sum(axis=1), float(m.dead_len), float(m.left_len),
                              by_outcome=m.pmf[:m.t_len + 1].copy(), rounding=push_rounding(rc.chain.next, p.pushes),
                              misplaced=(p.dropped + p.late) * (1 + 1e-6))
    dropped, eps = p.dropped, p.eps
    v = p.let_go()
    del p
    method = f"forward pass of {m.t} turns" + (f" (rows under {eps:.0e} let go: {dropped:.1e} in all)"
                                               if dropped else "")
    vis, residual, method = _visits(rc, st, m, v, method, small, l1)
    if not residual <= 1e-9:
        raise SolverError(f"expected visits: residual {residual:.3g} is too large")
    return dist, vis, SolveReport(method, residual, m.t)


def _visits(rc: RotatedChain, st: Structure, m: _March, v: np.ndarray, method: str,
            small: bool, l1: float) -> tuple[np.ndarray, float, str]:
    """The visits block (state, seat) from what the pass pushed (``m``, and ``v`` still in play), its largest
    true residual and the method's words; a small chain solves for the rest when the pass leaves too much."""
    c, N, ns = rc.chain, rc.players, rc.n_states
    acc = m.acc
    if m.f:
        acc += m.f * m.last
        method += f", then the rest as a geometric series ({m.q:.4g} of the mass left after {N} turns)"
    m.last = None
    vis = np.ascontiguousarray(acc.T)
    m.acc = acc = None
    vis[~st.transient] = 0.0
    residual = m.r_max
    if m.r_sum > l1 and small:
        # a small chain: what is still in play is solved for instead (a few iterations of the shifted solve)
        if m.f:
            raise AssertionError("unreachable: the series is kept only under l1")
        rest = np.zeros((c.n, N))
        rest[:ns, m.t % N] = v[:ns]
        more, rep = shifted_adjoint_solve(c.next, c.pnum, rc.shift, c.denom, st.transient, c.order(), rest,
                                          tol=1e-15)
        vis += more
        b = np.zeros((c.n, N))
        b[c.init, 0] = 1.0
        residual = float(_shifted_adjoint_residual(c.next, c.pnum, rc.shift, 1.0 / c.denom, st.transient, b, vis))
        method += f", then {rep.method} for the rest ({rep.iterations} iterations)"
    return vis, residual, method
