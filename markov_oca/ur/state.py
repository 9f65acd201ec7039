"""Perfect (combinatorial) ranking of Royal Game of Ur positions.

A position is seen from the side to move, which is always called *mine* (light);
the other side is *theirs* (dark). Who is to move is handled by mirror symmetry:
:func:`mirror_many` swaps the colours, so a position with dark to move is ranked
as its mirror. The space for N pieces per side therefore holds S(N) positions
(:func:`count_positions`), S(7) = 137,913,936. Terminal positions (a side with
all N pieces off) are part of the space.

Encoding (seven small integers; the same fields in the same order everywhere)
------------------------------------------------------------------------------
Path squares are 0 (hand), 1..14 (board), 15 (off). Squares 1-4 and 13-14 are
private (each side has its own copy), squares 5-12 are the shared lane.

``lane``        int 0..6560, base 3: digit i (weight 3**i) describes square 5+i;
                0 empty, 1 mine (light / side to move), 2 theirs (dark).
``mine_mask``   6-bit mask of my private squares: bit 0..5 = squares
                1, 2, 3, 4, 13, 14 (see :data:`PRIVATE_SQUARES`).
``mine_hand``   my pieces in hand (square 0).
``mine_off``    my pieces off the board (square 15).
``their_mask``, ``their_hand``, ``their_off``: the same for the other side.

A position is valid when, for each side, hand + popcount(mask) + (its pieces on
the lane) + off = N, all counts >= 0.

Ranking scheme
--------------
Only lane configurations with at most N light and at most N dark pieces are
used; they are taken in increasing ``lane`` order, each owning a block of
``f(N - a) * f(N - b)`` consecutive indices (a, b = light, dark counts on the
lane), where ``f(r) = sum_{mask, popcount k <= r} (r - k + 1)`` counts one
side's (mask, hand, off) triples with r pieces off the lane. Inside a block::

    index = block_start[lane] + side_rank(mine) * f(N - b) + side_rank(theirs)

and ``side_rank`` orders masks increasingly, then ``off`` increasingly
(``hand`` is implied). Ranking is a handful of table lookups; unranking a
bucket lookup, a binary search over a few
block starts, and lookups.

Jitted kernels take the table tuple ``UrSpace(n).tables`` as their first
argument, so other numba code (a solver) can call :func:`rank` / :func:`unrank`
directly.
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numba
import numpy as np
from numba import prange

__all__ = [
    "LANE_CONFIGS",
    "LANE_SQUARES",
    "PRIVATE_SQUARES",
    "Position",
    "UrSpace",
    "count_positions",
    "decode",
    "encode",
    "is_valid",
    "lane_counts",
    "lane_pips",
    "lane_squares",
    "mask_squares",
    "mirror",
    "mirror_lane",
    "mirror_many",
    "rank",
    "rank_many",
    "side_count",
    "side_pips",
    "unrank",
    "unrank_at",
    "unrank_many",
]

#: Path squares of the six private-mask bits, bit 0 first.
PRIVATE_SQUARES = (1, 2, 3, 4, 13, 14)
#: Path squares of the eight lane digits, digit 0 first.
LANE_SQUARES = tuple(range(5, 13))
#: Number of lane configurations (3**8).
LANE_CONFIGS = 3**8
MAX_PIECES = 7
_BIT_OF_SQUARE = {sq: i for i, sq in enumerate(PRIVATE_SQUARES)}


class Position(NamedTuple):
    """One position in the encoding above (side to move = mine = light)."""

    lane: int
    mine_mask: int
    mine_hand: int
    mine_off: int
    their_mask: int
    their_hand: int
    their_off: int


# ----------------------------------------------------------------------------
# Tables independent of N
# ----------------------------------------------------------------------------

def _lane_tables():
    light = np.zeros(LANE_CONFIGS, np.int8)
    dark = np.zeros(LANE_CONFIGS, np.int8)
    mir = np.zeros(LANE_CONFIGS, np.int32)
    swap = (0, 2, 1)
    for lane in range(LANE_CONFIGS):
        x, p, m = lane, 1, 0
        for _ in range(8):
            d = x % 3
            x //= 3
            light[lane] += d == 1
            dark[lane] += d == 2
            m += swap[d] * p
            p *= 3
        mir[lane] = m
    return light, dark, mir


_LANE_LIGHT, _LANE_DARK, _LANE_MIRROR = _lane_tables()
_POP6 = np.array([bin(m).count("1") for m in range(64)], np.int8)
for _arr in (_LANE_LIGHT, _LANE_DARK, _LANE_MIRROR, _POP6):
    _arr.setflags(write=False)


def side_count(r: int) -> int:
    """f(r): the (private mask, hand, off) triples of one side with r pieces off the lane."""
    if r < 0:
        return 0
    return sum(comb(6, k) * (r - k + 1) for k in range(min(6, r) + 1))


def lane_counts(lane):
    """(light, dark) piece counts of lane code(s) ``lane`` (int or int array)."""
    lane = np.asarray(lane)
    return _LANE_LIGHT[lane], _LANE_DARK[lane]


def mirror_lane(lane):
    """The lane code(s) with colours swapped."""
    return _LANE_MIRROR[np.asarray(lane)]


def count_positions(n: int) -> int:
    """S(n): positions with n pieces per side and a fixed side to move."""
    _check_n(n)
    a = _LANE_LIGHT.astype(np.int64)
    b = _LANE_DARK.astype(np.int64)
    f = np.array([side_count(r) for r in range(n + 1)], np.int64)
    ok = (a <= n) & (b <= n)
    return int((f[n - a[ok]] * f[n - b[ok]]).sum())


def _check_n(n) -> None:
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_PIECES:
        raise ValueError(f"pieces per side must be an integer in 1..{MAX_PIECES}, got {n!r}")


# ----------------------------------------------------------------------------
# The space for one N
# ----------------------------------------------------------------------------

class UrSpace:
    """Ranking tables for N pieces per side (a few tens of kB).

    ``tables`` is the tuple passed to the jitted kernels :func:`rank`,
    :func:`unrank`, :func:`rank_many`, :func:`unrank_many`.
    """

    def __init__(self, n: int):
        _check_n(n)
        self.n = int(n)
        f = np.array([side_count(r) for r in range(n + 1)], np.int64)
        fmax = int(f[n])
        # side_off[r, mask]: first side rank of `mask` with r pieces off the lane, -1 if too many bits
        side_off = np.full((n + 1, 64), -1, np.int64)
        side_mask = np.full((n + 1, fmax), -1, np.int8)   # side rank -> mask
        side_o = np.full((n + 1, fmax), -1, np.int8)      # side rank -> off
        for r in range(n + 1):
            j = 0
            for m in range(64):
                k = int(_POP6[m])
                if k > r:
                    continue
                side_off[r, m] = j
                for o in range(r - k + 1):
                    side_mask[r, j] = m
                    side_o[r, j] = o
                    j += 1
            assert j == f[r]
        a = _LANE_LIGHT.astype(np.int64)
        b = _LANE_DARK.astype(np.int64)
        ok = (a <= n) & (b <= n)
        lanes = np.flatnonzero(ok).astype(np.int32)           # valid lane codes, increasing
        sizes = f[n - a[lanes]] * f[n - b[lanes]]
        starts = np.zeros(len(lanes) + 1, np.int64)
        np.cumsum(sizes, out=starts[1:])
        lane_start = np.full(LANE_CONFIGS, -1, np.int64)      # lane code -> block start, -1 if invalid
        lane_start[lanes] = starts[:-1]
        self.size = int(starts[-1])
        self.f = f
        # unrank accelerator: bucket[i >> shift] is the block holding index i (2**16 buckets at most),
        # so the binary search only runs between two neighbouring bucket entries
        shift = max(0, self.size.bit_length() - 16)
        nb = ((self.size - 1) >> shift) + 2
        bucket = np.searchsorted(starts, np.arange(nb, dtype=np.int64) << shift, side="right") - 1
        bucket = np.minimum(bucket, len(lanes) - 1).astype(np.int32)
        self.tables = (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, np.int64(shift),
                       _LANE_LIGHT, _LANE_DARK, _POP6)
        for t in self.tables[:8]:
            t.setflags(write=False)

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"UrSpace(n={self.n}, size={self.size})"

    # scalar convenience --------------------------------------------------------
    def rank(self, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off) -> int:
        """Index of one position; ValueError if it is not valid for this N."""
        i = rank(self.tables, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off)
        if i < 0:
            raise ValueError(f"not a valid Ur position for N={self.n}: "
                             f"{(lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off)}")
        return int(i)

    def unrank(self, index: int) -> Position:
        """The position of one index; IndexError outside 0..size-1."""
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} outside 0..{self.size - 1}")
        return Position(*(int(v) for v in unrank(self.tables, index)))

    # vectorised ----------------------------------------------------------------
    def rank_many(self, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off,
                  *, check: bool = True) -> np.ndarray:
        """int64 indices of positions given as seven equal-length arrays.

        Invalid positions get -1, or raise ValueError when ``check``.
        """
        arrs = [_int_array(x) for x in (lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off)]
        if len({len(x) for x in arrs}) != 1:
            raise ValueError("position arrays differ in length")
        out = rank_many(self.tables, *arrs)
        if check and len(out) and out.min() < 0:
            bad = int(np.flatnonzero(out < 0)[0])
            raise ValueError(f"not a valid Ur position for N={self.n} at row {bad}: "
                             f"{tuple(int(x[bad]) for x in arrs)}")
        return out

    def unrank_many(self, idx) -> Position:
        """Positions of int64 indices, as a :class:`Position` of seven arrays.

        ``lane`` is int32, the other fields int8. IndexError outside 0..size-1.
        """
        idx = np.ascontiguousarray(idx, dtype=np.int64).ravel()
        if len(idx) and (idx.min() < 0 or idx.max() >= self.size):
            raise IndexError(f"indices outside 0..{self.size - 1}")
        return Position(*unrank_many(self.tables, idx))

    def is_valid(self, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off) -> np.ndarray:
        """Boolean array: which of the given positions are valid for this N."""
        return self.rank_many(lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off,
                              check=False) >= 0


def _int_array(x) -> np.ndarray:
    """1-d contiguous integer array; integer dtypes are kept (no copy of unrank_many's int8 output)."""
    x = np.ascontiguousarray(x).ravel()
    if x.dtype.kind not in "iu" or x.dtype.itemsize > 8 or x.dtype == np.uint64:
        x = x.astype(np.int64)
    return x


# ----------------------------------------------------------------------------
# Jitted kernels
# ----------------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def _side_rank(f, side_off, pop6, r, mask, hand, off):
    if mask < 0 or mask > 63 or hand < 0 or off < 0:
        return -1
    if hand + off + pop6[mask] != r:
        return -1
    return side_off[r, mask] + off


@numba.njit(cache=True, inline="always")
def _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6,
               lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off):
    if lane < 0 or lane >= 6561:
        return -1
    base = lane_start[lane]
    if base < 0:
        return -1
    n = f.shape[0] - 1
    rm = n - lane_light[lane]
    rt = n - lane_dark[lane]
    sm = _side_rank(f, side_off, pop6, rm, mine_mask, mine_hand, mine_off)
    st = _side_rank(f, side_off, pop6, rt, their_mask, their_hand, their_off)
    if sm < 0 or st < 0:
        return -1
    return base + sm * f[rt] + st


