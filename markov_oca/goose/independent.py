"""Players who never meet: any number of them, solved from one player's race alone.

On a board with no occupancy rule and no square that holds a piece until another
comes (``waiting = "until-replaced"``), nothing one piece does changes another's
race: each player's own number of turns ``T`` until finishing has the same
distribution ``f(t) = P(T = t)``, independently of the others. The joint chain
(``N * L**N`` ids) is then never needed. With ``G(t) = P(T > t)`` and
``F(t) = P(T <= t)``, and seats taking their turns in order (round ``k`` is every
seat's ``k``-th turn, seat 1 first):

* ``until = "first"``: seat ``j``'s ``k``-th turn happens when it has not finished
  and nobody has finished before it: the seats before it have ``T > k``, the seats
  after it ``T > k - 1``. So ``allow_j(k) = G(k)**(j-1) G(k-1)**(N-j)``, seat ``j``
  wins with ``sum_k f(k) allow_j(k)`` and the game ends on turn ``(k-1) N + j``.
* ``until = "last"``: a finished piece leaves the board and the game ends when one
  player is left, so seat ``j``'s ``k``-th turn happens unless every other seat has
  finished before it: ``allow_j(k) = 1 - F(k)**(j-1) F(k-1)**(N-j)``. Places follow
  the order of ``(T, seat)``: the chance of place ``m + 1`` is a two-group binomial
  convolution. The game's length comes from a pass over rounds that carries the
  number of players still in the race (they all share the round's hazard
  ``f(k) / G(k-1)``) and the turns played so far.

Expected turns, throws, stakes and landings of a seat are the single player's
figures for its ``k``-th turn times ``allow_j(k)``, summed over ``k``; the chance
of ever landing on a square uses the single player's first-landing turn. A single
player who may never finish (a closed class without the goal) is not handled
here: the joint chain is, up to its size.

Every figure carries a certified error bound (:func:`independent_bounds`): the
single race's stored figures are within a relative rounding of the exact race's
(:func:`single_race`), the seats' formulas (:func:`seat_figures`) run a second time
on intervals around them (:class:`~markov_oca.linalg.interval.Interval`), and the
turns after the last one pushed add at most the racing mass left times what a
turn can count (:func:`tail_weights`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numba
import numpy as np

from ..analysis.bounds import PRECISION, clip_probability, meets, upper_steps
from ..analysis.chain import LengthDistribution
from ..analysis.moments import forward_block
from ..analysis.results import Expectation, certify_length, summarise_length
from ..core.errors import SolverError
from ..engine.race import Landing, SeatResult, SolveResults, check_sum
from ..linalg.certify import SLACK, TINY, U, gamma
from ..linalg.interval import UP, Interval, stack
from .model import goose_model
from .rules import GooseRules, special_squares

MAX_PLAYERS = 50
#: Single-player mass still racing at which the turn-by-turn pass stops; far below the
#: figures' own precision (what it leaves out of a winning chance is at most this: :func:`tail_weights`).
SINGLE_TAIL = 1e-17
#: The smallest racing mass a race is pushed on to for a figure that misses its precision (far above the
#: underflow allowance of its figures).
DEEPEST = 1e-200


def never_meet(rules: GooseRules) -> bool:
    """True when no piece's race depends on another's: no occupancy and no waiting square.

    A waiting square with ``waiting = "turns:K"`` is a plain "miss K turns" square
    (the loader already made it one), so it does not count.
    """
    return rules.occupancy == "none" and not any(sq.wait for sq in rules.squares.values())


@dataclass
class SingleRace:
    """One player's race turn by turn: index ``k`` is the ``k``-th turn (index 0 unused)."""

    finish: np.ndarray  # f(k): finishes during turn k
    alive: np.ndarray  # G(k): still racing after turn k (G(0) = 1)
    throws: np.ndarray  # expected throws made in turn k
    stakes: np.ndarray  # expected stakes paid in turn k
    landings: np.ndarray  # (K + 1, G + 1): expected landings on each square in turn k
    first_landing: np.ndarray  # (K + 1, G + 1): chance that turn k holds the first landing there
    never: float  # chance of never finishing
    states: int
    transitions: int
    #: What bounds the figures read from the race (:func:`race_inputs`): every stored figure of turn ``k``
    #: is within ``by_turn[k]`` of itself relative, plus ``absolute`` (underflow), of the exact race's.
    by_turn: np.ndarray | None = None
    absolute: float = 0.0
    #: A certified upper bound on the expected steps (each at least a throw or a missed turn) to the goal from
    #: any state: what the turns after the last one pushed can add, per unit of mass still racing.
    steps_up: float = float("inf")
    throw_max: float = 0.0  # the most throws, and stakes, one step can count
    stake_max: float = 0.0
    possible: np.ndarray | None = None  # squares some throw lands on (the others are never landed on: 0 exactly)
    closed: bool = False  # a closed class without the goal: a player may be stuck for ever
    tail: float = 0.0  # racing mass at which the push stopped
    certificate: dict = field(default_factory=dict)  # the forward solve that certifies ``steps_up``

    @property
    def turns(self) -> int:
        return self.finish.size - 1

    @property
    def rounding(self) -> float:
        """The largest relative rounding of a stored figure (that of the last turn)."""
        return float(self.by_turn[-1]) if self.by_turn is not None and self.by_turn.size else 0.0

    @property
    def done(self) -> np.ndarray:
        """F(k) = P(T <= k), summed from the finishes (accurate where it is small)."""
        return np.cumsum(self.finish)


