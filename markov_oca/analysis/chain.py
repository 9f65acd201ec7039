"""A finite Markov chain in branch form and every analysis we run on one.

Every game compiles to a :class:`Chain`: for each state its branches (next
state and probability numerator over one common denominator), the seat to
move, the absorbing states that end the game (one per outcome), and the
events of each step as reward arrays (per state, such as a turn, or per
branch, such as a throw or a stake). The analyses here are written once for
all games: absorption probabilities, deadlock (closed classes with no
outcome), expected accumulated rewards (infinite where a deadlock keeps
accruing them, and conditional on the game ending), the distribution of the
game's length in turns, and hitting probabilities of events. ``exact.py`` has
the same analyses in rational arithmetic.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..core.errors import SolverError
from ..core.progress import Pacer
from ..linalg.certify import push_rounding
from ..linalg.hitting import hitting_block
from ..linalg.rows import Rows, padded_rows
from ..linalg.solve import DIRECT_LIMIT, LinearSystem, SolveReport, _adjoint_residual, _split_transposed, adjoint_solve
from .branches import (
    _branch_csr,
    _branch_step,
    _count_distinct,
    _flow_by_key,
    _flow_into,
    _forward_sweep,
    _length_pmf,
    classes_of,
    strong_classes,
)

VISITS_TAIL = 1e-6  # mass still in play at which the visits' forward pass hands over to the solve (the default
# tail of the length distribution, api.DEFAULT_TAIL: the pass gives that distribution too)
VISITS_TOL = 1e-13  # the hand-over solve's tolerance (its right-hand side is at most VISITS_TAIL)
# Every figure is a sum over the visits, so their error is the residual's 1-norm: chains of up to
# POLISH_LIMIT transitions get forward Gauss-Seidel sweeps after the solve, to a change of 1e-15.
POLISH_LIMIT = 20_000_000


@dataclass
class Structure:
    """How the states split: absorbing outcomes, deadlocked classes, transient."""

    absorbing: np.ndarray  # bool
    deadlock: np.ndarray  # bool: in a closed class without an outcome
    transient: np.ndarray  # bool
    deadlock_classes: int


@dataclass
class LengthDistribution:
    """The distribution of the number of turns a game lasts."""

    pmf: np.ndarray  # pmf[t] = P(game ends on turn t), t = 0, 1, ...
    never_ends: float  # P(deadlock)
    tail: float  # mass still in play when the computation stopped
    by_outcome: np.ndarray | None = None  # by_outcome[t, k] = P(outcome k on turn t), in Chain.outcomes order
    #: Relative rounding of every pushed mass (and so of ``pmf``): at most ``rounding * pmf[t]`` (0: not known).
    rounding: float = 0.0
    #: Mass that may be counted on another turn than its own, or not at all (a pass that lets tiny masses go):
    #: every pmf and cdf entry is off by at most this much more.
    misplaced: float = 0.0

    def truncated(self, tail: float) -> LengthDistribution | None:
        """The same distribution carried only until less than ``tail`` was left, when that can be told from
        this one (a game that always ends: the mass in play after turn t is what ends later); else None."""
        if self.never_ends != 0.0 or tail < self.tail:
            return None
        later = np.cumsum(self.pmf[::-1])[::-1]  # later[t] = P(the game ends on turn t or after)
        left = np.append(later[1:], 0.0) + self.tail  # mass in play after turn t
        t = int(np.argmax(left < tail)) if (left < tail).any() else self.pmf.size - 1
        by = self.by_outcome[:t + 1].copy() if self.by_outcome is not None else None
        return LengthDistribution(self.pmf[:t + 1].copy(), 0.0, float(left[t]), by_outcome=by, rounding=self.rounding,
                                  misplaced=self.misplaced)

    def outcome_within(self, turns: int) -> np.ndarray:
        """P(each outcome, reached within ``turns`` turns), in the order of ``Chain.outcomes``."""
        return self.by_outcome[: turns + 1].sum(axis=0)

    @property
    def cdf(self) -> np.ndarray:
        return np.cumsum(self.pmf)

    def mean(self) -> float:
        """Mean length of the games that end."""
        t = np.arange(self.pmf.size)
        ended = self.pmf.sum()
        return float((t * self.pmf).sum() / ended) if ended > 0 else float("inf")

    def quantile(self, q: float, given_end: bool = False) -> float:
        """Smallest t with P(length <= t) >= q (infinite when the game may never get there).

        With ``given_end``, the quantile of the length of the games that end.
        """
        cdf = self.cdf / (1.0 - self.never_ends) if given_end and self.never_ends < 1 else self.cdf
        idx = np.searchsorted(cdf, q - 1e-15)
        return float(idx) if idx < self.pmf.size else float("inf")


@dataclass
class Chain:
    """A Markov chain in branch form, and every analysis run on one.

    Each state has up to ``J`` branches: a next state and a probability numerator over one
    common denominator. Games compile to a chain with :func:`~markov_oca.build`; a chain of
    your own is most easily made with :func:`~markov_oca.from_matrix`.

    Parameters
    ----------
    next, pnum : array of int32, shape (n, J)
        Each branch's next state (-1 pads a row) and probability numerator.
    denom : int
        The common denominator of the probabilities.
    init : int
        The initial state.
    outcomes : mapping of str to int
        Each outcome's name and its absorbing state.
    players : int
        The number of seats.
    mover : array of int8, shape (n,)
        The seat to move in each state (0-based), -1 in outcome states.
    state_rewards, branch_rewards : mapping of str to array, optional
        Rewards earned at each step from a state (shape (n,), such as a turn), or on a branch
        (shape (n, J), such as a throw or a stake).
    turn_start : array of bool, shape (n,), optional
        Whether a step from each state begins a turn (every step when None).
    state_ids : array, optional
        The model's own id of each state.
    describe_state : callable, optional
        State number to a dict describing it (seat to move, pieces).
    sweep_order : array of int, optional
        The states in the order a Gauss-Seidel sweep visits them.
    reports : list, optional
        Deprecated: where solves put their reports when the caller passes no list of its own.

    Examples
    --------
    Throw a coin until heads: state 0 throws, state 1 (heads) ends the game.

    >>> import numpy as np
    >>> c = Chain(next=np.array([[0, 1], [1, -1]], np.int32), pnum=np.array([[1, 1], [2, 0]], np.int32),
    ...           denom=2, init=0, outcomes={"heads": 1}, players=1, mover=np.array([0, -1], np.int8))
    >>> c.outcome_probabilities()
    {'heads': 1.0, 'deadlock': 0.0}
    >>> c.expected({"throws": np.array([1, 0])})
    {'throws': (2.0, 2.0)}
    >>> c.P.toarray().tolist()
    [[0.5, 0.5], [0.0, 1.0]]
    """

    next: np.ndarray  # (n, J) int32, -1 pads a row
    pnum: np.ndarray  # (n, J) int32 probability numerators
    denom: int
    init: int
    outcomes: Mapping[str, int]  # outcome name -> absorbing state
    players: int
    mover: np.ndarray  # (n,) int8, seat to move (0-based), -1 for outcome states
    state_rewards: Mapping[str, np.ndarray] = field(default_factory=dict)  # (n,)
    branch_rewards: Mapping[str, np.ndarray] = field(default_factory=dict)  # (n, J)
    turn_start: np.ndarray | None = None  # (n,) bool: a step from here begins a turn
    state_ids: np.ndarray | None = None  # the model's own id of each state
    describe_state: Callable[[int], dict] | None = None
    sweep_order: np.ndarray | None = None  # states in the order a Gauss-Seidel sweep visits them
    # Deprecated: where solves put their reports when the caller passes no ``reports`` list of its own.
    # Callers pass ``reports=`` (or read ``absorption_report``); this field goes once none reads it.
    reports: list[SolveReport] = field(default_factory=list)
    _lengths: dict = field(default_factory=dict, repr=False, compare=False)
    _absorption_report: SolveReport | None = field(default=None, repr=False, compare=False)

    @property
    def n(self) -> int:
        nxt = self.__dict__.get("next")  # a chain that holds its rows packed has none until asked for it
        return int(nxt.shape[0] if nxt is not None else self.mover.shape[0])

    @functools.cached_property
    def rows(self) -> Rows:
        """The branches as :class:`~markov_oca.linalg.rows.Rows` (flat arrays and each state's span in them),
        the form the kernels that run on any chain read."""
        return padded_rows(self.next, self.pnum)

    @functools.cached_property
    def n_transitions(self) -> int:
        """Distinct (state, next state) pairs: the matrix's entries, counted without building it."""
        if "P" in self.__dict__:
            return int(self.P.nnz)
        return int(_count_distinct(self.next, np.zeros((1, 1), np.int8)))

    def describe(self, state: int) -> dict:
        """The decoded state (seat to move, pieces), or the outcome's name."""
        for name, idx in self.outcomes.items():
            if idx == state:
                return {"outcome": name}
        if self.describe_state is None or self.state_ids is None:
            return {"state": state}
        return self.describe_state(int(self.state_ids[state]))

    # ------------------------------------------------------------------ matrices

    @property
    def packed(self) -> bool:
        """Whether the chain holds its branches packed (:attr:`rows` as CSR, sorted and distinct within a row)
        rather than as a padded table: ``next`` and ``pnum`` are then built only when some analysis asks for
        them (:class:`~markov_oca.analysis.build.AnyChain` does this for a chain with very wide rows)."""
        return "next" not in self.__dict__

    @functools.cached_property
    def P(self) -> sp.csr_array:
        """The transition matrix (float), duplicates summed, columns sorted; built straight from the branches
        (12 bytes a transition, no intermediate triplets)."""
        if self.packed:
            return self.rows.matrix(self.denom)
        indptr, indices, data = _branch_csr(self.next, self.pnum, 1.0 / self.denom)
        return sp.csr_array((data, indices, indptr), shape=(self.n, self.n))

    def row_sums(self) -> np.ndarray:
        """Each row's probability numerators summed: all equal ``denom`` in a valid chain."""
        return np.where(self.next >= 0, self.pnum.astype(np.int64), 0).sum(axis=1)

    def step_reward(self, values: np.ndarray) -> np.ndarray:
        """Expected reward of one step from each state, for per-state or per-branch values."""
        if values.ndim == 1:
            return values.astype(np.float64)
        if values.dtype == np.bool_:
            values = values.view(np.uint8)
        return _branch_step(self.next, self.pnum, values, 1.0 / self.denom)

    # ------------------------------------------------------------------ structure

    @functools.cached_property
    def strong_classes(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~markov_oca.analysis.branches.strong_classes` of the chain, found once (on :attr:`P` when
        that is built already)."""
        if "P" in self.__dict__ or self.packed:
            return classes_of(self.P, self.rows)
        return strong_classes(self.next, self.pnum, self.denom)

    @functools.cached_property
    def structure(self) -> Structure:
        absorbing = np.zeros(self.n, bool)
        absorbing[list(self.outcomes.values())] = True
        label, closed = self.strong_classes
        has_outcome = np.zeros(closed.size, bool)
        has_outcome[label[absorbing]] = True
        dead_class = closed & ~has_outcome
        deadlock = dead_class[label]
        return Structure(absorbing, deadlock, ~absorbing & ~deadlock, int(dead_class.sum()))

    def order(self) -> np.ndarray:
        """Gauss-Seidel order: the model's (``sweep_order``), else the reverse of discovery."""
        if self.sweep_order is not None:
            return self.sweep_order
        return np.arange(self.n - 1, -1, -1)

    @functools.cached_property
    def system(self) -> LinearSystem:
        """``x = b + Q x`` on the transient states, factorised or ordered once."""
        return self.system_on(self.structure.transient)

    def system_on(self, active: np.ndarray) -> LinearSystem:
        """``x = b + Q x`` on the states ``active``, from the rows as the chain holds them."""
        if self.packed:
            return LinearSystem(None, None, self.denom, active, order=self.order(), rows=self.rows)
        return LinearSystem(self.next, self.pnum, self.denom, active, order=self.order())

    def _solve(self, b: np.ndarray, reports: list[SolveReport] | None) -> np.ndarray:
        x, report = self.system.solve(b)
        self._log(report, reports)
        return x

    def _log(self, report: SolveReport, reports: list[SolveReport] | None) -> None:
        (self.reports if reports is None else reports).append(report)

    def _cache_absorption(self, x: np.ndarray, report: SolveReport) -> np.ndarray:
        # A cached answer, not a change of the chain: the same query gives the same array.
        self.__dict__["absorption"] = x
        self._absorption_report = report
        return x

    # ------------------------------------------------------------------ analyses

    @functools.cached_property
    def absorption(self) -> np.ndarray:
        """(n, k + 1): from each state, the chance of each outcome and, last, of deadlock.

        Solved once and kept; :attr:`absorption_report` is that solve's report.
        """
        return self._absorption_solve(None)

    def _absorption_solve(self, reports: list[SolveReport] | None) -> np.ndarray:
        if "absorption" in self.__dict__:
            return self.__dict__["absorption"]
        x, report = self.system.solve(self._absorption_rhs())
        self._log(report, reports)
        return self._cache_absorption(self._absorption_from(x), report)

    @property
    def absorption_report(self) -> SolveReport:
        """The report (method, true residual, iterations) of the solve behind :attr:`absorption`."""
        _ = self.absorption
        return self._absorption_report

    def _absorption_rhs(self) -> np.ndarray:
        st = self.structure
        targets = list(self.outcomes.values())
        k = len(targets)
        target_col = np.full(self.n, -1, np.int64)
        for c, t in enumerate(targets):
            target_col[t] = c
        target_col[st.deadlock] = k
        b = np.zeros((self.n, k + 1))
        valid = self.next >= 0
        rows, js = np.nonzero(valid)
        cols = target_col[self.next[rows, js]]
        hit = (cols >= 0) & st.transient[rows]
        np.add.at(b, (rows[hit], cols[hit]), self.pnum[rows[hit], js[hit]] / self.denom)
        return b

    def _absorption_from(self, x: np.ndarray) -> np.ndarray:
        st = self.structure
        targets = list(self.outcomes.values())
        k = len(targets)
        for c, t in enumerate(targets):
            x[t, c] = 1.0
        x[st.deadlock, k] = 1.0
        return x

    def outcome_probabilities(self, reports: list[SolveReport] | None = None) -> dict[str, float]:
        """The chance of each outcome from the start, and of ``"deadlock"``.

        When the absorption is solved here, its report goes to ``reports`` (or the
        deprecated :attr:`reports` when none is given).
        """
        if "absorption" not in self.__dict__ and not self.structure.deadlock.any():
            # No deadlock: the chance of each outcome is the visits times the branches into it.
            v = np.where(self.structure.transient, self._visits_logged(reports), 0.0)
            col = np.full(self.n, -1, np.int64)
            col[list(self.outcomes.values())] = np.arange(len(self.outcomes))
            mass = _flow_into(self.next, self.pnum, 1.0 / self.denom, v, col, len(self.outcomes))
            init_out = col[self.init]
            if init_out >= 0:
                mass[init_out] = 1.0
            out = {name: float(mass[c]) for c, name in enumerate(self.outcomes)}
            out["deadlock"] = 0.0
            return out
        a = self._absorption_solve(reports)[self.init]
        out = {name: float(a[c]) for c, name in enumerate(self.outcomes)}
        out["deadlock"] = float(a[-1])
        return out

    @property
    def deadlock_probability(self) -> float:
        if not self.structure.deadlock.any():
            return 0.0
        return float(self.absorption[self.init, -1])

    def _visits_logged(self, reports: list[SolveReport] | None) -> np.ndarray:
        fresh = "_visits" not in self.__dict__
        v, report = self.expected_visits()
        if fresh:
            self._log(report, reports)
        return v

    def expected(self, values: Mapping[str, np.ndarray], given_end: bool | Collection[str] = True,
                 reports: list[SolveReport] | None = None) -> dict[str, tuple[float, float]]:
        """For each named reward: (expected total, expected total given the game ends).

        ``values`` are per-state ``(n,)`` or per-branch ``(n, J)`` arrays. The
        first figure is infinite when a reachable deadlock keeps paying the
        reward; the second conditions on the game ending (the Doob transform
        with the chance of ending), and is ``nan`` when the game never ends
        (or not asked for: ``given_end`` is False, or a collection of the names
        to condition). The solves' reports go to ``reports``.
        """
        st = self.structure
        names = list(values)
        if not names:
            return {}
        if not st.deadlock.any():
            # The game ends with certainty: every total is the expected visits times the step reward,
            # one adjoint solve for all of them (and for the outcomes), whatever the number of rewards;
            # one reward at a time, so that no (states x rewards) block is ever held.
            v = np.where(st.transient, self._visits_logged(reports), 0.0)
            out = {}
            for k in names:
                t = float(v @ self.step_reward(values[k]))
                out[k] = (t, t)
            return out
        step = np.column_stack([self.step_reward(values[k]) for k in names])
        infinite = (step[st.deadlock] > 0).any(axis=0) if st.deadlock.any() else np.zeros(len(names), bool)
        b = np.where(st.transient[:, None], step, 0.0)
        if "absorption" not in self.__dict__:
            # One block solve for the absorption and these rewards: the passes are memory-bound.
            ab = self._absorption_rhs()
            both, report = self.system.solve(np.hstack([ab, b]))
            self._log(report, reports)
            self._cache_absorption(self._absorption_from(both[:, :ab.shape[1]].copy()), report)
            x = both[:, ab.shape[1]:]
        else:
            x = self._solve(b, reports)
        ends = self.absorption[:, :-1].sum(axis=1)
        total = x[self.init]
        wanted = names if given_end is True else [k for k in names if given_end and k in given_end]
        g = np.full_like(x, np.nan)
        if not st.deadlock.any():
            g[:, :] = x  # the game ends with certainty: nothing to condition on
        elif wanted:
            # E[R 1{end}]: a per-state reward weighs the chance of ending from there,
            # a per-branch reward the chance of ending from where the branch goes.
            cols = [names.index(k) for k in wanted]
            cond_b = np.zeros((self.n, len(cols)))
            pn = np.where(self.next >= 0, self.pnum, 0) / self.denom
            nxt_end = ends[np.maximum(self.next, 0)]
            for c, k in enumerate(wanted):
                v = values[k]
                cond_b[:, c] = v * ends if v.ndim == 1 else (pn * v * nxt_end).sum(axis=1)
            cond_b[~st.transient] = 0.0
            g[:, cols] = self._solve(cond_b, reports)
        p_end = ends[self.init]
        out = {}
        for c, k in enumerate(names):
            t = float("inf") if infinite[c] else float(total[c])
            cond = float(g[self.init, c] / p_end) if p_end > 0 else float("nan")
            out[k] = (t, cond)
        return out

    def hitting_probabilities(self, key: np.ndarray, table: np.ndarray,
                              reports: list[SolveReport] | None = None) -> np.ndarray:
        """The chance, from the start, that each event ever happens.

        Event ``c`` is the set of branches ``(s, j)`` with ``key[s, j] >= 0`` and
        ``table[key[s, j], c]`` (see :mod:`markov_oca.hitting`); all events are
        solved together, at the cost of one right-hand side per event. The report
        goes to ``reports``.
        """
        x, residual, iters = hitting_block(self.system, key, table, self.init)
        self._log(SolveReport(f"block BiCGSTAB, {table.shape[1]} events", residual, iters), reports)
        return x

    @functools.cached_property
    def _visits(self) -> tuple[np.ndarray, SolveReport]:
        e = np.zeros(self.n)
        e[self.init] = 1.0
        active = self.structure.transient
        if not active[self.init]:
            return np.zeros(self.n), SolveReport("none", 0.0, 0)
        if int(active.sum()) <= DIRECT_LIMIT:
            return adjoint_solve(self.next, self.pnum, self.denom, active, self.order(), e)
        # The length distribution's forward pass visits every state anyway: it sums the visits of the
        # turns it plays (and is kept for the length asked with the same tail), and only what is still
        # in play when it stops, mass VISITS_TAIL at most, is left to the adjoint solve: a few iterations.
        dist, acc, rest = self._length_pass(VISITS_TAIL, 1_000_000, visits=True)
        self._lengths.setdefault((VISITS_TAIL, 1_000_000), dist)
        more, report = adjoint_solve(self.next, self.pnum, self.denom, active, self.order(), rest,
                                     tol=VISITS_TOL)
        v = acc + more
        v[~active] = 0.0
        sweeps = self._polish(v, active) if self.n_transitions <= POLISH_LIMIT else 0
        b = e.reshape(-1, 1)
        residual = float(_adjoint_residual(self.rows, 1.0 / self.denom, active, b, v.reshape(-1, 1)))
        if not residual <= 1e-9:
            raise SolverError(f"expected visits: residual {residual:.3g} is too large")
        polish = f", {sweeps} forward Gauss-Seidel sweeps" if sweeps else ""
        return v, SolveReport(f"forward pass of {dist.pmf.size - 1} turns, then {report.method}{polish}", residual,
                              report.iterations + sweeps)

    def visits_by_sweeps(self, tol: float = 1e-15, max_sweeps: int = 5_000) -> tuple[np.ndarray, SolveReport]:
        """Expected visits by forward Gauss-Seidel sweeps from zero, in race order, to a change of ``tol``.

        Slower than :meth:`expected_visits` on long games, but each sweep carries the mass
        the whole way along a race that only moves forward, so it reaches a change of
        1e-15 where a Krylov solve stops at its tolerance (the points game's figures are
        compared with its other solves to 1e-11).
        """
        active = self.structure.transient
        v = np.zeros(self.n)
        if not active[self.init]:
            return v, SolveReport("none", 0.0, 0)
        sweeps = self._polish(v, active, tol, max_sweeps)
        e = np.zeros((self.n, 1))
        e[self.init] = 1.0
        residual = float(_adjoint_residual(self.rows, 1.0 / self.denom, active, e, v.reshape(-1, 1)))
        return v, SolveReport("forward Gauss-Seidel sweeps (expected visits)", residual, sweeps)

    def _polish(self, v: np.ndarray, active: np.ndarray, tol: float = 1e-15, max_sweeps: int = 200) -> int:
        """Forward Gauss-Seidel sweeps of ``v = e_init + Q^T v`` in race order from ``v`` (in place).

        The transpose is split straight from the branches in sweep order (12 bytes an
        entry, nothing else held: no float matrix, no copy of it)."""
        order = self.order()
        ids = order[active[order]][::-1].astype(np.int64)  # with the race
        pos = np.full(self.n, -1, np.int64)
        pos[ids] = np.arange(ids.size)
        lp, lx, lv, up, ux, uv, d = _split_transposed(self.next, self.pnum, np.int64(self.denom), active, ids, pos)
        x = v[ids].copy()
        start = int(pos[self.init])
        sweeps = 0
        while sweeps < max_sweeps:
            change = _forward_sweep(lp, lx, lv, up, ux, uv, d, start, x)
            sweeps += 1
            if change <= tol * max(1.0, float(x.max(initial=0.0))):
                break
        v[ids] = x
        return sweeps

    def expected_visits(self) -> tuple[np.ndarray, SolveReport]:
        """Expected number of visits to each transient state from the start, and the solve's report.

        ``v = e_init + Q^T v``, kept (later calls return the same array; do not
        write to it). Beyond ``DIRECT_LIMIT`` states the length distribution's
        forward pass sums the visits of the turns it plays (to ``VISITS_TAIL`` of
        the mass in play; that distribution is kept for ``length_distribution``
        with the same tail) and an adjoint solve adds the rest; the report's
        residual is the true one of the whole. Outcome and deadlocked states get 0 here:
        every expected total is ``v`` times the reward of one step from each
        transient state, so one solve serves every reward, every square and seat.
        """
        return self._visits

    def expected_landings(self, key: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, SolveReport]:
        """Expected number of times each event happens from the start, from one adjoint solve.

        Events are given as in :meth:`hitting_probabilities` (``key[s, j]`` indexes a
        row of ``table[key, column]``), so for the landings of a seat
        (:meth:`GooseModel.landing_events`) column ``q`` is the expected number of
        its landings on square ``q``. An event that a reachable deadlock keeps
        repeating has an infinite count.
        """
        visits, report = self.expected_visits()
        st = self.structure
        keys_w, dead_keys = _flow_by_key(self.next, self.pnum, 1.0 / self.denom, visits, key, st.deadlock,
                                         table.shape[0])
        out = keys_w @ table.astype(np.float64)
        if st.deadlock.any():
            # every state of a built chain is reachable, so a deadlocked class is reached
            out = np.where(table[dead_keys].any(axis=0), np.inf, out)
        return out, report

    def length_distribution(self, tail: float = 1e-12, max_turns: int = 1_000_000) -> LengthDistribution:
        """Distribution of the number of turns until the game ends, to ``tail`` mass still in play.

        Computed once per ``(tail, max_turns)`` and kept: reports and cross-checks ask again.
        """
        cached = self._lengths.get((tail, max_turns))
        if cached is not None:
            return cached
        for (_, m_c), d in list(self._lengths.items()):
            cut = d.truncated(tail) if m_c == max_turns else None
            if cut is not None:  # a finer one is known: the same pass stopped earlier
                self._lengths[(tail, max_turns)] = cut
                return cut
        dist, _, _ = self._length_pass(tail, max_turns, visits=False)
        self._lengths[(tail, max_turns)] = dist
        return dist

    def _length_pass(self, tail: float, max_turns: int,
                     visits: bool) -> tuple[LengthDistribution, np.ndarray, np.ndarray]:
        """The length distribution, with the visits summed on the way and the mass still in play."""
        st = self.structure
        turn_start = np.ones(self.n, bool) if self.turn_start is None else self.turn_start
        is_outcome = np.zeros(self.n, bool)
        is_outcome[list(self.outcomes.values())] = True
        outcome_of = np.full(self.n, -1, np.int64)
        outcome_of[list(self.outcomes.values())] = np.arange(len(self.outcomes))
        pmf = np.zeros((1024, len(self.outcomes)))
        acc = np.zeros(self.n if visits else 0)
        v, w, mid = np.zeros(self.n), np.zeros(self.n), np.zeros(self.n)
        v[self.init] = 1.0
        state = np.array([0.0, 0.0, 1.0, 0.0])  # turns played, mass deadlocked, mass still in play, pushes
        mid_turn = st.transient & ~turn_start
        # Turns go in blocks of about a tenth of a second, so that Ctrl-C is seen between them.
        pacer = Pacer(first=8, seconds=0.1)
        while True:
            t0 = time.perf_counter()
            upto = min(int(state[0]) + pacer.size, max_turns)
            pmf, done = _length_pmf(self.next, self.pnum, 1.0 / self.denom, mid_turn, outcome_of, st.deadlock,
                                    tail, upto, pmf, acc, v, w, mid, state)
            if done or upto >= max_turns:
                break
            pacer.took(time.perf_counter() - t0)
        t = int(state[0])
        pmf = pmf[:t + 1].copy()
        dist = LengthDistribution(pmf.sum(axis=1), float(state[1]), float(state[2]), by_outcome=pmf,
                                  rounding=push_rounding(self.next, int(state[3])))
        return dist, acc, v


















