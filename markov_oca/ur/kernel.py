"""The moves of the Royal Game of Ur (the rules as ``docs/ur.md`` states them), vectorised over positions.

For each position (ranked in :class:`~markov_oca.ur.state.UrSpace`, side to move =
*mine*) and each value a throw can give, :func:`moves` lists the legal moves and
their successors:

* a move takes one piece from path square ``frm`` (0 = the hand, 1..14 the board)
  to ``frm + throw``. It is legal when it lands on 15 exactly (off the board; no
  overshoot) or on a square 1..14 not held by one of the mover's pieces, and not on
  a rosette of the shared lane held by the opponent. Landing on an opponent's piece
  in the shared lane 5..12 captures it (it goes back to the opponent's hand);
* moves are listed by ``frm`` ascending (the hand first), at most 7;
* on other boards (:class:`~markov_oca.ur.state.PathCode`) the path has L squares
  and off is L + 1; with unsafe rosettes (``flags`` without :data:`SAFE_ROSETTES`) a
  piece on a rosette can be captured; with :data:`CAPTURE_AGAIN` a capture also gives
  another throw;
* a throw of 0, or a throw with no legal move, passes: one pseudo-move with
  ``frm = -1``, the :data:`PASS` event and the mirrored position as successor;
* a move that ends on a rosette (and does not end the game) gives another throw:
  its successor is ranked as it stands, the mover still *mine* (:data:`AGAIN`).
  Every other successor is the mirror, ranked with the opponent as *mine*;
* a terminal position (:func:`is_terminal`) has no moves: ``n_moves`` is 0.

Events (bits of ``events``): :data:`AGAIN`, :data:`CAPTURE`, :data:`ROSETTE`,
:data:`OFF` (a piece left the board), :data:`GAME_OVER`, :data:`MOVER_WINS` (with
GAME_OVER: the side that moved won), :data:`PASS`.

End rule, as the jitted code takes it: ``total = 0`` for all-off (the game is over
when a side has all N pieces off) and ``total = T`` for total-off (also over when
the pieces off in all reach T). The winner is the side with more pieces off.

:func:`moves_kernel` and :func:`winner_code` are jitted and take the table tuple
``UrSpace(n, code).tables`` first, so other numba code (a solver) can call them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

from .rules import UrRules, load_ur
from .state import (
    BELL,
    LANE_CONFIGS,
    Position,
    UrSpace,
    _rank_core,
    _unrank_core,
    lane_squares,
    mask_squares,
    mirror_lane,
)

__all__ = [
    "AGAIN",
    "CAPTURE",
    "CAPTURE_AGAIN",
    "GAME_OVER",
    "MAX_MOVES",
    "MOVER_WINS",
    "OFF",
    "PASS",
    "ROSETTE",
    "ROSETTE_AGAIN",
    "SAFE_ROSETTES",
    "UrMoves",
    "bellman",
    "is_terminal",
    "kernel_args",
    "list_moves",
    "move_scores",
    "move_value",
    "moves",
    "moves_kernel",
    "over_code",
    "winner",
    "winner_code",
]

AGAIN = 1
CAPTURE = 2
ROSETTE = 4
OFF = 8
GAME_OVER = 16
MOVER_WINS = 32
PASS = 64
#: Rule bits of :func:`moves_kernel`'s ``flags``: no capture on a rosette; landing on a rosette throws again;
#: a capture throws again.
SAFE_ROSETTES = 1
ROSETTE_AGAIN = 2
CAPTURE_AGAIN = 4
#: Moves per (position, throw) at most: one per piece.
MAX_MOVES = 7

#: Lane code -> lane code with colours swapped.
LANE_MIRROR = mirror_lane(np.arange(LANE_CONFIGS)).astype(np.int32)
LANE_MIRROR.setflags(write=False)


@numba.njit(cache=True, inline="always")
def _over(n, total, mine_off, their_off):
    return mine_off == n or their_off == n or (total > 0 and mine_off + their_off >= total)


@numba.njit(cache=True, inline="always")
def _winner(n, total, mine_off, their_off):
    """1: mine has won, -1: theirs has won, 0: not over (or a tie, which no game reaches)."""
    if not _over(n, total, mine_off, their_off) or mine_off == their_off:
        return 0
    return 1 if mine_off > their_off else -1


@numba.njit(cache=True)
def winner_code(n, total, mine_off, their_off):
    """Jitted :func:`winner` on the off counts: 1 mine won, -1 theirs won, 0 the game goes on."""
    return _winner(n, total, mine_off, their_off)


@numba.njit(cache=True)
def over_code(n, total, mine_off, their_off):
    """Jitted :func:`is_terminal` on the off counts."""
    return _over(n, total, mine_off, their_off)


@numba.njit(cache=True, inline="always")
def move_value(ev, values, s):
    """The mover's chance to win after a move of events ``ev`` to successor ``s`` (``values`` the chance of the
    side to move in each position): 1 or 0 when it ends the game, ``values[s]`` when the mover throws again
    (the successor ranked from the mover's side), ``1 - values[s]`` otherwise (ranked from the opponent's)."""
    if ev & GAME_OVER:
        return 1.0 if ev & MOVER_WINS else 0.0
    if ev & AGAIN:
        return values[s]
    return 1.0 - values[s]


@numba.njit(cache=True, inline="always")
def bellman(succ, events, n_moves, probs, values, i):
    """Position ``i``'s (row of a move table) optimal value from its successors' ``values``: each throw's best
    :func:`move_value`, weighted by the throw's chance."""
    new = 0.0
    for t in range(succ.shape[1]):
        best = -1.0
        for m in range(n_moves[i, t]):
            val = move_value(events[i, t, m], values, succ[i, t, m])
            if val > best:
                best = val
        new += probs[t] * best
    return new