@numba.njit(cache=True)
def _push(nxt, pnum, inv_denom, throw, stake, lkey, tab_ptr, tab_col, k, v, vf, w, wf, thr, stk, land, first, saved):
    """Push the mass ``v`` (and the not-yet-landed mass ``vf``) one step, adding to ``w``, ``wf``.

    Every figure is a sum of nonnegative terms (no subtraction: a landing's not-yet-landed mass goes
    to ``first``, and ``wf`` of a landed square is put back as it was, exactly), so each is off by a
    rounding relative to itself (:func:`single_race`).
    """
    n, J = nxt.shape
    n_sq = vf.shape[1]
    for s in range(n):
        m = v[s]
        if m == 0.0:
            continue
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                break
            p = pnum[s, j] * inv_denom
            mp = m * p
            thr[k] += mp * throw[s, j]
            stk[k] += mp * stake[s, j]
            w[t] += mp
            key = lkey[s, j]
            lo, hi = (tab_ptr[key], tab_ptr[key + 1]) if key >= 0 else (0, 0)
            for e in range(lo, hi):
                c = tab_col[e]
                saved[e - lo] = wf[t, c]
                land[k, c] += mp
                first[k, c] += vf[s, c] * p
            for c in range(n_sq):
                wf[t, c] += vf[s, c] * p
            for e in range(lo, hi):  # the landed squares' not-yet-landed mass as it was: nothing added
                wf[t, tab_col[e]] = saved[e - lo]


@numba.njit(cache=True)
def _below(v, vf, low):
    """Whether a nonzero mass of ``v`` or ``vf`` lies below ``low`` (its product by a probability may underflow)."""
    n_sq = vf.shape[1]
    count = 0
    for s in range(v.size):
        count += (0.0 < v[s]) & (v[s] < low)
        for c in range(n_sq):
            count += (0.0 < vf[s, c]) & (vf[s, c] < low)
    return count > 0


@numba.njit(cache=True)
def _grown(a, cap):
    out = np.zeros(cap)
    out[:a.size] = a
    return out


@numba.njit(cache=True)
def _grown2(a, cap):
    out = np.zeros((cap, a.shape[1]))
    out[:a.shape[0]] = a
    return out


