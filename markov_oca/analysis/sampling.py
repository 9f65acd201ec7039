"""What a run of simulated games leaves behind: counts that stream.

Simulators play games in batches and add each batch into one
:class:`SimSummary`, so a million games need no more memory than a thousand:
the counts per outcome, the histogram of game length in turns, the sums of
throws, and (goose games) in how many games each seat landed on each square.
Per-game rows (winner, turns, throws) are handed to an optional callback per
batch, which is how ``markov-oca simulate --out games.csv`` writes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class SimSummary:
    """Counts over ``games`` simulated games of one rule set.

    ``outcomes`` uses the chain's own outcome names (``"seat 1 wins"``,
    ``"light wins"``...), in the order of ``Chain.outcomes``; a game not over
    after ``turn_limit`` turns is counted in ``unfinished`` instead.
    ``length[t]`` counts the finished games that lasted ``t`` turns (a turn
    is each time the turn comes to a player: a missed turn is a turn, another throw stays in it).
    ``landings[seat, square]`` counts the games in which that seat landed on
    that square at least once (None where the game has no such notion).
    """

    rules: str
    seats: list[str]
    outcome_names: list[str]
    turn_limit: int
    seed: int
    games: int = 0
    outcomes: np.ndarray = field(default=None)  # type: ignore[assignment]  # (n_outcomes,) int64
    unfinished: int = 0
    length: np.ndarray = field(default=None)  # type: ignore[assignment]  # (turn_limit + 1,) int64
    throws_sum: float = 0.0  # throws of the finished games
    throws_sumsq: float = 0.0
    landings: np.ndarray | None = None  # (seats, squares) int64
    elapsed: float = 0.0

    def __post_init__(self) -> None:
        if self.outcomes is None:
            self.outcomes = np.zeros(len(self.outcome_names), np.int64)
        if self.length is None:
            self.length = np.zeros(self.turn_limit + 1, np.int64)

    def add_batch(self, winner: np.ndarray, turns: np.ndarray, throws: np.ndarray,
                  landed: np.ndarray | None = None) -> None:
        """Add one batch: per game the outcome index (-1 unfinished), turns and throws played.

        ``landed`` is ``(games, seats, squares)`` bool, or already summed over games
        as ``(seats, squares)`` int counts.
        """
        winner = np.asarray(winner)
        done = winner >= 0
        self.games += int(winner.size)
        self.unfinished += int((~done).sum())
        self.outcomes += np.bincount(winner[done], minlength=len(self.outcome_names))[: len(self.outcome_names)]
        t = np.asarray(turns)[done]
        self.length += np.bincount(np.minimum(t, self.turn_limit), minlength=self.turn_limit + 1)
        th = np.asarray(throws, np.float64)[done]
        self.throws_sum += float(th.sum())
        self.throws_sumsq += float((th * th).sum())
        if landed is not None:
            counts = landed.sum(axis=0) if landed.ndim == 3 else landed
            self.landings = counts.astype(np.int64) if self.landings is None else self.landings + counts

    @property
    def finished(self) -> int:
        return self.games - self.unfinished

    def to_dict(self) -> dict:
        return {
            "rules": self.rules, "seats": self.seats, "games": self.games, "seed": self.seed,
            "turn_limit": self.turn_limit,
            "outcomes": {k: int(v) for k, v in zip(self.outcome_names, self.outcomes, strict=True)},
            "unfinished": self.unfinished,
            "mean_turns": float((np.arange(self.length.size) * self.length).sum() / max(self.finished, 1)),
            "mean_throws": self.throws_sum / max(self.finished, 1),
            "games_per_second": self.games / self.elapsed if self.elapsed else None,
        }


def play_batches(summary: SimSummary, games: int, batch: int,
                 play: Callable[[int, int], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]],
                 on_batch: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None, advance: Callable[[int], None],
                 ) -> SimSummary:
    """Play ``games`` games ``batch`` at a time into ``summary``, and time them (``summary.elapsed``).

    Parameters
    ----------
    summary:
        Where each batch is added.
    games, batch:
        How many games, and at most how many a batch.
    play:
        ``play(done, n)`` plays games ``done .. done + n - 1``: per game the outcome index (-1 unfinished),
        turns and throws, and the landings (as :meth:`SimSummary.add_batch` takes them) or None.
    on_batch:
        Called after each batch with its outcomes, turns and throws.
    advance:
        Told the games done so far after each batch (a progress bar).
    """
    t0 = time.perf_counter()
    done = 0
    while done < games:
        n = min(batch, games - done)
        outcome, turns, throws, landed = play(done, n)
        summary.add_batch(outcome, turns, throws, landed)
        if on_batch is not None:
            on_batch(outcome, turns, throws)
        done += n
        advance(done)
    summary.elapsed = time.perf_counter() - t0
    return summary
