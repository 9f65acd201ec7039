"""What :func:`~markov_oca.analysis.general.analyse` found, as text, JSON, HTML and pandas.

In float mode every figure carries its certified error bound (``± b`` in the text, a ``*_bound`` key
beside it in the JSON); exact figures carry none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .absorbing import Closed
from .bounds import meets
from .moments import Moment
from .results import _cell, html_table, number, pandas
from .tails import AbsorptionTime

Number = float | Fraction
SCHEMA = "markov_oca.analyse/1"
#: Up to this many states ``to_dict()`` lists the expected visits to every state.
VISITS_LISTED = 10_000


@dataclass
class AnyResults:
    """What :func:`analyse` found; ``to_dict()`` is the JSON of ``markov-oca analyse``."""

    source: str
    states: int
    transitions: int
    transient: int
    init: int | None  # the initial state (None: a distribution, :attr:`distribution`)
    exact: bool
    classes: list[Closed]
    steps: Number  # expected steps to absorption
    visits: np.ndarray  # expected visits to each state (float)
    length: AbsorptionTime | None
    rewards: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"total", "given": {class: value}}
    hitting: dict[str, Number] = field(default_factory=dict)
    visits_exact: list[Fraction] | None = None
    agreement: float | None = None  # largest |exact - float| over the figures, in exact mode
    solver: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    bounds: dict[str, float] = field(default_factory=dict)  # "steps", "hitting <name>": certified bounds (float)
    moments: dict[str, Moment] = field(default_factory=dict)  # "steps" and each reward: mean, 2nd moment, variance
    precision: float | None = None  # the relative precision every float figure was certified to
    looser: list[str] = field(default_factory=list)  # figures certified only with bounds looser than ``precision``,
    # left out of the text and the JSON (kept here, each with its bound, for the caller who asks)
    route: str | None = None  # how float figures were had when the float solve could not certify them
    only: str | None = None  # "hit" or "expected": only those figures were asked (no classes, visits or length)
    distribution: dict[int, Number] | None = None  # state -> weight, when analysed from a distribution

    @property
    def outcomes(self) -> dict[str, Number]:
        """The chance of ending in each absorbing state."""
        return {k.name: k.absorption for k in self.classes if k.kind == "absorbing"}

    @property
    def deadlock(self) -> Number:
        """The chance of ending in a closed class of more than one state (or one without a self-loop of 1)."""
        return sum((k.absorption for k in self.classes if k.kind != "absorbing"), Fraction(0) if self.exact else 0.0)

    @property
    def absorption(self) -> dict[str, Number]:
        """The chance of ending in each closed class, absorbing states and larger classes alike."""
        return {k.name: k.absorption for k in self.classes}

    @property
    def outcome_bounds(self) -> dict[str, float | None]:
        """The certified bound of each outcome's probability (float mode)."""
        return {k.name: k.bound for k in self.classes if k.kind == "absorbing"}

    @property
    def deadlock_bound(self) -> float | None:
        """The certified bound of :attr:`deadlock` (float mode)."""
        if self.exact:
            return None
        return sum((k.bound or 0.0 for k in self.classes if k.kind != "absorbing"), 0.0)

    def misses(self, precision: float | None = None) -> dict[str, float]:
        """The float figures whose certified bound misses the relative ``precision`` (default: the one asked), each
        with its bound relative to the figure (a variance's: relative to its second moment). The text and the
        JSON leave these out: a printed number is within the precision asked, or not printed."""
        prec = self.precision if precision is None else precision
        out: dict[str, float] = {}
        if self.exact or prec is None:
            return out

        def see(name: str, x: Any, bound: float | None) -> None:
            if x is not None and not meets(x, bound, prec):
                out[name] = float("inf") if bound is None or x == 0 else float(bound) / abs(float(x))

        for c in self.classes:
            see(f"P({c.name})", c.absorption, c.bound)
            see(f"steps given {c.name}", c.steps_given, c.steps_given_bound)
        if self.only != "hit" and self.steps is not None:
            see("E[steps]", self.steps, self.bounds.get("steps"))
        for name, r in self.rewards.items():
            see(f"E[{name}]", r["total"], r.get("bound"))
            for k, x in r["given"].items():
                see(f"{name} given {k}", x, r.get("given_bound", {}).get(k))
        for name, m in self.moments.items():  # a variance's bound relative to its second moment
            see(f"Var[{name}]", m.second, m.variance_bound)
        for name, h in self.hitting.items():
            see(f"P(visits {name})", h, self.bounds.get(f"hitting {name}"))
        return out

    def to_dict(self, with_pmf: bool = True) -> dict:
        d = self._base_dict(with_pmf)
        d["moments"] = {name: m.to_dict() for name, m in self.moments.items()}
        miss = self.misses()
        if miss:
            _withhold(d, miss, self)
        if not self.exact:
            d.update(outcomes_bound=self.outcome_bounds, deadlock_bound=None if self.only else self.deadlock_bound,
                     hitting_bound={k: self.bounds.get(f"hitting {k}") for k in self.hitting},
                     precision=self.precision, route=self.route, looser=list(miss))
            if self.only == "hit":
                d["expected"] = {}
                return d
            d["expected"]["steps"]["bound"] = self.bounds.get("steps")
            d["expected"]["steps"]["given_bound"] = {k.name: k.steps_given_bound for k in self.classes
                                                     if k.steps_given is not None}
            for name, r in self.rewards.items():
                d["expected"][name].update(bound=r.get("bound"), given_bound=r.get("given_bound", {}))
        return d

    def _base_dict(self, with_pmf: bool) -> dict:
        listed = self.states <= VISITS_LISTED and not self.only
        expected = {} if self.only == "hit" else {
            "steps": {"total": number(self.steps),
                      "given": {k.name: number(k.steps_given) for k in self.classes if k.steps_given is not None}},
            **{name: {"total": number(r["total"]), "given": {k: number(v) for k, v in r["given"].items()}}
               for name, r in self.rewards.items()}}
        return {
            "schema": SCHEMA,
            "source": self.source,
            "chain": {"states": self.states, "transitions": self.transitions, "transient": self.transient,
                      "init": self.init,
                      **({} if self.distribution is None else
                         {"initial_distribution": [{"state": s, "weight": number(w)}
                                                   for s, w in self.distribution.items()]})},
            "exact": self.exact,
            "outcomes": {k: number(v) for k, v in self.outcomes.items()},
            "deadlock": None if self.only else number(self.deadlock),
            "classes": [k.to_dict() for k in self.classes],
            "expected": expected,
            "visits": ([number(x) for x in self.visits_exact] if self.visits_exact is not None
                       else self.visits.tolist()) if listed else None,
            "length": None if self.length is None else self.length.to_dict(with_pmf),
            "hitting": {k: number(v) for k, v in self.hitting.items()},
            "agreement": self.agreement,
            "solver": self.solver,
            "notes": list(self.notes),
            "timings": self.timings,
            **({"only": self.only} if self.only else {}),
        }

    def _rows(self) -> list[tuple[str, str]]:
        miss = self.misses()

        def show(name: str, x: Any, bound: float | None) -> str:
            return _fmt(x, bound) if name not in miss else _left_out(miss[name])

        rows = [("states", f"{self.states:,} ({self.transient:,} transient), {self.transitions:,} transitions"),
                ("initial state", str(self.init)) if self.distribution is None else
                ("initial distribution", _weights(self.distribution))]
        for k in self.classes[:50]:
            size = "" if k.kind == "absorbing" else f" ({k.states.size} states)"
            given = "" if k.steps_given is None or f"steps given {k.name}" in miss else \
                f", {_fmt(k.steps_given, k.steps_given_bound)} steps given it"
            rows.append((f"ends in {k.name}{size}", f"{show(f'P({k.name})', k.absorption, k.bound)}{given}"))
        if len(self.classes) > 50:
            rows.append(("...", f"{len(self.classes) - 50} more closed classes"))
        if self.steps is not None:
            rows.append(("expected steps to absorption", show("E[steps]", self.steps, self.bounds.get("steps"))))
        for name, r in self.rewards.items():
            rows.append((f"expected {name}", show(f"E[{name}]", r["total"], r.get("bound"))))
        for name, m in self.moments.items():
            rows.append((f"variance of {name}", show(f"Var[{name}]", m.variance, m.variance_bound)))
        if self.length is not None:
            rows.append(("absorption time: median, p90, p99", self.length.text()))
        for name, h in self.hitting.items():
            rows.append((f"ever visits {name}", show(f"P(visits {name})", h, self.bounds.get(f"hitting {name}"))))
        worst = max((s["residual"] for s in self.solver if s["residual"] is not None), default=0.0)
        rows.append(("largest residual", f"{worst:.2g}"))
        if self.agreement is not None:
            rows.append(("exact vs float", f"{self.agreement:.2g}"))
        if self.precision is not None and not self.exact:
            rows.append(("bounds", f"certified, each within {self.precision:g} relative" +
                         (f" ({self.route})" if self.route else "") +
                         (f"; left out, certified only more loosely: {', '.join(list(miss)[:3])}"
                          f"{' and more' if len(miss) > 3 else ''}" if miss else "")))
        return rows

    def text(self) -> str:
        """The report for reading in a terminal."""
        rows = self._rows()
        w = max(len(a) for a, _ in rows)
        lines = [f"{self.source}: {'exact' if self.exact else 'floating point'}"]
        lines += [f"  {a:<{w}}  {b}" for a, b in rows]
        lines += [f"  note: {x}" for x in self.notes]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return html_table(f"{self.source} ({'exact' if self.exact else 'floating point'})", self._rows())

    def to_frame(self, what: str = "classes"):
        """A pandas DataFrame: one row per closed class (``"classes"``) or per state (``"states"``)."""
        pd = pandas()
        if what == "classes":
            return pd.DataFrame([{"class": k.name, "kind": k.kind, "size": int(k.states.size),
                                  "absorption": k.absorption, "steps_given": k.steps_given}
                                 for k in self.classes]).set_index("class")
        if what == "states":
            return pd.DataFrame({"visits": self.visits}, index=pd.RangeIndex(self.states, name="state"))
        raise ValueError(f"to_frame: what is 'classes' or 'states', not {what!r}")