@numba.njit(cache=True)
def _single_pass(nxt, pnum, inv_denom, init, mid_turn, is_final, throw, stake, lkey, tab_ptr, tab_col,
                 n_sq, tail, max_turns):
    n = nxt.shape[0]
    cap = min(max_turns + 1, 1024)  # grown by doubling: most races end in a few hundred turns
    fin = np.zeros(cap)
    alive = np.zeros(cap)
    thr = np.zeros(cap)
    stk = np.zeros(cap)
    land = np.zeros((cap, n_sq))
    first = np.zeros((cap, n_sq))
    v = np.zeros(n)  # mass at the start of the next turn
    vf = np.zeros((n, n_sq))  # the part of it that has not landed yet on each square
    v[init] = 1.0
    vf[init, :] = 1.0
    alive[0] = 1.0
    cur = np.zeros(n)
    curf = np.zeros((n, n_sq))
    w = np.zeros(n)
    wf = np.zeros((n, n_sq))
    saved = np.zeros(n_sq)
    under = False  # whether a product may have fallen below the normal range (then TINY an operation)
    p_min = np.inf
    for s in range(n):
        for j in range(nxt.shape[1]):
            if nxt[s, j] >= 0:
                p_min = min(p_min, pnum[s, j] * inv_denom)
    low = 2.2250738585072014e-308 / p_min * 2.0
    k = 0
    pushes = 0  # every push made, and the most in one turn: what the rounding of the figures compounds over
    most = 0
    upto = np.zeros(cap)  # the pushes made by the end of each turn
    left = 1.0
    while k < max_turns and left > tail:
        k += 1
        if k >= cap:
            cap *= 2
            fin = _grown(fin, cap)
            alive = _grown(alive, cap)
            thr = _grown(thr, cap)
            stk = _grown(stk, cap)
            land = _grown2(land, cap)
            first = _grown2(first, cap)
            upto = _grown(upto, cap)
        cur[:] = v
        curf[:, :] = vf
        v[:] = 0.0
        vf[:, :] = 0.0
        # One turn: push the turn-start mass, then push again what stopped mid-turn (another throw).
        before = pushes
        for _inner in range(100_000):
            w[:] = 0.0
            wf[:, :] = 0.0
            if not under and _below(cur, curf, low):  # a product may fall below the normal range
                under = True
            _push(nxt, pnum, inv_denom, throw, stake, lkey, tab_ptr, tab_col, k, cur, curf, w, wf,
                  thr, stk, land, first, saved)
            pushes += 1
            more = False
            for s in range(n):
                if is_final[s]:
                    fin[k] += w[s]
                    cur[s] = 0.0
                    curf[s, :] = 0.0
                elif mid_turn[s]:
                    cur[s] = w[s]
                    curf[s, :] = wf[s, :]
                    more = more or w[s] != 0.0
                else:
                    v[s] += w[s]
                    vf[s, :] += wf[s, :]
                    cur[s] = 0.0
                    curf[s, :] = 0.0
            if not more:
                break
        most = max(most, pushes - before)
        upto[k] = pushes
        left = 0.0
        for s in range(n):
            left += v[s]
        alive[k] = left
    return (fin[:k + 1].copy(), alive[:k + 1].copy(), thr[:k + 1].copy(), stk[:k + 1].copy(),
            land[:k + 1].copy(), first[:k + 1].copy(), upto[:k + 1].copy(), most, under)


def single_race(rules: GooseRules, max_turns: int = 200_000, tail: float = SINGLE_TAIL) -> SingleRace:
    """One player's race on ``rules``, turn by turn, until ``tail`` of its mass is still racing.

    Beside the figures, what bounds them: each stored figure is a sum of nonnegative terms, every term
    a product of at most four roundings of a mass, and every mass the push of the masses before (at
    most ``fan-in + 4`` roundings a push, a turn's pushes added once more). The pushes being nonnegative
    and linear, the relative errors compound without cancellation: every figure of turn ``k`` is within
    ``gamma`` of ``(pushes up to turn k) (fan-in + 4) + (terms of a turn)`` relative of the exact race's
    (``by_turn``: the early turns, which hold most of the mass, carry the smallest), plus
    :data:`~markov_oca.linalg.certify.TINY` per operation for underflow when a product fell below the
    normal range (sums of nonnegative numbers do not underflow). The expected steps from every
    state come from the chain's forward solve, certified (:func:`~markov_oca.analysis.moments.forward_block`).
    """
    m = goose_model(rules, 1)
    chain = m.build()
    is_final = np.zeros(chain.n, np.bool_)
    is_final[list(chain.outcomes.values())] = True
    turn_start = chain.turn_start if chain.turn_start is not None else np.ones(chain.n, bool)
    mid_turn = ~turn_start & ~is_final
    key, table = m.landing_events(chain, 0)
    rows, cols = np.nonzero(table)
    tab_ptr = np.searchsorted(rows, np.arange(table.shape[0] + 1)).astype(np.int64)
    throw = chain.branch_rewards["throws"].astype(np.float64)
    stake = chain.branch_rewards.get("stakes", np.zeros(chain.next.shape, np.int32)).astype(np.float64)
    never = chain.deadlock_probability
    closed = bool(chain.structure.deadlock.any())
    if never > 1e-12 or closed:
        return SingleRace(*(np.zeros(1) for _ in range(4)), np.zeros((1, 1)), np.zeros((1, 1)), never,
                          chain.n, chain.n_transitions, closed=closed)
    fin, alive, thr, stk, land, first, upto, most, under = _single_pass(
        chain.next, chain.pnum, 1.0 / chain.denom, chain.init, mid_turn, is_final, throw, stake,
        key.astype(np.int64), tab_ptr, cols.astype(np.int64), table.shape[1], tail, max_turns)
    valid = chain.next >= 0
    fan_in = int(np.bincount(chain.next[valid]).max())
    n, J = chain.next.shape
    # the roundings a figure of turn k compounds: its pushes' and the sums of one turn (gamma_depth, with slack)
    depth = upto.astype(np.float64) * (fan_in + 4) + n * J * max(most, 1) + n + 8
    by_turn = depth * U / (1 - depth * U) * SLACK
    pushes = int(upto[-1])
    fwd = forward_block(chain, np.zeros((n, 0)))
    transient = chain.structure.transient
    steps = float("inf")
    if fwd.x is not None and np.isfinite(fwd.norm):
        steps = float(upper_steps(fwd.x[:, 0], fwd.res[:, 0], fwd.norm)[transient].max(initial=0.0))
    keys = key[transient]
    possible = table[np.unique(keys[keys >= 0])].any(axis=0)
    return SingleRace(fin, alive, thr, stk, land, first, 0.0, chain.n, chain.n_transitions,
                      by_turn=by_turn,
                      absolute=float(pushes * n * J * (table.shape[1] + 4)) * TINY if under else 0.0,
                      steps_up=steps, throw_max=float(np.where(valid, throw, 0.0).max()),
                      stake_max=float(np.where(valid, stake, 0.0).max()), possible=possible, tail=tail,
                      certificate={"method": f"expected steps of the single race: {fwd.report.get('method')}",
                                   "residual": fwd.report.get("residual"),
                                   "iterations": fwd.report.get("iterations"), "norm_bound": fwd.norm})


