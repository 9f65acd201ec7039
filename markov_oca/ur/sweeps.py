"""A pair of Ur policies solved by sweeps over the ranked positions, without a chain.

With both policies fixed, three quantities satisfy linear equations over the
positions (seen from the side to move) and which real side that is:

* ``win``: the chance that the side to move wins;
* ``throws``: the throws still to come, this one included;
* ``turns``: the turns still to come, this one included, at the start of a turn
  (after a rosette the same turn goes on, so the successor's count, which
  counts its own turn, is one too many).

They are solved layer by layer of pieces off, as the optimal values are
(:mod:`.layered`): a layer's successors are packed (the policy's move for each
throw, or every legal move with its share for ``random``), swept Gauss-Seidel to
a relative change of ``tol``, and dropped.

The length distribution is a forward push of the probability mass, one turn at
a time. The side to move is known from the turn's parity, so the mass lives on
the positions alone. Within a turn a rosette gives the same side another throw,
and the mover's pips only grow along such throws; so the positions are visited
in order of the mover's pips and the whole turn, rosettes included, is one pass.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

from ..analysis.chain import LengthDistribution
from ..core.errors import RulesError, TooLargeError
from ..core.memory import available_memory, gib
from ..core.prefetch import prefetch
from ..core.progress import progress_bar
from .kernel import AGAIN, CAPTURE, GAME_OVER, LANE_MIRROR, MOVER_WINS, OFF, ROSETTE, kernel_args, moves_kernel
from .layered import CHUNK, _largest_layer, layer_members, layers
from .rules import UrRules
from .state import UrSpace, _unrank_core

__all__ = ["POLICY_CODES", "PolicyEvaluation", "PushResult", "ThrowsBound", "evaluate_policies", "length_distribution",
           "push_bytes", "push_lengths", "sweeps_bytes", "throws_bound"]

#: Policies the sweeps know, by code.
POLICY_CODES = {"random": 0, "greedy": 1, "optimal": 2}
PUSH_AHEAD = 64  # the one-pass push prefetches the targets of the place this far on (six pieces: 0.68-0.72 s a turn
# without, 0.56-0.60 with; 8 ahead 0.69-0.71, 192 ahead 0.61-0.62)


def _code(policy) -> int:
    if not isinstance(policy, str) or policy not in POLICY_CODES:
        raise RulesError(f"unknown policy {policy!r} for the sweeps (policies: {', '.join(POLICY_CODES)})")
    return POLICY_CODES[policy]


@numba.njit(cache=True, inline="always")
def _choice(code, succ, events, frm, n_moves, values, i, t):
    """The move a policy plays (index into the moves), -1 for all of them (random): as
    :func:`.chain.policy_weights` does, the first among equals."""
    k = n_moves[i, t]
    if code == 0 or k <= 1:
        return -1 if k > 1 else 0
    best = -1e300
    arg = 0
    for m in range(k):
        ev = events[i, t, m]
        if code == 1:
            sc = 0.0
            if ev & GAME_OVER and ev & MOVER_WINS:
                sc += 10_000.0
            if ev & CAPTURE:
                sc += 1_000.0
            if ev & ROSETTE:
                sc += 100.0
            if ev & OFF:
                sc += 50.0
            sc += max(frm[i, t, m], 0)
        else:
            if ev & GAME_OVER:
                sc = 1.0 if ev & MOVER_WINS else 0.0
            elif ev & AGAIN:
                sc = values[succ[i, t, m]]
            else:
                sc = 1.0 - values[succ[i, t, m]]
        if sc > best:
            best = sc
            arg = m
    return arg


# ----------------------------------------------------------------------------- policy evaluation


@numba.njit(cache=True, parallel=True)
def _count(codes, succ, events, frm, n_moves, values, loc):
    k, nt = n_moves.shape
    ns = codes.shape[0]
    ne = np.zeros(k * ns, np.int64)
    nc = np.zeros(k * ns, np.int64)
    for i in prange(k):
        for side in range(ns):
            e = 0
            c = 0
            for t in range(nt):
                ch = _choice(codes[side], succ, events, frm, n_moves, values, i, t)
                for m in range(n_moves[i, t]):
                    if ch >= 0 and m != ch:
                        continue
                    e += 1
                    if events[i, t, m] & GAME_OVER or loc[succ[i, t, m]] < 0:
                        c += 1
            ne[i * ns + side] = e
            nc[i * ns + side] = c
    return ne, nc


@numba.njit(cache=True, parallel=True)
def _pack(codes, succ, events, frm, n_moves, values, loc, gw, gy, gz, e_start, c_start, cnt, ent, cw, cy, cz,
          row0):
    k, nt = n_moves.shape
    ns = codes.shape[0]
    for i in prange(k):
        for side in range(ns):
            r = i * ns + side
            e = e_start[r]
            c = c_start[r]
            for t in range(nt):
                ch = _choice(codes[side], succ, events, frm, n_moves, values, i, t)
                used = 0
                for m in range(n_moves[i, t]):
                    if ch >= 0 and m != ch:
                        continue
                    used += 1
                    ev = events[i, t, m]
                    s = succ[i, t, m]
                    again = 1 if ev & AGAIN else 0
                    nside = side if (again or ns == 1) else 1 - side
                    if ev & GAME_OVER:
                        cw[c] = 1.0 if ev & MOVER_WINS else 0.0
                        cy[c] = 0.0
                        cz[c] = 0.0
                    elif loc[s] >= 0:
                        ent[e] = 2 * (loc[s] * ns + nside) + again
                        e += 1
                        continue
                    else:
                        g = s * ns + nside
                        cw[c] = gw[g] if again else 1.0 - gw[g]
                        cy[c] = gy[g]
                        cz[c] = gz[g] - again
                    ent[e] = -(c + 1)
                    e += 1
                    c += 1
                cnt[row0 * ns + r, t] = used


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
def _update_csr(i, start, cnt, ent, cw, cy, cz, probs, x):
    """State ``i``'s (win, throws, turns) from its packed moves: each throw's legal moves equally likely."""
    e = start[i]
    nw = 0.0
    ny = 1.0
    nz = 1.0
    for t in range(probs.shape[0]):
        k = cnt[i, t]
        sw = 0.0
        sy = 0.0
        sz = 0.0
        for _ in range(k):
            code = ent[e]
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
def _sweep(start, cnt, ent, cw, cy, cz, probs, x, parts):
    """One Gauss-Seidel sweep; ``x`` holds (win, throws, turns) of each state side by side (one cache
    line for the three)."""
    n = x.shape[0] // 3
    worst = np.zeros(parts)
    for part in prange(parts):
        lo = part * n // parts
        hi = (part + 1) * n // parts
        w = 0.0
        for i in range(lo, hi):
            nw, ny, nz = _update_csr(i, start, cnt, ent, cw, cy, cz, probs, x)
            d = _store(x, i, nw, ny, nz)
            if d > w:
                w = d
        worst[part] = w
    return worst.max()


# ----------------------------------------------------------------------------- deterministic pairs, fixed width


@numba.njit(cache=True, parallel=True)
def _pack_fixed(codes, succ, events, frm, n_moves, values, loc, gw, gy, gz, c_start, ent, cw, cy, cz, row0):
    """:func:`_pack` for deterministic policies: one move a throw, ``ent[row, t]`` (no starts, no counts)."""
    k, nt = n_moves.shape
    ns = codes.shape[0]
    for i in prange(k):
        for side in range(ns):
            r = i * ns + side
            c = c_start[r]
            for t in range(nt):
                m = _choice(codes[side], succ, events, frm, n_moves, values, i, t)
                ev = events[i, t, m]
                s = succ[i, t, m]
                again = 1 if ev & AGAIN else 0
                nside = side if (again or ns == 1) else 1 - side
                if ev & GAME_OVER:
                    cw[c] = 1.0 if ev & MOVER_WINS else 0.0
                    cy[c] = 0.0
                    cz[c] = 0.0
                elif loc[s] >= 0:
                    ent[row0 * ns + r, t] = 2 * (loc[s] * ns + nside) + again
                    continue
                else:
                    g = s * ns + nside
                    cw[c] = gw[g] if again else 1.0 - gw[g]
                    cy[c] = gy[g]
                    cz[c] = gz[g] - again
                ent[row0 * ns + r, t] = -(c + 1)
                c += 1


@numba.njit(cache=True, inline="always")
def _update_fixed(i, ent, cw, cy, cz, probs, x):
    nw = 0.0
    ny = 1.0
    nz = 1.0
    for t in range(probs.shape[0]):
        code = ent[i, t]
        q = probs[t]
        if code >= 0:
            j = 3 * (code >> 1)
            if code & 1:
                nw += q * x[j]
                nz += q * (x[j + 2] - 1.0)
            else:
                nw += q * (1.0 - x[j])
                nz += q * x[j + 2]
            ny += q * x[j + 1]
        else:
            c = -code - 1
            nw += q * cw[c]
            ny += q * cy[c]
            nz += q * cz[c]
    return nw, ny, nz


@numba.njit(cache=True, parallel=True)
def _sweep_fixed(ent, cw, cy, cz, probs, x, parts):
    """One Gauss-Seidel sweep (``parts`` slices side by side); the largest change, relative for the
    throws and turns."""
    n = ent.shape[0]
    worst = np.zeros(parts)
    for part in prange(parts):
        w = 0.0
        for i in range(part * n // parts, (part + 1) * n // parts):
            nw, ny, nz = _update_fixed(i, ent, cw, cy, cz, probs, x)
            d = _store(x, i, nw, ny, nz)
            if d > w:
                w = d
        worst[part] = w
    return worst.max()


@numba.njit(cache=True, parallel=True)
def _residual_fixed(ent, cw, cy, cz, probs, x, parts):
    """The largest ``|x - F(x)|`` of (win, throws, turns), absolute, nothing written."""
    n = ent.shape[0]
    worst = np.zeros((parts, 3))
    for part in prange(parts):
        for i in range(part * n // parts, (part + 1) * n // parts):
            nw, ny, nz = _update_fixed(i, ent, cw, cy, cz, probs, x)
            _note_residual(worst, part, x, i, nw, ny, nz)
    return _column_max(worst)


@numba.njit(cache=True, parallel=True)
def _terminal(tables, total, lo, hi, ns, gw, gy, gz):
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    n = f.shape[0] - 1
    for s in prange(lo, hi):
        p = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift, lane_light, lane_dark, pop6, s)
        mo = p[3]
        to = p[6]
        if mo == n or to == n or (total > 0 and mo + to >= total):
            for side in range(ns):
                gw[s * ns + side] = 1.0 if mo > to else 0.0
                gy[s * ns + side] = 0.0
                gz[s * ns + side] = 0.0


@numba.njit(cache=True, parallel=True)
def _residual_csr(start, cnt, ent, cw, cy, cz, probs, x, parts):
    """:func:`_residual_fixed` for the packed moves of :func:`_sweep`."""
    n = x.shape[0] // 3
    worst = np.zeros((parts, 3))
    for part in prange(parts):
        for i in range(part * n // parts, (part + 1) * n // parts):
            nw, ny, nz = _update_csr(i, start, cnt, ent, cw, cy, cz, probs, x)
            _note_residual(worst, part, x, i, nw, ny, nz)
    return _column_max(worst)


def _layer_fixed(space, codes, members, vals, loc, gw, gy, gz, throws, ros, total):
    """A layer's moves for deterministic policies: ``ent`` (positions x sides, throws) and the constants."""
    ns = codes.size
    n = members.size
    ent = np.empty((n * ns, throws.size), np.int32)
    consts, c_used = [], 0
    for lo in range(0, n, CHUNK):
        chunk = members[lo:lo + CHUNK]
        succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, LANE_MIRROR, chunk, throws, ros, total)
        _ne, nc = _count(codes, succ, events, frm, n_moves, vals, loc)
        c_start = np.zeros(nc.size, np.int64)
        np.cumsum(nc[:-1], out=c_start[1:])
        cw = np.empty(int(nc.sum()))
        cy = np.empty_like(cw)
        cz = np.empty_like(cw)
        _pack_fixed(codes, succ, events, frm, n_moves, vals, loc, gw, gy, gz, c_start, ent, cw, cy, cz, lo)
        rows = ent[lo * ns:(lo + chunk.size) * ns]
        rows[rows < 0] -= c_used  # the chunk's constants numbered from 0: shift them after the earlier ones
        consts.append((cw, cy, cz))
        c_used += cw.size
        del succ, frm, events, n_moves
    cat = [np.concatenate([c[v] for c in consts]) if consts else np.empty(0) for v in range(3)]
    return ent, cat[0], cat[1], cat[2]


