"""A pair of Ur policies evaluated by sweeps over the ranked positions, without a chain.

With both policies fixed, three quantities satisfy linear equations over the
positions (seen from the side to move) and which real side that is:

* ``win``: the chance that the side to move wins;
* ``throws``: the throws still to come, this one included;
* ``turns``: the turns still to come, this one included, at the start of a turn
  (after a rosette the same turn goes on, so the successor's count, which
  counts its own turn, is one too many).

They are solved layer by layer of pieces off, as the optimal values are
(:mod:`.layered`): a layer's successors are packed (the policy's move for each
throw in a fixed table, or every legal move with its share for ``random`` in a
packed one: :mod:`.storage`), swept Gauss-Seidel to a relative change of ``tol``,
and dropped.

A layer's entry is ``2 * (local row) + again`` for a move into the layer (a row is
a position and real side to move), or ``-(constant + 1)``: a move out of it, whose
(win, throws, turns) are known.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

from ..core.progress import progress_bar
from .kernel import AGAIN, GAME_OVER, MOVER_WINS, kernel_args, moves_kernel
from .layered import terminal_values
from .layers import CHUNK, largest_layer, layer_members, layers
from .policy import choice, deterministic, drop_pages, policy_codes
from .rules import UrRules
from .state import UrSpace, space_of
from .storage import close_throw, put_entry, row_count, row_entry, row_first

__all__ = ["PolicyEvaluation", "evaluate_bytes", "evaluate_policies"]


# ----------------------------------------------------------------------------- packing a layer


@numba.njit(cache=True, parallel=True)
def _count(codes, succ, events, frm, n_moves, values, loc):
    """Per row of a chunk (position x side): the entries and the constants it needs."""
    k, nt = n_moves.shape
    ns = codes.shape[0]
    ne = np.zeros(k * ns, np.int64)
    nc = np.zeros(k * ns, np.int64)
    for i in prange(k):
        for side in range(ns):
            e = 0
            c = 0
            for t in range(nt):
                ch = choice(codes[side], succ, events, frm, n_moves, values, i, t)
                for m in range(n_moves[i, t]):
                    if ch >= 0 and m != ch:
                        continue
                    e += 1
                    if events[i, t, m] & GAME_OVER or loc[succ[i, t, m]] < 0:
                        c += 1
            ne[i * ns + side] = e
            nc[i * ns + side] = c
    return ne, nc


@numba.njit(cache=True, inline="always")
def _constant(ev, s, again, g, gw, gy, gz, cw, cy, cz, c):
    """Write constant ``c``: the (win, throws, turns) after a move out of the layer."""
    if ev & GAME_OVER:
        cw[c] = 1.0 if ev & MOVER_WINS else 0.0
        cy[c] = 0.0
        cz[c] = 0.0
    else:
        cw[c] = gw[g] if again else 1.0 - gw[g]
        cy[c] = gy[g]
        cz[c] = gz[g] - again


@numba.njit(cache=True, parallel=True)
def _pack(codes, succ, events, frm, n_moves, values, loc, gw, gy, gz, e_start, c_start, store, cw, cy, cz, row0):
    """Fill the entries of a chunk into ``store`` (rows from ``row0 * sides``) and its constants."""
    k, nt = n_moves.shape
    ns = codes.shape[0]
    for i in prange(k):
        for side in range(ns):
            r = i * ns + side
            row = row0 * ns + r
            e = e_start[r]
            c = c_start[r]
            for t in range(nt):
                ch = choice(codes[side], succ, events, frm, n_moves, values, i, t)
                used = 0
                for m in range(n_moves[i, t]):
                    if ch >= 0 and m != ch:
                        continue
                    used += 1
                    ev = events[i, t, m]
                    s = succ[i, t, m]
                    again = 1 if ev & AGAIN else 0
                    nside = side if (again or ns == 1) else 1 - side
                    if not ev & GAME_OVER and loc[s] >= 0:
                        put_entry(store, row, t, e, 2 * (loc[s] * ns + nside) + again)
                    else:
                        _constant(ev, s, again, s * ns + nside, gw, gy, gz, cw, cy, cz, c)
                        put_entry(store, row, t, e, -(c + 1))
                        c += 1
                    e += 1
                close_throw(store, row, t, used)


def _starts(counts: np.ndarray, first: int, closed: bool) -> np.ndarray:
    """Running starts of ``counts`` from ``first``; with ``closed`` one more, the end."""
    out = np.empty(counts.size + (1 if closed else 0), np.int64)
    if out.size:
        out[0] = first
        np.cumsum(counts[:out.size - 1], out=out[1:])
        out[1:] += first
    return out


def _layer_moves(space, codes, members, vals, loc, gw, gy, gz, throws, ros, total, flags, fixed):
    """A layer's moves: a fixed ``(positions x sides, throws)`` table for deterministic policies, else packed
    ``(start, cnt, ent)`` (every legal move for ``random``); and the constants ``(cw, cy, cz)``."""
    ns, n, nt = codes.size, members.size, throws.size
    if fixed:
        store = np.empty((n * ns, nt), np.int32)
    else:
        store = (np.zeros(n * ns + 1, np.int64), np.zeros((n * ns, nt), np.uint8), None)
    parts_e, parts_c = [], []
    e_used = c_used = 0
    for lo in range(0, n, CHUNK):
        chunk = members[lo:lo + CHUNK]
        succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, chunk, throws, ros, total, flags)
        ne, nc = _count(codes, succ, events, frm, n_moves, vals, loc)
        # the chunk's own arrays take entries and constants from 0
        e_start, c_start = _starts(ne, 0, True), _starts(nc, 0, False)
        cw = np.empty(int(nc.sum()))
        cy, cz = np.empty_like(cw), np.empty_like(cw)
        chunk_store = store if fixed else (store[0], store[1], np.empty(int(e_start[-1]), np.int32))
        _pack(codes, succ, events, frm, n_moves, vals, loc, gw, gy, gz, e_start, c_start, chunk_store, cw, cy, cz,
              lo)
        ent = chunk_store[lo * ns:(lo + chunk.size) * ns] if fixed else chunk_store[2]
        ent[ent < 0] -= c_used  # the chunk's constants numbered from 0: shift them after the earlier ones
        if not fixed:
            store[0][lo * ns:(lo + chunk.size) * ns] = e_start[:-1] + e_used
            parts_e.append(ent)
            e_used += ent.size
        parts_c.append((cw, cy, cz))
        c_used += cw.size
        del succ, frm, events, n_moves
    if not fixed:
        store[0][n * ns] = e_used
        store = (store[0], store[1], np.concatenate(parts_e) if parts_e else np.empty(0, np.int32))
    consts = tuple(np.concatenate([c[v] for c in parts_c]) if parts_c else np.empty(0) for v in range(3))
    return store, consts


# ----------------------------------------------------------------------------- sweeping a layer


@numba.njit(cache=True, inline="always")
def _store(x, i, nw, ny, nz):
    """Write state ``i``'s new (win, throws, turns) into ``x``; the change, relative for the throws and turns."""
    b = 3 * i
    d = max(abs(nw - x[b]), abs(ny - x[b + 1]) / max(1.0, ny), abs(nz - x[b + 2]) / max(1.0, nz))
    x[b] = nw
    x[b + 1] = ny
    x[b + 2] = nz
    return d