# ----------------------------------------------------------------------------- seats


def _powers(x, top: int) -> list:
    """``[x**0, x**1, ..., x**top]`` by repeated products (arrays or intervals)."""
    out = [x ** 0]
    for _ in range(top):
        out.append(out[-1] * x)
    return out


def allowance(G, F, players: int, until: str):
    """``allow[j, k - 1]``: the chance that seat ``j`` (0-based) gets its ``k``-th turn, given it has not
    finished, for ``k = 1 .. K``; ``G`` and ``F`` from turn 0 (arrays, or intervals: its bracket)."""
    rows = []
    for j in range(players):
        before, after = j, players - 1 - j  # seats that play before and after seat j in a round
        if until == "first":
            rows.append(G[1:] ** before * G[:-1] ** after)
        else:
            rows.append(1.0 - F[1:] ** before * F[:-1] ** after)
    return stack(rows)


def places(f, G, F, players: int):
    """``p[j, m]``: the chance that seat ``j`` finishes in place ``m + 1`` (``until = "last"``).

    On its ``k``-th turn the seats before it with ``T <= k`` and those after it with ``T <= k - 1``
    are ahead: two binomials (``F**q G**(count - q)``, ``G`` for ``1 - F``), convolved.
    """
    def binom(count: int, Fk, Gk):
        pf, pg = _powers(Fk, count), _powers(Gk, count)
        return stack([math.comb(count, q) * (pf[q] * pg[count - q]) for q in range(count + 1)])

    rows = []
    for j in range(players):
        before, after = j, players - 1 - j
        a, b = binom(before, F[1:], G[1:]), binom(after, F[:-1], G[:-1])
        cols = []
        for m in range(players):
            x = np.arange(max(0, m - after), min(m, before) + 1)
            cols.append(f[1:] @ (a[x] * b[m - x]).sum(axis=0))
        rows.append(stack(cols))
    return stack(rows)


def seat_figures(f, G, F, throws, stakes, land, first, players: int, until: str) -> dict:
    """Every seat's figures from one player's turn-by-turn figures (index 0: turn 0), as the module
    docstring derives them: ``turns``, ``throws``, ``stakes``, ``rounds``, ``wins`` (``until = "first"``) or
    ``places``, and with ``land``/``first`` the expected ``landings`` and ``chance`` of landing, per seat and
    square. The same formulas on arrays (the figures) and on intervals (brackets of the exact figures)."""
    N = players
    allow = allowance(G, F, N, until)
    out = {"allow": allow, "turns": (G[None, :-1] * allow).sum(axis=1), "throws": allow @ throws[1:],
           "stakes": allow @ stakes[1:]}
    if until == "first":
        out["wins"] = allow @ f[1:]
        out["rounds"] = (G[:-1] ** N).sum()
    else:
        out["places"] = places(f, G, F, N)
        # A round starts on a turn of the first seat still racing (the chain's own count).
        out["rounds"] = sum((G[:-1] * F[1:] ** j * (1.0 - F[:-1] ** (N - 1 - j))).sum() for j in range(N))
    if land is not None:
        out["landings"] = allow @ land[1:]
        out["chance"] = allow @ first[1:]
    return out


