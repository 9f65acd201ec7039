"""The Pulcinella bet as a decision: value iteration on the points game's decision process.

A seat standing on a Pulcinella square at the start of its turn, with the stake
in hand, chooses to bet or to throw (on a square with two Pulcinellas it chooses
again after the first bet). The decision process is built once with both choices
at every such state (:data:`~markov_oca.punti.model.MODE_DECIDE`); a policy keeps
one choice per state and is then a chain like the fixed policies.

What "maximises each seat's chance of winning" means here. A seat's objective is
its *win share*: the chance to hold the most points alone plus, for a tie of k
seats, 1/k of its chance. The shares of all seats add up to one, so:

* **two players**: the game is zero-sum, and the value ``V[s]`` (seat 1's share)
  of the game in which both seats bet to win is found by value iteration,
  ``V[s] = max`` (seat 1 to decide) or ``min`` (seat 2 to decide) over the
  choices of the expected value of the next state. Each seat's policy is then
  a best reply to the other's (an equilibrium; its value is the game's value).
* **three or more players**: the shares no longer pit one seat against one
  other, so there is no single value. We compute *iterated best responses*:
  start with nobody betting; in turn, each seat replaces its policy by its best
  reply (value iteration on its own share, the others' policies fixed), until a
  whole round changes no seat's policy (a pure equilibrium where every seat
  plays a best reply), or a round limit is reached (reported).

Sweeps are Gauss-Seidel in the order of the race backwards (the only cycles are
the bounces at the end), to a largest change below ``tol``; ties between the
two choices go to not betting.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..core.errors import SolverError
from ..core.progress import progress_bar
from .model import ACT_BET, MODE_DECIDE, PuntiChain, PuntiModel

_EPS = 1e-12


@numba.njit(cache=True)
def _gains(s, nxt, pnum, act, inv_d, n_states, term, v):
    """State ``s``'s expected value without the bet (``g0``) and with it (``g1``), and whether it may bet."""
    g0 = 0.0
    g1 = 0.0
    has1 = False
    for j in range(nxt.shape[1]):
        t = nxt[s, j]
        if t < 0:
            break
        val = v[t] if t < n_states else term[t - n_states]
        if act[s, j] == 1:
            g1 += pnum[s, j] * inv_d * val
            has1 = True
        else:
            g0 += pnum[s, j] * inv_d * val
    return g0, g1, has1


@numba.njit(cache=True)
def _sweep(order, nxt, pnum, act, inv_d, n_states, term, side, fixed, v):
    """One sweep; ``side[s]``: +1 maximise, -1 minimise, 0 follow ``fixed[s]`` (bet or not)."""
    worst = 0.0
    for k in range(order.size):
        s = order[k]
        g0, g1, has1 = _gains(s, nxt, pnum, act, inv_d, n_states, term, v)
        if not has1:
            new = g0
        elif side[s] == 1:
            new = g1 if g1 > g0 + 1e-12 else g0
        elif side[s] == -1:
            new = g1 if g1 < g0 - 1e-12 else g0
        else:
            new = g1 if fixed[s] else g0
        d = abs(new - v[s])
        if d > worst:
            worst = d
        v[s] = new
    return worst


@numba.njit(cache=True)
def _choices(nxt, pnum, act, inv_d, n_states, term, side, v, bet):
    """The choice each deciding state makes under ``v`` (writes ``bet`` where ``side`` is not 0)."""
    for s in range(n_states):
        if side[s] == 0:
            continue
        g0, g1, has1 = _gains(s, nxt, pnum, act, inv_d, n_states, term, v)
        if has1:
            bet[s] = g1 > g0 + 1e-12 if side[s] == 1 else g1 < g0 - 1e-12


def _iterate(mdp: PuntiChain, term: np.ndarray, side: np.ndarray, fixed: np.ndarray, tol: float,
             max_sweeps: int) -> tuple[np.ndarray, float, int]:
    chain = mdp.chain
    n = mdp.n_states
    order = chain.order()
    order = order[order < n].astype(np.int64)
    v = np.zeros(n)
    change, sweeps = 1.0, 0
    while change > tol:
        change = _sweep(order, chain.next, chain.pnum, mdp.act, 1.0 / chain.denom, n, term, side, fixed, v)
        sweeps += 1
        if sweeps >= max_sweeps:
            raise SolverError(f"value iteration did not reach {tol} in {max_sweeps} sweeps (last change {change:.1e})")
    return v, change, sweeps


def shares(masks: list[int], seat: int) -> np.ndarray:
    """The win share of ``seat`` in each outcome (a tie of k seats counts 1/k)."""
    return np.array([1.0 / bin(m).count("1") if m >> seat & 1 else 0.0 for m in masks])


def decision_states(mdp: PuntiChain) -> np.ndarray:
    """States where the mover chooses between betting and throwing."""
    n = mdp.n_states
    return (mdp.act[:n] == ACT_BET).any(axis=1)