def _layer_csr(space, codes, members, vals, loc, gw, gy, gz, throws, ros, total, nt):
    """A layer's moves, every legal one for ``random``: starts, counts per throw, entries and constants."""
    ns = codes.size
    n = members.size
    cnt = np.zeros((n * ns, nt), np.uint8)
    start = np.zeros(n * ns + 1, np.int64)
    parts_e, parts_c = [], []
    e_used = c_used = 0
    for lo in range(0, n, CHUNK):
        chunk = members[lo:lo + CHUNK]
        succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, LANE_MIRROR, chunk, throws, ros, total)
        ne, nc = _count(codes, succ, events, frm, n_moves, vals, loc)
        e_start = np.empty(ne.size + 1, np.int64)
        e_start[0] = e_used
        np.cumsum(ne, out=e_start[1:])
        e_start[1:] += e_used
        c_start = np.empty(nc.size, np.int64)
        c_start[0] = c_used
        np.cumsum(nc[:-1], out=c_start[1:])
        c_start[1:] += c_used
        ent = np.empty(int(ne.sum()), np.int32)
        cw = np.empty(int(nc.sum()))
        cy = np.empty_like(cw)
        cz = np.empty_like(cw)
        # the chunk's own arrays take entries from 0: shift the starts for the fill
        _pack(codes, succ, events, frm, n_moves, vals, loc, gw, gy, gz, e_start - e_used, c_start - c_used,
              cnt, ent, cw, cy, cz, lo)
        ent = np.where(ent < 0, ent - c_used, ent).astype(np.int32)
        start[lo * ns:(lo + chunk.size) * ns] = e_start[:-1]
        parts_e.append(ent)
        parts_c.append((cw, cy, cz))
        e_used, c_used = int(e_start[-1]), c_used + cw.size
        del succ, frm, events, n_moves
    start[n * ns] = e_used
    ent = np.concatenate(parts_e) if parts_e else np.empty(0, np.int32)
    cat = [np.concatenate([c[v] for c in parts_c]) if parts_c else np.empty(0) for v in range(3)]
    return start, cnt, ent, cat[0], cat[1], cat[2]


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

    def at(self, index: int, side: int = 0) -> tuple[float, float, float]:
        g = index * self.sides + (side if self.sides == 2 else 0)
        return float(self.win[g]), float(self.throws[g]), float(self.turns[g])

    def bounds(self, index: int, side: int = 0) -> tuple[float, float, float]:
        """Bounds on the errors of :meth:`at`'s (win, throws, turns).

        Each is solved from ``x = c + A x``, ``|A|`` the chain of throws (a sub-stochastic matrix, the
        win's with some signs flipped), so the error is at most ``(I - |A|)^-1 r``, ``r`` the residual:
        at most the residual times the exact throws to come from the state, which are at most the
        computed throws over ``1 - r_throws``.
        """
        rw, ry, rz = self.residual
        y = self.at(index, side)[1]
        ymax = y / (1.0 - ry) if ry < 1.0 else float("inf")
        return rw * ymax, ry * ymax, rz * ymax


