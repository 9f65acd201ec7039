"""The structure of an absorbing chain and its two basic solves, each with a certified error bound.

:func:`closed_classes` splits the states into transient states and closed classes;
:func:`expected_visits` is the row of the fundamental matrix ``N = (I - Q)^-1`` at the initial
state (one adjoint solve), with a certified bound on its true residual; :func:`hitting_probability`
is the chance of ever visiting a set, as the absorption of the chain stopped on that set.

A probability ``p = v . b`` read from the visits ``v`` (``b`` the one-step chance of entering a
target) is off by ``(v - v') . b = r N b = r . h`` where ``r`` is the adjoint residual and ``h``
the probability of the target from each state. As ``0 <= h <= 1``, the error is at most the
residual's 1-norm, whatever ``N`` is: no bound on ``N`` is needed for a probability
(:mod:`~markov_oca.analysis.bounds` gives the rest).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order

from ..core.errors import SolverError
from ..linalg.adjoint import AdjointSystem
from ..linalg.certify import SLACK, adjoint_residual, compensated_dot, forward_residual
from ..linalg.rows import n_states, span
from ..linalg.solve import DIRECT_LIMIT
from ..linalg.topological import COMPONENT_LIMIT, TopologicalSystem
from ..rational.blocks import BlockSolver
from .bounds import norm_bound
from .build import AnyChain, ChainError
from .chain import Chain
from .exact import DENSE_LIMIT, ExactChain
from .labelexpr import label_states

Number = float | Fraction
#: Rounds of iterative refinement the visits get when their bound misses the precision asked.
REFINE_ROUNDS = 3


@dataclass
class Closed:
    """A closed class: an absorbing state (``size`` 1, an outcome) or a larger class (a deadlock)."""

    name: str
    kind: str  # "absorbing" or "closed class"
    states: np.ndarray
    absorption: Number = 0.0
    steps_given: Number | None = None  # expected steps, given that the chain ends here
    bound: float | None = None  # certified error bound of ``absorption`` (float mode)
    steps_given_bound: float | None = None

    def to_dict(self) -> dict:
        from .results import number

        d = {"name": self.name, "kind": self.kind, "size": int(self.states.size),
             "states": self.states[:20].tolist(), "absorption": number(self.absorption),
             "steps_given": None if self.steps_given is None else number(self.steps_given)}
        # a bound is a float figure's: an exact fraction has none (the float solve's, kept on the object, is not it)
        if self.bound is not None and not isinstance(self.absorption, Fraction):
            d["absorption_bound"] = self.bound
        if self.steps_given_bound is not None and not isinstance(self.steps_given, Fraction):
            d["steps_given_bound"] = self.steps_given_bound
        return d


def closed_classes(chain: Chain) -> tuple[list[Closed], np.ndarray]:
    """The closed classes of a chain, and the class of each state (-1 for a transient one).

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> c = from_matrix([[0.5, 0.25, 0.25, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], init=0)
    >>> classes, of = closed_classes(c)
    >>> [(k.name, k.kind, k.states.tolist()) for k in classes], of.tolist()
    ([('state 1', 'absorbing', [1]), ('closed class 1', 'closed class', [2, 3])], [-1, 0, 1, 1])
    """
    label, is_closed = chain.strong_classes
    n_comp = is_closed.size
    closed = np.flatnonzero(is_closed)
    # classes in the order of their smallest state (a stable sort keeps each class's states ascending)
    members = np.argsort(label, kind="stable")
    starts = np.searchsorted(label[members], np.arange(n_comp + 1))
    closed = closed[np.argsort(members[starts[closed]], kind="stable")]
    outcome_of = {s: k for k, s in chain.outcomes.items()}
    classes: list[Closed] = []
    order = np.full(n_comp, -1, np.int64)
    order[closed] = np.arange(closed.size)  # each closed component's place in the list of classes
    of = order[label]
    dead = 0
    lo, hi = starts[closed].tolist(), starts[closed + 1].tolist()
    for a, b in zip(lo, hi, strict=True):
        states = members[a:b].copy()
        name = outcome_of.get(int(states[0])) if b - a == 1 else None
        if name is not None:
            classes.append(Closed(name, "absorbing", states))
        else:
            dead += 1
            classes.append(Closed(f"closed class {dead}", "closed class", states))
    return classes, of


def reachable(chain: Chain, start: int) -> np.ndarray:
    """The states reachable from ``start`` (a boolean mask, not to be written to), by the graph alone; kept
    with the chain for the next query from the same state."""
    kept = chain.__dict__.setdefault("_reachable", {})
    if start not in kept:
        mask = np.zeros(chain.n, bool)
        mask[breadth_first_order(chain.P, start, directed=True, return_predecessors=False)] = True
        mask.flags.writeable = False
        kept = {start: mask}  # one start at a time
        chain.__dict__["_reachable"] = kept
    return kept[start]


def _q_transient(chain: Chain, ids: np.ndarray, pos: np.ndarray) -> sp.csr_array:
    """``Q`` restricted to the transient states ``ids`` (local numbering ``pos``), duplicates summed."""
    nxt = chain.next[ids]
    valid = nxt >= 0
    local = np.where(valid, pos[np.maximum(nxt, 0)], -1)
    keep = local >= 0
    rows = np.broadcast_to(np.arange(ids.size)[:, None], nxt.shape)[keep]
    vals = chain.pnum[ids][keep] / chain.denom
    return sp.csr_array((vals, (rows, local[keep])), shape=(ids.size, ids.size))


def residual_bound(chain: Chain, active: np.ndarray, v: np.ndarray,
                   e: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The computed adjoint residual ``e + Q^T v - v`` (``e`` by default ``e_init``) and a certified bound on
    the true one, per state."""
    if e is None:
        e = np.zeros(chain.n)
        e[chain.init] = 1.0
    res, err = np.empty(chain.n), np.empty(chain.n)
    adjoint_residual(*chain.rows, 1.0 / chain.denom, active, e, v, res, err)
    return res, np.abs(res) + err


class _Adjoint:
    """``(I - Q)^T x = b`` on the active states: one factorisation (or the iterative driver), reused."""

    def __init__(self, chain: Chain, active: np.ndarray):
        self.chain, self.active = chain, active
        self.ids = np.flatnonzero(active)
        self.lu = self.system = None
        self.topo = topological(chain, active) if self.ids.size > DIRECT_LIMIT else None
        if self.topo is not None:
            self.method = f"{self.topo.method} (the largest of {self.topo.largest:,} states), adjoint"
        elif self.ids.size <= DIRECT_LIMIT:
            pos = np.full(chain.n, -1, np.int64)
            pos[self.ids] = np.arange(self.ids.size)
            q = chain.P[self.ids][:, self.ids] if chain.packed else _q_transient(chain, self.ids, pos)
            at = (sp.eye_array(self.ids.size, format="csr") - q).T.tocsc()
            self.lu = spla.splu(at)
            self.method = "direct sparse LU (SuperLU), adjoint"

    def solve(self, b: np.ndarray) -> tuple[np.ndarray, int]:
        out = np.zeros(b.shape)
        if self.lu is not None:
            out[self.ids] = self.lu.solve(b[self.ids])
            return out, 1
        if self.topo is not None:
            try:
                out = self.topo.adjoint(b)
            except SolverError:  # a component it cannot eliminate: the iterative route from now on
                self.topo = None
            else:
                if np.isfinite(out).all():
                    return out, 1
                self.topo = None
        # The figures derived from v are sums over every state, so their error is the residual's 1-norm:
        # ask for an inf-norm residual n times smaller than the usual 1e-12 (down to 1e-15, near
        # where double precision stalls on a million states; the default 1e-12 if even that fails).
        # The solver's own adjoint driver sweeps with the race (the reverse of the chain's order).
        c = self.chain
        if self.system is None:  # the split matrix, built once for the solve and its refinements
            self.system = AdjointSystem(None, None, c.denom, self.active, c.order(), rows=c.rows) if c.packed \
                else AdjointSystem(c.next, c.pnum, c.denom, self.active, c.order())
        scale = np.abs(b).max(axis=0) if b.ndim > 1 else float(np.abs(b).max())
        scale = np.where(scale > 0, scale, 1.0)
        try:
            x, rep = self.system.solve(b / scale, tol=max(1e-12 / self.ids.size, 1e-15), check=False)
        except SolverError:
            x, rep = self.system.solve(b / scale, check=False)  # the residual is certified by the caller
        self.method = rep.method
        return x * scale, int(rep.iterations)


def topological(chain: Chain, active: np.ndarray) -> TopologicalSystem | None:
    """The solver by strongly connected components in topological order for the states ``active``, or None when
    a component of the chain among them has more than :data:`~markov_oca.linalg.topological.COMPONENT_LIMIT`
    states (told from the chain's own components, which those of any set of its states refine)."""
    if chain.packed:  # the topological pass reads a padded table: a packed chain's own systems solve
        return None
    label = chain.strong_classes[0][active]
    if label.size == 0 or np.bincount(label).max() > COMPONENT_LIMIT:
        return None
    kept = chain.__dict__.get("_forward_topological")
    if kept is not None and np.array_equal(kept.active, active):  # the same states: the same components
        return kept
    system = TopologicalSystem(chain.next, chain.pnum, chain.denom, active)
    return system if system.ok else None


def forward_system(chain: Chain) -> TopologicalSystem | None:
    """:func:`topological` on the transient states, found once and kept with the chain (None: the chain's own
    :attr:`~markov_oca.analysis.chain.Chain.system` solves)."""
    if "_forward_topological" not in chain.__dict__:
        transient = chain.structure.transient
        chain.__dict__["_forward_topological"] = topological(chain, transient) if transient.sum() > DIRECT_LIMIT \
            else None
    return chain.__dict__["_forward_topological"]


def expected_visits(chain: Chain, transient: np.ndarray | None = None, *,
                    target: float | None = None) -> tuple[np.ndarray, dict]:
    """Expected visits to every state from ``chain.init``: the fundamental matrix's row, one adjoint solve.

    Parameters
    ----------
    chain : Chain
    transient : boolean array, optional
        The transient states (by default those that are in no closed class).
    target : float, optional
        Refine the solve (up to :data:`REFINE_ROUNDS` times) while the certified residual bound's
        1-norm is above this.

    Returns
    -------
    visits : numpy.ndarray
        ``(n,)``: expected visits to each transient state (0 on the closed classes and on the
        states the initial state does not reach).
    report : dict
        ``method``, ``residual`` (``||(I - Q)^T v - e_init||_inf`` as computed), ``residual_1`` (its
        1-norm), ``residual_bound`` (a certified bound on the true residual's 1-norm: it bounds the
        error of every probability read from ``v``), ``iterations`` and ``bound`` (the per-state bound,
        an array, not in the JSON).

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> v, rep = expected_visits(from_matrix([[0.5, 0.5], [0, 1]], init=0))
    >>> v.tolist(), rep["residual"] < 1e-12, rep["residual_bound"] < 1e-14
    ([2.0, 0.0], True, True)
    """
    return visits_solve(chain, transient, target=target)[:2]


def visits_solve(chain: Chain, transient: np.ndarray | None = None, *,
                 target: float | None = None) -> tuple[np.ndarray, dict, _Adjoint | None]:
    """:func:`expected_visits`, and its solver (None when the start is not transient), ready for more
    right-hand sides on the same states."""
    if transient is None:
        transient = closed_classes(chain)[1] < 0
    visits = np.zeros(chain.n)
    if not transient[chain.init]:
        return visits, {"analysis": "expected visits", "method": "none", "residual": 0.0, "residual_1": 0.0,
                        "residual_bound": 0.0, "iterations": 0, "bound": np.zeros(chain.n)}, None
    # States the start does not reach have no visits, exactly; leaving them out keeps their residual 0.
    active = transient & reachable(chain, chain.init)
    solver = _Adjoint(chain, active)
    e = np.zeros(chain.n)
    e[chain.init] = 1.0
    visits, iters = solver.solve(e)
    res, bound = residual_bound(chain, active, visits)
    rounds = 0
    while target is not None and bound.sum() * SLACK > target and rounds < REFINE_ROUNDS and np.isfinite(res).all():
        step, it = solver.solve(res)
        better = visits + step
        res2, bound2 = residual_bound(chain, active, better)
        rounds += 1
        iters += it
        if not bound2.sum() < bound.sum():
            break
        visits, res, bound = better, res2, bound2
    method = solver.method + (f", {rounds} refinement(s)" if rounds else "")
    return visits, {"analysis": "expected visits", "method": method, "residual": float(np.abs(res).max()),
                    "residual_1": float(np.abs(res).sum()), "residual_bound": float(bound.sum() * SLACK),
                    "iterations": int(iters), "bound": bound}, solver


def _target_key(chain: Chain, states: np.ndarray, classes: list[Closed], class_of: np.ndarray) -> np.ndarray:
    """The set ``states``, with every closed class it touches (a chain in one never leaves it)."""
    target = np.zeros(chain.n, bool)
    target[states] = True
    for k in np.unique(class_of[states]):
        if k >= 0:
            target[classes[k].states] = True
    return target


def hitting_probability(chain: Chain, states: Any, *, exact: bool = False, target: float | None = None,
                        precision: float | None = None, norm: float | None = None,
                        visits: tuple[np.ndarray, dict] | None = None) -> tuple[Number, dict]:
    """The chance that the chain, from ``chain.init``, ever visits one of ``states`` (time 0 counts).

    The chain is stopped on the set; the chance is the absorption into it, read from the visits
    of the stopped chain, so its certified bound is that solve's residual bound (see the module
    docstring).

    Parameters
    ----------
    chain : Chain
    states : array of ints, boolean mask, or a label name of an :class:`AnyChain`
    exact : bool
        Answer as a :class:`fractions.Fraction` (rational chains).
    target : float, optional
        Refine the solve while its bound is above this.
    precision : float, optional
        When the bound is above this relative precision, tighten it by a forward solve of the
        hitting probabilities ``h`` from every state: the error is ``sum |r| h`` (``r`` the
        residual), small where ``h`` is, which makes the bound of a small probability relative.
    norm : float, optional
        A certified bound on ``||N||_inf`` of the chain (it bounds the stopped chain's too); by
        default certified from a column of expected steps in that forward solve.
    visits : tuple, optional
        The chain's expected visits and their report (:func:`expected_visits` on the transient
        states): used as they are when the set holds no transient state, whose hitting
        probability is then an absorption read from them.

    Returns
    -------
    probability : float or Fraction
    report : dict
        ``method``, ``residual``, ``bound`` (certified, float mode) and ``iterations`` of the solve.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from markov_oca import from_matrix
    >>> h = F(1, 2)
    >>> c = from_matrix([[0, h, h, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]], init=0)
    >>> hitting_probability(c, [1])[0], hitting_probability(c, [1], exact=True)[0]
    (0.5, Fraction(1, 2))
    """
    ids = _states(chain, states)
    label, is_closed = chain.strong_classes
    class_of = np.where(is_closed[label], label, -1)  # -1 for a transient state (any class id otherwise)
    rep = {"analysis": "hitting", "method": "none", "residual": 0.0, "iterations": 0, "bound": 0.0}
    if np.isin(chain.init, ids):
        return (Fraction(1) if exact else 1.0), rep
    target_set = np.zeros(chain.n, bool)  # the set, with every closed class it touches (never left)
    target_set[ids] = True
    touched = np.unique(label[ids])
    touched = touched[is_closed[touched]]
    if touched.size:
        target_set |= np.isin(label, touched)
    if exact:
        _exact_ok(chain)
        return exact_hitting(chain, target_set), {**rep, "method": "exact (FLINT)"}
    active = (class_of < 0) & ~target_set
    if not active[chain.init]:
        return 0.0, rep
    if visits is not None and not (target_set & (class_of < 0)).any():
        v, vrep = visits  # a set of closed classes stops nothing: the chain's own visits answer it
    else:
        v, vrep = expected_visits(chain, active, target=target)
    b = np.empty(chain.n)
    _into_set(*chain.rows, float(chain.denom), target_set, b)
    p, err = compensated_dot(v, b)  # one rounding a term more: twice err covers it
    bound = (vrep["residual_bound"] + 2 * err) * SLACK
    if precision is not None and bound > precision * abs(p):
        bound = min(bound, _relative_bound(chain, active, b, vrep["bound"], err, norm))
    return min(max(float(p), 0.0), 1.0), {**rep, "method": vrep["method"], "residual": vrep["residual"],
                                          "iterations": vrep["iterations"], "bound": float(bound)}


@numba.njit(cache=True, nogil=True)
def _into_set(lo, hi, nxt, pnum, denom, target, out):
    """``out[s]``: the chance of one step from ``s`` into ``target`` (its numerators summed as integers, then
    divided once)."""
    for s in range(n_states(lo, hi, nxt)):
        acc = np.int64(0)
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
            if target[nxt[j]]:
                acc += np.int64(pnum[j])
        out[s] = acc / denom


def integer_system(chain: Chain, ids: np.ndarray, pos: np.ndarray, group: np.ndarray,
                   n_groups: int) -> tuple[sp.csr_array, sp.csr_array]:
    """``D (I - Q)`` on the states ``ids`` (local numbering ``pos``; integers, sparse) and the numerators of
    their steps out of ``ids`` into each group (``group[t]`` the column of state ``t``, -1 for none)."""
    nxt, num = chain.next[ids], chain.pnum[ids].astype(np.int64)
    valid = nxt >= 0
    tgt = np.maximum(nxt, 0)
    local = np.where(valid, pos[tgt], -1)
    rows = np.broadcast_to(np.arange(ids.size)[:, None], nxt.shape)
    inside, out = valid & (local >= 0), valid & (local < 0) & (group[tgt] >= 0)
    diag = np.arange(ids.size)
    a = sp.csr_array((np.concatenate([np.full(ids.size, int(chain.denom), np.int64), -num[inside]]),
                      (np.concatenate([diag, rows[inside]]), np.concatenate([diag, local[inside]]))),
                     shape=(ids.size, ids.size))
    into = sp.csr_array((num[out], (rows[out], group[tgt[out]])), shape=(ids.size, n_groups))
    a.sum_duplicates()
    into.sum_duplicates()
    return a, into


def _relative_bound(chain: Chain, active: np.ndarray, b: np.ndarray, rb: np.ndarray, err: float,
                    norm: float | None) -> float:
    """``sum_s rb_s min(1, h_s + delta)`` (see :func:`hitting_probability`): ``h`` solved forward on the
    stopped chain, ``delta = ||N||_inf ||true residual of h||_inf`` its certified error."""
    system = chain.system_on(active)
    own = norm is None or not np.isfinite(norm)
    cols = np.stack([np.where(active, b, 0.0), active.astype(np.float64)], axis=1)[:, :2 if own else 1]
    try:
        x, _ = system.solve(cols)
    except SolverError:
        return float("inf")
    res, rerr = np.empty_like(x), np.empty_like(x)
    forward_residual(*chain.rows, 1.0 / chain.denom, active, cols, x, res, rerr)
    if own:
        norm = norm_bound(chain, x[:, 1], active)[0]
    delta = norm * float((np.abs(res[:, 0]) + rerr[:, 0]).max(initial=0.0)) * SLACK
    if not np.isfinite(delta):
        return float("inf")
    up = np.clip(x[:, 0] + delta, 0.0, 1.0)
    return float((float(rb @ up) * SLACK + 2 * err) * SLACK)


def exact_hitting(chain: Chain, target_set: np.ndarray) -> Fraction:
    """The exact chance of ever entering ``target_set`` (a mask closed under the chain's closed classes).

    The chain stopped on the set, restricted to the states the start reaches outside it, solved by strongly
    connected components in topological order (:class:`~markov_oca.rational.blocks.BlockSolver`) while
    its largest component has at most :data:`~markov_oca.exact.DENSE_LIMIT` states; by
    :class:`~markov_oca.exact.ExactChain` (sparse p-adic or refinement solves) beyond.
    """
    if target_set[chain.init]:
        return Fraction(1)
    active = chain.structure.transient & ~target_set
    if not active[chain.init]:
        return Fraction(0)
    g = sp.csr_array(chain.P)
    keep = np.flatnonzero(active)
    sub = sp.csr_array(g[keep][:, keep])
    at = np.zeros(chain.n, np.int64) - 1
    at[keep] = np.arange(keep.size)
    seen = breadth_first_order(sub, int(at[chain.init]), directed=True, return_predecessors=False)
    ids = np.sort(keep[seen])
    pos = np.full(chain.n, -1, np.int64)
    pos[ids] = np.arange(ids.size)
    a, into = integer_system(chain, ids, pos, np.where(target_set, 0, -1), 1)
    solver = BlockSolver(a)
    if solver.largest > DENSE_LIMIT:
        key = np.where((chain.next >= 0) & target_set[np.maximum(chain.next, 0)], 0, -1).astype(np.int64)
        return ExactChain(chain).hitting_probabilities(key, np.ones((1, 1), bool))[0]
    x = solver.solve([into.toarray()[:, 0].tolist()])[0][int(pos[chain.init])]
    return Fraction(int(x.p), int(x.q))


def _states(chain: Chain, states: Any) -> np.ndarray:
    if isinstance(states, str):
        return label_states(getattr(chain, "labels", {}), states, chain.n)
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
