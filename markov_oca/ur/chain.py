"""A pair of Ur policies turns the decision process into a Markov chain.

A chain state is a ranked position (seen from the side to move), which real
side that is (light or dark) and whether the turn is already under way (after a
rosette the same side throws again within its turn). Each throw's chosen move
(a policy's choice, or every legal move with equal weight for ``random``)
gives a branch; a move that ends the game goes to the absorbing state of the
winner. Only the states reachable from the start are kept, and the analyses
are those of :class:`~markov_oca.chain.Chain`, shared with the goose games.

Policies:

* ``random``: every legal move with the same chance;
* ``greedy``: the first of these that applies: a move that wins the game, a
  capture, a landing on a rosette, bearing a piece off, otherwise the piece
  furthest along the path (entering a piece counts as square 0);
* ``optimal``: a move of greatest value under optimal play (:mod:`.optimal`),
  the first listed among equals;
* a Python callable ``policy(position, throw, moves) -> move`` (see
  :func:`policy_weights`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numba
import numpy as np
from numba import prange

from ..analysis.chain import Chain
from ..core.errors import RulesError, TooLargeError
from ..core.memory import BASE_BYTES, available_memory, gib
from .kernel import AGAIN, CAPTURE, GAME_OVER, MAX_MOVES, MOVER_WINS, OFF, ROSETTE, UrMoves, move_scores, moves
from .rules import UrRules
from .state import UrSpace, decode, encode, space_of

POLICIES = ("random", "greedy", "optimal")


def policy_weights(mv: UrMoves, policy: str | Callable, values: np.ndarray | None = None,
                   space: UrSpace | None = None) -> np.ndarray:
    """(k, T, 7) weights of the moves each policy plays (rows of a throw sum to 1).

    A callable policy is asked ``policy(position, throw, moves)`` at every decision
    (two or more legal moves), with the position as :func:`.state.decode` gives it
    (``(mine, theirs)`` path squares, the mover first), the throw, and the legal
    moves as ``(from, to)`` pairs (0 the hand, the path's length + 1 off: 15 on Bell's path); it returns the
    chosen pair.
    """
    live = np.arange(MAX_MOVES)[None, None, :] < mv.n_moves[:, :, None]
    if callable(policy):
        return _callable_weights(mv, policy, live, space)
    if policy == "random":
        return np.where(live, 1.0 / np.maximum(mv.n_moves[:, :, None], 1), 0.0)
    if policy == "greedy":
        ev = mv.events.astype(np.int64)
        score = (
            (((ev & GAME_OVER) != 0) & ((ev & MOVER_WINS) != 0)) * 10_000
            + ((ev & CAPTURE) != 0) * 1_000
            + ((ev & ROSETTE) != 0) * 100
            + ((ev & OFF) != 0) * 50
            + np.maximum(mv.frm.astype(np.int64), 0)
        )
    elif policy == "optimal":
        if values is None:
            raise ValueError("the optimal policy needs the optimal values")
        score = move_scores(mv.events, mv.succ, mv.n_moves, np.asarray(values, np.float64))
    else:
        raise RulesError(f"unknown policy {policy!r} (policies: {', '.join(POLICIES)})")
    score = np.where(live, score, -np.inf)
    best = np.argmax(score, axis=2)  # the first among equals
    w = np.zeros(mv.succ.shape)
    k, t = np.indices(best.shape)
    w[k, t, best] = 1.0
    return np.where(live, w, 0.0)


def _callable_weights(mv: UrMoves, policy: Callable, live: np.ndarray, space: UrSpace | None) -> np.ndarray:
    if space is None:
        raise ValueError("a callable policy needs the space to decode positions")
    w = np.where(live, 0.0, 0.0)
    w[:, :, 0] = live[:, :, 0]  # single moves and passes: the only choice
    ks, ts = np.nonzero(mv.n_moves > 1)
    for k, t in zip(ks, ts, strict=True):
        throw = int(mv.throws[t])
        options = [(int(mv.frm[k, t, m]), int(mv.frm[k, t, m]) + throw) for m in range(int(mv.n_moves[k, t]))]
        pos = decode(space.unrank(int(mv.index[k])), space.code)
        choice = policy(pos, throw, options)
        if choice not in options:
            raise RulesError(f"policy {getattr(policy, '__name__', policy)!r} chose {choice!r}, "
                             f"not one of the legal moves {options}")
        w[k, t, :] = 0.0
        w[k, t, options.index(choice)] = 1.0
    return w


#: Positions per call of the move kernel while the chain is built.
CHAIN_CHUNK = 1 << 16
#: Branches kept per (position, side) row on average, measured (four pieces, random against random: 11.2).
_ROW_BRANCHES = 12
#: Widest row expected in the chain's branch table (measured: 13 for three pieces, 16 for four).
_WIDTH = 16


def chain_bytes(rules: UrRules) -> int:
    """Peak memory of :func:`ur_chain` and the chain's solves (visits, outcomes, length), about.

    The build: the rows of both sides (built, then joined), the reachability maps, and the branch
    table of the states reached (4 per position at most: 66-79% are reached on 2-4 pieces). The
    solves: that table (next int32, numerator int16, ids, order and flags), the adjoint's split
    transpose (12 bytes a transition, counted from the start of the build as ``_ROW_BRANCHES`` a
    state) with its three count vectors, and about ten work vectors (the length pass's, the
    visits and their hand-over solve). The interpreter with its kernels is ``BASE_BYTES``.
    """
    S = space_of(rules.pieces, rules.code).size
    states = 4 * S
    rows = 2 * S * (8 + 2 * _ROW_BRANCHES * 8)  # indptr, targets and numerators, the chunks and their join
    maps = (states + 2) * (4 + 1 + 4)  # index, seen, queue
    table = states * (_WIDTH * (4 + 2) + 8 + 8 + 3)  # next and pnum, state ids, sweep order, flags
    build = max(rows + maps, rows // 2 + maps + table)
    solve = table + states * (_ROW_BRANCHES * 12 + 3 * 8 + 10 * 8)
    return int(BASE_BYTES + max(build, solve))


def check_chain_memory(rules: UrRules) -> None:
    """Refuse up front a policy chain that cannot fit (:func:`chain_bytes`)."""
    space = space_of(rules.pieces, rules.code)
    need = chain_bytes(rules)
    avail = available_memory()
    if need > avail:
        raise TooLargeError(f"{rules.name} with {rules.pieces} pieces: a policy chain over {4 * space.size:,} "
                            f"states needs about {gib(need)}; {gib(avail)} available "
                            "(try --pieces 4 or fewer)")


@numba.njit(cache=True, parallel=True)
def _rows(succ, events, n_moves, pnum, side, S, out_t, out_p, out_n):
    """The branches of a chunk's rows for one side, duplicates merged: full target ids and numerators."""
    k, nt = n_moves.shape
    for i in prange(k):
        c = 0
        for t in range(nt):
            for m in range(n_moves[i, t]):
                p = pnum[i, t, m]
                if p <= 0:
                    continue
                ev = events[i, t, m]
                if ev & GAME_OVER:
                    tgt = 4 * S + (side if ev & MOVER_WINS else 1 - side)
                else:
                    again = 1 if ev & AGAIN else 0
                    ns = side if again else 1 - side
                    tgt = (np.int64(succ[i, t, m]) * 2 + ns) * 2 + again
                j = 0
                while j < c and out_t[i, j] != tgt:
                    j += 1
                if j == c:
                    out_t[i, c] = tgt
                    out_p[i, c] = p
                    c += 1
                else:
                    out_p[i, j] += p
        out_n[i] = c


