"""The two ways the sweeps keep a policy's moves, behind one set of jitted accessors.

A *store* holds, for each row (a position, or a position and side) and throw, the entries of the moves
played: an int32 code each (what the code means is the caller's). Two layouts:

* **fixed**: a ``(rows, throws)`` int32 array, one entry per row and throw (deterministic policies);
* **packed** (CSR): a tuple ``(start, cnt, ent)``: ``start[r]`` the first entry of row ``r``, ``cnt[r, t]``
  the entries of throw ``t`` (0 or more, one after the other), ``ent`` the entries (every legal move of a
  ``random`` side).

A fixed table is a packed one whose counts are all 1 and whose entry of ``(r, t)`` is ``table[r, t]``. The
accessors below are overloaded on the layout and inlined, so one kernel serves both: for a fixed table the
count is the constant 1 (numba then drops the loop over a throw's entries and the division by the count),
and the running entry index is never read.

Reading a row::

    e = row_first(store, r)
    for t in range(nt):
        for _ in range(row_count(store, r, t)):
            code = row_entry(store, r, t, e)
            e += 1

Writing one (a pack kernel): ``put_entry(store, r, t, e, code)`` for each entry, then
``close_throw(store, r, t, used)`` (a packed store records the count; a fixed one marks a throw with no
entry ``NO_MOVE``).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

__all__ = ["NO_MOVE", "close_throw", "is_fixed", "put_entry", "row_count", "row_entry", "row_first"]

#: The entry of a fixed table for a throw with no move (the game is over).
NO_MOVE = -3


def is_fixed(store) -> bool:
    """Whether ``store`` is a fixed table (else a packed ``(start, cnt, ent)``)."""
    return isinstance(store, np.ndarray)


def row_first(store, r):
    """The first entry of row ``r`` (packed; 0 for a fixed table, whose entries are found by row and throw)."""
    return 0 if is_fixed(store) else store[0][r]


def row_count(store, r, t):
    """The entries of row ``r`` and throw ``t``."""
    return 1 if is_fixed(store) else store[1][r, t]


def row_entry(store, r, t, e):
    """The entry ``e`` of row ``r`` and throw ``t`` (``e`` counted from :func:`row_first`)."""
    return store[r, t] if is_fixed(store) else store[2][e]


def put_entry(store, r, t, e, code):
    """Write the entry ``e`` of row ``r`` and throw ``t``."""
    if is_fixed(store):
        store[r, t] = code
    else:
        store[2][e] = code


def close_throw(store, r, t, used):
    """Row ``r``'s throw ``t`` is written, with ``used`` entries."""
    if not is_fixed(store):
        store[1][r, t] = used
    elif used == 0:
        store[r, t] = NO_MOVE


def _fixed(store) -> bool:
    return isinstance(store, types.Array)


@overload(row_first, inline="always")
def _row_first(store, r):
    if _fixed(store):
        return lambda store, r: 0
    return lambda store, r: store[0][r]


@overload(row_count, inline="always")
def _row_count(store, r, t):
    if _fixed(store):
        return lambda store, r, t: 1
    return lambda store, r, t: store[1][r, t]


@overload(row_entry, inline="always")
def _row_entry(store, r, t, e):
    if _fixed(store):
        return lambda store, r, t, e: store[r, t]
    return lambda store, r, t, e: store[2][e]


@overload(put_entry, inline="always")
def _put_entry(store, r, t, e, code):
    if _fixed(store):
        def fixed(store, r, t, e, code):
            store[r, t] = code
        return fixed

    def packed(store, r, t, e, code):
        store[2][e] = code
    return packed


@overload(close_throw, inline="always")
def _close_throw(store, r, t, used):
    if _fixed(store):
        def fixed(store, r, t, used):
            if used == 0:
                store[r, t] = NO_MOVE
        return fixed

    def packed(store, r, t, used):
        store[1][r, t] = used
    return packed