def evaluate_bytes(rules: UrRules, sides: int) -> int:
    """Peak memory of :func:`evaluate_policies`."""
    space = UrSpace(rules.pieces)
    S = space.size
    largest = max((_largest_layer(space, p) for p in layers(rules)), default=0)
    return int(S * sides * 24 + S * 4 + largest * sides * (8 + 5 + 14 * 4 + 24 + 16) + 200 * 2**20)


def sweeps_bytes(rules: UrRules, sides: int, light: str = "random", dark: str = "random",
                 evaluate: bool = True) -> int:
    """Peak memory of :func:`evaluate_policies` (when ``evaluate``) and :func:`push_lengths` (the larger)."""
    push = push_bytes(rules, light, dark)
    return max(evaluate_bytes(rules, sides), push) if evaluate else push


def check_sweeps_memory(rules: UrRules, sides: int, light: str = "random", dark: str = "random",
                        evaluate: bool = True) -> None:
    need, avail = sweeps_bytes(rules, sides, light, dark, evaluate), available_memory()
    if need > avail:
        raise TooLargeError(f"{rules.name} with {rules.pieces} pieces, {light} against {dark}: the policy sweeps "
                            f"need about {gib(need)}; {gib(avail)} available")


def evaluate_policies(rules: UrRules, light: str = "optimal", dark: str = "optimal",
                      values: np.ndarray | None = None, *, tol: float = 1e-11, progress: bool = False,
                      max_sweeps: int = 100_000, parts: int | None = None,
                      on_layer: Callable | None = None) -> PolicyEvaluation:
    """Each position's chance to win, throws and turns to come, ``light`` against ``dark``.

    ``values``: the optimal values (needed when a side plays ``optimal``).

    Example
    -------
    >>> from markov_oca.ur.rules import load_ur
    >>> ev = evaluate_policies(load_ur("ur", {"pieces": 1}), "random", "random")
    >>> round(ev.at(UrSpace(1).rank(0, 0, 1, 0, 0, 1, 0))[0], 6)
    0.518254
    """
    codes = np.array([_code(light)] if light == dark else [_code(light), _code(dark)], np.int64)
    if 2 in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    ns = codes.size
    t_all = time.perf_counter()
    space = UrSpace(rules.pieces)
    S = space.size
    throws, ros, total = kernel_args(rules)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    nt = len(throws)
    gw = np.zeros(S * ns)
    gy = np.zeros(S * ns)
    gz = np.zeros(S * ns)
    step = 1 << 24
    for lo in range(0, S, step):
        _terminal(space.tables, np.int64(rules.end_total), lo, min(lo + step, S), ns, gw, gy, gz)
    loc = np.full(S, -1, np.int32)
    sweeps_total, worst, entries = 0, 0.0, 0
    residual = np.zeros(3)
    parts = int(parts or numba.get_num_threads())
    fixed = _deterministic(codes)
    todo = layers(rules)
    with progress_bar(progress) as bar:
        overall = bar.add_task(f"{light} against {dark}: layers", total=len(todo))
        for pair in todo:
            members, _ = layer_members(space, pair, "progress")
            n = members.size
            loc[members] = np.arange(n, dtype=np.int32)
            if fixed:
                ent, cw, cy, cz = _layer_fixed(space, codes, members, vals, loc, gw, gy, gz, throws, ros, total)
                cnt = start = None
            else:
                start, cnt, ent, cw, cy, cz = _layer_csr(space, codes, members, vals, loc, gw, gy, gz, throws, ros,
                                                         total, nt)
            if values is not None:
                _drop_pages(values)  # the layer's moves are chosen: let the pages read go
            loc[members] = -1
            x = np.zeros(3 * n * ns)
            x[0::3] = 0.5
            change, k = np.inf, 0
            while change > tol:
                if fixed:
                    change = _sweep_fixed(ent, cw, cy, cz, probs, x, parts)
                else:
                    change = _sweep(start, cnt, ent, cw, cy, cz, probs, x, parts)
                k += 1
                if k >= max_sweeps:
                    raise RuntimeError(f"policy evaluation: layer {pair} did not reach {tol} in {max_sweeps} sweeps")
            if fixed:
                res = _residual_fixed(ent, cw, cy, cz, probs, x, parts)
            else:
                res = _residual_csr(start, cnt, ent, cw, cy, cz, probs, x, parts)
            residual = np.maximum(residual, res)
            sweeps_total += k
            worst = max(worst, float(change))
            entries += ent.size
            g = (members[:, None] * ns + np.arange(ns)[None, :]).ravel()
            gw[g] = x[0::3]
            gy[g] = x[1::3]
            gz[g] = x[2::3]
            del ent, cw, cy, cz, cnt, start, x, g, members
            bar.update(overall, advance=1)
            if on_layer is not None:
                on_layer(pair, n, k, float(change), res)
    return PolicyEvaluation(rules, ns, gw, gy, gz, sweeps_total, worst, entries, time.perf_counter() - t_all,
                            tuple(float(v) for v in residual))


# ----------------------------------------------------------------------------- a bound on the throws to come


@dataclass
class ThrowsBound:
    """An upper bound on the throws still to come from any position, under a pair of policies."""

    bound: float  # every position's expected throws to come are at most this
    largest: float  # the largest computed
    residual: float  # the largest |y - (1 + P y)|, absolute, over every state
    sweeps: int
    seconds: float


