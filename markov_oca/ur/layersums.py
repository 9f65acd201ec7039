"""Each side's chance and the throws to come under a pair of policies, swept layer by layer in little memory.

:func:`.bound.pair_sums` keeps both policies' moves and the swept values of every position at once: about
34 GiB for a ``greedy`` side at seven pieces of Masters. This route sweeps the same equations layer by layer
of pieces off (:mod:`.layers`), as the optimal table is solved, and keeps only what is still read:

* the current layer's moves, once for both sides: every legal move of each position and throw (an int32
  entry each), and for each deterministic side the index of the move it plays (a byte a position and throw);
* the values of the layers a later layer still reads (a layer ``{a, b}`` is read by ``{a - 1, b}`` and
  ``{a, b - 1}`` only: a piece off never comes back), 16 bytes a position and side: the chance of one side
  to win (float64), the throws to come and that chance summed over the throws to come (float32 each: they
  only bound the error, see below);
* each position's index in its own layer (int32, every position).

Rows are a position and the side to move (light 0, dark 1), each side playing its own policy. One side's
chance is swept at every row (the side :func:`.bound.smaller_side` names: the one that does not play
optimally against an optimal side), so that its bound is relative to itself
(:func:`.sweepbounds.side_chance_bound`). Each layer is swept Gauss-Seidel in its progress order (the
positions furthest on first) until the chance's change is :data:`LAYER_TOL` or stops falling; the residual
of each row is then computed against the final values of the layers it reads, so the largest over the
layers is the residual of the whole system, and :func:`.sweepbounds.sums_bounds` bounds the figures as it
bounds :func:`.bound.sums_on_tables`'. The throws to come are kept in float32: their residual (about 1e-7 of
themselves) only widens the bound on the throws to come, and so the chance's bound, by about 1e-5 of
itself. The threads sweep slices of a layer side by side, so the last bits of the
figures may differ from run to run; the bounds hold for each run.
"""

from __future__ import annotations

import time

import numba
import numpy as np
from numba import prange

from ..core.errors import SolverError
from ..core.interrupt import check
from ..core.progress import progress_bar
from .bound import STALL, TINY, TableSums, smaller_side
from .kernel import AGAIN, GAME_OVER, MOVER_WINS, OFF, kernel_args, moves_kernel
from .layers import CHUNK, largest_layer, layer_members, layers
from .policy import POLICY_CODES, choice, drop_pages, policy_code
from .rules import UrRules
from .state import space_of, unrank_at

__all__ = ["LAYER_TOL", "layered_pair_sums", "layered_pairs", "layered_sums_bytes"]

#: Each layer is swept until the chance's largest change (relative to it, absolute below TINY) is this small,
#: or has not fallen for :data:`.bound.STALL` sweeps.
LAYER_TOL = 1e-14
#: The throws' relative change (float32) a layer's sweeps also wait for.
THROWS_TOL = 1e-6
#: Sweeps of one layer at most.
MAX_SWEEPS = 100_000
#: A move's entry: ``2 * (index in the layer) + again`` for a move within the layer; :data:`WINS` and
#: :data:`LOSES` the game ended, the mover winning or losing; ``-(OUT + 4 * index + 2 * which + again)`` a
#: move into a layer with one more piece off (``which`` 0 for ``{lo + 1, hi}``, 1 for ``{lo, hi + 1}``).
WINS, LOSES, OUT = -1, -2, 8
#: Positions a block: the first entry of each block is kept, the others counted on from it.
BLOCK = 1024
#: Bytes a position and side of a layer's values: the chance (float64), the throws and the summed chance.
VALUE_BYTES = 16


# ----------------------------------------------------------------------------- a layer's moves


@numba.njit(cache=True, parallel=True)
def _picks(succ, events, frm, n_moves, codes, values, pick, row0):
    """The move each deterministic side plays (``pick[d, row0 + i, t]``, ``codes`` the deterministic sides')."""
    k, nt = n_moves.shape
    for i in prange(k):
        for t in range(nt):
            for d in range(codes.shape[0]):
                pick[d, row0 + i, t] = choice(codes[d], succ, events, frm, n_moves, values, i, t)


