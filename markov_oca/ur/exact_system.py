"""The exact position-level systems of a pair of Ur policies (:mod:`.exact`): integer matrices whose
solutions are the winning chances, throws and turns to come, with every probability an integer over a common
denominator.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..core.errors import SolverError
from .kernel import AGAIN, GAME_OVER, MOVER_WINS, UrMoves, moves
from .rules import UrRules
from .state import UrSpace, space_of

__all__ = ["PositionSystem", "mirror_systems", "policy_numerators", "side_system"]


# ----------------------------------------------------------------------------- the systems


def policy_numerators(mv: UrMoves, policy: str | Callable, values: np.ndarray | None,
                      space: UrSpace) -> tuple[np.ndarray, int]:
    """(k, T, 7) integer weights of the moves a policy plays, over the returned common denominator.

    ``random`` weighs the ``n`` legal moves ``L / n`` (``L`` the lcm of the counts met); a
    deterministic policy (greedy, optimal, a callable) weighs its move ``1`` (``L = 1``).
    """
    from .chain import policy_weights

    w = policy_weights(mv, policy, values, space)
    counts = np.unique(mv.n_moves[mv.n_moves > 0]).tolist() if isinstance(policy, str) and policy == "random" else [1]
    L = math.lcm(*[int(c) for c in counts]) if counts else 1
    wi = np.rint(w * L).astype(np.int64)
    if np.abs(wi - w * L).max(initial=0.0) > 1e-9:
        raise SolverError(f"the {policy!r} policy's weights are not multiples of 1/{L}")
    return wi, L


def _throw_numerators(mv: UrMoves) -> tuple[np.ndarray, int]:
    probs = [Fraction(p).limit_denominator(1 << 20) for p in mv.probs]
    den = math.lcm(*(p.denominator for p in probs))
    return np.array([int(p * den) for p in probs], np.int64), den


@dataclass
class PositionSystem:
    """``A x = B`` over the unknowns ``index`` (integers; ``A = D I - ...``), one column per name."""

    A: sp.csr_array
    B: np.ndarray  # (n, m) int64, nonnegative
    columns: list[str]
    index: np.ndarray  # unknown -> position (mirror) or 2 * position + side (sides)
    start: int  # the unknown of the game's start (light to move, all pieces in hand)
    D: int
    kind: str  # "mirror" (one policy for both) or "sides"

    @property
    def n(self) -> int:
        return self.A.shape[0]


def _moves_table(mv: UrMoves, wi: np.ndarray, pn: np.ndarray):
    """Per (position, throw, move) with weight > 0: the position, p w, the successor and the event kind."""
    S = mv.succ.shape[0]
    wt = wi * pn[None, :, None]
    use = (wt > 0) & ~mv.terminal[:, None, None]
    s = np.broadcast_to(np.arange(S)[:, None, None], wt.shape)[use]
    ev = mv.events[use]
    over = (ev & GAME_OVER) != 0
    return s, wt[use], mv.succ[use].astype(np.int64), over, (ev & MOVER_WINS) != 0, (ev & AGAIN) != 0


def _reach(S: int, rows: np.ndarray, cols: np.ndarray, start: int) -> np.ndarray:
    g = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(S, S))
    return np.sort(breadth_first_order(g, start, directed=True, return_predecessors=False))


def mirror_systems(rules: UrRules, policy: str | Callable, values: np.ndarray | None = None,
                   mv: UrMoves | None = None, space: UrSpace | None = None,
                   reachable: bool = True) -> tuple[PositionSystem, PositionSystem]:
    """Both sides playing ``policy``: the win system ``W`` and the totals system (``throws``, ``turns``).

    The unknowns are the positions the start reaches (``reachable``) or every position not over.
    """
    space = space or space_of(rules.pieces, rules.code)
    mv = mv if mv is not None else moves(space, None, rules)
    wi, L = policy_numerators(mv, policy, values, space)
    pn, den = _throw_numerators(mv)
    D = den * L
    S = space.size
    s, pw, succ, over, wins, again = _moves_table(mv, wi, pn)
    start_pos = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    go = ~over
    if reachable:
        keep = _reach(S, s[go], succ[go], start_pos)
    else:
        keep = np.flatnonzero(~mv.terminal)
    loc = np.full(S, -1, np.int64)
    loc[keep] = np.arange(keep.size)
    n = keep.size
    inside = loc[s] >= 0
    s, pw, succ, over, wins, again = (a[inside] for a in (s, pw, succ, over, wins, again))
    go = ~over
    r, c = loc[s[go]], loc[succ[go]]
    if (c < 0).any():
        raise SolverError("a move that does not end the game leaves the reachable positions")
    diag = (np.arange(n), np.arange(n))
    other = go & ~again
    b_win = np.bincount(loc[s], weights=np.where((over & wins) | other, pw, 0), minlength=n)
    aw = sp.coo_array((np.concatenate([np.where(again[go], -pw[go], pw[go]), np.full(n, D)]),
                       (np.concatenate([r, diag[0]]), np.concatenate([c, diag[1]]))), shape=(n, n)).tocsr()
    at = sp.coo_array((np.concatenate([-pw[go], np.full(n, D)]),
                       (np.concatenate([r, diag[0]]), np.concatenate([c, diag[1]]))), shape=(n, n)).tocsr()
    b_again = np.bincount(loc[s], weights=np.where(again & go, pw, 0), minlength=n)
    B_tot = np.stack([np.full(n, D), D - b_again], axis=1).astype(np.int64)
    for a in (aw, at):
        a.sum_duplicates()
    st = int(loc[start_pos])
    return (PositionSystem(sp.csr_array(aw, dtype=np.int64), np.rint(b_win).astype(np.int64)[:, None], ["win"],
                           keep, st, D, "mirror"),
            PositionSystem(sp.csr_array(at, dtype=np.int64), B_tot, ["throws", "turns"], keep, st, D, "mirror"))


def side_system(rules: UrRules, light: str | Callable, dark: str | Callable, values: np.ndarray | None = None,
                mv: UrMoves | None = None, space: UrSpace | None = None) -> PositionSystem:
    """Light and dark playing their own policies: unknowns (position, side to move), 0 light, 1 dark.

    Columns: ``light wins``, ``dark wins``, ``throws``, ``turns``.
    """
    space = space or space_of(rules.pieces, rules.code)
    mv = mv if mv is not None else moves(space, None, rules)
    pn, den = _throw_numerators(mv)
    num = [policy_numerators(mv, p, values, space) for p in (light, dark)]
    L = math.lcm(num[0][1], num[1][1])
    D = den * L
    S = space.size
    parts = []
    for side, (wi, Ls) in enumerate(num):
        s, pw, succ, over, wins, again = _moves_table(mv, wi * (L // Ls), pn)
        nxt = 2 * succ + np.where(again, side, 1 - side)
        winner = np.where(wins, side, 1 - side)
        parts.append((2 * s + side, pw, nxt, over, winner, again))
    u, pw, nxt, over, winner, again = (np.concatenate([p[i] for p in parts]) for i in range(6))
    start = 2 * space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    go = ~over
    keep = _reach(2 * S, u[go], nxt[go], start)
    loc = np.full(2 * S, -1, np.int64)
    loc[keep] = np.arange(keep.size)
    n = keep.size
    inside = loc[u] >= 0
    u, pw, nxt, over, winner, again = (a[inside] for a in (u, pw, nxt, over, winner, again))
    go = ~over
    A = sp.coo_array((np.concatenate([-pw[go], np.full(n, D)]),
                      (np.concatenate([loc[u[go]], np.arange(n)]), np.concatenate([loc[nxt[go]], np.arange(n)]))),
                     shape=(n, n)).tocsr()
    A.sum_duplicates()
    rows = loc[u]
    cols = [np.bincount(rows, weights=np.where(over & (winner == k), pw, 0), minlength=n) for k in (0, 1)]
    cols += [np.full(n, D), D - np.bincount(rows, weights=np.where(again & go, pw, 0), minlength=n)]
    B = np.rint(np.stack(cols, axis=1)).astype(np.int64)
    return PositionSystem(sp.csr_array(A, dtype=np.int64), B, ["light wins", "dark wins", "throws", "turns"], keep,
                          int(loc[start]), D, "sides")
