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

The same sweeps give the expected throws and turns from the start and each side's chance to win, with
certified bounds (:func:`sums_on_tables`, :func:`pair_sums`), for any pair of policies: a ``random`` side's
packed moves are read through the accessors of :mod:`.storage`, each move with its share of the throw.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

from ..core.progress import progress_bar
from .evaluate import evaluate_policies
from .policy import POLICY_CODES, deterministic, drop_pages, policy_codes
from .pushmoves import push_tables, tables_bytes
from .pushorder import diagonal_split, push_placement
from .rules import UrRules
from .state import space_of
from .storage import NO_MOVE, is_fixed, row_count, row_entry, row_first
from .sweepbounds import throws_ceiling

__all__ = ["TableSums", "ThrowsBound", "bound_on_tables", "check_pair_sums_memory", "pair_sums", "pair_sums_bytes",
           "smaller_side", "sums_on_tables", "swept_bytes", "throws_bound"]

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


#: What a sweep does with the chance to win (``win``): not swept; the mover's chance (one row serves both sides);
#: a given side's chance at every place, the places where that side moves (:data:`MINE`) or its opponent does
#: (:data:`THEIRS`), with ``g = x + P g``, the chance summed over the throws to come, swept beside it.
NONE, MOVER, MINE, THEIRS = 0, 1, 2, 3
#: A side's chance below this is checked by its absolute residual, above by its residual relative to itself (here,
#: beside the kernels that read it: numba freezes a global when it compiles).
TINY = 1e-280


@numba.njit(cache=True, inline="always")
def _sums_at(tab, probs, y, yo, z, zo, w, wo, g, go, s, turns, win):
    """``(1 + sum_t probs[t] y'(successor), 1 + sum_t probs[t] z'(successor), sum_t probs[t] w'(successor),
    sum_t probs[t] g'(successor))`` at place ``s`` of the store ``tab`` (fixed or packed: :mod:`.storage`; a
    throw's moves share its chance): ``y``/``z``/``w``/``g`` the mover's rows (a rosette's successor, whose turn
    is this one: its turns less one), ``yo``/``zo``/``wo``/``go`` the opponent's (with ``win`` :data:`MOVER` the
    opponent's chance is the mover's loss; with :data:`MINE` or :data:`THEIRS` both rows hold one side's
    chance); zeros where the game is over. ``z`` is read only with ``turns``, ``w`` only with ``win``, ``g``
    only with :data:`MINE` or :data:`THEIRS`."""
    ny = 1.0
    nz = 1.0
    nw = 0.0
    ng = 0.0
    over = 0
    e = row_first(tab, s)
    for t in range(probs.shape[0]):
        k = row_count(tab, s, t)
        if k == 0:
            over += 1
            continue
        p = probs[t] / k
        for _ in range(k):
            c = row_entry(tab, s, t, e)
            e += 1
            if c >= 0:
                if c & 1:
                    ny += p * y[c >> 1]
                    if turns:
                        nz += p * (z[c >> 1] - 1.0)
                    if win != NONE:
                        nw += p * w[c >> 1]
                        if win != MOVER:
                            ng += p * g[c >> 1]
                else:
                    ny += p * yo[c >> 1]
                    if turns:
                        nz += p * zo[c >> 1]
                    if win == MOVER:
                        nw += p * (1.0 - wo[c >> 1])
                    elif win != NONE:
                        nw += p * wo[c >> 1]
                        ng += p * go[c >> 1]
            elif c == NO_MOVE:
                over += 1
            elif c == -1:  # the mover wins
                if win == MOVER or win == MINE:
                    nw += p
            elif win == THEIRS:  # -2: the mover loses
                nw += p
    if over == probs.shape[0]:
        return 0.0, 0.0, 0.0, 0.0
    return ny, nz, nw, ng


@numba.njit(cache=True, inline="always")
def _sweep_side(tab, probs, ys, yo, zs, zo, ws, wo, gs, go, turns, win, lo, hi, d):
    """Sweep the places ``lo..hi`` of one side; the largest change, from ``d`` (relative to the throws to come
    for the throws and turns, absolute for the mover's chance, relative for a side's)."""
    for s in range(lo, hi):
        ny, nz, nw, ng = _sums_at(tab, probs, ys, yo, zs, zo, ws, wo, gs, go, s, turns, win)
        if ny > 0.0:
            c = abs(ny - ys[s]) / ny
            if turns:
                c = max(c, abs(nz - zs[s]) / ny)
            if win == MOVER or (win != NONE and nw <= TINY):
                c = max(c, abs(nw - ws[s]))
            elif win != NONE:
                c = max(c, abs(nw - ws[s]) / nw)
            if c > d:
                d = c
        ys[s] = ny
        if turns:
            zs[s] = nz
        if win != NONE:
            ws[s] = nw
            if win != MOVER:
                gs[s] = ng + nw
    return d