@numba.njit(cache=True, parallel=True)
def _fill(tables, idx, lo, succ, events, n_moves, loc, starts, ent):
    """Write the entries of the positions ``idx`` (``starts[i]`` the first of position ``i``)."""
    k, nt = n_moves.shape
    for i in prange(k):
        which = 0 if unrank_at(tables, idx[i])[3] == lo else 1
        e = starts[i]
        for t in range(nt):
            for m in range(n_moves[i, t]):
                ev = events[i, t, m]
                again = 1 if ev & AGAIN else 0
                if ev & GAME_OVER:
                    ent[e] = WINS if ev & MOVER_WINS else LOSES
                elif ev & OFF:
                    ent[e] = -(OUT + 4 * loc[succ[i, t, m]] + 2 * which + again)
                else:
                    ent[e] = 2 * loc[succ[i, t, m]] + again
                e += 1


def _pack(space, rules, members, lo, codes, values, table, loc, bar, task):
    """The layer's moves: ``(block_first, cnt, ent, pick)``: the first entry of each block of :data:`BLOCK`
    positions, ``cnt[i, t]`` the moves of position ``i`` and throw ``t`` (every legal one, one after the
    other), ``pick[d, i, t]`` the move the ``d``-th deterministic side plays."""
    throws, ros, total, flags = kernel_args(rules)
    n, nt = members.size, throws.size
    det = np.array([c for c in codes if c != POLICY_CODES["random"]], np.int64)
    cnt = np.empty((n, nt), np.uint8)
    pick = np.zeros((det.size, n, nt), np.uint8)
    bar.update(task, description=f"layer of {n:,} positions: its moves", completed=0, total=2 * n)
    for a in range(0, n, CHUNK):  # the counts and picks first, so that the entries are written in place
        chunk = members[a:a + CHUNK]
        succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, chunk, throws, ros, total, flags)
        cnt[a:a + chunk.size] = n_moves
        if det.size:
            _picks(succ, events, frm, n_moves, det, values, pick, a)
        del succ, frm, events, n_moves
        bar.update(task, advance=chunk.size)
        check()
    if table is not None:
        drop_pages(table)  # the picks are made: the pages of a memory-mapped table can go
    per = cnt.sum(axis=1, dtype=np.int64)
    first = np.zeros(n + 1, np.int64)
    np.cumsum(per, out=first[1:])
    del per
    ent = np.empty(int(first[-1]), np.int32)
    for a in range(0, n, CHUNK):
        chunk = members[a:a + CHUNK]
        succ, _frm, events, n_moves, _o, _w = moves_kernel(space.tables, chunk, throws, ros, total, flags)
        _fill(space.tables, chunk, lo, succ, events, n_moves, loc, first[a:a + chunk.size], ent)
        del succ, _frm, events, n_moves
        bar.update(task, advance=chunk.size)
        check()
    block_first = first[0:n + 1:BLOCK].copy()
    del first
    return block_first, cnt, ent, pick


# ----------------------------------------------------------------------------- sweeping a layer


@numba.njit(cache=True, inline="always")
def _row(cnt, ent, pick, probs, i, e, side, mine, dpick, x, y, g, xa, ya, ga, xb, yb, gb):
    """Row ``(i, side)``'s update from its moves (entries from ``e``): ``(throws, chance, summed chance
    without the chance itself)``; ``dpick`` the side's row of ``pick``, -1 for every move (``random``);
    ``mine`` the side whose chance is swept."""
    ny = 1.0
    nx = 0.0
    ng = 0.0
    for t in range(probs.shape[0]):
        k = cnt[i, t]
        if dpick >= 0:
            f0 = e + pick[dpick, i, t]
            f1 = f0 + 1
            p = probs[t]
        else:
            f0 = e
            f1 = e + k
            p = probs[t] / k
        for f in range(f0, f1):
            c = ent[f]
            if c >= 0:
                r = 2 * (c >> 1) + (side if c & 1 else 1 - side)
                ny += p * y[r]
                nx += p * x[r]
                ng += p * g[r]
            elif c == WINS:
                if side == mine:
                    nx += p
            elif c == LOSES:
                if side != mine:
                    nx += p
            else:
                c = -c - OUT
                r = 2 * (c >> 2) + (side if c & 1 else 1 - side)
                if (c >> 1) & 1:
                    ny += p * yb[r]
                    nx += p * xb[r]
                    ng += p * gb[r]
                else:
                    ny += p * ya[r]
                    nx += p * xa[r]
                    ng += p * ga[r]
        e += k
    return ny, nx, ng, e


