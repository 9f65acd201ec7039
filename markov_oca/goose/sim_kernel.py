"""The simulator's kernel: whole goose games played from the flattened rules (:mod:`.goose_flat`).

:func:`_play_range` plays a range of a batch's games without the GIL (a pool of
threads plays the ranges); each game draws from its own SplitMix64 stream
(:mod:`.splitmix`); :func:`_play_one` plays one game, a turn step by step as
the documentation's page on the rules lists them (waiting, turns to miss, the throw, the first throw, bounce, effects,
occupancy, finishing).
"""

from __future__ import annotations

import numba
import numpy as np

from .sim_flat import (
    AGAIN,
    DICE_COUNT,
    DICE_FACES,
    GOOSE,
    GOOSE_NEXT,
    GOOSE_REPEAT,
    JUMP,
    MISS,
    NEXT_GOOSE,
    O_BACKWARD,
    O_FT_EFFECT,
    O_GOAL,
    O_KEEPS,
    O_OCCUPANCY,
    O_OVERSHOOT,
    O_UNTIL,
    OCC_MOVER,
    OCC_OCCUPANT,
    UNFINISHED,
    UNTIL_FIRST,
    WAIT,
    move_to_jit,
)
from .splitmix import GAME_STRIDE, draw, mix

LOOPED = -2  # a chain of effects longer than the board allows: an unvalidated rule set


@numba.njit(cache=True, inline="always")
def _next_seat(seat, players, fin_mask):
    """The next seat still in the game (``fin_mask`` has a bit per finished seat)."""
    k = seat
    for _ in range(players):
        k += 1
        if k == players:  # not a modulo: an integer division costs more than the rest of a turn's bookkeeping
            k = 0
        if not (fin_mask >> k) & 1:
            return k
    return seat


# _play_one keeps the whole turn in one function on purpose: an array handed to a helper in the hot loop
# costs an atomic reference count per use, which was a third of the time per turn (measured), and inlining
# the helper (``inline="always"``) does not take that away (measured again: the turn in named inline steps
# took 1.5 times as long). Helpers take scalars only (:func:`~.splitmix.draw`, :data:`~.goose_flat.move_to_jit`).


