"""Certified error bounds for the float figures of :func:`~markov_oca.analysis.general.analyse`.

Method (and why)
----------------
Every figure is a sum over the visits ``v = e_init N`` (``N = (I - Q)^-1``) or over a forward
solve ``x = N b``. A computed ``v'`` has the adjoint residual ``r = e_init - v' (I - Q)`` and
``v - v' = r N``, so a figure ``v . b`` is off by ``r . (N b)``:

- a probability: ``N b = h`` lies in [0, 1], so its error is at most ``sum |r| h <= ||r||_1``
  (:mod:`~markov_oca.analysis.absorbing`); a forward solve of ``h`` tightens that to a relative bound
  for small probabilities (``h`` small where ``r`` is);
- an expectation ``v . g``: ``N g`` is at most ``||g||_inf`` times the expected steps ``t = N 1``,
  bounded through ``||N||_inf``.

``||N||_inf`` is certified from the computed expected steps ``t'`` (:func:`norm_bound`): if
``t' >= 0`` and ``(I - Q) t' >= (1 - d) 1`` with ``d < 1``, then, ``N`` being nonnegative,
``N 1 <= t' / (1 - d)`` and ``||N||_inf <= max t' / (1 - d)``. The check is done with the
rounding of its own arithmetic accounted for (:mod:`markov_oca.linalg.certify`). A forward
solution's error is then ``|x - x'| <= ||N||_inf ||r_x||_inf``.

This residual route was chosen over interval iteration because the solves are already there (two
adjoint solves, ``v`` and ``v N``, and one forward block): the certificate costs a mat-vec and a
forward column, where interval iteration needs a second, monotone iteration from above that
converges as slowly as the chain mixes (on a chain built to defeat convergence tests, 2**N sweeps).
When no bound under the precision asked can be had (the true residual too large, or ``||N||`` beyond
what double precision can certify, as on the walks of Haddad and Monmege), the analysis refines the
solve, then solves the chain exactly (its probabilities are rationals, a float's over ``2**53``)
when it is small enough, and otherwise refuses in one line.

The same method certifies ``solve``'s figures: a race's (:mod:`markov_oca.engine.certified`, from the
chain's own visits and a forward column of expected steps: :class:`VisitBounds`; from three players the
chain seen from the mover, whose visits are a block with a column per seat: :meth:`VisitBounds.of`), Ur's
pair of policies (the same, on its chain) and the points game's chain. Players who never meet are certified
from one player's race pushed turn by turn: its figures' rounding (nonnegative sums, no cancellation), the
seats' combination evaluated on intervals, and the mass left racing times certified expected steps
(:func:`~markov_oca.goose.independent.independent_bounds`). A distribution pushed step by step (the length
of a game) is off by the rounding of its pushes only (:func:`~markov_oca.linalg.certify.push_rounding`),
and its quantiles are kept only where that cannot move them
(:func:`~markov_oca.analysis.results.certify_length`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.errors import SolverError
from ..linalg.certify import SLACK, U, compensated_dot, forward_residual, gamma
from .chain import Chain

#: Default relative precision of every figure (as Storm's ``--sound`` defaults to a relative criterion).
PRECISION = 1e-9


def _residual(chain: Chain, b: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x`` as columns, the computed ``b + Q x - x`` and a bound on that computation's error."""
    b2 = np.ascontiguousarray(b.reshape(b.shape[0], -1), dtype=np.float64)
    x2 = np.ascontiguousarray(x.reshape(x.shape[0], -1), dtype=np.float64)
    res, err = np.empty_like(x2), np.empty_like(x2)
    forward_residual(*chain.rows, 1.0 / chain.denom, chain.structure.transient, b2, x2, res, err)
    return x2, res, err


