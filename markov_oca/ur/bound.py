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

__all__ = ["ThrowsBound", "bound_on_tables", "throws_bound"]


@dataclass
class ThrowsBound:
    """An upper bound on the throws still to come from any position, under a pair of policies."""

    bound: float  # every position's expected throws to come are at most this
    largest: float  # the largest computed
    residual: float  # the largest |y - (1 + P y)|, absolute, over every state
    sweeps: int
    seconds: float


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
        elif c == NO_MOVE:
            over += 1
    return 0.0 if over == probs.shape[0] else ny


@numba.njit(cache=True, inline="always")
def _sweep_level(tab0, tab1, probs, y, lo, hi, w):
    """Sweep the places ``lo..hi`` of each side; the largest relative change, from ``w``."""
    ns = y.shape[0]
    for side in range(ns):
        tab = tab0 if side == 0 else tab1
        ys = y[side]
        yo = y[ns - 1 - side]
        for s in range(lo, hi):
            ny = _throws_at(tab, probs, ys, yo, s)
            if ny > 0.0:
                d = abs(ny - ys[s]) / ny
                if d > w:
                    w = d
            ys[s] = ny
    return w


@numba.njit(cache=True, parallel=True)
def _sweep_throws_diagonal(tab0, tab1, probs, y, lvl, width, psplit):
    """One Gauss-Seidel sweep of the throws to come, ``y[side, place]``, diagonal by diagonal from the last;
    the largest relative change."""
    parts = psplit.shape[1] - 1
    worst = np.zeros(parts)
    for T in range(2 * width - 2, -1, -1):
        for part in prange(parts):
            w = worst[part]
            for p in range(psplit[T, part], psplit[T, part + 1]):
                for mirror in range(2 if 2 * p < T else 1):  # (p, q) then (q, p): a pass leads from one to the other
                    b = (T - p) * width + p if mirror else p * width + T - p
                    w = _sweep_level(tab0, tab1, probs, y, lvl[b], lvl[b + 1], w)
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


def bound_on_tables(tables, probs: np.ndarray, level_start: np.ndarray, width: int, tol: float,
                    parts: int) -> ThrowsBound:
    """:class:`ThrowsBound` from the push's fixed tables (:func:`.pushmoves.push_tables`), swept to a relative
    change of ``tol``.

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
    tol : float
        Relative change of the last sweep.
    parts : int
        Threads.
    """
    t0 = time.perf_counter()
    tab0 = tables[0]
    tab1 = tables[-1]
    y = np.zeros((len(tables), tab0.shape[0]))
    psplit = diagonal_split(level_start, width, parts)
    change, sweeps = np.inf, 0
    while change > tol:
        change = _sweep_throws_diagonal(tab0, tab1, probs, y, level_start, width, psplit)
        sweeps += 1
    residual = float(_residual_throws_places(tab0, tab1, probs, y, parts))
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
