"""Fill-reducing orders with diagonal pivots for the exact solves: an independent set first, then SuperLU.

An independent set ``I`` of the graph of ``A`` (no two of its states linked) is
eliminated first without any fill, as in a race where a seat's throw always hands the
move on; SuperLU orders and factors the Schur complement ``S`` on the rest, with the
diagonal as pivot (``A`` is an M-matrix).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


@numba.njit(cache=True)
def _independent_set(ptr, idx, candidates):
    """Greedy maximal independent set, taking the candidates in the order given."""
    n = ptr.size - 1
    chosen = np.zeros(n, np.bool_)
    blocked = np.zeros(n, np.bool_)
    for i in candidates:
        if not blocked[i]:
            chosen[i] = True
            for e in range(ptr[i], ptr[i + 1]):
                blocked[idx[e]] = True
    return chosen


def independent_set(A: sp.csr_array, prefer: np.ndarray | None) -> np.ndarray:
    """The states of a greedy independent set of the graph of ``A``: ``prefer`` ranks the candidates,
    lower first, then fewer links.

    Examples
    --------
    >>> independent_set(sp.csr_array(np.array([[2, -1, 0], [-1, 2, -1], [0, -1, 2]])), None).tolist()
    [0, 2]
    """
    G = sp.csr_array(abs(A) + abs(A.T))
    G.setdiag(0)
    G.eliminate_zeros()
    deg = np.diff(G.indptr)
    keys = (deg,) if prefer is None else (deg, np.asarray(prefer))
    chosen = _independent_set(G.indptr.astype(np.int64), G.indices.astype(np.int64),
                              np.lexsort(keys).astype(np.int64))
    return np.flatnonzero(chosen)


def schur_complement(af: sp.csc_array, ind: np.ndarray) -> tuple[np.ndarray, sp.csc_array]:
    """The states not in ``ind``, and the Schur complement of the (diagonal) block ``ind`` in ``af``
    (``af`` itself when ``ind`` is empty)."""
    rest = np.setdiff1d(np.arange(af.shape[0]), ind)
    if not ind.size:
        return rest, af
    d_inv = 1.0 / af.diagonal()[ind]
    return rest, sp.csc_array(af[rest][:, rest] - af[rest][:, ind] @ sp.diags_array(d_inv) @ af[ind][:, rest])


def diagonal_lu(S: sp.csc_array, spec: str):
    """SuperLU of ``S`` in the column order ``spec`` with diagonal pivots, or None if it pivoted off the diagonal."""
    lu = spla.splu(S, permc_spec=spec, diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    return lu if np.array_equal(lu.perm_r, lu.perm_c) else None


def whole_order(ind: np.ndarray, rest: np.ndarray, perm_c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order of the whole matrix (the set, then the rest in SuperLU's column order) and its inverse."""
    order = np.concatenate([ind, rest[np.argsort(perm_c)]])
    perm = np.empty(order.size, np.int64)
    perm[order] = np.arange(order.size)
    return order, perm


@numba.njit(cache=True)
def _chol_count(ptr, idx, inv):
    """Twice the nonzeros of the Cholesky factor of a symmetric pattern (CSR) renumbered by ``inv``, less ``n``.

    Row by row, the row subtree of the elimination tree (built on the way, Liu's
    algorithm), in ``O(nnz(L))``: the fill of an LU with diagonal pivots of any matrix
    of that pattern is at most this.
    """
    n = ptr.size - 1
    order = np.empty(n, np.int64)
    for v in range(n):
        order[inv[v]] = v
    parent = np.full(n, -1, np.int64)
    mark = np.full(n, -1, np.int64)
    total = 0
    for k in range(n):
        v = order[k]
        mark[k] = k
        total += 1
        for e in range(ptr[v], ptr[v + 1]):
            j = inv[idx[e]]
            if j >= k:
                continue
            while mark[j] != k:
                mark[j] = k
                total += 1
                if parent[j] == -1:
                    parent[j] = k
                    break
                j = parent[j]
    return 2 * total - n


def predicted_fill(S: sp.csc_array, spec: str) -> int:
    """The fill of ``S``'s LU in the order ``spec``, predicted: SuperLU's ILU with everything dropped gives the
    LU's own column order at a fifth of the cost, and the symbolic Cholesky factor of the pattern of
    ``S + S^T`` in that order about twice the LU's fill, in the same rank on the boards measured
    (docs/exact.md)."""
    il = spla.spilu(S, permc_spec=spec, drop_tol=1.0, fill_factor=1.0, diag_pivot_thresh=0.0,
                    options={"SymmetricMode": True})
    inv = np.empty(S.shape[0], np.int64)
    inv[np.argsort(il.perm_c)] = np.arange(S.shape[0])
    G = sp.csr_array(abs(S) + abs(S.T))
    return _chol_count(G.indptr.astype(np.int64), G.indices.astype(np.int64), inv)
