"""The optimal values of a whole Ur game, one layer of pieces off at a time.

The pieces off the board never go back, so a position with ``a`` of the mover's
pieces off and ``b`` of the opponent's can only lead to positions with the same
pair (``(a, b)`` or, seen from the other side, ``(b, a)``) or with one more piece
off. A *layer* is the unordered pair ``{a, b}``: the positions ``(a, b)`` and
``(b, a)`` together, the only cycles of the game (captures) stay inside it.
Layers are solved from the most pieces off down; when a layer is solved its
successors in the layers above are final.

For one layer the successors are built from the move kernel in chunks and
packed: a move into the layer is a local index (and whether the mover throws
again), a move out of it (a piece off, the end of the game) is a value already
known, and the best of those per throw is kept as one constant. The layer's
values are then swept Gauss-Seidel (or Jacobi, to compare) until no value moves
by more than the tolerance, written into the table, and the packed successors
are dropped. The largest layer of the seven-piece game, ``{0, 1}``, holds
29,598,456 positions; its successors take about 70 bytes a position.

A checkpoint directory keeps each finished layer's values (``layer_a_b.npy``)
and a manifest naming the rules, so an interrupted solve resumes from its last
finished layer. The final table is written once, as ``.npy``, and read back
memory-mapped (:func:`load_table`). :func:`bellman_residual` recomputes every
position's Bellman update from the move kernel itself (not from the packed
layers) and gives the largest difference with the table.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
from numba import prange

from ..core.atomic import atomic_files
from ..core.errors import TooLargeError
from ..core.memory import available_memory, gib
from ..core.progress import progress_bar
from .kernel import AGAIN, GAME_OVER, LANE_MIRROR, MOVER_WINS, kernel_args, moves_kernel
from .rules import UrRules
from .state import UrSpace, _rank_core, _unrank_core

__all__ = [
    "METHODS",
    "ORDERS",
    "LayerStats",
    "LayeredSolution",
    "bellman_residual",
    "estimated_bytes",
    "layer_members",
    "layers",
    "load_table",
    "rules_identity",
    "save_table",
    "solve_layered",
    "terminal_values",
]

#: Orders a layer's positions can be swept in.
ORDERS = ("rank", "reverse", "progress")
#: Sweeps: Gauss-Seidel with each position and its mirror solved together, plain Gauss-Seidel, Jacobi.
METHODS = ("pairs", "gs", "jacobi")
#: Positions per call of the move kernel while a layer is built.
CHUNK = 1 << 19
#: Bytes a layer's packed successors take per position, about (measured 13.8 moves a position for
#: the seven-piece game: 4 bytes each, and the position's start, counts and value).
BYTES_PER_LAYER_POSITION = 90


@dataclass
class LayerStats:
    """One solved layer: its pieces-off pair, size, work and final sweep change."""

    pair: tuple[int, int]
    positions: int
    entries: int
    sweeps: int
    change: float
    build_seconds: float
    sweep_seconds: float
    resumed: bool = False

    def to_dict(self) -> dict:
        return {"pair": list(self.pair), "positions": self.positions, "entries": self.entries,
                "sweeps": self.sweeps, "change": self.change, "build_seconds": self.build_seconds,
                "sweep_seconds": self.sweep_seconds, "resumed": self.resumed}


@dataclass
class LayeredSolution:
    """The values of every position under optimal play, and how they were found."""

    rules: UrRules
    values: np.ndarray
    layers: list[LayerStats] = field(default_factory=list)
    residual: float | None = None  # of a final full Bellman pass, when asked for
    seconds: float = 0.0
    method: str = "pairs"
    order: str = "progress"
    tol: float = 0.0

    @property
    def sweeps(self) -> int:
        return sum(s.sweeps for s in self.layers)


# ----------------------------------------------------------------------------- the layers


def layers(rules: UrRules) -> list[tuple[int, int]]:
    """The layers ``(a, b)``, ``a <= b``, of positions not over, in the order they are solved."""
    n, total = rules.pieces, rules.end_total
    out = [(a, b) for a in range(n) for b in range(a, n) if not (total > 0 and a + b >= total)]
    return sorted(out, key=lambda p: (-(p[0] + p[1]), p))


@numba.njit(cache=True)
def _members(tables, a, b, out, fill):
    """Ranks of the positions with ``a`` of the mover's pieces off and ``b`` of the opponent's, ascending."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
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
        for mm in range(64):
            if side_off[rm, mm] < 0 or pop6[mm] + a > rm:
                continue
            sm = side_off[rm, mm] + a
            for tm in range(64):
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
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    out = np.empty(idx.shape[0], np.int16)
    for i in prange(idx.shape[0]):
        lane, mm, mh, mo, tm, th, to = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift,
                                                    lane_light, lane_dark, pop6, idx[i])
        p = 15 * (mo + to)
        for bit in range(6):
            sq = bit + 1 if bit < 4 else bit + 9
            p += sq * (((mm >> bit) & 1) + ((tm >> bit) & 1))
        x = lane
        for d in range(8):
            if x % 3:
                p += 5 + d
            x //= 3
        out[i] = p
    return out