def throws_bound(rules: UrRules, light: str = "optimal", dark: str = "optimal", values: np.ndarray | None = None,
                 *, tol: float = 1e-4, parts: int | None = None, progress: bool = False) -> ThrowsBound:
    """The largest expected number of throws still to come over every position, bounded from above.

    The throws to come solve ``y = 1 + P y`` (``P`` the chain of throws, sub-stochastic). Any ``ŷ`` with
    ``|ŷ - (1 + P ŷ)| <= r`` has ``y - ŷ = (I - P)^-1 (1 + P ŷ - ŷ) <= r y``, so ``y <= ŷ / (1 - r)``
    everywhere: a loose evaluation (to a relative change of ``tol``) is enough. The turns to come are at
    most the throws. This bounds what the forward push leaves out when it stops with mass
    still in play or lets mass go: each unit of it has at most this many turns and throws ahead.
    Deterministic policies are swept on the throws alone over the push's own moves (:func:`_push_tables`;
    one value a place and side, one move a throw, Gauss-Seidel in decreasing pips walked); with ``random``
    the three values of :func:`evaluate_policies` are, layer by layer.
    """
    t0 = time.perf_counter()
    codes = np.array([_code(light)] if light == dark else [_code(light), _code(dark)], np.int64)
    if not _deterministic(codes):
        ev = evaluate_policies(rules, light, dark, values, tol=tol, progress=progress, parts=parts)
        r = ev.residual[1]
        top = float(ev.throws.max())
        return ThrowsBound(top / (1.0 - r) if r < 1.0 else float("inf"), top, r, ev.sweeps, time.perf_counter() - t0)
    if 2 in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    space = UrSpace(rules.pieces)
    newpos, levels = push_placement(space, rules.pieces)
    with progress_bar(progress) as bar:
        tables, _entries = _push_tables(space, rules, list(codes), vals, newpos, bar)
        del newpos
        if values is not None:
            _drop_pages(values)
        bar.add_task(f"{light} against {dark}: a bound on the throws to come", total=None)
        out = _bound_on_tables(tables, np.asarray(rules.throw_probabilities, np.float64), levels,
                               15 * rules.pieces + 1, tol, int(parts or numba.get_num_threads()))
    out.seconds = time.perf_counter() - t0
    return out


# ----------------------------------------------------------------------------- the length distribution


@numba.njit(cache=True, parallel=True)
def _push_key(tables, lo, hi, width, out):
    """The push order's key of each rank: ``width * mover's pips + opponent's pips`` (a piece on path
    square s has walked s, a piece off 15)."""
    f, side_off, side_mask, side_o, lane_start, lanes, starts, bucket, shift, lane_light, lane_dark, pop6 = tables
    for s in prange(lo, hi):
        lane, mm, mh, mo, tm, th, to = _unrank_core(f, side_mask, side_o, lanes, starts, bucket, shift,
                                                    lane_light, lane_dark, pop6, s)
        p = 15 * mo
        q = 15 * to
        for bit in range(6):
            sq = bit + 1 if bit < 4 else bit + 9
            if (mm >> bit) & 1:
                p += sq
            if (tm >> bit) & 1:
                q += sq
        x = lane
        for d in range(8):
            if x % 3 == 1:
                p += 5 + d
            elif x % 3 == 2:
                q += 5 + d
            x //= 3
        out[s] = p * width + q


@numba.njit(cache=True)
def _placement(pips, levels):
    """Each rank's place in the push order (int32: ascending mover's pips, ties by rank) and the first
    place of each level of mover's pips."""
    S = pips.shape[0]
    count = np.zeros(levels + 1, np.int64)
    for s in range(S):
        count[pips[s] + 1] += 1
    for lev in range(levels):
        count[lev + 1] += count[lev]
    level_start = count.copy()
    newpos = np.empty(S, np.int32)
    for s in range(S):
        p = pips[s]
        newpos[s] = count[p]
        count[p] += 1
    return newpos, level_start


def push_placement(space: UrSpace, pieces: int) -> tuple[np.ndarray, np.ndarray]:
    """Each rank's place in the push order, and the first place of each key (:func:`_push_key`).

    The order is by the mover's pips, then the opponent's, then rank. A rosette's successor (the same
    mover, more pips) comes later, so one pass carries a turn. And the other moves of the positions
    of one pair of pips (p, q) land in a few pairs (q' <= q, p' >= p) of the next turn, contiguous in
    that order: the scatter stays in a cache-sized window (6 pieces: 0.8 s a turn against 1.5-2.9 s
    by the mover's pips alone).
    """
    S = space.size
    width = 15 * pieces + 1
    key = np.empty(S, np.int16)
    step = 1 << 24
    for lo in range(0, S, step):
        _push_key(space.tables, lo, min(lo + step, S), width, key)
    return _placement(key, width * width)


@numba.njit(cache=True, parallel=True)
def _fill_fixed(code, succ, events, frm, n_moves, values, newpos, lo, table):
    """One move per throw (a deterministic policy): ``table[place, t]`` is ``2 * place' + again``, -1
    the mover wins, -2 the mover loses, -3 no move (the game is over)."""
    k, nt = n_moves.shape
    for i in prange(k):
        r = newpos[lo + i]
        for t in range(nt):
            if n_moves[i, t] == 0:
                table[r, t] = -3
                continue
            ch = _choice(code, succ, events, frm, n_moves, values, i, t)
            ev = events[i, t, ch]
            if ev & GAME_OVER:
                table[r, t] = -1 if ev & MOVER_WINS else -2
            else:
                table[r, t] = 2 * newpos[succ[i, t, ch]] + (1 if ev & AGAIN else 0)


@numba.njit(cache=True, parallel=True)
def _push_count(code, succ, events, frm, n_moves, values):
    k, nt = n_moves.shape
    ne = np.zeros(k, np.int64)
    for i in prange(k):
        e = 0
        for t in range(nt):
            ch = _choice(code, succ, events, frm, n_moves, values, i, t)
            e += n_moves[i, t] if ch < 0 else 1
        ne[i] = e
    return ne


@numba.njit(cache=True, parallel=True)
def _push_pack(code, succ, events, frm, n_moves, values, newpos, e_start, cnt, ent, rows):
    k, nt = n_moves.shape
    for i in prange(k):
        e = e_start[i]
        r = rows[i]
        for t in range(nt):
            ch = _choice(code, succ, events, frm, n_moves, values, i, t)
            used = 0
            for m in range(n_moves[i, t]):
                if ch >= 0 and m != ch:
                    continue
                ev = events[i, t, m]
                if ev & GAME_OVER:
                    ent[e] = -1 if ev & MOVER_WINS else -2
                else:
                    ent[e] = 2 * newpos[succ[i, t, m]] + (1 if ev & AGAIN else 0)
                e += 1
                used += 1
            cnt[r, t] = used


# One turn. The places are in ascending order of the mover's pips, and a rosette's successor (the
# same turn's next throw) has more of them: one pass in place order pushes that mass ahead within
# ``cur`` before its place is visited, so each place is visited once with all its mass. Every other
# successor gets its mass in ``nxt``. A pass visits the places ``lo..hi`` only (the span the last turn
# wrote, stretched by the rosettes as it goes), and a place with less than ``eps`` is dropped, its mass
# counted. With one thread that is one pass (``_turn_*``), which also zeroes ``cur`` behind it. With
# more, the pass over the rosettes is made alone (``_turn_*`` with ``rosettes_only``), then the threads
# spread the mass into ``nxt`` side by side (``_spread_*``). Thread i owns the targets whose mover's
# pips are in [Q_i, Q_i+1) (a slice of places); a move leaves the opponent's pips q as they were or
# lowers them by a captured piece's (at most 14), so it reads only the sources of opponent's pips in
# [Q_i, Q_i+1 + 15): about 1/parts of the places each, no value written by two threads, and each target
# gets its terms in the order one thread gives them (the same bits). A turn returns (mass the mover won,
# mass the mover lost, throws made: the mass visited, mass moved into ``nxt``, mass dropped, the span of
# ``nxt`` written, the end of the span of ``cur`` visited).


