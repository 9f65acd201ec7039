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
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from ..analysis.chain import LengthDistribution
from ..analysis.results import Expectation, summarise_length
from ..engine.race import Landing, SeatResult, SolveResults
from .model import goose_model
from .rules import GooseRules, special_squares

MAX_PLAYERS = 50
#: Single-player mass still racing at which the turn-by-turn pass stops; far below the
#: figures' own precision (errors in a winning chance are at most this).
SINGLE_TAIL = 1e-17


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

    @property
    def turns(self) -> int:
        return self.finish.size - 1

    @property
    def done(self) -> np.ndarray:
        """F(k) = P(T <= k), summed from the finishes (accurate where it is small)."""
        return np.cumsum(self.finish)


@numba.njit(cache=True)
def _push(nxt, pnum, inv_denom, throw, stake, lkey, tab_ptr, tab_col, k, v, vf, w, wf, thr, stk, land, first):
    """Push the mass ``v`` (and the not-yet-landed mass ``vf``) one step, adding to ``w``, ``wf``."""
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
            for c in range(n_sq):
                wf[t, c] += vf[s, c] * p
            key = lkey[s, j]
            if key >= 0:
                for e in range(tab_ptr[key], tab_ptr[key + 1]):
                    c = tab_col[e]
                    land[k, c] += mp
                    first[k, c] += vf[s, c] * p
                    wf[t, c] -= vf[s, c] * p


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
    k = 0
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
        cur[:] = v
        curf[:, :] = vf
        v[:] = 0.0
        vf[:, :] = 0.0
        # One turn: push the turn-start mass, then push again what stopped mid-turn (another throw).
        for _inner in range(100_000):
            w[:] = 0.0
            wf[:, :] = 0.0
            _push(nxt, pnum, inv_denom, throw, stake, lkey, tab_ptr, tab_col, k, cur, curf, w, wf,
                  thr, stk, land, first)
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
        left = 0.0
        for s in range(n):
            left += v[s]
        alive[k] = left
    return (fin[:k + 1].copy(), alive[:k + 1].copy(), thr[:k + 1].copy(), stk[:k + 1].copy(),
            land[:k + 1].copy(), first[:k + 1].copy())


def single_race(rules: GooseRules, max_turns: int = 200_000) -> SingleRace:
    """One player's race on ``rules``, turn by turn, until ``SINGLE_TAIL`` of its mass is still racing."""
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
    if never > 1e-12:
        return SingleRace(*(np.zeros(1) for _ in range(4)), np.zeros((1, 1)), np.zeros((1, 1)), never,
                          chain.n, chain.n_transitions)
    fin, alive, thr, stk, land, first = _single_pass(
        chain.next, chain.pnum, 1.0 / chain.denom, chain.init, mid_turn, is_final, throw, stake,
        key.astype(np.int64), tab_ptr, cols.astype(np.int64), table.shape[1], SINGLE_TAIL, max_turns)
    return SingleRace(fin, alive, thr, stk, land, first, 0.0, chain.n, chain.n_transitions)


# ----------------------------------------------------------------------------- seats


def allowance(race: SingleRace, players: int, until: str) -> np.ndarray:
    """``allow[j, k]``: the chance that seat ``j`` (0-based) gets its ``k``-th turn, given it has not finished.

    Index ``k = 0`` is unused (zero).
    """
    G = race.alive
    F = race.done
    K = race.turns
    allow = np.zeros((players, K + 1))
    for j in range(players):
        before, after = j, players - 1 - j  # seats that play before and after seat j in a round
        if until == "first":
            allow[j, 1:] = G[1:] ** before * G[:-1] ** after
        else:
            allow[j, 1:] = 1.0 - F[1:] ** before * F[:-1] ** after
    return allow


def places(race: SingleRace, players: int) -> np.ndarray:
    """``p[j, m]``: the chance that seat ``j`` finishes in place ``m + 1`` (``until = "last"``)."""
    from scipy.special import comb

    def binom_pmf(count: int, p: np.ndarray) -> np.ndarray:
        q = np.arange(count + 1)
        return comb(count, q)[None, :] * p[:, None] ** q[None, :] * (1.0 - p[:, None]) ** (count - q)[None, :]

    f, F = race.finish[1:], race.done
    out = np.zeros((players, players))
    for j in range(players):
        before, after = j, players - 1 - j
        # others ahead of seat j when it finishes on turn k: seats before it with T <= k, after it T <= k - 1
        a = binom_pmf(before, F[1:])
        b = binom_pmf(after, F[:-1])
        conv = np.zeros((f.size, players))
        for x in range(a.shape[1]):
            conv[:, x:x + b.shape[1]] += a[:, x:x + 1] * b
        out[j] = f @ conv
    return out


def length_last(race: SingleRace, players: int, tail: float) -> tuple[np.ndarray, float]:
    """The game's length in turns with ``until = "last"``: (pmf, mass still in play when it stopped).

    Round ``k`` starts with ``c`` players in the race and ``l`` turns played; each of them finishes in
    its turn with the round's hazard ``h = f(k) / G(k - 1)``. The game ends in the round when ``c - 1``
    of them finish: on its ``(c - 1)``-th turn (all of the first ``c - 1``) or on its ``c``-th.
    """
    from scipy.special import comb

    N = players
    K = race.turns
    size = N * (K + 1) + 2
    pmf = np.zeros(size)
    state = np.zeros((N + 1, size))  # state[c, l]: c players in the race, l turns played
    state[N, 0] = 1.0
    lo, hi = 0, 1  # the turns-played window that holds mass
    left = 1.0
    for k in range(1, K + 1):
        g = race.alive[k - 1]
        h = race.finish[k] / g if g > 0 else 1.0
        h = min(max(h, 0.0), 1.0)
        new = np.zeros_like(state[:, lo:hi + N])
        for c in range(2, N + 1):
            row = state[c, lo:hi]
            if not row.any():
                continue
            pmf[lo + c - 1:hi + c - 1] += row * h ** (c - 1)
            pmf[lo + c:hi + c] += row * (c - 1) * h ** (c - 1) * (1.0 - h)
            # q = 0 .. c - 2 of them finish and the round is played out: rows c .. 2
            q = np.arange(c - 1)
            w = comb(c, q) * h**q * (1.0 - h) ** (c - q)
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


