"""Every seat's totals from the visits block of the chain seen from the mover.

The visits block has a column per seat (column ``a``: seat ``a`` moves in that
state) and the seat shift of each branch permutes them: each seat's chance to
win, turns, rounds, throws, stakes and places are sums over it
(:func:`~markov_oca.engine.certified.block_figures`), as are the expected
landings per seat and square (:func:`expected_landings`). When the game can
deadlock, :func:`infinite_totals` finds which totals are infinite.
"""

from __future__ import annotations

import numba
import numpy as np

from ..analysis.chain import Structure
from .rotated_chain import RotatedChain


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


def infinite_totals(rc: RotatedChain, st: Structure, v: np.ndarray) -> tuple[set[str], np.ndarray | None]:
    """The totals a deadlock the game reaches keeps earning (``turns@a``, ``throws@a``, ``stakes@a``, and the
    game's ``turns``, ``throws``, ``rounds``: infinite), and which (state, seat to move) pairs of deadlocked
    states the game reaches (None without deadlock)."""
    chain, N, n_states = rc.chain, rc.players, rc.n_states
    if not st.deadlock.any():
        return set(), None
    dead_seen = _dead_reach(chain.next, rc.shift, v, st.transient, st.deadlock, n_states)
    step_throw = chain.step_reward(chain.branch_rewards["throws"])
    step_stake = chain.step_reward(rc.stake) if rc.stake.shape[0] > 1 else np.zeros(chain.n)
    out = set()
    for a in range(N):
        at = dead_seen[:, a]
        for name, earns in (("turns", chain.turn_start), ("throws", step_throw > 0), ("stakes", step_stake > 0)):
            if (at & earns).any():
                out |= {f"{name}@{a}", name}
        if (at[:n_states] & chain.turn_start[:n_states] & (a <= rc.lead[:n_states])).any():
            out.add("rounds")
    return out, dead_seen


def expected_landings(rc: RotatedChain, v: np.ndarray,
                      dead_seen: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Each seat's expected landings per square ``[seat, square]`` (squares 0..G; ``inf`` where a deadlock the
    game reaches keeps landing there), and where a (state, seat) pair with visits (``v`` nonnegative) has a
    throw that lands (elsewhere the count is 0, exactly)."""
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
    reached = ((flow > 0).astype(np.int64) @ table.astype(np.int64)) > 0
    if dead_seen is not None:
        counts = np.where((dead_keys.astype(np.int64) @ table.astype(np.int64)) > 0, np.inf, counts)
    return counts, reached