@numba.njit(cache=True, inline="always")
def _kadd(s, c, x):
    """Compensated (Neumaier) summation: ``s + c`` keeps the low bits a plain ``s += x`` over 10^8 terms loses."""
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


@numba.njit(cache=True)
def _turn_fixed(table, probs, cur, nxt, lo, hi, eps, rosettes_only):
    """One pass; with ``rosettes_only`` only the mass pushed ahead within ``cur`` (``nxt`` and ``cur`` untouched
    otherwise, dropped places zeroed)."""
    nt = probs.shape[0]
    won = 0.0
    lost = 0.0
    thr = 0.0
    moved = 0.0
    dropped = 0.0
    k_won = 0.0
    k_lost = 0.0
    k_thr = 0.0
    k_moved = 0.0
    k_dropped = 0.0
    nlo = cur.shape[0]
    nhi = 0
    s = lo
    while s < hi:
        m = cur[s]
        if m == 0.0:
            s += 1
            continue
        if m < eps:
            dropped, k_dropped = _kadd(dropped, k_dropped, m)
            cur[s] = 0.0
            s += 1
            continue
        thr, k_thr = _kadd(thr, k_thr, m)
        for t in range(nt):
            c = table[s, t]
            if c >= 0:
                j = c >> 1
                if c & 1:
                    cur[j] += m * probs[t]
                    if j >= hi:
                        hi = j + 1
                else:
                    moved, k_moved = _kadd(moved, k_moved, m * probs[t])
                    if j < nlo:
                        nlo = j
                    if j >= nhi:
                        nhi = j + 1
                    if not rosettes_only:
                        nxt[j] += m * probs[t]
            elif c == -1:
                won, k_won = _kadd(won, k_won, m * probs[t])
            elif c == -2:
                lost, k_lost = _kadd(lost, k_lost, m * probs[t])
        if not rosettes_only:
            cur[s] = 0.0
        s += 1
    return won + k_won, lost + k_lost, thr + k_thr, moved + k_moved, dropped + k_dropped, nlo, nhi, hi


@numba.njit(cache=True, parallel=True)
def _spread_fixed(table, probs, cur, nxt, src, tgt, lo, hi):
    nt = probs.shape[0]
    for p in prange(tgt.shape[0] - 1):
        tlo = tgt[p]
        thi = tgt[p + 1]
        for w in range(src.shape[1]):
            for s in range(max(lo, src[p, w, 0]), min(hi, src[p, w, 1])):
                m = cur[s]
                if m == 0.0:
                    continue
                for t in range(nt):
                    c = table[s, t]
                    if c >= 0 and not c & 1:
                        j = c >> 1
                        if j >= tlo and j < thi:
                            nxt[j] += m * probs[t]


@numba.njit(cache=True)
def _turn_csr(start, cnt, ent, probs, cur, nxt, lo, hi, eps, rosettes_only):
    """One pass; with ``rosettes_only`` only the mass pushed ahead within ``cur`` (``nxt`` and ``cur`` untouched
    otherwise, dropped places zeroed)."""
    nt = probs.shape[0]
    won = 0.0
    lost = 0.0
    thr = 0.0
    moved = 0.0
    dropped = 0.0
    k_won = 0.0
    k_lost = 0.0
    k_thr = 0.0
    k_moved = 0.0
    k_dropped = 0.0
    nlo = cur.shape[0]
    nhi = 0
    s = lo
    while s < hi:
        m = cur[s]
        if m == 0.0:
            s += 1
            continue
        if m < eps:
            dropped, k_dropped = _kadd(dropped, k_dropped, m)
            cur[s] = 0.0
            s += 1
            continue
        thr, k_thr = _kadd(thr, k_thr, m)
        e = start[s]
        for t in range(nt):
            k = cnt[s, t]
            if k == 0:
                continue
            q = m * probs[t] / k
            for _ in range(k):
                c = ent[e]
                e += 1
                if c >= 0:
                    j = c >> 1
                    if c & 1:
                        cur[j] += q
                        if j >= hi:
                            hi = j + 1
                    else:
                        moved, k_moved = _kadd(moved, k_moved, q)
                        if j < nlo:
                            nlo = j
                        if j >= nhi:
                            nhi = j + 1
                        if not rosettes_only:
                            nxt[j] += q
                elif c == -1:
                    won, k_won = _kadd(won, k_won, q)
                else:
                    lost, k_lost = _kadd(lost, k_lost, q)
        if not rosettes_only:
            cur[s] = 0.0
        s += 1
    return won + k_won, lost + k_lost, thr + k_thr, moved + k_moved, dropped + k_dropped, nlo, nhi, hi


@numba.njit(cache=True, parallel=True)
def _spread_csr(start, cnt, ent, probs, cur, nxt, src, tgt, lo, hi):
    nt = probs.shape[0]
    for p in prange(tgt.shape[0] - 1):
        tlo = tgt[p]
        thi = tgt[p + 1]
        for w in range(src.shape[1]):
            for s in range(max(lo, src[p, w, 0]), min(hi, src[p, w, 1])):
                m = cur[s]
                if m == 0.0:
                    continue
                e = start[s]
                for t in range(nt):
                    k = cnt[s, t]
                    if k == 0:
                        continue
                    q = m * probs[t] / k
                    for _ in range(k):
                        c = ent[e]
                        e += 1
                        if c >= 0 and not c & 1:
                            j = c >> 1
                            if j >= tlo and j < thi:
                                nxt[j] += q


# Two or more threads in one pass (deterministic policies): thread i takes the sources whose opponent's pips
# lie in [Q_i, Q_i+1), level by level of the mover's pips. A rosette keeps the opponent's pips and adds to
# the mover's: it lands later in the same thread's sources, so each thread carries its own rosettes in
# place. Every other move lands where the mover's pips are the source's opponent's pips, or fewer by a
# captured piece's (at most 14): in thread i's own targets [Q_i, Q_i+1), except for captures that cross
# below Q_i. Those go into a buffer of thread i's own (the places of mover's pips [Q_i - 14, Q_i)), added in
# after the pass. Each target gets its terms in one thread's order, plus that buffer's sum: not the bits of
# one thread, but the same bits for the same number of threads.


