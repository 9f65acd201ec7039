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

Other boards
------------
The fields above describe Bell's path (:data:`BELL`). A :class:`PathCode` names, for
any path pair that is the mirror image of itself (the dark path is the light path
reflected across the middle row), the mover's path squares of the private-mask bits
and of the lane digits, and the opponent's path square of each lane square. Masters'
path has 4 private squares a side and 12 shared ones (the middle row, and the two
squares at the end of each side row, which one side passes on its way out and the
other on its way in: the lane digit of such a square is a different path square for
each side); Aseb's board has 4 private squares and 12 shared. Mirroring a lane swaps
the colours and moves each digit to the square's reflection. ``lane`` then runs over
0..3**W - 1 and ``mine_mask`` over 0..2**P - 1; the ranking scheme is the same.

Jitted kernels take the table tuple ``UrSpace(n, code).tables`` as their first
argument, so other numba code (a solver) can call :func:`rank` / :func:`unrank`
directly. Its entries 12..19 are the board's (:attr:`UrSpace.board`): the lane
mirror, the mover's path square of each digit, the opponent's, the path square of
each private bit, path square -> digit (-1), path square -> bit (-1), the powers of 3
and the off square (a flat tuple: numba's parallel loops take no nested tuple).
"""

from __future__ import annotations

import functools
from math import comb
from typing import NamedTuple

import numba
import numpy as np
from numba import prange

__all__ = [
    "BELL",
    "LANE_CONFIGS",
    "LANE_SQUARES",
    "PRIVATE_SQUARES",
    "PathCode",
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
    "space_of",
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


class Position(NamedTuple):
    """One position in the encoding above (side to move = mine = light)."""

    lane: int
    mine_mask: int
    mine_hand: int
    mine_off: int
    their_mask: int
    their_hand: int
    their_off: int


class PathCode(NamedTuple):
    """Which path squares a position's fields describe (see the module docstring).

    ``private``: the mover's path squares of the private-mask bits, bit 0 first;
    ``shared``: the mover's path squares of the lane digits, digit 0 first;
    ``theirs``: for each digit, the opponent's path square of that board square;
    ``path_length``: squares on the path (off the board is ``path_length + 1``).
    """

    private: tuple[int, ...]
    shared: tuple[int, ...]
    theirs: tuple[int, ...]
    path_length: int

    @property
    def off(self) -> int:
        """The path square of a piece off the board."""
        return self.path_length + 1

    @property
    def mirror_digit(self) -> tuple[int, ...]:
        """Digit -> the digit of the same square's reflection (the square the other side reaches there)."""
        return tuple(self.shared.index(t) for t in self.theirs)


#: Bell's path (the classic board): squares 1-4 and 13-14 private, 5-12 shared.
BELL = PathCode((1, 2, 3, 4, 13, 14), tuple(range(5, 13)), tuple(range(5, 13)), 14)


# ----------------------------------------------------------------------------
# Tables independent of N
# ----------------------------------------------------------------------------

def _lane_tables(code: PathCode = BELL):
    """(light count, dark count, mirror) of every lane code of ``code``'s lane (int8, int8, int32)."""
    w = len(code.shared)
    pow3 = 3 ** np.arange(w, dtype=np.int64)
    lanes = np.arange(3**w, dtype=np.int64)
    digits = (lanes[:, None] // pow3[None, :]) % 3
    light = (digits == 1).sum(axis=1).astype(np.int8)
    dark = (digits == 2).sum(axis=1).astype(np.int8)
    swapped = np.array([0, 2, 1], np.int64)[digits]
    mir = (swapped * pow3[list(code.mirror_digit)][None, :]).sum(axis=1).astype(np.int32)
    for arr in (light, dark, mir):
        arr.setflags(write=False)
    return light, dark, mir


def _pop_table(bits: int) -> np.ndarray:
    out = np.array([bin(m).count("1") for m in range(1 << bits)], np.int8)
    out.setflags(write=False)
    return out


_LANE_LIGHT, _LANE_DARK, _LANE_MIRROR = _lane_tables()
_POP6 = _pop_table(6)


def side_count(r: int, bits: int = 6) -> int:
    """f(r): the (private mask, hand, off) triples of one side with r pieces off the lane (``bits`` private squares)."""
    if r < 0:
        return 0
    return sum(comb(bits, k) * (r - k + 1) for k in range(min(bits, r) + 1))


def lane_counts(lane):
    """(light, dark) piece counts of lane code(s) ``lane`` (int or int array)."""
    lane = np.asarray(lane)
    return _LANE_LIGHT[lane], _LANE_DARK[lane]


def mirror_lane(lane):
    """The lane code(s) with colours swapped."""
    return _LANE_MIRROR[np.asarray(lane)]


def count_positions(n: int, code: PathCode = BELL) -> int:
    """S(n): positions with n pieces per side and a fixed side to move (on ``code``'s board, Bell's by default)."""
    _check_n(n)
    light, dark, _ = _lane_tables(code) if code != BELL else (_LANE_LIGHT, _LANE_DARK, None)
    a = light.astype(np.int64)
    b = dark.astype(np.int64)
    f = np.array([side_count(r, len(code.private)) for r in range(n + 1)], np.int64)
    ok = (a <= n) & (b <= n)
    return int((f[n - a[ok]] * f[n - b[ok]]).sum())


def _check_n(n) -> None:
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_PIECES:
        raise ValueError(f"pieces per side must be an integer in 1..{MAX_PIECES}, got {n!r}")


# ----------------------------------------------------------------------------
# The space for one N
# ----------------------------------------------------------------------------

def _board_tuple(code: PathCode, mirror: np.ndarray) -> tuple:
    """The board entry of a table tuple (see the module docstring)."""
    size = code.path_length + 2
    sq_digit = np.full(size, -1, np.int64)
    sq_bit = np.full(size, -1, np.int64)
    for d, q in enumerate(code.shared):
        sq_digit[q] = d
    for b, q in enumerate(code.private):
        sq_bit[q] = b
    arrs = (mirror, np.array(code.shared, np.int64), np.array(code.theirs, np.int64),
            np.array(code.private, np.int64), sq_digit, sq_bit, 3 ** np.arange(len(code.shared), dtype=np.int64))
    for a in arrs[1:]:
        a.setflags(write=False)
    return (*arrs, np.int64(code.off))


class UrSpace:
    """Ranking tables for N pieces per side on ``code``'s board (Bell's by default).

    ``tables`` is the tuple passed to the jitted kernels :func:`rank`,
    :func:`unrank`, :func:`rank_many`, :func:`unrank_many`.
    """

    def __init__(self, n: int, code: PathCode = BELL):
        _check_n(n)
        self.n = int(n)
        self.code = code
        bits = len(code.private)
        lane_light, lane_dark, lane_mirror = ((_LANE_LIGHT, _LANE_DARK, _LANE_MIRROR) if code == BELL
                                              else _lane_tables(code))
        pop = _POP6 if bits == 6 else _pop_table(bits)
        f = np.array([side_count(r, bits) for r in range(n + 1)], np.int64)
        fmax = int(f[n])
        # side_off[r, mask]: first side rank of `mask` with r pieces off the lane, -1 if too many bits
        side_off = np.full((n + 1, 1 << bits), -1, np.int64)
        side_mask = np.full((n + 1, fmax), -1, np.int8)   # side rank -> mask
        side_o = np.full((n + 1, fmax), -1, np.int8)      # side rank -> off
        for r in range(n + 1):
            j = 0
            for m in range(1 << bits):
                k = int(pop[m])
                if k > r:
                    continue
                side_off[r, m] = j
                for o in range(r - k + 1):
                    side_mask[r, j] = m
                    side_o[r, j] = o
                    j += 1
            assert j == f[r]
        a = lane_light.astype(np.int64)
        b = lane_dark.astype(np.int64)
        ok = (a <= n) & (b <= n)
        lanes = np.flatnonzero(ok).astype(np.int32)           # valid lane codes, increasing
        sizes = f[n - a[lanes]] * f[n - b[lanes]]
        starts = np.zeros(len(lanes) + 1, np.int64)
        np.cumsum(sizes, out=starts[1:])
        lane_start = np.full(len(a), -1, np.int64)            # lane code -> block start, -1 if invalid
        lane_start[lanes] = starts[:-1]
        self.size = int(starts[-1])
        self.f = f
        # unrank accelerator: bucket[i >> shift] is the block holding index i (2**16 buckets at most),
        # so the binary search only runs between two neighbouring bucket entries
        shift = max(0, self.size.bit_length() - 16)
        nb = ((self.size - 1) >> shift) + 2
        bucket = np.searchsorted(starts, np.arange(nb, dtype=np.int64) << shift, side="right") - 1
        bucket = np.minimum(bucket, len(lanes) - 1).astype(np.int32)
        self.board = _board_tuple(code, lane_mirror)
        self.tables = (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, np.int64(shift),
                       lane_light, lane_dark, pop, *self.board)
        for t in self.tables[:8]:
            t.setflags(write=False)

    @property
    def lane_mirror(self) -> np.ndarray:
        """Lane code -> the lane code seen from the other side (int32)."""
        return self.board[0]

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"UrSpace(n={self.n}, size={self.size})" if self.code == BELL else \
            f"UrSpace(n={self.n}, size={self.size}, code={self.code})"


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


@functools.lru_cache(maxsize=16)
def space_of(n: int, code: PathCode = BELL) -> UrSpace:
    """The (shared, read-only) :class:`UrSpace` of n pieces on ``code``'s board, built once."""
    return UrSpace(n, code)


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
    if mask < 0 or mask >= side_off.shape[1] or hand < 0 or off < 0:
        return -1
    if hand + off + pop6[mask] != r:
        return -1
    return side_off[r, mask] + off


@numba.njit(cache=True, inline="always")
def _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6,
               lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off):
    if lane < 0 or lane >= lane_start.shape[0]:
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
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    return _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, index)


