"""Means and second moments of the absorption time and of every reward total, with certified bounds.

A total ``X = sum_{t < T} rho(X_t, X_{t+1})`` (``rho`` a reward per branch; a reward per state is
the same on each of its branches; the steps are ``rho = 1``) has, from each state, the mean
``g = N r`` (``r`` the expected reward of one step) and the second moment ``m2 = N c`` with
``c(s) = sum_u P(s, u) (rho(s, u)^2 + 2 rho(s, u) g(u))`` (``g = 0`` off the transient states): a
step's reward squared, plus twice its product with what follows, plus what follows squared. For
the steps ``c = 2 t - 1``, the textbook ``(I - Q) m2 = 2 t - 1``. From the start both are sums
over the visits: ``E[X] = v . r``, ``E[X^2] = v . c``; the variance is ``E[X^2] - E[X]^2``.

One forward block solve gives ``t`` (which also certifies ``||N||_inf``,
:func:`~markov_oca.analysis.bounds.norm_bound`), every ``g`` and the conditional columns ``h_k``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import numba
import numpy as np

from ..core.errors import SolverError
from ..linalg.certify import SLACK, U, compensated_dot, forward_residual, gamma
from ..linalg.report import SolveReport
from ..linalg.rows import n_states, row_width, span
from ..rational.blocks import dot
from .absorbing import forward_system
from .bounds import forward_bound, steps_bound
from .chain import Chain

INF = float("inf")


@dataclass
class Forward:
    """The forward block ``X = N B``: expected steps ``t``, reward means ``g``, conditional columns ``h``."""

    x: np.ndarray | None  # (n, columns) or None when the solve failed
    res: np.ndarray | None  # certified residual bounds, same shape
    norm: float  # certified bound on ||N||_inf (inf when none)
    report: dict = field(default_factory=dict)
    sharp: np.ndarray | None = None  # certified |x - x'| per state and column (see sharpen), when solved for

    def sharpen(self, chain: Chain) -> None:
        """Bound the error state by state by one more solve: ``|x - x'| = |N r| <= N R``, ``R`` the residual
        bounds. ``N R`` is solved as ``y'`` and certified as ``y' + ||N|| max|R + Q y' - y'|`` (a column at a
        time, ``N >= 0``). Where one row's rounding allowance is large (a state with 131,072 branches) and the
        chain visits it rarely, this is that allowance times the visits to it, not times ``||N||``."""
        if self.x is None or not np.isfinite(self.norm):
            return
        y, _ = chain.system.solve(self.res)
        y = y.reshape(self.res.shape)
        r2 = forward_bound(chain, self.res, y)
        self.sharp = np.maximum(y + self.norm * r2.max(axis=0, initial=0.0) * SLACK, 0.0) * SLACK
        self.report["sharpened"] = True

    @cached_property
    def largest(self) -> np.ndarray:
        """The largest residual bound of each column (asked once per column and initial state)."""
        return self.res.max(axis=0, initial=0.0)

    def delta(self, c: int) -> float:
        """Certified ``max |x - x'|`` of column ``c``."""
        if self.x is None or not np.isfinite(self.norm):
            return INF
        return self.norm * float(self.largest[c]) * SLACK

    def delta_at(self, c: int, s: int) -> float:
        """Certified ``|x - x'|`` of column ``c`` at state ``s``: the smaller of :meth:`delta` and
        ``max|r_c| t_s``, as ``|N r| <= max|r| N 1`` (``N >= 0``) and ``N 1 = t`` are the expected steps. From
        column 0 itself, ``t <= t' + max|r_0| t``, so ``t_s <= t'_s / (1 - max|r_0|)``. Where the steps are few
        the bound is small with them, however large ``||N||`` is elsewhere."""
        d = self.delta(c)
        if self.x is None:
            return d
        m = float(self.largest[0]) * SLACK
        if not m < 1.0:
            return d
        t = max(float(self.x[s, 0]), 0.0) / (1.0 - m) * SLACK
        d = min(d, float(self.largest[c]) * t * SLACK)
        return d if self.sharp is None else min(d, float(self.sharp[s, c]))


def forward_block(chain: Chain, columns: np.ndarray, rounds: int = 0) -> Forward:
    """Solve ``(I - Q) X = [1 | columns]`` on the transient states and certify ``||N||_inf`` from column 0.

    ``rounds`` of iterative refinement follow the solve (``X += (I - Q)^-1 R``, ``R`` the residual
    ``B + Q X - X``): an iterative solve that stopped early, or a factorisation that lost digits, each
    round multiplies the residual by about the solve's own relative accuracy."""
    return certified_forward(chain, forward_solution(chain, columns, rounds))