def race_inputs(race: SingleRace) -> tuple[Interval, ...]:
    """Brackets of the exact race's ``f``, ``G``, ``F``, throws, stakes, landings and first landings turn by
    turn (``race.rounding`` relative plus ``race.absolute``; ``F = 1 - G`` tightens the summed ``F``)."""
    E, A, K = race.by_turn, race.absolute, race.turns
    f = Interval.around(race.finish, E, A, 1.0)
    G = Interval.around(race.alive, E, A, 1.0)
    summed = Interval.around(race.done, (E + gamma(np.arange(K + 1))) * SLACK, A * (K + 1), 1.0)
    rest = 1.0 - G
    F = Interval(np.maximum(summed.lo, rest.lo), np.minimum(summed.hi, rest.hi))
    return (f, G, F, Interval.around(race.throws, E, A), Interval.around(race.stakes, E, A),
            Interval.around(race.landings, E[:, None], A), Interval.around(race.first_landing, E[:, None], A))


def tail_weights(race: SingleRace, players: int, until: str) -> dict[str, float]:
    """What the turns after the last one pushed can add to each figure, per unit of mass still racing then.

    A chance (a win, a place, a first landing) is off by at most that mass: the single player finishes
    (or first lands) then at most once. An expected count is the mass times the expected steps still to
    come from wherever it is (``race.steps_up``, at least the turns) times the most a step counts: turns,
    throws, stakes, landings on a square (one a step); the rounds of ``until = "last"`` count up to one a
    seat's turn. With ``until = "first"`` a turn after the last one pushed, ``k > K``, is played only
    when the other ``N - 1`` seats are still racing too (``allow_j(k) <= G(K)**(N - 1)``): every weight
    carries that factor."""
    T = race.steps_up
    also = _gone(race) ** (players - 1) * UP + TINY if until == "first" else 1.0
    return {"wins": also, "places": also, "chance": also, "turns": T * also, "landings": T * also,
            "throws": T * race.throw_max * also, "stakes": T * race.stake_max * also,
            "rounds": T * (players if until == "last" else 1) * also}


def _gone(race: SingleRace) -> float:
    """An upper bound on the exact race's mass still racing after the last turn pushed."""
    return float(Interval.around(race.alive[-1:], race.rounding, race.absolute).hi[0])


def length_last(race: SingleRace, players: int, tail: float) -> tuple[np.ndarray, float]:
    """The game's length in turns with ``until = "last"``: (pmf, mass still in play when it stopped).

    Round ``k`` starts with ``c`` players in the race and ``l`` turns played; each of them finishes in
    its turn with the round's hazard ``h = f(k) / G(k - 1)`` (and goes on with ``G(k) / G(k - 1)``, not
    ``1 - h``: no cancellation, so every mass is off by a relative rounding, :func:`last_rounding`).
    The game ends in the round when ``c - 1`` of them finish: on its ``(c - 1)``-th turn (all of the
    first ``c - 1``) or on its ``c``-th.
    """
    N = players
    K = race.turns
    size = N * (K + 1) + 2
    pmf = np.zeros(size)
    state = np.zeros((N + 1, size))  # state[c, l]: c players in the race, l turns played
    state[N, 0] = 1.0
    lo, hi = 0, 1  # the turns-played window that holds mass
    left = 1.0
    combs = [np.array([math.comb(c, q) for q in range(c - 1)], np.float64) for c in range(N + 1)]
    for k in range(1, K + 1):
        g = race.alive[k - 1]
        h = min(max(race.finish[k] / g, 0.0), 1.0) if g > 0 else 1.0
        stay = min(max(race.alive[k] / g, 0.0), 1.0) if g > 0 else 0.0
        new = np.zeros_like(state[:, lo:hi + N])
        for c in range(2, N + 1):
            row = state[c, lo:hi]
            if not row.any():
                continue
            pmf[lo + c - 1:hi + c - 1] += row * h ** (c - 1)
            pmf[lo + c:hi + c] += row * (c - 1) * h ** (c - 1) * stay
            # q = 0 .. c - 2 of them finish and the round is played out: rows c .. 2
            q = np.arange(c - 1)
            w = combs[c] * h**q * stay ** (c - q)
            new[c:1:-1, c:c + hi - lo] += w[:, None] * row[None, :]
        state[:, lo:hi + N] = 0.0
        state[:, lo:hi + N] += new
        nz = np.flatnonzero(state[:, lo:hi + N].any(axis=0))
        if nz.size == 0:
            left = 0.0
            break
        lo, hi = lo + int(nz[0]), lo + int(nz[-1]) + 1
        left = float(state[:, lo:hi].sum())
        if left < tail:
            break
    last = int(np.flatnonzero(pmf)[-1]) + 1 if pmf.any() else 1
    return pmf[:last], left


