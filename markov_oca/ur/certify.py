"""Certified optimal play of small Ur games: exact values, and an exact check that no move improves.

Value iteration (:mod:`.optimal`) gives floating-point values ``V`` and, through
them, a policy ``pi``: at each position and throw, the first move of greatest
value. This module turns that into a certificate in exact arithmetic:

1. **Policy evaluation.** Both sides playing ``pi``, the value ``W[s]`` (the chance
   that the side to move in ``s`` wins) solves the linear system
   ``W[s] = sum_t p_t value_W(pi(s, t))`` over every position of the space that is
   not over, with ``value_W(m) = W[succ]`` after a rosette, ``1 - W[succ]`` when the
   move hands the turn over, ``1`` or ``0`` when it ends the game. With the throw
   probabilities over one denominator this is an integer system, solved exactly
   by :class:`~markov_oca.exact_sparse.DixonSolver` as ``W = z / d`` with ``z``
   certified integers (their base-``p`` digits).
2. **No move improves.** For every position and throw, every legal move's value
   under ``W`` is compared exactly with ``pi``'s (``d value_W(m)`` is ``z[succ]``,
   ``d - z[succ]``, ``d`` or ``0``: signed sums of a few of these integers, whose
   sign a carry pass over the digits decides). When no move beats ``pi`` anywhere,
   ``W`` satisfies the Bellman optimality equation exactly at every position.

The Bellman operator of a zero-sum stochastic game that ends with probability one
under every pair of stationary policies has exactly one fixed point (Shapley), so
``W`` is then the optimal value ``V*``: ``W[start]`` is the exact chance that the
first side wins with best play by both. That premise is stated, not checked: it
holds in Ur because every move brings a piece forward and each side's progress
can be undone only by a capture, which needs the capturing side to move forward.

How far it reaches: one piece (248 positions) and two pieces (13,112) in seconds;
three pieces (264,304 positions) is above the sparse solver's limit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

import numba
import numpy as np
import scipy.sparse as sp

from ..exact_sparse import DixonSolver
from .kernel import AGAIN, GAME_OVER, MOVER_WINS, moves
from .rules import UrRules
from .state import UrSpace

# a move's value times d, as (kind, successor): d, 0, z[succ] or d - z[succ]
_ONE, _ZERO, _SAME, _OTHER = 0, 1, 2, 3


@dataclass
class Certificate:
    """The exact optimal value of an Ur game and what its check found."""

    rules: str
    pieces: int
    positions: int  # positions not over, the unknowns of the exact system
    value: Fraction  # the first side's chance to win under optimal play by both
    float_value: float  # value iteration's figure
    optimal: bool  # no move improves on the policy in any position
    improving: int  # (position, throw) pairs where some move beats the policy
    ties: int  # (position, throw) pairs where another move is exactly as good
    decisions: int  # (position, throw) pairs with two or more legal moves
    max_float_gap: float  # largest |W - V| over every position
    denominator_digits: int
    seconds: dict[str, float] = field(default_factory=dict)

    def text(self) -> str:
        verdict = "no move improves anywhere: optimal" if self.optimal else f"{self.improving} improving moves found"
        return (f"{self.rules}, {self.pieces} piece(s): {self.positions:,} positions, value {float(self.value):.17g} "
                f"(denominator of {self.denominator_digits:,} digits); {verdict}; {self.ties:,} exact ties among "
                f"{self.decisions:,} choices; largest gap to value iteration {self.max_float_gap:.1e}")


def policy_choice(mv, values: np.ndarray) -> np.ndarray:
    """(S, T) index of the move ``pi`` plays: the first of greatest float value (as the ``optimal`` policy)."""
    live = np.arange(mv.succ.shape[2])[None, None, :] < mv.n_moves[:, :, None]
    succ = np.maximum(mv.succ, 0)
    ev = mv.events
    score = np.where(ev & GAME_OVER, np.where(ev & MOVER_WINS, 1.0, 0.0),
                     np.where(ev & AGAIN, values[succ], 1.0 - values[succ]))
    return np.argmax(np.where(live, score, -np.inf), axis=2)


def _kinds(mv) -> np.ndarray:
    ev = mv.events
    return np.where(ev & GAME_OVER, np.where(ev & MOVER_WINS, _ONE, _ZERO),
                    np.where(ev & AGAIN, _SAME, _OTHER)).astype(np.int8)


def evaluation_system(mv, choice: np.ndarray, denom: int):
    """``A W = b`` for the policy's values on the positions not over (integers, scaled by ``denom``)."""
    S = mv.succ.shape[0]
    live = ~mv.terminal
    local = np.full(S, -1, np.int64)
    local[live] = np.arange(int(live.sum()))
    n = int(live.sum())
    pn = np.array([int(Fraction(p) * denom) for p in mv.probs], np.int64)
    s_idx = np.flatnonzero(live)
    t_idx = np.arange(mv.succ.shape[1])
    ss, tt = np.meshgrid(s_idx, t_idx, indexing="ij")
    m = choice[ss, tt]
    kind = _kinds(mv)[ss, tt, m]
    succ = mv.succ[ss, tt, m].astype(np.int64)
    w = pn[tt]
    b = np.where((kind == _ONE) | (kind == _OTHER), w, 0).sum(axis=1)
    linked = (kind == _SAME) | (kind == _OTHER)
    rows = local[ss][linked]
    cols = local[succ[linked]]
    if (cols < 0).any():
        raise ValueError("a move that does not end the game reaches a finished position")
    vals = np.where(kind[linked] == _SAME, -w[linked], w[linked])
    A = sp.coo_array((np.concatenate([vals, np.full(n, denom)]),
                      (np.concatenate([rows, np.arange(n)]), np.concatenate([cols, np.arange(n)]))),
                     shape=(n, n)).tocsr()
    A.sum_duplicates()
    return sp.csr_array(A), b.astype(np.int64), local


