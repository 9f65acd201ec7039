"""Simulated games of any goose-family rule set, played move by move from the rules.

This is the independent check of the goose chain: it reads a
:class:`~markov_oca.goose.rules.GooseRules` (the goose rules as options and
square effects, read as the documentation's page on the rules states them) and
plays concrete games with seeded dice, never touching the compiled board
(``goose/board.py``) or the joint kernel (``goose/model.py``).
Agreement between the two therefore tests the compiler, not a copy of it.

The rule set is flattened once into numpy arrays (:func:`flatten_goose`, in
:mod:`.goose_flat`): per square its effects and the dice thrown from it, the
first-throw table and the options as small integer codes. A numba kernel
(:mod:`.goose_kernel`) then plays a whole batch of games, split into ranges that
a pool of threads plays in parallel (the kernel releases the GIL). Every game
draws its dice from its own SplitMix64 stream (:mod:`.splitmix`), seeded from
``(seed, game number)``, so a run is reproducible and does not depend on the
batch size or the thread count. :func:`play_goose_python` (:mod:`.goose_python`)
plays one game of the same rules in plain Python: the benchmark's baseline, and
(fed the same stream through :func:`game_stream`) a second reading that must
agree with the kernel game for game.

What is counted, as the chain counts it:

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

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ..analysis.sampling import SimSummary, play_batches
from ..core.errors import RulesError
from ..core.progress import progress_bar
from .rules import GooseRules
from .sim_flat import DEFAULT_TURN_LIMIT, FlatGoose, flatten_goose, outcome_names
from .sim_kernel import LOOPED, _play_range
from .sim_python import GameRecord, play_goose_python
from .splitmix import SplitMix64, game_stream, seed_base

__all__ = ["DEFAULT_TURN_LIMIT", "FlatGoose", "GameRecord", "SplitMix64", "flatten_goose", "game_stream",
           "outcome_names", "play_goose_python", "simulate_goose"]


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

    Examples
    --------
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
    base = np.uint64(seed_base(seed))
    # Ranges of games go to a pool of threads as they free up (the kernel drops the GIL), so a
    # core busy with other work slows its thread only; numba's prange splits work evenly up front.
    workers = max(1, numba.get_num_threads())
    with progress_bar(progress, "simulating") as bar, ThreadPoolExecutor(workers) as pool:
        task = bar.add_task(f"simulating {rules.name}, {players} player{'s' if players > 1 else ''}", total=games)

        def play(done: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            outcome, turns, throws, counts = _play_batch(pool, workers, flat, players, limit, base, done, n)
            if (outcome == LOOPED).any():
                raise RulesError("a chain of square effects loops; load rule sets with markov_oca.load",
                                 source=rules.source)
            return outcome, turns, throws, counts

        return play_batches(summary, games, batch, play, on_batch, lambda done: bar.update(task, completed=done))


def _play_batch(pool: ThreadPoolExecutor, workers: int, flat: FlatGoose, players: int, limit: int, base: np.uint64,
                done: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Games ``done .. done + n - 1`` on the pool's threads, in ranges: per game the outcome, turns (the limit
    for an unfinished one) and throws, and per seat and square the games that landed there."""
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
    # A deadlocked game stopped early, but it would still be running at the limit: the
    # rows handed on say so, and a results file read back keeps the same turn limit.
    turns[outcome < 0] = limit
    return outcome, turns, throws, counts.sum(axis=0)
