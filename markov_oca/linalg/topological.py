"""``x = b + Q x`` and ``v = b + Q^T v`` by strongly connected components in topological order.

When the active states fall into small strongly connected components (an acyclic chain: every
component one state; a protocol whose rounds have short loops), each component's unknowns depend
only on its own and on those of components solved before it: the forward system (``x`` from the
successors) takes the components successors first, the adjoint one (``v`` from the predecessors)
predecessors first. A component of one state is a substitution, ``x_s = (b_s + sum_t q_st x_t) /
(1 - q_ss)``; a larger one a solve of its own size (Gaussian elimination, which an M-matrix needs no
pivoting for, over the nonzero entries). One pass over the transitions solves the system up to
rounding, where an iteration needs a pass per step; the adjoint pass pushes each component's values
along its own rows, so it needs no transposed matrix. The caller certifies the answer by its true
residual, as it does any solve's (:mod:`~markov_oca.linalg.certify`).

:func:`_components` is Tarjan's algorithm, iterative, which hands the components out in the
order the forward pass wants (each after every component it reaches).
"""

from __future__ import annotations

import numba
import numpy as np

from ..core.errors import SolverError
from .rows import row_width

#: The largest strongly connected component solved densely (its own Gaussian elimination).
COMPONENT_LIMIT = 64


@numba.njit(cache=True, nogil=True)
def _components(nxt, active):
    """Tarjan's strongly connected components of the graph of the active states (the branches between them).

    Returns ``(order, starts, comp)``: ``order`` lists the active states component by component, each
    component after every component it reaches; component ``c`` is ``order[starts[c]:starts[c + 1]]``;
    ``comp[s]`` is the component of state ``s`` (-1 for an inactive one).
    """
    n = nxt.shape[0]
    width = nxt.shape[1]
    index = np.full(n, -1, np.int32)
    low = np.zeros(n, np.int32)
    comp = np.full(n, -1, np.int32)
    stack = np.empty(n, np.int32)
    call_s = np.empty(n, np.int32)
    call_j = np.empty(n, np.int32)
    order = np.empty(n, np.int32)
    starts = np.empty(n + 1, np.int64)
    sp = 0
    no = 0
    nc = 0
    counter = 0
    for root in range(n):
        if not active[root] or index[root] >= 0:
            continue
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        call_s[0] = root
        call_j[0] = 0
        cp = 1
        while cp > 0:
            s = call_s[cp - 1]
            j = call_j[cp - 1]
            if j < width and nxt[s, j] >= 0:
                call_j[cp - 1] = j + 1
                t = nxt[s, j]
                if not active[t]:
                    continue
                if index[t] < 0:
                    index[t] = counter
                    low[t] = counter
                    counter += 1
                    stack[sp] = t
                    sp += 1
                    call_s[cp] = t
                    call_j[cp] = 0
                    cp += 1
                elif comp[t] < 0 and index[t] < low[s]:  # on the stack: in the component being built
                    low[s] = index[t]
                continue
            cp -= 1
            if low[s] == index[s]:
                starts[nc] = no
                while True:
                    sp -= 1
                    u = stack[sp]
                    comp[u] = nc
                    order[no] = u
                    no += 1
                    if u == s:
                        break
                nc += 1
            if cp > 0:
                p = call_s[cp - 1]
                if low[s] < low[p]:
                    low[p] = low[s]
    starts[nc] = no
    return order[:no].copy(), starts[:nc + 1].copy(), comp


