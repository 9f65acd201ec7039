"""The optimal values of a whole Ur game, one layer of pieces off at a time.

The pieces off the board never go back, so a position with ``a`` of the mover's
pieces off and ``b`` of the opponent's can only lead to positions with the same
pair (``(a, b)`` or, seen from the other side, ``(b, a)``) or with one more piece
off. A *layer* is the unordered pair ``{a, b}``: the positions ``(a, b)`` and
``(b, a)`` together, the only cycles of the game (captures) stay inside it.
Layers are solved from the most pieces off down; when a layer is solved its
successors in the layers above are final. Under ``total-off`` a layer where one
side has more than half of the total off is decided: its values are set to
exactly 1 and 0 (:func:`decided_values`), not swept.

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
from .kernel import bellman, kernel_args, moves_kernel
from .layerpack import METHODS, PackedLayer, pack_layer, sweep_layer
from .layers import CHUNK, ORDERS, largest_layer, layer_members, layers
from .rules import UrRules
from .state import space_of, unrank_at
from .store import load_table, rules_identity, save_table

__all__ = [
    "CHUNK",
    "METHODS",
    "ORDERS",
    "LayerStats",
    "LayeredSolution",
    "PackedLayer",
    "bellman_residual",
    "decided_values",
    "estimated_bytes",
    "layer_members",
    "layers",
    "load_table",
    "pack_layer",
    "rules_identity",
    "save_table",
    "solve_layered",
    "sweep_layer",
    "terminal_values",
]

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


# ----------------------------------------------------------------------------- the positions that are over


@numba.njit(cache=True, parallel=True)
def _terminal_fill(tables, total, v, lo, hi):
    """v[s] = 1 where the mover has won, 0 where the opponent has, for positions lo..hi-1 that are over."""
    n = tables[0].shape[0] - 1
    cnt = 0
    for s in prange(lo, hi):
        p = unrank_at(tables, s)
        mo = p[3]
        to = p[6]
        if mo == n or to == n or (total > 0 and mo + to >= total):
            v[s] = 1.0 if mo > to else 0.0
            cnt += 1
    return cnt


@numba.njit(cache=True, parallel=True)
def _decided_fill(tables, members, need, out):
    """out[i] = 1 where position members[i]'s mover has ``need`` pieces off (sure to win), else 0 (sure to lose)."""
    for i in prange(members.shape[0]):
        p = unrank_at(tables, members[i])
        out[i] = 1.0 if p[3] >= need else 0.0


def decided_values(rules: UrRules, pair: tuple[int, int], members: np.ndarray) -> np.ndarray | None:
    """The exact values of layer ``pair`` when its winner is already decided, else ``None``.

    Under ``total-off`` a side with more than half of the total off wins whatever happens next, so
    every position of a layer where one side has that many is worth exactly 1 to that side and 0
    to the other. Setting them, instead of sweeping values that only tend to 1 and 0, makes every
    move there exactly equally good, so optimal play's first-move rule, not rounding, chooses.
    """
    need = rules.decided_off
    if not need or max(pair) < need:
        return None
    out = np.empty(members.size)
    _decided_fill(space_of(rules.pieces, rules.code).tables, members, np.int64(need), out)
    return out


def terminal_values(rules: UrRules, v: np.ndarray) -> int:
    """Write the value of every position that is over into ``v``; the number of such positions."""
    space = space_of(rules.pieces, rules.code)
    step = 1 << 24
    return sum(_terminal_fill(space.tables, np.int64(rules.end_total), v, lo, min(lo + step, space.size))
               for lo in range(0, space.size, step))


# ----------------------------------------------------------------------------- the whole solve


def estimated_bytes(rules: UrRules) -> int:
    """Peak memory of :func:`solve_layered`: the table, the rank-to-layer map, the largest layer packed."""
    space = space_of(rules.pieces, rules.code)
    largest = max((largest_layer(space, p) for p in layers(rules)), default=0)
    chunk = min(CHUNK, largest) * len(rules.throws) * 7 * 6
    return space.size * 12 + largest * BYTES_PER_LAYER_POSITION + chunk + 150 * 2**20


def check_memory(rules: UrRules) -> None:
    need, avail = estimated_bytes(rules), available_memory()
    if need > avail:
        raise TooLargeError(f"{rules.name} with {rules.pieces} pieces: the layered optimal solve needs about "
                            f"{gib(need)}; {gib(avail)} available")


def _manifest(rules: UrRules, tol: float, order: str, method: str) -> dict:
    return {"schema": "markov_oca.ur-layers/1", "game": rules_identity(rules), "tol": tol, "order": order,
            "method": method}


def _open_checkpoint(checkpoint: str | Path | None, rules: UrRules, tol: float, order: str,
                     method: str) -> Path | None:
    """The checkpoint directory, made and its manifest written, or checked against an earlier solve's."""
    if checkpoint is None:
        return None
    ck = Path(checkpoint)
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
    return ck


def _resume(path: Path | None, n: int) -> np.ndarray | None:
    """A finished layer's values kept in the checkpoint, or None."""
    if path is None or not path.exists():
        return None
    x = np.load(path)
    if x.shape != (n,):
        raise ValueError(f"{path}: {x.shape[0]} values for a layer of {n} positions")
    return x


