"""Simulated games of any goose-family rule set, played move by move from the rules.

This is the independent check of the goose chain: it reads a
:class:`~markov_oca.goose.rules.GooseRules` (RULES.md section 1 as options and
square effects) and plays concrete games with seeded dice, never touching the
compiled board (``goose/board.py``) or the joint kernel (``goose/model.py``).
Agreement between the two therefore tests the compiler, not a copy of it.

The rule set is flattened once into numpy arrays (:func:`flatten_goose`): per
square its effects and the dice thrown from it, the first-throw table and the
options as small integer codes. A numba kernel then plays a whole batch of
games, split into ranges that a pool of threads plays in parallel (the kernel
releases the GIL). Every game draws its dice from its own SplitMix64 stream,
seeded from ``(seed, game number)``, so a run is reproducible and does not
depend on the batch size or the thread count.
:func:`play_goose_python` plays one game of the same rules in plain Python: the
benchmark's baseline, and (fed the same stream through :func:`game_stream`) a
second reading that must agree with the kernel game for game.

What is counted, as the chain counts it (RULES.md, "What is counted"):

* a *turn* starts each time the turn comes to a player, a missed turn or a wait
  on a waiting square included; another throw stays in the same turn. This is
  the chain's ``turn_start`` (the mover is not throwing again), so the game's
  length in turns has the law of ``Chain.length_distribution``;
* a *throw* is one throw of the dice (the chain's ``throws`` branch reward);
* a *landing* of a seat on a square is every square whose effect one of its
  throws applies, intermediate squares of a chain included (goose to goose,
  bridge, maze, death to 0) and the square a first-throw rule places it on; a
  piece sent back by another or released from a waiting square does not land
  (``GooseModel.landing_events``);
* the *outcome* is the index in the chain's outcome names: ``"seat k wins"``,
  or with ``until = "last"`` and several players ``"seat k last"``, the one
  left on the board. A game not over after ``turn_limit`` turns is unfinished
  (outcome -1). A game where every player still in it waits on a waiting
  square can never move again (the chain's deadlock): it stops at once and is
  unfinished as well, exactly as it would be at the turn limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numba
import numpy as np

from ..analysis.sampling import SimSummary
from ..core.errors import RulesError
from ..core.progress import progress_bar
from ..goose.rules import GooseRules

#: Turns after which a game counts as unfinished. Games of the shipped boards for
#: 1 and 2 players are over within 1,200 turns but for a chance below 1e-12, so
#: only boards that may never end reach it (deadlocks stop at once).
DEFAULT_TURN_LIMIT = 10_000

UNFINISHED = -1  # outcome of a game not over after the turn limit, or deadlocked
_LOOPED = -2  # a chain of effects longer than the board allows: an unvalidated rule set

# Option codes.
UNTIL_FIRST, UNTIL_LAST = 0, 1
OVER_BOUNCE, OVER_STAY, OVER_FINISH = 0, 1, 2
OCC_NONE, OCC_OCCUPANT, OCC_MOVER = 0, 1, 2
GOOSE_NONE, GOOSE_REPEAT, GOOSE_NEXT = 0, 1, 2
_UNTIL = {"first": UNTIL_FIRST, "last": UNTIL_LAST}
_OVERSHOOT = {"bounce": OVER_BOUNCE, "stay": OVER_STAY, "finish": OVER_FINISH}
_OCCUPANCY = {"none": OCC_NONE, "occupant-returns": OCC_OCCUPANT, "mover-returns": OCC_MOVER}
_GOOSE = {None: GOOSE_NONE, "repeat": GOOSE_REPEAT, "next": GOOSE_NEXT}

# Columns of FlatGoose.squares, one row per square 0..G.
JUMP, GOOSE, NEXT_GOOSE, AGAIN, MISS, WAIT, STAKE, DICE_COUNT, DICE_FACES = range(9)
# Entries of FlatGoose.options.
O_GOAL, O_UNTIL, O_OVERSHOOT, O_OCCUPANCY, O_BACKWARD, O_FT_EFFECT, O_KEEPS = range(7)


@dataclass(frozen=True)
class FlatGoose:
    """A goose rule set as the arrays the simulator reads.

    ``squares[q]`` is square ``q``'s row: ``JUMP`` target (-1 for none),
    ``GOOSE`` kind (``GOOSE_NONE``/``REPEAT``/``NEXT``), ``NEXT_GOOSE`` (the
    next goose after ``q``, or G), ``AGAIN``, ``MISS`` turns, ``WAIT``,
    ``STAKE``, and the dice thrown from ``q`` (``DICE_COUNT`` of
    ``DICE_FACES`` faces). ``ft_faces[i]`` (faces high to low) from square 0
    goes to ``ft_target[i]``. ``options`` holds the codes at ``O_*``.
    """

    name: str
    goal: int
    squares: np.ndarray  # (G + 1, 9) int64
    ft_faces: np.ndarray  # (n, dice count at 0) int64
    ft_target: np.ndarray  # (n,) int64
    options: np.ndarray  # (7,) int64


def flatten_goose(rules: GooseRules) -> FlatGoose:
    """Flatten a rule set's squares, dice, first-throw table and options into arrays.

    ``waiting = "turns:K"`` needs nothing here: the loader already turned the
    waiting squares into squares that miss K turns.

    Parameters
    ----------
    rules:
        A loaded goose rule set.

    Returns
    -------
    FlatGoose

    Example
    -------
    >>> from markov_oca import api
    >>> flat = flatten_goose(api.load("oca-moderna"))
    >>> int(flat.squares[6, JUMP]), int(flat.squares[9, GOOSE]) == GOOSE_REPEAT
    (12, True)
    """
    goal = rules.goal
    sq = np.zeros((goal + 1, 9), np.int64)
    sq[:, JUMP] = -1
    gooses = rules.goose_squares()
    for q in range(goal + 1):
        s = rules.square(q)
        if s.jump is not None:
            sq[q, JUMP] = s.jump
        sq[q, GOOSE] = _GOOSE[s.goose]
        sq[q, NEXT_GOOSE] = next((g for g in gooses if g > q), goal)
        sq[q, AGAIN] = s.again
        sq[q, MISS] = s.miss
        sq[q, WAIT] = s.wait
        sq[q, STAKE] = s.stake
        # Nobody throws from G; its row repeats G - 1's dice to keep the table rectangular.
        d = rules.dice_at(min(q, goal - 1))
        sq[q, DICE_COUNT] = d.count
        sq[q, DICE_FACES] = d.faces
    count0 = rules.dice_at(0).count
    ft_faces = np.zeros((len(rules.first_throw), count0), np.int64)
    ft_target = np.zeros(len(rules.first_throw), np.int64)
    for i, (faces, target) in enumerate(rules.first_throw):
        ft_faces[i] = sorted(faces, reverse=True)
        ft_target[i] = target
    keeps = bool(rules.options.get("bumped_keeps_turns", False))
    opts = np.array([goal, _UNTIL[rules.until], _OVERSHOOT[rules.overshoot], _OCCUPANCY[rules.occupancy],
                     rules.goose_after_bounce == "backward", bool(rules.first_throw_effect), keeps], np.int64)
    return FlatGoose(rules.name, goal, sq, ft_faces, ft_target, opts)


def outcome_names(rules: GooseRules, players: int) -> list[str]:
    """The outcome names of a goose game, in the chain's order (``GooseModel.outcome_names``)."""
    if rules.until == "first" or players == 1:
        return [f"seat {k + 1} wins" for k in range(players)]
    return [f"seat {k + 1} last" for k in range(players)]