def last_rounding(race: SingleRace, players: int) -> tuple[float, float]:
    """The relative error of every mass of :func:`length_last` against the exact race's pass, and an
    absolute mass beside it (underflow).

    A round's hazard and its complement are quotients of figures each within ``E = race.rounding``
    relative and ``A = race.absolute``: ``2 (E + A / m) + u`` relative each, ``m`` the smallest nonzero
    figure they divide or are divided by; a round's weight takes at most ``N`` of them and ``2 N + 8``
    roundings of its own (powers counted as two), and a mass after ``k`` rounds is a sum of such
    products over ``k`` rounds: ``(1 + rho)**K - 1`` with ``rho = N (2 (E + A / m) + u) + gamma``, and
    the sums into the pmf. A hazard computed 0 may be up to ``A / G(k - 1)``: that round's mass moved
    wrongly is at most ``N`` times it (the pass never adds mass, so it does not grow)."""
    N, K = players, race.turns
    f, G = race.finish[1:], race.alive[:-1]
    nonzero = np.concatenate([f[f > 0], G[G > 0]])
    m = float(nonzero.min(initial=1.0)) * (1 - race.rounding) * (1 - 4 * U)
    lost = race.absolute / m if m > 0 else float("inf")
    rho = N * (2 * (race.rounding + lost) + U) + float(gamma(2 * N + 8))
    rel = (math.expm1(K * rho * SLACK) + float(gamma(N * K + 8))) * SLACK
    zero = (f == 0) & (G > 0)
    moved = float((2 * N * race.absolute / (G[zero] * (1 - race.rounding) * (1 - 4 * U))).sum()) * SLACK
    return rel, moved


def solve_independent(rules: GooseRules, players: int, *, landings: bool | None = True, tail: float = 1e-10,
                      race: SingleRace | None = None, precision: float = PRECISION) -> SolveResults:
    """Every seat's figures for ``players`` players who never meet (see the module docstring), each with a
    certified error bound within the relative ``precision`` (:func:`independent_bounds`); when the single
    race's tail keeps a bound above it, the race is pushed on to a smaller racing mass; when its rounding
    does, one line refuses (:class:`~markov_oca.core.errors.SolverError`)."""
    t0 = time.perf_counter()
    race = single_race(rules) if race is None else race
    if race.never > 0 or race.closed:
        raise ValueError("a single player may never finish: solve the joint chain")
    N = players
    until = rules.until if N > 1 else "first"
    want_landings = landings is None or bool(landings)
    timer = {"build": time.perf_counter() - t0}
    route = ""
    for _attempt in range(4):
        t1 = time.perf_counter()
        fig = seat_figures(race.finish, race.alive, race.done, race.throws, race.stakes,
                           race.landings if want_landings else None, race.first_landing, N, until)
        bounds, missing, deeper = independent_bounds(rules, race, N, until, fig, precision)
        timer["solve"] = time.perf_counter() - t1
        if not missing:
            break
        if deeper is None or _attempt == 3:
            raise SolverError(
                f"{rules.name}: no bound under {precision:g} (relative) for {', '.join(missing[:3])} from "
                f"independent races (the single race's push is off by up to {race.rounding:.1g} relative, its "
                f"tail {race.alive[-1]:.1g}): ask a looser --precision, or --exact (the joint chain, on a small "
                "board)")
        race = single_race(rules, tail=deeper)
        route = (f"the single race pushed on to a racing mass of {race.alive[-1]:.1g} ({race.turns:,} turns) for "
                 f"{', '.join(missing[:3])}")
    wins = fig["wins"] if until == "first" else fig["places"][:, 0]
    place = fig.get("places")
    outcomes = ({f"seat {j + 1} wins": float(wins[j]) for j in range(N)} if until == "first"
                else {f"seat {j + 1} last": float(place[j, -1]) for j in range(N)})
    turns, throws, stakes = fig["turns"], fig["throws"], fig["stakes"]
    rounds = float(fig["rounds"])

    t2 = time.perf_counter()
    pmf, left, rel, absent = _length(race, N, until, fig["allow"], tail)
    turns_total = float(turns.sum())
    dist = LengthDistribution(pmf, 0.0, left, rounding=rel)
    length = summarise_length(dist, turns_total)
    certify_length(length, dist, bounds["expected"]["turns"]["total"], (0.0, 0.0), absolute=absent)
    bounds["length"] = length.bounds
    timer["length"] = time.perf_counter() - t2

    landing_list = None
    if want_landings:
        landing_list = [Landing(j + 1, q, float(fig["chance"][j, q]), float(fig["landings"][j, q]))
                        for j in range(N) for q in range(rules.goal + 1)]

    has_stakes = any(sq.stake for sq in rules.squares.values())
    seats = [SeatResult(seat=j + 1, win=float(wins[j]), turns=Expectation(float(turns[j]), float(turns[j])),
                        throws=Expectation(float(throws[j]), float(throws[j])),
                        stakes=Expectation(float(stakes[j]), float(stakes[j])) if has_stakes else None,
                        places=[float(x) for x in place[j]] if place is not None else None) for j in range(N)]
    if not has_stakes:
        for sb in bounds["seats"]:
            sb["stakes"] = None
    total_throws = float(throws.sum())
    note = independent_note(N, race)
    res = SolveResults(
        note=note, rules=rules.name, title=rules.title, seed=rules.seed, source=rules.source, players=N,
        options=dict(rules.options), states=race.states, transitions=race.transitions, exact=False,
        outcomes=outcomes, deadlock=0.0, seats=seats,
        expected={"turns": Expectation(turns_total, turns_total), "rounds": Expectation(rounds, rounds),
                  "throws": Expectation(total_throws, total_throws)},
        length=length, landings=landing_list, landings_note="",
        special_squares=special_squares(rules),
        solver=[{"method": note, "residual": float(race.alive[-1]), "iterations": race.turns}, race.certificate],
        timings=timer, bounds=bounds, precision=precision, route=route,
    )
    _clip(res)
    check_sum(res)
    return res