@numba.njit(cache=True)
def move_scores(events, succ, n_moves, values):
    """:func:`move_value` of every move of a move table (k, T, 7); ``-inf`` for the padding."""
    out = np.full(events.shape, -np.inf)
    for i in range(events.shape[0]):
        for t in range(events.shape[1]):
            for m in range(n_moves[i, t]):
                out[i, t, m] = move_value(events[i, t, m], values, succ[i, t, m])
    return out


@numba.njit(cache=True, inline="always")
def _move_event(o, dst, off, mine_sq, theirs_sq, rosette_mask, flags):
    """The events of the move ``o -> dst`` before the game's end is known: -1 when it is not legal."""
    ev = 0
    if dst < off:
        if (mine_sq >> dst) & 1:
            return -1
        on_ros = (rosette_mask >> dst) & 1
        if (theirs_sq >> dst) & 1:
            if on_ros and flags & SAFE_ROSETTES:
                return -1
            ev |= CAPTURE
        if on_ros:
            ev |= ROSETTE
    return ev


@numba.njit(cache=True, inline="always")
def _after(sq_digit, sq_bit, pow3, off_sq, o, dst, ev, lane, mm, mh, mo, th):
    """(lane, mover's mask, hand, off, opponent's hand, events) after the move ``o -> dst`` (``sq_digit``,
    ``sq_bit``: each path square's lane digit and private bit, -1 where none)."""
    if o == 0:
        mh -= 1
    elif sq_digit[o] >= 0:
        lane -= pow3[sq_digit[o]]
    else:
        mm &= ~(1 << sq_bit[o])
    if dst == off_sq:
        mo += 1
        ev |= OFF
    elif sq_digit[dst] >= 0:
        if ev & CAPTURE:
            lane -= pow3[sq_digit[dst]]  # digit 2 -> 1
            th += 1
        else:
            lane += pow3[sq_digit[dst]]
    else:
        mm |= 1 << sq_bit[dst]
    return lane, mm, mh, mo, th, ev


@numba.njit(cache=True, inline="always")
def _successor(tables, n, total, flags, o, dst, ev, p):
    """(rank of the successor, events) of the legal move ``o -> dst`` from the unranked position ``p``: the game's
    end marked, and the successor ranked from the side that moves next."""
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    lane, mm, mh, mo, tm, th, to = p
    nl, nmm, nmh, nmo, nth, ev = _after(tables[16], tables[17], tables[18], tables[19], o, dst, ev, lane, mm, mh,
                                        mo, th)
    if _over(n, total, nmo, to):
        ev |= GAME_OVER
        if _winner(n, total, nmo, to) > 0:
            ev |= MOVER_WINS
    elif (ev & ROSETTE and flags & ROSETTE_AGAIN) or (ev & CAPTURE and flags & CAPTURE_AGAIN):
        ev |= AGAIN
    if ev & AGAIN:
        return _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6, nl, nmm, nmh, nmo, tm, nth, to), ev
    return _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6, tables[12][nl], tm, nth, to, nmm, nmh,
                      nmo), ev