@numba.njit(cache=True, parallel=True)
def _turn_fixed_split(table, probs, cur, nxt, side, side_lo, side_off, lvl, width, qs, lo, hi, eps, out):
    nt = probs.shape[0]
    parts = qs.shape[0] - 1
    S = cur.shape[0]
    for part in prange(parts):
        q0 = qs[part]
        q1 = qs[part + 1]
        tlo = lvl[q0 * width]
        slo = side_lo[part]
        off = side_off[part]
        won = 0.0
        lost = 0.0
        thr = 0.0
        moved = 0.0
        dropped = 0.0
        k_won = 0.0
        k_lost = 0.0
        k_thr = 0.0
        k_moved = 0.0
        k_dropped = 0.0
        nlo = S
        nhi = 0
        h = hi
        # (indices as unsigned: they are never negative, and numba then leaves out the wraparound test of each,
        # 5-10% of a turn at six pieces)
        # the opponent's pips q outer, the mover's p inner: the moves of (p, q) that are not rosettes land on
        # (q, p..p + 4) (or a captured piece's fewer than q), so the targets of one q are written as a run
        for q in range(q0, q1):
            for p in range(width):
                b = p * width + q
                s = lvl[b]
                if s >= h:
                    break  # this and every later level of this q lie past the mass (rosettes only raise h)
                end = min(lvl[b + 1], h)
                if s < lo:
                    s = lo
                while s < end:
                    a = s + PUSH_AHEAD
                    if a < end:
                        # the targets of the place PUSH_AHEAD on: their lines arrive while this one is pushed
                        for t in range(nt):
                            c = table[np.uint64(a), np.uint64(t)]
                            if c >= 0:
                                prefetch(cur if c & 1 else nxt, np.uint64(c >> 1))
                    m = cur[np.uint64(s)]
                    if m == 0.0:
                        s += 1
                        continue
                    cur[np.uint64(s)] = 0.0
                    if m < eps:
                        dropped, k_dropped = _kadd(dropped, k_dropped, m)
                        s += 1
                        continue
                    thr, k_thr = _kadd(thr, k_thr, m)
                    mv = 0.0
                    for t in range(nt):
                        c = table[np.uint64(s), np.uint64(t)]
                        v = m * probs[np.uint64(t)]
                        if c >= 0:
                            j = c >> 1
                            if c & 1:
                                cur[np.uint64(j)] += v
                                if j >= h:
                                    h = j + 1
                            else:
                                mv += v
                                if j < nlo:
                                    nlo = j
                                if j >= nhi:
                                    nhi = j + 1
                                if j >= tlo:
                                    nxt[np.uint64(j)] += v
                                else:
                                    side[off + j - slo] += v
                        elif c == -1:
                            won, k_won = _kadd(won, k_won, v)
                        elif c == -2:
                            lost, k_lost = _kadd(lost, k_lost, v)
                    moved, k_moved = _kadd(moved, k_moved, mv)
                    s += 1
        out[part, 0] = won + k_won
        out[part, 1] = lost + k_lost
        out[part, 2] = thr + k_thr
        out[part, 3] = moved + k_moved
        out[part, 4] = dropped + k_dropped
        out[part, 5] = nlo
        out[part, 6] = nhi
        out[part, 7] = h


@numba.njit(cache=True)
def _merge_side(nxt, side, side_lo, side_off, qs, lvl, width):
    """Add the threads' buffers of crossing captures into ``nxt`` (thread order) and clear them."""
    for part in range(1, qs.shape[0] - 1):
        slo = side_lo[part]
        off = side_off[part]
        for j in range(slo, lvl[qs[part] * width]):
            v = side[off + j - slo]
            if v != 0.0:
                nxt[j] += v
                side[off + j - slo] = 0.0


# The bound on the throws to come swept over the push's own moves (deterministic policies): the places in
# decreasing order of the pips walked by both sides, diagonal by diagonal of (mover's pips p, opponent's q)
# with p + q = T. Every move but a capture (and a pass, along the diagonal) walks on, so it reads a value
# already swept this sweep (Gauss-Seidel in the progress order, as the layers are), and the diagonal's
# levels are contiguous runs of places whose successors lie in the next few diagonals: the reads stay in a
# cache-sized window. The threads share each diagonal (split by places), each taking a level (p, q) with its
# mirror (q, p), where a pass leads: no value is read by one thread while another writes it (the same bits
# from run to run).


@numba.njit(cache=True, inline="always")
def _throws_at(tab, probs, y, yo, s):
    """``1 + sum_t probs[t] * y'(successor)``: ``y`` the mover's throws to come (a rosette's successor),
    ``yo`` the opponent's; 0 where the game is over."""
    ny = 1.0
    over = 0
    for t in range(probs.shape[0]):
        c = tab[s, t]
        if c >= 0:
            ny += probs[t] * (y[c >> 1] if c & 1 else yo[c >> 1])
        elif c == -3:
            over += 1
    return 0.0 if over == probs.shape[0] else ny


@numba.njit(cache=True, parallel=True)
def _sweep_throws_diagonal(tab0, tab1, probs, y, lvl, width, psplit):
    """One Gauss-Seidel sweep of the throws to come, ``y[side, place]``, diagonal by diagonal from the last;
    the largest relative change."""
    ns = y.shape[0]
    parts = psplit.shape[1] - 1
    worst = np.zeros(parts)
    for T in range(2 * width - 2, -1, -1):
        for part in prange(parts):
            w = worst[part]
            for p in range(psplit[T, part], psplit[T, part + 1]):
                for mirror in range(2 if 2 * p < T else 1):  # (p, q) then (q, p): a pass leads from one to the other
                    b = (T - p) * width + p if mirror else p * width + T - p
                    for side in range(ns):
                        tab = tab0 if side == 0 else tab1
                        ys = y[side]
                        yo = y[ns - 1 - side]
                        for s in range(lvl[b], lvl[b + 1]):
                            ny = _throws_at(tab, probs, ys, yo, s)
                            if ny > 0.0:
                                d = abs(ny - ys[s]) / ny
                                if d > w:
                                    w = d
                            ys[s] = ny
            worst[part] = w
    return worst.max()