def forward_solution(chain: Chain, columns: np.ndarray,
                     rounds: int = 0) -> tuple[np.ndarray, np.ndarray, SolveReport] | Forward:
    """The solve of :func:`forward_block`, not yet certified: ``(B, X, report)``, or the failed block."""
    transient = chain.structure.transient
    b = np.concatenate([transient.astype(np.float64)[:, None], columns.reshape(chain.n, -1)], axis=1)
    try:
        topo = forward_system(chain)
        x = None
        if topo is not None:
            try:
                x = topo.forward(b)
            except SolverError:  # a component it cannot eliminate: the iterative route
                x = None
            rep = SolveReport(f"{topo.method} (the largest of {topo.largest:,} states)", float("nan"), 1)
        if x is None or not np.isfinite(x).all():
            x, rep = chain.system.solve(b)
        for _ in range(rounds):
            r = np.empty_like(x)
            forward_residual(*chain.rows, 1.0 / chain.denom, transient, b, np.ascontiguousarray(x), r,
                             np.empty_like(x))
            d, _ = chain.system.solve(r)
            x = x + d.reshape(x.shape)
        if rounds:
            rep.method += f", then {rounds} rounds of iterative refinement"
    except SolverError as exc:
        return Forward(None, None, INF, {"analysis": "forward block", "method": str(exc), "residual": None,
                                         "iterations": 0})
    return b, x, rep


def certified_forward(chain: Chain, solved: tuple[np.ndarray, np.ndarray, SolveReport] | Forward) -> Forward:
    """:func:`forward_block` from its :func:`forward_solution`: the residual bounds and ``||N||_inf``."""
    if isinstance(solved, Forward):
        return solved
    b, x, rep = solved
    res, norm, _ = steps_bound(chain, b, x)
    if not np.isfinite(rep.residual):  # the topological pass leaves the residual to this certified one
        rep.residual = float(res.max(initial=0.0))
    return Forward(x, res, norm, {"analysis": f"expected steps, rewards and {b.shape[1] - 1} columns from every "
                                              f"state", "method": rep.method, "residual": rep.residual,
                                  "iterations": rep.iterations, "norm_bound": norm})


@numba.njit(cache=True, nogil=True)
def _second_rhs(lo, hi, nxt, pnum, inv_denom, rho, g, transient, c, c_abs, c_dg):
    """``c(s) = sum_j p_j (rho_j^2 + 2 rho_j g(next_j))``, the magnitudes of its terms, and ``sum_j p_j |rho_j|``
    (the chain's :class:`~markov_oca.linalg.rows.Rows`; ``rho`` a value per flat slot, None: every branch 1,
    the steps)."""
    for s in range(n_states(lo, hi, nxt)):
        c[s] = 0.0
        c_abs[s] = 0.0
        c_dg[s] = 0.0
        if not transient[s]:
            continue
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
            t = nxt[j]
            p = pnum[j] * inv_denom
            r = 1.0 if rho is None else rho[j]
            gt = g[t] if transient[t] else 0.0
            c[s] += p * (r * r + 2.0 * r * gt)
            c_abs[s] += p * (r * r + 2.0 * abs(r * gt))
            c_dg[s] += p * abs(r)


@numba.njit(cache=True, nogil=True)
def weighted_step(nxt, pnum, inv_denom, rho, h, transient, c, c_abs):
    """``c(s) = sum_j p_j rho_j h(next_j)`` on the transient states (a step's reward weighed by the chance
    ``h`` of what follows from where it goes, ``rho`` per branch) and ``c_abs(s) = sum_j p_j |rho_j|``."""
    for s in range(nxt.shape[0]):
        c[s] = 0.0
        c_abs[s] = 0.0
        if not transient[s]:
            continue
        for j in range(row_width(nxt, s)):
            p = pnum[s, j] * inv_denom
            r = rho[s, j]
            c[s] += p * r * h[nxt[s, j]]
            c_abs[s] += p * abs(r)


@dataclass
class Moment:
    """Mean, second moment and variance of a total, each with a certified bound (float mode)."""

    mean: float | Fraction
    second: float | Fraction
    mean_bound: float | None = None
    second_bound: float | None = None

    @property
    def variance(self) -> float | Fraction:
        return self.second - self.mean * self.mean

    @property
    def variance_bound(self) -> float | None:
        if self.mean_bound is None or self.second_bound is None:
            return None
        m = abs(float(self.mean))
        return (self.second_bound + self.mean_bound * (2 * m + self.mean_bound)) * SLACK \
            + 4 * U * (abs(float(self.second)) + m * m)

    def to_dict(self) -> dict:
        from .results import number

        d = {"mean": number(self.mean), "second_moment": number(self.second), "variance": number(self.variance)}
        if self.mean_bound is not None:
            d.update(mean_bound=self.mean_bound, second_moment_bound=self.second_bound,
                     variance_bound=self.variance_bound)
        return d


