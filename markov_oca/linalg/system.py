"""``x = b + Q x`` on the active states of a chain in branch form, and the sweep order of a race.

Small systems go to SciPy's direct sparse LU (factorised once, reused for every
right-hand side); large ones to the fused BiCGSTAB of :mod:`~markov_oca.linalg.bicgstab`
on all right-hand sides at once. Either way the true residual ``||(I-Q)x - b||_inf`` is
computed afterwards and returned.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..core.errors import SolverError
from .bicgstab import GROUP, _split_solve
from .report import DIRECT_LIMIT, SolveReport, checked
from .residual import _residual
from .rows import Rows, padded_rows
from .split import SplitMatrix, _split_branches, packed_system_matrix, split_rows, system_matrix
from .sweeps import _lower_solve, _upper_half


def progress_order(key: np.ndarray) -> np.ndarray:
    """A Gauss-Seidel sweep order for a race: decreasing ``key``, ties in reverse state numbering.

    ``key[s]`` should grow along the race (for a board race, the players'
    total progress in buckets of a few squares, then the seat to move); the
    reverse numbering keeps breadth-first neighbours together, which the
    sweeps' memory access likes. Pass the result as ``order``.

    Examples
    --------
    >>> progress_order(np.array([0, 2, 1, 2])).tolist()
    [3, 1, 2, 0]
    """
    key = np.asarray(key)
    rev = np.arange(key.size - 1, -1, -1)
    return rev[np.argsort(-key[rev], kind="stable")]


class LinearSystem:
    """``x = b + Q x`` on the active states of a chain in branch form, ready to solve.

    Parameters
    ----------
    nxt, pnum, denom:
        The chain's branches: next state (-1 pads a row) and probability numerator.
    active:
        Boolean mask of the states whose values are unknown (``x = 0`` elsewhere).
    stop:
        Optional boolean mask of branches that ``Q`` does not follow.
    order:
        The order in which a Gauss-Seidel sweep visits states (successors first
        is best); default the reverse of the state numbering.
    method:
        ``"direct"`` (SuperLU), ``"bicgstab"`` (block BiCGSTAB preconditioned by
        a symmetric Gauss-Seidel sweep) or ``"auto"``: direct up to ``DIRECT_LIMIT`` states.
    """

    def __init__(self, nxt: np.ndarray | None, pnum: np.ndarray | None, denom: int, active: np.ndarray,
                 stop: np.ndarray | None = None, order: np.ndarray | None = None, method: str = "auto",
                 rows: Rows | None = None):
        self.nxt, self.pnum, self.denom, self.active = nxt, pnum, denom, active
        # rows given alone: the chain holds its branches packed (CSR, sorted and distinct within a row)
        self.packed = nxt is None
        if self.packed and (rows is None or stop is not None):
            raise ValueError("a packed system takes its rows, and no stopped branches")
        self.rows = rows if rows is not None else padded_rows(nxt, pnum)
        self.stop = None if stop is None or not stop.any() else stop
        n = active.size
        n_active = int(np.count_nonzero(active))
        if method == "auto":
            method = "direct" if n_active <= DIRECT_LIMIT else "bicgstab"
        if method not in ("direct", "bicgstab"):
            raise ValueError(f"unknown method {method!r}")
        self.method = method
        if order is None:
            order = np.arange(n - 1, -1, -1)
        order = np.asarray(order, np.int64)
        order = order[active[order]]
        if order.size != n_active:
            raise ValueError("order must visit every active state exactly once")
        self.ids = order  # chain state of each unknown, in sweep order
        self._lu = None
        self._a = None
        self.split = None
        if method != "direct":
            if self.packed:  # straight from the rows, the CSR matrix of I - Q never built
                self.split = split_rows(self.rows, denom, order)
            else:
                pos = np.full(n, -1, np.int64)
                pos[order] = np.arange(order.size)
                arrays = _split_branches(nxt, pnum, np.int64(denom), active,
                                         np.zeros(nxt.shape, bool) if stop is None else stop, order, pos)
                self.split = SplitMatrix(*arrays)
            if not (self.split.d > 0).all():
                raise SolverError("an active state never leaves itself: the system is singular")

    @property
    def a(self) -> sp.csr_array:
        """``I - Q`` as CSR, rows and columns in sweep order (built on first use)."""
        if self._a is None:
            if self.packed:
                a = packed_system_matrix(self.rows, self.denom, self.ids)
            else:
                a, ids = system_matrix(self.nxt, self.pnum, self.denom, self.active, self.stop)
                pos = np.full(self.nxt.shape[0], -1, np.int64)
                pos[ids] = np.arange(ids.size)
                perm = pos[self.ids]
                a = a[perm][:, perm]
            a = sp.csr_array(a)
            a.sort_indices()
            self._a = a
        return self._a

    def _split_matrix(self) -> SplitMatrix:
        if self.split is None:
            self.split = SplitMatrix.from_csr(self.a)
        return self.split

    def precondition(self, r: np.ndarray) -> np.ndarray:
        """The symmetric Gauss-Seidel preconditioner ``(D + U)^-1 D (D + L)^-1 r`` (a forward,
        then a backward sweep from zero) on ``(n_active,)`` or ``(n_active, m)`` values in
        sweep order; about the cost of one mat-vec."""
        return self._sweeps(r, symmetric=True)

    def _sweeps(self, r: np.ndarray, symmetric: bool = True) -> np.ndarray:
        a = self._split_matrix()
        r2 = np.asarray(r, np.float64).reshape(r.shape[0], -1)
        out = np.empty_like(r2)
        for g in range(0, r2.shape[1], GROUP):
            part = np.ascontiguousarray(r2[:, g:g + GROUP] / a.d[:, None])
            w = np.empty_like(part)
            _lower_solve(a.lp, a.lx, a.lv, None, part, w)
            if symmetric:  # in place is safe
                _upper_half(a.up, a.ux, a.uv, None, w, w, None, np.zeros(w.shape[1]), part, w)
            out[:, g:g + GROUP] = w
        return out.reshape(r.shape)

    def solve(self, b: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, SolveReport]:
        """Solve for one ``(n,)`` or several ``(n, m)`` right-hand sides; ``x = 0`` off the active set."""
        squeeze = b.ndim == 1
        b2 = np.ascontiguousarray(b.reshape(b.shape[0], -1), dtype=np.float64)
        x = np.zeros_like(b2)
        if self.ids.size == 0:
            report = SolveReport("none", 0.0, 0)
        elif self.method == "direct":
            if self._lu is None:
                self._lu = spla.splu(self.a.tocsc())
            x[self.ids] = self._lu.solve(b2[self.ids])
            report = SolveReport("direct sparse LU (SuperLU)", 0.0, 1)
        else:
            sol, iters = _split_solve(self.split, b2[self.ids], tol, 5000)
            x[self.ids] = sol
            report = SolveReport("BiCGSTAB, symmetric Gauss-Seidel preconditioned", 0.0, iters)
        stop = np.zeros(0, bool) if self.stop is None else np.ascontiguousarray(self.stop).reshape(-1)
        report.residual = float(_residual(*self.rows, 1.0 / self.denom, self.active, stop, b2, x))
        return (x[:, 0] if squeeze else x), checked(report, b2)