@numba.njit(cache=True, inline="always")
def _sweep_level(tab0, tab1, probs, y, z, x, g, turns, win0, win1, lo, hi, d):
    """Sweep the places ``lo..hi`` of each side (one array row a side; one row when both play alike)."""
    last = y.shape[0] - 1
    d = _sweep_side(tab0, probs, y[0], y[last], z[0], z[last], x[0], x[last], g[0], g[last], turns, win0, lo, hi, d)
    if last:
        d = _sweep_side(tab1, probs, y[1], y[0], z[1], z[0], x[1], x[0], g[1], g[0], turns, win1, lo, hi, d)
    return d


@numba.njit(cache=True, parallel=True)
def _sweep_diagonal(tab0, tab1, probs, y, z, x, g, turns, win0, win1, lvl, width, psplit):
    """One Gauss-Seidel sweep of the throws to come, ``y[side, place]`` (with ``turns`` the turns, ``z``; with
    ``win0``/``win1`` each row's chance to win, ``x``, and with a side's chance ``g``), diagonal by diagonal
    from the last; the largest change."""
    parts = psplit.shape[1] - 1
    worst = np.zeros(parts)
    for T in range(2 * width - 2, -1, -1):
        for part in prange(parts):
            d = worst[part]
            for p in range(psplit[T, part], psplit[T, part + 1]):
                for mirror in range(2 if 2 * p < T else 1):  # (p, q) then (q, p): a pass leads from one to the other
                    b = (T - p) * width + p if mirror else p * width + T - p
                    d = _sweep_level(tab0, tab1, probs, y, z, x, g, turns, win0, win1, lvl[b], lvl[b + 1], d)
            worst[part] = d
    return worst.max()


@numba.njit(cache=True, inline="always")
def _residual_side(tab, probs, ys, yo, zs, zo, ws, wo, gs, go, turns, win, lo, hi, r):
    """Raise ``r`` (the throws', the turns', the chance's absolute, the chance's relative and ``g``'s largest
    residual) by the places ``lo..hi`` of one side; a NaN is kept (no bound follows from it)."""
    for s in range(lo, hi):
        ny, nz, nw, ng = _sums_at(tab, probs, ys, yo, zs, zo, ws, wo, gs, go, s, turns, win)
        d = abs(ny - ys[s])
        if not d <= r[0]:
            r[0] = d
        if turns:
            d = abs(nz - zs[s])
            if not d <= r[1]:
                r[1] = d
        if win != NONE:
            d = abs(nw - ws[s])
            if win != MOVER and ws[s] > TINY:
                d = d / ws[s]
                if not d <= r[3]:
                    r[3] = d
            elif not d <= r[2]:
                r[2] = d
            if win != MOVER:
                d = abs(ng + ws[s] - gs[s])
                if not d <= r[4]:
                    r[4] = d


@numba.njit(cache=True)
def _residual_part(tab0, tab1, probs, y, z, x, g, turns, win0, win1, lo, hi, r):
    last = y.shape[0] - 1
    _residual_side(tab0, probs, y[0], y[last], z[0], z[last], x[0], x[last], g[0], g[last], turns, win0, lo, hi, r)
    if last:
        _residual_side(tab1, probs, y[1], y[0], z[1], z[0], x[1], x[0], g[1], g[0], turns, win1, lo, hi, r)


@numba.njit(cache=True, parallel=True)
def _residual_places(tab0, tab1, probs, y, z, x, g, turns, win0, win1, parts):
    """The largest ``|y - (1 + P y)|`` (and the turns', the chance's absolute and relative, and ``g``'s) over
    every place and side, nothing written."""
    S = y.shape[1]
    r = np.zeros((parts, 5))
    for part in prange(parts):
        _residual_part(tab0, tab1, probs, y, z, x, g, turns, win0, win1, part * S // parts, (part + 1) * S // parts,
                       r[part])
    out = np.zeros(5)
    for i in range(5):
        for part in range(parts):
            if not r[part, i] <= out[i]:
                out[i] = r[part, i]
    return out


