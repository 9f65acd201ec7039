"""The rows of a chain's branches, in the two forms the kernels read.

A branch table ``nxt[s, :]`` lists state ``s``'s successors, padded with -1 at the end (``pnum`` their
probability numerators): one array of ``n * J`` entries, ``J`` the widest row. A chain with one very
wide row (a state with a successor for every state) would be ``n**2`` entries that way, so kernels that
must run on any chain read :class:`Rows` instead: the branches as flat arrays, a padded table's as views
of its own (:func:`padded_rows`, nothing allocated), a packed one's (CSR, :func:`packed_rows`) with each
state's span.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
import scipy.sparse as sp


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
    """A chain's branches as flat arrays, in one of two layouts. Pass ``*rows`` to a kernel that takes
    ``lo, hi, nxt, pnum`` and reads state ``s``'s branches as ``nxt[a:b]``, ``pnum[a:b]`` with
    ``a, b = span(lo, hi, nxt, s)`` (and the number of states as ``n_states(lo, hi, nxt)``).

    Packed (CSR): ``lo[s]:hi[s]`` is state ``s``'s span. Padded: ``lo`` is empty and ``hi`` holds the table's
    width ``J`` alone; state ``s``'s branches start at ``s * J`` and end at its first -1 (nothing per state is
    allocated, so a game's chain costs no memory more than its table)."""

    lo: np.ndarray  # int64: (n,) packed, empty padded
    hi: np.ndarray  # int64: (n,) packed, [J] padded
    nxt: np.ndarray  # (branches,) next states; padded: the table's n * J entries, -1 padding
    pnum: np.ndarray  # (branches,) probability numerators

    @property
    def packed(self) -> bool:
        return self.lo.size > 0 or self.nxt.size == 0

    def widths(self) -> np.ndarray:
        """The number of branches of each state."""
        if self.packed:
            return self.hi - self.lo
        return _widths(self.hi, self.nxt)

    def widest(self) -> int:
        """An upper bound on the branches of one state: the widest row (packed), the table's width (padded)."""
        return int((self.hi - self.lo).max(initial=0)) if self.packed else int(self.hi[0])

    def matrix(self, denom: int) -> sp.csr_array:
        """The transition matrix of packed rows (CSR as they stand: ``pnum * (1 / denom)``, the kernels' own
        products)."""
        return sp.csr_array((self.pnum * (1.0 / denom), self.nxt, np.append(self.lo, self.hi[-1:])),
                            shape=(self.lo.size, self.lo.size))

    def owners(self) -> np.ndarray:
        """The state of each flat slot (padding included): per-state values as a value per slot."""
        if self.packed:
            return np.repeat(np.arange(self.lo.size), self.hi - self.lo)
        return np.arange(self.nxt.size) // int(self.hi[0])


@numba.njit(cache=True, inline="always")
def span(lo, hi, nxt, s):
    """Where state ``s``'s branches are in the flat arrays: ``a, b`` (see :class:`Rows`)."""
    if lo.size > 0:
        return lo[s], hi[s]
    a = s * hi[0]
    b = a
    end = a + hi[0]
    while b < end and nxt[b] >= 0:
        b += 1
    return a, b


@numba.njit(cache=True, inline="always")
def n_states(lo, hi, nxt):
    """The number of states of :class:`Rows` given as arrays."""
    if lo.size > 0 or nxt.size == 0:
        return lo.size
    return nxt.size // hi[0]


@numba.njit(cache=True)
def _widths(hi, nxt):
    n = nxt.size // hi[0]
    out = np.empty(n, np.int64)
    for s in range(n):
        a, b = span(np.empty(0, np.int64), hi, nxt, s)
        out[s] = b - a
    return out


def padded_rows(nxt: np.ndarray, pnum: np.ndarray) -> Rows:
    """The :class:`Rows` of a padded branch table (views of its arrays when they are C-contiguous).

    Examples
    --------
    >>> r = padded_rows(np.array([[1, 2, -1], [0, 1, 2]]), np.array([[1, 1, 0], [1, 1, 1]]))
    >>> span(*r[:3], 0), span(*r[:3], 1), n_states(*r[:3]), r.widths().tolist()
    ((0, 2), (3, 6), 2, [2, 3])
    """
    width = max(int(nxt.shape[1]), 1) if nxt.ndim == 2 else 1
    return Rows(np.empty(0, np.int64), np.array([width], np.int64), np.ascontiguousarray(nxt).reshape(-1),
                np.ascontiguousarray(pnum).reshape(-1))


def packed_rows(indptr: np.ndarray, indices: np.ndarray, num: np.ndarray) -> Rows:
    """The :class:`Rows` of a CSR table (``indptr`` of ``n + 1`` offsets).

    Examples
    --------
    >>> r = packed_rows(np.array([0, 2, 5]), np.array([1, 2, 0, 1, 2]), np.array([1, 1, 1, 1, 1]))
    >>> span(*r[:3], 1), n_states(*r[:3]), r.widths().tolist()
    ((2, 5), 2, [2, 3])
    """
    indptr = np.asarray(indptr, np.int64)
    return Rows(indptr[:-1], indptr[1:], np.asarray(indices), np.asarray(num))
