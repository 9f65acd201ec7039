"""Coupled columns of an exact solve, and the report of one."""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
import scipy.sparse as sp


@dataclass
class Coupling:
    """A coupled column's right-hand side gains ``C @ (sum of the columns sources)``.

    ``C`` is an integer (n x n) matrix in the caller's numbering; the sources are
    plain (uncoupled) columns. The coupled columns are the last ones of ``B``, in
    the order of the couplings.
    """

    C: sp.csr_array
    sources: list[int]


@dataclass
class LiftReport:
    steps: int = 0
    certify_steps: int = 0
    prime: int = 0
    fill: int = 0
    ordering: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, dt: float) -> None:
        self.seconds[key] = self.seconds.get(key, 0.0) + dt


def coupling_arrays(couplings: list[Coupling], order: np.ndarray, idx_type: type,
                    nonnegative: bool = False) -> tuple[tuple[np.ndarray, ...], list[sp.csr_array], int]:
    """The couplings in the solver's ``order``: the kernels' arrays (row pointers, one row per coupling,
    offset into the concatenated columns ``idx_type`` and values, the sources and each coupling's slice of
    them), the CSR matrices, and the largest ``||C||_inf`` times its number of sources.

    Examples
    --------
    >>> arrays, mats, norm = coupling_arrays([Coupling(sp.csr_array(np.eye(2, dtype=np.int64)), [0])],
    ...                                      np.array([1, 0]), np.int32)
    >>> arrays[0].tolist(), arrays[3].tolist(), norm
    ([[0, 1, 2]], [0], 1)
    """
    n = order.size
    if not couplings:
        return (np.zeros((0, n + 1), np.int64), np.zeros(0, idx_type), np.zeros(0, np.int64),
                np.zeros(0, np.int64), np.zeros((0, 2), np.int64)), [], 0
    ptrs, idxs, vals, srcs, src_of, mats = [], [], [], [], [], []
    base = 0
    norm = 0
    for cp in couplings:
        C = sp.csr_array(sp.csr_array(cp.C, dtype=np.int64)[order][:, order])
        C.sort_indices()
        if nonnegative and C.nnz and C.data.min() < 0:
            raise ValueError("coupling matrices must be nonnegative")
        mats.append(C)
        ptrs.append(C.indptr.astype(np.int64) + base)
        idxs.append(C.indices.astype(idx_type))
        vals.append(C.data.astype(np.int64))
        base += C.nnz
        src_of.append((len(srcs), len(srcs) + len(cp.sources)))
        srcs.extend(cp.sources)
        if C.nnz:
            norm = max(norm, int(abs(C).sum(axis=1).max()) * len(cp.sources))
    arrays = (np.vstack(ptrs), np.concatenate(idxs), np.concatenate(vals), np.array(srcs, np.int64),
              np.array(src_of, np.int64))
    return arrays, mats, norm


@numba.njit(cache=True)
def coupled_term(q, i, c_ptr, c_idx, c_val, src, src_of, x):
    """Row ``i`` of ``C_q @ (sum of the source columns of x)``, in ``x``'s arithmetic (integers mod p, or floats)."""
    t = 0
    for e in range(c_ptr[q, i], c_ptr[q, i + 1]):
        j = c_idx[e]
        sx = 0
        for k in range(src_of[q, 0], src_of[q, 1]):
            sx += x[j, src[k]]
        t += c_val[e] * sx
    return t
