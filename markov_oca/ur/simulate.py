"""Simulated games of the Royal Game of Ur, played move by move from the rules.

This module samples concrete Ur games (the rules as ``docs/ur.md`` states them) for any pair of the
policies of :mod:`markov_oca.ur.chain` (``random``, ``greedy``, ``optimal``), so
that the exact chain of a policy pair can be checked against play. It does not
use the move tables of :mod:`markov_oca.ur.kernel` nor the chain: each side's
pieces are kept as the set of path squares they stand on (a bit per square
1..14), a count in hand (square 0) and a count off the board (square 15), and
every throw lists the legal moves from those squares. Only the optimal policy
looks anything up: the value of a move is read from the table of
:func:`markov_oca.ur.optimal.solve_optimal` at the rank (:func:`.ur.state.rank`)
of the position the move leads to.

Matching the chain (:func:`markov_oca.ur.chain.ur_chain`):

* light moves first; outcome 0 is ``"light wins"``, 1 ``"dark wins"``;
* moves are listed by the square they leave, ascending, the hand (square 0)
  first and once however many pieces it holds, so ``greedy`` and ``optimal``
  break ties exactly as ``policy_weights`` does (the first listed among equals);
* ``greedy`` scores a winning move 10000, a capture 1000, a landing on a
  rosette 100, bearing off 50, plus the square left; ``optimal`` scores a move
  that ends the game 1 (won) or 0 (lost), a move to a rosette ``V[mover's
  view]`` and any other ``1 - V[opponent's view]``;
* ``throws`` counts every throw, passes (a 0 or no legal move) included;
  ``turns`` counts each time the turn comes to a side, the first one included,
  and the extra throw a rosette gives stays in the turn. These are the chain's
  ``state_rewards``, and ``turns`` is what ``Chain.length_distribution`` counts.

Games are played in batches by a jitted kernel (``prange`` over the games of a
batch). Game ``i`` of a run draws from its own splitmix64 stream, seeded from
``seed`` and ``i`` alone, so a run is reproducible whatever the batch size or
the number of threads. :func:`play_ur_python` is the same game in plain Python
(pieces as a list of squares), the baseline of ``benchmarks/bench_simulate.py``.

Those two engines play Bell's path with safe rosettes (the rule sets ``ur``,
``ur-simplificado``, ``ur-7-rescatados``). Any other rule set (another path, unsafe
rosettes, a capture that throws again, a throw of another law) is played by
:func:`_play_ranked`: the game walks over ranked positions, its moves listed by the move
kernel's own functions, the throw drawn from its distribution; the policies score moves
as above (``optimal`` by :func:`~markov_oca.ur.kernel.move_value`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numba
import numpy as np
from numba import prange

from ..analysis.sampling import SimSummary
from ..core.errors import RulesError
from ..core.progress import progress_bar
from .kernel import AGAIN, CAPTURE, GAME_OVER, MAX_MOVES, MOVER_WINS, OFF, ROSETTE, list_moves, move_value
from .rules import UrRules
from .state import BELL, Position, UrSpace, _rank_core, _unrank_core, lane_squares, mask_squares, rank, space_of

__all__ = [
    "DEFAULT_TURN_LIMIT",
    "OUTCOMES",
    "POLICY_CODES",
    "SEATS",
    "play_ur_python",
    "simulate_ur",
    "ur_decisions",
]

SEATS = ["light", "dark"]
OUTCOMES = ["light wins", "dark wins"]
#: Policy name -> the code the kernels take.
POLICY_CODES = {"random": 0, "greedy": 1, "optimal": 2}
#: A game not over after this many turns is counted as unfinished (Ur games end with probability 1;
#: random play with seven pieces lasts about a hundred turns).
DEFAULT_TURN_LIMIT = 10_000

_OFF = 15
_LANE_BITS = sum(1 << s for s in range(5, 13))  # path squares 5..12, shared by both sides
_BOARD_AND_OFF = (1 << (_OFF + 1)) - 2  # path squares 1..15
_POPCOUNT = np.array([bin(i).count("1") for i in range(64)], np.int64)  # heads among up to 6 coins
_POW3 = np.array([3**i for i in range(8)], np.int64)
_BELL_DIGIT_SQ = np.array(BELL.shared, np.int64)
_BELL_BIT_SQ = np.array(BELL.private, np.int64)

# splitmix64 (Steele, Lea, Flood 2014), in uint64 arithmetic
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW6 = np.uint64(63)


# ----------------------------------------------------------------------------
# Random numbers
# ----------------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(cache=True, inline="always")
def _next(state):
    """(new state, 64 random bits)."""
    state = state + _GAMMA
    return state, _mix(state)


@numba.njit(cache=True, inline="always")
def _below(bits, k):
    """A whole number in 0..k-1 from the high 32 of 64 random bits (bias below 2**-32 * k)."""
    return np.int64(((bits >> _S32) * np.uint64(k)) >> _S32)


@numba.njit(cache=True, inline="always")
def _throw(bits, coins, count):
    """The move a throw gives: heads among ``count`` coins, or a die 1..``count``."""
    if coins:
        return _POPCOUNT[np.int64(bits & _LOW6) & ((1 << count) - 1)]
    return 1 + _below(bits, count)


# ----------------------------------------------------------------------------
# The rules on concrete pieces
# ----------------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def _legal(mine, hand, their_lane, thr, ros, frm):
    """Fill ``frm[:k]`` with the squares of the pieces that may move ``thr``, ascending; return k.

    ``mine``: bits of the mover's squares 1..14; ``their_lane``: the opponent's pieces on
    the shared lane 5..12 (its private squares are other squares of the board). Bit 0 of
    the pieces that may move stands for the hand, bit 15 of the landings for bearing off.
    """
    if thr <= 0:
        return 0
    src = mine | (1 if hand > 0 else 0)
    blocked = mine | (their_lane & ros)  # an own piece, or an opponent on a rosette of the lane (safe)
    ok = ((src << thr) & ~blocked & _BOARD_AND_OFF) >> thr  # bit 16 and beyond: overshoot
    # branch-free: every square is written at frm[k], k only grows past the legal ones (``frm`` holds
    # 16; the branching loop costs ten times as much on random positions)
    k = 0
    for o in range(_OFF):
        frm[k] = o
        k += (ok >> o) & 1
    return k


@numba.njit(cache=True, inline="always")
def _lane_code(a, b):
    """Lane code of the position encoding: digit 1 where ``a`` stands, 2 where ``b`` does."""
    code = 0
    for i in range(8):
        s = 5 + i
        if (a >> s) & 1:
            code += _POW3[i]
        elif (b >> s) & 1:
            code += 2 * _POW3[i]
    return code


@numba.njit(cache=True, inline="always")
def _private(occ):
    """Private mask of the position encoding: bits 0..5 = squares 1, 2, 3, 4, 13, 14."""
    return ((occ >> 1) & 15) | (((occ >> 13) & 3) << 4)


@numba.njit(cache=True, inline="always")
def _over(n, total, off_a, off_b):
    return off_a == n or off_b == n or (total > 0 and off_a + off_b >= total)


@numba.njit(cache=True)
def _choose(policy, o_list, k, thr, mine, hand, off, theirs, their_hand, their_off, n, total, ros,
            tables, values):
    """Index in ``o_list[:k]`` of the move ``greedy`` (1) or ``optimal`` (2) plays: the first best."""
    their_lane = theirs & _LANE_BITS
    best = -np.inf
    pick = 0
    for m in range(k):
        o = o_list[m]
        d = o + thr
        capture = d < _OFF and (their_lane >> d) & 1 == 1
        rosette = d < _OFF and (ros >> d) & 1 == 1
        new_off = off + (1 if d == _OFF else 0)
        over = _over(n, total, new_off, their_off)
        wins = over and new_off > their_off
        if policy == 1:
            score = (10_000.0 * wins + 1_000.0 * capture + 100.0 * rosette + 50.0 * (d == _OFF) + o)
        elif over:
            score = 1.0 if wins else 0.0
        else:
            new_mine = mine
            new_hand = hand
            if o == 0:
                new_hand -= 1
            else:
                new_mine &= ~(np.int64(1) << o)
            if d < _OFF:
                new_mine |= np.int64(1) << d
            new_theirs = theirs
            new_their_hand = their_hand
            if capture:
                new_theirs &= ~(np.int64(1) << d)
                new_their_hand += 1
            if rosette:  # the mover throws again: the position as the mover sees it
                s = rank(tables, _lane_code(new_mine, new_theirs), _private(new_mine), new_hand, new_off,
                         _private(new_theirs), new_their_hand, their_off)
                score = values[s]
            else:  # the opponent moves: the position as the opponent sees it
                s = rank(tables, _lane_code(new_theirs, new_mine), _private(new_theirs), new_their_hand,
                         their_off, _private(new_mine), new_hand, new_off)
                score = 1.0 - values[s]
        if score > best:
            best = score
            pick = m
    return pick


@numba.njit(cache=True)
def _play(state, policies, n, total, ros, coins, count, tables, values, turn_limit):
    """One game from all pieces in hand; (outcome 0 light / 1 dark / -1 unfinished, turns, throws).

    ``me_*`` is the side to move (``side``: 0 light, 1 dark), ``op_*`` the other; ``*_occ``
    holds a bit for each board square 1..14 the side stands on.
    """
    me_occ = np.int64(0)
    me_hand = np.int64(n)
    me_off = np.int64(0)
    op_occ = np.int64(0)
    op_hand = np.int64(n)
    op_off = np.int64(0)
    frm = np.empty(16, np.int64)
    side = 0
    turns = 1
    throws = 0
    while True:
        throws += 1
        state, bits = _next(state)
        thr = _throw(bits, coins, count)
        k = _legal(me_occ, me_hand, op_occ & _LANE_BITS, thr, ros, frm)
        again = False
        if k > 0:
            policy = policies[side]
            if k == 1:
                c = 0
            elif policy == 0:
                state, bits = _next(state)
                c = _below(bits, k)
            else:
                c = _choose(policy, frm, k, thr, me_occ, me_hand, me_off, op_occ, op_hand, op_off,
                            n, total, ros, tables, values)
            o = frm[c]
            d = o + thr
            if o == 0:
                me_hand -= 1
            else:
                me_occ &= ~(np.int64(1) << o)
            if d == _OFF:
                me_off += 1
                if _over(n, total, me_off, op_off):
                    return (side if me_off > op_off else 1 - side), turns, throws
            else:
                me_occ |= np.int64(1) << d
                if (op_occ & _LANE_BITS) >> d & 1:  # a capture: back to the owner's hand
                    op_occ &= ~(np.int64(1) << d)
                    op_hand += 1
                again = (ros >> d) & 1 == 1
        if not again:
            if turns >= turn_limit:
                return -1, turns, throws
            side = 1 - side
            turns += 1
            me_occ, op_occ = op_occ, me_occ
            me_hand, op_hand = op_hand, me_hand
            me_off, op_off = op_off, me_off


@numba.njit(cache=True, parallel=True)
def _play_batch(first, count_games, seed, policies, n, total, ros, coins, count, tables, values, turn_limit,
                ranked=None):
    """Games ``first .. first + count_games - 1`` of a run; arrays (outcome, turns, throws). With ``ranked``
    (throw values, their cumulative chances, rule flags, the start's rank) the games are :func:`_play_ranked`'s."""
    winner = np.empty(count_games, np.int64)
    turns = np.empty(count_games, np.int64)
    throws = np.empty(count_games, np.int64)
    base = _mix(seed)
    for i in prange(count_games):
        state = _mix(base + np.uint64(first + i) * _GAMMA)
        if ranked is None:
            w, t, th = _play(state, policies, n, total, ros, coins, count, tables, values, turn_limit)
        else:
            w, t, th = _play_ranked(state, policies, tables, ranked[0], ranked[1], ros, total, ranked[2], values,
                                    turn_limit, ranked[3])
        winner[i] = w
        turns[i] = t
        throws[i] = th
    return winner, turns, throws


@numba.njit(cache=True)  # not parallel: it compiles faster, and runs once per test
def _decisions_kernel(lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off, throws, policy,
                      n, total, ros, tables, values):
    k = lane.shape[0]
    nt = throws.shape[0]
    frm_out = np.full((k, nt, 7), -1, np.int8)
    chosen = np.full((k, nt), -1, np.int8)
    for i in range(k):
        lane_mine, lane_theirs = lane_squares(_BELL_DIGIT_SQ, lane[i])
        mine = mask_squares(_BELL_BIT_SQ, mine_mask[i]) | lane_mine
        theirs = mask_squares(_BELL_BIT_SQ, their_mask[i]) | lane_theirs
        if _over(n, total, np.int64(mine_off[i]), np.int64(their_off[i])):
            continue
        frm = np.empty(16, np.int64)
        for t in range(nt):
            m = _legal(mine, np.int64(mine_hand[i]), theirs & _LANE_BITS, throws[t], ros, frm)
            for j in range(m):
                frm_out[i, t, j] = frm[j]
            if m > 0 and policy > 0:
                c = _choose(policy, frm, m, throws[t], mine, np.int64(mine_hand[i]), np.int64(mine_off[i]),
                            theirs, np.int64(their_hand[i]), np.int64(their_off[i]), n, total, ros, tables, values)
                chosen[i, t] = frm[c]
    return frm_out, chosen


# ----------------------------------------------------------------------------
# Any board: the game walked over ranked positions with the move kernel's rules
# ----------------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def _ranked_moves(tables, s, thr, ros, total, flags, succ, evs, frm):
    """The legal moves of throw ``thr`` in position ``s`` (successor ranks, events, squares left), as
    :func:`~markov_oca.ur.kernel.moves_kernel` lists them; their number (0: a pass)."""
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    p = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, s)
    lane, mm, mh, mo, tm, th, to = p
    lane_mine, theirs_sq = lane_squares(tables[13], lane)
    mine_sq = mask_squares(tables[15], mm) | lane_mine
    k = list_moves(tables, p, thr, ros, total, flags, mine_sq, theirs_sq, succ, evs, frm)
    if k == 0:
        succ[0] = _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6, tables[12][lane], tm, th, to,
                             mm, mh, mo)
    return k


@numba.njit(cache=True)
def _play_ranked(state, policies, tables, tvals, tcum, ros, total, flags, values, turn_limit, start):
    """One game of any rule set from position ``start`` (light to move): as :func:`_play`, the throw drawn from
    the cumulative chances ``tcum`` of the values ``tvals`` (53 random bits)."""
    succ = np.empty(MAX_MOVES, np.int64)
    evs = np.empty(MAX_MOVES, np.int64)
    frm = np.empty(MAX_MOVES, np.int64)
    s = start
    side = 0
    turns = 1
    throws = 0
    nt = tvals.shape[0]
    while True:
        throws += 1
        state, bits = _next(state)
        u = np.float64(bits >> np.uint64(11)) * (1.0 / 9007199254740992.0)
        t = 0
        while t < nt - 1 and u >= tcum[t]:
            t += 1
        thr = tvals[t]
        k = _ranked_moves(tables, s, thr, ros, total, flags, succ, evs, frm)
        if k == 0:
            nxt, ev = succ[0], 0
        else:
            policy = policies[side]
            c = 0
            if k > 1 and policy == 0:
                state, bits = _next(state)
                c = _below(bits, k)
            elif k > 1:
                best = -np.inf
                for m in range(k):
                    ev = evs[m]
                    if policy == 1:
                        wins = (ev & GAME_OVER) != 0 and (ev & MOVER_WINS) != 0
                        score = (10_000.0 * wins + 1_000.0 * ((ev & CAPTURE) != 0) + 100.0 * ((ev & ROSETTE) != 0)
                                 + 50.0 * ((ev & OFF) != 0) + frm[m])
                    else:
                        score = move_value(ev, values, succ[m])
                    if score > best:
                        best = score
                        c = m
            nxt, ev = succ[c], evs[c]
            if ev & GAME_OVER:
                return (side if ev & MOVER_WINS else 1 - side), turns, throws
        s = nxt
        if not ev & AGAIN:
            if turns >= turn_limit:
                return -1, turns, throws
            side = 1 - side
            turns += 1


def _classic(rules: UrRules) -> bool:
    """Whether the squares-and-bits engine (:func:`_play`) plays ``rules``: Bell's path, safe rosettes that throw
    again, no throw for a capture, coins or a die."""
    return (rules.code == BELL and rules.safe_rosettes and rules.rosette_again and not rules.capture_again
            and not rules.throw_name)


# ----------------------------------------------------------------------------
# Python entry points
# ----------------------------------------------------------------------------

def _space(rules: UrRules) -> UrSpace:
    return space_of(rules.pieces, rules.code)


def _policy_codes(light: str, dark: str) -> np.ndarray:
    codes = []
    for p in (light, dark):
        if not isinstance(p, str) or p not in POLICY_CODES:
            raise RulesError(f"unknown policy {p!r} (policies: {', '.join(POLICY_CODES)})")
        codes.append(POLICY_CODES[p])
    return np.array(codes, np.int64)


def _values_for(rules: UrRules, need: bool, values: np.ndarray | None) -> np.ndarray:
    if not need:
        return np.zeros(1)
    if values is None:
        from .optimal import solve_optimal

        values = solve_optimal(rules).values
    values = np.ascontiguousarray(values, dtype=np.float64)
    size = _space(rules).size
    if values.shape != (size,):
        raise ValueError(f"the optimal values of {rules.pieces} pieces hold {size:,} positions, got shape "
                         f"{values.shape}")
    return values


def _kernel_rules(rules: UrRules) -> tuple[int, int, int, bool, int]:
    return rules.pieces, rules.end_total, rules.rosette_mask, rules.throw_kind == "coins", rules.throw_count


def simulate_ur(rules: UrRules, light: str = "random", dark: str = "random", games: int = 100_000, *,
                seed: int = 0, values: np.ndarray | None = None, turn_limit: int | None = None,
                batch: int = 100_000, on_batch: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None = None,
                progress: bool = False) -> SimSummary:
    """Play ``games`` games of ``rules``, light playing ``light`` and dark ``dark`` (light moves first).

    Parameters
    ----------
    rules:
        An Ur rule set (:func:`markov_oca.ur.rules.load_ur`).
    light, dark:
        ``"random"``, ``"greedy"`` or ``"optimal"``, as :mod:`markov_oca.ur.chain` defines them.
    games:
        How many games to play.
    seed:
        Game ``i`` draws from a stream seeded by ``seed`` and ``i``: the same seed gives the
        same games whatever ``batch`` and the number of threads.
    values:
        The optimal values (:func:`markov_oca.ur.optimal.solve_optimal`) for the ``optimal``
        policy; solved here when needed and not given.
    turn_limit:
        A game not over after this many turns counts as unfinished (default
        :data:`DEFAULT_TURN_LIMIT`).
    batch:
        Games per call of the kernel; memory is a few dozen bytes a game of a batch.
    on_batch:
        Called after each batch with its per-game arrays ``(outcome, turns, throws)``
        (outcome 0 light won, 1 dark won, -1 unfinished).
    progress:
        Show a progress bar on stderr.

    Returns
    -------
    SimSummary
        Seats ``["light", "dark"]``, outcomes ``["light wins", "dark wins"]``, ``landings`` None.

    Examples
    --------
    >>> from markov_oca.ur.rules import load_ur
    >>> s = simulate_ur(load_ur("ur", {"pieces": 1}), "optimal", "random", games=1000, seed=1)
    >>> s.games, s.unfinished
    (1000, 0)
    """
    policies = _policy_codes(light, dark)
    if games < 0 or batch < 1:
        raise ValueError("games must be >= 0 and batch >= 1")
    limit = DEFAULT_TURN_LIMIT if turn_limit is None else int(turn_limit)
    if limit < 1:
        raise ValueError("turn_limit must be at least 1")
    vals = _values_for(rules, bool((policies == POLICY_CODES["optimal"]).any()), values)
    space = _space(rules)
    tables = space.tables
    n, total, ros, coins, count = _kernel_rules(rules)
    ranked = None
    if not _classic(rules):
        from .kernel import kernel_args

        tvals, _ros, _total, flags = kernel_args(rules)
        ranked = (tvals, np.cumsum(rules.throw_probabilities), flags, np.int64(space.rank(0, 0, n, 0, 0, n, 0)))
    summary = SimSummary(rules=rules.name, seats=list(SEATS), outcome_names=list(OUTCOMES), turn_limit=limit,
                         seed=seed)
    seed_bits = np.uint64(int(seed) & (2**64 - 1))
    t0 = time.perf_counter()
    with progress_bar(progress) as bar:
        task = bar.add_task(f"simulating {rules.name} ({rules.pieces} pieces), {light} v {dark}", total=games)
        done = 0
        while done < games:
            m = min(batch, games - done)
            winner, turns, throws = _play_batch(np.int64(done), np.int64(m), seed_bits, policies, np.int64(n),
                                                np.int64(total), np.int64(ros), coins, np.int64(count), tables,
                                                vals, np.int64(limit), ranked)
            summary.add_batch(winner, turns, throws)
            if on_batch is not None:
                on_batch(winner, turns, throws)
            done += m
            bar.update(task, advance=m)
    summary.elapsed = time.perf_counter() - t0
    return summary


def ur_decisions(rules: UrRules, positions: Position, policy: str = "random",
                 values: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The simulator's legal moves and choices in given positions, for each throw value.

    ``positions`` are seven arrays in the encoding of :mod:`markov_oca.ur.state` (as
    ``UrSpace.unrank_many`` gives them; the side to move is *mine*). Returns ``frm``
    ``(k, T, 7)`` int8, the squares of the pieces that may move, ascending, padded with -1
    (all -1 for a pass and in a finished position), and ``chosen`` ``(k, T)`` int8, the
    square of the piece ``policy`` moves (-1 for a pass, a finished position and ``random``).
    ``T`` runs over ``rules.throw_values``. This is how the tests compare the simulator's
    rules with the kernel's move tables, position by position.
    """
    if not _classic(rules):
        raise RulesError(f"{rules.name}: the squares-and-bits simulator plays Bell's path with safe rosettes only; "
                         "other rule sets are played over ranked positions")
    code = _policy_codes(policy, policy)[0]
    vals = _values_for(rules, code == POLICY_CODES["optimal"], values)
    n, total, ros, _coins, _count = _kernel_rules(rules)
    arrs = [np.ascontiguousarray(a, dtype=np.int64) for a in positions]
    return _decisions_kernel(*arrs, rules.throw_values, np.int64(code), np.int64(n), np.int64(total),
                             np.int64(ros), _space(rules).tables, vals)


def play_ur_python(rules: UrRules, light: str = "random", dark: str = "random",
                   rng: random.Random | None = None, values: np.ndarray | None = None) -> tuple[int, int, int]:
    """One game in plain Python: (outcome 0 light won / 1 dark won, turns, throws).

    The same rules, policies and counting as :func:`simulate_ur`, with each side's pieces
    as a list of path squares; the baseline of ``benchmarks/bench_simulate.py`` and a second, independent
    reading of the rules. ``values`` are needed for ``optimal`` (not solved here).
    """
    rng = rng if rng is not None else random.Random()
    policies = (light, dark)
    for p in policies:
        if p not in POLICY_CODES:
            raise RulesError(f"unknown policy {p!r} (policies: {', '.join(POLICY_CODES)})")
    if "optimal" in policies and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    if not _classic(rules):
        raise RulesError(f"{rules.name}: the plain-Python game plays Bell's path with safe rosettes only")
    n, total = rules.pieces, rules.end_total
    rosettes = set(rules.rosettes)
    lo, hi = rules.shared
    space = _space(rules) if values is not None else None
    pieces = [[0] * n, [0] * n]  # path squares: 0 hand, 1..14 board, 15 off
    side, turns, throws = 0, 1, 0

    def over(a: list[int], b: list[int]) -> bool:
        off_a, off_b = a.count(_OFF), b.count(_OFF)
        return off_a == n or off_b == n or (total > 0 and off_a + off_b >= total)

    def value(mine: list[int], theirs: list[int], frm: int, to: int) -> float:
        new_mine = list(mine)
        new_mine[new_mine.index(frm)] = to
        new_theirs = [0 if (s == to and lo <= s <= hi) else s for s in theirs]
        if over(new_mine, new_theirs):
            return 1.0 if new_mine.count(_OFF) > new_theirs.count(_OFF) else 0.0
        if to in rosettes:
            return float(values[space.rank(*_encode(new_mine, new_theirs))])
        return 1.0 - float(values[space.rank(*_encode(new_theirs, new_mine))])

    while True:
        throws += 1
        if rules.throw_kind == "coins":
            thr = sum(rng.getrandbits(1) for _ in range(rules.throw_count))
        else:
            thr = rng.randint(1, rules.throw_count)
        mine, theirs = pieces[side], pieces[1 - side]
        legal = []
        if thr > 0:
            for frm in sorted(set(mine)):  # one move per square, the hand first
                to = frm + thr
                if frm == _OFF or to > _OFF or (to < _OFF and to in mine):
                    continue
                if to in rosettes and lo <= to <= hi and to in theirs:
                    continue
                legal.append(frm)
        again = False
        if legal:
            policy = policies[side]
            if len(legal) == 1:
                frm = legal[0]
            elif policy == "random":
                frm = rng.choice(legal)
            elif policy == "greedy":
                frm = max(legal, key=lambda f, mine=mine, theirs=theirs, thr=thr: _greedy_score(
                    f, f + thr, mine, theirs, n, total, rosettes, lo, hi))  # max keeps the first of equals
            else:
                frm = max(legal, key=lambda f: value(mine, theirs, f, f + thr))
            to = frm + thr
            mine[mine.index(frm)] = to
            if lo <= to <= hi and to in theirs:
                theirs[theirs.index(to)] = 0
            if over(mine, theirs):
                return (side if mine.count(_OFF) > theirs.count(_OFF) else 1 - side), turns, throws
            again = to in rosettes
        if not again:
            side = 1 - side
            turns += 1


def _greedy_score(frm: int, to: int, mine: list[int], theirs: list[int], n: int, total: int,
                  rosettes: set[int], lo: int, hi: int) -> int:
    new_off = mine.count(_OFF) + (to == _OFF)
    their_off = theirs.count(_OFF)
    ends = new_off == n or (total > 0 and new_off + their_off >= total)
    return (10_000 * (ends and new_off > their_off) + 1_000 * (lo <= to <= hi and to in theirs)
            + 100 * (to in rosettes) + 50 * (to == _OFF) + frm)


def _encode(mine: list[int], theirs: list[int]) -> tuple[int, ...]:
    """The seven fields of the position encoding (mine to move) from path squares."""
    lane = sum((1 if s in mine else 2 if s in theirs else 0) * 3 ** (s - 5) for s in range(5, 13))
    fields = [lane]
    for side in (mine, theirs):
        mask = sum(1 << b for b, s in enumerate((1, 2, 3, 4, 13, 14)) if s in side)
        fields += [mask, side.count(0), side.count(_OFF)]
    return tuple(fields)