def _clip(res: SolveResults) -> None:
    """The chances moved into [0, 1] where the move stays within their bound (else the bound is wrong: refused)."""
    b = res.bounds
    res.outcomes = {k: clip_probability(x, b["outcomes"][k]) for k, x in res.outcomes.items()}
    for s, sb in zip(res.seats, b["seats"], strict=True):
        s.win = clip_probability(s.win, sb["win"])
        if s.places is not None:
            s.places = [clip_probability(p, pb) for p, pb in zip(s.places, sb["places"], strict=True)]
    for x, lb in zip(res.landings or [], b["landings"] or [], strict=True):
        x.chance = clip_probability(x.chance, lb["chance"])


def independent_bounds(rules: GooseRules, race: SingleRace, players: int, until: str, fig: dict,
                       precision: float) -> tuple[dict, list[str], float | None]:
    """The certified bound of every figure of ``fig`` (:func:`seat_figures`), in the results' tree, the
    figures that miss ``precision``, and the racing mass to push the single race on to when only its
    tail makes them miss (None when its rounding does, or when the tail cannot be bounded).

    The exact figures lie in the same formulas evaluated on brackets of the exact race's turns up to
    the last one pushed (:func:`race_inputs`, :class:`~markov_oca.linalg.interval.Interval`), plus what
    the turns after it can add (:func:`tail_weights` times the mass still racing); the game never
    deadlocks (every single race ends surely), so a total given the end is the total.
    """
    N = players
    f, G, F, thr, stk, land, first = race_inputs(race)
    iv = seat_figures(f, G, F, thr, stk, land if "landings" in fig else None, first, N, until)
    gone = _gone(race)
    weights = tail_weights(race, N, until)
    if not np.isfinite(race.steps_up):
        gone = float("inf") if gone > 0 else 0.0
    out, free = {}, {}
    for key, w in weights.items():
        if key not in iv:
            continue
        add = gone * w * SLACK if gone else 0.0  # SLACK: the roundings of this product
        out[key] = Interval(iv[key].lo, iv[key].hi + add).bound(fig[key])
        free[key] = iv[key].bound(fig[key])
    for key in ("turns", "throws"):
        x = iv[key]
        total = Interval(x.lo, x.hi + (gone * weights[key] * SLACK if gone else 0.0)).sum()
        out[f"total {key}"] = total.bound(float(fig[key].sum()))
        free[f"total {key}"] = x.sum().bound(float(fig[key].sum()))
    if "chance" in iv and race.possible is not None:
        never = ~np.resize(race.possible, fig["chance"].shape[1])
        for key in ("chance", "landings"):
            out[key][:, never] = 0.0
            free[key][:, never] = 0.0

    def exp(b) -> dict:
        return {"total": float(b), "given_end": float(b)}

    seats = []
    for j in range(N):
        pl = None if until == "first" else [float(b) for b in out["places"][j]]
        seats.append({"win": float(out["wins"][j]) if pl is None else pl[0], "turns": exp(out["turns"][j]),
                      "throws": exp(out["throws"][j]), "stakes": exp(out["stakes"][j]), "places": pl})
    outcomes = ({f"seat {j + 1} wins": seats[j]["win"] for j in range(N)} if until == "first"
                else {f"seat {j + 1} last": seats[j]["places"][-1] for j in range(N)})
    landings = None
    if "chance" in iv:
        landings = [{"chance": float(out["chance"][j, q]), "expected": float(out["landings"][j, q])}
                    for j in range(N) for q in range(rules.goal + 1)]
    bounds = {"outcomes": outcomes, "deadlock": 0.0, "seats": seats,
              "expected": {"turns": exp(out["total turns"]), "rounds": exp(out["rounds"]),
                           "throws": exp(out["total throws"])}, "length": None, "landings": landings}

    has_stakes = any(sq.stake for sq in rules.squares.values())
    checks = [("win" if until == "first" else "places", "wins" if until == "first" else "places"),
              ("turns", "turns"), ("throws", "throws"), ("rounds", "rounds"), ("total turns", "total turns"),
              ("total throws", "total throws")]
    checks += [("stakes", "stakes")] if has_stakes else []
    checks += [("landing chance", "chance"), ("expected landings", "landings")] if "chance" in iv else []
    values = {**fig, "total turns": fig["turns"].sum(), "total throws": fig["throws"].sum()}
    missing, needed, deeper = [], [], True
    for label, key in checks:
        x, b, bf = (np.atleast_1d(np.asarray(a, np.float64)).ravel() for a in (values[key], out[key], free[key]))
        miss = ~((b <= precision * np.abs(x)) & np.isfinite(b))
        if miss.any():
            missing.append(f"{label} ({int(miss.sum())} figure{'s' if miss.sum() > 1 else ''})")
            deeper = deeper and bool(all(meets(v, c, precision / 2) for v, c in zip(x[miss], bf[miss], strict=True)))
            w = weights.get(key.split()[-1], 1.0)
            needed.append(float((precision / 2 * np.abs(x[miss])).min()) / max(w, 1.0))
    if not missing:
        return bounds, [], None
    if not deeper or not np.isfinite(race.steps_up) or race.tail <= DEEPEST:
        return bounds, missing, None
    return bounds, missing, max(DEEPEST, min(race.tail * 1e-20, min(needed) / 4))


