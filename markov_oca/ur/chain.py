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

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..chain import Chain
from ..errors import RulesError, TooLargeError
from ..memory import available_memory, gib
from .kernel import AGAIN, CAPTURE, GAME_OVER, MAX_MOVES, MOVER_WINS, OFF, ROSETTE, UrMoves, moves
from .rules import UrRules
from .state import UrSpace, decode, encode

POLICIES = ("random", "greedy", "optimal")


def policy_weights(mv: UrMoves, policy: str | Callable, values: np.ndarray | None = None,
                   space: UrSpace | None = None) -> np.ndarray:
    """(k, T, 7) weights of the moves each policy plays (rows of a throw sum to 1).

    A callable policy is asked ``policy(position, throw, moves)`` at every decision
    (two or more legal moves), with the position as :func:`.state.decode` gives it
    (``(mine, theirs)`` path squares, the mover first), the throw, and the legal
    moves as ``(from, to)`` pairs (0 the hand, 15 off); it returns the chosen pair.
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
        succ = np.maximum(mv.succ, 0)
        ev = mv.events
        score = np.where(ev & GAME_OVER, np.where(ev & MOVER_WINS, 1.0, 0.0),
                         np.where(ev & AGAIN, values[succ], 1.0 - values[succ]))
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
        pos = decode(space.unrank(int(mv.index[k])))
        choice = policy(pos, throw, options)
        if choice not in options:
            raise RulesError(f"policy {getattr(policy, '__name__', policy)!r} chose {choice!r}, "
                             f"not one of the legal moves {options}")
        w[k, t, :] = 0.0
        w[k, t, options.index(choice)] = 1.0
    return w


def check_chain_memory(rules: UrRules) -> None:
    """Refuse up front a policy chain that cannot fit: its branch tables over every state, and the moves."""
    space = UrSpace(rules.pieces)
    width = len(rules.throws) * MAX_MOVES
    need = space.size * (4 * width * 8 + 200)
    avail = available_memory()
    if need > avail:
        raise TooLargeError(f"{rules.name} with {rules.pieces} pieces: a policy chain over {4 * space.size:,} "
                            f"states needs about {gib(need)}; {gib(avail)} available "
                            "(try --pieces 4 or fewer)")


def ur_chain(rules: UrRules, light: str | Callable = "random", dark: str | Callable = "random",
             values: np.ndarray | None = None,
             start: tuple[list[int], list[int], str] | None = None) -> Chain:
    """The chain of ``rules`` with light playing ``light`` and dark ``dark`` (light moves first).

    Outcomes: ``"light wins"`` and ``"dark wins"``. Rewards: ``turns`` (per state:
    a step that begins a turn) and ``throws`` (every step is a throw). ``start``
    (light's and dark's path squares, and ``"light"`` or ``"dark"`` to move)
    starts the game from another position than all pieces in hand.
    """
    check_chain_memory(rules)
    space = UrSpace(rules.pieces)
    width = len(rules.throws) * MAX_MOVES
    mv = moves(space, None, rules)
    if any(isinstance(p, str) and p == "optimal" for p in (light, dark)) and values is None:
        from .optimal import solve_optimal

        values = solve_optimal(rules).values
    weights = [policy_weights(mv, p, values, space) for p in (light, dark)]
    probs = [Fraction(p) for _, p in rules.throws]
    denom = math.lcm(*(p.denominator for p in probs)) * 420  # 420 = lcm(1..7): a random choice
    pnum_throw = np.array([int(p * denom) for p in probs], np.int64)

    S = space.size
    n_full = 4 * S + 2
    light_wins, dark_wins = 4 * S, 4 * S + 1
    nxt = np.full((n_full, width), -1, np.int32)
    pnum = np.zeros((n_full, width), np.int32)
    s_idx = np.arange(S)
    for side in (0, 1):
        w = weights[side]
        ev = mv.events
        again = (ev & AGAIN) != 0
        over = (ev & GAME_OVER) != 0
        mover_wins = (ev & MOVER_WINS) != 0
        nxt_side = np.where(again, side, 1 - side)
        target = (mv.succ.astype(np.int64) * 2 + nxt_side) * 2 + again
        winner = np.where(mover_wins, side, 1 - side)
        target = np.where(over, 4 * S + winner, target)
        p = np.rint(w * pnum_throw[None, :, None]).astype(np.int64)
        p = np.where(w > 0, p, 0)
        tgt = np.where(p > 0, target, -1).reshape(S, width)
        p = p.reshape(S, width)
        for a in (0, 1):
            rows = (s_idx * 2 + side) * 2 + a
            nxt[rows] = tgt
            pnum[rows] = p
    for k in (light_wins, dark_wins):
        nxt[k, 0] = k
        pnum[k, 0] = denom
    if start is None:
        first, side0 = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0), 0
    else:
        lt, dk, who = start
        side0 = 0 if who == "light" else 1
        first = space.rank(*encode(*((lt, dk) if side0 == 0 else (dk, lt))))
    init = (first * 2 + side0) * 2 + 0

    # Keep what the start reaches (terminal positions are never entered).
    rows = np.repeat(np.arange(n_full), width)
    cols = nxt.ravel()
    keep = cols >= 0
    graph = sp.csr_array((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(n_full, n_full))
    reach = np.sort(breadth_first_order(graph, init, directed=True, return_predecessors=False))
    reach = np.union1d(reach, [light_wins, dark_wins])
    index = np.full(n_full, -1, np.int64)
    index[reach] = np.arange(reach.size)
    nxt_r = nxt[reach]
    nxt_r = np.where(nxt_r >= 0, index[np.maximum(nxt_r, 0)], -1).astype(np.int32)
    pnum_r = pnum[reach].astype(np.int32)
    # Branches packed to the left, as Chain expects (-1 pads the end of a row).
    order = np.argsort(nxt_r < 0, axis=1, kind="stable")
    nxt_r = np.take_along_axis(nxt_r, order, axis=1)
    pnum_r = np.take_along_axis(pnum_r, order, axis=1)
    is_out = reach >= 4 * S
    side_of = np.where(is_out, -1, (reach // 2) % 2).astype(np.int8)
    mid_turn = (reach % 2).astype(bool) & ~is_out
    turn_start = ~mid_turn & ~is_out
    throws = np.where(is_out, 0, 1).astype(np.int8)
    n = reach.size

    def describe(full_id: int) -> dict:
        # The position is ranked from the side to move; name the pieces by colour.
        mine, theirs = decode(tuple(space.unrank(int(full_id) // 4)))
        side = "light" if (full_id // 2) % 2 == 0 else "dark"
        light, dark = (mine, theirs) if side == "light" else (theirs, mine)
        return {"side_to_move": side, "throwing_again": bool(full_id % 2), "light_squares": list(light),
                "dark_squares": list(dark)}

    return Chain(
        next=nxt_r,
        pnum=pnum_r,
        denom=denom,
        init=int(index[init]),
        outcomes={"light wins": int(index[light_wins]), "dark wins": int(index[dark_wins])},
        players=2,
        mover=side_of,
        state_rewards={"turns": turn_start, "throws": throws},
        turn_start=turn_start,
        state_ids=reach,
        describe_state=describe,
        sweep_order=np.arange(n - 1, -1, -1),
    )