@numba.njit(cache=True, nogil=True, inline="always")
def _dense_solve(a, x, k, m, cols):
    """``a[:k, :k] y = x[:k, :m]`` in place (``x`` becomes ``y``); False when a pivot is not positive.

    ``a`` is ``I - Q_CC`` of a component or its transpose: a nonsingular M-matrix, diagonally dominant,
    whose Gaussian elimination needs no pivoting (every pivot stays positive, the growth is bounded). The
    components of a chain are sparse, so each elimination step updates only the nonzero columns of its
    pivot row (``cols`` is scratch for their indices) and only the rows with a nonzero multiplier."""
    for c in range(k):
        piv = a[c, c]
        if not piv > 0.0:
            return False
        nnz = 0
        for q in range(c + 1, k):
            if a[c, q] != 0.0:
                cols[nnz] = q
                nnz += 1
        for r in range(c + 1, k):
            if a[r, c] != 0.0:
                f = a[r, c] / piv
                for t in range(nnz):
                    q = cols[t]
                    a[r, q] -= f * a[c, q]
                for q in range(m):
                    x[r, q] -= f * x[c, q]
    for c in range(k - 1, -1, -1):
        for q in range(m):
            acc = x[c, q]
            for r in range(c + 1, k):
                if a[c, r] != 0.0:
                    acc -= a[c, r] * x[r, q]
            x[c, q] = acc / a[c, c]
    return True


@numba.njit(cache=True, nogil=True)
def _workspace(starts, n, m):
    """A pass's scratch: the largest component's matrix, right-hand sides and pivot columns, and each state's
    place in its component (-1)."""
    big = 1
    for c in range(starts.size - 1):
        big = max(big, starts[c + 1] - starts[c])
    return np.zeros((big, big)), np.zeros((big, m)), np.empty(big, np.int64), np.full(n, -1, np.int32)


@numba.njit(cache=True, nogil=True)
def _forward(nxt, pnum, denom, active, order, starts, comp, b, x):
    """``x = b + Q x`` on the active states (0 elsewhere), components successors first; False when a
    component is singular."""
    n, m = b.shape
    inv = 1.0 / denom
    a, y, cols, local = _workspace(starts, n, m)
    for s in range(n):
        for q in range(m):
            x[s, q] = 0.0
    for c in range(starts.size - 1):
        lo = starts[c]
        k = starts[c + 1] - lo
        if k == 1:
            s = order[lo]
            self_num = 0
            for q in range(m):
                y[0, q] = b[s, q]
            for j in range(row_width(nxt, s)):
                t = nxt[s, j]
                if t == s:
                    self_num += pnum[s, j]
                elif active[t]:
                    p = pnum[s, j] * inv
                    for q in range(m):
                        y[0, q] += p * x[t, q]
            dn = denom - self_num
            if dn <= 0:
                return False
            d = dn / denom
            for q in range(m):
                x[s, q] = y[0, q] / d
            continue
        for i in range(k):
            local[order[lo + i]] = i
            for r in range(k):
                a[i, r] = 0.0
            a[i, i] = 1.0
        for i in range(k):
            s = order[lo + i]
            for q in range(m):
                y[i, q] = b[s, q]
            for j in range(row_width(nxt, s)):
                t = nxt[s, j]
                if not active[t]:
                    continue
                p = pnum[s, j] * inv
                if comp[t] == c:
                    a[i, local[t]] -= p
                else:
                    for q in range(m):
                        y[i, q] += p * x[t, q]
        if not _dense_solve(a, y, k, m, cols):
            return False
        for i in range(k):
            s = order[lo + i]
            local[s] = -1
            for q in range(m):
                x[s, q] = y[i, q]
    return True