def _length(race: SingleRace, N: int, until: str, allow: np.ndarray,
            tail: float) -> tuple[np.ndarray, float, float, float]:
    """The game's length in turns, carried until ``tail`` is left; the mass left; the relative error of every
    entry and the absolute mass the race's last turn leaves out (what it could add to the tail)."""
    gone = _gone(race)
    if until != "first":
        pmf, left = length_last(race, N, tail)
        rel, moved = last_rounding(race, N)
        return pmf, left, rel, gone + moved
    K = race.turns
    pmf = np.zeros(N * K + 1)
    f, G, F = race_inputs(race)[:3]
    iv_allow = allowance(G, F, N, until)
    lo, hi = np.zeros_like(pmf), np.zeros_like(pmf)
    for j in range(N):
        pmf[j + 1::N][:K] = race.finish[1:] * allow[j]
        entry = f[1:] * iv_allow[j]
        lo[j + 1::N][:K], hi[j + 1::N][:K] = entry.lo, entry.hi
    b = Interval(lo, hi).bound(pmf)
    pos = pmf > 2.0**-900  # below, the underflow allowance dominates: an absolute mass instead
    rel = float((b[pos] / pmf[pos]).max(initial=0.0)) * SLACK
    absent = gone ** N * SLACK + TINY + float(b[~pos].sum()) * SLACK  # a game past round K: every seat still racing
    cut = np.flatnonzero(np.cumsum(pmf[::-1])[::-1] >= tail)
    end = int(cut[-1]) + 1 if cut.size else pmf.size
    return pmf[:end], float(pmf[end:].sum()), rel, absent


def independent_note(players: int, race: SingleRace) -> str:
    """The one line a report shows for this route."""
    return (f"players never meet: {players} independent races from one player's {race.states}-state chain, "
            f"{race.turns} turns deep (racing mass left {race.alive[-1]:.1g}); no joint chain")


def joint_size(rules: GooseRules, players: int) -> int:
    """Ids the joint chain would have: what this route saves."""
    return players * goose_model(rules, 1).n_local ** players
