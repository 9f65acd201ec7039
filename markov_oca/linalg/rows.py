"""The rows of a chain's branches, in the two forms the kernels read.

A branch table ``nxt[s, :]`` lists state ``s``'s successors, padded with -1 at the end (``pnum`` their
probability numerators): one array of ``n * J`` entries, ``J`` the widest row. A chain with one very
wide row (a state with a successor for every state) would be ``n**2`` entries that way, so kernels that
must run on any chain read :class:`Rows` instead: the branches as flat arrays and each state's span
``lo[s]:hi[s]`` in them. A padded table gives its rows as views (:func:`padded_rows`, 16 bytes a state
more); a packed one (CSR, :func:`packed_rows`) as it stands.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def row_width(nxt, s):
    """The number of branches of row ``s`` of ``nxt``: the entries before its -1 padding.

    Examples
    --------
    >>> import numpy as np
    >>> row_width(np.array([[1, 2, -1], [0, 1, 2]]), 0), row_width(np.array([[1, 2, -1], [0, 1, 2]]), 1)
    (2, 3)
    """
    J = nxt.shape[1]
    for j in range(J):
        if nxt[s, j] < 0:
            return j
    return J


class Rows(NamedTuple):
    """A chain's branches as flat arrays: state ``s``'s are ``nxt[lo[s]:hi[s]]`` with numerators
    ``pnum[lo[s]:hi[s]]``. Pass ``*rows`` to a kernel that takes ``lo, hi, nxt, pnum``."""

    lo: np.ndarray  # int64 (n,)
    hi: np.ndarray  # int64 (n,)
    nxt: np.ndarray  # (branches,) next states
    pnum: np.ndarray  # (branches,) probability numerators


@numba.njit(cache=True)
def _spans(nxt):
    n, J = nxt.shape
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    for s in range(n):
        lo[s] = s * J
        hi[s] = s * J + row_width(nxt, s)
    return lo, hi


def padded_rows(nxt: np.ndarray, pnum: np.ndarray) -> Rows:
    """The :class:`Rows` of a padded branch table (views of its arrays when they are C-contiguous).

    Examples
    --------
    >>> r = padded_rows(np.array([[1, 2, -1], [0, 1, 2]]), np.array([[1, 1, 0], [1, 1, 1]]))
    >>> r.lo.tolist(), r.hi.tolist(), r.nxt[r.lo[1]:r.hi[1]].tolist()
    ([0, 3], [2, 6], [0, 1, 2])
    """
    lo, hi = _spans(nxt)
    return Rows(lo, hi, np.ascontiguousarray(nxt).reshape(-1), np.ascontiguousarray(pnum).reshape(-1))


def packed_rows(indptr: np.ndarray, indices: np.ndarray, num: np.ndarray) -> Rows:
    """The :class:`Rows` of a CSR table (``indptr`` of ``n + 1`` offsets).

    Examples
    --------
    >>> r = packed_rows(np.array([0, 2, 5]), np.array([1, 2, 0, 1, 2]), np.array([1, 1, 1, 1, 1]))
    >>> r.lo.tolist(), r.hi.tolist(), r.nxt[r.lo[1]:r.hi[1]].tolist()
    ([0, 2], [2, 5], [0, 1, 2])
    """
    indptr = np.asarray(indptr, np.int64)
    return Rows(indptr[:-1], indptr[1:], np.asarray(indices), np.asarray(num))