@numba.njit(cache=True, inline="always")
def _note_residual(worst, part, x, i, nw, ny, nz):
    """Raise ``worst[part]`` to state ``i``'s ``|x - F(x)|`` of (win, throws, turns), absolute."""
    b = 3 * i
    worst[part, 0] = max(worst[part, 0], abs(nw - x[b]))
    worst[part, 1] = max(worst[part, 1], abs(ny - x[b + 1]))
    worst[part, 2] = max(worst[part, 2], abs(nz - x[b + 2]))


@numba.njit(cache=True)
def _column_max(worst):
    out = np.zeros(worst.shape[1])
    for part in range(worst.shape[0]):
        for v in range(worst.shape[1]):
            out[v] = max(out[v], worst[part, v])
    return out


@numba.njit(cache=True, inline="always")
def _update(i, store, cw, cy, cz, probs, x):
    """State ``i``'s (win, throws, turns) from its moves: each throw's entries equally likely."""
    e = row_first(store, i)
    nw = 0.0
    ny = 1.0
    nz = 1.0
    for t in range(probs.shape[0]):
        k = row_count(store, i, t)
        sw = 0.0
        sy = 0.0
        sz = 0.0
        for _ in range(k):
            code = row_entry(store, i, t, e)
            e += 1
            if code >= 0:
                j = 3 * (code >> 1)
                if code & 1:
                    sw += x[j]
                    sz += x[j + 2] - 1.0
                else:
                    sw += 1.0 - x[j]
                    sz += x[j + 2]
                sy += x[j + 1]
            else:
                c = -code - 1
                sw += cw[c]
                sy += cy[c]
                sz += cz[c]
        q = probs[t] / k
        nw += q * sw
        ny += q * sy
        nz += q * sz
    return nw, ny, nz


