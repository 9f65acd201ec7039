"""The length distribution of a pair of Ur policies: a forward push of the probability mass, one turn at a time.

The side to move is known from the turn's parity, so the mass lives on the positions alone, at their places
(:mod:`.pushorder`: ascending mover's pips). Within a turn a rosette gives the same side another throw, and
the mover's pips only grow along such throws; so the places are visited in order and the whole turn, rosettes
included, is one pass: a rosette's successor gets its mass in ``cur`` before its place is visited, so each
place is visited once with all its mass. Every other successor gets its mass in ``nxt``. A pass visits the
places ``lo..hi`` only (the span the last turn wrote, stretched by the rosettes as it goes), and a place with
less than ``eps`` is dropped, its mass counted.

With one thread that is one pass (:func:`_turn`), which also zeroes ``cur`` behind it. With more and a
``random`` side, the pass over the rosettes is made alone (:func:`_turn` with ``rosettes_only``), then the
threads spread the mass into ``nxt`` side by side (:func:`_spread`). Thread i owns the targets whose mover's
pips are in [Q_i, Q_i+1) (a slice of places); a move leaves the opponent's pips q as they were or lowers
them by a captured piece's (at most the path's length L, 14 on Bell's path), so it reads only the sources of
opponent's pips in [Q_i, Q_i+1 + L + 1): about 1/parts of the places each, no value written by two threads,
and each target gets its terms in the order one thread gives them (the same bits).

With deterministic policies, where no capture gives another throw, the threads make one pass
(:func:`_turn_split`): thread i takes the
sources whose opponent's pips lie in [Q_i, Q_i+1), level by level of the mover's pips. A rosette keeps the
opponent's pips and adds to the mover's: it lands later in the same thread's sources, so each thread carries
its own rosettes in place. Every other move lands where the mover's pips are the source's opponent's pips, or
fewer by a captured piece's (at most L): in thread i's own targets [Q_i, Q_i+1), except for captures that
cross below Q_i. Those go into a buffer of thread i's own (the places of mover's pips [Q_i - L, Q_i)), added
in after the pass. Each target gets its terms in one thread's order, plus that buffer's sum: not the bits of
one thread, but the same bits for the same number of threads.

Where a capture can give another throw (RoyalUr's Blitz; a rosette that throws again and does not protect),
that throw lowers the opponent's pips within the turn, so the split by the opponent's pips does not carry
it: deterministic policies then take the one pass in place order, and the spread, as ``random`` does.

A turn gives (mass the mover won, mass the mover lost, throws made: the mass visited, mass moved into
``nxt``, mass dropped, the span of ``nxt`` written, the end of the span of ``cur`` visited).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

from ..analysis.chain import LengthDistribution
from ..core.prefetch import prefetch
from ..core.progress import progress_bar
from ..linalg.certify import two_sum
from .bound import TableSums, ThrowsBound, bound_on_tables, smaller_side, sums_on_tables, swept_bytes
from .policy import deterministic, drop_pages, policy_code, policy_codes
from .pushmoves import push_tables, tables_bytes
from .pushorder import push_placement, split_bounds, thread_slices
from .rules import UrRules
from .state import space_of
from .storage import is_fixed, row_count, row_entry, row_first
from .sweepbounds import moves_a_throw

__all__ = ["PushResult", "length_distribution", "push_bytes", "push_lengths"]

#: The one-pass push's threads are cut again by the mass every this many turns.
RESPLIT = 4
PUSH_AHEAD = 64  # the one-pass push prefetches the targets of the place this far on (six pieces: 0.68-0.72 s a turn
# without, 0.56-0.60 with; 8 ahead 0.69-0.71, 192 ahead 0.61-0.62)




#: What :func:`_place` does with a place's mass: all of it (a turn in one pass), only the rosettes' (within
#: ``cur``; the rest counted, not written), only the moves into a window of ``nxt`` (nothing counted).
TURN, ROSETTES, SPREAD = 0, 1, 2


@numba.njit(cache=True, inline="always")
def _place(store, probs, cur, nxt, s, m, mode, hi, nlo, nhi, sums, tlo, thi):
    """Push the mass ``m`` of place ``s`` as ``mode`` says (a constant where inlined, so its tests fold away); the
    running (end of the span of ``cur``, span of ``nxt``, (won, lost, moved) with their compensations)."""
    won, k_won, lost, k_lost, moved, k_moved = sums
    e = row_first(store, s)
    for t in range(probs.shape[0]):
        k = row_count(store, s, t)
        if k == 0:
            continue
        q = m * probs[t] / k
        for _ in range(k):
            c = row_entry(store, s, t, e)
            e += 1
            if c >= 0:
                j = c >> 1
                if c & 1:
                    if mode != SPREAD:
                        cur[j] += q
                        hi = max(hi, j + 1)
                elif mode == SPREAD:
                    if j >= tlo and j < thi:
                        nxt[j] += q
                else:
                    moved, k_moved = two_sum(moved, k_moved, q)
                    nlo = min(nlo, j)
                    nhi = max(nhi, j + 1)
                    if mode == TURN:
                        nxt[j] += q
            elif mode != SPREAD and c == -1:
                won, k_won = two_sum(won, k_won, q)
            elif mode != SPREAD and c == -2:
                lost, k_lost = two_sum(lost, k_lost, q)
    return hi, nlo, nhi, (won, k_won, lost, k_lost, moved, k_moved)


@numba.njit(cache=True)
def _turn(store, probs, cur, nxt, lo, hi, eps, rosettes_only):
    """One pass; with ``rosettes_only`` only the mass pushed ahead within ``cur`` (``nxt`` and ``cur`` untouched
    otherwise, dropped places zeroed)."""
    thr = dropped = k_thr = k_dropped = 0.0
    sums = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    nlo = cur.shape[0]
    nhi = 0
    s = lo
    while s < hi:
        m = cur[s]
        if m == 0.0:
            s += 1
            continue
        if m < eps:
            dropped, k_dropped = two_sum(dropped, k_dropped, m)
            cur[s] = 0.0
            s += 1
            continue
        thr, k_thr = two_sum(thr, k_thr, m)
        if rosettes_only:
            hi, nlo, nhi, sums = _place(store, probs, cur, nxt, s, m, ROSETTES, hi, nlo, nhi, sums, 0, 0)
        else:
            hi, nlo, nhi, sums = _place(store, probs, cur, nxt, s, m, TURN, hi, nlo, nhi, sums, 0, 0)
            cur[s] = 0.0
        s += 1
    won, k_won, lost, k_lost, moved, k_moved = sums
    return won + k_won, lost + k_lost, thr + k_thr, moved + k_moved, dropped + k_dropped, nlo, nhi, hi


@numba.njit(cache=True, parallel=True)
def _spread(store, probs, cur, nxt, src, tgt, lo, hi):
    """The threads' part of a turn after :func:`_turn` with ``rosettes_only``: the mass into ``nxt``, thread ``p``
    writing the targets ``tgt[p]..tgt[p + 1]`` from the sources ``src[p]``."""
    for p in prange(tgt.shape[0] - 1):
        sums = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for w in range(src.shape[1]):
            for s in range(max(lo, src[p, w, 0]), min(hi, src[p, w, 1])):
                m = cur[s]
                if m != 0.0:
                    _place(store, probs, cur, nxt, s, m, SPREAD, 0, 0, 0, sums, tgt[p], tgt[p + 1])


@numba.njit(cache=True, inline="always")
def _prefetch_targets(table, cur, nxt, a, nt):
    """Ask for the lines of the targets of place ``a``: they arrive while the places before it are pushed."""
    for t in range(nt):
        c = table[np.uint64(a), np.uint64(t)]
        if c >= 0:
            prefetch(cur if c & 1 else nxt, np.uint64(c >> 1))


@numba.njit(cache=True, inline="always")
def _push_place(table, probs, cur, nxt, side, s, m, h, nlo, nhi, tlo, slo, off, won, k_won, lost, k_lost):
    """Push the mass ``m`` of place ``s`` (one thread of :func:`_turn_split`); the running (end of the span of
    ``cur``, span of ``nxt``, mass moved, won and lost with their compensations).

    (Indices as unsigned: they are never negative, and numba then leaves out the wraparound test of each,
    5-10% of a turn at six pieces.)"""
    mv = 0.0
    for t in range(probs.shape[0]):
        c = table[np.uint64(s), np.uint64(t)]
        v = m * probs[np.uint64(t)]
        if c >= 0:
            j = c >> 1
            if c & 1:
                cur[np.uint64(j)] += v
                if j >= h:
                    h = j + 1
            else:
                mv += v
                if j < nlo:
                    nlo = j
                if j >= nhi:
                    nhi = j + 1
                if j >= tlo:
                    nxt[np.uint64(j)] += v
                else:
                    side[off + j - slo] += v
        elif c == -1:
            won, k_won = two_sum(won, k_won, v)
        elif c == -2:
            lost, k_lost = two_sum(lost, k_lost, v)
    return h, nlo, nhi, mv, won, k_won, lost, k_lost


@numba.njit(cache=True, parallel=True)
def _turn_split(table, probs, cur, nxt, side, side_lo, side_off, lvl, width, qs, lo, hi, eps, out):
    """One turn of a deterministic policy in one pass, ``qs.shape[0] - 1`` threads (see the module docstring);
    each thread's (won, lost, throws, moved, dropped, span of ``nxt``, end of ``cur``'s) in a row of ``out``."""
    nt = probs.shape[0]
    for part in prange(qs.shape[0] - 1):
        tlo = lvl[qs[part] * width]
        won = lost = thr = moved = dropped = 0.0
        k_won = k_lost = k_thr = k_moved = k_dropped = 0.0
        nlo = cur.shape[0]
        nhi = 0
        h = hi
        # the opponent's pips q outer, the mover's p inner: the moves of (p, q) that are not rosettes land on
        # (q, p..p + 4) (or a captured piece's fewer than q), so the targets of one q are written as a run
        for q in range(qs[part], qs[part + 1]):
            for p in range(width):
                b = p * width + q
                s = max(lvl[b], lo)
                if lvl[b] >= h:
                    break  # this and every later level of this q lie past the mass (rosettes only raise h)
                end = min(lvl[b + 1], h)
                while s < end:
                    if s + PUSH_AHEAD < end:
                        _prefetch_targets(table, cur, nxt, s + PUSH_AHEAD, nt)
                    m = cur[np.uint64(s)]
                    if m != 0.0:
                        cur[np.uint64(s)] = 0.0
                        if m < eps:
                            dropped, k_dropped = two_sum(dropped, k_dropped, m)
                        else:
                            thr, k_thr = two_sum(thr, k_thr, m)
                            h, nlo, nhi, mv, won, k_won, lost, k_lost = _push_place(
                                table, probs, cur, nxt, side, s, m, h, nlo, nhi, tlo, side_lo[part], side_off[part],
                                won, k_won, lost, k_lost)
                            moved, k_moved = two_sum(moved, k_moved, mv)
                    s += 1
        out[part, 0] = won + k_won
        out[part, 1] = lost + k_lost
        out[part, 2] = thr + k_thr
        out[part, 3] = moved + k_moved
        out[part, 4] = dropped + k_dropped
        out[part, 5] = nlo
        out[part, 6] = nhi
        out[part, 7] = h


@numba.njit(cache=True, parallel=True)
def _live_by_opponent(cur, lvl, width, lo, hi):
    """The places of ``lo..hi`` holding mass, counted by the opponent's pips."""
    out = np.zeros(width, np.int64)
    for q in prange(width):
        n = 0
        for p in range(width):
            b = p * width + q
            for s in range(max(lvl[b], lo), min(lvl[b + 1], hi)):
                if cur[s] != 0.0:
                    n += 1
        out[q] = n
    return out