@dataclass
class TableSums:
    """The expected throws and turns to come from the start (and with ``win`` light's chance to win), swept on
    the push's tables, with certified bounds (:func:`.sweepbounds.sums_bounds`)."""

    throws: float  # from the start (light to move, every piece in hand)
    turns: float
    largest: float  # the largest throws to come computed over every place and side
    residual: tuple[float, float, float]  # the largest |y - (1 + P y)|, the turns' and the chance's, absolute
    sweeps: int
    change: float  # the largest change of the last sweep (relative for the throws and turns)
    seconds: float
    throws_bound: float = INF  # certified bounds on ``throws`` and ``turns``
    turns_bound: float = INF
    ceiling: float = INF  # a certified bound on the throws to come from any position
    moves: int = 1  # the most moves a throw weighs (a ``random`` side: every piece's)
    win: float = float("nan")  # light's chance to win, swept with ``win``
    win_bound: float = INF
    win_range: tuple[float, float] = (0.0, 0.0)  # the smallest and largest chance computed (every place, side)
    side: int = -1  # the side whose chance was swept at every place (0 light, 1 dark), -1 the mover's
    chance_relative: float = 0.0  # with a side's chance: its largest residual relative to itself (chances > TINY)
    chance_sum: tuple[float, float, float] = (0.0, 0.0, 0.0)  # g from the start, its residual, its largest


def _sweeps(tab0, tab1, probs, y, z, x, g, turns, wins, level_start, width, psplit, tol, sweeps, change):
    """Sweep until the change is at most ``tol``, or has not fallen for :data:`STALL` sweeps (the rounding's
    floor: the bounds then say what was reached); (sweeps, last change)."""
    best, since = change, 0
    while change > tol and since < STALL:
        change = _sweep_diagonal(tab0, tab1, probs, y, z, x, g, turns, wins[0], wins[1], level_start, width, psplit)
        sweeps += 1
        if change < best:
            best, since = change, 0
        else:
            since += 1
    return sweeps, change


def _row_modes(win: bool, rows: int, side: int) -> tuple[int, int]:
    """Each row's chance mode: none, the mover's (one row, or ``side`` -1), or ``side``'s at every place."""
    if not win:
        return NONE, NONE
    if rows == 1 or side < 0:
        return MOVER, MOVER
    return (MINE, THEIRS) if side == 0 else (THEIRS, MINE)


def swept_bytes(places: int, rows: int, turns: bool, win: bool) -> int:
    """Bytes of :func:`sums_on_tables`' arrays: the throws (and ``turns``, the turns; ``win``, the chance) in
    float64 a row, and with two rows and ``win`` the chance summed over the throws to come (float32)."""
    arrays = 1 + int(turns) + int(win)
    return places * rows * (8 * arrays + (4 if win and rows == 2 else 0))