@numba.njit(cache=True, parallel=True)
def _sweep(store, cw, cy, cz, probs, x, parts):
    """One Gauss-Seidel sweep (``parts`` slices side by side); ``x`` holds (win, throws, turns) of each state
    side by side (one cache line for the three). The largest change, relative for the throws and turns."""
    n = x.shape[0] // 3
    worst = np.zeros(parts)
    for part in prange(parts):
        w = 0.0
        for i in range(part * n // parts, (part + 1) * n // parts):
            nw, ny, nz = _update(i, store, cw, cy, cz, probs, x)
            d = _store(x, i, nw, ny, nz)
            if d > w:
                w = d
        worst[part] = w
    return worst.max()


@numba.njit(cache=True, parallel=True)
def _residual(store, cw, cy, cz, probs, x, parts):
    """The largest ``|x - F(x)|`` of (win, throws, turns), absolute, nothing written."""
    n = x.shape[0] // 3
    worst = np.zeros((parts, 3))
    for part in prange(parts):
        for i in range(part * n // parts, (part + 1) * n // parts):
            nw, ny, nz = _update(i, store, cw, cy, cz, probs, x)
            _note_residual(worst, part, x, i, nw, ny, nz)
    return _column_max(worst)


def _solve_layer(store, consts, probs, n, ns, parts, tol, max_sweeps, pair):
    """Sweep one layer's (win, throws, turns) to a change of ``tol``: (x, sweeps, last change, residual)."""
    x = np.zeros(3 * n * ns)
    x[0::3] = 0.5
    change, k = np.inf, 0
    while change > tol:
        change = _sweep(store, *consts, probs, x, parts)
        k += 1
        if k >= max_sweeps:
            raise RuntimeError(f"policy evaluation: layer {pair} did not reach {tol} in {max_sweeps} sweeps")
    return x, k, float(change), _residual(store, *consts, probs, x, parts)


# ----------------------------------------------------------------------------- the evaluation


@dataclass
class PolicyEvaluation:
    """Per position and real side to move: the mover's chance to win, throws and turns to come."""

    rules: UrRules
    sides: int  # 1 when both sides play the same policy (then light and dark share the arrays)
    win: np.ndarray  # (S * sides,), index position * sides + side (0 light, 1 dark)
    throws: np.ndarray
    turns: np.ndarray
    sweeps: int
    change: float
    entries: int
    seconds: float
    #: the largest |x - F(x)| of (win, throws, turns) over every state, each layer's after its last sweep (the
    #: later layers' values as they were written: the residual of the whole system)
    residual: tuple[float, float, float] = (0.0, 0.0, 0.0)
    moves: int = 1  # the most moves one throw weighs (every legal one with ``random``)

    def at(self, index: int, side: int = 0) -> tuple[float, float, float]:
        g = index * self.sides + (side if self.sides == 2 else 0)
        return float(self.win[g]), float(self.throws[g]), float(self.turns[g])

    def bounds(self, index: int, side: int = 0) -> tuple[float, float, float]:
        """Certified bounds on the errors of :meth:`at`'s (win, throws, turns).

        Each is solved from ``x = c + A x``, ``|A|`` the chain of throws (a sub-stochastic matrix, the
        win's with some signs flipped), so the error is at most ``(I - |A|)^-1 r``, ``r`` the true residual
        (the computed one raised by its own rounding): at most that residual times the exact throws to come
        from the state, which are at most the computed throws over ``1 - r_throws``
        (:func:`.sweepbounds.evaluation_bounds`).
        """
        from .sweepbounds import evaluation_bounds

        return evaluation_bounds(self, index, side)


def evaluate_bytes(rules: UrRules, sides: int) -> int:
    """Peak memory of :func:`evaluate_policies`."""
    space = space_of(rules.pieces, rules.code)
    S = space.size
    largest = max((largest_layer(space, p) for p in layers(rules)), default=0)
    return int(S * sides * 24 + S * 4 + largest * sides * (8 + 5 + 14 * 4 + 24 + 16) + 200 * 2**20)


def _terminal_values(space: UrSpace, rules: UrRules, ns: int):
    """(win, throws, turns) of every position and side, the positions that are over filled in."""
    S = space.size
    gw, gy, gz = np.zeros(S * ns), np.zeros(S * ns), np.zeros(S * ns)
    terminal_values(rules, gw[0::ns])  # the throws and turns to come are 0 there
    if ns == 2:
        gw[1::2] = gw[0::2]
    return gw, gy, gz


def evaluate_policies(rules: UrRules, light: str = "optimal", dark: str = "optimal",
                      values: np.ndarray | None = None, *, tol: float = 1e-11, progress: bool = False,
                      max_sweeps: int = 100_000, parts: int | None = None,
                      on_layer: Callable | None = None) -> PolicyEvaluation:
    """Each position's chance to win, throws and turns to come, ``light`` against ``dark``.

    Parameters
    ----------
    rules : UrRules
        The game.
    light, dark : str
        The sides' policies (:data:`.policy.POLICY_CODES`).
    values : numpy.ndarray, optional
        The optimal values (needed when a side plays ``optimal``).
    tol : float
        Each layer is swept to this relative change.
    progress : bool
        Show progress bars.
    max_sweeps : int
        Sweeps of a layer at most.
    parts : int, optional
        Threads (slices swept side by side); numba's count by default.
    on_layer : callable, optional
        Called with ``(pair, positions, sweeps, change, residual)`` after each layer.

    Examples
    --------
    >>> from markov_oca.ur.rules import load_ur
    >>> ev = evaluate_policies(load_ur("ur", {"pieces": 1}), "random", "random")
    >>> round(ev.at(UrSpace(1).rank(0, 0, 1, 0, 0, 1, 0))[0], 6)
    0.53005
    """
    codes = np.array(policy_codes(light, dark), np.int64)
    if 2 in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    ns = codes.size
    t_all = time.perf_counter()
    space = space_of(rules.pieces, rules.code)
    throws, ros, total, flags = kernel_args(rules)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    g = _terminal_values(space, rules, ns)
    loc = np.full(space.size, -1, np.int32)
    sweeps_total, worst, entries = 0, 0.0, 0
    residual = np.zeros(3)
    parts = int(parts or numba.get_num_threads())
    fixed = deterministic(codes)
    todo = layers(rules)
    with progress_bar(progress) as bar:
        overall = bar.add_task(f"{light} against {dark}: layers", total=len(todo))
        for pair in todo:
            members, _ = layer_members(space, pair, "progress")
            n = members.size
            loc[members] = np.arange(n, dtype=np.int32)
            store, consts = _layer_moves(space, codes, members, vals, loc, *g, throws, ros, total, flags, fixed)
            if values is not None:
                drop_pages(values)  # the layer's moves are chosen: let the pages read go
            loc[members] = -1
            x, k, change, res = _solve_layer(store, consts, probs, n, ns, parts, tol, max_sweeps, pair)
            residual = np.maximum(residual, res)
            sweeps_total += k
            worst = max(worst, change)
            entries += (store if fixed else store[2]).size
            rows = (members[:, None] * ns + np.arange(ns)[None, :]).ravel()
            for v in range(3):
                g[v][rows] = x[v::3]
            del store, consts, x, rows, members
            bar.update(overall, advance=1)
            if on_layer is not None:
                on_layer(pair, n, k, change, res)
    return PolicyEvaluation(rules, ns, *g, sweeps_total, worst, entries, time.perf_counter() - t_all,
                            tuple(float(v) for v in residual), 1 if fixed else rules.pieces + 1)