@numba.njit(cache=True)
def _reach(indptr, tg, S, init):
    """States reached from ``init``: a state (position, side, again) has the row ``side * S + position``."""
    n_full = 4 * S + 2
    seen = np.zeros(n_full, np.uint8)
    queue = np.empty(n_full, np.int32)
    seen[init] = 1
    queue[0] = init
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        if u >= 4 * S:
            continue
        r = ((u >> 1) & 1) * S + (u >> 2)
        for e in range(indptr[r], indptr[r + 1]):
            v = tg[e]
            if seen[v] == 0:
                seen[v] = 1
                queue[tail] = v
                tail += 1
    seen[4 * S] = 1
    seen[4 * S + 1] = 1
    return seen


@numba.njit(cache=True, parallel=True)
def _fill(reach, indptr, tg, pn, index, S, denom, nxt, pnum):
    for i in prange(reach.shape[0]):
        u = reach[i]
        if u >= 4 * S:
            nxt[i, 0] = i
            pnum[i, 0] = denom
            continue
        r = ((u >> 1) & 1) * S + (u >> 2)
        c = 0
        for e in range(indptr[r], indptr[r + 1]):
            nxt[i, c] = index[tg[e]]
            pnum[i, c] = pn[e]
            c += 1


def _side_rows(space: UrSpace, rules: UrRules, side: int, policy, values, pnum_throw: np.ndarray, counts, parts_t,
               parts_p) -> None:
    """One side's rows (``side * S + position``), a chunk of positions at a time: their branch counts into
    ``counts``, their targets and numerators appended to ``parts_t`` and ``parts_p``."""
    S = space.size
    for lo in range(0, S, CHAIN_CHUNK):
        mv = moves(space, np.arange(lo, min(lo + CHAIN_CHUNK, S), dtype=np.int64), rules)
        w = policy_weights(mv, policy, values, space)
        p = np.rint(w * pnum_throw[None, :, None]).astype(np.int64)
        p = np.where(w > 0, p, 0)
        k = mv.index.size
        out_t = np.empty((k, len(rules.throws) * MAX_MOVES), np.int64)
        out_p = np.empty_like(out_t)
        out_n = np.empty(k, np.int64)
        _rows(mv.succ, mv.events, mv.n_moves, p, side, S, out_t, out_p, out_n)
        live = np.arange(out_t.shape[1])[None, :] < out_n[:, None]
        parts_t.append(out_t[live].astype(np.int32))
        parts_p.append(out_p[live].astype(np.int32))
        counts[side * S + lo:side * S + lo + k] = out_n
        del mv, w, p, out_t, out_p, live