@numba.njit(cache=True, inline="always")
def mask_squares(bit_sq, mask):
    """A side's own squares (a private mask; ``bit_sq`` each bit's path square) as bits of path squares."""
    out = np.int64(0)
    for b in range(bit_sq.shape[0]):
        if (mask >> b) & 1:
            out |= np.int64(1) << bit_sq[b]
    return out


@numba.njit(cache=True, inline="always")
def lane_squares(digit_sq, lane):
    """The shared lane (base-3 digits: 1 the mover's, 2 the opponent's; ``digit_sq`` each digit's path square) as
    two sets of bits of the mover's path squares: (the mover's pieces, the opponent's pieces)."""
    mine = np.int64(0)
    theirs = np.int64(0)
    x = np.int64(lane)
    for d in range(digit_sq.shape[0]):
        dig = x % 3
        x //= 3
        if dig == 1:
            mine |= np.int64(1) << digit_sq[d]
        elif dig == 2:
            theirs |= np.int64(1) << digit_sq[d]
    return mine, theirs


@numba.njit(cache=True, inline="always")
def side_pips(bit_sq, off_sq, mask, off):
    """Pips a side has walked with its pieces off (``off_sq`` each) and on its own squares (a piece on path
    square s has walked s)."""
    p = off_sq * off
    for bit in range(bit_sq.shape[0]):
        if (mask >> bit) & 1:
            p += bit_sq[bit]
    return p