@numba.njit(cache=True, inline="always")
def _slice(bfirst, n, parts, part):
    """Thread ``part``'s slice of whole blocks of the layer's ``n`` positions: (first, end, its first entry)."""
    nb = bfirst.shape[0] - 1 if n % BLOCK == 0 else bfirst.shape[0]
    b0 = part * nb // parts
    b1 = (part + 1) * nb // parts
    return b0 * BLOCK, min(b1 * BLOCK, n), bfirst[b0] if b0 < bfirst.shape[0] else 0


@numba.njit(cache=True, inline="always")
def _note(r, s, ny, nx, ng, x, y, g):
    """Raise ``r`` by row ``s``'s residuals (module docstring of :func:`_pass`), nothing written."""
    d = abs(ny - y[s])
    if not d <= r[0]:
        r[0] = d
    d = abs(nx - x[s])
    if x[s] > TINY:
        d /= x[s]
        if not d <= r[2]:
            r[2] = d
    elif not d <= r[1]:
        r[1] = d
    d = abs(ng + x[s] - g[s])
    if not d <= r[3]:
        r[3] = d
    r[4] = max(r[4], y[s])
    r[5] = min(r[5], x[s])
    r[6] = max(r[6], x[s])
    r[7] = max(r[7], abs(g[s]))


@numba.njit(cache=True, inline="always")
def _write(r, s, ny, nx, ng, x, y, g):
    """Write row ``s``'s update, raising ``r[0]`` and ``r[1]`` by its changes."""
    c = abs(nx - x[s])
    if nx > TINY:
        c /= nx
    r[0] = max(r[0], c)
    r[1] = max(r[1], abs(ny - y[s]) / ny)
    x[s] = nx
    y[s] = ny
    g[s] = ng + nx


@numba.njit(cache=True, parallel=True)
def _pass(bfirst, cnt, ent, pick, probs, dpicks, mine, x, y, g, xa, ya, ga, xb, yb, gb, parts, write):
    """One pass over the layer (``parts`` slices of whole blocks side by side). With ``write``, a Gauss-Seidel
    sweep: the largest change of the chance (relative to it, absolute at most TINY) and of the throws
    (relative), first in the result. Else, nothing written, the largest residuals: the throws' (absolute), the
    chance's absolute (at most TINY) and relative (above), the summed chance's (absolute); then the largest
    throws, the smallest and largest chance, the largest summed chance."""
    r = np.zeros((parts, 8))
    for part in range(parts):
        r[part, 5] = np.inf
    for part in prange(parts):
        i0, i1, e = _slice(bfirst, cnt.shape[0], parts, part)
        for i in range(i0, i1):
            e_next = e
            for side in range(2):
                ny, nx, ng, e_next = _row(cnt, ent, pick, probs, i, e, side, mine, dpicks[side], x, y, g,
                                          xa, ya, ga, xb, yb, gb)
                if write:
                    _write(r[part], 2 * i + side, ny, nx, ng, x, y, g)
                else:
                    _note(r[part], 2 * i + side, ny, nx, ng, x, y, g)
            e = e_next
    out = r[0].copy()
    for part in range(1, parts):
        for v in range(8):
            if v == 5:
                out[v] = min(out[v], r[part, v])
            elif not r[part, v] <= out[v]:
                out[v] = r[part, v]
    return out


# ----------------------------------------------------------------------------- the evaluation


def _norm(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)


