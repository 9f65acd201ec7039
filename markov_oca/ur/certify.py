"""Certified optimal play of small Ur games: exact values, and an exact check that no move improves.

Value iteration (:mod:`.optimal`) gives floating-point values ``V`` and, through
them, a policy ``pi``: at each position and throw, the first move of greatest
value. This module turns that into a certificate in exact arithmetic:

1. **Policy evaluation.** Both sides playing ``pi``, the value ``W[s]`` (the chance
   that the side to move in ``s`` wins) solves the linear system
   ``W[s] = sum_t p_t value_W(pi(s, t))`` over every position of the space that is
   not over, with ``value_W(m) = W[succ]`` after a rosette, ``1 - W[succ]`` when the
   move hands the turn over, ``1`` or ``0`` when it ends the game. With the throw
   probabilities over one denominator this is an integer system, block triangular by
   its strongly connected components, solved exactly by :func:`~markov_oca.ur.exact.solve_exact`
   (numeric lifting, the identity ``A z = d B`` checked over the integers) as ``W = z / d``.
2. **No move improves.** For every position and throw, every legal move's value
   under ``W`` is compared exactly with ``pi``'s (``d value_W(m)`` is ``z[succ]``,
   ``d - z[succ]``, ``d`` or ``0``: integer comparisons). When no move beats ``pi``
   anywhere, ``W`` satisfies the Bellman optimality equation exactly at every position.

The Bellman operator of a zero-sum stochastic game that ends with probability one
under every pair of stationary policies has exactly one fixed point (Shapley), so
``W`` is then the optimal value ``V*``: ``W[start]`` is the exact chance that the
first side wins with best play by both. That premise is stated, not checked: it
holds in Ur because every move brings a piece forward and each side's progress
can be undone only by a capture, which needs the capturing side to move forward.

How far it reaches: one piece (217 positions not over) in a fraction of a second, two
pieces (12,869) in about a minute; three pieces (264,304 positions) is out of reach
(:func:`~markov_oca.ur.exact.estimate`: days of lifting and tens of GB for the LU).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from .exact import _digits, solve_exact
from .kernel import AGAIN, GAME_OVER, MOVER_WINS, move_scores, moves
from .rules import UrRules
from .state import space_of

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
    return np.argmax(move_scores(mv.events, mv.succ, mv.n_moves, np.asarray(values, np.float64)), axis=2)


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


def _check(z: list[int], d: int, live_pos: np.ndarray, local: np.ndarray, mv, choice: np.ndarray):
    """Count (improving, ties, decisions) over every position not over and every throw, in exact integers.

    A move's value times ``d`` is ``d`` (a win), ``0`` (a loss), ``z[succ]`` (a rosette) or
    ``d - z[succ]`` (the turn passes); ``pi``'s move is compared with every other legal one.
    """
    kinds = _kinds(mv)
    many = mv.n_moves[live_pos] >= 2
    qs, ts = np.nonzero(many)
    improving = ties = 0
    for q, t in zip(qs.tolist(), ts.tolist(), strict=True):
        s = int(live_pos[q])
        nm = int(mv.n_moves[s, t])
        vals = []
        for m_ in range(nm):
            k = int(kinds[s, t, m_])
            if k == _ONE:
                vals.append(d)
            elif k == _ZERO:
                vals.append(0)
            else:
                zz = z[int(local[mv.succ[s, t, m_]])]
                vals.append(zz if k == _SAME else d - zz)
        c = int(choice[s, t])
        best = vals[c]
        others = [v for i, v in enumerate(vals) if i != c]
        if max(others) > best:
            improving += 1
        elif best in others:
            ties += 1
    return improving, ties, int(qs.size)


def certify_optimal(rules: UrRules, values: np.ndarray | None = None) -> Certificate:
    """Exact optimal value of ``rules`` and the exact check that no move improves (module docstring).

    Examples
    --------
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
    space = space_of(rules.pieces, rules.code)
    mv = moves(space, None, rules)
    choice = policy_choice(mv, values)
    denom = int(np.lcm.reduce([Fraction(p).denominator for p in mv.probs]))
    A, b, local = evaluation_system(mv, choice, denom)
    start = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    t0 = time.perf_counter()
    live_pos = np.flatnonzero(~mv.terminal).astype(np.int64)
    sol = solve_exact(A, b[:, None], int(local[start]))
    d, z = sol.d, sol.z[0]
    seconds["exact evaluation"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    improving, ties, decisions = _check(z, d, live_pos, local, mv, choice)
    seconds["exact check"] = time.perf_counter() - t0
    # W - V in floats, from the leading bits of z and d
    sh = max(d.bit_length() - 60, 0)
    w = np.array([z_i >> sh for z_i in z], np.float64) / float(d >> sh)
    gap = float(np.max(np.abs(w - values[live_pos]))) if live_pos.size else 0.0
    value = Fraction(z[int(local[start])], d)
    return Certificate(rules=rules.name, pieces=rules.pieces, positions=int(live_pos.size), value=value,
                       float_value=float(values[start]), optimal=improving == 0, improving=int(improving),
                       ties=int(ties), decisions=int(decisions), max_float_gap=gap,
                       denominator_digits=_digits(value.denominator), seconds=seconds)
