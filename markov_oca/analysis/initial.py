"""Where an analysis starts: one initial state, each of several, or a distribution over states.

A chain read from a file may have several initial states (every state labelled ``init``: PRISM's
``init ... endinit``, Storm's DRN, UMB). :func:`starts` turns what the caller asks for into the
states to analyse from and, for a distribution, their weights; :class:`InitialResults` holds one
:class:`~markov_oca.analysis.anyresults.AnyResults` per initial state; :func:`mix` makes the figures
of a distribution from those of the states it weighs: a probability or an expectation is the
weighted sum (its bound too), a second moment likewise (so the variance is that of the mixture),
a figure given the class the chain ends in is the ratio of weighted sums, and the absorption-time
distribution is the weighted sum of the pushed ones, which is the distribution pushed from the
weights (the push is linear), up to the shortest horizon among them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..linalg.certify import SLACK, gamma
from .absorbing import Closed
from .anyresults import SCHEMA, AnyResults
from .bounds import ratio_bound
from .build import ChainError
from .chain import Chain
from .moments import Moment
from .results import html_table
from .tails import AbsorptionTime, _quantile

Number = float | Fraction
#: How far from 1 the weights of a distribution may sum in float mode (in exact mode: not at all).
WEIGHT_TOL = 1e-9


@dataclass
class Start:
    """The states an analysis starts from and, for a distribution, their weights (None: each on its own)."""

    states: list[int]
    weights: list[Number] | None = None


def initial_states(chain: Chain) -> list[int]:
    """The chain's initial states: those labelled ``init`` when ``chain.init`` is one of them, else ``chain.init``.

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> initial_states(from_matrix([[1, 0], [0, 1]], init=1, labels={"init": [0, 1]}))
    [0, 1]
    >>> initial_states(from_matrix([[1, 0], [0, 1]], init=1))
    [1]
    """
    init = np.asarray(getattr(chain, "labels", {}).get("init", np.zeros(0, np.int64)))
    if init.size > 1 and int(chain.init) in init.tolist():
        return [int(s) for s in init.tolist()]
    return [int(chain.init)]


def starts(chain: Chain, init: Any, exact: bool) -> Start:
    """What ``init`` asks for, checked against the chain.

    Parameters
    ----------
    chain : Chain
    init : None, int, str or mapping
        None: each of the chain's initial states (:func:`initial_states`); a state number; a label
        (each state carrying it); ``"uniform"``: the uniform distribution over the chain's initial
        states; a mapping state -> weight (weights at least 0 that sum to 1: exactly in exact mode).
    exact : bool
        Whether weights must sum to exactly 1 (they are then kept as fractions).

    Returns
    -------
    Start

    Raises
    ------
    ChainError
        A state that is not one, a label no state carries, a negative weight or weights that do not
        sum to 1.

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> c = from_matrix([[1, 0, 0], [0, 1, 0], [0, 0, 1]], init=0, labels={"init": [0, 2], "far": [2]})
    >>> starts(c, None, True).states, starts(c, "far", True).states
    ([0, 2], [2])
    >>> starts(c, "uniform", True).weights
    [Fraction(1, 2), Fraction(1, 2)]
    """
    src = getattr(chain, "source", "chain")
    if init is None:
        return Start(initial_states(chain))
    if isinstance(init, str) and init == "uniform":
        states = initial_states(chain)
        w = Fraction(1, len(states))
        return Start(states, [w if exact else float(w)] * len(states))
    if isinstance(init, str):
        if init.strip().isdigit():
            return Start([_state(chain, int(init), src)])
        labels = getattr(chain, "labels", {})
        if init not in labels or not np.asarray(labels[init]).size:
            known = ", ".join(sorted(labels)[:8]) or "none"
            raise ChainError(f"initial state {init!r} is neither a state number (0..{chain.n - 1}) nor a label "
                             f"(labels: {known})", source=src, key="init")
        return Start([int(s) for s in np.asarray(labels[init]).tolist()])
    if isinstance(init, Mapping):
        return distribution(chain, init, exact, src)
    if isinstance(init, bool) or not isinstance(init, (int, np.integer)):
        raise ChainError(f"initial state {init!r}: a state number, a label, 'uniform' or a mapping state -> weight",
                         source=src, key="init")
    return Start([_state(chain, int(init), src)])


def _state(chain: Chain, s: int, src: str) -> int:
    if not 0 <= s < chain.n:
        raise ChainError(f"initial state {s} is not a state (0..{chain.n - 1})", source=src, key="init")
    return s


def distribution(chain: Chain, init: Mapping[Any, Any], exact: bool, src: str) -> Start:
    """A mapping state -> weight, checked: states of the chain, weights at least 0 summing to 1 (exactly when
    ``exact``); errors name ``src``.

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> distribution(from_matrix([[1, 0], [0, 1]], init=0), {0: "1/3", 1: "2/3"}, True, "start.txt").weights
    [Fraction(1, 3), Fraction(2, 3)]
    """
    states, weights = [], []
    for s, w in init.items():
        state = _state(chain, _integer(s, src), src)
        try:
            q = Fraction(w)
        except (TypeError, ValueError, ZeroDivisionError):
            raise ChainError(f"initial distribution: state {state} has weight {w!r}, not a number", source=src,
                             key="init") from None
        if q < 0:
            raise ChainError(f"initial distribution: state {state} has a negative weight {w}", source=src,
                             key="init")
        if q > 0:
            states.append(state)
            weights.append(q)
    if len(set(states)) != len(states):
        raise ChainError("initial distribution: a state is given twice", source=src, key="init")
    total = sum(weights, Fraction(0))
    if total != 1 and (exact or abs(float(total) - 1.0) > WEIGHT_TOL):
        raise ChainError(f"initial distribution: the weights sum to {float(total):.12g}, not 1"
                         + (" (exactly, in exact mode)" if exact and abs(float(total) - 1.0) <= WEIGHT_TOL else ""),
                         source=src, key="init")
    return Start(states, weights if exact else [float(w) for w in weights])


def _integer(s: Any, src: str) -> int:
    if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
        return int(s)
    if isinstance(s, str) and s.strip().isdigit():
        return int(s)
    raise ChainError(f"initial distribution: {s!r} is not a state number", source=src, key="init")


# ----------------------------------------------------------------------------- several initial states

@dataclass
class InitialResults:
    """One :class:`AnyResults` per initial state, in the order of the states; ``to_dict()`` is the JSON."""

    results: list[AnyResults]

    @property
    def states(self) -> list[int]:
        return [r.init for r in self.results]

    @property
    def source(self) -> str:
        return self.results[0].source

    @property
    def exact(self) -> bool:
        return all(r.exact for r in self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, state: int) -> AnyResults:
        """The results from ``state`` (a state number, not a position)."""
        for r in self.results:
            if r.init == state:
                return r
        raise KeyError(state)

    def to_dict(self, with_pmf: bool = True) -> dict:
        """The JSON: the chain once, then ``initial``, the single-state JSON from each initial state."""
        first = self.results[0]
        return {"schema": SCHEMA, "source": self.source,
                "chain": {"states": first.states, "transitions": first.transitions, "transient": first.transient,
                          "init": self.states},
                "exact": self.exact, "initial": [r.to_dict(with_pmf) for r in self.results],
                "notes": list(first.notes)}

    def text(self) -> str:
        """A section per initial state, the notes once at the end."""
        first = self.results[0]
        lines = [f"{self.source}: {'exact' if self.exact else 'floating point'}, {len(self)} initial states "
                 f"({', '.join(map(str, self.states[:10]))}{', ...' if len(self) > 10 else ''}); "
                 f"{first.states:,} states ({first.transient:,} transient), {first.transitions:,} transitions"]
        for r in self.results:
            rows = [(a, b) for a, b in r._rows() if a not in ("states", "initial state")]
            w = max(len(a) for a, _ in rows)
            lines.append(f"from state {r.init}:")
            lines += [f"  {a:<{w}}  {b}" for a, b in rows]
        lines += [f"  note: {x}" for x in first.notes]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return "".join(html_table(f"{self.source}, from state {r.init}", r._rows()) for r in self.results)


# ----------------------------------------------------------------------------- a distribution

def _wsum(xs: list[Any], ws: list[Number], exact: bool) -> Any:
    """``sum w x``, or None when any ``x`` is None."""
    if any(x is None for x in xs):
        return None
    return sum((w * x for w, x in zip(ws, xs, strict=True)), Fraction(0) if exact else 0.0)


def _wbound(bs: list[float | None], ws: list[Number]) -> float | None:
    """The bound of a weighted sum: the weighted sum of the bounds."""
    if any(b is None for b in bs):
        return None
    return float(sum(float(w) * b for w, b in zip(ws, bs, strict=True))) * SLACK


def _ratio(ps, pbs, gs, gbs, ws, exact: bool) -> tuple[Any, float | None] | None:
    """``sum w p g / sum w p`` (a figure given the class from each start), with its bound; None when a start
    that ends in the class has no such figure."""
    on = [i for i, p in enumerate(ps) if p]
    if not on or any(gs[i] is None for i in on):
        return None
    a = sum((ws[i] * ps[i] * gs[i] for i in on), Fraction(0) if exact else 0.0)
    p = sum((ws[i] * ps[i] for i in on), Fraction(0) if exact else 0.0)
    if exact:
        return a / p, None
    if any(pbs[i] is None or gbs[i] is None for i in on):
        return float(a / p), None
    ea = sum(float(ws[i]) * (abs(ps[i]) * gbs[i] + abs(gs[i]) * pbs[i] + pbs[i] * gbs[i]) for i in on) * SLACK
    ep = sum(float(ws[i]) * pbs[i] for i in on) * SLACK
    return float(a / p), ratio_bound(float(a), ea, float(p), ep)


class Visits:
    """The weighted sum of the visits from each start, added up as the starts are analysed (so that the
    visits from one start at a time are held): float, and exact while every start has them exactly."""

    def __init__(self, n: int):
        self.float = np.zeros(n)
        self.exact: list[Fraction] | None = [Fraction(0)] * n

    def add(self, w: Number, r: AnyResults) -> None:
        """Add ``w`` times the visits of ``r``, then drop them from ``r``."""
        self.float += float(w) * r.visits
        if self.exact is not None and r.visits_exact is not None and isinstance(w, Fraction):
            self.exact = [a + w * b for a, b in zip(self.exact, r.visits_exact, strict=True)]
        else:
            self.exact = None
        r.visits, r.visits_exact = np.zeros(0), None


def mix(results: list[AnyResults], start: Start, chain: Chain, visits: Visits | None = None) -> AnyResults:
    """The figures from the distribution ``start`` out of those from each of its states (in the same order);
    ``visits``, when given, holds their weighted visits already (see :class:`Visits`).

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from markov_oca import from_matrix, analyse
    >>> h = F(1, 2)
    >>> c = from_matrix([[1, 0, 0, 0], [h, 0, h, 0], [0, h, 0, h], [0, 0, 0, 1]], init=1)
    >>> analyse(c, init={1: h, 2: h}).outcomes
    {'state 0': Fraction(1, 2), 'state 3': Fraction(1, 2)}
    """
    ws = start.weights
    first = results[0]
    exact = all(r.exact for r in results)
    if not exact:
        ws = [float(w) for w in ws]
    if visits is None:
        visits = Visits(first.states)
        for w, r in zip(start.weights, results, strict=True):
            visits.add(w, r)
    out = AnyResults(source=first.source, states=first.states, transitions=first.transitions,
                     transient=first.transient, init=None, exact=exact, classes=[], steps=0.0, visits=visits.float,
                     length=None, notes=list(first.notes), precision=first.precision,
                     distribution=dict(zip(start.states, start.weights, strict=True)))
    out.classes = [_mix_class(k, [r.classes[k] for r in results], ws, exact) for k in range(len(first.classes))]
    out.steps = _wsum([r.steps for r in results], ws, exact)
    if not exact:
        out.bounds["steps"] = _wbound([r.bounds.get("steps") for r in results], ws)
    out.visits_exact = visits.exact if exact else None
    out.moments = {name: Moment(_wsum([r.moments[name].mean for r in results], ws, exact),
                                _wsum([r.moments[name].second for r in results], ws, exact),
                                None if exact else _wbound([r.moments[name].mean_bound for r in results], ws),
                                None if exact else _wbound([r.moments[name].second_bound for r in results], ws))
                   for name in first.moments}
    out.rewards = {name: _mix_reward(name, results, ws, exact) for name in first.rewards}
    for name in first.hitting:
        out.hitting[name] = _wsum([r.hitting[name] for r in results], ws, exact)
        if not exact:
            out.bounds[f"hitting {name}"] = _wbound([r.bounds.get(f"hitting {name}") for r in results], ws)
    agreements = [r.agreement for r in results if r.agreement is not None]
    out.agreement = max(agreements) if agreements else None
    out.solver = [{**rep, "initial": r.init} for r in results for rep in r.solver]
    for r in results:
        for key, t in r.timings.items():
            out.timings[key] = out.timings.get(key, 0.0) + t
    routes = list(dict.fromkeys(r.route for r in results if r.route))
    out.route = "; ".join(routes) or None
    out.length = _mix_length([r.length for r in results], [float(w) for w in ws], chain)
    return out


def _mix_class(k: int, cs: list[Closed], ws: list[Number], exact: bool) -> Closed:
    c0 = cs[0]
    ps = [c.absorption for c in cs]
    out = Closed(c0.name, c0.kind, c0.states, absorption=_wsum(ps, ws, exact),
                 bound=None if exact else _wbound([c.bound for c in cs], ws))
    given = _ratio(ps, [c.bound for c in cs], [c.steps_given for c in cs], [c.steps_given_bound for c in cs], ws,
                   exact)
    if given is not None:
        out.steps_given, out.steps_given_bound = given
    return out


def _mix_reward(name: str, results: list[AnyResults], ws: list[Number], exact: bool) -> dict[str, Any]:
    rs = [r.rewards[name] for r in results]
    out: dict[str, Any] = {"total": _wsum([r["total"] for r in rs], ws, exact), "given": {}, "given_bound": {}}
    if not exact:
        out["bound"] = _wbound([r.get("bound") for r in rs], ws)
    for k, cls in enumerate(results[0].classes):
        cs = [r.classes[k] for r in results]
        got = _ratio([c.absorption for c in cs], [c.bound for c in cs], [r["given"].get(cls.name) for r in rs],
                     [r.get("given_bound", {}).get(cls.name) for r in rs], ws, exact)
        if got is not None:
            out["given"][cls.name] = got[0]
            if not exact:
                out["given_bound"][cls.name] = got[1]
    return out


def _mix_length(lengths: list[AbsorptionTime | None], ws: list[float], chain: Chain) -> AbsorptionTime | None:
    """The weighted pmf up to the shortest horizon; the mass beyond it is what is left."""
    if any(x is None for x in lengths):
        return None
    h = min(x.horizon for x in lengths)
    pmf = sum(w * np.asarray(x.pmf[:h + 1], np.float64) for w, x in zip(ws, lengths, strict=True))
    left = sum(w * (x.tail_mass + float(np.sum(x.pmf[h + 1:]))) for w, x in zip(ws, lengths, strict=True))
    eps = max(x.error for x in lengths) + float(gamma(h + 1)) + 4 * len(ws) * 2 ** -53
    pushed = min(x.horizon if x.pushed is None else x.pushed for x in lengths)
    res = AbsorptionTime(pmf.tolist(), None, None, None, None, float(left), horizon=h, brackets={},
                         pushed=min(pushed, h), error=eps)
    cdf = np.cumsum(pmf)
    for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99)):
        lo, hi = _quantile(cdf + eps, q), _quantile(cdf - eps, q)
        if lo is not None and hi is not None:
            res.brackets[name] = (float(lo), float(hi))
            setattr(res, name, float(_quantile(cdf, q)))
    return res
