"""A race's floating-point figures, each with a certified error bound.

Every figure is read from the expected visits ``v = e_init N`` of the race's chain (the chain's own
solve, :meth:`~markov_oca.analysis.chain.Chain.expected_visits`) and bounded as
:mod:`~markov_oca.analysis.bounds` explains: a chance by the 1-norm of the true adjoint residual, an
expected total by that residual against the expected steps from each state (one forward column,
which also certifies ``||N||_inf``). Given that the game ends, a total is ``E[R 1{end}] / P(end)``:
the chance of ending from every state is a second forward column, its certified error enters the
numerator, and the ratio's bound follows (:func:`~markov_oca.analysis.bounds.ratio_bound`).

A chain seen from the mover (:func:`block_figures`) has a block of visits, a column per seat, whose
columns the branches' seat shifts permute: it is the visits of the lifted chain on (state, seat)
pairs. Its true residual is bounded pair by pair and summed over the seats of each state; the seat
does not move the chain, so the expected steps from a pair are the rotated chain's from the state,
one forward column, and every seat's figure is bounded as a figure of one chain
(:meth:`~markov_oca.analysis.bounds.VisitBounds.of`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..analysis.absorbing import REFINE_ROUNDS, expected_visits, residual_bound
from ..analysis.bounds import VisitBounds, clip_probability, meets, ratio_bound, step_rounding, upper_steps
from ..analysis.chain import Chain
from ..analysis.moments import Forward, forward_block, weighted_step
from ..linalg.certify import SLACK, gamma, into_classes, shifted_adjoint_residual
from ..linalg.solve import shifted_adjoint_solve

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
    p = _classes(chain, vb, [(vb.v, groups)], len(names) + 1)
    out.outcomes = dict(zip(names, p[:-1], strict=True))
    out.deadlock = p[-1]
    out.ends = _classes(chain, vb, [(vb.v, _end_groups(st))], 2)[0]
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
    fwd, t_up = _steps(chain, columns)
    return VisitBounds(v, rb, t_up, fwd.norm), fwd


def _steps(chain: Chain, columns: np.ndarray | None) -> tuple[Forward, np.ndarray]:
    """The forward column of expected steps (with ``columns`` beside it) and its certified upper bound."""
    fwd = forward_block(chain, np.zeros((chain.n, 0)) if columns is None else columns)
    t_up = upper_steps(fwd.x[:, 0], fwd.res[:, 0], fwd.norm) if fwd.x is not None else np.full(chain.n, INF)
    return fwd, t_up


def _end_groups(st) -> np.ndarray:
    """Group 0 the outcomes, group 1 the deadlocked states (the chance of ending is group 0's)."""
    return np.where(st.absorbing, 0, np.where(st.deadlock, 1, -1))


def block_residual(chain: Chain, shift: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The computed residual ``e_init + Q_shift^T v - v`` of a seat-shifted visits block ``v`` ``(n, m)`` (1 in
    column 0 of the initial state) and a certified bound on the true one's 1-norm over each state's seats."""
    res, err = np.empty_like(v), np.empty(chain.n)
    transient = chain.structure.transient
    shifted_adjoint_residual(chain.next, chain.pnum, shift, 1.0 / chain.denom, transient,
                             int(chain.init) if transient[chain.init] else -1, v, res, err)
    rb = np.zeros(chain.n)
    for a in range(v.shape[1]):  # a column at a time: no second block
        rb += np.abs(res[:, a])
    return res, rb * (1 + float(gamma(v.shape[1]))) + err


def refine_block(chain: Chain, shift: np.ndarray, v: np.ndarray, target: float) -> tuple[np.ndarray, dict]:
    """A seat-shifted visits block refined (up to :data:`REFINE_ROUNDS` rounds) while its certified residual's
    1-norm is above ``target``: each round solves for the correction from the computed residual
    (:func:`~markov_oca.linalg.solve.shifted_adjoint_solve`) and keeps it when the bound shrinks."""
    transient = chain.structure.transient
    v = np.where(transient[:, None], np.maximum(v, 0.0), 0.0)
    res, rb = block_residual(chain, shift, v)
    rounds = iters = 0
    while rb.sum() * SLACK > target and rounds < REFINE_ROUNDS and np.isfinite(res).all():
        step, rep = shifted_adjoint_solve(chain.next, chain.pnum, shift, chain.denom, transient, chain.order(), res,
                                          tol=1e-15)
        better = np.where(transient[:, None], np.maximum(v + step, 0.0), 0.0)
        del step
        res2, rb2 = block_residual(chain, shift, better)
        rounds += 1
        iters += rep.iterations
        if not rb2.sum() < rb.sum():
            break
        v, res, rb = better, res2, rb2
    return v, {"method": f"the seat-shifted block refined ({rounds} round(s) of its residual's solve)",
               "residual": float(np.abs(res).max(initial=0.0)), "iterations": iters,
               "residual_bound": float(rb.sum() * SLACK)}


def block_figures(chain: Chain, shift: np.ndarray, v: np.ndarray,
                  rewards: Mapping[str, tuple[np.ndarray, int | np.ndarray | None]], given: Collection[str],
                  names: list[str], infinite: Collection[str] = ()) -> RaceFigures:
    """:func:`race_figures` of a chain seen from the mover, from its seat-shifted block of visits.

    Parameters
    ----------
    chain : Chain
        The rotated chain (its branches, without their seat shifts).
    shift : numpy.ndarray
        ``(n, J)``: each branch's seat shift.
    v : numpy.ndarray
        ``(n, m)``: the expected visits of each (state, seat to move); clipped at 0 in place (the true visits
        are nonnegative, and the residual is that of the block used).
    rewards : mapping
        Name -> ``(values, seats)``: per-state or per-branch values, earned in every column (``seats`` None),
        in one seat's column (an int), or where a boolean ``(n, m)`` block holds.
    given : collection of str
        The rewards whose total given the end is wanted.
    names : list of str
        The seats' outcomes: the ``k``-th outcome of ``chain.outcomes`` reached from column ``a`` is
        ``names[(a + k) % m]``.
    infinite : collection of str
        The rewards a deadlock that the game reaches keeps earning (their totals are infinite).
    """
    st = chain.structure
    transient = st.transient
    m = v.shape[1]
    dead = bool(st.deadlock.any())
    v[~transient] = 0.0
    np.maximum(v, 0.0, out=v)
    rb = block_residual(chain, shift, v)[1] if transient[chain.init] else np.zeros(chain.n)
    fwd, t_up = _steps(chain, into(chain, st.absorbing)[:, None] if dead else None)
    vb = VisitBounds(v.sum(axis=1), rb, t_up, fwd.norm, float(gamma(m)))
    out = RaceFigures({}, (0.0, 0.0), (1.0, 0.0), visits=vb, forward=fwd, forward_init=int(chain.init),
                      reports=[{**fwd.report}])
    outs = np.array(list(chain.outcomes.values()), np.int64)

    def seat_groups(a: int) -> np.ndarray:
        groups = np.full(chain.n, -1, np.int64)
        groups[outs] = (a + np.arange(outs.size)) % m
        groups[st.deadlock] = m
        return groups

    p = _classes(chain, vb, ((np.ascontiguousarray(v[:, a]), seat_groups(a)) for a in range(m)), m + 1)
    out.outcomes = {names[a]: p[a] for a in range(m)}
    out.deadlock = p[m]
    out.ends = _classes(chain, vb, [(vb.v, _end_groups(st))], 2)[0]
    h = None
    if dead and fwd.x is not None:
        h = np.where(st.absorbing, 1.0, np.where(transient, np.clip(fwd.x[:, 1], 0.0, 1.0), 0.0))
    r_step = step_rounding(chain)
    steps: dict[int, tuple] = {}  # one step reward (and weighted step) per values array, whatever the seat
    for name, (values, seats) in rewards.items():
        if seats is None:
            vw = vb
        elif isinstance(seats, (int, np.integer)):
            vw = vb.of(np.ascontiguousarray(v[:, seats]))
        else:
            vw = vb.of(sum(np.where(seats[:, a], v[:, a], 0.0) for a in range(m)), vb.rounding)
        if id(values) not in steps:
            step = np.where(transient, chain.step_reward(np.asarray(values)), 0.0)
            steps[id(values)] = (values, step, _weighted(chain, h, values) if h is not None else None)
        _, step, weighted = steps[id(values)]
        out.totals[name] = (INF, 0.0) if name in infinite else vw.total(step, r_step)
        if name in given:
            out.given[name] = out.totals[name] if not dead else _given_of(chain, vw, fwd, weighted, out.ends)
    return out


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


def _classes(chain: Chain, vb: VisitBounds, parts: Iterable[tuple[np.ndarray, np.ndarray]],
             k: int) -> list[tuple[float, float]]:
    """The chance of ending in each group of states, each with its bound: summed over ``parts``, pairs of
    visits (``vb.v``, or a column of a seat-shifted block) and groups (``groups[s]``, -1 for none)."""
    p, err = np.zeros(k), np.zeros(k)
    transient = chain.structure.transient
    if transient[chain.init]:
        nxt = chain.next[transient]
        entered = np.zeros(k + 1, bool)
        for v, groups in parts:
            pa, ea = np.zeros(k), np.zeros(k)
            into_classes(*chain.rows, 1.0 / chain.denom, v, groups, pa, ea)
            p, err = p + pa, err + ea
            # a group no branch from a transient state enters is never reached: 0, exactly
            entered[groups[nxt[nxt >= 0]]] = True
        # the visits or the parts summed: nonnegative terms, off by vb.rounding relative
        err = (err + vb.rounding * np.abs(p)) * SLACK if vb.rounding else err
        bounds = [vb.probability(float(e)) if entered[i] else 0.0 for i, e in enumerate(err)]
        return [(clip_probability(float(x), b) if entered[i] else 0.0, b)
                for i, (x, b) in enumerate(zip(p, bounds, strict=True))]
    g = int(next(iter(parts))[1][chain.init])
    return [(1.0 if i == g else 0.0, 0.0) for i in range(k)]


def _given(chain: Chain, vb: VisitBounds, fwd: Forward, h: np.ndarray | None, values: np.ndarray,
           seat: np.ndarray | None, ends: tuple[float, float]) -> tuple[float, float]:
    """``E[R 1{end}] / P(end)``: the steps' rewards weighed by the chance of ending from where each goes."""
    if h is None:
        return float("nan"), INF
    c, c_abs = _weighted(chain, h, values)
    if seat is not None:
        c, c_abs = np.where(seat, c, 0.0), np.where(seat, c_abs, 0.0)
    return _given_of(chain, vb, fwd, (c, c_abs), ends)


def _weighted(chain: Chain, h: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step's reward weighed by the chance ``h`` of ending from where it goes, and its terms' magnitudes."""
    rho = np.asarray(values, np.float64)
    if rho.ndim == 1:
        rho = np.broadcast_to(rho[:, None], chain.next.shape)
    c, c_abs = np.empty(chain.n), np.empty(chain.n)
    weighted_step(chain.next, chain.pnum, 1.0 / chain.denom, rho, h, chain.structure.transient, c, c_abs)
    return c, c_abs


def _given_of(chain: Chain, vb: VisitBounds, fwd: Forward, weighted: tuple[np.ndarray, np.ndarray] | None,
              ends: tuple[float, float]) -> tuple[float, float]:
    """:func:`_given` from the weighted step ``(c, c_abs)`` of the reward (None: not solved)."""
    if weighted is None or not np.isfinite(fwd.delta(1)):
        return float("nan"), INF
    c, c_abs = weighted
    # |N c| <= max c_abs t; h is off by delta, the kernel's sums by gamma_(J + 4) of their magnitudes
    a, b = vb.total(c, float(gamma(chain.next.shape[1] + 4)), float(c_abs.max(initial=0.0)))
    b = (b + float(np.abs(vb.v) @ c_abs) * (fwd.delta(1) + float(gamma(chain.next.shape[1] + 4)))) * SLACK
    p, ep = ends
    return (a / p if p > 0 else float("nan")), ratio_bound(a, b, p, ep)