@numba.njit(cache=True)
def _play_one(state, stamp_id, players, turn_limit, sq, opt, ft_faces, ft_target,
              pos, skip, wait, faces, path, stamp, counts):
    """One game from the start; returns ``(outcome, turns, throws)`` and counts its landings.

    ``state`` is the game's SplitMix64 counter. ``stamp[seat, q] == stamp_id``
    marks a square this game's seat already landed on, so ``counts`` grows by
    one per game and square, not per landing. ``pos``, ``skip``, ``wait``,
    ``faces`` and ``path`` are scratch space.
    """
    goal = opt[O_GOAL]
    until = opt[O_UNTIL]
    overshoot = opt[O_OVERSHOOT]
    occupancy = opt[O_OCCUPANCY]
    backward = opt[O_BACKWARD] != 0
    ft_effect = opt[O_FT_EFFECT] != 0
    keeps = opt[O_KEEPS] != 0
    n_ft = ft_target.shape[0]
    cap = 2 * (goal + 1)  # a loop-free chain of effects visits each (square, direction) once
    for k in range(players):
        pos[k] = 0
        skip[k] = 0
        wait[k] = False
    fin_mask = 0
    spare = np.uint64(0)
    seat = 0
    again = False  # the player to move throws again within the same turn
    turns = 0
    throws = 0
    left = players
    while True:
        if not again:
            if turns >= turn_limit:
                return UNFINISHED, turns, throws
            turns += 1
        # A waiting player, or one with turns to miss, passes the turn.
        if wait[seat] or skip[seat] > 0:
            if skip[seat] > 0:
                skip[seat] -= 1
            if wait[seat]:
                stuck = True
                for k in range(players):
                    if not (fin_mask >> k) & 1 and not wait[k]:
                        stuck = False
                        break
                if stuck:
                    return UNFINISHED, turns, throws  # nobody can ever move again: deadlock
            seat = _next_seat(seat, players, fin_mask)
            continue

        # Step 3: the throw. Two dice per 64-bit draw.
        origin = pos[seat]
        throws += 1
        count = sq[origin, DICE_COUNT]
        n_faces = np.uint64(sq[origin, DICE_FACES])
        first = origin == 0 and n_ft > 0
        total = 0
        for d in range(count):
            face, state, spare = draw(state, spare, n_faces)
            total += face
            if first:
                faces[d] = face
        target = -1
        if first:
            # Step 4: faces high to low, as the first-throw table spells them.
            for i in range(1, count):
                v = faces[i]
                j = i - 1
                while j >= 0 and faces[j] < v:
                    faces[j + 1] = faces[j]
                    j -= 1
                faces[j + 1] = v
            for r in range(n_ft):
                same = True
                for d in range(count):
                    if ft_faces[r, d] != faces[d]:
                        same = False
                        break
                if same:
                    target = ft_target[r]
                    break

        # Steps 4-6: where the throw takes the piece; path[:n] are the squares whose effect applies.
        moved = True
        new_skip = 0
        new_wait = False
        new_again = False
        n = 0
        direction = 1
        if target >= 0 and (not ft_effect or target == 0 or target == goal):
            q = target  # placed by the first-throw rule; by default its square does nothing
            path[0] = q
            n = 1
        else:
            if target >= 0:
                q = target
            else:
                q, direction, moved = move_to_jit(origin + total, 1, goal, overshoot, origin)
            while moved:
                if n >= cap:
                    return LOOPED, turns, throws
                path[n] = q
                n += 1
                if q == goal:
                    break
                new_skip += sq[q, MISS]
                new_again = new_again or sq[q, AGAIN] != 0
                new_wait = new_wait or sq[q, WAIT] != 0
                kind = sq[q, GOOSE]
                if kind == GOOSE_REPEAT:
                    # Forward by the same total, unless the piece came back by a bounce and
                    # goose_after_bounce keeps its direction of travel.
                    step = -total if (direction < 0 and backward) else total
                    nq, direction, on = move_to_jit(q + step, 1 if step > 0 else -1, goal, overshoot, q)
                    if not on:
                        break  # the repeated move would overshoot: the piece stays on the goose
                    q = nq
                elif kind == GOOSE_NEXT:
                    # The next goose is reached (a landing) but its own effect is not applied.
                    q = sq[q, NEXT_GOOSE]
                    path[n] = q
                    n += 1
                    break
                elif sq[q, JUMP] >= 0:
                    q = sq[q, JUMP]
                    direction = 1
                else:
                    break
            new_again = new_again and not new_wait and new_skip == 0
        for i in range(n):
            # Branch-free: whether this game already landed here is a coin flip to the CPU.
            p = path[i]
            counts[seat, p] += stamp[seat, p] != stamp_id
            stamp[seat, p] = stamp_id

        # Step 9: finishing.
        if q == goal:
            if until == UNTIL_FIRST:
                return seat, turns, throws
            fin_mask |= 1 << seat
            pos[seat] = goal
            skip[seat] = 0
            wait[seat] = False
            left -= 1
            if left <= 1:
                for k in range(players):
                    if not (fin_mask >> k) & 1:
                        return k, turns, throws  # the one left is last
                return seat, turns, throws  # one player: finishing wins
            again = False
            seat = _next_seat(seat, players, fin_mask)
            continue
        pos[seat] = q
        skip[seat] = new_skip
        wait[seat] = new_wait
        again = new_again
        # Step 7: the square where the piece comes to rest, other than 0 and G.
        if moved and q != 0:
            for k in range(players):
                if k == seat or (fin_mask >> k) & 1 or pos[k] != q:
                    continue
                if occupancy == OCC_OCCUPANT:
                    pos[k] = origin  # to the mover's origin, no effect there
                    wait[k] = False
                    if not keeps:
                        skip[k] = 0
                elif occupancy == OCC_MOVER:
                    pos[seat] = origin  # the mover goes back, and gains nothing from the throw
                    skip[seat] = 0
                    wait[seat] = False
                    again = False
                    break
                elif wait[k]:
                    wait[k] = False  # released: stays there and throws on its next turn
                    skip[k] = 0
        if not again:
            seat = _next_seat(seat, players, fin_mask)


@numba.njit(cache=True, nogil=True)
def _play_range(first_game, lo, hi, base, players, turn_limit, sq, opt, ft_faces, ft_target,
                out_outcome, out_turns, out_throws, counts):
    """Games ``lo .. hi - 1`` of a batch whose game 0 is game number ``first_game`` of the run.

    Writes each game's outcome, turns and throws at its place in the batch, and
    adds to ``counts[seat, q]`` the games of this range in which the seat landed on ``q``.
    Runs without the GIL: the ranges of a batch are played by a pool of threads.
    """
    goal = opt[O_GOAL]
    pos = np.zeros(players, np.int64)
    skip = np.zeros(players, np.int64)
    wait = np.zeros(players, np.bool_)
    faces = np.zeros(max(6, ft_faces.shape[1]), np.int64)
    path = np.zeros(2 * goal + 4, np.int64)
    stamp = np.zeros((players, goal + 1), np.int64)
    for i in range(lo, hi):
        state = mix(base + np.uint64(first_game + i) * GAME_STRIDE)
        o, t, th = _play_one(state, i + 1, players, turn_limit, sq, opt, ft_faces, ft_target,
                             pos, skip, wait, faces, path, stamp, counts)
        out_outcome[i] = o
        out_turns[i] = t
        out_throws[i] = th