@numba.njit(cache=True, inline="always")
def list_moves(tables, p, thr, rosette_mask, total, flags, mine_sq, theirs_sq, succ, events, frm):
    """Write the legal moves of throw ``thr`` from the unranked position ``p`` into ``succ``, ``events`` and
    ``frm`` (1-d, from 0: successor rank, events, square left), hand first; return how many (0: a pass).
    ``mine_sq`` and ``theirs_sq`` are the mover's and the opponent's pieces as bits of the mover's path
    squares."""
    n = tables[0].shape[0] - 1
    off = tables[19]
    mh = p[2]
    cnt = 0
    for o in range(off if thr > 0 else 0):
        if (mh == 0) if o == 0 else not (mine_sq >> o) & 1:
            continue
        dst = o + thr
        ev = _move_event(o, dst, off, mine_sq, theirs_sq, rosette_mask, flags) if dst <= off else -1
        if ev < 0:
            continue
        succ[cnt], events[cnt] = _successor(tables, n, total, flags, o, dst, ev, p)
        frm[cnt] = o
        cnt += 1
    return cnt


@numba.njit(cache=True, parallel=True)
def moves_kernel(tables, idx, throws, rosette_mask, total, flags):
    """Moves of the positions ``idx`` (int64) for each throw value in ``throws`` (int64).

    ``rosette_mask`` has bit s set for each rosette path square s, ``total`` is the end
    rule (0 all-off) and ``flags`` the rule bits :data:`SAFE_ROSETTES`,
    :data:`ROSETTE_AGAIN`, :data:`CAPTURE_AGAIN` (:func:`kernel_args` gives all four).
    Returns ``(succ int32, frm int8, events uint8)`` of shape (k, T, 7), padded with
    -1 / -1 / 0, ``n_moves int8`` (k, T), ``over bool`` (k,) and ``win int8`` (k,)
    (see :func:`is_terminal`, :func:`winner`).
    """
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    n = f.shape[0] - 1
    lane_mirror = tables[12]
    digit_sq = tables[13]
    bit_sq = tables[15]
    k = idx.shape[0]
    nt = throws.shape[0]
    succ = np.full((k, nt, MAX_MOVES), -1, np.int32)
    frm = np.full((k, nt, MAX_MOVES), -1, np.int8)
    events = np.zeros((k, nt, MAX_MOVES), np.uint8)
    n_moves = np.zeros((k, nt), np.int8)
    win = np.zeros(k, np.int8)
    over = np.zeros(k, np.bool_)
    for i in prange(k):
        p = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, idx[i])
        lane, mm, mh, mo, tm, th, to = p
        win[i] = _winner(n, total, mo, to)
        if _over(n, total, mo, to):
            over[i] = True
            continue
        # my pieces on board squares 1..L as bits of my path squares, the opponent's on the lane likewise
        lane_mine, theirs_sq = lane_squares(digit_sq, lane)
        mine_sq = mask_squares(bit_sq, mm) | lane_mine
        for t in range(nt):
            cnt = list_moves(tables, p, throws[t], rosette_mask, total, flags, mine_sq, theirs_sq, succ[i, t],
                             events[i, t], frm[i, t])
            if cnt == 0:
                succ[i, t, 0] = _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6,
                                           lane_mirror[lane], tm, th, to, mm, mh, mo)
                frm[i, t, 0] = -1
                events[i, t, 0] = PASS
                cnt = 1
            n_moves[i, t] = cnt
    return succ, frm, events, n_moves, over, win