@numba.njit(cache=True, parallel=True)
def mirror_ranks(tables, idx):
    """Rank of each position seen from the other side (the same board, the other side to move)."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    out = np.empty(idx.shape[0], np.int64)
    for i in prange(idx.shape[0]):
        lane, mm, mh, mo, tm, th, to = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift,
                                                    lane_light, lane_dark, pop6, idx[i])
        out[i] = _rank_core(f, side_off, lane_start, lane_light, lane_dark, pop6, LANE_MIRROR[lane],
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


@numba.njit(cache=True, parallel=True)
def _terminal_fill(tables, total, v, lo, hi):
    """v[s] = 1 where the mover has won, 0 where the opponent has, for positions lo..hi-1 that are over."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    n = f.shape[0] - 1
    cnt = 0
    for s in prange(lo, hi):
        p = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, s)
        mo = p[3]
        to = p[6]
        if mo == n or to == n or (total > 0 and mo + to >= total):
            v[s] = 1.0 if mo > to else 0.0
            cnt += 1
    return cnt


def terminal_values(rules: UrRules, v: np.ndarray) -> int:
    """Write the value of every position that is over into ``v``; the number of such positions."""
    space = UrSpace(rules.pieces)
    step = 1 << 24
    return sum(_terminal_fill(space.tables, np.int64(rules.end_total), v, lo, min(lo + step, space.size))
               for lo in range(0, space.size, step))


# ----------------------------------------------------------------------------- packing a layer


@numba.njit(cache=True, parallel=True)
def _count(succ, events, n_moves, loc):
    """Per position of a chunk: packed entries and constants it needs."""
    k, nt = n_moves.shape
    ne = np.zeros(k, np.int64)
    nc = np.zeros(k, np.int64)
    for i in prange(k):
        e = 0
        c = 0
        for t in range(nt):
            const = False
            for m in range(n_moves[i, t]):
                if events[i, t, m] & GAME_OVER or loc[succ[i, t, m]] < 0:
                    const = True
                else:
                    e += 1
            if const:
                e += 1
                c += 1
        ne[i] = e
        nc[i] = c
    return ne, nc


@numba.njit(cache=True, parallel=True)
def _pack(succ, events, n_moves, loc, v, e_start, c_start, cnt, ent, cval, row0):
    """Fill the packed entries of a chunk (``row0`` its first row in the layer)."""
    k, nt = n_moves.shape
    for i in prange(k):
        e = e_start[i]
        c = c_start[i]
        for t in range(nt):
            best = -1.0
            m_in = 0
            for m in range(n_moves[i, t]):
                ev = events[i, t, m]
                if ev & GAME_OVER:
                    val = 1.0 if ev & MOVER_WINS else 0.0
                else:
                    j = loc[succ[i, t, m]]
                    if j >= 0:
                        ent[e] = 2 * j + (1 if ev & AGAIN else 0)
                        e += 1
                        m_in += 1
                        continue
                    val = v[succ[i, t, m]] if ev & AGAIN else 1.0 - v[succ[i, t, m]]
                if val > best:
                    best = val
            if best >= 0.0:
                cval[c] = best
                ent[e] = -(c + 1)
                e += 1
                c += 1
                m_in += 1
            cnt[row0 + i, t] = m_in