def solve_policy(mdp: PuntiChain, tol: float = 1e-13, max_sweeps: int = 100_000,
                 max_rounds: int = 20) -> tuple[np.ndarray, dict[str, Any]]:
    """The optimal bet policy of the decision process (see the module docstring): (bet per state, info)."""
    N = mdp.model.players
    n = mdp.n_states
    mover = mdp.chain.mover[:n].astype(np.int64)
    deciding = decision_states(mdp)
    bet = np.zeros(n, bool)
    info: dict[str, Any] = {"decision_states": int(deciding.sum())}
    if N == 2:
        side = np.where(deciding, np.where(mover == 0, 1, -1), 0).astype(np.int8)
        v, change, sweeps = _iterate(mdp, shares(mdp.masks, 0), side, bet, tol, max_sweeps)
        _choices(mdp.chain.next, mdp.chain.pnum, mdp.act, 1.0 / mdp.chain.denom, n, shares(mdp.masks, 0), side, v,
                 bet)
        info.update(method="zero-sum value iteration (seat 1 maximises its win share, seat 2 minimises it)",
                    sweeps=sweeps, residual=change, value=float(v[mdp.chain.init]), converged=True)
    else:
        sweeps_total, rounds, converged, change = 0, 0, False, 0.0
        while rounds < max_rounds and not converged:
            rounds += 1
            changed = False
            for seat in range(N):
                side = np.where(deciding & (mover == seat), 1, 0).astype(np.int8)
                term = shares(mdp.masks, seat)
                v, change, sweeps = _iterate(mdp, term, side, bet, tol, max_sweeps)
                sweeps_total += sweeps
                new = bet.copy()
                _choices(mdp.chain.next, mdp.chain.pnum, mdp.act, 1.0 / mdp.chain.denom, n, term, side, v, new)
                if (new != bet).any():
                    changed = True
                bet = new
            converged = not changed
        info.update(method="iterated best responses from 'never' (each seat in turn maximises its own win share "
                           "against the others' current policies)",
                    rounds=rounds, converged=converged, sweeps=sweeps_total, residual=change)
    info["bet_states"] = int((bet & deciding).sum())
    return bet, info


def policy_chain(mdp: PuntiChain, bet: np.ndarray) -> PuntiChain:
    """The chain of a bet policy: the chosen branches of each state, pruned to what the start reaches."""
    chain = mdp.chain
    n = mdp.n_states
    want = np.zeros(chain.n, np.int8)
    want[:n] = np.where(decision_states(mdp) & bet, ACT_BET, 0)
    keep = (chain.next >= 0) & (mdp.act == want[:, None])
    keep[n:] = chain.next[n:] >= 0
    # Compact each row's kept branches to the left, remembering the kernel's column.
    order = np.argsort(~keep, axis=1, kind="stable")
    rows = np.arange(chain.n)[:, None]
    width = int(keep.sum(axis=1).max())
    cols = order[:, :width]
    kept = keep[rows, cols]
    nxt = np.where(kept, chain.next[rows, cols], -1)
    pnum = np.where(kept, chain.pnum[rows, cols], 0)
    act = np.where(kept, mdp.act[rows, cols], 0).astype(np.int8)
    broke = np.where(kept, mdp.broke[rows, cols], 0).astype(np.int8)
    branch_col = np.where(kept, cols, -1).astype(np.int16)
    # States the start reaches under this policy (outcomes always kept, at the end).
    r_idx = np.repeat(np.arange(chain.n), width)
    c_idx = nxt.ravel()
    ok = c_idx >= 0
    graph = sp.csr_array((np.ones(ok.sum(), np.int8), (r_idx[ok], c_idx[ok])), shape=(chain.n, chain.n))
    reached = breadth_first_order(graph, chain.init, directed=True, return_predecessors=False)
    live = np.zeros(chain.n, bool)
    live[reached] = True
    live[n:] = True
    states = np.flatnonzero(live[:n])
    states = np.concatenate([[chain.init], states[states != chain.init]])
    new_index = np.full(chain.n, -1, np.int64)
    new_index[states] = np.arange(states.size)
    new_index[n:] = states.size + np.arange(chain.n - n)
    sel = np.concatenate([states, np.arange(n, chain.n)])
    nxt = nxt[sel]
    nxt = np.where(nxt >= 0, new_index[np.maximum(nxt, 0)], -1).astype(np.int32)
    m: PuntiModel = mdp.model
    pc = m._chain(chain.state_ids[states], nxt, pnum[sel].astype(np.int32), act[sel], broke[sel], MODE_DECIDE)
    pc.branch_col = branch_col[sel]
    return pc


def optimal_chain(model: PuntiModel, progress: bool = False, tol: float = 1e-13
                  ) -> tuple[PuntiChain, dict[str, Any], dict[int, bool]]:
    """Build the decision process, find the optimal bets: (the policy's chain, how it was found, policy).

    The policy maps the id of every deciding state to whether it bets (the simulator
    looks states up by id).
    """
    mdp = model.build(MODE_DECIDE, progress=progress)
    with progress_bar(progress) as bar:
        bar.add_task(f"value iteration on {mdp.n_states:,} states", total=None)
        bet, info = solve_policy(mdp, tol=tol)
    info["decision_process_states"] = mdp.n_states
    deciding = decision_states(mdp)
    policy = {int(i): bool(b) for i, b in zip(mdp.chain.state_ids[deciding], bet[deciding], strict=True)}
    return policy_chain(mdp, bet), info, policy