@numba.njit(cache=True, inline="always")
def lane_pips(digit_sq, their_sq, lane):
    """Pips walked by the pieces on the shared lane: (the mover's, the opponent's), each on its own path."""
    p = 0
    q = 0
    x = lane
    for d in range(digit_sq.shape[0]):
        if x % 3 == 1:
            p += digit_sq[d]
        elif x % 3 == 2:
            q += their_sq[d]
        x //= 3
    return p, q


@numba.njit(cache=True)
def rank(tables, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off):
    """Index of a position (light to move) in 0..S(N)-1, or -1 if it is not valid."""
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    return _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6,
                      lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off)


@numba.njit(cache=True)
def unrank(tables, index):
    """Position of an index, as (lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off).

    All -1 unless 0 <= index < S(N).
    """
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    return _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, index)


# The array kernels unpack the table tuple once, outside the loop: unpacking it per element
# (calling rank/unrank) costs about twice the work itself.

@numba.njit(cache=True, parallel=True)
def rank_many(tables, lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off):
    """int64 indices of arrays of positions (-1 where invalid)."""
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    k = lane.shape[0]
    out = np.empty(k, np.int64)
    for i in prange(k):
        out[i] = _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6, lane[i], mine_mask[i],
                            mine_hand[i], mine_off[i], their_mask[i], their_hand[i], their_off[i])
    return out