@numba.njit(cache=True)
def _sign(digits, d_digits, p, coef_d, i1, c1, i2, c2):
    """Sign of ``coef_d d + c1 z[i1] + c2 z[i2]`` (z and d as base-p digit columns)."""
    carry = 0
    nonzero = False
    for k in range(digits.shape[0]):
        v = carry + coef_d * d_digits[k]
        if c1 != 0:
            v += c1 * digits[k, i1]
        if c2 != 0:
            v += c2 * digits[k, i2]
        carry = v // p
        if v - carry * p != 0:
            nonzero = True
    if carry > 0:
        return 1
    if carry < 0:
        return -1
    return 1 if nonzero else 0


@numba.njit(cache=True)
def _value_terms(kind, z_index):
    """(coef of d, coef of z[z_index]) of ``d value(m)``."""
    if kind == 0:
        return 1, 0
    if kind == 1:
        return 0, 0
    if kind == 2:
        return 0, 1
    return 1, -1


@numba.njit(cache=True)
def _check(digits, d_digits, p, live_pos, local, succ, kinds, n_moves, choice):
    """Count (improving, ties, decisions) over every position not over and every throw."""
    improving = 0
    ties = 0
    decisions = 0
    for q in range(live_pos.size):
        s = live_pos[q]
        for t in range(succ.shape[1]):
            nm = n_moves[s, t]
            if nm < 2:
                continue
            decisions += 1
            c = choice[s, t]
            kc = kinds[s, t, c]
            ic = local[succ[s, t, c]] if kc >= 2 else 0
            dc, zc = _value_terms(kc, ic)
            better = False
            tie = False
            for m in range(nm):
                if m == c:
                    continue
                km = kinds[s, t, m]
                im = local[succ[s, t, m]] if km >= 2 else 0
                dm, zm = _value_terms(km, im)
                # sign of d value(m) - d value(c)
                if zm != 0 and zc != 0 and im == ic:
                    sg = _sign(digits, d_digits, p, dm - dc, im, zm - zc, 0, 0)
                else:
                    sg = _sign(digits, d_digits, p, dm - dc, im, zm, ic, -zc)
                if sg > 0:
                    better = True
                elif sg == 0:
                    tie = True
            if better:
                improving += 1
            elif tie:
                ties += 1
    return improving, ties, decisions


def certify_optimal(rules: UrRules, values: np.ndarray | None = None) -> Certificate:
    """Exact optimal value of ``rules`` and the exact check that no move improves (module docstring).

    Example
    -------
    >>> from markov_oca.ur.rules import load_ur
    >>> c = certify_optimal(load_ur("ur", {"pieces": 1}))
    >>> c.optimal, round(float(c.value), 6) == round(c.float_value, 6)
    (True, True)
    """
    from .optimal import solve_optimal

    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    if values is None:
        values = solve_optimal(rules).values
    seconds["value iteration"] = time.perf_counter() - t0
    space = UrSpace(rules.pieces)
    mv = moves(space, None, rules)
    choice = policy_choice(mv, values)
    denom = int(np.lcm.reduce([Fraction(p).denominator for p in mv.probs]))
    A, b, local = evaluation_system(mv, choice, denom)
    start = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    t0 = time.perf_counter()
    solver = DixonSolver(A)
    d, digits, frac = solver.solve_integer(b[:, None], np.array([local[start]]))
    seconds["exact evaluation"] = time.perf_counter() - t0
    z = np.ascontiguousarray(digits[:, :, 0])
    d_digits = np.zeros(z.shape[0], np.int64)
    q, k = d, 0
    while q:
        q, d_digits[k] = divmod(q, solver.p)
        k += 1
    t0 = time.perf_counter()
    live_pos = np.flatnonzero(~mv.terminal).astype(np.int64)
    improving, ties, decisions = _check(z, d_digits, solver.p, live_pos, local, mv.succ.astype(np.int64),
                                        _kinds(mv), mv.n_moves.astype(np.int64), choice.astype(np.int64))
    seconds["exact check"] = time.perf_counter() - t0
    # W - V in floats, from the top three digits of z and d over the same power of p
    p = solver.p
    shift = max(k - 3, 0)  # k: the digits of d
    top = z[shift:].astype(np.float64)
    zf = sum(top[k] * float(p) ** k for k in range(top.shape[0]))
    w = zf / float(Fraction(d, p**shift))
    gap = float(np.max(np.abs(w - values[live_pos]))) if live_pos.size else 0.0
    value = frac[0][0]
    return Certificate(rules=rules.name, pieces=rules.pieces, positions=int(live_pos.size), value=value,
                       float_value=float(values[start]), optimal=improving == 0, improving=int(improving),
                       ties=int(ties), decisions=int(decisions), max_float_gap=gap,
                       denominator_digits=len(str(value.denominator)), seconds=seconds)
