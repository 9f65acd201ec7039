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

import numpy as np

from .absorbing import _states, _target_key, closed_classes, exact_hitting
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


def _exact_step(chain: Chain, rho: list[Fraction], s: int) -> Fraction:
    """The exact expected reward of one step from ``s``."""
    return sum((Fraction(int(chain.pnum[s, j]), int(chain.denom)) * x for j, x in enumerate(rho) if x), Fraction(0))


def _system(chain: Chain, ids: np.ndarray, pos: np.ndarray, class_of: np.ndarray):
    """``D (I - Q)`` on the transient states (FLINT integers) and the numerators of the steps into each class."""
    import flint

    a = flint.fmpz_mat(ids.size, ids.size)
    into: list[dict[int, int]] = [{} for _ in range(ids.size)]
    for i, s in enumerate(ids.tolist()):
        a[i, i] += int(chain.denom)
        for j in range(chain.next.shape[1]):
            t = int(chain.next[s, j])
            if t < 0:
                break
            p = int(chain.pnum[s, j])
            if pos[t] >= 0:
                a[i, int(pos[t])] -= p
            else:
                k = int(class_of[t])
                into[i][k] = into[i].get(k, 0) + p
    return a, into


def _checked_solve(a, b, what: str) -> list[list[Fraction]]:
    """``a x = b`` over the rationals, checked exactly; the columns of ``x`` as lists of Fractions."""
    import flint

    x = a.solve(b)
    if a * x != flint.fmpq_mat(b):
        raise ArithmeticError(f"the exact {what} solve does not check")
    return [[Fraction(int(x[i, c].p), int(x[i, c].q)) for i in range(x.nrows())] for c in range(x.ncols())]


class _Agreement:
    """The largest distance of a float figure from its exact value."""

    def __init__(self) -> None:
        self.worst = 0.0

    def __call__(self, exact: Fraction, f: Any) -> Fraction:
        if f is not None and math.isfinite(float(f)):
            self.worst = max(self.worst, abs(float(exact) - float(f)))
        return exact


def exact_figures(chain: Chain, res: Any, transient: np.ndarray, class_of: np.ndarray,
                  extra: Mapping[str, Any] | None, wanted: list[int], hits: Mapping[str, Any]) -> None:
    """Replace the float figures of ``res`` by exact ones (FLINT), checked exactly; record how far the floats were.

    ``hits`` maps each hitting figure's name to its states.
    """
    import flint

    ids = np.flatnonzero(transient)
    pos = np.full(chain.n, -1, np.int64)
    pos[ids] = np.arange(ids.size)
    agree = _Agreement()
    rho = {name: exact_branch_rewards(chain, name, extra) for name in res.rewards}
    if not transient[chain.init]:
        _at_rest(chain, res, class_of, wanted)
    else:
        a, into = _system(chain, ids, pos, class_of)
        e = flint.fmpz_mat(ids.size, 1)
        e[int(pos[chain.init]), 0] = int(chain.denom)
        vis = _checked_solve(a.transpose(), e, "adjoint")[0]
        full = [Fraction(0)] * chain.n
        for i, s in enumerate(ids.tolist()):
            full[s] = vis[i]
        res.visits_exact = full
        agree.worst = float(np.nan_to_num(np.abs(np.array([float(x) for x in full]) - res.visits), nan=np.inf).max())
        prob = [Fraction(0)] * len(res.classes)
        for i in range(ids.size):
            for k, p in into[i].items():
                prob[k] += vis[i] * Fraction(p, int(chain.denom))
        for k, p in zip(res.classes, prob, strict=True):
            k.absorption = agree(p, k.absorption)
        res.steps = agree(sum(vis, Fraction(0)), res.steps)
        rows = {name: [r[s] for s in ids.tolist()] for name, r in rho.items()}
        steps_r = {name: [_exact_step(chain, r, s) for r, s in zip(rows[name], ids.tolist(), strict=True)]
                   for name in rows}
        for name, r in res.rewards.items():
            r["total"] = agree(sum((x * y for x, y in zip(vis, steps_r[name], strict=True)), Fraction(0)), r["total"])
        _exact_conditional(a, into, vis, steps_r, res, wanted, agree)
        ones = [[Fraction(1)] * w for w in (chain.next[ids] >= 0).sum(axis=1).tolist()]
        res.moments = {"steps": exact_moments(chain, a, ids, pos, vis, ones),
                       **{name: exact_moments(chain, a, ids, pos, vis, rows[name]) for name in rows}}
    classes, _ = closed_classes(chain)
    for name, states in hits.items():
        x = exact_hitting(chain, _target_key(chain, _states(chain, states), classes, class_of))
        res.hitting[name] = agree(x, res.hitting.get(name))
    res.exact = True
    res.agreement = agree.worst
    res.solver.append({"analysis": "exact", "method": "FLINT fmpz_mat.solve, checked exactly", "residual": 0.0,
                       "iterations": 1})


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


def _exact_conditional(a, into, vis, steps_r, res, wanted: list[int], agree: _Agreement) -> None:
    """Expected steps and rewards given the class the chain ends in, for the classes ``wanted``."""
    import flint

    if not wanted:
        return
    b = flint.fmpz_mat(len(vis), len(wanted))
    col = {k: c for c, k in enumerate(wanted)}
    for i in range(len(vis)):
        for k, p in into[i].items():
            if k in col:
                b[i, col[k]] = p
    h = _checked_solve(a, b, "forward")  # D (I - Q) h = D b
    for c, k in enumerate(wanted):
        cls = res.classes[k]
        pk = cls.absorption
        cls.steps_given = agree(sum((x * y for x, y in zip(vis, h[c], strict=True)), Fraction(0)) / pk,
                                cls.steps_given)
        for name, r in res.rewards.items():
            g = sum((x * y * z for x, y, z in zip(vis, steps_r[name], h[c], strict=True)), Fraction(0)) / pk
            r["given"][cls.name] = agree(g, r["given"].get(cls.name))


def as_floats(res: Any) -> None:
    """Turn exact figures back into floats, each with the bound of its rounding (the fallback of float mode)."""
    def f(x: Any) -> tuple[float, float]:
        y = float(x)
        return y, float(abs(Fraction(y) - Fraction(x))) * (1 + 2 ** -52)

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