def moment(chain: Chain, fwd: Forward, col: int, rho: np.ndarray | None, v: np.ndarray,
           v_bound: np.ndarray) -> Moment:
    """The total whose step rewards are column ``col`` of the forward block, per branch ``rho`` (None: 1 on every
    branch, the steps), from the visits."""
    transient = chain.structure.transient
    g = fwd.x[:, col] if fwd.x is not None else np.zeros(chain.n)
    step = np.asarray(fwd_rhs(chain, rho), np.float64)
    mean, err_m = compensated_dot(v, step)
    delta = fwd.delta(col)
    mean_bound = float((v_bound @ (np.abs(g) + delta)) * SLACK + 2 * err_m) if np.isfinite(delta) else INF
    c, c_abs, c_dg = np.empty(chain.n), np.empty(chain.n), np.empty(chain.n)
    _second_rhs(*chain.rows, 1.0 / chain.denom, rho, g, transient, c, c_abs, c_dg)
    second, err_s = compensated_dot(v, c)
    if np.isfinite(delta):
        dc = 2 * c_dg * delta + gamma(chain.rows.widest() + 3) * c_abs
        second_bound = float((v_bound.sum() * fwd.norm * (np.abs(c) + dc).max(initial=0.0)
                              + np.abs(v) @ dc) * SLACK + 2 * err_s)
    else:
        second_bound = INF
    return Moment(float(mean), float(second), mean_bound, second_bound)


def fwd_rhs(chain: Chain, rho: np.ndarray | None) -> np.ndarray:
    """The expected reward of one step from each transient state (0 elsewhere), for per-branch values ``rho``
    (None: 1 on every branch)."""
    out = np.empty(chain.n)
    _step_means(*chain.rows, float(chain.denom), rho, chain.structure.transient, out)
    return out


@numba.njit(cache=True, nogil=True)
def _step_means(lo, hi, nxt, pnum, denom, rho, transient, out):
    """``out[s] = sum_j (pnum_j / denom) rho_j`` over state ``s``'s branches on the transient states, 0
    elsewhere (the chain's :class:`~markov_oca.linalg.rows.Rows`, ``rho`` a value per flat slot or None)."""
    for s in range(n_states(lo, hi, nxt)):
        acc = 0.0
        if transient[s]:
            first, last = span(lo, hi, nxt, s)
            for j in range(first, last):
                acc += (pnum[j] / denom) * (1.0 if rho is None else rho[j])
        out[s] = acc


def branch_values(chain: Chain, values: np.ndarray) -> np.ndarray:
    """A reward as a value per flat slot of :attr:`~markov_oca.analysis.chain.Chain.rows` (a per-state reward
    repeated on each branch; a per-branch one ``(n, J)`` of a padded table, flattened)."""
    values = np.asarray(values)
    if values.ndim == 1:
        return np.ascontiguousarray(values.astype(np.float64)[chain.rows.owners()])
    return np.ascontiguousarray(values, dtype=np.float64).reshape(-1)


def exact_moments(chain: Chain, ids: np.ndarray, pos: np.ndarray, vis: list, rho: list[list[Fraction]],
                  r: list, g: list) -> Moment:
    """Mean and second moment, exactly: ``v . r`` and ``v . c`` from the visits ``vis``, the
    expected reward of one step ``r`` and the mean from each state ``g = N r`` (FLINT rationals, in the order
    of ``ids``).

    ``rho[i]`` are the rewards of the branches of transient state ``ids[i]`` (in branch order).
    """
    import flint

    d = int(chain.denom)
    zero = flint.fmpq(0)
    c = []
    for i, s in enumerate(ids.tolist()):
        ci = zero
        if vis[i]:
            for j, x in enumerate(rho[i]):
                if not x:
                    continue
                q = flint.fmpq(x.numerator, x.denominator)
                t = int(pos[int(chain.next[s, j])])
                gt = g[t] if t >= 0 else zero
                ci += int(chain.pnum[s, j]) * q * (q + 2 * gt)
        c.append(ci)
    mean, second = dot(vis, r), dot(vis, c) / d
    return Moment(Fraction(int(mean.p), int(mean.q)), Fraction(int(second.p), int(second.q)))