@dataclass
class PackedLayer:
    """A layer's successors, packed (see the module docstring)."""

    members: np.ndarray  # int64 ranks, in sweep order
    cnt: np.ndarray  # (n, T) uint8 entries per position and throw
    start: np.ndarray  # (n + 1,) int64 first entry of each position
    ent: np.ndarray  # int32: 2 * local + again, or -(constant + 1)
    cval: np.ndarray  # float64 constants
    flag: np.ndarray  # int8 per position: 0 swept alone, 1 and 2 a position and its mirror


def pack_layer(space: UrSpace, rules: UrRules, members: np.ndarray, flag: np.ndarray, v: np.ndarray,
               loc: np.ndarray, tick: Callable[[int], None] | None = None) -> PackedLayer:
    """Build the packed successors of ``members`` (``loc`` maps a rank to its place in the layer, else -1).

    ``v`` must hold the final values of the layers above.
    """
    throws, ros, total = kernel_args(rules)
    n, nt = members.size, len(throws)
    cnt = np.zeros((n, nt), np.uint8)
    start = np.zeros(n + 1, np.int64)
    # Room for the most entries there can be (7 moves a throw, one constant a throw): untouched
    # pages of np.empty are never resident, so this costs only what is used, and nothing is copied.
    ent = np.empty(max(1, n * nt * 7), np.int32)
    cval = np.empty(max(1, n * nt), np.float64)
    e_used = c_used = 0
    for lo in range(0, n, CHUNK):
        chunk = members[lo:lo + CHUNK]
        succ, _frm, events, n_moves, _over, _win = moves_kernel(space.tables, LANE_MIRROR, chunk, throws, ros,
                                                                total)
        del _frm
        ne, nc = _count(succ, events, n_moves, loc)
        e_start = np.empty(chunk.size + 1, np.int64)
        e_start[0] = e_used
        np.cumsum(ne, out=e_start[1:])
        e_start[1:] += e_used
        c_start = np.empty(chunk.size, np.int64)
        c_start[0] = c_used
        if chunk.size > 1:
            np.cumsum(nc[:-1], out=c_start[1:])
            c_start[1:] += c_used
        e_end, c_end = int(e_start[-1]), c_used + int(nc.sum())
        _pack(succ, events, n_moves, loc, v, e_start, c_start, cnt, ent, cval, lo)
        start[lo:lo + chunk.size] = e_start[:-1]
        e_used, c_used = e_end, c_end
        del succ, events, n_moves
        if tick is not None:
            tick(chunk.size)
    start[n] = e_used
    return PackedLayer(members, cnt, start, ent[:e_used], cval[:c_used], flag)


# ----------------------------------------------------------------------------- sweeping a layer


@numba.njit(cache=True, inline="always")
def _update(i, start, cnt, ent, cval, probs, x):
    e = start[i]
    new = 0.0
    for t in range(probs.shape[0]):
        best = -1.0
        for _ in range(cnt[i, t]):
            code = ent[e]
            e += 1
            if code >= 0:
                j = code >> 1
                val = x[j] if code & 1 else 1.0 - x[j]
            else:
                val = cval[-code - 1]
            if val > best:
                best = val
        new += probs[t] * best
    return new


@numba.njit(cache=True, inline="always")
def _update_split(i, partner, start, cnt, ent, cval, probs, x):
    """(c, q): the update of position i without the throws that only pass to ``partner`` (the
    mirror), and the chance q of those throws: x[i] = c + q * (1 - x[partner])."""
    e = start[i]
    c = 0.0
    q = 0.0
    pcode = 2 * partner
    for t in range(probs.shape[0]):
        k = cnt[i, t]
        if k == 1 and ent[e] == pcode:
            q += probs[t]
            e += 1
            continue
        best = -1.0
        for _ in range(k):
            code = ent[e]
            e += 1
            if code >= 0:
                j = code >> 1
                val = x[j] if code & 1 else 1.0 - x[j]
            else:
                val = cval[-code - 1]
            if val > best:
                best = val
        c += probs[t] * best
    return c, q


