"""A race's floating-point figures, each with a certified error bound.

Every figure is read from the expected visits ``v = e_init N`` of the race's chain (the chain's own
solve, :meth:`~markov_oca.analysis.chain.Chain.expected_visits`) and bounded as
:mod:`~markov_oca.analysis.bounds` explains: a chance by the 1-norm of the true adjoint residual, an
expected total by that residual against the expected steps from each state (one forward column,
which also certifies ``||N||_inf``). Given that the game ends, a total is ``E[R 1{end}] / P(end)``:
the chance of ending from every state is a second forward column, its certified error enters the
numerator, and the ratio's bound follows (:func:`~markov_oca.analysis.bounds.ratio_bound`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..analysis.absorbing import expected_visits, residual_bound
from ..analysis.bounds import VisitBounds, clip_probability, meets, ratio_bound, step_rounding, upper_steps
from ..analysis.chain import Chain
from ..analysis.moments import Forward, forward_block, weighted_step
from ..linalg.certify import SLACK, gamma, into_classes

INF = float("inf")


@dataclass
class RaceFigures:
    """Chances and expected totals of a race, each ``(value, bound)``, and what bounds them."""

    outcomes: dict[str, tuple[float, float]]
    deadlock: tuple[float, float]
    ends: tuple[float, float]
    totals: dict[str, tuple[float, float]] = field(default_factory=dict)
    given: dict[str, tuple[float, float]] = field(default_factory=dict)
    visits: VisitBounds | None = None
    forward: Forward | None = None
    forward_init: int | None = None  # the initial state, where ``visits.t_up`` bounds the expected steps
    reports: list[dict] = field(default_factory=list)

    def misses(self, precision: float) -> list[str]:
        """The figures whose bound misses the relative ``precision`` (infinite and undefined ones have none to meet)."""
        out = [f"P({k})" for k, (x, b) in self.outcomes.items() if not meets(x, b, precision)]
        out += ["P(deadlock)"] if not meets(*self.deadlock, precision) else []
        for kind, figures in (("E", self.totals), ("given the end E", self.given)):
            out += [f"{kind}[{k}]" for k, (x, b) in figures.items() if np.isfinite(x) and not meets(x, b, precision)]
        return out


def race_figures(chain: Chain, rewards: Mapping[str, tuple[np.ndarray, np.ndarray | None]],
                 given: Collection[str], target: float | None = None) -> RaceFigures:
    """The outcomes, deadlock and expected totals (in all and given the end) of ``rewards``, certified.

    Parameters
    ----------
    chain : Chain
    rewards : mapping
        Name -> ``(values, seat)``: per-state ``(n,)`` or per-branch ``(n, J)`` values, earned by the
        steps from the states where ``seat`` (a mask, or None for every state) holds.
    given : collection of str
        The rewards whose total given the end is wanted.
    target : float, optional
        Solve the visits afresh, refined while their residual's certified 1-norm is above this.
    """
    st = chain.structure
    transient = st.transient
    if target is None:
        v, rep = chain.expected_visits()
        report = {"method": rep.method, "residual": rep.residual, "iterations": rep.iterations}
    else:
        v, rep = expected_visits(chain, transient, target=target)
        report = {k: rep[k] for k in ("method", "residual", "iterations")}
    dead = bool(st.deadlock.any())
    vb, fwd = visit_bounds(chain, v, into(chain, st.absorbing)[:, None] if dead else None)
    out = RaceFigures({}, (0.0, 0.0), (1.0, 0.0), visits=vb, forward=fwd, forward_init=int(chain.init),
                      reports=[{**report, "residual_bound": vb.mass}, {**fwd.report}])
    names = list(chain.outcomes)
    groups = np.full(chain.n, -1, np.int64)
    groups[list(chain.outcomes.values())] = np.arange(len(names))
    groups[st.deadlock] = len(names)
    p = _classes(chain, vb, groups, len(names) + 1)
    out.outcomes = dict(zip(names, p[:-1], strict=True))
    out.deadlock = p[-1]
    out.ends = _classes(chain, vb, np.where(st.absorbing, 0, np.where(st.deadlock, 1, -1)), 2)[0]
    h = None
    if dead and fwd.x is not None:
        h = np.where(st.absorbing, 1.0, np.where(transient, np.clip(fwd.x[:, 1], 0.0, 1.0), 0.0))
    r_step = step_rounding(chain)
    for name, (values, seat) in rewards.items():
        step = chain.step_reward(np.asarray(values))
        if seat is not None:
            step = np.where(seat, step, 0.0)
        if dead and (step[st.deadlock] > 0).any():
            out.totals[name] = (INF, 0.0)
        else:
            out.totals[name] = vb.total(np.where(transient, step, 0.0), r_step)
        if name in given:
            out.given[name] = out.totals[name] if not dead else _given(chain, vb, fwd, h, values, seat, out.ends)
    return out


def visit_bounds(chain: Chain, v: np.ndarray, columns: np.ndarray | None = None) -> tuple[VisitBounds, Forward]:
    """What bounds every figure read from the visits ``v``: the true adjoint residual state by state, and
    the expected steps from every state (a forward column, with ``columns`` beside it), certified.

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> c = from_matrix([[0.5, 0.5], [0, 1]], init=0)
    >>> vb, fwd = visit_bounds(c, np.array([2.0, 0.0]))
    >>> bool(vb.mass < 1e-13), bool(1.99 < vb.t_up[0] < 2.01)
    (True, True)
    """
    transient = chain.structure.transient
    v = np.where(transient, v, 0.0)
    rb = residual_bound(chain, transient, v)[1] if transient[chain.init] else np.zeros(chain.n)
    fwd = forward_block(chain, np.zeros((chain.n, 0)) if columns is None else columns)
    t_up = upper_steps(fwd.x[:, 0], fwd.res[:, 0], fwd.norm) if fwd.x is not None else np.full(chain.n, INF)
    return VisitBounds(v, rb, t_up, fwd.norm), fwd


def into(chain: Chain, target: np.ndarray) -> np.ndarray:
    """The chance of entering ``target`` (a mask) on the next step from each transient state."""
    into = np.where((chain.next >= 0) & target[np.maximum(chain.next, 0)], chain.pnum.astype(np.int64), 0)
    return np.where(chain.structure.transient, into.sum(axis=1) / chain.denom, 0.0)


def relative_bound(chain: Chain, vb: VisitBounds, b: np.ndarray, err: float, once: bool = True) -> float:
    """The bound of a chance ``v . b`` that is small when the chance is: ``sum |r| min(1, h + delta)`` with
    ``h = N b`` (the chance of the event from each state, at most 1: an event that happens once at most; a
    forward column, ``delta`` its certified error) and ``err`` the rounding of the chance's own sum (as
    :mod:`~markov_oca.analysis.absorbing` tightens a hitting chance). ``b`` is the event's one-step chance
    (:func:`into` for entering a set). Without ``once`` (an event that may repeat) ``h`` is the expected
    count, not clipped at 1."""
    fwd = forward_block(chain, np.where(chain.structure.transient, b, 0.0)[:, None])
    delta = fwd.delta(1)
    if not np.isfinite(delta):
        return INF
    up = np.clip(fwd.x[:, 1] + delta, 0.0, 1.0 if once else INF)
    return float((float(vb.rb @ up) * SLACK + 2 * err) * SLACK)


def _classes(chain: Chain, vb: VisitBounds, groups: np.ndarray, k: int) -> list[tuple[float, float]]:
    """The chance of ending in each group of states (``groups[s]``, -1 for none), each with its bound."""
    p, err = np.zeros(k), np.zeros(k)
    transient = chain.structure.transient
    if transient[chain.init]:
        into_classes(chain.next, chain.pnum, 1.0 / chain.denom, vb.v, groups, p, err)
        # a group no branch from a transient state enters is never reached: 0, exactly
        nxt = chain.next[transient]
        entered = np.zeros(k + 1, bool)
        entered[groups[nxt[nxt >= 0]]] = True
        bounds = [vb.probability(float(e)) if entered[i] else 0.0 for i, e in enumerate(err)]
        return [(clip_probability(float(x), b) if entered[i] else 0.0, b)
                for i, (x, b) in enumerate(zip(p, bounds, strict=True))]
    g = int(groups[chain.init])
    return [(1.0 if i == g else 0.0, 0.0) for i in range(k)]


def _given(chain: Chain, vb: VisitBounds, fwd: Forward, h: np.ndarray | None, values: np.ndarray,
           seat: np.ndarray | None, ends: tuple[float, float]) -> tuple[float, float]:
    """``E[R 1{end}] / P(end)``: the steps' rewards weighed by the chance of ending from where each goes."""
    if h is None or not np.isfinite(fwd.delta(1)):
        return float("nan"), INF
    rho = np.asarray(values, np.float64)
    if rho.ndim == 1:
        rho = np.broadcast_to(rho[:, None], chain.next.shape)
    c, c_abs = np.empty(chain.n), np.empty(chain.n)
    weighted_step(chain.next, chain.pnum, 1.0 / chain.denom, rho, h, chain.structure.transient, c, c_abs)
    if seat is not None:
        c, c_abs = np.where(seat, c, 0.0), np.where(seat, c_abs, 0.0)
    # |N c| <= max c_abs t; h is off by delta, the kernel's sums by gamma_(J + 4) of their magnitudes
    a, b = vb.total(c, float(gamma(chain.next.shape[1] + 4)), float(c_abs.max(initial=0.0)))
    b = (b + float(np.abs(vb.v) @ c_abs) * (fwd.delta(1) + float(gamma(chain.next.shape[1] + 4)))) * SLACK
    p, ep = ends
    return (a / p if p > 0 else float("nan")), ratio_bound(a, b, p, ep)