@numba.njit(cache=True, nogil=True)
def _adjoint(nxt, pnum, denom, active, order, starts, comp, b, v):
    """``v = b + Q^T v`` on the active states (0 elsewhere), components predecessors first, each pushing its
    values along its own rows once solved; False when a component is singular. ``v`` starts as the
    right-hand side's copy and gathers the pushes."""
    n, m = b.shape
    inv = 1.0 / denom
    a, y, cols, local = _workspace(starts, n, m)
    for s in range(n):
        for q in range(m):
            v[s, q] = b[s, q] if active[s] else 0.0
    for c in range(starts.size - 2, -1, -1):
        lo = starts[c]
        k = starts[c + 1] - lo
        if k == 1:
            s = order[lo]
            self_num = 0
            for j in range(row_width(nxt, s)):
                if nxt[s, j] == s:
                    self_num += pnum[s, j]
            dn = denom - self_num
            if dn <= 0:
                return False
            d = dn / denom
            for q in range(m):
                v[s, q] = v[s, q] / d
        else:
            for i in range(k):
                s = order[lo + i]
                local[s] = i
                for r in range(k):
                    a[i, r] = 0.0
                a[i, i] = 1.0
                for q in range(m):
                    y[i, q] = v[s, q]
            for i in range(k):  # row t of (I - Q_CC)^T gathers the branches s -> t
                s = order[lo + i]
                for j in range(row_width(nxt, s)):
                    t = nxt[s, j]
                    if active[t] and comp[t] == c:
                        a[local[t], i] -= pnum[s, j] * inv
            if not _dense_solve(a, y, k, m, cols):
                return False
            for i in range(k):
                s = order[lo + i]
                local[s] = -1
                for q in range(m):
                    v[s, q] = y[i, q]
        for i in range(k):  # push into the components that follow
            s = order[lo + i]
            for j in range(row_width(nxt, s)):
                t = nxt[s, j]
                if active[t] and comp[t] != c:
                    p = pnum[s, j] * inv
                    for q in range(m):
                        v[t, q] += p * v[s, q]
    return True


class TopologicalSystem:
    """``x = b + Q x`` (:meth:`forward`) and ``v = b + Q^T v`` (:meth:`adjoint`) on the active states of a chain
    in branch form, by strongly connected components in topological order (see the module docstring).

    ``largest`` is the size of the largest component; the solves refuse (SolverError) beyond ``limit``.

    Examples
    --------
    Two states in a loop (0 -> 1 with 1, 1 -> 0 with 1/2, 1 -> 2 with 1/2), state 2 inactive:

    >>> nxt = np.array([[1, -1], [0, 2], [2, -1]])
    >>> pnum = np.array([[2, 0], [1, 1], [2, 0]])
    >>> sys_ = TopologicalSystem(nxt, pnum, 2, np.array([True, True, False]))
    >>> sys_.largest, sys_.forward(np.array([1.0, 1.0, 0.0])).tolist(), sys_.adjoint(np.array([1.0, 0, 0])).tolist()
    (2, [4.0, 3.0, 0.0], [2.0, 2.0, 0.0])
    """

    method = "strongly connected components in topological order"

    def __init__(self, nxt: np.ndarray, pnum: np.ndarray, denom: int, active: np.ndarray,
                 limit: int = COMPONENT_LIMIT):
        self.nxt, self.pnum, self.denom, self.active, self.limit = nxt, pnum, int(denom), active, limit
        self.order, self.starts, self.comp = _components(nxt, active)
        sizes = np.diff(self.starts)
        self.components = int(sizes.size)
        self.largest = int(sizes.max()) if sizes.size else 0

    @property
    def ok(self) -> bool:
        """Whether every component is small enough to be solved densely."""
        return self.largest <= self.limit

    def _run(self, kernel, b: np.ndarray) -> np.ndarray:
        if not self.ok:
            raise SolverError(f"{self.method}: a component of {self.largest:,} states (at most {self.limit:,})")
        squeeze = b.ndim == 1
        b2 = np.ascontiguousarray(b.reshape(b.shape[0], -1), dtype=np.float64)
        out = np.empty_like(b2)
        if not kernel(self.nxt, self.pnum, np.int64(self.denom), self.active, self.order, self.starts, self.comp,
                      b2, out):
            raise SolverError(f"{self.method}: a component never leaves itself (the system is singular)")
        return out[:, 0] if squeeze else out

    def forward(self, b: np.ndarray) -> np.ndarray:
        """``x = b + Q x`` for one ``(n,)`` or several ``(n, m)`` right-hand sides (0 off the active states)."""
        return self._run(_forward, b)

    def adjoint(self, b: np.ndarray) -> np.ndarray:
        """``v = b + Q^T v`` for one ``(n,)`` or several ``(n, m)`` right-hand sides (0 off the active states)."""
        return self._run(_adjoint, b)