@numba.njit(cache=True, inline="always")
def _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, index):
    m = lanes.shape[0]
    if index < 0 or index >= starts[m]:
        return -1, -1, -1, -1, -1, -1, -1
    lo = bucket[index >> shift]  # largest j with starts[j] <= index lies in bucket[b]..bucket[b+1]
    hi = bucket[(index >> shift) + 1]
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if starts[mid] <= index:
            lo = mid
        else:
            hi = mid - 1
    lane = lanes[lo]
    rem = index - starts[lo]
    n = f.shape[0] - 1
    rm = n - lane_light[lane]
    rt = n - lane_dark[lane]
    ft = f[rt]
    sm = rem // ft
    st = rem - sm * ft
    mm = side_mask[rm, sm]
    mo = side_o[rm, sm]
    tm = side_mask[rt, st]
    to = side_o[rt, st]
    return (np.int64(lane), np.int64(mm), np.int64(rm - pop6[mm] - mo), np.int64(mo),
            np.int64(tm), np.int64(rt - pop6[tm] - to), np.int64(to))


@numba.njit(cache=True, inline="always")
def unrank_at(tables, index):
    """:func:`unrank` inlined into a kernel: (lane, mine_mask, mine_hand, mine_off, their_mask, their_hand,
    their_off) of ``index``."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    return _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, index)


@numba.njit(cache=True, inline="always")
def mask_squares(mask):
    """A side's own squares (bits 0-3: path squares 1-4, bits 4-5: squares 13-14) as bits of path squares."""
    out = np.int64(0)
    for b in range(6):
        if (mask >> b) & 1:
            out |= np.int64(1) << (b + 1 if b < 4 else b + 9)
    return out


