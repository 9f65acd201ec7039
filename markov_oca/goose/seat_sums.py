"""Every seat's totals from the visits block of the chain seen from the mover.

The visits block has a column per seat (column ``a``: seat ``a`` moves in that
state) and the seat shift of each branch permutes them: each seat's chance to
win, turns, rounds, throws, stakes and places are sums over it
(:func:`seat_totals`), as are the expected landings per seat and square
(:func:`expected_landings`). When the game can deadlock, :func:`given_end`
finds which totals are infinite and the totals given that the game ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..analysis.chain import Structure
from ..linalg.solve import SolveReport
from .rotated_chain import RotatedChain


@numba.njit(cache=True)
def _per_seat(nxt, pnum, inv_denom, v, h, n_states, turn_start, lead, throw, stake, place, wins, turns, rounds,
              throws, stakes, places):
    """Every per-seat total from the visits block ``v`` (column a: seat a moves); with ``h`` of more than one
    entry, weighted by the chance of ending (``h`` of the state, or of where a branch goes)."""
    P = v.shape[1]
    weighted = h.size > 1
    for s in range(n_states):
        ts = turn_start[s]
        hs = h[s] if weighted else 1.0
        for a in range(P):
            x = v[s, a]
            if x == 0.0:
                continue
            if ts:
                turns[a] += x * hs
                if a <= lead[s]:
                    rounds[0] += x * hs
            for j in range(nxt.shape[1]):
                t = nxt[s, j]
                if t < 0:
                    break
                w = x * pnum[s, j] * inv_denom
                if weighted:
                    w *= h[t]
                if t >= n_states:
                    wins[(a + t - n_states) % P] += w
                if throw[s, j]:
                    throws[a] += w
                if stake.shape[0] > 1:
                    stakes[a] += w * stake[s, j]
                if place.shape[0] > 1 and place[s, j] > 0:
                    places[a, place[s, j] - 1] += w


@numba.njit(cache=True)
def _dead_reach(nxt, shift, v, transient, deadlock, n_states):
    """(state, seat to move) pairs of deadlocked states that the game reaches."""
    n, J = nxt.shape
    P = v.shape[1]
    seen = np.zeros((n, P), np.bool_)
    for s in range(n_states):
        if not transient[s]:
            continue
        for a in range(P):
            if v[s, a] == 0.0:
                continue
            for j in range(J):
                t = nxt[s, j]
                if t < 0:
                    break
                if deadlock[t]:
                    seen[t, (a + shift[s, j]) % P] = True
    changed = True
    while changed:
        changed = False
        for s in range(n_states):
            if not deadlock[s]:
                continue
            for a in range(P):
                if not seen[s, a]:
                    continue
                for j in range(J):
                    t = nxt[s, j]
                    if t < 0:
                        break
                    b = (a + shift[s, j]) % P
                    if not seen[t, b]:
                        seen[t, b] = True
                        changed = True
    return seen


@numba.njit(cache=True)
def _landing_flow(nxt, pnum, inv_denom, v, square, throw, width, n_states, n_keys, dead_seen):
    """Visits times branch probability per (seat, key): key = mover's square * width + branch."""
    P = v.shape[1]
    out = np.zeros((P, n_keys))
    dead = np.zeros((P, n_keys), np.bool_)
    for s in range(n_states):
        base = min(square[s], n_keys // width - 1) * width
        for j in range(width):
            t = nxt[s, j]
            if t < 0:
                break
            if not throw[s, j]:
                continue
            for a in range(P):
                out[a, base + j] += v[s, a] * pnum[s, j] * inv_denom
                if dead_seen[s, a]:
                    dead[a, base + j] = True
    return out, dead


@dataclass
class SeatTotals:
    """Per seat: the chance to win (or be left last), turns, throws, stakes, places (``places[a, k - 1]``: place
    k), and the rounds (one figure, in a one-element array)."""

    wins: np.ndarray
    turns: np.ndarray
    rounds: np.ndarray
    throws: np.ndarray
    stakes: np.ndarray
    places: np.ndarray


def seat_totals(rc: RotatedChain, v: np.ndarray) -> SeatTotals:
    """Every seat's totals from the visits block ``v``."""
    chain, N = rc.chain, rc.players
    tot = SeatTotals(np.zeros(N), np.zeros(N), np.zeros(1), np.zeros(N), np.zeros(N), np.zeros((N, max(1, N - 1))))
    _per_seat(chain.next, chain.pnum, 1.0 / chain.denom, v, np.ones(1), rc.n_states, chain.turn_start, rc.lead,
              chain.branch_rewards["throws"], rc.stake, rc.place, tot.wins, tot.turns, tot.rounds, tot.throws,
              tot.stakes, tot.places)
    return tot


@dataclass
class GivenEnd:
    """What a deadlock changes: its chance, which seats' turns, throws and stakes (and whether the rounds) are
    infinite, the totals given that the game ends (``given``: wins and places left as they are) and which
    (state, seat to move) pairs of deadlocked states the game reaches (``dead_seen``, None without deadlock)."""

    deadlock: float
    inf_turns: np.ndarray
    inf_throws: np.ndarray
    inf_stakes: np.ndarray
    inf_rounds: bool
    given: SeatTotals
    dead_seen: np.ndarray | None


def given_end(rc: RotatedChain, st: Structure, v: np.ndarray, tot: SeatTotals,
              reports: list[SolveReport]) -> GivenEnd:
    """The deadlock's figures (:class:`GivenEnd`); a backward solve's report is added to ``reports``."""
    chain, N, n_states = rc.chain, rc.players, rc.n_states
    none = np.zeros(N, bool)
    if not st.deadlock.any():
        return GivenEnd(0.0, none, none.copy(), none.copy(), False, tot, None)
    deadlock = max(0.0, 1.0 - float(tot.wins.sum()))
    inf_turns, inf_throws, inf_stakes = none, none.copy(), none.copy()
    inf_rounds = False
    # Which seats keep taking turns, throwing or paying in a deadlock the game reaches.
    dead_seen = _dead_reach(chain.next, rc.shift, v, st.transient, st.deadlock, n_states)
    step_throw = chain.step_reward(chain.branch_rewards["throws"])
    step_stake = chain.step_reward(rc.stake) if rc.stake.shape[0] > 1 else np.zeros(chain.n)
    for a in range(N):
        at = dead_seen[:, a]
        inf_turns[a] = bool((at & chain.turn_start).any())
        inf_throws[a] = bool((at & (step_throw > 0)).any())
        inf_stakes[a] = bool((at & (step_stake > 0)).any())
        inf_rounds |= bool((at[:n_states] & chain.turn_start[:n_states] & (a <= rc.lead[:n_states])).any())
    # Given the end: the totals weighted by the chance of ending (one backward solve, seat-free).
    inv = 1.0 / chain.denom
    outs = np.zeros(chain.n, bool)
    outs[n_states:] = True
    into = (chain.next >= 0) & outs[np.maximum(chain.next, 0)]
    b_end = np.where(into, chain.pnum, 0).sum(axis=1) * inv
    b_end[~st.transient] = 0.0
    h, rep_h = chain.system.solve(b_end)
    reports.append(rep_h)
    h[n_states:] = 1.0
    g = SeatTotals(tot.wins, np.zeros(N), np.zeros(1), np.zeros(N), np.zeros(N), tot.places)
    _per_seat(chain.next, chain.pnum, inv, v, h, n_states, chain.turn_start, rc.lead, chain.branch_rewards["throws"],
              rc.stake, rc.place, np.zeros(N), g.turns, g.rounds, g.throws, g.stakes, np.zeros_like(tot.places))
    p_end = 1.0 - deadlock
    for name in ("turns", "rounds", "throws", "stakes"):
        x = getattr(g, name)
        setattr(g, name, x / p_end if p_end > 0 else x * np.nan)
    return GivenEnd(deadlock, inf_turns, inf_throws, inf_stakes, inf_rounds, g, dead_seen)


def expected_landings(rc: RotatedChain, v: np.ndarray, dead_seen: np.ndarray | None) -> np.ndarray:
    """Each seat's expected landings per square ``[seat, square]`` (squares 0..G; ``inf`` where a deadlock the
    game reaches keeps landing there)."""
    model, chain, N, n_states = rc.model, rc.chain, rc.players, rc.n_states
    goal, width = model.board.goal, model.board.branches
    table = np.zeros((goal * width, goal + 1), bool)
    for s, throws_at in enumerate(model.board.throws):
        for j, t in enumerate(throws_at):
            table[s * width + j, list(t.landings)] = True
    flow, dead_keys = _landing_flow(chain.next, chain.pnum, 1.0 / chain.denom, v, rc.square,
                                    chain.branch_rewards["throws"], width, n_states, goal * width,
                                    dead_seen if dead_seen is not None else np.zeros((n_states, N), np.bool_))
    counts = flow @ table.astype(np.float64)
    if dead_seen is not None:
        counts = np.where((dead_keys.astype(np.int64) @ table.astype(np.int64)) > 0, np.inf, counts)
    return counts
