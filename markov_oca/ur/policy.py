"""The policies the sweeps and the push play, by code, and the move each one picks.

``random`` plays every legal move with an equal share; ``greedy`` and ``optimal`` are deterministic: the
move of the highest score (:func:`choice`), the first among equals, as :func:`.chain.policy_weights`
picks it.
"""

from __future__ import annotations

import numba

from ..core.errors import RulesError
from .kernel import CAPTURE, GAME_OVER, MOVER_WINS, OFF, ROSETTE, move_value

__all__ = ["POLICY_CODES", "choice", "deterministic", "drop_pages", "policy_code", "policy_codes"]

#: Policies the sweeps know, by code.
POLICY_CODES = {"random": 0, "greedy": 1, "optimal": 2}


def policy_code(policy) -> int:
    """The code of ``policy`` (:data:`POLICY_CODES`); a :class:`~markov_oca.errors.RulesError` for another."""
    if not isinstance(policy, str) or policy not in POLICY_CODES:
        raise RulesError(f"unknown policy {policy!r} for the sweeps (policies: {', '.join(POLICY_CODES)})")
    return POLICY_CODES[policy]


def policy_codes(light: str, dark: str) -> list[int]:
    """The codes of a pair: one when both sides play the same policy (they then share their values)."""
    return [policy_code(light)] if light == dark else [policy_code(light), policy_code(dark)]


def deterministic(codes) -> bool:
    """Whether every policy of ``codes`` plays one move a throw."""
    return all(c != POLICY_CODES["random"] for c in codes)


@numba.njit(cache=True, inline="always")
def _greedy_score(ev, frm):
    sc = 0.0
    if ev & GAME_OVER and ev & MOVER_WINS:
        sc += 10_000.0
    if ev & CAPTURE:
        sc += 1_000.0
    if ev & ROSETTE:
        sc += 100.0
    if ev & OFF:
        sc += 50.0
    return sc + max(frm, 0)


@numba.njit(cache=True, inline="always")
def choice(code, succ, events, frm, n_moves, values, i, t):
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
            sc = _greedy_score(ev, frm[i, t, m])
        else:
            sc = move_value(ev, values, succ[i, t, m])
        if sc > best:
            best = sc
            arg = m
    return arg


def drop_pages(a) -> None:
    """Let the kernel take back the pages of a memory-mapped table read so far (it stays mapped)."""
    import mmap

    mm = getattr(a, "_mmap", None)
    if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        try:
            mm.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError):
            pass