def sums_on_tables(tables, probs: np.ndarray, level_start: np.ndarray, width: int, *, start: int,
                   tol: float = SUMS_TOL, precision: float | None = None, parts: int | None = None,
                   win: bool = False, turns: bool = True, moves: int = 1, side: int = 0, bar=None) -> TableSums:
    """The expected throws and turns to come from place ``start`` (light to move) under the push's tables
    (:func:`.pushmoves.push_tables`; fixed or packed), Gauss-Seidel sweeps in the push's diagonal order to a
    change of ``tol`` (relative to the throws to come), with certified bounds; swept on, a hundred times
    smaller each time down to :data:`SUMS_FLOOR`, while a bound misses ``precision`` (relative).

    With two policies each side's chance is swept as one side's chance at every place, bounded relative to
    itself (:func:`.sweepbounds.sums_bounds`): a side that rarely wins keeps a small relative bound. That side
    is ``side`` first, and the other when its chance is the smaller (``1 - x`` is the other's chance, and
    ``y - g`` its sum).

    Parameters
    ----------
    tables : list
        Each side's table (one when both play the same policy).
    probs : numpy.ndarray
        The throws' probabilities.
    level_start : numpy.ndarray
        The first place of each level (:func:`.pushorder.push_placement`).
    width : int
        Pips a side, plus one.
    start : int
        The place the game starts from.
    tol : float
        Change of the last sweep.
    precision : float, optional
        The relative bound to meet.
    parts : int, optional
        Threads; numba's count by default.
    win : bool
        Also sweep each side's chance to win (``TableSums.win``: light's from the start).
    turns : bool
        Sweep the turns (else ``TableSums.turns`` is 0, its bound infinite).
    moves : int
        The most moves a throw weighs (:func:`.sweepbounds.moves_a_throw`), for the rounding.
    side : int
        With two policies, the side whose chance is swept first (the one expected to be the smaller).
    """
    from .sweepbounds import sums_bounds

    t0 = time.perf_counter()
    parts = int(parts or numba.get_num_threads())
    tab0, tab1 = tables[0], tables[-1]
    rows = len(tables)
    S = _places(tab0)
    y = np.zeros((rows, S))
    z = np.zeros((rows, S if turns else 0))
    x = np.zeros((rows, S if win else 0))
    side = int(side) if win and rows == 2 else -1
    g = np.zeros((rows, S if side >= 0 else 0), np.float32)
    psplit = diagonal_split(level_start, width, parts)
    what = ("each side's chance, " if win else "") + "the expected throws" + (" and turns" if turns else "")
    task = bar.add_task(f"{what}, swept", total=None) if bar is not None else None
    sweeps, change, flipped = 0, np.inf, False
    while True:
        wins = _row_modes(win, rows, side)
        sweeps, change = _sweeps(tab0, tab1, probs, y, z, x, g, turns, wins, level_start, width, psplit, tol,
                                 sweeps, change)
        r = _residual_places(tab0, tab1, probs, y, z, x, g, turns, wins[0], wins[1], parts)
        mine = float(x[0, start]) if win else float("nan")
        out = TableSums(float(y[0, start]), float(z[0, start]) if turns else 0.0, float(y.max(initial=0.0)),
                        (float(r[0]), float(r[1]), float(r[2])), sweeps, float(change), 0.0, moves=moves,
                        win=1.0 - mine if side == 1 else mine,
                        win_range=(float(x.min(initial=0.0)), float(x.max(initial=0.0))), side=side,
                        chance_relative=float(r[3]),
                        chance_sum=(float(g[0, start]) if side >= 0 else 0.0, float(r[4]),
                                    float(max(g.max(initial=0.0), -g.min(initial=0.0)))))
        sums_bounds(out, probs.shape[0])
        if not turns:
            out.turns_bound = INF
        if task is not None:
            bar.update(task, description=f"{what}: {sweeps} sweeps, relative bound "
                                         f"{out.throws_bound / max(out.throws, 1e-300):.1e}")
        good = precision is None or (out.throws_bound <= precision * abs(out.throws)
                                     and (not turns or out.turns_bound <= precision * abs(out.turns))
                                     and (not win or out.win_bound <= precision * min(out.win, 1.0 - out.win)))
        if good:
            break
        if side >= 0 and not flipped and mine > 0.5:  # the other side's chance is the smaller: sweep it instead
            np.subtract(1.0, x, out=x)  # in place: no temporary the size of the arrays
            np.maximum(x, 0.0, out=x)  # the bound takes every chance nonnegative
            np.subtract(y, g, out=g, casting="unsafe")
            np.maximum(g, 0.0, out=g)
            side, flipped, change = 1 - side, True, np.inf
            continue
        if tol <= SUMS_FLOOR:
            break
        tol = max(tol * 1e-2, SUMS_FLOOR)
    del y, z, x, g
    out.seconds = time.perf_counter() - t0
    return out


def smaller_side(codes) -> int:
    """The side whose chance is likely the smaller under the policy codes (:func:`.policy.policy_codes`: one code
    when both sides play alike): the one that does not play optimally against an optimal side, else light."""
    optimal = POLICY_CODES["optimal"]
    return 1 if len(codes) == 2 and codes[0] == optimal != codes[1] else 0


def _places(store) -> int:
    return store.shape[0] if is_fixed(store) else store[1].shape[0]