@numba.njit(cache=True, inline="always")
def lane_squares(lane):
    """The shared lane (base-3 digits, square 5 first: 1 the mover's, 2 the opponent's) as two sets of bits of
    path squares: (the mover's, the opponent's)."""
    mine = np.int64(0)
    theirs = np.int64(0)
    x = np.int64(lane)
    for d in range(8):
        dig = x % 3
        x //= 3
        if dig == 1:
            mine |= np.int64(1) << (5 + d)
        elif dig == 2:
            theirs |= np.int64(1) << (5 + d)
    return mine, theirs


@numba.njit(cache=True, inline="always")
def side_pips(mask, off):
    """Pips a side has walked with its pieces off (15 each) and on its own squares (a piece on path square s has
    walked s)."""
    p = 15 * off
    for bit in range(6):
        if (mask >> bit) & 1:
            p += bit + 1 if bit < 4 else bit + 9
    return p


@numba.njit(cache=True, inline="always")
def lane_pips(lane):
    """Pips walked by the pieces on the shared lane: (the mover's, the opponent's)."""
    p = 0
    q = 0
    x = lane
    for d in range(8):
        if x % 3 == 1:
            p += 5 + d
        elif x % 3 == 2:
            q += 5 + d
        x //= 3
    return p, q


@numba.njit(cache=True)
def rank(tables, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off):
    """Index of a position (light to move) in 0..S(N)-1, or -1 if it is not valid."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    return _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6,
                      lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off)


@numba.njit(cache=True)
def unrank(tables, index):
    """Position of an index, as (lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off).

    All -1 unless 0 <= index < S(N).
    """
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    return _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, index)


# The array kernels unpack the table tuple once, outside the loop: unpacking it per element
# (calling rank/unrank) costs about twice the work itself.

@numba.njit(cache=True, parallel=True)
def rank_many(tables, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off):
    """int64 indices of arrays of positions (-1 where invalid)."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    k = lane.shape[0]
    out = np.empty(k, np.int64)
    for i in prange(k):
        out[i] = _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6, lane[i], mine_mask[i],
                            mine_hand[i], mine_off[i], their_mask[i], their_hand[i], their_off[i])
    return out


