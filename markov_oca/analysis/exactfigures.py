"""The exact figures of :func:`~markov_oca.analysis.general.analyse`: every float figure solved again over the
rationals with FLINT and checked exactly, with the float figures' distance from them recorded.

Used in exact mode, and as the sound route of float mode when a float figure's bound cannot be
certified under the precision asked (a float chain's probabilities are rationals over ``2**53``:
the exact answer is that of the chain as given). :func:`as_floats` turns the exact figures back
into floats, each with the bound of its one rounding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import flint
import numpy as np

from ..rational.blocks import BlockSolver, dot
from .absorbing import _states, _target_key, closed_classes, exact_hitting, integer_system
from .bounds import rounded
from .chain import Chain
from .moments import exact_moments


def _fraction(x: Any, integral: bool) -> Fraction:
    return Fraction(int(x)) if integral else Fraction(float(x))


def exact_branch_rewards(chain: Chain, name: str, extra: Mapping[str, Any] | None) -> list[list[Fraction]]:
    """The exact reward of each branch of each state (a per-state reward repeated on its branches)."""
    widths = (chain.next >= 0).sum(axis=1).tolist()
    if extra and name in extra:
        return [[Fraction(x)] * w for x, w in zip(extra[name], widths, strict=True)]
    exact_rewards = getattr(chain, "exact_rewards", {})
    if name in exact_rewards:
        return [[x] * w for x, w in zip(exact_rewards[name], widths, strict=True)]
    if name in chain.state_rewards:
        v = np.asarray(chain.state_rewards[name])
        return [[_fraction(x, v.dtype.kind in "biu")] * w for x, w in zip(v.tolist(), widths, strict=True)]
    v = np.asarray(chain.branch_rewards[name])
    return [[_fraction(x, v.dtype.kind in "biu") for x in v[s, :w].tolist()] for s, w in enumerate(widths)]


def exact_step_rewards(chain: Chain, ids: np.ndarray, rho: list[list[Fraction]]) -> list[Any]:
    """The exact expected reward of one step from each state of ``ids`` (FLINT rationals); ``rho[i]`` are the
    rewards of the branches of ``ids[i]``."""
    d = int(chain.denom)
    out = []
    for i, s in enumerate(ids.tolist()):
        acc = flint.fmpq(0)
        for j, x in enumerate(rho[i]):
            if x:
                acc += flint.fmpq(int(chain.pnum[s, j]), d) * _q(x)
        out.append(acc)
    return out


def _q(x: Any) -> flint.fmpq:
    return x if isinstance(x, flint.fmpq) else flint.fmpq(x.numerator, x.denominator)


def _fr(x: flint.fmpq) -> Fraction:
    return Fraction(int(x.p), int(x.q))


class _Agreement:
    """The largest distance of a float figure from its exact value."""

    def __init__(self) -> None:
        self.worst = 0.0

    def __call__(self, exact: Any, f: Any) -> Fraction:
        exact = _fr(exact) if isinstance(exact, flint.fmpq) else exact
        if f is not None and math.isfinite(float(f)):
            self.worst = max(self.worst, abs(float(exact) - float(f)))
        return exact


def exact_figures(chain: Chain, res: Any, transient: np.ndarray, class_of: np.ndarray,
                  extra: Mapping[str, Any] | None, wanted: list[int], hits: Mapping[str, Any],
                  shared: dict | None = None) -> None:
    """Replace the float figures of ``res`` by exact ones, checked exactly; record how far the floats were.

    The systems are solved by strongly connected components in topological order
    (:class:`~markov_oca.rational.blocks.BlockSolver`): one adjoint solve for the visits, one
    forward solve for the conditional columns and every reward's mean from each state.
    ``hits`` maps each hitting figure's name to its states. ``shared`` (a dict kept across calls on the same
    chain from other initial states) keeps the system, its solvers and the forward solves to reuse.
    """
    ids = np.flatnonzero(transient)
    pos = np.full(chain.n, -1, np.int64)
    pos[ids] = np.arange(ids.size)
    agree = _Agreement()
    rho = {name: exact_branch_rewards(chain, name, extra) for name in res.rewards}
    solver = None
    if not transient[chain.init]:
        _at_rest(chain, res, class_of, wanted)
    else:
        shared = {} if shared is None else shared
        if "system" not in shared:
            a, into = integer_system(chain, ids, pos, class_of, len(res.classes))
            shared["system"] = (into, BlockSolver(a))
            shared["adjoint"] = shared["system"][1].transpose()
        into, solver = shared["system"]
        d = int(chain.denom)
        e = [0] * ids.size
        e[int(pos[chain.init])] = d
        vis = shared["adjoint"].solve([e])[0]
        full = [Fraction(0)] * chain.n
        for i, s in enumerate(ids.tolist()):
            full[s] = _fr(vis[i])
        res.visits_exact = full
        agree.worst = float(np.nan_to_num(np.abs(np.array([float(x) for x in full]) - res.visits), nan=np.inf).max())
        terms: list[list[Any]] = [[] for _ in res.classes]
        into_coo = into.tocoo()
        for i, k, p in zip(into_coo.row.tolist(), into_coo.col.tolist(), into_coo.data.tolist(), strict=True):
            terms[k].append(vis[i] * int(p))
        prob = [sum(t, flint.fmpq(0)) / d for t in terms]
        for k, p in zip(res.classes, prob, strict=True):
            k.absorption = agree(p, k.absorption)
        ones = [[Fraction(1)] * w for w in (chain.next[ids] >= 0).sum(axis=1).tolist()]
        rows = {"steps": ones, **{name: [r[s] for s in ids.tolist()] for name, r in rho.items()}}
        steps_r = {name: exact_step_rewards(chain, ids, r) for name, r in rows.items()}
        intos = into.tocsc()
        cols = [[int(x) for x in intos[:, [k]].toarray().ravel().tolist()] for k in wanted]
        cols += [[x * d for x in r] for r in steps_r.values()]
        key = ("forward", tuple(wanted), tuple(steps_r))
        sol = shared[key] = shared[key] if key in shared else solver.solve(cols)
        h, g = sol[:len(wanted)], dict(zip(steps_r, sol[len(wanted):], strict=True))
        res.steps = agree(dot(vis, steps_r["steps"]), res.steps)
        for name, r in res.rewards.items():
            r["total"] = agree(dot(vis, steps_r[name]), r["total"])
        _exact_conditional(h, vis, steps_r, res, wanted, agree)
        res.moments = {name: exact_moments(chain, ids, pos, vis, rows[name], steps_r[name], g[name])
                       for name in rows}
    classes, _ = closed_classes(chain)
    for name, states in hits.items():
        x = exact_hitting(chain, _target_key(chain, _states(chain, states), classes, class_of))
        res.hitting[name] = agree(x, res.hitting.get(name))
    res.exact = True
    res.agreement = agree.worst
    how = "FLINT, checked exactly"
    if solver is not None:
        how = (f"strongly connected components in topological order ({solver.components:,}, the largest of "
               f"{solver.largest:,} states): one state by substitution, more by FLINT; checked exactly")
    res.solver.append({"analysis": "exact", "method": how, "residual": 0.0, "iterations": 1})


def _at_rest(chain: Chain, res: Any, class_of: np.ndarray, wanted: list[int]) -> None:
    """The figures of a chain that starts in a closed class."""
    from .moments import Moment

    for c, k in enumerate(res.classes):
        k.absorption = Fraction(int(class_of[chain.init] == c))
    res.steps = Fraction(0)
    res.visits_exact = [Fraction(0)] * chain.n
    for r in res.rewards.values():
        r["total"] = Fraction(0)
        r["given"] = {k: Fraction(0) for k in r["given"]}
    if wanted:
        res.classes[wanted[0]].steps_given = Fraction(0)
    res.moments = {name: Moment(Fraction(0), Fraction(0)) for name in ["steps", *res.rewards]}


def _exact_conditional(h, vis, steps_r, res, wanted: list[int], agree: _Agreement) -> None:
    """Expected steps and rewards given the class the chain ends in, for the classes ``wanted`` (``h``: the
    chance of ending in each from every transient state)."""
    for c, k in enumerate(wanted):
        cls = res.classes[k]
        pk = _q(cls.absorption)
        cls.steps_given = agree(dot(vis, h[c]) / pk, cls.steps_given)
        for name, r in res.rewards.items():
            g = dot(vis, [x * y for x, y in zip(steps_r[name], h[c], strict=True)]) / pk
            r["given"][cls.name] = agree(g, r["given"].get(cls.name))


def as_floats(res: Any) -> None:
    """Turn exact figures back into floats, each with the bound of its rounding (the fallback of float mode)."""
    f = rounded
    for k in res.classes:
        k.absorption, k.bound = f(k.absorption)
        if k.steps_given is not None:
            k.steps_given, k.steps_given_bound = f(k.steps_given)
    res.steps, res.bounds["steps"] = f(res.steps)
    for r in res.rewards.values():
        r["total"], r["bound"] = f(r["total"])
        pairs = {k: f(v) for k, v in r["given"].items()}
        r["given"] = {k: x for k, (x, _) in pairs.items()}
        r["given_bound"] = {k: b for k, (_, b) in pairs.items()}
    for name, x in list(res.hitting.items()):
        res.hitting[name], res.bounds[f"hitting {name}"] = f(x)
    for m in res.moments.values():
        m.mean, m.mean_bound = f(m.mean)
        m.second, m.second_bound = f(m.second)
    res.visits = np.array([float(x) for x in res.visits_exact])
    res.visits_exact = None
    res.exact = False