@numba.njit(cache=True, parallel=True)
def _sweep_pairs(start, cnt, ent, cval, probs, x, flag, parts):
    """One Gauss-Seidel sweep that solves each position together with its mirror (``flag``: 0 alone,
    1 and 2 a pair), exactly for the passes between the two; the largest change."""
    n = x.shape[0]
    worst = np.zeros(parts)
    for c in prange(parts):
        lo = c * n // parts
        hi = (c + 1) * n // parts
        if lo < n and flag[lo] == 2:
            lo += 1
        if hi < n and flag[hi] == 2:
            hi += 1
        w = 0.0
        i = lo
        while i < hi:
            if flag[i] == 0:
                ci, qi = _update_split(i, i, start, cnt, ent, cval, probs, x)
                new = (ci + qi) / (1.0 + qi)
                d = abs(new - x[i])
                x[i] = new
                i += 1
            else:
                ci, qi = _update_split(i, i + 1, start, cnt, ent, cval, probs, x)
                cp, qp = _update_split(i + 1, i, start, cnt, ent, cval, probs, x)
                ni = (ci + qi * (1.0 - cp - qp)) / (1.0 - qi * qp)
                np_ = cp + qp * (1.0 - ni)
                d = max(abs(ni - x[i]), abs(np_ - x[i + 1]))
                x[i] = ni
                x[i + 1] = np_
                i += 2
            if d > w:
                w = d
        worst[c] = w
    return worst.max()


@numba.njit(cache=True, parallel=True)
def _sweep(start, cnt, ent, cval, probs, x, out, parts):
    """One sweep from ``x`` into ``out``, ``parts`` consecutive slices swept side by side; the largest change.

    ``out`` is ``x`` for Gauss-Seidel (each new value used at once), another array for Jacobi.
    (Over-relaxation diverges here: a pass makes a position's value fall as its mirror's rises.)
    """
    n = x.shape[0]
    worst = np.zeros(parts)
    for c in prange(parts):
        lo = c * n // parts
        hi = (c + 1) * n // parts
        w = 0.0
        for i in range(lo, hi):
            new = _update(i, start, cnt, ent, cval, probs, x)
            d = abs(new - x[i])
            if d > w:
                w = d
            out[i] = new
        worst[c] = w
    return worst.max()


def sweep_layer(layer: PackedLayer, probs: np.ndarray, x: np.ndarray, *, tol: float, method: str = "pairs",
                max_sweeps: int = 100_000, parts: int | None = None,
                tick: Callable[[int, float], None] | None = None) -> tuple[int, float]:
    """Sweep ``x`` (the layer's values, in place) until the largest change is at most ``tol``.

    Returns (sweeps, last change).
    """
    parts = parts or numba.get_num_threads()
    sweeps, change = 0, np.inf
    y = np.empty_like(x) if method == "jacobi" else None
    while change > tol:
        if method == "pairs":
            change = _sweep_pairs(layer.start, layer.cnt, layer.ent, layer.cval, probs, x, layer.flag, parts)
        elif method == "gs":
            change = _sweep(layer.start, layer.cnt, layer.ent, layer.cval, probs, x, x, parts)
        elif method == "jacobi":
            change = _sweep(layer.start, layer.cnt, layer.ent, layer.cval, probs, x, y, parts)
            x[:] = y
        else:
            raise ValueError(f"unknown method {method!r} (methods: {', '.join(METHODS)})")
        sweeps += 1
        if tick is not None:
            tick(sweeps, change)
        if sweeps >= max_sweeps:
            raise RuntimeError(f"layer did not reach a change of {tol} in {max_sweeps} sweeps (last {change:.2e})")
    return sweeps, float(change)


# ----------------------------------------------------------------------------- the whole solve


def rules_identity(rules: UrRules) -> dict:
    """What fixes the game's values: the checkpoint manifest and the table's header name it."""
    return {"rules": rules.name, "pieces": rules.pieces, "throws": [[int(v), str(p)] for v, p in rules.throws],
            "rosettes": list(rules.rosettes), "end": rules.end, "total": rules.total}


