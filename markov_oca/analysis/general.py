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

Given the class the chain ends in, an expectation is ``E[T 1{k}] = v . h_k = (v N) . R_k``
(``h_k`` the class's absorption probabilities from every state): one more adjoint solve,
``w = v N``, answers every class at once, and ``(v r) N`` each reward's, for the
``conditional`` most likely classes. The forward block holds the expected steps from every
state (which certify ``||N||_inf``), the reward means and a column for each class whose
absorption bound must be tightened. The
distribution of the absorption time comes from pushing the initial distribution
through ``Q`` until less than ``tail`` is left, continued geometrically once the tail's decay rate is
certified tightly enough (:mod:`~markov_oca.analysis.tails`); hitting probabilities of a set of
states are a solve of their own (:func:`hitting_probability`); the variance of the absorption
time and of every reward total come from the same forward block (:mod:`~markov_oca.analysis.moments`).

In float mode every figure carries a certified error bound (:mod:`~markov_oca.analysis.bounds`
says how), each within the relative ``precision`` asked (default 1e-9). A figure that the float
solves cannot certify sends the whole analysis the sound way: the chain solved exactly over the
rationals of its probabilities, its figures then rounded to floats with the bound of that rounding.
In exact mode (rational entries) the same quantities are solved again over the rationals and
checked exactly; the float figures are kept beside them to report their agreement.

A chain with several initial states (every state labelled ``init``) is analysed from each, or from
the one state or the distribution ``init`` names (:mod:`~markov_oca.analysis.initial`): what does not
depend on the start (the closed classes, the forward block, the exact system and forward solve) is
worked out once and shared; each start has its own adjoint solve, push and hitting solves.

The exact solves go by strongly connected components in topological order
(:class:`~markov_oca.rational.blocks.BlockSolver`): a component of one state is a substitution,
a larger one a dense FLINT solve of its own size, so an almost acyclic chain of thousands of states
takes about a second. Both routes take chains of up to :data:`markov_oca.exact.EXACT_LIMIT`
transient states whose largest component has at most :data:`BLOCK_LIMIT` states; beyond, one
line refuses.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..core.errors import SolverError, TooLargeError
from ..core.memory import check_fits
from ..linalg.certify import SLACK, U, into_classes
from ..linalg.rows import n_states, span
from .absorbing import (
    REFINE_ROUNDS,
    Closed,
    _exact_ok,
    closed_classes,
    expected_visits,
    forward_system,
    hitting_probability,
    reachable,
    residual_bound,
    visits_solve,
)
from .anyresults import AnyResults
from .bounds import PRECISION, clip_probability, meets, ratio_bound, upper_steps
from .build import AnyChain, ChainError
from .chain import Chain
from .exact import EXACT_LIMIT
from .exactfigures import as_floats, exact_figures
from .initial import InitialResults, Visits, mix, starts
from .moments import Forward, branch_values, certified_forward, forward_block, forward_solution, moment
from .tails import AbsorptionTime, absorption_time

__all__ = ["AbsorptionTime", "AnyResults", "Closed", "InitialResults", "analyse", "closed_classes", "expected_visits",
           "from_state", "hitting_probability"]

#: States of the largest strongly connected component of the transient states up to which the exact
#: figures are computed (exact mode, and float mode's fallback when it cannot certify): that component
#: is one dense FLINT solve, which grows as its size to the fourth (the answers' bits grow with it):
#: 9 s for 800 states, some minutes for 2,500.
BLOCK_LIMIT = 2_500
#: Classes beyond the ``conditional`` ones that get a forward column to tighten their bound.
TIGHTEN_COLUMNS = 64


def analyse(chain: Chain, *, init: Any = None, exact: bool | None = None, rewards: Mapping[str, Any] | None = None,
            hit: Mapping[str, Any] | Collection[str] | None = None, conditional: int = 16,
            tail: float = 1e-10, max_steps: int = 100_000, length: bool = True,
            precision: float = PRECISION, only: str | None = None) -> AnyResults | InitialResults:
    """Analyse an absorbing chain from its initial state, each of several, or a distribution (see the module
    docstring).

    Parameters
    ----------
    chain : Chain
        Any chain: :func:`~markov_oca.anychain.from_matrix`, :func:`~markov_oca.anychain.read_chain`,
        or one of our games (:func:`markov_oca.build`).
    init : None, int, str or mapping
        Where to start (:func:`~markov_oca.analysis.initial.starts`): None, each of the chain's initial
        states (every state labelled ``init``, else ``chain.init``); a state; a label (each of its
        states); ``"uniform"`` over the initial states, or a mapping state -> weight: the figures from
        that distribution (the weighted sums of those from its states).
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
        (at most ``max_steps`` steps; pushed until its decay rate is certified, then continued at that
        rate within a hundredth of ``precision``); its quantiles beyond are bracketed from the tail's decay.
    length : bool
        Compute the absorption-time distribution.
    precision : float
        Relative precision every float figure is certified to (a variance: relative to its second moment).
    only : {None, "hit", "expected"}
        ``"expected"``: answer only the expected steps and reward totals, from one forward solve shared by
        every initial state (float mode; a chain whose every state is initial, as Storm's herman model, is
        answered at the cost of one solve); ``"hit"``: answer only the hitting probabilities of ``hit`` (each
        one solve, with its bound),
        none of the other figures.
        With more than :data:`EVERY_STATE_LIMIT` initial states, no ``init`` and in floating point, the
        analysis is ``"expected"`` with each class's chance too (what one forward solve gives for every
        state); ``init="init"`` analyses each start in full.

    Returns
    -------
    AnyResults or InitialResults
        From one initial state, or a distribution: :class:`AnyResults`; from several initial states:
        :class:`~markov_oca.analysis.initial.InitialResults`, one :class:`AnyResults` per state.

    Raises
    ------
    ChainError
        A reward with a number of values other than the number of states; an ``init`` that is not a
        state or label, or a distribution with a negative weight or weights that do not sum to 1.
    TooLargeError, SolverError
        An exact solve above the size it reaches, or a bound not met at ``precision``.

    Examples
    --------
    Gambler's ruin from 1 of 3 with a fair coin: ruin 2/3, 2 steps on average.

    >>> from fractions import Fraction as F
    >>> from markov_oca import from_matrix
    >>> h = F(1, 2)
    >>> P = [[1, 0, 0, 0], [h, 0, h, 0], [0, h, 0, h], [0, 0, 0, 1]]
    >>> r = analyse(from_matrix(P, init=1, labels={"ruin": [0], "goal": [3]}))
    >>> r.outcomes, r.steps, r.moments["steps"].variance
    ({'ruin': Fraction(2, 3), 'goal': Fraction(1, 3)}, Fraction(2, 1), Fraction(2, 1))
    >>> r.length.pmf[:4]
    [0.0, 0.5, 0.25, 0.125]
    >>> f = analyse(from_matrix(P, init=1), exact=False)
    >>> round(f.outcomes["state 3"], 12), f.classes[1].bound < 1e-13
    (0.333333333333, True)
    >>> g = analyse(from_matrix(P, init=1, labels={"goal": [3]}), hit=["goal"], only="hit", exact=False)
    >>> round(g.hitting["goal"], 12), g.bounds["hitting goal"] < 1e-13, g.classes
    (0.333333333333, True, [])

    From each of two initial states, or from both with weights:

    >>> two = from_matrix(P, init=1, labels={"init": [1, 2]})
    >>> [(r.init, r.outcomes["state 3"], r.steps) for r in analyse(two)]
    [(1, Fraction(1, 3), Fraction(2, 1)), (2, Fraction(2, 3), Fraction(2, 1))]
    >>> analyse(two, init={1: h, 2: h}).outcomes["state 3"]
    Fraction(1, 2)
    """
    t0 = time.perf_counter()
    _ = chain.P  # the graph searches share it (the visits' reachable states need it anyway)
    if only is None:
        classes, class_of = closed_classes(chain)
    else:  # no figure of the classes is asked: which states are transient is all that is needed
        label, is_closed = chain.strong_classes
        classes, class_of = [], np.where(is_closed[label], 0, -1)
    transient = class_of < 0
    n_t = int(transient.sum())
    exact = _exact_mode(chain, exact, n_t, transient)
    start = starts(chain, init, exact)
    shared = _Shared(classes, class_of, exact, _reward_values(chain, rewards), _hit_sets(hit), rewards,
                     time.perf_counter() - t0)
    if only is None and init is None and start.weights is None and not exact and not hit \
            and len(start.states) > EVERY_STATE_LIMIT:
        # Storm's way with a chain whose many states are initial: what is solved from every state at once
        only, shared.every = "expected", True
    if only == "expected" and start.weights is not None:
        raise ChainError("only='expected' answers from each initial state, not from a distribution", key="only")
    if len(start.states) > 1 and start.weights is None and only is None:  # every start's visits are kept
        check_fits(f"{getattr(chain, 'source', 'chain')}: the expected visits from {len(start.states):,} initial "
                   f"states to {chain.n:,} states each", len(start.states) * chain.n * (8 + 100 * exact))
    visits = Visits(chain.n) if start.weights is not None else None
    results = []
    for i, s in enumerate(start.states):
        results.append(_from_state(from_state(chain, s), shared, conditional, tail, max_steps, length, precision,
                                   only))
        if visits is not None:
            visits.add(start.weights[i], results[-1])
    if visits is not None:
        return mix(results, start, chain, visits)
    return results[0] if len(results) == 1 else InitialResults(results)


def from_state(chain: Chain, state: int) -> Chain:
    """The chain started in ``state``: the same object when that is its initial state, else a shallow copy that
    shares the structure, the transition matrix and the factorised system (none of which depends on the start).

    Examples
    --------
    >>> from markov_oca import from_matrix
    >>> c = from_matrix([[1, 0], [0.5, 0.5]], init=1)
    >>> from_state(c, 1) is c, from_state(c, 0).init, c.init
    (True, 0, 1)
    """
    if state == chain.init:
        return chain
    out = copy.copy(chain)
    out.__dict__.pop("_visits", None)
    out._lengths, out._absorption_report, out.reports = {}, None, []
    out.init = int(state)
    return out


@dataclass
class _Shared:
    """What the analyses from several initial states share: the closed classes, the mode, the rewards, the hit
    sets, and the forward solves already made (by their right-hand sides)."""

    classes: list[Closed]
    class_of: np.ndarray
    exact: bool
    values: dict[str, np.ndarray]
    hits: dict[str, Any]
    rewards: Mapping[str, Any] | None
    structure: float
    forward: dict[bytes, Any] = field(default_factory=dict)  # by right-hand side; EVERY_STATE_KEY: (columns, block)
    exact_solves: dict = field(default_factory=dict)  # the exact route's system and forward solves
    every: bool = False  # the figures solved from every state at once (many initial states): classes too


def _from_state(chain: Chain, shared: _Shared, conditional: int, tail: float, max_steps: int, length: bool,
                precision: float, only: str | None = None) -> AnyResults:
    """The analysis from ``chain.init``."""
    timer = {"structure": shared.structure}
    exact, transient = shared.exact, shared.class_of < 0
    classes = [Closed(k.name, k.kind, k.states) for k in shared.classes]  # each start fills in its own
    res = AnyResults(source=getattr(chain, "source", "chain"), states=chain.n, transitions=chain.n_transitions,
                     transient=int(transient.sum()), init=int(chain.init), exact=False, classes=classes, steps=0.0,
                     visits=np.zeros(0 if only == "expected" else chain.n), length=None,
                     notes=list(getattr(chain, "notes", [])), timings=timer, precision=None if exact else precision)
    if only == "expected":
        return _only_expected(chain, res, shared, exact, precision)
    if only is not None:
        return _only(chain, res, shared.hits, only, exact, precision)
    job = _Float(chain, res, shared.class_of, shared.values, shared.hits, conditional, precision)
    job.extra, job.forward, job.exact_shared = set(shared.rewards or ()), shared.forward, shared.exact_solves
    # One worker beside the solves (the kernels free the GIL): the forward block, then the distribution's push,
    # while this thread solves for the visits and then v N.
    with ThreadPoolExecutor(1) as pool:
        job.pool = pool
        job.push = (lambda: pool.submit(_pushed, chain, transient, tail, max_steps, precision)) if length else None
        failed = job.run(None)
        pushed = job.pushed
        if failed and not exact:
            failed = job.run(precision * 1e-3)
        if pushed is not None:
            res.length, timer["length"] = pushed.result()
    if exact or failed:
        _exact_route(job, exact, failed, shared.rewards)
    _length_moments(res)
    return res


def _pushed(chain: Chain, transient: np.ndarray, tail: float, max_steps: int,
            precision: float) -> tuple[AbsorptionTime, float]:
    """The absorption-time distribution and the seconds it took; the pmf continued beyond the push is within a
    hundredth of ``precision`` (relative) of the true one."""
    t = time.perf_counter()
    got = absorption_time(chain.rows, chain.denom, transient, chain.init, tail, max_steps,
                          extend_error=precision * 1e-2)
    return got, time.perf_counter() - t


def _only_expected(chain: Chain, res: AnyResults, shared: _Shared, exact: bool, precision: float) -> AnyResults:
    """The expected steps and reward totals alone (``only="expected"``), from one forward solve shared by every
    initial state: ``x = N r`` from every state at once, each figure bounded by the solve's certified residual
    times the smaller of ``||N||_inf`` and the expected steps from its state (:meth:`.Forward.delta_at`). Float
    mode only."""
    if exact:
        raise ChainError("only='expected' answers in floating point (one forward solve for every initial state); "
                         "drop exact, or drop only for the exact figures from each initial state", key="only")
    t0 = time.perf_counter()
    ks = list(range(len(res.classes)))[:EVERY_STATE_CLASSES] if shared.every else []
    res.only = "expected"
    if shared.every:
        res.notes.append(f"more than {EVERY_STATE_LIMIT} initial states: from each, the figures solved from every "
                         "state at once (the chance of each class the chain ends in, expected steps and rewards); "
                         "--init init for every figure from each, one analysis per state")
        if len(res.classes) > len(ks):
            res.notes.append(f"the chance of each class from each initial state: the first {len(ks)} of "
                             f"{len(res.classes)} classes")
    res.classes = res.classes[:len(ks)]
    job = _Float(chain, res, shared.class_of, shared.values, {}, 0, precision)
    # One block for every start: its columns (O(transitions) to build) and its solve are kept under one key
    kept = shared.forward.get(EVERY_STATE_KEY)
    reused = kept is not None
    if kept is None:
        columns = job._columns(ks)
        kept = shared.forward[EVERY_STATE_KEY] = (columns, forward_block(chain, columns))
    columns, fwd = kept
    s = chain.init
    transient = shared.class_of[s] < 0
    n_values = 1 + len(shared.values)

    def figures_of(fwd: Forward) -> list[tuple[str, float, float]]:
        return [(name, float(fwd.x[s, c]) if transient and fwd.x is not None else 0.0,
                 fwd.delta_at(c, s) if transient else 0.0) for c, name in enumerate(["steps", *shared.values])]

    def classes_of(fwd: Forward) -> list[tuple[float, float]]:
        if not transient:  # a start in a class stays in it
            return [(1.0 if k == shared.class_of[s] else 0.0, 0.0) for k in ks]
        if fwd.x is None:
            return [(float("nan"), float("inf")) for _ in ks]
        return [(float(fwd.x[s, n_values + i]), fwd.delta_at(n_values + i, s)) for i in range(len(ks))]

    def met(figures: list[tuple[str, float, float]], ends: list[tuple[float, float]]) -> bool:
        return all(meets(v, b, precision) for _, v, b in figures) and all(meets(v, b, precision) for v, b in ends)

    figures, ends = figures_of(fwd), classes_of(fwd)
    if fwd.x is not None and not fwd.report.get("refined") and not met(figures, ends):
        # the sound route of this block: iterative refinement, kept for every initial state that follows
        fwd = forward_block(chain, columns, rounds=REFINE_ROUNDS)
        shared.forward[EVERY_STATE_KEY] = (columns, fwd)
        fwd.report["refined"], reused = REFINE_ROUNDS, False
        figures, ends = figures_of(fwd), classes_of(fwd)
    if fwd.x is not None and fwd.sharp is None and not met(figures, ends):
        fwd.sharpen(chain)  # the residual bounds weighed by the visits to each state: one more solve, kept
        figures, ends = figures_of(fwd), classes_of(fwd)
    res.solver.append({**fwd.report, "reused": True} if reused else fwd.report)
    for name, value, bound in figures:
        if not meets(value, bound, precision):
            why = "the solve failed" if fwd.x is None else \
                f"||N||_inf <= {fwd.norm:.3g}, true residual up to {float(fwd.res.max(initial=0.0)):.2g}"
            raise SolverError(f"no bound under {precision:g} (relative) for the expected {name} from state {s} by "
                              f"one forward solve, {REFINE_ROUNDS} rounds of refinement and a solve for each "
                              f"state's bound ({why}: bound {bound:.2g}); ask a looser --precision")
    for k, (p, bound) in zip(res.classes, ends, strict=True):  # one that misses the precision is left out
        k.absorption, k.bound = (clip_probability(p, bound), bound) if np.isfinite(p) else (0.0, float("inf"))
    (_, res.steps, res.bounds["steps"]), rest = figures[0], figures[1:]
    res.rewards = {name: {"total": v, "bound": b, "given": {}, "given_bound": {}} for name, v, b in rest}
    res.timings["expected"] = time.perf_counter() - t0
    return res


#: Beyond this many initial states (and no ``init`` given), the figures are those solved from every state at
#: once: each class's chance, the expected steps and rewards (one forward solve for them all).
EVERY_STATE_LIMIT = 64
#: The classes whose chance is given from each initial state then (a forward column each).
EVERY_STATE_CLASSES = 256
#: Where the forward block shared by every start of ``only="expected"`` is kept (with its columns).
EVERY_STATE_KEY = b"every state"


def _only(chain: Chain, res: AnyResults, hits: dict[str, Any], only: str, exact: bool,
          precision: float) -> AnyResults:
    """The hitting probabilities alone (``only="hit"``): the other figures stay unanswered."""
    if only != "hit" or not hits:
        raise ChainError(f"only={only!r}: what can be asked alone is a hitting probability (only='hit', with the "
                         "sets in hit) or the expected steps and rewards (only='expected')", key="only")
    res.classes, res.steps, res.only = [], None, only
    t0 = time.perf_counter()
    for name, states in hits.items():
        p, rep = hitting_probability(chain, states, exact=exact, precision=None if exact else precision)
        if not exact and not meets(p, rep["bound"], precision):
            p, rep = hitting_probability(chain, states, target=precision * 1e-3 * max(abs(p), 1e-300),
                                         precision=precision)
            if not meets(p, rep["bound"], precision):
                raise SolverError(f"no bound under {precision:g} (relative) for P(visits {name}): the bound is "
                                  f"{rep['bound']:.2g}; ask a looser --precision")
        res.hitting[name] = p
        if not exact:
            res.bounds[f"hitting {name}"] = rep.pop("bound")
        res.solver.append({**rep, "analysis": f"hitting {name}"})
    res.exact = exact
    res.timings["hitting"] = time.perf_counter() - t0
    return res


def _exact_mode(chain: Chain, exact: bool | None, n_t: int, transient: np.ndarray) -> bool:
    """Whether to answer exactly: asked, or by default for a rational chain of at most 500 transient states."""
    if exact is None:
        exact = (not isinstance(chain, AnyChain) or (chain.exact and not chain.decimal)) and n_t <= 500
    if exact:
        _exact_ok(chain)
        why = _exact_too_large(chain, transient)
        if why:
            raise TooLargeError(f"exact mode solves chains of up to {EXACT_LIMIT:,} transient states whose largest "
                                f"strongly connected component has at most {BLOCK_LIMIT:,}; {why} "
                                f"(drop exact for the floating-point analysis)")
    return bool(exact)


def largest_component(chain: Chain, transient: np.ndarray) -> int:
    """States of the largest strongly connected component among the transient states."""
    ids = np.flatnonzero(transient)
    if not ids.size:
        return 0
    g = sp.csr_array(chain.P)[ids][:, ids]
    _, label = connected_components(g, directed=True, connection="strong")
    return int(np.bincount(label).max())


def _exact_too_large(chain: Chain, transient: np.ndarray) -> str:
    """Why the exact figures are out of reach ('' when they are not)."""
    n_t = int(transient.sum())
    if n_t > EXACT_LIMIT:
        return f"it has {n_t:,} transient states"
    big = largest_component(chain, transient)
    return f"its largest has {big:,} states" if big > BLOCK_LIMIT else ""


def _exact_route(job: _Float, exact: bool, failed: list[str], rewards: Mapping[str, Any] | None) -> None:
    """The exact figures: asked for, or the sound route of float figures that could not be certified."""
    chain, res, transient = job.chain, job.res, job.transient
    why = "" if exact else _exact_too_large(chain, transient)
    if why and all(" given " in f or (f.startswith("P(") and not f.startswith("P(visits ")) for f in failed):
        # only the chances of ending in some classes (tiny ones, most often) and figures given a class miss: those
        # are left out of the text and the JSON (each named, with the precision that would give it), the rest stands
        res.looser = list(failed)
        res.notes.append(f"not certified under {job.precision:g} ({job.why()}) and the chain too large for the "
                         f"exact route ({why}): left out {', '.join(failed[:3])}"
                         f"{' and more' if len(failed) > 3 else ''}")
        return
    if why:
        raise SolverError(f"no bound under {job.precision:g} (relative) for {', '.join(failed[:3])}: floating point "
                          f"cannot certify this chain ({job.why()}), and the exact fallback takes up to "
                          f"{EXACT_LIMIT:,} transient states whose largest strongly connected component has at most "
                          f"{BLOCK_LIMIT:,}: {why}; ask a looser --precision")
    t4 = time.perf_counter()
    exact_figures(chain, res, transient, job.class_of, rewards, job.wanted, job.hits, job.exact_shared)
    res.timings["exact"] = time.perf_counter() - t4
    if not exact:
        as_floats(res)
        res.route = (f"solved exactly over the rationals of the chain's probabilities: the float solve could "
                     f"not certify {', '.join(failed[:3])} ({job.why()})")


def _length_moments(res: AnyResults) -> None:
    """The distribution's mean and variance: those of the solve, not of what was pushed."""
    ab, m = res.length, res.moments.get("steps")
    if ab is None or m is None:
        return
    ab.mean, ab.variance = float(m.mean), float(m.variance)
    ab.markov_bound(float(m.mean) + (m.mean_bound or 0.0) if not res.exact else float(m.mean) * (1 + 1e-15))
    if not res.exact:
        ab.mean_bound, ab.variance_bound = m.mean_bound, m.variance_bound
        if not np.isfinite(m.mean_bound):
            ab.mean = None


class _Float:
    """The float figures with their certified bounds; :meth:`run` lists those that miss the precision."""

    def __init__(self, chain: Chain, res: AnyResults, class_of: np.ndarray, values: dict[str, np.ndarray],
                 hits: dict[str, Any], conditional: int, precision: float):
        self.chain, self.res, self.class_of, self.values = chain, res, class_of, values
        self.hits, self.conditional, self.precision = hits, conditional, precision
        self.extra: Collection[str] = ()
        self.transient = class_of < 0
        self.wanted: list[int] = []
        self.fwd: Forward | None = None
        self.forward: dict[bytes, Forward] = {}  # forward blocks already solved, by their right-hand side
        self.exact_shared: dict = {}  # the exact system and solves already made (see exact_figures)
        self.pool: ThreadPoolExecutor | None = None  # the worker for the forward block (and what follows it)
        self.push: Callable[[], Future] | None = None  # queues the distribution's push on that worker
        self.pushed: Future | None = None
        self.mass: tuple[np.ndarray, np.ndarray] | None = None  # y = rb N and its residual bound (relative bounds)
        self.w: tuple[np.ndarray, int, np.ndarray] | None = None  # v N (and (v r) N) solved beside y, with its rhs

    def why(self) -> str:
        norm = self.fwd.norm if self.fwd is not None else float("inf")
        v = self.res.solver[0].get("residual_bound", float("inf")) if self.res.solver else float("inf")
        return (f"||N||_inf {'not certifiable' if not np.isfinite(norm) else f'<= {norm:.3g}'}, "
                f"true residual up to {v:.2g}")

    def run(self, target: float | None) -> list[str]:
        chain, res, timer = self.chain, self.res, self.res.timings
        res.solver, res.bounds = [], {}
        t1 = time.perf_counter()
        # The forward block of the steps and rewards does not depend on the visits: it is solved beside them.
        _ = chain.structure  # worked out here, not by the two threads at once
        with ThreadPoolExecutor(1) if self.pool is None else nullcontext(self.pool) as pool:
            base = self._columns([])
            # A forward block solved by components is one pass: this thread takes it after the visits, and the
            # worker starts on the push at once; an iterative one is the worker's, the push queued behind it.
            # The worker solves it; this thread certifies it (a pass over the transitions), so that the push
            # behind it starts sooner.
            ahead = None if forward_system(chain) is not None else pool.submit(self._solution, base)
            if self.push is not None and self.pushed is None:
                self.pushed = self.push()
            v, rep, solver = visits_solve(chain, self.transient, target=target)
            visits = (v, dict(rep))
            vb = rep.pop("bound")
            res.solver.append(rep)
            res.visits = v
            p, err = self._absorption(v)
            self.mass = self.w = None
            if solver is not None and any(p[k] > 0 and not c.bound <= self.precision * p[k]
                                          for k, c in enumerate(res.classes)):
                if self.conditional > 0:  # y = rb N and w = v N (and (v r) N) in one pass: both rhs are known
                    rhs = self._w_rhs(v)
                    both, iters = solver.solve(np.column_stack([vb, rhs]))
                    self.w = (np.ascontiguousarray(both[:, 1:]), iters, rhs)
                    self._relative_mass(solver, vb, err, np.ascontiguousarray(both[:, 0]))
                else:
                    self._relative_mass(solver, vb, err)
            timer["visits"] = time.perf_counter() - t1
            t1 = time.perf_counter()
            self.wanted = [int(k) for k in np.argsort(-p, kind="stable")[:max(0, self.conditional)] if p[k] > 0]
            reached = int((p > 0).sum())
            note = (f"figures given the class the chain ends in: for the {len(self.wanted)} most likely of the "
                    f"{reached} classes it can end in (--given N, or conditional=N in Python, for more)")
            if len(self.wanted) < reached and note not in res.notes:
                res.notes.append(note)
            loose = [k for k, c in enumerate(res.classes) if p[k] > 0
                     and not c.bound <= self.precision * p[k]][:TIGHTEN_COLUMNS]
            fwd, reused = self._forward(base, None if ahead is None else ahead.result())
        if loose:  # classes whose bound is to be tightened: their columns join the block
            fwd, reused = self._forward(self._columns(loose))
        res.solver.append({**fwd.report, "reused": True} if reused else fwd.report)
        self.fwd = fwd
        self._moments(fwd, v, vb)
        self._tighten(fwd, v, vb, p, err, loose)
        self._given(fwd, v, vb, p, solver)
        timer["conditional"] = time.perf_counter() - t1
        t3 = time.perf_counter()
        for name, states in self.hits.items():
            res.hitting[name], hrep = hitting_probability(chain, states, target=target, precision=self.precision,
                                                          norm=self.fwd.norm, visits=visits)
            res.bounds[f"hitting {name}"] = hrep.pop("bound")
            res.solver.append({**hrep, "analysis": f"hitting {name}"})
        timer["hitting"] = time.perf_counter() - t3
        return self._failures()

    def _forward(self, columns: np.ndarray, solved: Any = None) -> tuple[Forward, bool]:
        """The forward block of these columns, solved once for every initial state that asks for the same (from
        :meth:`_solution`'s answer when given); and whether it was solved before."""
        key = columns.tobytes()
        fwd = self.forward.get(key)
        if fwd is not None:
            return fwd, True
        fwd = self.forward[key] = certified_forward(self.chain, solved if solved is not None
                                                    else forward_solution(self.chain, columns))
        return fwd, False

    def _solution(self, columns: np.ndarray) -> Any:
        """:func:`~markov_oca.analysis.moments.forward_solution` of these columns, None when already solved."""
        return None if columns.tobytes() in self.forward else forward_solution(self.chain, columns)

    def _absorption(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        chain, classes = self.chain, self.res.classes
        p, err = np.zeros(len(classes)), np.zeros(len(classes))
        if self.transient[chain.init]:
            into_classes(*chain.rows, 1.0 / chain.denom, v, self.class_of, p, err)
        else:
            p[self.class_of[chain.init]] = 1.0
        reach = reachable(chain, chain.init)
        total = self.res.solver[0]["residual_bound"]
        first = np.array([c.states[0] for c in classes], np.int64)
        bounds = np.where(reach[first], (total + 2 * err) * SLACK, 0.0).tolist()
        for c, x, b in zip(classes, np.clip(p, 0.0, 1.0).tolist(), bounds, strict=True):
            c.absorption, c.bound = x, b
            c.steps_given = c.steps_given_bound = None
        return p, err

    def _mass_solve(self, solver, b: np.ndarray,
                    y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``y = b N`` (``b >= 0``) on the visits' states (solved here unless given), its certified residual
        bound per state, and ``y . R_k`` for every class with the bound of that sum's rounding."""
        chain = self.chain
        if y is None:
            y, _ = solver.solve(b)
        _, yb = residual_bound(chain, solver.active, np.ascontiguousarray(y), b)
        a, ea = np.zeros(len(self.res.classes)), np.zeros(len(self.res.classes))
        into_classes(*chain.rows, 1.0 / chain.denom, np.ascontiguousarray(y), self.class_of, a, ea)
        return y, yb, a, ea

    def _relative_mass(self, solver, vb: np.ndarray, err: np.ndarray, y: np.ndarray | None = None) -> None:
        """Bounds relative to each class's own probability, for every class at once.

        The error of ``p_k = v . R_k`` is ``r . h_k`` (``r`` the visits' true residual, ``h_k = N R_k``), at
        most ``rb . h_k = (rb N) . R_k`` with ``rb >= |r|`` the certified bound per state: one more adjoint
        solve ``y = rb N`` answers every class. The computed ``y'`` is off by ``r_y N``, which adds at most
        ``||rb_y||_1`` (``h_k <= 1``). Where ``rb`` is small relative to the visits (a residual of rounding
        alone), the bound is small relative to ``p_k``, however small ``p_k`` is.
        """
        y, yb, a, ea = self._mass_solve(solver, vb, y)
        self.mass = (y, yb)
        tail = float(yb.sum()) * SLACK
        for k, c in enumerate(self.res.classes):
            if c.bound:
                rel = float(((a[k] + 2 * ea[k] + tail) * SLACK + 2 * err[k]) * SLACK)
                c.bound = min(c.bound, rel)

    def _columns(self, ks: list[int]) -> np.ndarray:
        """Step rewards, then the one-step chance into each class of ``ks``, as forward columns."""
        chain = self.chain
        cols = np.zeros((chain.n, len(self.values) + len(ks)))
        for i, r in enumerate(self.values.values()):
            cols[:, i] = np.where(self.transient, r, 0.0)
        if ks:
            col = np.full(len(self.res.classes) + 1, -1, np.int64)  # col[-1]: a state in no class
            col[ks] = np.arange(len(ks)) + len(self.values)
            _into_columns(*chain.rows, float(chain.denom), col[self.class_of], self.transient, cols)
        return cols

    def _moments(self, fwd: Forward, v: np.ndarray, vb: np.ndarray) -> None:
        chain, res = self.chain, self.res
        res.moments = {"steps": moment(chain, fwd, 0, None, v, vb)}
        res.steps, res.bounds["steps"] = res.moments["steps"].mean, res.moments["steps"].mean_bound
        res.rewards = {}
        for i, name in enumerate(self.values):
            m = moment(chain, fwd, 1 + i, branch_values(chain, self._rho(name)), v, vb)
            res.moments[name] = m
            res.rewards[name] = {"total": m.mean, "bound": m.mean_bound, "given": {}, "given_bound": {}}

    def _rho(self, name: str) -> np.ndarray:
        """The reward per state, or per branch, that :func:`_reward_values` took for ``name``."""
        chain = self.chain
        if name in self.extra:
            return self.values[name]
        if name in chain.branch_rewards:
            b = np.asarray(chain.branch_rewards[name])
            return b.view(np.uint8) if b.dtype == np.bool_ else b
        return np.asarray(chain.state_rewards[name])

    def _tighten(self, fwd: Forward, v, vb, p, err, ks: list[int]) -> None:
        """Bounds of the classes with a forward column: ``sum |r| min(1, h' + delta)`` (small where ``h`` is)."""
        if fwd.x is None:
            return
        base = 1 + len(self.values)
        for c, k in enumerate(ks):
            delta = fwd.delta(base + c)
            if not np.isfinite(delta) or self.res.classes[k].bound == 0.0:
                continue
            up = np.clip(fwd.x[:, base + c] + delta, 0.0, 1.0)
            self.res.classes[k].bound = min(self.res.classes[k].bound, float((vb @ up) * SLACK + 2 * err[k]))

    def _given(self, fwd: Forward, v, vb, p, solver) -> None:
        """Expected steps and rewards given the class the chain ends in, with the bounds of the ratios.

        ``E[T 1{k}] = v . h_k = (v N) . R_k`` (``R_k`` the one-step chance into class ``k``): one more
        adjoint solve, ``w = v N``, answers every class at once, and ``w_r = (v r) N`` each reward's.
        The error of ``w . R_k`` is ``r_v . (N h_k) + r_w . h_k`` (``r_v``, ``r_w`` the true residuals
        of the two solves), at most ``|r_v| . t + ||r_w||_1`` as ``0 <= h_k <= 1`` and ``N h_k <= t``.
        """
        chain, res = self.chain, self.res
        if not self.transient[chain.init]:
            if self.wanted:
                res.classes[self.wanted[0]].steps_given, res.classes[self.wanted[0]].steps_given_bound = 0.0, 0.0
                for r in res.rewards.values():
                    r["given"][res.classes[self.wanted[0]].name] = 0.0
                    r["given_bound"][res.classes[self.wanted[0]].name] = 0.0
            return
        if fwd.x is None or not self.wanted:
            return
        t_up = upper_steps(fwd.x[:, 0], fwd.res[:, 0], fwd.norm)
        slack = float(vb @ t_up) * SLACK
        rhos = [np.where(self.transient, r, 0.0) for r in self.values.values()]
        if self.w is not None:  # solved beside y = rb N
            w, iters, rhs = self.w
        else:
            rhs = self._w_rhs(v)
            w, iters = solver.solve(rhs)
        inv = 1.0 / chain.denom
        worst = 0.0
        for c in range(rhs.shape[1]):
            wr, wb = residual_bound(chain, solver.active, np.ascontiguousarray(w[:, c]),
                                    np.ascontiguousarray(rhs[:, c]))
            worst = max(worst, float(np.abs(wr).max(initial=0.0)))
            a, ea = np.zeros(len(res.classes)), np.zeros(len(res.classes))
            into_classes(*chain.rows, inv, np.ascontiguousarray(w[:, c]), self.class_of, a, ea)
            if c == 0:
                off = (slack + float(wb.sum())) * SLACK
                offs = self._relative_steps(solver, vb, wb, t_up) if any(
                    not meets(a[k] / p[k], ratio_bound(a[k], off + 2 * ea[k], p[k], res.classes[k].bound),
                              self.precision) for k in self.wanted) else None
            else:  # the product v r is rounded once more: U |v r| N |r| more
                big = float(np.abs(rhos[c - 1]).max(initial=0.0))
                off = (slack * big + float(wb.sum()) + U * float(np.abs(rhs[:, c]).sum()) * big * float(t_up.max()))
                off *= SLACK
            for k in self.wanted:
                cls = res.classes[k]
                o = min(off, offs[k]) if c == 0 and offs is not None else off
                got, bound = float(a[k]) / p[k], ratio_bound(a[k], o + 2 * ea[k], p[k], cls.bound)
                if c == 0:
                    cls.steps_given, cls.steps_given_bound = got, bound
                else:
                    name = list(self.values)[c - 1]
                    res.rewards[name]["given"][cls.name] = got
                    res.rewards[name]["given_bound"][cls.name] = bound
        res.solver.append({"analysis": f"steps and {rhs.shape[1] - 1} reward(s) given each class: v N", "method":
                           solver.method, "residual": worst, "iterations": int(iters)})

    def _w_rhs(self, v: np.ndarray) -> np.ndarray:
        """The right-hand sides of ``w = v N`` and ``w_r = (v r) N``, a column each."""
        rhos = [np.where(self.transient, r, 0.0) for r in self.values.values()]
        return np.stack([v] + [v * rh for rh in rhos], axis=1)

    def _relative_steps(self, solver, vb: np.ndarray, wb: np.ndarray, t_up: np.ndarray) -> np.ndarray:
        """Bounds of ``E[T 1{k}] = w . R_k`` (``w' `` solved from the computed visits ``v'``) relative to each
        class: the error is ``r . g_k + r_w . h_k`` (``g_k = N h_k``, ``r``, ``r_w`` the true residuals of the
        two solves), at most ``(rb N + rb_w) N . R_k``. With ``y' = rb N`` solved (off by ``r_y N``,
        ``|r_y| <= rb_y``) and ``z' = (y' + rb_w) N`` (off by ``rb_z N``), that is at most
        ``z' . R_k + ||rb_z||_1 + rb_y . t`` (``h_k <= 1``, ``g_k <= t``, the expected steps)."""
        if self.mass is None:
            self.mass = self._mass_solve(solver, vb)[:2]
        y, yb = self.mass
        second = float(yb @ t_up) * SLACK
        rhs = (np.maximum(y, 0.0) + wb) * (1 + 4 * U)
        _, zb, az, ez = self._mass_solve(solver, rhs)
        tail = float(zb.sum()) * SLACK
        return ((az + 2 * ez + tail + second) * SLACK).astype(np.float64)

    def _failures(self) -> list[str]:
        """The figures whose bound misses the precision (a variance: relative to its second moment)."""
        return list(self.res.misses(self.precision))


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


@numba.njit(cache=True, nogil=True)
def _into_columns(lo, hi, nxt, pnum, denom, col_of, transient, cols):
    """``cols[s, col_of[t]] += P(s -> t)`` over the branches of the transient states into a state whose
    ``col_of`` is a column (not -1)."""
    for s in range(n_states(lo, hi, nxt)):
        if not transient[s]:
            continue
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
            c = col_of[nxt[j]]
            if c >= 0:
                cols[s, c] += pnum[j] / denom