def _weights(dist: dict[int, Number]) -> str:
    """A distribution as the report shows it: ``state (weight)``, the first ten."""
    shown = ", ".join(f"{s} ({_cell(w)})" for s, w in list(dist.items())[:10])
    return shown + (f", ... ({len(dist)} states)" if len(dist) > 10 else "")


def _left_out(rel: float) -> str:
    """What stands in for a figure certified only more loosely than asked: its bound and what would give it."""
    if not np.isfinite(rel):
        return "left out: no certified bound"
    if rel >= 1:
        return "left out: its certified bound is as large as itself"
    ask = 10.0 ** np.ceil(np.log10(rel)) if rel > 0 else rel
    return f"left out: certified within {rel:.2g} relative only (--precision {ask:g} gives it)"


def _withhold(d: dict, miss: dict[str, float], res: AnyResults) -> None:
    """Null, in the JSON ``d``, every figure named in ``miss``."""
    for k in d["classes"]:
        if f"P({k['name']})" in miss:
            k["absorption"] = None
        if f"steps given {k['name']}" in miss:
            k["steps_given"] = None
    for name in d["outcomes"]:
        if f"P({name})" in miss:
            d["outcomes"][name] = None
    if d.get("deadlock") is not None and any(f"P({k.name})" in miss for k in res.classes if k.kind != "absorbing") \
            and not meets(res.deadlock, res.deadlock_bound, res.precision):
        d["deadlock"] = None
    for name, e in d["expected"].items():
        if f"E[{name}]" in miss:
            e["total"] = None
            if name in d["moments"]:
                d["moments"][name]["mean"] = None
        for k in list(e.get("given", {})):
            if (f"steps given {k}" if name == "steps" else f"{name} given {k}") in miss:
                e["given"][k] = None
    for name, m in d["moments"].items():
        if f"Var[{name}]" in miss:
            m["variance"] = m["second_moment"] = None
    for name in d["hitting"]:
        if f"P(visits {name})" in miss:
            d["hitting"][name] = None


def _fmt(x: Any, bound: float | None = None) -> str:
    if bound is None or isinstance(x, Fraction):
        return _cell(x)
    return f"{_cell(x)} ± {bound:.2g}"