@numba.njit(cache=True)
def _merge_side(nxt, side, side_lo, side_off, qs, lvl, width):
    """Add the threads' buffers of crossing captures into ``nxt`` (thread order) and clear them."""
    for part in range(1, qs.shape[0] - 1):
        slo = side_lo[part]
        off = side_off[part]
        for j in range(slo, lvl[qs[part] * width]):
            v = side[off + j - slo]
            if v != 0.0:
                nxt[j] += v
                side[off + j - slo] = 0.0


@dataclass
class PushResult:
    """The forward push: the length distribution, and the expected turns and throws it gives.

    ``turns`` and ``throws`` are the sums over the turns pushed plus the tail beyond the last one,
    extrapolated geometrically from the last two turns (``tail_turns``, ``tail_throws``: that part).
    ``wins`` is each side's chance (light, dark) of winning within the turns pushed. ``dropped`` is the
    mass let go on the way (places holding less than the push's ``drop``); the distribution's ``tail``
    is the mass still in play plus that, so its pmf and tail still add up to 1.
    """

    dist: LengthDistribution
    turns: float
    throws: float
    tail_turns: float
    tail_throws: float
    wins: tuple[float, float]
    entries: int
    build_seconds: float
    push_seconds: float
    dropped: float = 0.0
    left: float = 0.0  # the mass still in play after the last turn
    bound: ThrowsBound | None = None  # with ``bound_tol``: the bound on the throws to come, from the same moves
    sums: TableSums | None = None  # with ``sums_precision``: the expected throws and turns, swept on the same moves


