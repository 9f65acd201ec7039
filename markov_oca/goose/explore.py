"""Breadth-first exploration and the writing of branches, for the joint chain and the one seen from the mover.

Both chains run the same passes of :mod:`~markov_oca.goose.kernel`, told apart
by its ``rotated`` flag: the successors of a slice of the queue on every core,
merged in order (the serial breadth-first order), then the branches of every
reachable state written into :class:`~markov_oca.goose.kernel.Branches`.
"""

from __future__ import annotations

import numpy as np

from ..core.progress import progress_bar
from .kernel import CHUNK, Branches, Tables, _merge, _successors, _successors_serial, _write

SLICE = 262_144  # queue entries expanded at a time


def explore(tb: Tables, start: int, full: int, rotated: bool, progress: bool, task: str) -> np.ndarray:
    """The ids reachable from ``start`` (of ``full`` ids), in breadth-first order, as int64.

    Parameters
    ----------
    tb:
        The model's tables.
    start:
        The first state's id (joint, or rotated with ``rotated``).
    full:
        How many ids there are.
    rotated:
        Whether the ids are rotated ones (seen from the mover).
    progress:
        A progress bar on stderr, showing ``task``.
    task:
        The progress bar's text.
    """
    seen = np.zeros(full, np.bool_)
    queue = np.empty(full, np.int64 if full >= 2**31 else np.int32)
    head = tail = 0
    with progress_bar(progress, "exploring states") as bar:
        task_id = bar.add_task(task, total=None)
        seen[start] = True
        queue[0] = start
        tail = 1
        out = np.empty((min(full, SLICE), tb.t_prob.shape[1] + 1), queue.dtype)
        while head < tail:
            hi = min(tail, head + out.shape[0])
            (_successors if hi - head > CHUNK else _successors_serial)(queue, head, hi, tb, rotated, out)
            tail = _merge(out, hi - head, seen, queue, tail)
            head = hi
            bar.update(task_id, completed=head, total=tail)
        del out
    del seen
    ids = queue[:tail].astype(np.int64)
    del queue
    return ids


def branch_arrays(model, n: int, *, rotated: bool) -> Branches:
    """Zeroed arrays for the branches of ``n`` rows of ``model``'s chain (joint, or seen from the mover).

    The narrowest integers that hold the numerators and the stakes (bytes per state matter here); the
    joint chain keeps every stake, the rotated one only when the rules have stakes.
    """
    J = model.board.branches + 1
    has_stakes = not rotated or bool(model.board.stake.any())
    stake_type = np.int16 if int(model.board.stake.max(initial=0)) * 2 < 2**15 else np.int32
    one = (1, J)
    return Branches(
        nxt=np.full((n, J), -1, np.int32),
        pnum=np.zeros((n, J), np.int16 if model.board.denominator < 2**15 else np.int32),
        shift=np.zeros((n, J) if rotated else one, np.int8),
        throw=np.zeros((n, J), np.bool_),
        stake=np.zeros((n, J) if has_stakes else one, stake_type),
        place=np.zeros((n, J) if model.rules.until == "last" else one, np.int8),
        turn_start=np.zeros(n, np.bool_),
        mover=np.full(1 if rotated else n, -1, np.int8),
        round_start=np.zeros(1 if rotated else n, np.bool_),
        lead=np.zeros(n if rotated else 1, np.int8),
        square=np.zeros(n if rotated else 1, np.int16),
    )


def write_branches(ids: np.ndarray, index: np.ndarray, tb: Tables, rotated: bool, br: Branches, denominator: int,
                   block: int, progress: bool) -> None:
    """Write the branches of every row of ``ids`` into ``br`` (``block`` rows at a time, for the progress bar),
    and the outcomes' rows: each outcome k (row ``ids.size + k``) goes to itself with all of ``denominator``."""
    n_states = ids.size
    with progress_bar(progress, "writing transitions") as bar:
        task = bar.add_task("writing transitions", total=n_states)
        for lo in range(0, n_states, block):
            hi = min(n_states, lo + block)
            _write(ids, index, n_states, tb, rotated, br, lo, hi)
            bar.update(task, completed=hi)
    for k in range(br.nxt.shape[0] - n_states):
        br.nxt[n_states + k, 0] = n_states + k
        br.pnum[n_states + k, 0] = denominator