def forward_bound(chain: Chain, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A certified bound on ``|b + Q x - x|`` per transient state and column (0 elsewhere)."""
    _, res, err = _residual(chain, b, x)
    return np.abs(res) + err


def steps_bound(chain: Chain, b: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float, float]:
    """:func:`forward_bound` of a block whose column 0 is the expected steps (``b[:, 0]`` is 1 on every transient
    state, 0 elsewhere), with :func:`norm_bound` of that column read from the same residual.

    With ``r = 1 + Q t - t`` computed and ``e`` its error bound, ``(I - Q) t = 1 - r >= (1 - d) 1`` for
    ``d = max (r + e)`` (the float sum, with an allowance of ``4 U |d|`` for its rounding), which is what
    :func:`norm_bound` proves by a pass of its own. That pass is made instead when ``b[:, 0]`` is not that
    column, or ``t`` is not as :func:`norm_bound` would use it (negative, not finite, or not 0 off the
    transient states)."""
    b2 = np.asarray(b).reshape(b.shape[0], -1)
    x2, res, err = _residual(chain, b, x)
    out = np.abs(res) + err
    transient = chain.structure.transient
    t = x2[:, 0]
    if not (transient.any() and np.array_equal(b2[:, 0], transient) and np.isfinite(t).all()
            and (t[transient] >= 0).all() and not t[~transient].any()):
        return out, *norm_bound(chain, t)
    u = float((res[:, 0] + err[:, 0])[transient].max())
    return out, *_proved_norm(float(t.max()), u + 4 * U * abs(u))


def norm_bound(chain: Chain, t: np.ndarray, active: np.ndarray | None = None) -> tuple[float, float]:
    """A certified bound on ``||N||_inf`` from approximate expected steps ``t``, and the ``d`` it proved.

    Returns ``(inf, d)`` when ``(I - Q) t >= (1 - d) 1`` cannot be shown with ``d < 1``. ``N`` is
    that of the transient states, or of the states ``active`` (``Q`` restricted to them).

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> c = from_matrix([[0.5, 0.5], [0, 1]], init=0)
    >>> norm_bound(c, np.array([2.0, 0.0]))[0] < 2.000001
    True
    """
    transient = chain.structure.transient if active is None else active
    if not transient.any():
        return 0.0, 0.0
    tc = np.where(transient, np.maximum(np.nan_to_num(t, nan=0.0), 0.0), 0.0)
    x = tc[:, None]
    res, err = np.empty_like(x), np.empty_like(x)
    forward_residual(*chain.rows, 1.0 / chain.denom, transient, np.zeros_like(x), x, res, err)
    # (I - Q) t = -res, up to err: its smallest certain value over the transient states
    low = (-res[:, 0] - err[:, 0])[transient]
    d = float(1.0 - low.min()) * (1 + 4 * U) if low.min() < 1 else 1.0 - float(low.min()) * (1 - 4 * U)
    return _proved_norm(float(tc.max()), d)


def _proved_norm(top: float, d: float) -> tuple[float, float]:
    """``(||N||_inf bound, d)`` from ``(I - Q) t >= (1 - d) 1`` and ``max t = top``: ``top / (1 - d)`` rounded
    up, or infinity when ``d < 1`` is not shown."""
    if not d < 1:
        return float("inf"), d
    return top / (1 - d) * (1 + 8 * U), d


def ratio_bound(a: float, ea: float, p: float, ep: float) -> float:
    """A bound on ``|a / p - a' / p'|`` for ``|a - a'| <= ea``, ``|p - p'| <= ep`` (inf when ``p'`` may be 0)."""
    if not p > ep:
        return float("inf")
    return (abs(a) * ep + p * ea) / (p * (p - ep)) * SLACK + 4 * U * abs(a / p)


def meets(value: float, bound: float | None, precision: float) -> bool:
    """Whether a figure's bound is within the relative precision asked (an exact 0 with bound 0 passes)."""
    return bound is not None and np.isfinite(bound) and bound <= precision * abs(value)


def upper_steps(t: np.ndarray, t_res: np.ndarray, norm: float) -> np.ndarray:
    """A certified upper bound on the expected steps from each state: ``t' + ||N|| ||r_t||``."""
    return (np.maximum(t, 0.0) + norm * float(t_res.max(initial=0.0))) * SLACK


def rounded(x: Any) -> tuple[float, float]:
    """``float(x)`` and a bound on its rounding: 0 when the float is ``x`` (a float, an infinity, an exactly
    representable fraction), else the exact distance, made an upper bound (its own rounding, and underflow).

    Examples
    --------
    >>> rounded(Fraction(1, 2)), rounded(0.1)
    ((0.5, 0.0), (0.1, 0.0))
    >>> y, b = rounded(Fraction(1, 3))
    >>> abs(Fraction(y) - Fraction(1, 3)) <= b < 2e-17
    True
    """
    y = float(x)
    if isinstance(x, float) or not math.isfinite(y):
        return y, 0.0
    d = abs(Fraction(y) - Fraction(x))
    return y, (float(d) * (1 + 2 ** -52) + 2.0 ** -1074) if d else 0.0


def clip_probability(p: float, bound: float) -> float:
    """``p`` moved into [0, 1] when the move stays within its bound (it then only shrinks the error).

    Raises SolverError when ``p`` is further outside than its bound: the bound would be wrong.

    Examples
    --------
    >>> clip_probability(1.0 + 1e-16, 1e-12), clip_probability(-1e-17, 1e-12)
    (1.0, 0.0)
    """
    if -bound <= p < 0.0:
        return 0.0
    if 1.0 < p <= 1.0 + bound:
        return 1.0
    if not 0.0 <= p <= 1.0:
        raise SolverError(f"probability {p!r} lies further outside [0, 1] than its bound {bound:.3g}")
    return float(p)


@dataclass
class VisitBounds:
    """What bounds every figure read from the visits ``v = e_init N`` (see the module docstring).

    ``rb`` bounds the true adjoint residual state by state, ``t_up`` the expected steps from each
    state (:func:`upper_steps`), ``norm`` is ``||N||_inf`` (inf when it could not be certified).
    ``rounding`` is the relative rounding of the entries of ``v`` themselves (nonnegative visits summed
    over the columns of a seat-shifted block, :meth:`of`).
    """

    v: np.ndarray
    rb: np.ndarray
    t_up: np.ndarray
    norm: float
    rounding: float = 0.0

    def of(self, v: np.ndarray, rounding: float = 0.0) -> VisitBounds:
        """The same bounds for figures read from ``v``, a part of the visits: a seat's column of a seat-shifted
        block, or its columns summed (off by ``rounding`` relative). The residual stays the whole block's: a
        figure of one seat is ``r . N~ g`` over every (state, seat) pair of the lifted chain, and ``N~ g`` is at
        most ``max |g|`` times the expected steps from the state, whatever the seat (the seat does not move the
        chain), so ``rb`` (summed over the seats) and ``t_up`` bound it as they bound a figure of one chain."""
        return VisitBounds(v, self.rb, self.t_up, self.norm, rounding)

    @property
    def mass(self) -> float:
        """The bound of any probability ``v . b`` (``N b`` in [0, 1]): the residual's 1-norm."""
        return float(self.rb.sum()) * SLACK

    @property
    def steps(self) -> float:
        """``sum |r| N 1``: the bound of ``v . g`` per unit of ``max |g|`` (inf without a norm)."""
        if not np.isfinite(self.norm):
            return float("inf")
        return float(self.rb @ self.t_up) * SLACK

    def probability(self, err: float) -> float:
        """The bound of a probability read from the visits whose sum's own rounding is ``err``."""
        return float((self.mass + 2 * err) * SLACK)

    def total(self, step: np.ndarray, rounding: float = 0.0, scale: float | None = None) -> tuple[float, float]:
        """``v . step`` (compensated) and its bound: ``step`` the expected reward of one step, itself off by
        ``rounding`` relative; ``|N step| <= scale t`` (by default ``scale = max |step|``)."""
        value, err = compensated_dot(self.v, step)
        big = float(np.abs(step).max(initial=0.0)) if scale is None else scale
        solve = self.steps * big if big else 0.0
        rounding = (rounding + self.rounding * (1 + rounding)) * (1 + 4 * U) if self.rounding else rounding
        own = rounding * float(np.abs(self.v) @ np.abs(step)) if rounding else 0.0
        return float(value), float((solve + own + 2 * err) * SLACK)


def step_rounding(chain: Chain) -> float:
    """The relative rounding of a step's expected reward ``sum_j pnum_j / denom rho_j`` (nonnegative ``rho``)."""
    return float(gamma(chain.rows.widest() + 3))