def _solve_layer(space, rules, pair, members, flag, v, loc, probs, bar, *, tol, method, max_sweeps, parts):
    """Pack one layer's successors and sweep its values: (values, LayerStats)."""
    n = members.size
    task = bar.add_task(f"layer {pair}: {n:,} positions, building", total=n)
    t0 = time.perf_counter()
    loc[members] = np.arange(n, dtype=np.int32)
    packed = pack_layer(space, rules, members, flag, v, loc, tick=lambda k: bar.update(task, advance=k))
    loc[members] = -1
    t1 = time.perf_counter()
    x = np.full(n, 0.5)
    bar.update(task, completed=0, total=None, description=f"layer {pair}: {n:,} positions, sweeping")

    def tick(k, ch):
        bar.update(task, description=f"layer {pair}: {n:,} positions, sweep {k}, change {ch:.1e}")

    sweeps, change = sweep_layer(packed, probs, x, tol=tol, method=method, max_sweeps=max_sweeps, parts=parts,
                                 tick=tick)
    t2 = time.perf_counter()
    bar.update(task, visible=False)
    return x, LayerStats(pair, n, packed.ent.size, sweeps, change, t1 - t0, t2 - t1)


def solve_layered(rules: UrRules, *, tol: float = 1e-13, method: str = "pairs", order: str = "progress",
                  checkpoint: str | Path | None = None, residual: bool = False, progress: bool = False,
                  max_sweeps: int = 100_000, parts: int | None = None,
                  on_layer: Callable[[LayerStats], None] | None = None) -> LayeredSolution:
    """Optimal values of every position of ``rules``, layer by layer (see the module docstring).

    Parameters
    ----------
    rules : UrRules
        The game.
    tol : float
        The largest change of a layer's last sweep.
    method : str
        ``"pairs"`` (Gauss-Seidel, each position solved with its mirror), ``"gs"`` (plain
        Gauss-Seidel, in place) or ``"jacobi"`` (:data:`METHODS`).
    order : str
        The order a layer's positions are swept in (:data:`ORDERS`).
    checkpoint : str or Path, optional
        A directory; each finished layer is saved there, and layers found there (for the
        same rules, tolerance and order) are loaded instead of solved.
    residual : bool
        Run :func:`bellman_residual` over the finished table.
    progress : bool
        Show progress bars.
    max_sweeps : int
        Sweeps of a layer at most.
    parts : int, optional
        Threads; numba's count by default.
    on_layer : callable, optional
        Called with each solved layer's :class:`LayerStats`.

    Examples
    --------
    >>> from markov_oca.ur.rules import load_ur
    >>> from markov_oca.ur.state import UrSpace
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
    space = space_of(rules.pieces, rules.code)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    v = np.zeros(space.size)
    terminal_values(rules, v)
    ck = _open_checkpoint(checkpoint, rules, tol, order, method)
    loc = np.full(space.size, -1, np.int32)
    sol = LayeredSolution(rules, v, method=method, order=order, tol=tol)
    todo = layers(rules)
    with progress_bar(progress) as bar:
        overall = bar.add_task(f"{rules.name}, {rules.pieces} pieces: layers", total=len(todo))
        for pair in todo:
            members, flag = layer_members(space, pair, order, pairs=method == "pairs")
            path = ck / f"layer_{pair[0]}_{pair[1]}.npy" if ck is not None else None
            x = _resume(path, members.size)
            if x is not None:
                v[members] = x
                sol.layers.append(LayerStats(pair, members.size, 0, 0, 0.0, 0.0, 0.0, resumed=True))
                bar.update(overall, advance=1)
                continue
            x = decided_values(rules, pair, members)
            if x is not None:
                stats = LayerStats(pair, members.size, 0, 0, 0.0, 0.0, 0.0)
            else:
                x, stats = _solve_layer(space, rules, pair, members, flag, v, loc, probs, bar, tol=tol,
                                        method=method, max_sweeps=max_sweeps, parts=parts)
            v[members] = x
            if path is not None:
                save_table(x, path)
            sol.layers.append(stats)
            if on_layer is not None:
                on_layer(stats)
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
            new = bellman(succ, events, n_moves, probs, v, i)
        worst[i] = abs(new - v[idx[i]])
    return worst.max() if k else 0.0


def bellman_residual(rules: UrRules, values: np.ndarray, *, progress: bool = False, chunk: int = CHUNK) -> float:
    """max over every position of ``|B(values)[s] - values[s]|``, B the Bellman update, from the move kernel."""
    space = space_of(rules.pieces, rules.code)
    throws, ros, total, flags = kernel_args(rules)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    worst = 0.0
    with progress_bar(progress) as bar:
        task = bar.add_task("final Bellman pass", total=space.size)
        for lo in range(0, space.size, chunk):
            idx = np.arange(lo, min(lo + chunk, space.size), dtype=np.int64)
            succ, _frm, events, n_moves, over, win = moves_kernel(space.tables, idx, throws, ros, total, flags)
            worst = max(worst, float(_residual(succ, events, n_moves, over, win, probs, values, idx)))
            bar.update(task, advance=idx.size)
    return worst


def default_threads() -> int:
    return int(os.environ.get("NUMBA_NUM_THREADS", numba.get_num_threads()))