def _neighbours(pair: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The layers one more piece off leads to from ``pair = (lo, hi)``: ``{lo + 1, hi}`` and ``{lo, hi + 1}``."""
    lo, hi = pair
    return _norm(lo + 1, hi), (lo, hi + 1)


def _readers(todo: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """How many layers of ``todo`` read each layer."""
    out = {p: 0 for p in todo}
    for p in todo:
        for q in set(_neighbours(p)):
            if q in out:
                out[q] += 1
    return out


def _released(pair: tuple[int, int], left: dict[tuple[int, int], int]) -> list[tuple[int, int]]:
    """The layers that ``pair``, now done, was the last to read (``left``: each layer's readers still to come,
    counted down here)."""
    out = []
    for q in set(_neighbours(pair)):
        if q in left:
            left[q] -= 1
            if left[q] == 0:
                out.append(q)
    return out


_MOVES: dict[str, dict[tuple[int, int], float]] = {}


def _moves_a_position(rules: UrRules, sample: int = 1 << 16) -> dict[tuple[int, int], float]:
    """The mean legal moves (a pass counted as one) of a position of each layer, over its throws together,
    from a sample of each layer's positions (all of a small layer's); kept for the next call."""
    import json

    from .store import rules_identity

    key = json.dumps(rules_identity(rules), sort_keys=True)
    if key not in _MOVES:
        _MOVES[key] = _sample_moves(rules, sample)
    return _MOVES[key]


def _sample_moves(rules: UrRules, sample: int) -> dict[tuple[int, int], float]:
    space = space_of(rules.pieces, rules.code)
    throws, ros, total, flags = kernel_args(rules)
    rng = np.random.default_rng(20261204)
    out = {}
    for pair in layers(rules):
        members, _ = layer_members(space, pair, "rank")
        if members.size > sample:
            members = np.sort(members[rng.integers(0, members.size, sample)])
        n_moves = moves_kernel(space.tables, members, throws, ros, total, flags)[3]
        out[pair] = float(n_moves.sum()) / max(members.size, 1)
        del members
    return out


def layered_sums_bytes(rules: UrRules, light: str, dark: str) -> int:
    """Peak memory of :func:`layered_pair_sums`: the index of every position in its layer (4 bytes a
    position), the values of the layers still read (:data:`VALUE_BYTES` a position and side), and the
    current layer's: at its start the order of its positions (26 bytes a position), while its moves are made
    its positions (8 bytes), their counts and picks (a byte a throw and deterministic side) and entries (4
    bytes a move, the mean measured on a sample, plus 5%), and the table's pages read by the picks (8 bytes
    a position, with an ``optimal`` side); while it is swept its moves and its own values. And 400 MiB for the
    interpreter with its compiled kernels (a two-piece run peaks at about 270 MB)."""
    codes = [policy_code(light), policy_code(dark)]
    space = space_of(rules.pieces, rules.code)
    nt = len(rules.throws)
    det = sum(1 for c in codes if c != POLICY_CODES["random"])
    table = 8 * space.size if POLICY_CODES["optimal"] in codes else 0
    moves = _moves_a_position(rules)
    todo = layers(rules)
    left = _readers(todo)
    live, peak = 0, 0
    sizes: dict[tuple[int, int], int] = {}
    chunk = CHUNK * nt * 7 * 6
    for pair in todo:
        n = largest_layer(space, pair)
        store = n * (nt + det * nt) + int(4 * moves[pair] * 1.05 * n) + 8 * (n // BLOCK + 2)
        own = 2 * VALUE_BYTES * n
        peak = max(peak, live + 26 * n,  # the progress order
                   live + 8 * n + n * (nt + det * nt) + chunk + table,  # the counts and picks
                   live + 8 * n + 8 * (n + 1) + store + chunk,  # the entries
                   live + store + own)  # the sweeps
        live += own
        sizes[pair] = n
        for q in _released(pair, left):
            live -= 2 * VALUE_BYTES * sizes[q]
    return int(4 * space.size + peak + 400 * 2**20)  # and the interpreter with its compiled kernels


def layered_pair_sums(rules: UrRules, light: str = "optimal", dark: str = "optimal",
                      values: np.ndarray | None = None, **kw) -> TableSums:
    """Each side's chance to win and the expected throws from the start under a pair of policies, swept layer
    by layer (module docstring), with certified bounds (:func:`.sweepbounds.sums_bounds`); the turns are not
    swept (``TableSums.turns`` 0, unbounded). The keywords are :func:`layered_pairs`'."""
    return layered_pairs(rules, light, dark, values, **kw)[0]


