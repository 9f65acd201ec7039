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
"""

from __future__ import annotations

import numpy as np

from ..linalg.certify import SLACK, U, forward_residual
from .chain import Chain

#: Default relative precision of every figure (as Storm's ``--sound`` defaults to a relative criterion).
PRECISION = 1e-9


def forward_bound(chain: Chain, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A certified bound on ``|b + Q x - x|`` per transient state and column (0 elsewhere)."""
    b2 = np.ascontiguousarray(b.reshape(b.shape[0], -1), dtype=np.float64)
    x2 = np.ascontiguousarray(x.reshape(x.shape[0], -1), dtype=np.float64)
    res, err = np.empty_like(x2), np.empty_like(x2)
    forward_residual(chain.next, chain.pnum, 1.0 / chain.denom, chain.structure.transient, b2, x2, res, err)
    return np.abs(res) + err


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
    forward_residual(chain.next, chain.pnum, 1.0 / chain.denom, transient, np.zeros_like(x), x, res, err)
    # (I - Q) t = -res, up to err: its smallest certain value over the transient states
    low = (-res[:, 0] - err[:, 0])[transient]
    d = float(1.0 - low.min()) * (1 + 4 * U) if low.min() < 1 else 1.0 - float(low.min()) * (1 - 4 * U)
    if not d < 1:
        return float("inf"), d
    top = float(tc.max())
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
