"""The Chain analyses in exact rational arithmetic.

:class:`ExactChain` answers the same questions as :class:`~markov_oca.chain.Chain`
(outcome probabilities, deadlock, expected rewards with and without the
condition that the game ends, hitting probabilities of events) as
:class:`fractions.Fraction` values. The chain's probabilities are integers over
one denominator ``D``, so every system ``(I - Q) x = b`` becomes the integer
system ``(D I - D Q) x = D b``, solved by python-flint's ``fmpq_mat.solve``
(FLINT's fraction-free/multimodular solvers). SymPy's dense ``LUsolve`` needs
about 8 s on the 100-square snakes-and-ladders board here; FLINT answers in
milliseconds. Chains above :data:`EXACT_LIMIT` transient states are refused:
dense exact solves grow as ``n**3`` times the size of the numbers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from fractions import Fraction

import flint
import numpy as np

from .chain import Chain
from .errors import TooLargeError

EXACT_LIMIT = 2_500


def _to_fraction(q: flint.fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


class ExactChain:
    """Exact analyses of a :class:`Chain` (see the module docstring)."""

    def __init__(self, chain: Chain):
        st = chain.structure
        self.chain = chain
        self.ids = np.flatnonzero(st.transient)
        if self.ids.size > EXACT_LIMIT:
            raise TooLargeError(
                f"exact mode solves chains of up to {EXACT_LIMIT:,} transient states densely; "
                f"this one has {self.ids.size:,} (drop --exact for the floating-point solve)"
            )
        self.pos = np.full(chain.n, -1, np.int64)
        self.pos[self.ids] = np.arange(self.ids.size)
        self._absorption: flint.fmpq_mat | None = None

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

    # --------------------------------------------------------------- analyses

    def absorption(self) -> list[list[Fraction]]:
        """For every state of the chain, the chance of each outcome and, last, of deadlock."""
        c = self.chain
        st = c.structure
        targets = list(c.outcomes.values())
        k = len(targets)
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
        a = self._absorb()[self.chain.init]
        out = {name: a[i] for i, name in enumerate(self.chain.outcomes)}
        out["deadlock"] = a[-1]
        return out

    def expected(self, values: Mapping[str, np.ndarray],
                 given_end: bool | Collection[str] = True) -> dict[str, tuple[Fraction | float, Fraction | float]]:
        """As :meth:`Chain.expected`, exactly; an infinite total is ``float('inf')``."""
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
        """The exact chance that each event ever happens (events as in :meth:`Chain.hitting_probabilities`)."""
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
