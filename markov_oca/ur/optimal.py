"""Optimal play of the Royal Game of Ur by value iteration, layer by layer.

``V[s]`` is the chance that the side to move in position ``s`` wins when both
sides play to win (a zero-sum game: what one side gains the other loses, so the
opponent's best is our worst). For a position that is not over::

    V[s] = sum over throws t of p_t * max over legal moves m of value(m)
    value(m) = V[succ]          when the mover throws again (a rosette),
             = 1 - V[succ]      otherwise (the successor is ranked from the opponent's side),
             = 1 or 0           when the move ends the game (the mover wins or not).

The pieces off the board never decrease, so positions are solved in layers of
pieces off, from the end backwards: a layer's successors lie in it or in layers
already final. Inside a layer (captures send pieces back, so it has cycles)
Gauss-Seidel sweeps run until no value changes by more than the tolerance; the
last change of every layer is reported. The work is done by
:func:`.layered.solve_layered`, which builds one layer's successors at a time
(the whole seven-piece game fits in a few GB); this module keeps the small
interface the rest of the package uses. The values are a numpy array that can
be saved with :func:`save_values` and memory-mapped back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from .kernel import bellman, moves
from .rules import UrRules
from .state import space_of
from .store import load_table, save_table


@dataclass
class OptimalSolution:
    """Values of every position under optimal play, and how they were found."""

    rules: UrRules
    values: np.ndarray  # float64, V[s] for every position of the space
    layer_residuals: list[float] = field(default_factory=list)
    sweeps: int = 0

    @property
    def residual(self) -> float:
        return max(self.layer_residuals, default=0.0)


@numba.njit(cache=True)
def _sweep(order, succ, events, n_moves, probs, terminal_value, is_terminal, v):
    """One Gauss-Seidel sweep over ``order``; returns the largest change."""
    worst = 0.0
    for k in range(order.shape[0]):
        s = order[k]
        if is_terminal[s]:
            new = terminal_value[s]
        else:
            new = bellman(succ, events, n_moves, probs, v, s)
        d = abs(new - v[s])
        if d > worst:
            worst = d
        v[s] = new
    return worst


def estimated_bytes(rules: UrRules) -> int:
    """Peak memory of :func:`solve_optimal`: the table and the largest layer's packed successors
    (:func:`.layered.estimated_bytes`)."""
    from .layered import estimated_bytes as layered_bytes

    return layered_bytes(rules)


def check_memory(rules: UrRules) -> None:
    from ..core.errors import TooLargeError
    from ..core.memory import available_memory

    need, avail = estimated_bytes(rules), available_memory()
    if need > avail:
        raise TooLargeError(
            f"{rules.name} with {rules.pieces} pieces: optimal values over {space_of(rules.pieces, rules.code).size:,} "
            f"positions need about {need / 2**30:.1f} GiB (the table and the largest layer's successors); "
            f"{avail / 2**30:.1f} GiB available (try --pieces {_largest_fitting(rules, avail)} or fewer)")


def _largest_fitting(rules: UrRules, avail: int) -> int:
    from dataclasses import replace

    k = rules.pieces
    while k > 1 and estimated_bytes(replace(rules, pieces=k)) > avail:
        k -= 1
    return k


def solve_optimal(rules: UrRules, tol: float = 1e-12, max_sweeps: int = 100_000) -> OptimalSolution:
    """Values of every position of ``rules`` under optimal play (see the module docstring).

    ``layer_residuals`` holds each layer's last sweep change, in the order the layers were solved;
    a solve that cannot fit is refused up front (:func:`estimated_bytes`).
    """
    from .layered import solve_layered

    check_memory(rules)
    lay = solve_layered(rules, tol=tol, max_sweeps=max_sweeps)
    return OptimalSolution(rules, lay.values, [s.change for s in lay.layers], lay.sweeps)


def solve_optimal_whole(rules: UrRules, tol: float = 1e-12, max_sweeps: int = 100_000) -> OptimalSolution:
    """The former solve: the whole move table held at once, plain Gauss-Seidel by total pieces off
    (kept to compare against; about 340 bytes a position)."""
    space = space_of(rules.pieces, rules.code)
    mv = moves(space, None, rules)
    pos = space.unrank_many(np.arange(space.size, dtype=np.int64))
    layer = pos.mine_off.astype(np.int64) + pos.their_off.astype(np.int64)
    terminal_value = np.where(mv.win > 0, 1.0, 0.0)
    v = np.zeros(space.size)
    v[mv.terminal] = terminal_value[mv.terminal]
    sol = OptimalSolution(rules, v)
    probs = np.asarray(mv.probs, np.float64)
    for total_off in range(int(layer.max()), -1, -1):
        order = np.flatnonzero(layer == total_off)[::-1].astype(np.int64)
        change = 1.0
        while change > tol:
            change = _sweep(order, mv.succ, mv.events, mv.n_moves, probs, terminal_value, mv.terminal, v)
            sol.sweeps += 1
            if sol.sweeps > max_sweeps:
                raise RuntimeError(f"value iteration did not reach {tol} in {max_sweeps} sweeps")
        sol.layer_residuals.append(change)
    return sol


#: Save the values as ``.npy`` (:func:`.store.save_table`).
save_values = save_table
#: Load saved values, memory-mapped read-only (:func:`.store.load_table`).
load_values = load_table