def bound_on_tables(tables, probs: np.ndarray, level_start: np.ndarray, width: int, tol: float,
                    parts: int, moves: int = 1) -> ThrowsBound:
    """:class:`ThrowsBound` from the push's tables (:func:`.pushmoves.push_tables`), the throws alone swept
    to a relative change of ``tol`` with ``parts`` threads (the other parameters as :func:`sums_on_tables`'s)."""
    t0 = time.perf_counter()
    tab0 = tables[0]
    tab1 = tables[-1]
    rows = len(tables)
    y = np.zeros((rows, _places(tab0)))
    z = np.zeros((rows, 0))
    g = np.zeros((rows, 0), np.float32)
    psplit = diagonal_split(level_start, width, parts)
    sweeps, _change = _sweeps(tab0, tab1, probs, y, z, z, g, False, (NONE, NONE), level_start, width, psplit, tol,
                              0, np.inf)
    residual = float(_residual_places(tab0, tab1, probs, y, z, z, g, False, NONE, NONE, parts)[0])
    top = float(y.max(initial=0.0))
    del y
    bound = throws_ceiling(top, residual, probs.shape[0], moves)
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


def pair_sums_bytes(rules: UrRules, light: str, dark: str, turns: bool = True) -> int:
    """Peak memory of :func:`pair_sums`: with ``turns`` the policies' moves and the build's maps
    (:func:`.pushmoves.tables_bytes`), or the moves and the swept arrays (:func:`swept_bytes`); without, the
    layered route's (:func:`.layersums.layered_sums_bytes`)."""
    if not turns:
        from .layersums import layered_sums_bytes

        return layered_sums_bytes(rules, light, dark)
    tables, build = tables_bytes(rules, light, dark)
    swept = swept_bytes(space_of(rules.pieces, rules.code).size, len({light, dark}), turns, True)
    return int(tables + max(swept, build) + 150 * 2**20)


def check_pair_sums_memory(rules: UrRules, light: str, dark: str, turns: bool = True) -> None:
    """Refuse (:class:`~markov_oca.errors.TooLargeError`) a :func:`pair_sums` that :func:`pair_sums_bytes` says
    cannot fit in the memory available."""
    from ..core.errors import TooLargeError
    from ..core.memory import available_memory, gib

    need, avail = pair_sums_bytes(rules, light, dark, turns), available_memory()
    if need > avail:
        raise TooLargeError(f"{rules.name} with {rules.pieces} pieces, {light} against {dark}: the swept "
                            f"evaluation needs about {gib(need)}; {gib(avail)} available")


def pair_sums(rules: UrRules, light: str = "optimal", dark: str = "optimal", values: np.ndarray | None = None, *,
              precision: float | None = None, turns: bool = True, parts: int | None = None,
              progress: bool = False) -> TableSums:
    """Each side's chance to win, the expected throws and turns from the start, under a pair of policies (any of
    :data:`.policy.POLICY_CODES`), swept on the push's moves (:func:`sums_on_tables` with ``win``) to the
    relative ``precision`` where the sweeps' rounding allows, with certified bounds; no length distribution.
    Without ``turns`` the turns are not swept (``TableSums.turns`` is then 0, unbounded), and the chances and
    throws are swept layer by layer instead (:func:`.layersums.layered_pair_sums`: a fraction of the memory,
    each layer swept to its rounding's floor, ``precision`` unused). The other parameters are
    :func:`throws_bound`'s.

    Raises
    ------
    TooLargeError
        The moves and the swept arrays (:func:`pair_sums_bytes`) would not fit in the memory available.
    """
    from .sweepbounds import moves_a_throw

    t0 = time.perf_counter()
    check_pair_sums_memory(rules, light, dark, turns)
    if not turns:
        from .layersums import layered_pair_sums

        return layered_pair_sums(rules, light, dark, values, parts=parts, progress=progress)
    codes = policy_codes(light, dark)
    if 2 in codes and values is None:
        raise ValueError("the optimal policy needs the optimal values")
    vals = np.asarray(values, np.float64) if values is not None else np.zeros(1)
    space = space_of(rules.pieces, rules.code)
    newpos, levels = push_placement(space, rules.pieces)
    start = int(newpos[space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)])
    with progress_bar(progress) as bar:
        tables, _entries = push_tables(space, rules, codes, vals, newpos, bar)
        del newpos
        if values is not None:
            drop_pages(values)
        out = sums_on_tables(tables, np.asarray(rules.throw_probabilities, np.float64), levels,
                             rules.off_square * rules.pieces + 1, start=start, precision=precision, parts=parts,
                             win=True, turns=turns, moves=moves_a_throw(rules, not deterministic(codes)),
                             side=smaller_side(codes), bar=bar)
    out.seconds = time.perf_counter() - t0
    return out
