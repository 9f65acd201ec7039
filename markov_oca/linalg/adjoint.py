"""``v = b + Q^T v``: the adjoint system (expected visits), whose sweeps run with the race."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..core.errors import SolverError
from .bicgstab import _split_solve
from .report import DIRECT_LIMIT, SolveReport, checked
from .residual import _adjoint_residual
from .rows import Rows, padded_rows
from .split import SplitMatrix, _split_transposed, packed_system_matrix, split_rows, system_matrix


def adjoint_solve(nxt: np.ndarray, pnum: np.ndarray, denom: int, active: np.ndarray, order: np.ndarray,
                  b: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, SolveReport]:
    """Solve ``v = b + Q^T v`` on the active states (expected visits when ``b`` is the start).

    The adjoint system runs with the race, so its Gauss-Seidel sweeps go the
    reverse of ``order``; its split matrix is built straight from branch form
    (:func:`~markov_oca.linalg.split._split_transposed`) and handed to the same fused
    driver as :class:`~markov_oca.linalg.system.LinearSystem`. Returns ``v`` (zero off
    the active set) and the solve's report with the true residual.

    Parameters
    ----------
    nxt, pnum, denom:
        The chain's branches: next state (-1 pads a row) and probability numerator.
    active:
        Boolean mask of the states whose values are unknown.
    order:
        The sweep order of the forward system (the adjoint sweeps its reverse).
    b:
        One ``(n,)`` or several ``(n, m)`` right-hand sides.
    tol:
        The tolerance on the residual, relative to ``max(1, |b|)``.

    Examples
    --------
    >>> nxt = np.array([[1, 2], [2, -1], [-1, -1]])
    >>> pnum = np.array([[1, 1], [2, 0], [0, 0]])
    >>> v, _ = adjoint_solve(nxt, pnum, 2, np.array([True, True, False]), np.array([2, 1, 0]),
    ...                      np.array([1.0, 0.0, 0.0]))
    >>> v.tolist()
    [1.0, 0.5, 0.0]
    """
    return AdjointSystem(nxt, pnum, denom, active, order).solve(b, tol)


class AdjointSystem:
    """``v = b + Q^T v`` on the active states, its factorisation or split matrix built once for every
    right-hand side that follows (see :func:`adjoint_solve`, which is one :meth:`solve` of it)."""

    def __init__(self, nxt: np.ndarray | None, pnum: np.ndarray | None, denom: int, active: np.ndarray,
                 order: np.ndarray, rows: Rows | None = None):
        # rows given alone: the chain holds its branches packed (as LinearSystem)
        self.rows = rows if rows is not None else padded_rows(nxt, pnum)
        self.denom, self.active = denom, active
        order = np.asarray(order, np.int64)
        self.ids = ids = order[active[order]][::-1]  # with the race
        self.lu = self.split = None
        if ids.size == 0:
            return
        if nxt is None:
            if ids.size <= DIRECT_LIMIT:
                self.lu = spla.splu(sp.csr_array(packed_system_matrix(self.rows, denom, ids).T).tocsc())
            else:  # straight from the rows, no CSR matrix nor its transpose
                self.split = split_rows(self.rows, denom, ids, transpose=True)
        elif ids.size <= DIRECT_LIMIT:
            a, act_ids = system_matrix(nxt, pnum, denom, active, None)
            at_pos = np.full(nxt.shape[0], -1, np.int64)
            at_pos[act_ids] = np.arange(act_ids.size)
            perm = at_pos[ids]
            self.lu = spla.splu(sp.csr_array(a.T)[perm][:, perm].tocsc())
        else:
            pos = np.full(nxt.shape[0], -1, np.int64)
            pos[ids] = np.arange(ids.size)
            self.split = SplitMatrix(*_split_transposed(nxt, pnum, np.int64(denom), active, ids, pos))
        if self.split is not None and not (self.split.d > 0).all():
            raise SolverError("an active state never leaves itself: the system is singular")

    def solve(self, b: np.ndarray, tol: float = 1e-12, check: bool = True) -> tuple[np.ndarray, SolveReport]:
        """Solve for one ``(n,)`` or several ``(n, m)`` right-hand sides; ``v = 0`` off the active set.

        ``check=False`` leaves the true residual to the caller (who certifies it anyway): the report's
        residual is then nan, and only a solution that is not finite raises."""
        squeeze = b.ndim == 1
        b2 = np.ascontiguousarray(b.reshape(b.shape[0], -1), dtype=np.float64)
        v = np.zeros_like(b2)
        ids = self.ids
        if ids.size == 0:
            return (v[:, 0] if squeeze else v), SolveReport("none", 0.0, 0)
        if self.lu is not None:
            v[ids] = self.lu.solve(b2[ids])
            method, iters = "direct sparse LU (SuperLU), adjoint", 1
        else:
            sol, iters = _split_solve(self.split, b2[ids], tol, 5000)
            v[ids] = sol
            method = "BiCGSTAB, symmetric Gauss-Seidel preconditioned, adjoint"
        if not check:
            if not np.isfinite(v).all():
                raise SolverError(f"{method}: the solution is not finite")
            return (v[:, 0] if squeeze else v), SolveReport(method, float("nan"), iters)
        res = _adjoint_residual(self.rows, 1.0 / self.denom, self.active, b2, v)
        report = checked(SolveReport(method, float(res), iters), b2)
        return (v[:, 0] if squeeze else v), report
