"""Every question one asks of an absorbing chain, answered from one adjoint solve, each with its residual.

The chain's states split into transient states and closed classes (strongly
connected components that no transition leaves): an absorbing state is a
closed class of one state, a larger one is what a game calls a deadlock. From
the initial state ``i``, the expected number of visits to each transient state
is the row ``v = e_i N`` of the fundamental matrix ``N = (I - Q)^-1``, which is
one solve of the adjoint system ``(I - Q)^T v = e_i``. That one row answers
most of the rest:

- the chance of ending in each closed class: ``v R`` (``R`` the branches that leave
  the transient states), for any number of classes at once;
- the expected number of steps to absorption, ``sum(v)``, and the expected total of
  any per-state reward ``r``, ``v . r`` (earned at each step taken from a transient
  state, as Storm's ``R=? [F absorbed]`` counts it).

Given the class the chain ends in, an expectation needs that class's absorption
probabilities ``h_k`` from every state (``E[T 1{k}] = v . h_k``): one forward solve
with a column per class, for the ``conditional`` most likely classes. The
distribution of the absorption time comes from pushing the initial distribution
through ``Q`` until less than ``tail`` is left; hitting probabilities of a set of
states are a solve of their own (:func:`hitting_probability`). In exact mode
(rational entries, at most :data:`markov_oca.exact.EXACT_LIMIT` transient states)
the same quantities are solved again over the rationals with FLINT and checked
exactly; the float figures are kept beside them to report their agreement.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

from ..analysis.results import _cell, html_table, number, pandas
from ..core.errors import SolverError, TooLargeError
from ..linalg.hitting import hitting_block
from ..linalg.solve import DIRECT_LIMIT, adjoint_solve
from .build import AnyChain, ChainError
from .chain import Chain
from .exact import EXACT_LIMIT, ExactChain

Number = float | Fraction
SCHEMA = "markov_oca.analyse/1"
#: Up to this many states ``to_dict()`` lists the expected visits to every state.
VISITS_LISTED = 10_000


# ----------------------------------------------------------------------------- structure


@dataclass
class Closed:
    """A closed class: an absorbing state (``size`` 1, an outcome) or a larger class (a deadlock)."""

    name: str
    kind: str  # "absorbing" or "closed class"
    states: np.ndarray
    absorption: Number = 0.0
    steps_given: Number | None = None  # expected steps, given that the chain ends here

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "size": int(self.states.size),
                "states": self.states[:20].tolist(), "absorption": number(self.absorption),
                "steps_given": None if self.steps_given is None else number(self.steps_given)}


def closed_classes(chain: Chain) -> tuple[list[Closed], np.ndarray]:
    """The closed classes of a chain, and the class of each state (-1 for a transient one).

    Example
    -------
    >>> from markov_oca import from_matrix
    >>> c = from_matrix([[0.5, 0.25, 0.25, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], init=0)
    >>> classes, of = closed_classes(c)
    >>> [(k.name, k.kind, k.states.tolist()) for k in classes], of.tolist()
    ([('state 1', 'absorbing', [1]), ('closed class 1', 'closed class', [2, 3])], [-1, 0, 1, 1])
    """
    P = chain.P
    n_comp, label = connected_components(P, directed=True, connection="strong")
    coo = P.tocoo()
    leaves = np.zeros(n_comp, bool)
    out = label[coo.row] != label[coo.col]
    leaves[label[coo.row[out]]] = True
    closed = np.flatnonzero(~leaves)
    # classes in the order of their smallest state
    members = np.argsort(label, kind="stable")
    starts = np.searchsorted(label[members], np.arange(n_comp + 1))
    closed = closed[np.argsort([members[starts[c]] for c in closed], kind="stable")]
    outcome_of = {s: k for k, s in chain.outcomes.items()}
    classes: list[Closed] = []
    of = np.full(chain.n, -1, np.int64)
    dead = 0
    for c in closed.tolist():
        states = np.sort(members[starts[c]:starts[c + 1]])
        if states.size == 1 and int(states[0]) in outcome_of:
            classes.append(Closed(outcome_of[int(states[0])], "absorbing", states))
        else:
            dead += 1
            classes.append(Closed(f"closed class {dead}", "closed class", states))
        of[states] = len(classes) - 1
    return classes, of


# ----------------------------------------------------------------------------- kernels


@numba.njit(cache=True)
def _into_classes(nxt, pnum, inv_denom, v, class_of, out):
    """``out[k] += v[s] P(s -> class k)`` over the transient states ``s`` (class_of[s] < 0)."""
    for s in range(nxt.shape[0]):
        m = v[s]
        if m == 0.0 or class_of[s] >= 0:
            continue
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                break
            k = class_of[t]
            if k >= 0:
                out[k] += m * pnum[s, j] * inv_denom


@numba.njit(cache=True)
def _absorption_times(nxt, pnum, inv_denom, transient, init, tail, max_steps):
    """P(absorbed on step t) for t = 0, 1, ..., until less than ``tail`` is left; and what is left."""
    n = nxt.shape[0]
    pmf = np.zeros(1024)
    if not transient[init]:
        pmf[0] = 1.0
        return pmf[:1].copy(), 0.0
    v = np.zeros(n)
    w = np.zeros(n)
    v[init] = 1.0
    left = 1.0
    t = 0
    while t < max_steps and left >= tail:
        t += 1
        absorbed = 0.0
        for s in range(n):
            m = v[s]
            if m == 0.0:
                continue
            v[s] = 0.0
            for j in range(nxt.shape[1]):
                u = nxt[s, j]
                if u < 0:
                    break
                q = m * pnum[s, j] * inv_denom
                if transient[u]:
                    w[u] += q
                else:
                    absorbed += q
        if t >= pmf.size:
            bigger = np.zeros(pmf.size * 2)
            bigger[:pmf.size] = pmf
            pmf = bigger
        pmf[t] = absorbed
        left = 0.0
        for s in range(n):
            left += w[s]
        v, w = w, v
    return pmf[:t + 1].copy(), left


# ----------------------------------------------------------------------------- solves


def _q_transient(chain: Chain, ids: np.ndarray, pos: np.ndarray) -> sp.csr_array:
    """``Q`` restricted to the transient states ``ids`` (local numbering ``pos``), duplicates summed."""
    nxt = chain.next[ids]
    valid = nxt >= 0
    local = np.where(valid, pos[np.maximum(nxt, 0)], -1)
    keep = local >= 0
    rows = np.broadcast_to(np.arange(ids.size)[:, None], nxt.shape)[keep]
    vals = chain.pnum[ids][keep] / chain.denom
    return sp.csr_array((vals, (rows, local[keep])), shape=(ids.size, ids.size))


def expected_visits(chain: Chain, transient: np.ndarray | None = None) -> tuple[np.ndarray, dict]:
    """Expected visits to every state from ``chain.init``: the fundamental matrix's row, one adjoint solve.

    Parameters
    ----------
    chain : Chain
    transient : boolean array, optional
        The transient states (by default those that are in no closed class).

    Returns
    -------
    visits : numpy.ndarray
        ``(n,)``: expected visits to each transient state (0 on the closed classes).
    report : dict
        ``method``, ``residual`` (``||(I - Q)^T v - e_init||_inf``), ``residual_1`` (its 1-norm,
        which bounds the error of every sum over ``v``: absorption, expected totals) and ``iterations``.

    Example
    -------
    >>> from markov_oca import from_matrix
    >>> v, rep = expected_visits(from_matrix([[0.5, 0.5], [0, 1]], init=0))
    >>> v.tolist(), rep["residual"] < 1e-12
    ([2.0, 0.0], True)
    """
    if transient is None:
        transient = closed_classes(chain)[1] < 0
    ids = np.flatnonzero(transient)
    visits = np.zeros(chain.n)
    if not transient[chain.init]:
        return visits, {"analysis": "expected visits", "method": "none", "residual": 0.0, "iterations": 0}
    pos = np.full(chain.n, -1, np.int64)
    pos[ids] = np.arange(ids.size)
    at = (sp.eye_array(ids.size, format="csr") - _q_transient(chain, ids, pos)).T.tocsr()
    at.sort_indices()
    e = np.zeros(ids.size)
    e[pos[chain.init]] = 1.0
    if ids.size <= DIRECT_LIMIT:
        x = spla.splu(at.tocsc()).solve(e)
        method, iters = "direct sparse LU (SuperLU), adjoint", 1
    else:
        # The figures derived from v are sums over every state, so their error is the residual's 1-norm:
        # ask for an inf-norm residual n times smaller than the usual 1e-12 (down to 1e-15, near
        # where double precision stalls on a million states; the default 1e-12 if even that fails).
        # The solver's own adjoint driver sweeps with the race (the reverse of the chain's order).
        start = np.zeros(chain.n)
        start[chain.init] = 1.0
        try:
            v, report = adjoint_solve(chain.next, chain.pnum, chain.denom, transient, chain.order(), start,
                                      tol=max(1e-12 / ids.size, 1e-15))
        except SolverError:
            v, report = adjoint_solve(chain.next, chain.pnum, chain.denom, transient, chain.order(), start)
        x = v[ids]
        method, iters = report.method, report.iterations
    r = np.abs(at @ x - e)
    visits[ids] = x
    return visits, {"analysis": "expected visits", "method": method, "residual": float(r.max()),
                    "residual_1": float(r.sum()), "iterations": int(iters)}


def _class_rhs(chain: Chain, class_of: np.ndarray, wanted: list[int]) -> np.ndarray:
    """``b[s, c]``: the chance of a step from transient ``s`` into class ``wanted[c]``."""
    col = np.full(int(class_of.max()) + 2, -1, np.int64)
    col[wanted] = np.arange(len(wanted))
    b = np.zeros((chain.n, len(wanted)))
    rows, js = np.nonzero(chain.next >= 0)
    cls = class_of[chain.next[rows, js]]
    c = col[cls]
    hit = (cls >= 0) & (c >= 0) & (class_of[rows] < 0)
    np.add.at(b, (rows[hit], c[hit]), chain.pnum[rows[hit], js[hit]] / chain.denom)
    return b


def _target_key(chain: Chain, states: np.ndarray, classes: list[Closed], class_of: np.ndarray) -> np.ndarray:
    """The set ``states``, with every closed class it touches (a chain in one never leaves it)."""
    target = np.zeros(chain.n, bool)
    target[states] = True
    for k in np.unique(class_of[states]):
        if k >= 0:
            target[classes[k].states] = True
    return target


def hitting_probability(chain: Chain, states: Any, *, exact: bool = False) -> tuple[Number, dict]:
    """The chance that the chain, from ``chain.init``, ever visits one of ``states`` (time 0 counts).

    Parameters
    ----------
    chain : Chain
    states : array of ints, boolean mask, or a label name of an :class:`AnyChain`
    exact : bool
        Answer as a :class:`fractions.Fraction` (rational chains).

    Returns
    -------
    probability : float or Fraction
    report : dict
        ``method``, ``residual`` and ``iterations`` of the solve.

    Example
    -------
    >>> from fractions import Fraction as F
    >>> from markov_oca import from_matrix
    >>> h = F(1, 2)
    >>> c = from_matrix([[0, h, h, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]], init=0)
    >>> hitting_probability(c, [1])[0], hitting_probability(c, [1], exact=True)[0]
    (0.5, Fraction(1, 2))
    """
    ids = _states(chain, states)
    classes, class_of = closed_classes(chain)
    rep = {"analysis": "hitting", "method": "none", "residual": 0.0, "iterations": 0}
    if np.isin(chain.init, ids):
        return (Fraction(1) if exact else 1.0), rep
    target = _target_key(chain, ids, classes, class_of)
    key = np.where((chain.next >= 0) & target[np.maximum(chain.next, 0)], 0, -1).astype(np.int64)
    table = np.ones((1, 1), bool)
    if exact:
        _exact_ok(chain)
        return ExactChain(chain).hitting_probabilities(key, table)[0], {**rep, "method": "exact (FLINT)"}
    x, residual, iters = hitting_block(chain.system, key, table, chain.init)
    return float(x[0]), {**rep, "method": "block BiCGSTAB", "residual": float(residual), "iterations": int(iters)}


def _states(chain: Chain, states: Any) -> np.ndarray:
    if isinstance(states, str):
        labels = getattr(chain, "labels", {})
        if states not in labels:
            raise ChainError(f"no label {states!r} (labels: {', '.join(labels) or 'none'})", key="hit")
        return labels[states]
    a = np.asarray(states)
    if a.dtype == bool:
        a = np.flatnonzero(a)
    a = a.astype(np.int64).ravel()
    if a.size and (a.min() < 0 or a.max() >= chain.n):
        raise ChainError(f"state {int(a.min() if a.min() < 0 else a.max())} is not in 0..{chain.n - 1}", key="hit")
    return a


def _exact_ok(chain: Chain) -> None:
    if isinstance(chain, AnyChain) and not chain.exact:
        raise ChainError("exact mode needs rational probabilities (Fractions or a DRN file of fractions); "
                         "this chain's are floats", key="exact")


# ----------------------------------------------------------------------------- results


@dataclass
class AbsorptionTime:
    """The distribution of the number of steps until the chain enters a closed class."""

    pmf: list[float]
    mean: float  # of the distribution as computed (to ``tail_mass``)
    median: float
    p90: float
    p99: float
    tail_mass: float  # probability still transient when the computation stopped

    def quantile(self, q: float) -> float:
        """Smallest t with P(T <= t) >= q (infinite when the computation stopped before)."""
        idx = int(np.searchsorted(np.cumsum(self.pmf), q - 1e-15))
        return float(idx) if idx < len(self.pmf) else float("inf")

    def to_dict(self, with_pmf: bool = True) -> dict:
        d = {"unit": "steps", "mean": self.mean, "median": number(self.median), "p90": number(self.p90),
             "p99": number(self.p99), "tail_mass": self.tail_mass}
        if with_pmf:
            d["pmf"] = self.pmf
        return d


@dataclass
class AnyResults:
    """What :func:`analyse` found; ``to_dict()`` is the JSON of ``markov-oca analyse``."""

    source: str
    states: int
    transitions: int
    transient: int
    init: int
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

    def to_dict(self, with_pmf: bool = True) -> dict:
        listed = self.states <= VISITS_LISTED
        return {
            "schema": SCHEMA,
            "source": self.source,
            "chain": {"states": self.states, "transitions": self.transitions, "transient": self.transient,
                      "init": self.init},
            "exact": self.exact,
            "outcomes": {k: number(v) for k, v in self.outcomes.items()},
            "deadlock": number(self.deadlock),
            "classes": [k.to_dict() for k in self.classes],
            "expected": {"steps": {"total": number(self.steps),
                                   "given": {k.name: number(k.steps_given) for k in self.classes
                                             if k.steps_given is not None}},
                         **{name: {"total": number(r["total"]), "given": {k: number(v) for k, v in r["given"].items()}}
                            for name, r in self.rewards.items()}},
            "visits": ([number(x) for x in self.visits_exact] if self.visits_exact is not None
                       else self.visits.tolist()) if listed else None,
            "length": None if self.length is None else self.length.to_dict(with_pmf),
            "hitting": {k: number(v) for k, v in self.hitting.items()},
            "agreement": self.agreement,
            "solver": self.solver,
            "notes": list(self.notes),
            "timings": self.timings,
        }

    def _rows(self) -> list[tuple[str, str]]:
        rows = [("states", f"{self.states:,} ({self.transient:,} transient), {self.transitions:,} transitions"),
                ("initial state", str(self.init))]
        for k in self.classes[:50]:
            size = "" if k.kind == "absorbing" else f" ({k.states.size} states)"
            given = "" if k.steps_given is None else f", {_fmt(k.steps_given)} steps given it"
            rows.append((f"ends in {k.name}{size}", f"{_fmt(k.absorption)}{given}"))
        if len(self.classes) > 50:
            rows.append(("...", f"{len(self.classes) - 50} more closed classes"))
        rows.append(("expected steps to absorption", _fmt(self.steps)))
        for name, r in self.rewards.items():
            rows.append((f"expected {name}", _fmt(r["total"])))
        if self.length is not None:
            rows.append(("absorption time: median, p90, p99",
                         f"{self.length.median:g}, {self.length.p90:g}, {self.length.p99:g} steps"))
        for name, h in self.hitting.items():
            rows.append((f"ever visits {name}", _fmt(h)))
        worst = max((s["residual"] for s in self.solver), default=0.0)
        rows.append(("largest residual", f"{worst:.2g}"))
        if self.agreement is not None:
            rows.append(("exact vs float", f"{self.agreement:.2g}"))
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


def _fmt(x: Any) -> str:
    return _cell(x)


# ----------------------------------------------------------------------------- the analysis


def analyse(chain: Chain, *, exact: bool | None = None, rewards: Mapping[str, Any] | None = None,
            hit: Mapping[str, Any] | Collection[str] | None = None, conditional: int = 16,
            tail: float = 1e-10, max_steps: int = 100_000, length: bool = True) -> AnyResults:
    """Analyse an absorbing chain from its initial state (see the module docstring).

    Parameters
    ----------
    chain : Chain
        Any chain: :func:`~markov_oca.anychain.from_matrix`, :func:`~markov_oca.anychain.read_chain`,
        or one of our games (:func:`markov_oca.build`).
    exact : bool or None
        Exact fractions (rational chains only); ``None``: exact when the chain is rational
        and has at most 500 transient states.
    rewards : mapping, optional
        Reward name -> a value per state (earned at each step from that state). The chain's own
        state and branch rewards are always included.
    hit : mapping or collection, optional
        Sets whose hitting probability is wanted: name -> states, or label names.
    conditional : int
        Expected steps and rewards given the class the chain ends in, for this many of the most
        likely classes (one forward solve, a column each); 0 for none.
    tail, max_steps : float, int
        The absorption-time distribution is computed until less than ``tail`` is left
        (at most ``max_steps`` steps).
    length : bool
        Compute the absorption-time distribution.

    Returns
    -------
    AnyResults

    Example
    -------
    Gambler's ruin from 1 of 3 with a fair coin: ruin 2/3, 2 steps on average.

    >>> from fractions import Fraction as F
    >>> from markov_oca import from_matrix
    >>> h = F(1, 2)
    >>> P = [[1, 0, 0, 0], [h, 0, h, 0], [0, h, 0, h], [0, 0, 0, 1]]
    >>> r = analyse(from_matrix(P, init=1, labels={"ruin": [0], "goal": [3]}))
    >>> r.outcomes, r.steps
    ({'ruin': Fraction(2, 3), 'goal': Fraction(1, 3)}, Fraction(2, 1))
    >>> r.length.pmf[:4]
    [0.0, 0.5, 0.25, 0.125]
    """
    timer: dict[str, float] = {}
    t0 = time.perf_counter()
    classes, class_of = closed_classes(chain)
    transient = class_of < 0
    n_t = int(transient.sum())
    rational = not isinstance(chain, AnyChain) or chain.exact
    if exact is None:
        exact = rational and n_t <= 500
    if exact:
        _exact_ok(chain)
        if n_t > EXACT_LIMIT:
            raise TooLargeError(f"exact mode solves chains of up to {EXACT_LIMIT:,} transient states densely; "
                                f"this one has {n_t:,} (drop exact for the floating-point analysis)")
    timer["structure"] = time.perf_counter() - t0
    solver: list[dict] = []

    t1 = time.perf_counter()
    visits, rep = expected_visits(chain, transient)
    solver.append(rep)
    absorbed = np.zeros(len(classes))
    if transient[chain.init]:
        _into_classes(chain.next, chain.pnum, 1.0 / chain.denom, visits, class_of, absorbed)
    else:
        absorbed[class_of[chain.init]] = 1.0
    for k, p in zip(classes, absorbed.tolist(), strict=True):
        k.absorption = p
    steps = float(visits.sum())
    timer["visits"] = time.perf_counter() - t1
    t1 = time.perf_counter()

    values = _reward_values(chain, rewards)
    totals = {name: float(visits @ np.where(transient, r, 0.0)) for name, r in values.items()}
    wanted = [int(k) for k in np.argsort(-absorbed, kind="stable")[:max(0, conditional)] if absorbed[k] > 0]
    given: dict[str, dict[str, float]] = {name: {} for name in values}
    h = None
    if wanted and transient[chain.init]:
        h, rep_h = chain.system.solve(_class_rhs(chain, class_of, wanted))
        solver.append({"analysis": f"absorption into {len(wanted)} classes from every state",
                       "method": rep_h.method, "residual": rep_h.residual, "iterations": rep_h.iterations})
        for c, k in enumerate(wanted):
            classes[k].steps_given = float(visits @ h[:, c]) / absorbed[k]
            for name, r in values.items():
                given[name][classes[k].name] = float(visits @ (np.where(transient, r, 0.0) * h[:, c])) / absorbed[k]
    elif wanted:
        classes[wanted[0]].steps_given = 0.0
        for name in values:
            given[name][classes[wanted[0]].name] = 0.0
    reward_out = {name: {"total": totals[name], "given": given[name]} for name in values}
    timer["conditional"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    dist = None
    if length:
        # A push over the branches, one thread: a parallel gather over the adjoint matrix was slower on
        # two shared cores (thread hand-offs every step) and, inside a loop swapping its arrays, unsafe.
        pmf, left = _absorption_times(chain.next, chain.pnum, 1.0 / chain.denom, transient, chain.init,
                                      tail, max_steps)
        ab = AbsorptionTime(pmf.tolist(), float(np.arange(pmf.size) @ pmf), 0, 0, 0, float(left))
        ab.median, ab.p90, ab.p99 = ab.quantile(0.5), ab.quantile(0.9), ab.quantile(0.99)
        dist = ab
    timer["length"] = time.perf_counter() - t2

    t3 = time.perf_counter()
    hits: dict[str, Number] = {}
    for name, states in _hit_sets(hit).items():
        hits[name], rep = hitting_probability(chain, states)
        solver.append({**rep, "analysis": f"hitting {name}"})
    timer["hitting"] = time.perf_counter() - t3

    res = AnyResults(
        source=getattr(chain, "source", "chain"), states=chain.n, transitions=chain.n_transitions, transient=n_t,
        init=int(chain.init), exact=False, classes=classes, steps=steps, visits=visits, length=dist,
        rewards=reward_out, hitting=hits, solver=solver, notes=list(getattr(chain, "notes", [])), timings=timer)
    if exact:
        t4 = time.perf_counter()
        _exact_figures(chain, res, transient, class_of, rewards, wanted, hit)
        timer["exact"] = time.perf_counter() - t4
    return res


def _hit_sets(hit: Mapping[str, Any] | Collection[str] | None) -> dict[str, Any]:
    if hit is None:
        return {}
    if isinstance(hit, Mapping):
        return dict(hit)
    return {str(x): x for x in hit}


def _reward_values(chain: Chain, extra: Mapping[str, Any] | None) -> dict[str, np.ndarray]:
    """Every reward as the expected reward of one step from each state (float)."""
    out = {name: chain.step_reward(np.asarray(v)) for name, v in chain.state_rewards.items()}
    out.update({name: chain.step_reward(np.asarray(v)) for name, v in chain.branch_rewards.items()})
    for name, v in (extra or {}).items():
        a = np.array([float(x) for x in v], np.float64)
        if a.shape != (chain.n,):
            raise ChainError(f"reward {name!r} has {a.size} values for {chain.n} states", key="rewards")
        out[name] = a
    return out


def _exact_step(chain: Chain, name: str, extra: Mapping[str, Any] | None) -> list[Fraction]:
    """The exact expected reward of one step from each state."""
    if extra and name in extra:
        return [Fraction(x) for x in extra[name]]
    exact_rewards = getattr(chain, "exact_rewards", {})
    if name in exact_rewards:
        return exact_rewards[name]
    if name in chain.state_rewards:
        v = np.asarray(chain.state_rewards[name])
        return [Fraction(int(x)) if v.dtype.kind in "biu" else Fraction(float(x)) for x in v.tolist()]
    v = np.asarray(chain.branch_rewards[name])
    out = []
    for s in range(chain.n):
        acc = Fraction(0)
        for j in range(chain.next.shape[1]):
            if chain.next[s, j] < 0:
                break
            x = v[s, j]
            if x:
                acc += Fraction(int(chain.pnum[s, j])) * (Fraction(int(x)) if v.dtype.kind in "biu"
                                                          else Fraction(float(x)))
        out.append(acc / chain.denom)
    return out


def _exact_figures(chain: Chain, res: AnyResults, transient: np.ndarray, class_of: np.ndarray,
                   extra: Mapping[str, Any] | None, wanted: list[int], hit: Any) -> None:
    """Replace the float figures by exact ones (FLINT), checked exactly; record how far the floats were."""
    import flint

    ids = np.flatnonzero(transient)
    pos = np.full(chain.n, -1, np.int64)
    pos[ids] = np.arange(ids.size)
    d = int(chain.denom)
    n_t = ids.size
    worst = 0.0

    def agree(x: Fraction, f: float) -> None:
        nonlocal worst
        worst = max(worst, abs(float(x) - f))

    classes = res.classes
    if not transient[chain.init]:
        for k in classes:
            k.absorption = Fraction(int(class_of[chain.init] == classes.index(k)))
        res.steps = Fraction(0)
        res.visits_exact = [Fraction(0)] * chain.n
        for r in res.rewards.values():
            r["total"] = Fraction(0)
            r["given"] = {k: Fraction(0) for k in r["given"]}
        if wanted:
            classes[wanted[0]].steps_given = Fraction(0)
    else:
        a = flint.fmpz_mat(n_t, n_t)  # D (I - Q) on the transient states
        into = [dict() for _ in range(n_t)]  # numerators of the steps into each class
        for i, s in enumerate(ids.tolist()):
            a[i, i] += d
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
        at = a.transpose()
        e = flint.fmpz_mat(n_t, 1)
        e[int(pos[chain.init]), 0] = d
        v = at.solve(e)
        if at * v != flint.fmpq_mat(e):
            raise ArithmeticError("the exact adjoint solve does not check")
        vis = [Fraction(int(v[i, 0].p), int(v[i, 0].q)) for i in range(n_t)]
        full = [Fraction(0)] * chain.n
        for i, s in enumerate(ids.tolist()):
            full[s] = vis[i]
        res.visits_exact = full
        agree_vec = np.abs(np.array([float(x) for x in full]) - res.visits)
        worst = max(worst, float(agree_vec.max()))
        prob = [Fraction(0)] * len(classes)
        for i in range(n_t):
            for k, p in into[i].items():
                prob[k] += vis[i] * Fraction(p, d)
        for k, p in zip(classes, prob, strict=True):
            agree(p, float(k.absorption))
            k.absorption = p
        steps = sum(vis, Fraction(0))
        agree(steps, float(res.steps))
        res.steps = steps
        steps_r = {}
        for name in res.rewards:
            per_state = _exact_step(chain, name, extra)
            steps_r[name] = [per_state[s] for s in ids.tolist()]
        for name, r in res.rewards.items():
            tot = sum((x * y for x, y in zip(vis, steps_r[name], strict=True)), Fraction(0))
            agree(tot, float(r["total"]))
            r["total"] = tot
        if wanted:
            b = flint.fmpz_mat(n_t, len(wanted))
            col = {k: c for c, k in enumerate(wanted)}
            for i in range(n_t):
                for k, p in into[i].items():
                    if k in col:
                        b[i, col[k]] = p
            hk = a.solve(b)  # D (I - Q) h = D b
            if a * hk != flint.fmpq_mat(b):
                raise ArithmeticError("the exact forward solve does not check")
            for c, k in enumerate(wanted):
                hc = [Fraction(int(hk[i, c].p), int(hk[i, c].q)) for i in range(n_t)]
                pk = classes[k].absorption
                sg = sum((x * y for x, y in zip(vis, hc, strict=True)), Fraction(0)) / pk
                agree(sg, float(classes[k].steps_given))
                classes[k].steps_given = sg
                for name, r in res.rewards.items():
                    g = sum((x * y * z for x, y, z in zip(vis, steps_r[name], hc, strict=True)), Fraction(0)) / pk
                    agree(g, float(r["given"][classes[k].name]))
                    r["given"][classes[k].name] = g
    for name, states in _hit_sets(hit).items():
        x, _ = hitting_probability(chain, states, exact=True)
        agree(x, float(res.hitting[name]))
        res.hitting[name] = x
    res.exact = True
    res.agreement = worst
    res.solver.append({"analysis": "exact", "method": "FLINT fmpz_mat.solve, checked exactly", "residual": 0.0,
                       "iterations": 1})