def layered_pairs(rules: UrRules, light: str = "optimal", dark: str = "optimal",
                  values: np.ndarray | None = None, *, tol: float = LAYER_TOL, parts: int | None = None,
                  progress: bool = False) -> tuple[TableSums, TableSums]:
    """:func:`layered_pair_sums`' figures of ``light`` against ``dark``, and of the sides swapped (``dark``'s
    policy moving first, as light, against ``light``'s) from the same sweeps: a position is seen from the
    side to move, so every row of one pair is a row of the other, and the swapped pair's start is the row of
    the start with the second side to move.

    ``values`` (needed when a side plays ``optimal``), ``parts`` and ``progress`` are
    :func:`.evaluate.evaluate_policies`'s; ``tol`` is the chance's change (relative to it) each layer is swept
    to, unless it stops falling first.

    Raises
    ------
    SolverError
        A layer whose sweeps did not settle in :data:`MAX_SWEEPS`.
    """
    from .sweepbounds import moves_a_throw, sums_bounds

    t0 = time.perf_counter()
    codes = [policy_code(light), policy_code(dark)]
    if POLICY_CODES["optimal"] in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    mine = smaller_side(codes if light != dark else codes[:1])
    parts = int(parts or numba.get_num_threads())
    space = space_of(rules.pieces, rules.code)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    start_rank = int(space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0))
    dpicks = np.full(2, -1, np.int64)
    d = 0
    for side, c in enumerate(codes):
        if c != POLICY_CODES["random"]:
            dpicks[side] = d
            d += 1
    todo = layers(rules)
    left = _readers(todo)
    live: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    none = (np.zeros(0), np.zeros(0, np.float32), np.zeros(0, np.float32))
    loc = np.full(space.size, -1, np.int32)
    res = np.zeros(8)
    res[5] = np.inf
    sweeps, change, start = 0, 0.0, None
    with progress_bar(progress) as bar:
        overall = bar.add_task(f"{light} against {dark}: layers", total=len(todo))
        task = bar.add_task("", total=None)
        for pair in todo:
            members, _ = layer_members(space, pair, "progress")
            n = members.size
            loc[members] = np.arange(n, dtype=np.int32)
            if pair == (0, 0):
                start = int(loc[start_rank])
            bfirst, cnt, ent, pick = _pack(space, rules, members, pair[0], codes, vals, values, loc, bar, task)
            del members
            a, b = (live.get(q, none) for q in _neighbours(pair))
            x = np.zeros(2 * n)
            y = np.zeros(2 * n, np.float32)
            g = np.zeros(2 * n, np.float32)
            bar.update(task, description=f"layer {pair}: sweeps", completed=0, total=None)
            best, since, k = np.inf, 0, 0
            while True:
                dx, dy = _pass(bfirst, cnt, ent, pick, probs, dpicks, mine, x, y, g, *a, *b, parts, True)[:2]
                k += 1
                check()
                if dx <= tol and dy <= THROWS_TOL:
                    break
                if dx < best:
                    best, since = dx, 0
                else:
                    since += 1
                    if since >= STALL and dy <= THROWS_TOL:
                        break
                if k >= MAX_SWEEPS:
                    raise SolverError(f"{light} against {dark}: layer {pair} did not settle in {k} sweeps "
                                      f"(change {dx:.1e})")
                bar.update(task, description=f"layer {pair}: {k} sweeps, change {dx:.1e}")
            r = _pass(bfirst, cnt, ent, pick, probs, dpicks, mine, x, y, g, *a, *b, parts, False)
            res = np.where(np.isnan(r) | np.isnan(res), np.nan,
                           np.where(np.arange(8) == 5, np.minimum(res, r), np.maximum(res, r)))
            sweeps += k
            change = max(change, float(dx))
            del bfirst, cnt, ent, pick, a, b
            live[pair] = (x, y, g)
            for q in _released(pair, left):
                del live[q]
            bar.update(overall, advance=1)
    x, y, g = live[(0, 0)]
    seconds = time.perf_counter() - t0

    def figures(row: int, first: int) -> TableSums:
        """The figures from ``row``, the start with side ``first`` to move (it is then the pair's light)."""
        side = mine ^ first  # the side whose chance was swept, as that pair names it
        out = TableSums(float(y[row]), 0.0, float(res[4]), (float(res[0]), 0.0, float(res[1])), sweeps, change,
                        seconds, moves=moves_a_throw(rules, POLICY_CODES["random"] in codes),
                        win=float(x[row]) if side == 0 else 1.0 - float(x[row]),
                        win_range=(float(res[5]), float(res[6])), side=side, chance_relative=float(res[2]),
                        chance_sum=(float(g[row]), float(res[3]), float(res[7])))
        sums_bounds(out, probs.shape[0])
        out.turns_bound = float("inf")
        return out

    return figures(2 * start, 0), figures(2 * start + 1, 1)