@dataclass(frozen=True)
class UrMoves:
    """The moves of ``index`` (k positions) for each of ``throws`` (T values).

    ``succ`` (k, T, 7) int32 successor indices in the same space (-1 padding),
    ``frm`` (k, T, 7) int8 the path square of the moved piece (0 hand; -1 for a pass
    and for padding), ``events`` (k, T, 7) uint8 event bits, ``n_moves`` (k, T) int8
    entries in use (0 only for a terminal position), ``terminal`` (k,) bool whether
    the game is over, ``win`` (k,) int8 the winner of each position from the mover's
    view (1 mine, -1 theirs, 0 the game goes on),
    ``probs`` (T,) the throws' probabilities.
    """

    index: np.ndarray
    throws: np.ndarray
    probs: np.ndarray
    succ: np.ndarray
    frm: np.ndarray
    events: np.ndarray
    n_moves: np.ndarray
    terminal: np.ndarray
    win: np.ndarray

    def has(self, event: int) -> np.ndarray:
        """(k, T, 7) bool: the moves with the ``event`` bit."""
        return (self.events & event) != 0

    again = property(lambda self: self.has(AGAIN), doc="(k, T, 7) bool: the same side moves again (successor "
                                                        "not mirrored).")
    passed = property(lambda self: self.has(PASS), doc="(k, T, 7) bool: the pass pseudo-moves.")
    capture = property(lambda self: self.has(CAPTURE), doc="(k, T, 7) bool: the moves that capture.")
    game_over = property(lambda self: self.has(GAME_OVER), doc="(k, T, 7) bool: the moves that end the game.")

    @property
    def dest(self) -> np.ndarray:
        """(k, T, 7) int8 the path square the moved piece lands on (15 off; -1 pass or padding)."""
        d = self.frm.astype(np.int16) + self.throws[None, :, None]
        return np.where(self.frm >= 0, d, -1).astype(np.int8)

    @property
    def legal(self) -> np.ndarray:
        """(k, T) int8 legal moves (a pass counts 0)."""
        return np.where(self.passed[:, :, 0], 0, self.n_moves).astype(np.int8)


def kernel_args(rules: UrRules) -> tuple[np.ndarray, np.int64, np.int64, np.int64]:
    """(throw values int64, rosette mask, end total, rule flags) as :func:`moves_kernel` takes them after the
    positions."""
    flags = ((SAFE_ROSETTES if rules.safe_rosettes else 0) | (ROSETTE_AGAIN if rules.rosette_again else 0)
             | (CAPTURE_AGAIN if rules.capture_again else 0))
    return rules.throw_values, np.int64(rules.rosette_mask), np.int64(rules.end_total), np.int64(flags)


def _rules_for(space: UrSpace, rules: UrRules | None) -> UrRules:
    if rules is None:
        if space.code != BELL:
            raise ValueError("a space on another board than Bell's needs its rules")
        return load_ur("ur", {"pieces": space.n})
    if rules.pieces != space.n:
        raise ValueError(f"the rules have {rules.pieces} pieces per side, the space {space.n}")
    return rules


def moves(space: UrSpace, indices=None, rules: UrRules | None = None) -> UrMoves:
    """The moves of positions ``indices`` (all positions when None) of ``space``.

    ``rules`` defaults to the classic game (``ur``) with ``space.n`` pieces.
    """
    rules = _rules_for(space, rules)
    if rules.code != space.code:
        raise ValueError(f"the rules' board ({rules.board_name}) is not the space's")
    if indices is None:
        idx = np.arange(space.size, dtype=np.int64)
    else:
        idx = np.ascontiguousarray(indices, dtype=np.int64).ravel()
        if len(idx) and (idx.min() < 0 or idx.max() >= space.size):
            raise IndexError(f"indices outside 0..{space.size - 1}")
    kargs = kernel_args(rules)
    succ, frm, events, n_moves, over, win = moves_kernel(space.tables, idx, *kargs)
    return UrMoves(idx, kargs[0], rules.throw_probabilities, succ, frm, events, n_moves, over, win)


def winner(pos: Position, rules: UrRules) -> int:
    """Who has won a position, from the mover's view: 1 mine, -1 theirs, 0 the game goes on."""
    return int(_winner(rules.pieces, rules.end_total, int(pos.mine_off), int(pos.their_off)))


def is_terminal(pos: Position, rules: UrRules) -> bool:
    """Whether the game is over in a position (a side has all its pieces off, or the total is reached)."""
    return bool(_over(rules.pieces, rules.end_total, int(pos.mine_off), int(pos.their_off)))