def estimated_bytes(rules: UrRules) -> int:
    """Peak memory of :func:`solve_layered`: the table, the rank-to-layer map, the largest layer packed."""
    space = UrSpace(rules.pieces)
    largest = max((_largest_layer(space, p) for p in layers(rules)), default=0)
    chunk = min(CHUNK, largest) * len(rules.throws) * 7 * 6
    return space.size * 12 + largest * BYTES_PER_LAYER_POSITION + chunk + 150 * 2**20


def _largest_layer(space: UrSpace, pair: tuple[int, int]) -> int:
    a, b = pair
    dummy = np.empty(0, np.int64)
    k = _members(space.tables, a, b, dummy, False)
    return k + (_members(space.tables, b, a, dummy, False) if a != b else 0)


def check_memory(rules: UrRules) -> None:
    need, avail = estimated_bytes(rules), available_memory()
    if need > avail:
        raise TooLargeError(f"{rules.name} with {rules.pieces} pieces: the layered optimal solve needs about "
                            f"{gib(need)}; {gib(avail)} available")


def _manifest(rules: UrRules, tol: float, order: str, method: str) -> dict:
    return {"schema": "markov_oca.ur-layers/1", "game": rules_identity(rules), "tol": tol, "order": order,
            "method": method}


def solve_layered(rules: UrRules, *, tol: float = 1e-13, method: str = "pairs", order: str = "progress",
                  checkpoint: str | Path | None = None, residual: bool = False, progress: bool = False,
                  max_sweeps: int = 100_000, parts: int | None = None,
                  on_layer: Callable[[LayerStats], None] | None = None) -> LayeredSolution:
    """Optimal values of every position of ``rules``, layer by layer (see the module docstring).

    Parameters
    ----------
    tol: the largest change of a layer's last sweep.
    method: ``"pairs"`` (Gauss-Seidel, each position solved with its mirror), ``"gs"`` (plain
        Gauss-Seidel, in place) or ``"jacobi"`` (:data:`METHODS`).
    order: the order a layer's positions are swept in (:data:`ORDERS`).
    checkpoint: a directory; each finished layer is saved there, and layers found there (for the
        same rules, tolerance and order) are loaded instead of solved.
    residual: run :func:`bellman_residual` over the finished table.
    on_layer: called with each solved layer's :class:`LayerStats`.

    Example
    -------
    >>> from markov_oca.ur.rules import load_ur
    >>> sol = solve_layered(load_ur("ur", {"pieces": 2}))
    >>> round(float(sol.values[UrSpace(2).rank(0, 0, 2, 0, 0, 2, 0)]), 6)
    0.518573
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (methods: {', '.join(METHODS)})")
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r} (orders: {', '.join(ORDERS)})")
    check_memory(rules)
    t_all = time.perf_counter()
    space = UrSpace(rules.pieces)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    v = np.zeros(space.size)
    terminal_values(rules, v)
    ck = Path(checkpoint) if checkpoint is not None else None
    if ck is not None:
        ck.mkdir(parents=True, exist_ok=True)
        man = _manifest(rules, tol, order, method)
        mpath = ck / "manifest.json"
        if mpath.exists():
            old = json.loads(mpath.read_text())
            if old != man:
                raise ValueError(f"{ck}: a checkpoint of another solve ({old.get('game')}, tol {old.get('tol')}, "
                                 f"order {old.get('order')}); use another directory")
        else:
            with atomic_files([mpath]) as (tmp,):
                tmp.write_text(json.dumps(man, indent=1))
    loc = np.full(space.size, -1, np.int32)
    sol = LayeredSolution(rules, v, method=method, order=order, tol=tol)
    todo = layers(rules)
    with progress_bar(progress) as bar:
        overall = bar.add_task(f"{rules.name}, {rules.pieces} pieces: layers", total=len(todo))
        for pair in todo:
            members, flag = layer_members(space, pair, order, pairs=method == "pairs")
            n = members.size
            path = ck / f"layer_{pair[0]}_{pair[1]}.npy" if ck is not None else None
            if path is not None and path.exists():
                x = np.load(path)
                if x.shape != (n,):
                    raise ValueError(f"{path}: {x.shape[0]} values for a layer of {n} positions")
                v[members] = x
                sol.layers.append(LayerStats(pair, n, 0, 0, 0.0, 0.0, 0.0, resumed=True))
                bar.update(overall, advance=1)
                continue
            task = bar.add_task(f"layer {pair}: {n:,} positions, building", total=n)
            t0 = time.perf_counter()
            loc[members] = np.arange(n, dtype=np.int32)
            packed = pack_layer(space, rules, members, flag, v, loc,
                                tick=lambda k, task=task: bar.update(task, advance=k))
            loc[members] = -1
            t1 = time.perf_counter()
            x = np.full(n, 0.5)
            bar.update(task, completed=0, total=None, description=f"layer {pair}: {n:,} positions, sweeping")

            def tick(k, ch, task=task, pair=pair, n=n):
                bar.update(task, description=f"layer {pair}: {n:,} positions, sweep {k}, change {ch:.1e}")

            sweeps, change = sweep_layer(packed, probs, x, tol=tol, method=method, max_sweeps=max_sweeps,
                                         parts=parts, tick=tick)
            t2 = time.perf_counter()
            entries = packed.ent.size
            del packed
            v[members] = x
            if path is not None:
                with atomic_files([path]) as (tmp,):
                    with open(tmp, "wb") as fh:
                        np.save(fh, x)
            sol.layers.append(LayerStats(pair, n, entries, sweeps, change, t1 - t0, t2 - t1))
            if on_layer is not None:
                on_layer(sol.layers[-1])
            bar.update(task, visible=False)
            bar.update(overall, advance=1)
    del loc
    if residual:
        sol.residual = bellman_residual(rules, v, progress=progress)
    sol.seconds = time.perf_counter() - t_all
    return sol


# ----------------------------------------------------------------------------- checking and saving


@numba.njit(cache=True, parallel=True)
def _residual(succ, events, n_moves, over, win, probs, v, idx):
    k, nt = n_moves.shape
    worst = np.zeros(k)
    for i in prange(k):
        if over[i]:
            new = 1.0 if win[i] > 0 else 0.0
        else:
            new = 0.0
            for t in range(nt):
                best = -1.0
                for m in range(n_moves[i, t]):
                    ev = events[i, t, m]
                    if ev & GAME_OVER:
                        val = 1.0 if ev & MOVER_WINS else 0.0
                    elif ev & AGAIN:
                        val = v[succ[i, t, m]]
                    else:
                        val = 1.0 - v[succ[i, t, m]]
                    if val > best:
                        best = val
                new += probs[t] * best
        worst[i] = abs(new - v[idx[i]])
    return worst.max() if k else 0.0


def bellman_residual(rules: UrRules, values: np.ndarray, *, progress: bool = False, chunk: int = CHUNK) -> float:
    """max over every position of ``|B(values)[s] - values[s]|``, B the Bellman update, from the move kernel."""
    space = UrSpace(rules.pieces)
    throws, ros, total = kernel_args(rules)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    worst = 0.0
    with progress_bar(progress) as bar:
        task = bar.add_task("final Bellman pass", total=space.size)
        for lo in range(0, space.size, chunk):
            idx = np.arange(lo, min(lo + chunk, space.size), dtype=np.int64)
            succ, _frm, events, n_moves, over, win = moves_kernel(space.tables, LANE_MIRROR, idx, throws, ros, total)
            worst = max(worst, float(_residual(succ, events, n_moves, over, win, probs, values, idx)))
            bar.update(task, advance=idx.size)
    return worst


def save_table(values: np.ndarray, path: str | Path) -> Path:
    """Write the table as ``.npy``, whole or not at all."""
    path = Path(path)
    with atomic_files([path]) as (tmp,):
        with open(tmp, "wb") as fh:
            np.save(fh, np.asarray(values, np.float64))
    return path


def load_table(path: str | Path, rules: UrRules | None = None) -> np.ndarray:
    """A saved table, memory-mapped read-only; with ``rules``, its length is checked."""
    v = np.load(Path(path), mmap_mode="r")
    if rules is not None and v.shape != (UrSpace(rules.pieces).size,):
        raise ValueError(f"{path}: {v.shape} values, not one per position of {rules.pieces} pieces "
                         f"({UrSpace(rules.pieces).size:,})")
    return v


def default_threads() -> int:
    return int(os.environ.get("NUMBA_NUM_THREADS", numba.get_num_threads()))
