"""The chain seen from the mover, built: its rows, their branches with seat shifts, and its structure.

See :mod:`~markov_oca.goose.rotated` for what a rotated state is. The states
are explored from the start and their branches written by the passes of
:mod:`~markov_oca.goose.explore` (the joint chain's, told ``rotated``); the rows
are numbered by rotated id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..analysis.chain import Chain, Structure
from ..core.errors import TooLargeError
from ..core.memory import BASE_BYTES, available_memory, gib
from ..linalg.solve import SolveReport, shifted_adjoint_solve
from .explore import branch_arrays, explore, write_branches
from .model import GooseModel


@dataclass
class RotatedChain:
    """A goose chain in branch form seen from the mover (see the module docstring).

    ``chain`` is the same branches as a plain :class:`Chain` (seat shifts left
    out, outcomes named from the mover): what does not depend on the seat
    (structure, length, the chance of ending) is asked of it.
    """

    model: GooseModel
    chain: Chain
    shift: np.ndarray  # (n, J) int8
    stake: np.ndarray  # (n, J) int16, or (1, J) when the rules have no stakes
    place: np.ndarray  # (n, J) int8, or (1, J) unless until = "last"
    lead: np.ndarray  # (n,) int8: finished seats just before the mover (a round starts with seat a <= lead)
    square: np.ndarray  # (n,) int16: the mover's square
    n_states: int

    @property
    def players(self) -> int:
        return self.model.players


def rotated_phases(model: GooseModel, states: int | None = None, transitions: int | None = None) -> dict[str, int]:
    """The bytes each phase of a rotated build and solve holds at its peak (interpreter excluded).

    Without ``states``, a quarter of the rotated ids are taken as reachable (a low
    guess, used only to refuse at once what cannot fit even then: 2-4 players reach
    64%, 50% and 38% of them on ``oca-moderna``).
    Per state: the branches (next int32, numerator int16, shift, throw, and
    stake/place when kept) and five small per-state arrays. The forward pass
    (:func:`~markov_oca.goose.forward.forward_pass`, taken unless ``until = "last"``) adds a copy of the
    branches for its parts (5 bytes a slot), three blocks of N columns and two
    vectors; the seat-shifted solve instead adds the split matrix of the adjoint
    (int32 + float64 + shift, 13 bytes a transition) and 14 work blocks of N
    columns, the length pass (beside it) three vectors. The certified bounds then solve one or two
    columns over the states (the split matrix again, and work vectors) beside the visits.
    """
    N = model.players
    full = model.n_local ** N
    J = model.board.branches + 1
    known = states is not None
    if states is None:
        states = full // 4 + 1
    if transitions is None:
        transitions = states * (J - 2)
    narrow = model.board.denominator < 2**15
    per_branch = 4 + (2 if narrow else 4) + 1 + 1 + (2 if model.board.stake.any() else 0) + \
        (1 if model.rules.until == "last" else 0)
    chain = states * (J * per_branch + 1 + 1 + 2 + 8 + 8)
    if model.rules.until != "last":
        # the forward pass (turns in seat order): the parts' copy of the branches (4 + 1 bytes a slot), the
        # visits, the last N turns and the residual's block (N columns each), two mass vectors
        solve = chain + states * (J * 5 + 2 * 8 + 3 * 8 * N)
    else:
        solve = chain + transitions * 13 + states * 14 * 8 * N + states * 3 * 8
    # the certified bounds (engine.certified.block_figures), after the solve: the visits block, four vectors, and
    # the forward column's system (its split matrix, 12 bytes a transition, a byte a slot of stop mask; two
    # columns, of expected steps and of the chance of ending, each with 14 work vectors and 4 of the block)
    bounds = chain + states * (8 * N + 4 * 8 + J + 2 * (14 + 4) * 8) + transitions * 12
    phases = {"explore": full * (1 + 4) + states * 8, "build": full * 4 + chain, "solve": solve}
    # counted once the states are known: the guess of a quarter of the ids overshoots some boards (16% of
    # oca-tradicional's at four players), and this phase doubles what it overshoots
    return phases | ({"bounds": bounds} if known else {})


def rotated_estimate(model: GooseModel, states: int | None = None, transitions: int | None = None) -> int:
    """The peak of a rotated build and solve in bytes, interpreter included."""
    return BASE_BYTES + max(rotated_phases(model, states, transitions).values())


def check_rotated_memory(model: GooseModel, states: int | None = None, avail: int | None = None) -> None:
    """Refuse, in one line with the estimate, a rotated chain that would not fit in ``avail`` bytes."""
    avail = available_memory() if avail is None else avail
    need = rotated_estimate(model, states)
    if need > avail:
        what = f"{states:,} reachable states seen from the mover" if states is not None else \
            f"{model.n_local ** model.players:,} ids seen from the mover"
        raise TooLargeError(f"{model.rules.name} with {model.players} players: {what}, about {gib(need)} to build "
                            f"and solve; {gib(avail)} available; beyond exact reach here: use simulate, or "
                            "crosscheck against a simulation")



def build_rotated(model: GooseModel, progress: bool = False, max_memory: int | None = None) -> RotatedChain:
    """Explore the rotated states from the start and write their branches, rows numbered by rotated id."""
    P, L = model.players, model.n_local
    full = L**P
    avail = available_memory() if max_memory is None else max_memory
    check_rotated_memory(model, None, avail)
    if full >= 2**31:
        raise TooLargeError(f"{model.rules.name} with {P} players: {full:,} ids seen from the mover (about "
                            f"{gib(rotated_estimate(model))} to build and solve), beyond the 32-bit ids of this "
                            "chain; use simulate, or crosscheck against a simulation")
    tb = model.tables()
    start = int(model.local.plain[0]) * sum(L**i for i in range(P))
    ids = explore(tb, start, full, True, progress, "exploring states seen from the mover")
    n_states = ids.size
    check_rotated_memory(model, n_states, avail)
    # Rows are numbered by rotated id (the mover's local state least significant): the successors of the
    # states sharing (l_1, l_2, ...) are the states (l_1, l_2, ..., x), so a push over the rows in order writes
    # along a few dozen sequential streams (the forward pass, :func:`~markov_oca.goose.forward.forward_pass`:
    # 0.11-0.14 s of CPU a turn on 4-player oca-moderna against 0.23-0.25 s in the race order). The solves
    # sweep in race order (``sweep_order``, :func:`_race_order`).
    ids.sort()
    race = _race_order(model, ids)
    start_row = int(np.searchsorted(ids, start))
    index = np.full(full, -1, np.int32)
    index[ids] = np.arange(n_states, dtype=np.int32)
    n = n_states + P
    br = branch_arrays(model, n, rotated=True)
    write_branches(ids, index, tb, True, br, model.board.denominator, 1_000_000, progress)
    del index
    names = [f"seat {k + 1} after the mover" if k else "the mover" for k in range(P)]
    chain = Chain(
        next=br.nxt, pnum=br.pnum, denom=model.board.denominator, init=start_row,
        outcomes={names[k]: n_states + k for k in range(P)}, players=P,
        mover=np.where(np.arange(n) < n_states, 0, -1).astype(np.int8),
        state_rewards={"turns": br.turn_start}, branch_rewards={"throws": br.throw},
        turn_start=br.turn_start, state_ids=ids,
        sweep_order=np.concatenate([race, np.arange(n_states, n)]).astype(np.int64),
    )
    return RotatedChain(model, chain, br.shift, br.stake, br.place, br.lead, br.square, n_states)


def _race_order(model: GooseModel, ids: np.ndarray) -> np.ndarray:
    """The rows (sorted rotated ``ids``) in race order: decreasing progress in buckets of 6 squares, successors
    first, then decreasing id."""
    P, L = model.players, model.n_local
    locs = np.empty((ids.size, P), np.int64)
    rest = ids.copy()
    for i in range(P):
        locs[:, i] = rest % L
        rest //= L
    del rest
    key = model.local.square[locs].sum(axis=1) // 6
    del locs
    return np.lexsort((-ids, -key))


@numba.njit(cache=True)
def _can_end(nxt, absorbing, order):
    """States from which some outcome can be reached (sweeps in ``order``, successors first, to a fixed point)."""
    n, J = nxt.shape
    ok = absorbing.copy()
    changed = True
    while changed:
        changed = False
        for s in order:
            if ok[s]:
                continue
            for j in range(J):
                t = nxt[s, j]
                if t < 0:
                    break
                if ok[t]:
                    ok[s] = True
                    changed = True
                    break
    return ok



def rotated_structure(rc: RotatedChain) -> Structure:
    """Outcomes, deadlock and transient states; the strongly connected classes only when some state
    cannot reach an outcome (otherwise there is no deadlock and nothing else to find)."""
    chain = rc.chain
    if "structure" in chain.__dict__:
        return chain.structure
    absorbing = np.zeros(chain.n, bool)
    absorbing[list(chain.outcomes.values())] = True
    ok = _can_end(chain.next, absorbing, chain.order())
    if ok.all():
        st = Structure(absorbing, np.zeros(chain.n, bool), ~absorbing, 0)
        chain.__dict__["structure"] = st
        return st
    return chain.structure


def visits_block(rc: RotatedChain) -> tuple[np.ndarray, SolveReport]:
    """Expected visits of every (state, seat to move) from the start: one shifted adjoint solve."""
    chain = rc.chain
    st = rotated_structure(rc)
    b = np.zeros((chain.n, rc.players))
    b[chain.init, 0] = 1.0
    return shifted_adjoint_solve(chain.next, chain.pnum, rc.shift, chain.denom, st.transient, chain.order(), b)

