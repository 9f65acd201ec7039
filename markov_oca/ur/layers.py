"""The layers of an Ur game: the positions of each pair of pieces off, and the order they are swept in.

The pieces off the board never go back, so a position with ``a`` of the mover's pieces off and ``b`` of the
opponent's can only lead to positions with the same pair (``(a, b)`` or, seen from the other side, ``(b, a)``)
or with one more piece off. A *layer* is the unordered pair ``{a, b}``: the positions ``(a, b)`` and
``(b, a)`` together, the only cycles of the game (captures) stay inside it. Layers are solved from the most
pieces off down (:func:`layers`); when a layer is solved its successors in the layers above are final.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .rules import UrRules
from .state import UrSpace, _rank_core, _unrank_core, lane_pips, side_pips, unrank_at

__all__ = ["CHUNK", "ORDERS", "largest_layer", "layer_members", "layers", "mirror_ranks"]

#: Orders a layer's positions can be swept in.
ORDERS = ("rank", "reverse", "progress")
#: Positions per call of the move kernel while a layer is built.
CHUNK = 1 << 19


def layers(rules: UrRules) -> list[tuple[int, int]]:
    """The layers ``(a, b)``, ``a <= b``, of positions not over, in the order they are solved."""
    n, total = rules.pieces, rules.end_total
    out = [(a, b) for a in range(n) for b in range(a, n) if not (total > 0 and a + b >= total)]
    return sorted(out, key=lambda p: (-(p[0] + p[1]), p))


@numba.njit(cache=True)
def _members(tables, a, b, out, fill):
    """Ranks of the positions with ``a`` of the mover's pieces off and ``b`` of the opponent's, ascending."""
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    n = f.shape[0] - 1
    k = 0
    for li in range(lanes.shape[0]):
        lane = lanes[li]
        rm = n - lane_light[lane]
        rt = n - lane_dark[lane]
        if rm < a or rt < b:
            continue
        ft = f[rt]
        base = starts[li]
        for mm in range(side_off.shape[1]):
            if side_off[rm, mm] < 0 or pop6[mm] + a > rm:
                continue
            sm = side_off[rm, mm] + a
            for tm in range(side_off.shape[1]):
                if side_off[rt, tm] < 0 or pop6[tm] + b > rt:
                    continue
                if fill:
                    out[k] = base + sm * ft + side_off[rt, tm] + b
                k += 1
    return k


def _pairs_members(space: UrSpace, a: int, b: int) -> np.ndarray:
    dummy = np.empty(0, np.int64)
    k = _members(space.tables, a, b, dummy, False)
    out = np.empty(k, np.int64)
    _members(space.tables, a, b, out, True)
    return out


@numba.njit(cache=True, parallel=True)
def _pips(tables, idx):
    """Pips walked by both sides (a piece on path square s has walked s) of each position."""
    out = np.empty(idx.shape[0], np.int16)
    for i in prange(idx.shape[0]):
        lane, mm, mh, mo, tm, th, to = unrank_at(tables, idx[i])
        lp, lq = lane_pips(tables[13], tables[14], lane)
        out[i] = side_pips(tables[15], tables[19], mm, mo) + side_pips(tables[15], tables[19], tm, to) + lp + lq
    return out


@numba.njit(cache=True, parallel=True)
def mirror_ranks(tables, idx):
    """Rank of each position seen from the other side (the same board, the other side to move)."""
    (f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark,
     pop6) = tables[:12]
    out = np.empty(idx.shape[0], np.int64)
    for i in prange(idx.shape[0]):
        lane, mm, mh, mo, tm, th, to = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift,
                                                    lane_light, lane_dark, pop6, idx[i])
        out[i] = _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6, tables[12][lane],
                            tm, th, to, mm, mh, mo)
    return out


def layer_members(space: UrSpace, pair: tuple[int, int], order: str = "rank",
                  pairs: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of the positions of layer ``pair`` in the order they are swept, and their pairing.

    ``order`` (see :data:`ORDERS`): ``rank`` ascending, ``reverse`` descending, ``progress``:
    the positions furthest on (most pips walked by both sides) first, ties by rank. With
    ``pairs``, each position is followed by its mirror (the same board, the other side to
    move: a pass leads from one to the other), so that a sweep can solve the two together;
    the order then applies to the first of each pair. The second array (int8) is 0 for a
    position swept alone, 1 for the first of a pair, 2 for the second.
    """
    a, b = pair
    first = _pairs_members(space, a, b)
    if a != b and not pairs:
        first = np.sort(np.concatenate([first, _pairs_members(space, b, a)]))
    mir = None
    if pairs:
        mir = mirror_ranks(space.tables, first)
        if a == b:  # both of a pair are in (a, a): keep the smaller as the first
            keep = first <= mir
            first, mir = first[keep], mir[keep]
    if order == "reverse":
        sel = np.arange(first.size)[::-1]
    elif order == "progress":
        sel = np.argsort(-_pips(space.tables, first).astype(np.int32), kind="stable")
    elif order == "rank":
        sel = None
    else:
        raise ValueError(f"unknown order {order!r} (orders: {', '.join(ORDERS)})")
    if sel is not None:
        first = first[sel]
        mir = mir[sel] if mir is not None else None
    if mir is None:
        return first, np.zeros(first.size, np.int8)
    alone = first == mir
    flag = np.where(alone, 0, 1).astype(np.int8)
    width = np.where(alone, 1, 2)
    at = np.zeros(first.size + 1, np.int64)
    np.cumsum(width, out=at[1:])
    idx = np.empty(int(at[-1]), np.int64)
    fl = np.empty(idx.size, np.int8)
    idx[at[:-1]] = first
    fl[at[:-1]] = flag
    two = np.flatnonzero(~alone)
    idx[at[two] + 1] = mir[two]
    fl[at[two] + 1] = 2
    return idx, fl



def largest_layer(space: UrSpace, pair: tuple[int, int]) -> int:
    """Positions of layer ``pair``."""
    a, b = pair
    dummy = np.empty(0, np.int64)
    k = _members(space.tables, a, b, dummy, False)
    return k + (_members(space.tables, b, a, dummy, False) if a != b else 0)