def _all_rows(space: UrSpace, rules: UrRules, light, dark, values, pnum_throw: np.ndarray):
    """Both sides' rows as CSR: (indptr, targets, numerators)."""
    S = space.size
    counts = np.zeros(2 * S, np.int64)
    parts_t, parts_p = [], []
    for side, policy in enumerate((light, dark)):
        _side_rows(space, rules, side, policy, values, pnum_throw, counts, parts_t, parts_p)
    indptr = np.zeros(2 * S + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    del counts
    tg = np.concatenate(parts_t)
    del parts_t
    pn = np.concatenate(parts_p)
    del parts_p
    return indptr, tg, pn


def _start_state(space: UrSpace, rules: UrRules, start) -> int:
    """The full id ``(position * 2 + side) * 2 + again`` of the start."""
    if start is None:
        first, side0 = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0), 0
    else:
        lt, dk, who = start
        side0 = 0 if who == "light" else 1
        first = space.rank(*encode(*((lt, dk) if side0 == 0 else (dk, lt)), space.code))
    return (first * 2 + side0) * 2 + 0


def _branch_table(indptr, tg, pn, S: int, init: int, denom: int):
    """(full ids of the states the start reaches, next, numerators): the branch table of those states, as wide
    as the widest row (terminal positions are never entered; the two outcomes come last)."""
    seen = _reach(indptr, tg, S, init)
    reach = np.flatnonzero(seen)
    del seen
    index = np.full(4 * S + 2, -1, np.int32)
    index[reach] = np.arange(reach.size, dtype=np.int32)
    rows = np.where(reach >= 4 * S, 0, ((reach >> 1) & 1) * S + (reach >> 2))
    width = max(1, int((indptr[rows + 1] - indptr[rows]).max()))
    del rows
    n = reach.size
    nxt_r = np.full((n, width), -1, np.int32)
    pnum_r = np.zeros((n, width), np.int16 if denom < 2**15 else np.int32)
    _fill(reach, indptr, tg, pn, index, S, denom, nxt_r, pnum_r)
    return reach, nxt_r, pnum_r


def _describer(space: UrSpace) -> Callable[[int], dict]:
    def describe(full_id: int) -> dict:
        # The position is ranked from the side to move; name the pieces by colour.
        mine, theirs = decode(tuple(space.unrank(int(full_id) // 4)), space.code)
        side = "light" if (full_id // 2) % 2 == 0 else "dark"
        light, dark = (mine, theirs) if side == "light" else (theirs, mine)
        return {"side_to_move": side, "throwing_again": bool(full_id % 2), "light_squares": list(light),
                "dark_squares": list(dark)}

    return describe


def ur_chain(rules: UrRules, light: str | Callable = "random", dark: str | Callable = "random",
             values: np.ndarray | None = None,
             start: tuple[list[int], list[int], str] | None = None) -> Chain:
    """The chain of ``rules`` with light playing ``light`` and dark ``dark`` (light moves first).

    Outcomes: ``"light wins"`` and ``"dark wins"``. Rewards: ``turns`` (per state:
    a step that begins a turn) and ``throws`` (every step is a throw). ``start``
    (light's and dark's path squares, and ``"light"`` or ``"dark"`` to move)
    starts the game from another position than all pieces in hand.

    The moves are built a chunk of positions at a time; a row's branches to one state are
    merged, and the branch table is as wide as the widest row reached.
    """
    check_chain_memory(rules)
    space = space_of(rules.pieces, rules.code)
    if any(isinstance(p, str) and p == "optimal" for p in (light, dark)) and values is None:
        from .optimal import solve_optimal

        values = solve_optimal(rules).values
    probs = [Fraction(p) for _, p in rules.throws]
    denom = math.lcm(*(p.denominator for p in probs)) * 420  # 420 = lcm(1..7): a random choice
    pnum_throw = np.array([int(p * denom) for p in probs], np.int64)
    S = space.size
    indptr, tg, pn = _all_rows(space, rules, light, dark, values, pnum_throw)
    init = _start_state(space, rules, start)
    reach, nxt_r, pnum_r = _branch_table(indptr, tg, pn, S, init, denom)
    del indptr, tg, pn
    n = reach.size
    is_out = reach >= 4 * S
    side_of = np.where(is_out, -1, (reach // 2) % 2).astype(np.int8)
    mid_turn = (reach % 2).astype(bool) & ~is_out
    turn_start = ~mid_turn & ~is_out
    throws = np.where(is_out, 0, 1).astype(np.int8)
    return Chain(
        next=nxt_r,
        pnum=pnum_r,
        denom=denom,
        init=int(np.searchsorted(reach, init)),
        outcomes={"light wins": n - 2, "dark wins": n - 1},
        players=2,
        mover=side_of,
        state_rewards={"turns": turn_start, "throws": throws},
        turn_start=turn_start,
        state_ids=reach,
        describe_state=_describer(space),
        sweep_order=np.arange(n - 1, -1, -1),
    )
