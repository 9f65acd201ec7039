"""The Chain analyses in exact rational arithmetic.

:class:`ExactChain` answers the same questions as :class:`~markov_oca.chain.Chain`
(outcome probabilities, deadlock, expected rewards with and without the
condition that the game ends, hitting probabilities of events) as
:class:`fractions.Fraction` values. The chain's probabilities are integers over
one denominator ``D``, so every system ``(I - Q) x = b`` becomes the integer
system ``(D I - D Q) x = D b``. It chooses its solver by the number of transient
states (``docs/exact.md``):

* up to :data:`DENSE_LIMIT`, python-flint's dense ``fmpq_mat.solve`` (FLINT's
  fraction-free/multimodular solvers; milliseconds on a 100-square board);
* above, up to :data:`EXACT_LIMIT`, :mod:`markov_oca.rational.sparse`: one sparse LU
  modulo a word prime, Dixon p-adic lifting of the initial state's entries,
  rational reconstruction, and a certificate that the whole solution is exact.
  The sparse path solves every system the questions need at once (outcomes,
  deadlock, totals and the totals conditioned on the end, which are coupled to
  the chance of ending) and keeps only the initial state's values.

Larger chains are refused up front with an estimate of the time and memory.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from fractions import Fraction

import flint
import numpy as np
import scipy.sparse as sp

from ..core.errors import TooLargeError
from .chain import Chain

DENSE_LIMIT = 1_000  # transient states up to which the dense FLINT solve is used
EXACT_LIMIT = 100_000  # transient states up to which exact mode solves at all
METHODS = ("auto", "dense", "sparse", "refine", "dixon")  # sparse: refine or dixon, by the estimated memory
REFINE_MEMORY = 1.5 * 2**30  # bytes of refinement digits and proof above which the sparse path lifts p-adically


def _to_fraction(q: flint.fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


BITS_PER_STATE = 5.0  # bits of the answers per transient state, measured 1.9 to 7.3 (docs/exact.md)


def _refine_digit_bytes(n: int, columns: int) -> float:
    """The refinement's memory beyond the LU: its digits (half the rows, 8 bytes and 48 bits a step) and,
    at the proof, four (n, K) int64 limb arrays for denominators of about half the bits (24 bits a limb).
    S&L-48: 0.49 GB predicted, 0.62 GB peak RSS of the whole process measured."""
    digits = 8.0 * (n / 2) * columns * (BITS_PER_STATE * n / 48)
    limbs = 4 * 8.0 * n * (BITS_PER_STATE * n / 2 / 24)
    return digits + limbs


def sparse_estimate(n: int, nnz: int, denom: int, columns: int = 4) -> tuple[float, float, str]:
    """Rough (seconds, bytes, solver) of a sparse exact solve of ``n`` transient states (``docs/exact.md``).

    Measured on the two-player boards: the LU's fill is 2 to 3.4 ``n**1.5`` nonzeros;
    the answers take 1.9 to 7.3 bits per state (:data:`BITS_PER_STATE`). The
    numeric refinement gains 48 bits a step, a pass over the LU per four columns at
    about 4 ns an entry (loaded machine), and keeps its digits (the memory that
    decides between it and the p-adic lifting: :data:`REFINE_MEMORY`); the lifting
    takes 26 bits a step and half as many again for its certificate, a pass per two
    columns at about 5 ns an entry, with about 40 bytes per nonzero of the LU.
    """
    del denom  # the bits per state were measured about the same for denominators 6 to 6,720
    fill = max(3.0 * n ** 1.5, 10.0 * nnz)
    bits = BITS_PER_STATE * n
    digits = _refine_digit_bytes(n, columns)
    if digits <= REFINE_MEMORY:
        return bits / 48 * math.ceil(columns / 4) * fill * 4e-9, digits + 24.0 * fill, "refine"
    return 1.5 * bits / 26 * math.ceil(columns / 2) * fill * 5e-9, 40.0 * fill, "dixon"


class ExactChain:
    """Exact analyses of a :class:`Chain`, in fractions (see the module docstring).

    Parameters
    ----------
    chain : Chain
        The chain; its probabilities are integers over one denominator, so every answer is a
        fraction.
    method : {"auto", "dense", "sparse", "refine", "dixon"}
        The solver: dense FLINT up to ``DENSE_LIMIT`` transient states and a sparse one above
        (``"auto"``), or the one named.

    Raises
    ------
    TooLargeError
        More than ``EXACT_LIMIT`` transient states (with the estimated time and memory).
    ValueError
        An unknown ``method``.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> import numpy as np
    >>> from markov_oca import from_matrix
    >>> c = from_matrix([[1, 0, 0], [F(1, 4), F(1, 4), F(1, 2)], [0, 0, 1]], init=1,
    ...                 labels={"lost": [0], "won": [2]})
    >>> e = ExactChain(c)
    >>> e.outcome_probabilities()
    {'lost': Fraction(1, 3), 'won': Fraction(2, 3), 'deadlock': Fraction(0, 1)}
    >>> e.expected({"steps": np.array([0, 1, 0])})  # (total, total given the end)
    {'steps': (Fraction(4, 3), Fraction(4, 3))}
    >>> ExactChain(c, method="dixon").outcome_probabilities() == e.outcome_probabilities()
    True
    """

    def __init__(self, chain: Chain, method: str = "auto"):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        st = chain.structure
        self.chain = chain
        self.ids = np.flatnonzero(st.transient)
        n = self.ids.size
        if n > EXACT_LIMIT:
            secs, mem, _ = sparse_estimate(n, int(chain.P.nnz), chain.denom)
            raise TooLargeError(
                f"exact mode solves chains of up to {EXACT_LIMIT:,} transient states; this one has {n:,} "
                f"(estimated {_duration(secs)} and {mem / 2**30:.1f} GiB; drop --exact for the floating-point solve)"
            )
        self.method = method
        self.sparse = method in ("sparse", "refine", "dixon") or (method == "auto" and n > DENSE_LIMIT)
        self.pos = np.full(chain.n, -1, np.int64)
        self.pos[self.ids] = np.arange(n)
        self._absorption: list | None = None
        self._solver = None  # the sparse LU of D (I - Q), built on first use
        self._init_outcomes: dict[str, Fraction] | None = None
        self.reports: list = []

    # --------------------------------------------------------------- linear algebra

    def _matrix(self, stop: np.ndarray | None = None) -> flint.fmpq_mat:
        c = self.chain
        n = self.ids.size
        rows = [[0] * n for _ in range(n)]
        for i, s in enumerate(self.ids):
            row = rows[i]
            row[i] += c.denom
            for j in range(c.next.shape[1]):
                t = int(c.next[s, j])
                if t < 0:
                    break
                if stop is not None and stop[s, j]:
                    continue
                k = self.pos[t]
                if k >= 0:
                    row[k] -= int(c.pnum[s, j])
        return flint.fmpq_mat(rows)

    def _solve(self, columns: list[list], stop: np.ndarray | None = None) -> list[list[Fraction]]:
        """Solve ``(D I - D Q) X = D B`` for ``B`` given column by column (rationals, transient order)."""
        n = self.ids.size
        if n == 0 or not columns:
            return [[Fraction(0)] * n for _ in columns]
        d = self.chain.denom
        b = flint.fmpq_mat(n, len(columns))
        for c, col in enumerate(columns):
            for i, v in enumerate(col):
                if v:
                    b[i, c] = flint.fmpq(v.numerator * d, v.denominator) if isinstance(v, Fraction) else v * d
        x = self._matrix(stop).solve(b)
        return [[_to_fraction(x[i, c]) for i in range(n)] for c in range(len(columns))]

    def _step(self, values: np.ndarray, weights: list[Fraction] | None = None) -> list[Fraction]:
        """Expected reward of one step from each transient state, optionally weighting branch targets."""
        c = self.chain
        out = []
        for s in self.ids:
            if values.ndim == 1:
                v = Fraction(int(values[s])) if values.dtype != np.float64 else Fraction(values[s])
                out.append(v * (weights[s] if weights is not None else 1))
                continue
            acc = Fraction(0)
            for j in range(c.next.shape[1]):
                t = int(c.next[s, j])
                if t < 0:
                    break
                v = int(values[s, j])
                if v:
                    w = weights[t] if weights is not None else 1
                    acc += Fraction(int(c.pnum[s, j]) * v, c.denom) * w
            out.append(acc)
        return out

    # --------------------------------------------------------------- the sparse path

    def _branches(self, stop: np.ndarray | None = None) -> sp.csr_array:
        """(n, n) integer matrix of the branch numerators, stopped branches left out."""
        c = self.chain
        rows = np.repeat(np.arange(c.n), c.next.shape[1])
        keep = c.next.ravel() >= 0
        if stop is not None:
            keep &= ~np.asarray(stop, bool).ravel()
        m = sp.coo_array((c.pnum.ravel()[keep].astype(np.int64), (rows[keep], c.next.ravel()[keep].astype(np.int64))),
                         shape=(c.n, c.n)).tocsr()
        m.sum_duplicates()
        return m

    def _int_matrix(self, stop: np.ndarray | None = None) -> sp.csr_array:
        """``D I - D Q`` on the transient states (integers)."""
        q = self._branches(stop)[self.ids][:, self.ids]
        return sp.csr_array(self.chain.denom * sp.identity(self.ids.size, dtype=np.int64, format="csr") - q)

    def _use_refine(self, columns: int = 8) -> bool:
        """The numeric-refinement solver keeps its digits and the proof's limbs: used while they fit
        ``REFINE_MEMORY`` (counted for 8 columns: the goose solve asks up to 15, the benchmarks 2 to 10)."""
        if self.method in ("refine", "dixon"):
            return self.method == "refine"
        return _refine_digit_bytes(self.ids.size, columns) <= REFINE_MEMORY

    def _sparse_solver(self):
        from ..rational.sparse import DixonSolver, RefineSolver

        if self._solver is None:
            # eliminate first the states of the seat with the most of them: its throws hand the move on
            mover = self.chain.mover[self.ids]
            seats = np.bincount(np.maximum(mover, 0))
            prefer = (mover != int(np.argmax(seats))).astype(np.int64)
            kind = RefineSolver if self._use_refine() else DixonSolver
            self._solver = kind(self._int_matrix(), prefer=prefer)
            self.reports.append(self._solver.report)
        return self._solver

    def _absorption_columns(self) -> np.ndarray:
        """(n_transient, k + 1) integers: ``D`` times the one-step chance of each outcome, and of deadlock."""
        c = self.chain
        st = c.structure
        m = self._branches()[self.ids]
        cols = [m[:, [t]].toarray().ravel() for t in c.outcomes.values()]
        dead = np.flatnonzero(st.deadlock)
        cols.append(np.asarray(m[:, dead].sum(axis=1)).ravel() if dead.size else np.zeros(self.ids.size, np.int64))
        return np.column_stack(cols).astype(np.int64)

    def _int_values(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values)
        if v.dtype.kind == "f":
            if not np.array_equal(v, np.round(v)):
                raise ValueError("the sparse exact solve takes integer rewards")
            v = np.round(v)
        return v.astype(np.int64)

    def _reward_column(self, values: np.ndarray) -> np.ndarray:
        """``D`` times the expected reward of one step from each transient state (integers)."""
        c = self.chain
        v = self._int_values(values)
        if v.ndim == 1:
            return c.denom * v[self.ids]
        live = c.next[self.ids] >= 0
        return np.where(live, c.pnum[self.ids].astype(np.int64) * v[self.ids], 0).sum(axis=1)

    def _end_coupling(self, values: np.ndarray) -> tuple[np.ndarray, sp.csr_array]:
        """``D`` times the reward weighted by the chance of ending, as ``b + C e`` (``e`` on transient states)."""
        c = self.chain
        st = c.structure
        v = self._int_values(values)
        n = self.ids.size
        if v.ndim == 1:
            diag = (c.denom * v[self.ids], (np.arange(n), np.arange(n)))
            return np.zeros(n, np.int64), sp.csr_array(diag, shape=(n, n))
        nxt = c.next[self.ids]
        w = np.where(nxt >= 0, c.pnum[self.ids].astype(np.int64) * v[self.ids], 0)
        tgt = np.maximum(nxt, 0)
        ends_here = np.zeros(c.n, bool)
        ends_here[list(c.outcomes.values())] = True
        b = np.where(ends_here[tgt], w, 0).sum(axis=1)
        local = self.pos[tgt]
        keep = (w != 0) & (local >= 0)
        rows = np.broadcast_to(np.arange(n)[:, None], w.shape)
        C = sp.coo_array((w[keep], (rows[keep], local[keep])), shape=(n, n)).tocsr()
        C.sum_duplicates()
        del st
        return b.astype(np.int64), sp.csr_array(C)

    def _sparse_batch(self, plain: list[np.ndarray], coupled: list[tuple[np.ndarray, sp.csr_array]],
                      sources: list[int], absorbing: int = 0) -> list[Fraction]:
        """Solve signed columns at the initial state: plain ones, then ones coupled to the sum of ``sources``.

        For :class:`~markov_oca.rational.dixon.DixonSolver` a column with negative
        entries is split into its positive and negative parts (the lifting's
        certificate needs nonnegative solutions). For the refinement solver, when the
        first ``absorbing`` plain columns are every way of ending (outcomes, then
        deadlock) and add up to ``A 1`` exactly (checked), one outcome is not solved
        but taken as 1 minus the others: ``A x = A 1`` has the one solution 1.
        """
        from ..rational.sparse import Coupling, RefineSolver

        solver = self._sparse_solver()
        if isinstance(solver, RefineSolver):  # signed columns as they are
            return self._refine_batch(solver, plain, coupled, sources, absorbing)
        cols, signs, owner = [], [], []
        at: dict[int, int] = {}  # a source's column in the solve
        for i, b in enumerate(plain):
            for sign, part in ((1, np.maximum(b, 0)), (-1, np.maximum(-b, 0))):
                if part.any() or (sign == 1 and i in sources):
                    at[i] = len(cols)
                    cols.append(part)
                    signs.append(sign)
                    owner.append(i)
        couplings = []
        src_cols = [at[i] for i in sources]
        for i, (b, C) in enumerate(coupled):
            cpos, cneg = sp.csr_array(C.maximum(0)), sp.csr_array((-C).maximum(0))
            cpos.eliminate_zeros()
            cneg.eliminate_zeros()
            for sign, bp, cp in ((1, np.maximum(b, 0), cpos), (-1, np.maximum(-b, 0), cneg)):
                if bp.any() or cp.nnz:
                    cols.append(bp)
                    couplings.append(Coupling(cp, src_cols))
                    signs.append(sign)
                    owner.append(len(plain) + i)
        out = [Fraction(0)] * (len(plain) + len(coupled))
        if not cols:
            return out
        x = solver.solve(np.column_stack(cols), np.array([self.pos[self.chain.init]]), couplings)
        for col, sign, i in zip(x, signs, owner, strict=True):
            out[i] += sign * col[0]
        return out

    def _refine_batch(self, solver, plain, coupled, sources, absorbing) -> list[Fraction]:
        from ..rational.sparse import Coupling

        out = [Fraction(0)] * (len(plain) + len(coupled))
        if not plain and not coupled:
            return out
        n = self.ids.size
        drop = -1
        if absorbing and np.array_equal(solver.A_orig @ np.ones(n, np.int64), np.sum(plain[:absorbing], axis=0)):
            live = [c for c in range(absorbing - 1) if plain[c].any()]
            drop = live[-1] if live else -1
        keep = [c for c in range(len(plain)) if c != drop]
        at = {c: i for i, c in enumerate(keep)}
        cols = [np.asarray(plain[c], np.int64) for c in keep]
        couplings = []
        for b, C in coupled:
            C = sp.csr_array(C, dtype=np.int64)
            if drop in sources:
                # the sum of the sources is 1 minus the other ways of ending: b + C 1 - C (those columns)
                others = [c for c in range(absorbing) if c not in sources and c != drop]
                cols.append(np.asarray(b, np.int64) + C @ np.ones(n, np.int64))
                couplings.append(Coupling(sp.csr_array(-C), [at[c] for c in others]))
            else:
                cols.append(np.asarray(b, np.int64))
                couplings.append(Coupling(C, [at[c] for c in sources]))
        x = solver.solve(np.column_stack(cols), np.array([self.pos[self.chain.init]]), couplings)
        vals = [col[0] for col in x]
        for c in keep:
            out[c] = vals[at[c]]
        for i in range(len(coupled)):
            out[len(plain) + i] = vals[len(keep) + i]
        if drop >= 0:
            out[drop] = 1 - sum((out[c] for c in range(absorbing) if c != drop), Fraction(0))
        return out

    def _sparse_outcomes(self) -> dict[str, Fraction]:
        if self._init_outcomes is None:
            absorb = list(self._absorption_columns().T)
            self._init_outcomes = self._outcomes_from(self._sparse_batch(absorb, [], [], len(absorb)))
        return self._init_outcomes

    def _outcomes_from(self, vals: list[Fraction]) -> dict[str, Fraction]:
        out = {name: vals[i] for i, name in enumerate(self.chain.outcomes)}
        out["deadlock"] = vals[len(self.chain.outcomes)]
        return out

    def _init_terminal(self) -> dict[str, Fraction]:
        """The outcome chances when the game starts in an absorbing or deadlocked state."""
        c = self.chain
        out = {name: Fraction(int(t == c.init)) for name, t in c.outcomes.items()}
        out["deadlock"] = Fraction(int(bool(c.structure.deadlock[c.init])))
        return out

    def _sparse_expected(self, values: Mapping[str, np.ndarray], given_end) -> dict[str, tuple]:
        c = self.chain
        st = c.structure
        names = list(values)
        wanted = names if given_end is True else [k for k in names if given_end and k in given_end]
        dead_ids = np.flatnonzero(st.deadlock)
        k = len(c.outcomes)
        if self.pos[c.init] < 0:
            outcomes = self._init_terminal()
            self._init_outcomes = outcomes
            p_end = 1 - outcomes["deadlock"]
            return {name: (Fraction(0), Fraction(0) if p_end else float("nan")) for name in names}
        absorb = list(self._absorption_columns().T)
        plain = absorb + [self._reward_column(values[name]) for name in names]
        coupled = [self._end_coupling(values[name]) for name in wanted] if dead_ids.size else []
        vals = self._sparse_batch(plain, coupled, list(range(k)), len(absorb))
        self._init_outcomes = self._outcomes_from(vals[:k + 1])
        totals = dict(zip(names, vals[k + 1:k + 1 + len(names)], strict=True))
        cond = dict(zip(wanted, vals[k + 1 + len(names):], strict=True)) if dead_ids.size else totals
        p_end = sum(vals[:k], Fraction(0))
        out: dict[str, tuple] = {}
        for name in names:
            step_dead = c.step_reward(values[name])[dead_ids] if dead_ids.size else np.zeros(0)
            total = float("inf") if (step_dead > 0).any() else totals[name]
            given = (cond[name] / p_end if name in cond else float("nan")) if p_end else float("nan")
            out[name] = (total, given)
        return out

    def _sparse_hitting(self, key: np.ndarray, table: np.ndarray) -> list[Fraction]:

        c = self.chain
        i0 = self.pos[c.init]
        out = []
        base = self._sparse_solver()
        for col in range(table.shape[1]):
            ev = (key >= 0) & table[np.maximum(key, 0), col]
            b = self._reward_column(ev.astype(np.int64))
            if not b.any() or i0 < 0:
                out.append(Fraction(0))
                continue
            solver = type(base)(self._int_matrix(stop=ev), like=base)
            self.reports.append(solver.report)
            out.append(solver.solve(b[:, None], np.array([i0]))[0][0])
        return out

    # --------------------------------------------------------------- analyses

    def absorption(self) -> list[list[Fraction]]:
        """For every state of the chain, the chance of each outcome and, last, of deadlock.

        On the sparse path this reconstructs every state's fractions: far slower
        than :meth:`outcome_probabilities`, which needs only the initial state's.
        """
        c = self.chain
        st = c.structure
        targets = list(c.outcomes.values())
        k = len(targets)
        if self.sparse:
            sol = self._sparse_solver().solve(self._absorption_columns(), None) if self.ids.size else \
                [[] for _ in range(k + 1)]
        else:
            col_of = {t: i for i, t in enumerate(targets)}
            cols = [[Fraction(0)] * self.ids.size for _ in range(k + 1)]
            for i, s in enumerate(self.ids):
                for j in range(c.next.shape[1]):
                    t = int(c.next[s, j])
                    if t < 0:
                        break
                    col = col_of.get(t, k if st.deadlock[t] else -1)
                    if col >= 0:
                        cols[col][i] += Fraction(int(c.pnum[s, j]), c.denom)
            sol = self._solve(cols)
        full = [[Fraction(0)] * (k + 1) for _ in range(c.n)]
        for i, s in enumerate(self.ids):
            for col in range(k + 1):
                full[s][col] = sol[col][i]
        for col, t in enumerate(targets):
            full[t][col] = Fraction(1)
        for s in np.flatnonzero(st.deadlock):
            full[s][k] = Fraction(1)
        return full

    def _absorb(self) -> list[list[Fraction]]:
        if self._absorption is None:
            self._absorption = self.absorption()
        return self._absorption

    def outcome_probabilities(self) -> dict[str, Fraction]:
        """The exact chance of each outcome from the start, and of ``"deadlock"``."""
        if self.sparse:
            if self.pos[self.chain.init] < 0:
                return self._init_terminal()
            return dict(self._sparse_outcomes())
        a = self._absorb()[self.chain.init]
        out = {name: a[i] for i, name in enumerate(self.chain.outcomes)}
        out["deadlock"] = a[-1]
        return out

    def expected(self, values: Mapping[str, np.ndarray],
                 given_end: bool | Collection[str] = True) -> dict[str, tuple[Fraction | float, Fraction | float]]:
        """As :meth:`Chain.expected`, exactly; an infinite total is ``float('inf')``."""
        if self.sparse:
            return self._sparse_expected(values, given_end) if values else {}
        c = self.chain
        st = c.structure
        names = list(values)
        if not names:
            return {}
        ends = [sum(row[:-1], Fraction(0)) for row in self._absorb()]
        dead_ids = np.flatnonzero(st.deadlock)
        totals = self._solve([self._step(values[k]) for k in names])
        wanted = names if given_end is True else [k for k in names if given_end and k in given_end]
        if not dead_ids.size:
            cond = totals
        else:
            solved = dict(zip(wanted, self._solve([self._step(values[k], ends) for k in wanted]), strict=True))
            cond = [solved.get(k, [float("nan")] * self.ids.size) for k in names]
        i0 = self.pos[c.init]
        p_end = ends[c.init]
        out: dict[str, tuple] = {}
        for col, k in enumerate(names):
            step_dead = c.step_reward(values[k])[dead_ids] if dead_ids.size else np.zeros(0)
            total = float("inf") if (step_dead > 0).any() else (totals[col][i0] if i0 >= 0 else Fraction(0))
            given = (cond[col][i0] / p_end if i0 >= 0 else Fraction(0)) if p_end else float("nan")
            out[k] = (total, given)
        return out

    def hitting_probabilities(self, key: np.ndarray, table: np.ndarray) -> list[Fraction]:
        """The exact chance that each event ever happens (events as in :meth:`Chain.hitting_probabilities`).

        On the sparse path every event is its own factorisation (over the pattern of
        the plain system) and lifting: seconds per event on two-player boards.
        """
        if self.sparse:
            return self._sparse_hitting(key, table)
        out = []
        i0 = self.pos[self.chain.init]
        for c in range(table.shape[1]):
            ev = (key >= 0) & table[np.maximum(key, 0), c]
            b = self._step(ev.astype(np.int64))
            if not any(b) or i0 < 0:
                out.append(Fraction(0))
                continue
            out.append(self._solve([b], stop=ev)[0][i0])
        return out


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