def solve_independent(rules: GooseRules, players: int, *, landings: bool | None = True, tail: float = 1e-10,
                      race: SingleRace | None = None) -> SolveResults:
    """Every seat's figures for ``players`` players who never meet (see the module docstring)."""
    t0 = time.perf_counter()
    race = single_race(rules) if race is None else race
    if race.never > 0:
        raise ValueError("a single player may never finish: solve the joint chain")
    N = players
    until = rules.until if N > 1 else "first"
    timer = {"build": time.perf_counter() - t0}
    t1 = time.perf_counter()
    allow = allowance(race, N, until)
    G = race.alive
    play = G[None, :-1] * allow[:, 1:]  # seat j plays its k-th turn
    turns = play.sum(axis=1)
    throws = allow[:, 1:] @ race.throws[1:]
    stakes = allow[:, 1:] @ race.stakes[1:]
    has_stakes = any(sq.stake for sq in rules.squares.values())
    wins, rounds, place, outcomes = _outcomes(race, N, until, allow)
    timer["solve"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    pmf, left = _length(race, N, until, allow, tail)
    turns_total = float(turns.sum())
    dist = LengthDistribution(pmf, 0.0, left)
    length = summarise_length(dist, turns_total)
    timer["length"] = time.perf_counter() - t2

    landing_list = None
    if landings is None or landings:
        t3 = time.perf_counter()
        expected = allow[:, 1:] @ race.landings[1:]
        chance = allow[:, 1:] @ race.first_landing[1:]
        landing_list = [Landing(j + 1, q, float(chance[j, q]), float(expected[j, q]))
                        for j in range(N) for q in range(rules.goal + 1)]
        timer["landings"] = time.perf_counter() - t3

    seats = [SeatResult(seat=j + 1, win=float(wins[j]), turns=Expectation(float(turns[j]), float(turns[j])),
                        throws=Expectation(float(throws[j]), float(throws[j])),
                        stakes=Expectation(float(stakes[j]), float(stakes[j])) if has_stakes else None,
                        places=[float(x) for x in place[j]] if place is not None else None) for j in range(N)]
    total_throws = float(throws.sum())
    note = independent_note(N, race)
    # The results say which route they took: in the solver line, and in a note field once results.py has one.
    extra = {"note": note} if "note" in getattr(SolveResults, "__dataclass_fields__", {}) else {}
    return SolveResults(
        **extra,
        rules=rules.name, title=rules.title, seed=rules.seed, source=rules.source, players=N,
        options=dict(rules.options), states=race.states, transitions=race.transitions, exact=False,
        outcomes=outcomes, deadlock=0.0, seats=seats,
        expected={"turns": Expectation(turns_total, turns_total), "rounds": Expectation(rounds, rounds),
                  "throws": Expectation(total_throws, total_throws)},
        length=length, landings=landing_list, landings_note="",
        special_squares=special_squares(rules),
        solver=[{"method": note, "residual": float(race.alive[-1]), "iterations": race.turns}],
        timings=timer,
    )



def _outcomes(race: SingleRace, N: int, until: str, allow: np.ndarray):
    """Each seat's chance to win (first to finish) or places (``until = "last"``), the expected rounds, the
    places (None until first) and the outcomes by name."""
    G, F = race.alive, race.done
    if until == "first":
        wins = allow[:, 1:] @ race.finish[1:]
        rounds = float((G[:-1] ** N).sum())
        return wins, rounds, None, {f"seat {j + 1} wins": float(wins[j]) for j in range(N)}
    place = places(race, N)
    # A round starts on a turn of the first seat still racing (the chain's own count).
    rounds = 0.0
    for j in range(N):
        rounds += float((G[:-1] * F[1:] ** j * (1.0 - F[:-1] ** (N - 1 - j))).sum())
    return place[:, 0], rounds, place, {f"seat {j + 1} last": float(place[j, -1]) for j in range(N)}


def _length(race: SingleRace, N: int, until: str, allow: np.ndarray, tail: float) -> tuple[np.ndarray, float]:
    """The game's length in turns, carried until ``tail`` is left, and the mass left."""
    if until != "first":
        return length_last(race, N, tail)
    K = race.turns
    pmf = np.zeros(N * K + 1)
    for j in range(N):
        pmf[j + 1::N][:K] = race.finish[1:] * allow[j, 1:]
    cut = np.flatnonzero(np.cumsum(pmf[::-1])[::-1] >= tail)
    end = int(cut[-1]) + 1 if cut.size else pmf.size
    return pmf[:end], float(pmf[end:].sum())


def independent_note(players: int, race: SingleRace) -> str:
    """The one line a report shows for this route."""
    return (f"players never meet: {players} independent races from one player's {race.states}-state chain, "
            f"{race.turns} turns deep (racing mass left {race.alive[-1]:.1g}); no joint chain")


def joint_size(rules: GooseRules, players: int) -> int:
    """Ids the joint chain would have: what this route saves."""
    return players * goose_model(rules, 1).n_local ** players