@numba.njit(cache=True, parallel=True)
def unrank_many(tables, idx):
    """Arrays (lane int32, then six int8 fields) of the positions of int64 indices."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    k = idx.shape[0]
    lane = np.empty(k, np.int32)
    mm = np.empty(k, np.int8)
    mh = np.empty(k, np.int8)
    mo = np.empty(k, np.int8)
    tm = np.empty(k, np.int8)
    th = np.empty(k, np.int8)
    to = np.empty(k, np.int8)
    for i in prange(k):
        p = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, idx[i])
        lane[i] = p[0]
        mm[i] = p[1]
        mh[i] = p[2]
        mo[i] = p[3]
        tm[i] = p[4]
        th[i] = p[5]
        to[i] = p[6]
    return lane, mm, mh, mo, tm, th, to


# ----------------------------------------------------------------------------
# Mirror and conversions
# ----------------------------------------------------------------------------

def mirror_many(lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off) -> Position:
    """The same positions seen by the other side: lane colours swapped, side data swapped.

    Works on scalars or arrays; an involution, valid -> valid.
    """
    return Position(_LANE_MIRROR[np.asarray(lane)], np.asarray(their_mask), np.asarray(their_hand),
                    np.asarray(their_off), np.asarray(mine_mask), np.asarray(mine_hand), np.asarray(mine_off))


def mirror(pos: Position) -> Position:
    """Scalar mirror of one :class:`Position` (plain ints)."""
    return Position(int(_LANE_MIRROR[pos.lane]), pos.their_mask, pos.their_hand, pos.their_off,
                    pos.mine_mask, pos.mine_hand, pos.mine_off)


def is_valid(n: int, pos) -> bool:
    """Whether one position (any 7-sequence) is valid with n pieces per side."""
    return rank(UrSpace(n).tables, *(int(v) for v in pos)) >= 0


def encode(mine, theirs) -> Position:
    """Position from per-piece path squares (0 hand, 1..14 board, 15 off), side to move first.

    Raises ValueError on a square outside 0..15, two pieces of one side on one
    board square, or two pieces on one lane square.
    """
    lane = 0
    sides = []
    for colour, squares in ((1, mine), (2, theirs)):
        mask = hand = off = 0
        for s in squares:
            s = int(s)
            if s == 0:
                hand += 1
            elif s == 15:
                off += 1
            elif s in _BIT_OF_SQUARE:
                bit = 1 << _BIT_OF_SQUARE[s]
                if mask & bit:
                    raise ValueError(f"two pieces of one side on square {s}")
                mask |= bit
            elif 5 <= s <= 12:
                w = 3 ** (s - 5)
                if (lane // w) % 3:
                    raise ValueError(f"two pieces on lane square {s}")
                lane += colour * w
            else:
                raise ValueError(f"square {s} outside 0..15")
        sides.append((mask, hand, off))
    return Position(lane, *sides[0], *sides[1])


def decode(pos) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per-piece path squares (sorted) of both sides: (mine, theirs)."""
    lane, mm, mh, mo, tm, th, to = (int(v) for v in pos)
    out = []
    for colour, mask, hand, off in ((1, mm, mh, mo), (2, tm, th, to)):
        sq = [0] * hand
        sq += [PRIVATE_SQUARES[i] for i in range(6) if mask >> i & 1]
        sq += [5 + i for i in range(8) if (lane // 3**i) % 3 == colour]
        sq += [15] * off
        out.append(tuple(sorted(sq)))
    return out[0], out[1]
