"""Each policy's moves in the forward push's places (:mod:`.pushorder`), built once for the push and the bound.

An entry is ``2 * place' + again`` (``again``: the same side throws again, a rosette), -1 the mover wins, -2 the
mover loses; a deterministic policy keeps one a throw in a fixed table (``NO_MOVE`` where the game is over),
``random`` every legal move in a packed one (:mod:`.storage`).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .kernel import AGAIN, GAME_OVER, MOVER_WINS, kernel_args, moves_kernel
from .layers import CHUNK
from .policy import POLICY_CODES, choice
from .rules import UrRules
from .state import UrSpace, space_of
from .storage import close_throw, put_entry

__all__ = ["push_tables", "tables_bytes"]


@numba.njit(cache=True, parallel=True)
def _count(code, succ, events, frm, n_moves, values):
    """Entries of each position of a chunk."""
    k, nt = n_moves.shape
    ne = np.zeros(k, np.int64)
    for i in prange(k):
        e = 0
        for t in range(nt):
            ch = choice(code, succ, events, frm, n_moves, values, i, t)
            e += n_moves[i, t] if ch < 0 else 1
        ne[i] = e
    return ne


@numba.njit(cache=True, parallel=True)
def _pack(code, succ, events, frm, n_moves, values, newpos, e_start, store, rows):
    """Write the moves of a chunk's positions into ``store`` at rows ``rows`` (entries from ``e_start``)."""
    k, nt = n_moves.shape
    for i in prange(k):
        e = e_start[i]
        r = rows[i]
        for t in range(nt):
            ch = choice(code, succ, events, frm, n_moves, values, i, t)
            used = 0
            for m in range(n_moves[i, t]):
                if ch >= 0 and m != ch:
                    continue
                ev = events[i, t, m]
                if ev & GAME_OVER:
                    put_entry(store, r, t, e, -1 if ev & MOVER_WINS else -2)
                else:
                    put_entry(store, r, t, e, 2 * newpos[succ[i, t, m]] + (1 if ev & AGAIN else 0))
                e += 1
                used += 1
            close_throw(store, r, t, used)


def _fixed_table(space: UrSpace, rules: UrRules, code: int, vals: np.ndarray, newpos: np.ndarray, tick):
    """A deterministic policy's moves: (S, throws) int32, filled in rank order."""
    S = space.size
    throws, ros, total, flags = kernel_args(rules)
    table = np.empty((S, len(throws)), np.int32)
    none = np.zeros(min(CHUNK, S), np.int64)
    for lo in range(0, S, CHUNK):
        ranks = np.arange(lo, min(lo + CHUNK, S), dtype=np.int64)
        succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, ranks, throws, ros, total, flags)
        _pack(code, succ, events, frm, n_moves, vals, newpos, none, table, newpos[lo:lo + ranks.size])
        tick(ranks.size)
    return table


def _packed_table(space: UrSpace, rules: UrRules, code: int, vals: np.ndarray, newpos: np.ndarray, tick):
    """Every legal move (``random``): ``(start, cnt, ent)``, filled in place order."""
    S = space.size
    throws, ros, total, flags = kernel_args(rules)
    order = np.empty(S, np.int32)
    order[newpos] = np.arange(S, dtype=np.int32)
    cnt = np.zeros((S, len(throws)), np.uint8)
    start_e = np.zeros(S + 1, np.int64)
    # one buffer, sized from the entries a position has on average (random_entries) and grown by a quarter when
    # they are more: no list of chunks joined at the end (twice the entries at once); what is left of the
    # buffer is never written, so it holds no memory
    ents = np.empty(S * random_entries(rules.pieces) + CHUNK * len(throws), np.int32)
    e_used = 0
    for lo in range(0, S, CHUNK):
        ranks = order[lo:lo + CHUNK].astype(np.int64)  # ranks, placed at lo..: fill in the push order
        succ, frm, events, n_moves, _o, _w = moves_kernel(space.tables, ranks, throws, ros, total, flags)
        ne = _count(code, succ, events, frm, n_moves, vals)
        e_start = np.zeros(ne.size + 1, np.int64)
        np.cumsum(ne, out=e_start[1:])
        need = e_used + int(e_start[-1])
        if need > ents.size:
            grown = np.empty(max(need, ents.size + ents.size // 4), np.int32)
            grown[:e_used] = ents[:e_used]
            ents = grown
        _pack(code, succ, events, frm, n_moves, vals, newpos, e_start, (start_e, cnt, ents[e_used:need]),
              np.arange(lo, lo + ranks.size, dtype=np.int64))
        start_e[lo:lo + ranks.size] = e_start[:-1] + e_used
        e_used = need
        tick(ranks.size)
    start_e[S] = e_used
    del order
    return start_e, cnt, ents[:e_used]


def push_tables(space: UrSpace, rules: UrRules, codes, vals: np.ndarray, newpos: np.ndarray, bar):
    """Each policy's moves in the push's places: a fixed ``(S, throws)`` int32 table for a deterministic policy,
    a packed ``(starts, counts, entries)`` for ``random``; and the number of entries.

    Parameters
    ----------
    space : UrSpace
        The ranked positions.
    rules : UrRules
        The game.
    codes : sequence of int
        The policies (:data:`.policy.POLICY_CODES`), light's first.
    vals : numpy.ndarray
        The optimal values (read when a side plays ``optimal``).
    newpos : numpy.ndarray
        Each rank's place (:func:`.pushorder.push_placement`).
    bar : progress bar
        Where the build's progress goes.
    """
    tables = []
    entries = 0
    task = bar.add_task("policy moves for the length distribution", total=space.size * len(codes))

    def tick(k):
        bar.update(task, advance=k)

    for code in codes:
        if code != POLICY_CODES["random"]:
            tables.append(_fixed_table(space, rules, code, vals, newpos, tick))
            entries += tables[-1].size
        else:
            tables.append(_packed_table(space, rules, code, vals, newpos, tick))
            entries += tables[-1][2].size
    return tables, entries


def random_entries(pieces: int) -> int:
    """Entries a position of a ``random`` side's packed moves has on average, rounded up: every legal move of
    every throw (Bell's path: 9.5, 11.2 and 12.6 at three, four and five pieces)."""
    return 7 + 3 * pieces // 2


def tables_bytes(rules: UrRules, light: str, dark: str) -> tuple[int, int]:
    """(the policies' moves of :func:`push_tables`, the build's maps beside them), in bytes: a deterministic
    policy 4 bytes a position and throw, ``random`` a start, a count a throw and :func:`random_entries` entries
    a position."""
    S = space_of(rules.pieces, rules.code).size
    nt = len(rules.throws)
    codes = {light, dark}
    tables = sum(S * nt * 4 if c != "random" else S * (8 + nt + random_entries(rules.pieces) * 4) for c in codes)
    build = S * (4 + 1) + (S * 4 if "random" in codes else 0) + CHUNK * nt * 7 * 8
    return tables, build