# ----------------------------------------------------------------------------- random numbers
#
# SplitMix64 (Steele, Lea and Flood 2014): a 64-bit counter stepped by the
# golden gamma and a strong mixer. Each game gets its own counter, the mix of
# (seed, game number), so games are independent of how they are batched or
# spread over threads. A die takes 32 bits (two dice per draw): face =
# 1 + (bits * faces) >> 32, whose bias is below faces / 2**32.

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GAME_STRIDE = np.uint64(0xD1B54A32D192ED03)
_LOW32 = np.uint64(0xFFFFFFFF)
_SPARE = np.uint64(1 << 32)  # marks a buffered half-draw, which may itself be 0
_M64 = (1 << 64) - 1


@numba.njit(cache=True, inline="always")
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _mix_py(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _seed_base(seed: int) -> int:
    return _mix_py(seed & _M64)


class SplitMix64:
    """The dice stream of one simulated game, in plain Python (what the kernel draws, bit for bit).

    Only ``randint(a, b)`` is offered (as :class:`random.Random` has it), which
    is all :func:`play_goose_python` draws.
    """

    def __init__(self, state: int):
        self.state = state & _M64
        self.spare = 0

    def randint(self, a: int, b: int) -> int:
        if self.spare:
            bits, self.spare = self.spare & 0xFFFFFFFF, 0
        else:
            self.state = (self.state + 0x9E3779B97F4A7C15) & _M64
            x = _mix_py(self.state)
            bits, self.spare = x & 0xFFFFFFFF, (x >> 32) | (1 << 32)
        return a + ((bits * (b - a + 1)) >> 32)


def game_stream(seed: int, game: int) -> SplitMix64:
    """The dice stream :func:`simulate_goose` uses for game number ``game`` (0-based) of ``seed``."""
    return SplitMix64(_mix_py((_seed_base(seed) + game * 0xD1B54A32D192ED03) & _M64))


# ----------------------------------------------------------------------------- the kernel


@numba.njit(cache=True, inline="always")
def _reflect(q, goal):
    while q > goal or q < 0:
        q = 2 * goal - q if q > goal else -q
    return q


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


# _play_one keeps the whole turn in one function on purpose: an array handed to a
# helper in the hot loop costs an atomic reference count per call, which was a
# third of the time per turn (measured). Helpers take scalars only.


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
        # RULES.md steps 1-2: a waiting player, or one with turns to miss, passes.
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
            if spare != np.uint64(0):
                bits = spare & _LOW32
                spare = np.uint64(0)
            else:
                state += _GAMMA
                x = _mix(state)
                bits = x & _LOW32
                spare = (x >> np.uint64(32)) | _SPARE
            face = np.int64((bits * n_faces) >> np.uint64(32)) + 1
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
                q = origin + total
                if q > goal:
                    if overshoot == OVER_STAY:
                        q = origin
                        moved = False
                    elif overshoot == OVER_FINISH:
                        q = goal
                    else:
                        q = _reflect(q, goal)
                        direction = -1
            while moved:
                if n >= cap:
                    return _LOOPED, turns, throws
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
                    nq = q + step
                    direction = 1 if step > 0 else -1
                    if nq > goal:
                        if overshoot == OVER_STAY:
                            break  # the repeated move would overshoot: the piece stays on the goose
                        if overshoot == OVER_FINISH:
                            nq = goal
                        else:
                            nq = _reflect(nq, goal)
                            direction = -1
                    elif nq < 0:
                        nq = _reflect(nq, goal)
                        direction = 1
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
        state = _mix(base + np.uint64(first_game + i) * _GAME_STRIDE)
        o, t, th = _play_one(state, i + 1, players, turn_limit, sq, opt, ft_faces, ft_target,
                             pos, skip, wait, faces, path, stamp, counts)
        out_outcome[i] = o
        out_turns[i] = t
        out_throws[i] = th


# ----------------------------------------------------------------------------- public


def _check(players: int, games: int, turn_limit: int, batch: int) -> None:
    for what, v, lo in (("players", players, 1), ("games", games, 0), ("turn_limit", turn_limit, 1),
                        ("batch", batch, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise RulesError(f"{what} must be a whole number of at least {lo}, got {v!r}")
    if players > 8:
        raise RulesError(f"players must be at most 8, got {players}")


def simulate_goose(rules: GooseRules, players: int, games: int, *, seed: int = 0, turn_limit: int | None = None,
                   batch: int = 100_000, on_batch: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None = None,
                   progress: bool = False) -> SimSummary:
    """Play ``games`` games of a goose rule set and count what happened.

    Parameters
    ----------
    rules:
        A loaded goose rule set (shipped or a user's board).
    players:
        Seats 1..``players``; seat 1 moves first.
    games:
        How many games to play.
    seed:
        Game number ``i`` of a seed always plays the same dice, whatever the
        batch size or the number of threads (see :func:`game_stream`).
    turn_limit:
        Turns after which a game counts as unfinished (default
        :data:`DEFAULT_TURN_LIMIT`). Deadlocks stop early and are unfinished too.
    batch:
        Games per batch: the memory used and how often ``on_batch`` and the
        progress bar hear of progress. A batch is played by
        ``numba.get_num_threads()`` threads (``NUMBA_NUM_THREADS``).
    on_batch:
        Called after each batch with per-game arrays: outcome index (-1
        unfinished), turns and throws.
    progress:
        A progress bar on stderr.

    Returns
    -------
    SimSummary
        Outcome counts, the length histogram (turns), throws, and
        ``landings[seat, square]`` (squares 0..G): games, unfinished ones
        included, in which that seat landed there at least once.

    Example
    -------
    >>> from markov_oca import api
    >>> s = simulate_goose(api.load("oca-moderna"), 1, 10_000, seed=1)
    >>> s.outcomes.tolist(), s.unfinished  # the chain says 0.4918 wins, 0.5082 deadlocked
    ([4954], 5046)
    """
    limit = DEFAULT_TURN_LIMIT if turn_limit is None else turn_limit
    _check(players, games, limit, batch)
    flat = flatten_goose(rules)
    summary = SimSummary(rules=rules.name, seats=[f"seat {k + 1}" for k in range(players)],
                         outcome_names=outcome_names(rules, players), turn_limit=limit, seed=seed)
    summary.landings = np.zeros((players, flat.goal + 1), np.int64)
    base = np.uint64(_seed_base(seed))
    # Ranges of games go to a pool of threads as they free up (the kernel drops the GIL), so a
    # core busy with other work slows its thread only; numba's prange splits work evenly up front.
    workers = max(1, numba.get_num_threads())
    t0 = time.perf_counter()
    with progress_bar(progress, "simulating") as bar, ThreadPoolExecutor(workers) as pool:
        task = bar.add_task(f"simulating {rules.name}, {players} player{'s' if players > 1 else ''}", total=games)
        done = 0
        while done < games:
            n = min(batch, games - done)
            outcome = np.empty(n, np.int32)
            turns = np.empty(n, np.int64)
            throws = np.empty(n, np.int64)
            step = max(1_000, -(-n // (8 * workers)))
            bounds = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
            counts = np.zeros((len(bounds), players, flat.goal + 1), np.int64)
            jobs = [pool.submit(_play_range, done, lo, hi, base, players, limit, flat.squares, flat.options,
                                flat.ft_faces, flat.ft_target, outcome, turns, throws, counts[c])
                    for c, (lo, hi) in enumerate(bounds)]
            for job in jobs:
                job.result()
            if (outcome == _LOOPED).any():
                raise RulesError("a chain of square effects loops; load rule sets with markov_oca.load",
                                 source=rules.source)
            # A deadlocked game stopped early, but it would still be running at the limit: the
            # rows handed on say so, and a results file read back keeps the same turn limit.
            turns[outcome < 0] = limit
            summary.add_batch(outcome, turns, throws, counts.sum(axis=0))
            if on_batch is not None:
                on_batch(outcome, turns, throws)
            done += n
            bar.update(task, completed=done)
    summary.elapsed = time.perf_counter() - t0
    return summary


class GameRecord(NamedTuple):
    """One game played by :func:`play_goose_python`."""

    outcome: int  # index in outcome_names(), -1 unfinished
    turns: int
    throws: int
    landed: tuple[frozenset[int], ...]  # per seat, the squares it landed on
    stakes: tuple[int, ...]  # per seat, stakes paid into the pot


class DiceSource(Protocol):
    """What :func:`play_goose_python` draws its dice from."""

    def randint(self, a: int, b: int) -> int: ...


def play_goose_python(rules: GooseRules | FlatGoose, players: int, rng: DiceSource,
                      turn_limit: int = DEFAULT_TURN_LIMIT) -> GameRecord:
    """One game in plain Python, with the same reading of the rules as the kernel.

    Parameters
    ----------
    rules:
        A rule set, or one already flattened (saves the flattening per game).
    players:
        Seats 1..``players``.
    rng:
        Anything with ``randint(1, faces)``: a :class:`random.Random`, or
        :func:`game_stream` to replay the kernel's game exactly.
    turn_limit:
        Turns after which the game is unfinished.

    Returns
    -------
    GameRecord

    Example
    -------
    >>> import random
    >>> from markov_oca import api
    >>> g = play_goose_python(api.load("oca-moderna"), 2, random.Random(3))
    >>> g.outcome in (-1, 0, 1) and g.throws <= g.turns
    True
    """
    flat = rules if isinstance(rules, FlatGoose) else flatten_goose(rules)
    sq = flat.squares.tolist()
    goal, until, overshoot, occupancy, backward, ft_effect, keeps = flat.options.tolist()
    first = {tuple(f): t for f, t in zip(flat.ft_faces.tolist(), flat.ft_target.tolist(), strict=True)}
    randint = rng.randint

    pos = [0] * players
    skip = [0] * players
    wait = [False] * players
    fin = [False] * players
    landed: list[set[int]] = [set() for _ in range(players)]
    stakes = [0] * players

    def next_seat(seat: int) -> int:
        for step in range(1, players + 1):
            k = (seat + step) % players
            if not fin[k]:
                return k
        return seat

    def record(outcome: int) -> GameRecord:
        return GameRecord(outcome, turns, throws, tuple(frozenset(s) for s in landed), tuple(stakes))

    seat = turns = throws = 0
    again = False
    while True:
        if not again:
            if turns >= turn_limit:
                return record(UNFINISHED)
            turns += 1
        if wait[seat] or skip[seat]:
            if skip[seat]:
                skip[seat] -= 1
            if wait[seat] and all(fin[k] or wait[k] for k in range(players)):
                return record(UNFINISHED)
            seat = next_seat(seat)
            continue
        origin = pos[seat]
        throws += 1
        row = sq[origin]
        faces = [randint(1, row[DICE_FACES]) for _ in range(row[DICE_COUNT])]
        total = sum(faces)
        target = first.get(tuple(sorted(faces, reverse=True)), -1) if origin == 0 else -1

        # Steps 4-6: where the throw takes the piece, and every square whose effect applies.
        path: list[int] = []
        moved, new_skip, new_wait, new_again = True, 0, False, False
        direction = 1
        if target >= 0 and (not ft_effect or target in (0, goal)):
            q = target
            path.append(q)
        else:
            if target >= 0:
                q = target
            else:
                q = origin + total
                if q > goal:
                    if overshoot == OVER_STAY:
                        q, moved = origin, False
                    elif overshoot == OVER_FINISH:
                        q = goal
                    else:
                        q, direction = _reflect_py(q, goal), -1
            while moved:
                if len(path) >= 2 * (goal + 1):
                    raise RulesError("a chain of square effects loops; load rule sets with markov_oca.load",
                                     source=flat.name)
                path.append(q)
                if q == goal:
                    break
                r = sq[q]
                new_skip += r[MISS]
                new_again = new_again or bool(r[AGAIN])
                new_wait = new_wait or bool(r[WAIT])
                stakes[seat] += r[STAKE]
                if r[GOOSE] == GOOSE_REPEAT:
                    step = total if (direction > 0 or not backward) else -total
                    nq, direction = q + step, (1 if step > 0 else -1)
                    if nq > goal:
                        if overshoot == OVER_STAY:
                            break
                        if overshoot == OVER_FINISH:
                            nq = goal
                        else:
                            nq, direction = _reflect_py(nq, goal), -1
                    elif nq < 0:
                        nq, direction = _reflect_py(nq, goal), 1
                    q = nq
                elif r[GOOSE] == GOOSE_NEXT:
                    q = r[NEXT_GOOSE]
                    path.append(q)
                    break
                elif r[JUMP] >= 0:
                    q, direction = r[JUMP], 1
                else:
                    break
            new_again = new_again and not new_wait and new_skip == 0
        landed[seat].update(path)

        if q == goal:
            if until == UNTIL_FIRST:
                return record(seat)
            fin[seat] = True
            pos[seat], skip[seat], wait[seat] = goal, 0, False
            rest = [k for k in range(players) if not fin[k]]
            if len(rest) <= 1:
                return record(rest[0] if rest else seat)
            again = False
            seat = next_seat(seat)
            continue
        pos[seat], skip[seat], wait[seat], again = q, new_skip, new_wait, new_again
        # Step 7: occupancy, or release from a waiting square.
        if moved and q != 0:
            for k in range(players):
                if k == seat or fin[k] or pos[k] != q:
                    continue
                if occupancy == OCC_OCCUPANT:
                    pos[k], wait[k] = origin, False
                    if not keeps:
                        skip[k] = 0
                elif occupancy == OCC_MOVER:
                    pos[seat], skip[seat], wait[seat], again = origin, 0, False, False
                    break
                elif wait[k]:
                    wait[k], skip[k] = False, 0
        if not again:
            seat = next_seat(seat)


def _reflect_py(q: int, goal: int) -> int:
    while q > goal or q < 0:
        q = 2 * goal - q if q > goal else -q
    return q


__all__ = ["DEFAULT_TURN_LIMIT", "FlatGoose", "GameRecord", "SplitMix64", "flatten_goose", "game_stream",
           "outcome_names", "play_goose_python", "simulate_goose"]