def _default_parts(codes) -> int:
    """The push's threads when none are named: two for deterministic pairs (one pass, each thread its own
    sources; seven pieces on quiet cores 2.6 s a turn against 3.3 s on one), else one (the rosettes' pass
    and the spread read the moves twice)."""
    return min(2, numba.get_num_threads()) if deterministic(codes) else 1


def push_bytes(rules: UrRules, light: str, dark: str, sums: int = 0) -> int:
    """Peak memory of :func:`push_lengths`: the policies' moves, two mass arrays, the build's maps; with ``sums``
    arrays a side swept first (``sums_precision``: 2, with ``sums_win`` 3), those arrays
    (:func:`.bound.swept_bytes`)."""
    S = space_of(rules.pieces, rules.code).size
    codes = {light, dark}
    tables, build = tables_bytes(rules, light, dark)
    swept = swept_bytes(S, len(codes), sums >= 2, sums >= 3) if sums else 0
    parts = int(os.environ.get("MARKOV_OCA_PUSH_THREADS") or _default_parts([policy_code(light), policy_code(dark)]))
    # threads in one pass: each past the first buffers the places L mover's pips below its own cut, wherever the
    # mass puts it (the widest L levels: 1.1-1.25 times twice the average share of L levels of (L + 1) * pieces
    # + 1 at four and five pieces; three times is allowed)
    plen = rules.path_length
    crossing = (0 if "random" in codes or parts <= 1 or rules.again_after_capture
                else (parts - 1) * 3 * S * 8 * plen // ((plen + 1) * rules.pieces + 1))
    return int(tables + max(16 * S + crossing, build, swept) + 150 * 2**20)


class _Turns:
    """How each turn is pushed: one pass by threads (deterministic policies), else one pass, and with ``parts``
    > 1 a spread by threads after the rosettes' pass."""

    def __init__(self, tables, probs: np.ndarray, levels: np.ndarray, width: int, parts: int, back: int = 14,
                 split: bool = True):
        self.tables, self.probs, self.levels, self.width, self.parts = tables, probs, levels, width, parts
        # deterministic, and no capture throws again: one pass, any number of threads
        self.split = split and all(is_fixed(tab) for tab in tables)
        if self.split:
            self.qs, self.side_lo, self.side_off, _ = split_bounds(levels, width, parts, back)
            self.by_mover, self.back = levels[::width][:width + 1], back
            # the threads' cuts follow the mass (:meth:`_resplit`): each buffer has room for the widest window
            window = max(int(self.by_mover[q] - self.by_mover[max(q - back, 0)]) for q in range(width + 1))
            self.side_off = np.arange(parts, dtype=np.int64) * window - window
            self.side_off[0] = 0
            self.crossing = np.zeros(window * (parts - 1))
            self.outs = np.zeros((parts, 8))
            self.turns = 0
        elif parts > 1:
            self.src, self.tgt = thread_slices(levels, width, parts, back)

    def _resplit(self, cur: np.ndarray, lo: int, hi: int) -> None:
        """Cut the opponent's pips where the threads get about equal numbers of places holding mass (the mass
        of a game moves along the pips: cuts by places alone leave one thread the early game's)."""
        live = np.cumsum(_live_by_opponent(cur, self.levels, self.width, lo, hi))
        if live[-1] == 0:
            return
        for i in range(1, self.parts):
            q = int(np.searchsorted(live, live[-1] * i / self.parts))
            self.qs[i] = min(max(q, int(self.qs[i - 1])), self.width)
            self.side_lo[i] = self.by_mover[max(int(self.qs[i]) - self.back, 0)]

    def __call__(self, side: int, cur: np.ndarray, nxt: np.ndarray, lo: int, hi: int, eps: float):
        """(won, lost, throws, moved, dropped, nlo, nhi, hi) of the turn of ``side``."""
        tab = self.tables[side % len(self.tables)]
        if self.split:
            if self.parts > 1 and self.turns % RESPLIT == 0:
                self._resplit(cur, lo, hi)
            self.turns += 1
            _turn_split(tab, self.probs, cur, nxt, self.crossing, self.side_lo, self.side_off, self.levels,
                        self.width, self.qs, lo, hi, eps, self.outs)
            _merge_side(nxt, self.crossing, self.side_lo, self.side_off, self.qs, self.levels, self.width)
            o = self.outs
            return (*(float(o[:, k].sum()) for k in range(5)), int(o[:, 5].min()), int(o[:, 6].max()),
                    int(o[:, 7].max()))
        spread = self.parts > 1
        out = _turn(tab, self.probs, cur, nxt, lo, hi, eps, spread)
        if spread:
            hi = out[7]  # the span stretched by the rosettes
            _spread(tab, self.probs, cur, nxt, self.src, self.tgt, lo, hi)
            cur[lo:hi] = 0.0
        return out


def _push(turn: _Turns, S: int, first_place: int, tail: float, eps: float, max_turns: int, bar,
          on_turn: Callable | None):
    """Push the mass from ``first_place`` until less than ``tail`` is in play: (pmf by (turn, winner), mass in
    play after each turn, throws of each turn, turns pushed, mass dropped)."""
    cur = np.zeros(S)
    nxt = np.zeros(S)
    cur[first_place] = 1.0
    pmf = np.zeros((1024, 2))
    alive = [1.0]  # mass in play after each turn
    thrown = [0.0]  # throws made in each turn
    left, t, dropped = 1.0, 0, 0.0
    lo, hi = first_place, first_place + 1
    task = bar.add_task("length distribution, turn by turn", total=None)
    while t < max_turns and left >= tail:
        t += 1
        t_turn = time.perf_counter()
        side = (t - 1) % 2
        won, lost, thr, moved, drop, nlo, nhi, hi = turn(side, cur, nxt, lo, hi, eps)
        if t >= pmf.shape[0]:
            pmf = np.vstack([pmf, np.zeros_like(pmf)])
        pmf[t, side] += won
        pmf[t, 1 - side] += lost
        cur, nxt = nxt, cur
        lo, hi = (nlo, nhi) if nhi > nlo else (0, 0)
        left = float(moved)
        dropped += float(drop)
        alive.append(left)
        thrown.append(float(thr))
        bar.update(task, description=f"length distribution: turn {t}, {left:.1e} still in play")
        if on_turn is not None:
            on_turn(t, left, dropped, time.perf_counter() - t_turn)
    return pmf[:t + 1].copy(), alive, thrown, t, dropped


def _tail(alive: list[float], thrown: list[float], t: int) -> tuple[float, float]:
    """The turns and throws beyond the last turn pushed, extrapolated geometrically from the last two."""
    left = alive[-1]
    if t >= 2 and left > 0.0 and alive[-2] > 0.0:
        r = left / alive[-2]
        if r >= 1.0:
            return float("inf"), float("inf")
        tail_turns = left / (1.0 - r)  # sum of the mass in play at the start of each later turn
        return tail_turns, thrown[-1] / alive[-2] * tail_turns
    return 0.0, 0.0


def push_lengths(rules: UrRules, light: str = "optimal", dark: str = "optimal", values: np.ndarray | None = None,
                 *, tail: float = 1e-10, start: int | None = None, max_turns: int = 1_000_000,
                 progress: bool = False, parts: int | None = None, drop: float | None = None,
                 on_turn: Callable[[int, float, float, float], None] | None = None,
                 bound_tol: float | None = None, sums_precision: float | None = None,
                 sums_win: bool = False,
                 on_sums: Callable[[TableSums, ThrowsBound], None] | None = None) -> PushResult:
    """Push the probability mass forward turn by turn, light moving first from ``start`` (all pieces in
    hand), until less than ``tail`` is still in play.

    A place holding less than ``drop`` (default ``tail * 1e-12``; 0 keeps everything) is let go: its
    mass is added up (``PushResult.dropped``) and counted in the distribution's tail, a bound on what
    the pmf misses. Most places of a big game hold next to nothing (six pieces, greedy against greedy,
    turn 50: 12.4 M of the 31.6 M places reached hold more than 1e-18, the rest 7.9e-13 together), so
    this skips most of the work for a loss far below the tail. ``on_turn(turn, in play, dropped so far,
    seconds of that turn)`` is called after each turn.

    A deterministic policy (``greedy``, ``optimal``) keeps one move per throw (4 bytes a position and
    throw, no index); ``random`` keeps every legal move. With deterministic policies ``parts`` threads make
    one pass, each over the sources of its own range of the opponent's pips; with a random side, ``parts``
    > 1 spreads the mass of a turn after one pass over the rosettes. The default
    (``$MARKOV_OCA_PUSH_THREADS``, else :func:`_default_parts`) is two threads for deterministic pairs,
    one otherwise (docs/ur.md).

    With ``sums_precision``, the expected throws and turns from the start (and with ``sums_win`` each side's
    chance) are swept first on the same moves (:func:`.bound.sums_on_tables`, ``PushResult.sums``), to that
    relative precision where the sweeps' rounding allows; the push is then only for the distribution
    (``max_turns=0``: none). ``on_sums(sums, bound)`` is called as soon as they are swept, before the push (to
    keep them: an interrupted push then loses only itself).

    With ``bound_tol`` and deterministic policies, :func:`.bound.throws_bound` is computed first on the same
    moves (``PushResult.bound``), so they are built once.
    """
    codes = policy_codes(light, dark)
    if 2 in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    parts = int(parts or os.environ.get("MARKOV_OCA_PUSH_THREADS") or _default_parts(codes))
    # a capture followed by another throw keeps the mover but lowers the opponent's pips: its successor can lie
    # in a level of the one-pass split already visited (or in another thread's sources), so the split (which
    # carries only moves that keep the opponent's pips in place) does not apply; the push then goes in place
    # order (mover's pips first), where every move that throws again lands later
    split = not rules.again_after_capture
    eps = float(tail) * 1e-12 if drop is None else float(drop)
    t0 = time.perf_counter()
    space = space_of(rules.pieces, rules.code)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    width = rules.off_square * rules.pieces + 1
    newpos, levels = push_placement(space, rules.pieces)
    first = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0) if start is None else int(start)
    first_place = int(newpos[first])
    with progress_bar(progress) as bar:
        tables, entries = push_tables(space, rules, codes, vals, newpos, bar)
        del newpos
        if values is not None:
            drop_pages(values)  # the policies are built: the table is not read again
        bound = sums = None
        fixed = all(is_fixed(tab) for tab in tables)
        if sums_precision is not None:
            sums = sums_on_tables(tables, probs, levels, width, start=first_place, precision=float(sums_precision),
                                  win=sums_win, moves=moves_a_throw(rules, not fixed), side=smaller_side(codes),
                                  bar=bar)
            bound = ThrowsBound(sums.ceiling, sums.largest, sums.residual[0], sums.sweeps, sums.seconds)
            if on_sums is not None:
                on_sums(sums, bound)
        elif bound_tol is not None and fixed:
            bar.add_task(f"{light} against {dark}: a bound on the throws to come", total=None)
            bound = bound_on_tables(tables, probs, levels, width, float(bound_tol), numba.get_num_threads())
        t1 = time.perf_counter()
        turn = _Turns(tables, probs, levels, width, parts, rules.path_length, split)
        pmf, alive, thrown, t, dropped = _push(turn, space.size, first_place, tail, eps, max_turns, bar, on_turn)
        t2 = time.perf_counter()
    del turn, tables
    tail_turns, tail_throws = _tail(alive, thrown, t)
    left = alive[-1]
    dist = LengthDistribution(pmf.sum(axis=1), 0.0, left + dropped, by_outcome=pmf)
    wins = (float(pmf[:, 0].sum()), float(pmf[:, 1].sum()))
    return PushResult(dist, float(sum(alive[:-1])) + tail_turns, float(sum(thrown)) + tail_throws, tail_turns,
                      tail_throws, wins, entries, t1 - t0 - (bound.seconds if bound is not None else 0.0), t2 - t1,
                      dropped, left, bound, sums)


def length_distribution(rules: UrRules, light: str = "optimal", dark: str = "optimal",
                        values: np.ndarray | None = None, *, tail: float = 1e-10, start: int | None = None,
                        max_turns: int = 1_000_000, progress: bool = False) -> LengthDistribution:
    """The distribution of the number of turns, light moving first from ``start`` (all pieces in hand).

    ``by_outcome`` has the columns light wins, dark wins (the order of the chain's outcomes).
    """
    return push_lengths(rules, light, dark, values, tail=tail, start=start, max_turns=max_turns,
                        progress=progress).dist
