"""Exact solves of ``A x = b`` by strongly connected components in topological order.

``A = D (I - Q)`` on a chain's transient states (integers, ``D`` the common denominator).
Its off-diagonal pattern is the chain's graph: ``x`` on a strongly connected component
depends only on ``x`` on the components it leads to. Solving the components from the
sinks of the condensation back to its sources, each is one small system whose right-hand
side takes the values already found downstream:

* a component of one state (with or without a self loop) is a substitution,
  ``x_i = (b_i - sum_j A_ij x_j) / A_ii``;
* a larger one is a dense FLINT solve (``fmpq_mat.solve``) of its own size.

The cost is that of the largest component's dense solve plus one pass over the
nonzeros, instead of one dense solve of every transient state: an almost acyclic
chain of thousands of states takes a fraction of a second. The adjoint system
``A^T y = b`` has the same components in the opposite order (:meth:`BlockSolver.transpose`).
Every answer is exact by construction, and checked: each value is set once, from values already set
(a row's equation holds exactly when its value is set, and stays true), and each dense block's
solution is multiplied back.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["BlockSolver", "condensation_order", "dot"]

#: Components up to this many states are solved by their inverse (small fractions: the block's entries are
#: small integers), larger ones by ``fmpq_mat.solve`` with the right-hand side's large fractions.
SMALL_BLOCK = 16


def dot(xs: Sequence[Any], ys: Sequence[Any]) -> Any:
    """``sum(x * y)`` of FLINT rationals, as FLINT's row-times-column product: over common denominators,
    four times faster than adding the products one by one when the denominators are large.

    Examples
    --------
    >>> import flint
    >>> dot([flint.fmpq(1, 2), flint.fmpq(1, 3)], [3, flint.fmpq(3, 4)])
    7/4
    """
    import flint

    if not len(xs):
        return flint.fmpq(0)
    return (flint.fmpq_mat(1, len(xs), list(xs)) * flint.fmpq_mat(len(ys), 1, list(ys)))[0, 0]


def condensation_order(A: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """The strongly connected components of the graph of ``A`` (``A_ij != 0``: an edge ``i -> j``), the
    sinks first: ``(label, order)`` with ``order`` the component labels so that every edge out of a
    component leads to one earlier in ``order``.

    Examples
    --------
    A chain ``0 -> {1, 2}``, ``1 <-> 2``, ``2 -> 3``: the components {3}, {1, 2}, {0}, in that order.

    >>> A = sp.csr_array(np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 1, 1, 1], [0, 0, 0, 1]]))
    >>> label, order = condensation_order(A)
    >>> [sorted(np.flatnonzero(label == c).tolist()) for c in order]
    [[3], [1, 2], [0]]
    """
    A = sp.csr_array(A)
    n_comp, label = connected_components(A, directed=True, connection="strong")
    coo = A.tocoo()
    cu, cv = label[coo.row], label[coo.col]
    off = cu != cv
    # the condensation's edges, reversed (v -> u): Kahn's order on them puts the sinks first
    g = sp.csr_array((np.ones(int(off.sum()), np.int8), (cv[off], cu[off])), shape=(n_comp, n_comp))
    g.sum_duplicates()
    out_left = np.diff(sp.csr_array(g.T).indptr)  # each component's distinct edges not yet resolved
    ready = list(np.flatnonzero(out_left == 0))
    order = np.empty(n_comp, np.int64)
    ptr, idx = g.indptr, g.indices
    k = 0
    while ready:
        c = ready.pop()
        order[k] = c
        k += 1
        for u in idx[ptr[c]:ptr[c + 1]].tolist():
            out_left[u] -= 1
            if out_left[u] == 0:
                ready.append(u)
    if k != n_comp:  # pragma: no cover - a condensation has no cycle
        raise ArithmeticError("the condensation of the graph has a cycle")
    return label, order


def _fmpq(x: Any):
    import flint

    if isinstance(x, flint.fmpq):
        return x
    if isinstance(x, Fraction):
        return flint.fmpq(x.numerator, x.denominator)
    return flint.fmpq(int(x))


class BlockSolver:
    """``A x = B`` over the rationals, component by component (see the module docstring).

    Parameters
    ----------
    A : scipy.sparse array
        A square integer matrix whose every strongly connected component's block is nonsingular
        (``D (I - Q)`` on transient states is).
    label, order : numpy.ndarray, optional
        The components and their order, when already known (:func:`condensation_order`).

    Examples
    --------
    ``x = N 1`` for ``Q = [[0, 1/2, 1/2], [0, 1/2, 1/2], [0, 0, 0]]`` over ``D = 2``: 3, 3, 1 steps.

    >>> A = sp.csr_array(np.array([[2, -1, -1], [0, 1, -1], [0, 0, 2]]))
    >>> s = BlockSolver(A)
    >>> [str(v) for v in s.solve([[2, 2, 2]])[0]], s.largest
    (['3', '3', '1'], 1)
    """

    def __init__(self, A: Any, label: np.ndarray | None = None, order: np.ndarray | None = None):
        A = sp.csr_array(A)
        A.sum_duplicates()
        if label is None or order is None:
            label, order = condensation_order(A)
        self.A, self.label, self.order = A, label, order
        members = np.argsort(label, kind="stable")
        starts = np.searchsorted(label[members], np.arange(order.size + 1))
        self.members, self.starts = members, starts
        sizes = np.diff(starts)
        #: states of the largest component: the size of the largest dense solve
        self.largest = int(sizes.max(initial=0))
        self.components = int(order.size)
        self._rows = A.indptr.tolist(), A.indices.tolist(), [int(v) for v in A.data.tolist()]

    def transpose(self) -> BlockSolver:
        """The solver of ``A^T y = b``: the same components, in the opposite order."""
        return BlockSolver(sp.csr_array(self.A.T), self.label, self.order[::-1].copy())

    def solve(self, columns: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """``A x = b`` for each column ``b`` (ints, Fractions or FLINT rationals, one per row): the columns
        of ``x`` as lists of ``flint.fmpq``, checked exactly."""
        import flint

        n, m = self.A.shape[0], len(columns)
        zero = flint.fmpq(0)
        rhs = [[_fmpq(col[i]) if col[i] else zero for col in columns] for i in range(n)]
        x: list[list[Any] | None] = [None] * n
        for c in self.order.tolist():
            states = self.members[self.starts[c]:self.starts[c + 1]].tolist()
            if len(states) == 1:
                i = states[0]
                acc, inside = self._moved_right(i, {i: 0}, rhs, x)
                diag = sum(v for _, v in inside)
                if diag == 0:
                    raise ZeroDivisionError(f"row {i} of the system has a zero pivot")
                x[i] = [v / diag if v else zero for v in acc]
                continue
            for i, row in zip(states, self._dense(states, rhs, x), strict=True):
                x[i] = row
        return [[x[i][col] for i in range(n)] for col in range(m)]

    def _moved_right(self, i: int, local: dict[int, int], rhs, x) -> tuple[list[Any], list[tuple[int, int]]]:
        """Row ``i``'s right-hand side less its terms on values already solved, and its entries inside
        the component (``local`` numbers its states)."""
        ptr, idx, data = self._rows
        acc, inside = list(rhs[i]), []
        for e in range(ptr[i], ptr[i + 1]):
            j, v = idx[e], data[e]
            if j in local:
                inside.append((local[j], v))
                continue
            xj = x[j]
            if xj is None:
                raise ArithmeticError(f"row {i} needs row {j}, not solved yet: the order is wrong")
            for col, y in enumerate(xj):
                if y:
                    acc[col] -= v * y
        return acc, inside

    def _dense(self, states: list[int], rhs, x) -> list[list[Any]]:
        """One component of more than one state: its dense system, the values downstream moved right.

        The block's matrix has small integer entries; only the right-hand side has large fractions.
        A block of up to :data:`SMALL_BLOCK` states is inverted (small fractions) and the inverse applied;
        a larger one is one ``fmpq_mat.solve``, multiplied back as a check.
        """
        import flint

        k = len(states)
        local = {s: i for i, s in enumerate(states)}
        a = flint.fmpq_mat(k, k)
        accs = []
        for r, i in enumerate(states):
            acc, inside = self._moved_right(i, local, rhs, x)
            for c, v in inside:
                a[r, c] += v
            accs.append(acc)
        m = len(accs[0])
        if k <= SMALL_BLOCK:
            inv = a.inv()
            if a * inv != flint.fmpq_mat(k, k, [int(r == c) for r in range(k) for c in range(k)]):
                raise ArithmeticError("a component's exact inverse does not check")
            w = [[inv[r, c] for c in range(k)] for r in range(k)]
            return [[sum((w[r][c] * accs[c][col] for c in range(k) if w[r][c] and accs[c][col]), flint.fmpq(0))
                     for col in range(m)] for r in range(k)]
        b = flint.fmpq_mat(k, max(m, 1))
        for r in range(k):
            for col in range(m):
                b[r, col] = accs[r][col]
        sol = a.solve(b)
        if a * sol != b:
            raise ArithmeticError("a component's exact solve does not check")
        return [[sol[r, col] for col in range(m)] for r in range(k)]