@numba.njit(cache=True, parallel=True)
def _residual_throws_places(tab0, tab1, probs, y, parts):
    """The largest ``|y - (1 + P y)|`` over every place and side, nothing written."""
    ns, S = y.shape
    worst = np.zeros(parts)
    for part in prange(parts):
        w = 0.0
        for side in range(ns):
            tab = tab0 if side == 0 else tab1
            for s in range(part * S // parts, (part + 1) * S // parts):
                w = max(w, abs(_throws_at(tab, probs, y[side], y[ns - 1 - side], s) - y[side, s]))
        worst[part] = w
    return worst.max()


def _diagonal_split(level_start: np.ndarray, width: int, parts: int) -> np.ndarray:
    """(2 width - 1, parts + 1): for each diagonal p + q = T, the mover's pips p <= q where each thread's share
    of its places begins (about equal numbers of places; the thread that takes (p, q) takes (q, p) too)."""
    sizes = np.diff(level_start).reshape(width, width)  # [p, q]
    out = np.zeros((2 * width - 1, parts + 1), np.int64)
    for T in range(2 * width - 1):
        p0, p1 = max(0, T - width + 1), T // 2 + 1
        ps = np.arange(p0, p1)
        both = sizes[ps, T - ps] + np.where(2 * ps < T, sizes[T - ps, ps], 0)
        cum = np.concatenate([[0], np.cumsum(both)])
        out[T, 0], out[T, parts] = p0, p1
        for i in range(1, parts):
            out[T, i] = p0 + int(np.searchsorted(cum, cum[-1] * i / parts))
    return out


def _bound_on_tables(tables, probs: np.ndarray, level_start: np.ndarray, width: int, tol: float,
                     parts: int) -> ThrowsBound:
    """:class:`ThrowsBound` from the push's deterministic moves (:func:`_push_tables`), swept to a relative
    change of ``tol``."""
    t0 = time.perf_counter()
    tab0 = tables[0][1]
    tab1 = tables[-1][1]
    y = np.zeros((len(tables), tab0.shape[0]))
    psplit = _diagonal_split(level_start, width, parts)
    change, sweeps = np.inf, 0
    while change > tol:
        change = _sweep_throws_diagonal(tab0, tab1, probs, y, level_start, width, psplit)
        sweeps += 1
    residual = float(_residual_throws_places(tab0, tab1, probs, y, parts))
    top = float(y.max(initial=0.0))
    del y
    bound = top / (1.0 - residual) if residual < 1.0 else float("inf")
    return ThrowsBound(bound, top, residual, sweeps, time.perf_counter() - t0)


def _split_bounds(level_start: np.ndarray, width: int, parts: int):
    """(qs, side_lo, side_off, side size) for :func:`_turn_fixed_split`: the threads' ranges of the
    opponent's pips (about equal numbers of places) and their buffers for crossing captures."""
    S = int(level_start[-1])
    by_mover = level_start[::width][:width + 1]
    qs = [0] + [int(np.searchsorted(by_mover, i * S / parts)) for i in range(1, parts)] + [width]
    qs = np.array(sorted(min(max(q, 0), width) for q in qs), np.int64)
    side_lo = np.zeros(parts, np.int64)
    side_off = np.zeros(parts, np.int64)
    size = 0
    for i in range(parts):
        side_lo[i] = by_mover[max(int(qs[i]) - 14, 0)]
        side_off[i] = size
        size += int(by_mover[qs[i]] - side_lo[i])
    return qs, side_lo, side_off, size


def _thread_slices(level_start: np.ndarray, width: int, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """For ``parts`` threads: each one's source ranges of places, one per mover's pips (parts, width, 2), and
    the bounds of the target places each owns (parts + 1,); see the comment above ``_turn_fixed``."""
    S = int(level_start[-1])
    by_mover = level_start[::width][:width + 1]  # first place of each mover's pips, then S
    qs = [0] + [int(np.searchsorted(by_mover, i * S / parts)) for i in range(1, parts)] + [width]
    qs = sorted(min(max(q, 0), width) for q in qs)
    tgt = np.array([int(by_mover[q]) for q in qs], np.int64)
    src = np.empty((parts, width, 2), np.int64)
    for i in range(parts):
        q0, q1 = qs[i], min(width, qs[i + 1] + 15)
        for p in range(width):
            src[i, p, 0] = level_start[p * width + q0]
            src[i, p, 1] = level_start[p * width + q1]
    return src, tgt


@dataclass
class PushResult:
    """The forward push: the length distribution, and the expected turns and throws it gives.

    ``turns`` and ``throws`` are the sums over the turns pushed plus the tail beyond the last one,
    extrapolated geometrically from the last two turns (``tail_turns``, ``tail_throws``: that part).
    ``wins`` is each side's chance (light, dark) of winning within the turns pushed. ``dropped`` is the
    mass let go on the way (places holding less than the push's ``drop``); the distribution's ``tail``
    is the mass still in play plus that, so its pmf and tail still add up to 1.
    """

    dist: LengthDistribution
    turns: float
    throws: float
    tail_turns: float
    tail_throws: float
    wins: tuple[float, float]
    entries: int
    build_seconds: float
    push_seconds: float
    dropped: float = 0.0
    left: float = 0.0  # the mass still in play after the last turn
    bound: ThrowsBound | None = None  # with ``bound_tol``: the bound on the throws to come, from the same moves


def _deterministic(codes) -> bool:
    return all(c != POLICY_CODES["random"] for c in codes)


def _default_parts(codes) -> int:
    """The push's threads when none are named: two for deterministic pairs (one pass, each thread its own
    sources; seven pieces on quiet cores 2.6 s a turn against 3.3 s on one), else one (the rosettes' pass
    and the spread read the moves twice)."""
    return min(2, numba.get_num_threads()) if _deterministic(codes) else 1


def push_bytes(rules: UrRules, light: str, dark: str) -> int:
    """Peak memory of :func:`push_lengths`: the policies' moves, two mass arrays, the build's maps."""
    S = UrSpace(rules.pieces).size
    nt = len(rules.throws)
    codes = {light, dark}
    tables = 0
    for c in codes:
        tables += S * nt * 4 if c != "random" else S * (8 + nt + 14 * 4)
    build = S * (4 + 1) + (S * 4 if "random" in codes else 0) + CHUNK * nt * 7 * 8
    parts = int(os.environ.get("MARKOV_OCA_PUSH_THREADS") or _default_parts([_code(light), _code(dark)]))
    # threads in one pass: each past the first buffers the places 14 mover's pips below its own (at most twice
    # the average share of 14 levels of 15 * pieces + 1)
    crossing = 0 if "random" in codes or parts <= 1 else (parts - 1) * 2 * S * 8 * 14 // (15 * rules.pieces + 1)
    return int(tables + max(16 * S + crossing, build) + 150 * 2**20)


def _drop_pages(a) -> None:
    """Let the kernel take back the pages of a memory-mapped table read so far (it stays mapped)."""
    import mmap

    mm = getattr(a, "_mmap", None)
    if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        try:
            mm.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError):
            pass


def _push_tables(space: UrSpace, rules: UrRules, codes, vals: np.ndarray, newpos: np.ndarray, bar):
    """Each policy's moves in the push's places: ``("fixed", (S, throws) int32)`` for a deterministic policy
    (``2 * place + again``, -1 the mover wins, -2 loses, -3 no move), ``("csr", (starts, counts, entries))`` for
    ``random``; and the number of entries."""
    S = space.size
    throws, ros, total = kernel_args(rules)
    nt = len(throws)
    tables = []
    entries = 0
    task = bar.add_task("policy moves for the length distribution", total=S * len(codes))
    for code in codes:
        if code != POLICY_CODES["random"]:
            table = np.empty((S, nt), np.int32)
            for lo in range(0, S, CHUNK):
                rows = np.arange(lo, min(lo + CHUNK, S), dtype=np.int64)
                succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, LANE_MIRROR, rows, throws, ros,
                                                                  total)
                _fill_fixed(code, succ, events, frm, n_moves, vals, newpos, lo, table)
                bar.update(task, advance=rows.size)
            tables.append(("fixed", table))
            entries += table.size
            continue
        order = np.empty(S, np.int32)
        order[newpos] = np.arange(S, dtype=np.int32)
        cnt = np.zeros((S, nt), np.uint8)
        start_e = np.zeros(S + 1, np.int64)
        ents = []
        e_used = 0
        for lo in range(0, S, CHUNK):
            rows = order[lo:lo + CHUNK].astype(np.int64)  # ranks, placed at lo..: fill in the push order
            succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, LANE_MIRROR, rows, throws, ros,
                                                              total)
            ne = _push_count(code, succ, events, frm, n_moves, vals)
            e_start = np.zeros(ne.size + 1, np.int64)
            np.cumsum(ne, out=e_start[1:])
            ent = np.empty(int(e_start[-1]), np.int32)
            _push_pack(code, succ, events, frm, n_moves, vals, newpos, e_start, cnt, ent,
                       np.arange(lo, lo + rows.size, dtype=np.int64))
            start_e[lo:lo + rows.size] = e_start[:-1] + e_used
            e_used += ent.size
            ents.append(ent)
            bar.update(task, advance=rows.size)
        start_e[S] = e_used
        del order
        tables.append(("csr", (start_e, cnt, np.concatenate(ents))))
        entries += e_used
        del ents
    return tables, entries