@numba.njit(cache=True, parallel=True)
def unrank_many(tables, idx):
    """Arrays (lane int32, then six int8 fields) of the positions of int64 indices."""
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
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

def _mirror_table(code: PathCode) -> np.ndarray:
    return _LANE_MIRROR if code == BELL else space_of(1, code).lane_mirror


def mirror_many(lane, mine_mask, mine_hand, mine_off, their_mask, their_hand, their_off, *,
                code: PathCode = BELL) -> Position:
    """The same positions seen by the other side: lane colours swapped (and each lane square moved to its
    reflection on ``code``'s board), side data swapped.

    Works on scalars or arrays; an involution, valid -> valid.
    """
    return Position(_mirror_table(code)[np.asarray(lane)], np.asarray(their_mask), np.asarray(their_hand),
                    np.asarray(their_off), np.asarray(mine_mask), np.asarray(mine_hand), np.asarray(mine_off))


def mirror(pos: Position, code: PathCode = BELL) -> Position:
    """Scalar mirror of one :class:`Position` (plain ints)."""
    return Position(int(_mirror_table(code)[pos.lane]), pos.their_mask, pos.their_hand, pos.their_off,
                    pos.mine_mask, pos.mine_hand, pos.mine_off)


def is_valid(n: int, pos, code: PathCode = BELL) -> bool:
    """Whether one position (any 7-sequence) is valid with n pieces per side."""
    return rank(space_of(n, code).tables, *(int(v) for v in pos)) >= 0


def encode(mine, theirs, code: PathCode = BELL) -> Position:
    """Position from per-piece path squares (0 hand, 1..L board, L + 1 off; each side on its own path), side to
    move first.

    Raises ValueError on a square outside 0..L + 1, two pieces of one side on one
    board square, or two pieces on one lane square.
    """
    off_sq = code.off
    bit_of = {sq: i for i, sq in enumerate(code.private)}
    lane = 0
    sides = []
    for colour, squares, digits in ((1, mine, code.shared), (2, theirs, code.theirs)):
        digit_of = {sq: d for d, sq in enumerate(digits)}
        mask = hand = off = 0
        for s in squares:
            s = int(s)
            if s == 0:
                hand += 1
            elif s == off_sq:
                off += 1
            elif s in bit_of:
                bit = 1 << bit_of[s]
                if mask & bit:
                    raise ValueError(f"two pieces of one side on square {s}")
                mask |= bit
            elif s in digit_of:
                w = 3 ** digit_of[s]
                if (lane // w) % 3:
                    raise ValueError(f"two pieces on lane square {s}")
                lane += colour * w
            else:
                raise ValueError(f"square {s} outside 0..{off_sq}")
        sides.append((mask, hand, off))
    return Position(lane, *sides[0], *sides[1])


def decode(pos, code: PathCode = BELL) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per-piece path squares (sorted, each side on its own path) of both sides: (mine, theirs)."""
    lane, mm, mh, mo, tm, th, to = (int(v) for v in pos)
    out = []
    for colour, mask, hand, off, digits in ((1, mm, mh, mo, code.shared), (2, tm, th, to, code.theirs)):
        sq = [0] * hand
        sq += [code.private[i] for i in range(len(code.private)) if mask >> i & 1]
        sq += [digits[i] for i in range(len(digits)) if (lane // 3**i) % 3 == colour]
        sq += [code.off] * off
        out.append(tuple(sorted(sq)))
    return out[0], out[1]
