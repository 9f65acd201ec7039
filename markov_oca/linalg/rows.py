"""The rows of a branch table: ``nxt[s, :]`` lists state ``s``'s successors, padded with -1 at the end."""

from __future__ import annotations

import numba


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