def push_lengths(rules: UrRules, light: str = "optimal", dark: str = "optimal", values: np.ndarray | None = None,
                 *, tail: float = 1e-10, start: int | None = None, max_turns: int = 1_000_000,
                 progress: bool = False, parts: int | None = None, drop: float | None = None,
                 on_turn: Callable[[int, float, float, float], None] | None = None,
                 bound_tol: float | None = None) -> PushResult:
    """Push the probability mass forward turn by turn, light moving first from ``start`` (all pieces in
    hand), until less than ``tail`` is still in play.

    A place holding less than ``drop`` (default ``tail * 1e-12``; 0 keeps everything) is let go: its
    mass is added up (``PushResult.dropped``) and counted in the distribution's tail, a bound on what
    the pmf misses. Most places of a big game hold next to nothing (six pieces, greedy against greedy,
    turn 50: 12.4 M of the 31.6 M places reached hold more than 1e-18, the rest 7.9e-13 together), so
    this skips most of the work for a loss far below the tail. ``on_turn(turn, in play, dropped so far,
    seconds of that turn)`` is called after each turn.

    A deterministic policy (``greedy``, ``optimal``) keeps one move per throw (4 bytes a position and
    throw, no index); ``random`` keeps every legal move. With deterministic policies ``parts`` threads make
    one pass, each over the sources of its own range of the opponent's pips; with a random side, ``parts``
    > 1 spreads the mass of a turn after one pass over the rosettes. The default
    (``$MARKOV_OCA_PUSH_THREADS``, else :func:`_default_parts`) is two threads for deterministic pairs,
    one otherwise (docs/ur.md).

    With ``bound_tol`` and deterministic policies, :func:`throws_bound` is computed first on the same moves
    (``PushResult.bound``), so they are built once.
    """
    codes = [_code(light)] if light == dark else [_code(light), _code(dark)]
    if 2 in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    parts = int(parts or os.environ.get("MARKOV_OCA_PUSH_THREADS") or _default_parts(codes))
    eps = float(tail) * 1e-12 if drop is None else float(drop)
    t0 = time.perf_counter()
    space = UrSpace(rules.pieces)
    S = space.size
    probs = np.asarray(rules.throw_probabilities, np.float64)
    newpos, levels = push_placement(space, rules.pieces)
    first = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0) if start is None else int(start)
    first_place = int(newpos[first])
    with progress_bar(progress) as bar:
        tables, entries = _push_tables(space, rules, codes, vals, newpos, bar)
        del newpos
        if values is not None:
            _drop_pages(values)  # the policies are built: the table is not read again
        bound = None
        if bound_tol is not None and all(kind == "fixed" for kind, _ in tables):
            bar.add_task(f"{light} against {dark}: a bound on the throws to come", total=None)
            bound = _bound_on_tables(tables, probs, levels, 15 * rules.pieces + 1, float(bound_tol),
                                     numba.get_num_threads())
        t1 = time.perf_counter()
        cur = np.zeros(S)
        nxt = np.zeros(S)
        cur[first_place] = 1.0
        split = all(kind == "fixed" for kind, _ in tables)  # deterministic: one pass, any number of threads
        if split:
            width = 15 * rules.pieces + 1
            qs, side_lo, side_off, side_size = _split_bounds(levels, width, parts)
            crossing = np.zeros(side_size)
            outs = np.zeros((parts, 8))
        elif parts > 1:
            src, tgt = _thread_slices(levels, 15 * rules.pieces + 1, parts)
        pmf = np.zeros((1024, 2))
        alive = [1.0]  # mass in play after each turn
        thrown = [0.0]  # throws made in each turn
        left, t, dropped = 1.0, 0, 0.0
        lo, hi = first_place, first_place + 1
        task = bar.add_task("length distribution, turn by turn", total=None)
        while t < max_turns and left >= tail:
            t += 1
            t_turn = time.perf_counter()
            side = (t - 1) % 2
            kind, tab = tables[side % len(tables)]
            if split:
                _turn_fixed_split(tab, probs, cur, nxt, crossing, side_lo, side_off, levels, width, qs, lo, hi, eps,
                                  outs)
                _merge_side(nxt, crossing, side_lo, side_off, qs, levels, width)
                won, lost, thr, moved, drop = (float(outs[:, k].sum()) for k in range(5))
                nlo, nhi, hi = int(outs[:, 5].min()), int(outs[:, 6].max()), int(outs[:, 7].max())
            elif kind == "fixed":
                won, lost, thr, moved, drop, nlo, nhi, hi = _turn_fixed(tab, probs, cur, nxt, lo, hi, eps, parts > 1)
                if parts > 1:
                    _spread_fixed(tab, probs, cur, nxt, src, tgt, lo, hi)
            else:
                won, lost, thr, moved, drop, nlo, nhi, hi = _turn_csr(tab[0], tab[1], tab[2], probs, cur, nxt, lo,
                                                                     hi, eps, parts > 1)
                if parts > 1:
                    _spread_csr(tab[0], tab[1], tab[2], probs, cur, nxt, src, tgt, lo, hi)
            if parts > 1 and not split:
                cur[lo:hi] = 0.0
            if t >= pmf.shape[0]:
                pmf = np.vstack([pmf, np.zeros_like(pmf)])
            pmf[t, side] += won
            pmf[t, 1 - side] += lost
            cur, nxt = nxt, cur
            lo, hi = (nlo, nhi) if nhi > nlo else (0, 0)
            left = float(moved)
            dropped += float(drop)
            alive.append(left)
            thrown.append(float(thr))
            bar.update(task, description=f"length distribution: turn {t}, {left:.1e} still in play")
            if on_turn is not None:
                on_turn(t, left, dropped, time.perf_counter() - t_turn)
        t2 = time.perf_counter()
    del cur, nxt, tables
    pmf = pmf[:t + 1].copy()
    turns = float(sum(alive[:-1]))
    throws_sum = float(sum(thrown))
    tail_turns = tail_throws = 0.0
    if t >= 2 and left > 0.0 and alive[-2] > 0.0:
        r = left / alive[-2]
        if r < 1.0:
            tail_turns = left / (1.0 - r)  # sum of the mass in play at the start of each later turn
            tail_throws = thrown[-1] / alive[-2] * tail_turns
        else:
            tail_turns = tail_throws = float("inf")
    dist = LengthDistribution(pmf.sum(axis=1), 0.0, left + dropped, by_outcome=pmf)
    wins = (float(pmf[:, 0].sum()), float(pmf[:, 1].sum()))
    return PushResult(dist, turns + tail_turns, throws_sum + tail_throws, tail_turns, tail_throws, wins, entries,
                      t1 - t0 - (bound.seconds if bound is not None else 0.0), t2 - t1, dropped, left, bound)


def length_distribution(rules: UrRules, light: str = "optimal", dark: str = "optimal",
                        values: np.ndarray | None = None, *, tail: float = 1e-10, start: int | None = None,
                        max_turns: int = 1_000_000, progress: bool = False) -> LengthDistribution:
    """The distribution of the number of turns, light moving first from ``start`` (all pieces in hand).

    ``by_outcome`` has the columns light wins, dark wins (the order of the chain's outcomes).
    """
    return push_lengths(rules, light, dark, values, tail=tail, start=start, max_turns=max_turns,
                        progress=progress).dist
