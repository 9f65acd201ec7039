"""An upper bound on the throws still to come from any position, under a pair of policies.

The throws to come solve ``y = 1 + P y`` (``P`` the chain of throws, sub-stochastic). Any ``ŷ`` with
``|ŷ - (1 + P ŷ)| <= r`` has ``y - ŷ = (I - P)^-1 (1 + P ŷ - ŷ) <= r y``, so ``y <= ŷ / (1 - r)``
everywhere: a loose evaluation is enough (its residual computed in floating point, then raised by the
rounding of that computation: :func:`.sweepbounds.throws_ceiling`). This bounds what the forward push
(:mod:`.push`) leaves out when it stops with mass still in play or lets mass go: each unit of it has at most
this many turns and throws ahead.

Deterministic policies are swept on the throws alone over the push's own moves (:mod:`.pushmoves`): the
places in decreasing order of the pips walked by both sides, diagonal by diagonal of (mover's pips p,
opponent's q) with p + q = T. Every move but a capture (and a pass, along the diagonal) walks on, so it reads
a value already swept this sweep (Gauss-Seidel in the progress order, as the layers are), and the diagonal's
levels are contiguous runs of places whose successors lie in the next few diagonals: the reads stay in a
cache-sized window. The threads share each diagonal (split by places), each taking a level (p, q) with its
mirror (q, p), where a pass leads: no value is read by one thread while another writes it (the same bits
from run to run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

from ..core.progress import progress_bar
from .evaluate import evaluate_policies
from .policy import deterministic, drop_pages, policy_codes
from .pushmoves import push_tables
from .pushorder import diagonal_split, push_placement
from .rules import UrRules
from .state import space_of
from .storage import NO_MOVE
from .sweepbounds import throws_ceiling

__all__ = ["TableSums", "ThrowsBound", "bound_on_tables", "sums_on_tables", "throws_bound"]

INF = float("inf")
#: The sums' first relative change, and the smallest they are swept to.
SUMS_TOL = 1e-12
SUMS_FLOOR = 1e-14
#: Sweeps without a smaller change after which the sweeps stop (rounding leaves the change there).
STALL = 50


@dataclass
class ThrowsBound:
    """An upper bound on the throws still to come from any position, under a pair of policies."""

    bound: float  # every position's expected throws to come are at most this
    largest: float  # the largest computed
    residual: float  # the largest |y - (1 + P y)|, absolute, over every state
    sweeps: int
    seconds: float


@numba.njit(cache=True, inline="always")
def _sums_at(tab, probs, y, yo, z, zo, s, turns):
    """``(1 + sum_t probs[t] y'(successor), 1 + sum_t probs[t] z'(successor))``: ``y``/``z`` the mover's throws
    and turns to come (a rosette's successor, whose turn is this one: its count less one), ``yo``/``zo`` the
    opponent's; (0, 0) where the game is over. ``z`` is read only with ``turns``."""
    ny = 1.0
    nz = 1.0
    over = 0
    for t in range(probs.shape[0]):
        c = tab[s, t]
        if c >= 0:
            if c & 1:
                ny += probs[t] * y[c >> 1]
                if turns:
                    nz += probs[t] * (z[c >> 1] - 1.0)
            else:
                ny += probs[t] * yo[c >> 1]
                if turns:
                    nz += probs[t] * zo[c >> 1]
        elif c == NO_MOVE:
            over += 1
    if over == probs.shape[0]:
        return 0.0, 0.0
    return ny, nz


@numba.njit(cache=True, inline="always")
def _sweep_level(tab0, tab1, probs, y, z, turns, lo, hi, w):
    """Sweep the places ``lo..hi`` of each side; the largest relative change, from ``w``."""
    ns = y.shape[0]
    for side in range(ns):
        tab = tab0 if side == 0 else tab1
        ys, yo = y[side], y[ns - 1 - side]
        zs, zo = z[side], z[ns - 1 - side]
        for s in range(lo, hi):
            ny, nz = _sums_at(tab, probs, ys, yo, zs, zo, s, turns)
            if ny > 0.0:
                d = abs(ny - ys[s]) / ny
                if turns:
                    d = max(d, abs(nz - zs[s]) / ny)
                if d > w:
                    w = d
            ys[s] = ny
            if turns:
                zs[s] = nz
    return w


@numba.njit(cache=True, parallel=True)
def _sweep_diagonal(tab0, tab1, probs, y, z, turns, lvl, width, psplit):
    """One Gauss-Seidel sweep of the throws to come, ``y[side, place]`` (and with ``turns`` the turns,
    ``z``), diagonal by diagonal from the last; the largest relative change."""
    parts = psplit.shape[1] - 1
    worst = np.zeros(parts)
    for T in range(2 * width - 2, -1, -1):
        for part in prange(parts):
            w = worst[part]
            for p in range(psplit[T, part], psplit[T, part + 1]):
                for mirror in range(2 if 2 * p < T else 1):  # (p, q) then (q, p): a pass leads from one to the other
                    b = (T - p) * width + p if mirror else p * width + T - p
                    w = _sweep_level(tab0, tab1, probs, y, z, turns, lvl[b], lvl[b + 1], w)
            worst[part] = w
    return worst.max()


@numba.njit(cache=True)
def _residual_part(tab0, tab1, probs, y, z, turns, lo, hi):
    ns = y.shape[0]
    a, b = 0.0, 0.0
    for side in range(ns):
        tab = tab0 if side == 0 else tab1
        for s in range(lo, hi):
            ny, nz = _sums_at(tab, probs, y[side], y[ns - 1 - side], z[side], z[ns - 1 - side], s, turns)
            d = abs(ny - y[side, s])
            if not d <= a:  # a NaN is kept: no bound follows from it
                a = d
            if turns:
                d = abs(nz - z[side, s])
                if not d <= b:
                    b = d
    return a, b


@numba.njit(cache=True, parallel=True)
def _residual_places(tab0, tab1, probs, y, z, turns, parts):
    """The largest ``|y - (1 + P y)|`` (and the turns') over every place and side, nothing written."""
    S = y.shape[1]
    wy = np.zeros(parts)
    wz = np.zeros(parts)
    for part in prange(parts):
        wy[part], wz[part] = _residual_part(tab0, tab1, probs, y, z, turns, part * S // parts, (part + 1) * S // parts)
    return wy.max(), wz.max()


@dataclass
class TableSums:
    """The expected throws and turns to come from the start, swept on the push's fixed tables, with certified
    bounds (:func:`.sweepbounds.sums_bounds`)."""

    throws: float  # from the start (light to move, every piece in hand)
    turns: float
    largest: float  # the largest throws to come computed over every place and side
    residual: tuple[float, float]  # the largest |y - (1 + P y)| and the turns', absolute, over every state
    sweeps: int
    change: float  # the relative change of the last sweep
    seconds: float
    throws_bound: float = INF  # certified bounds on ``throws`` and ``turns``
    turns_bound: float = INF
    ceiling: float = INF  # a certified bound on the throws to come from any position


def _sweeps(tab0, tab1, probs, y, z, turns, level_start, width, psplit, tol, sweeps, change):
    """Sweep until the relative change is at most ``tol``, or has not fallen for :data:`STALL` sweeps (the
    rounding's floor: the bounds then say what was reached); (sweeps, last change)."""
    best, since = change, 0
    while change > tol and since < STALL:
        change = _sweep_diagonal(tab0, tab1, probs, y, z, turns, level_start, width, psplit)
        sweeps += 1
        if change < best:
            best, since = change, 0
        else:
            since += 1
    return sweeps, change


def sums_on_tables(tables, probs: np.ndarray, level_start: np.ndarray, width: int, *, start: int,
                   tol: float = SUMS_TOL, precision: float | None = None, parts: int | None = None,
                   bar=None) -> TableSums:
    """The expected throws and turns to come from place ``start`` (light to move) under the push's fixed tables
    (:func:`.pushmoves.push_tables`), Gauss-Seidel sweeps in the push's diagonal order to a
    relative change of ``tol``, with certified bounds; swept on, a hundred times smaller each time down to
    :data:`SUMS_FLOOR`, while a bound misses ``precision`` (relative).

    Parameters
    ----------
    tables : list of numpy.ndarray
        Each side's fixed table (one when both play the same policy).
    probs : numpy.ndarray
        The throws' probabilities.
    level_start : numpy.ndarray
        The first place of each level (:func:`.pushorder.push_placement`).
    width : int
        Pips a side, plus one.
    start : int
        The place the game starts from.
    tol : float
        Relative change of the last sweep.
    precision : float, optional
        The relative bound to meet.
    parts : int, optional
        Threads; numba's count by default.
    """
    from .sweepbounds import sums_bounds

    t0 = time.perf_counter()
    parts = int(parts or numba.get_num_threads())
    tab0, tab1 = tables[0], tables[-1]
    y = np.zeros((len(tables), tab0.shape[0]))
    z = np.zeros_like(y)
    psplit = diagonal_split(level_start, width, parts)
    task = bar.add_task("the expected throws and turns, swept", total=None) if bar is not None else None
    sweeps, change = 0, np.inf
    while True:
        sweeps, change = _sweeps(tab0, tab1, probs, y, z, True, level_start, width, psplit, tol, sweeps, change)
        ry, rz = _residual_places(tab0, tab1, probs, y, z, True, parts)
        out = TableSums(float(y[0, start]), float(z[0, start]), float(y.max(initial=0.0)), (float(ry), float(rz)),
                        sweeps, float(change), 0.0)
        sums_bounds(out, probs.shape[0])
        if task is not None:
            bar.update(task, description=f"the expected throws and turns: {sweeps} sweeps, relative bound "
                                         f"{out.throws_bound / max(out.throws, 1e-300):.1e}")
        good = precision is None or (out.throws_bound <= precision * abs(out.throws)
                                     and out.turns_bound <= precision * abs(out.turns))
        if good or tol <= SUMS_FLOOR:
            break
        tol = max(tol * 1e-2, SUMS_FLOOR)
    del y, z
    out.seconds = time.perf_counter() - t0
    return out


def bound_on_tables(tables, probs: np.ndarray, level_start: np.ndarray, width: int, tol: float,
                    parts: int) -> ThrowsBound:
    """:class:`ThrowsBound` from the push's fixed tables (:func:`.pushmoves.push_tables`), the throws alone swept
    to a relative change of ``tol`` with ``parts`` threads (the other parameters as :func:`sums_on_tables`'s)."""
    t0 = time.perf_counter()
    tab0 = tables[0]
    tab1 = tables[-1]
    y = np.zeros((len(tables), tab0.shape[0]))
    z = np.zeros((len(tables), 0))
    psplit = diagonal_split(level_start, width, parts)
    sweeps, _change = _sweeps(tab0, tab1, probs, y, z, False, level_start, width, psplit, tol, 0, np.inf)
    residual = float(_residual_places(tab0, tab1, probs, y, z, False, parts)[0])
    top = float(y.max(initial=0.0))
    del y
    bound = throws_ceiling(top, residual, probs.shape[0], 1)
    return ThrowsBound(bound, top, residual, sweeps, time.perf_counter() - t0)


def throws_bound(rules: UrRules, light: str = "optimal", dark: str = "optimal", values: np.ndarray | None = None,
                 *, tol: float = 1e-4, parts: int | None = None, progress: bool = False) -> ThrowsBound:
    """The largest expected number of throws still to come over every position, bounded from above.

    See the module docstring. The turns to come are at most the throws. Deterministic policies are swept on
    the push's moves; with ``random`` the three values of :func:`.evaluate.evaluate_policies` are, layer by
    layer.

    Parameters
    ----------
    rules : UrRules
        The game.
    light, dark : str
        The sides' policies.
    values : numpy.ndarray, optional
        The optimal values (needed when a side plays ``optimal``).
    tol : float
        The sweeps' relative change.
    parts : int, optional
        Threads; numba's count by default.
    progress : bool
        Show progress bars.
    """
    t0 = time.perf_counter()
    codes = policy_codes(light, dark)
    if not deterministic(codes):
        ev = evaluate_policies(rules, light, dark, values, tol=tol, progress=progress, parts=parts)
        r = ev.residual[1]
        top = float(ev.throws.max())
        return ThrowsBound(throws_ceiling(top, r, len(rules.throws), ev.moves), top, r, ev.sweeps,
                           time.perf_counter() - t0)
    if 2 in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    space = space_of(rules.pieces, rules.code)
    newpos, levels = push_placement(space, rules.pieces)
    with progress_bar(progress) as bar:
        tables, _entries = push_tables(space, rules, codes, vals, newpos, bar)
        del newpos
        if values is not None:
            drop_pages(values)
        bar.add_task(f"{light} against {dark}: a bound on the throws to come", total=None)
        out = bound_on_tables(tables, np.asarray(rules.throw_probabilities, np.float64), levels,
                              rules.off_square * rules.pieces + 1, tol, int(parts or numba.get_num_threads()))
    out.seconds = time.perf_counter() - t0
    return out
