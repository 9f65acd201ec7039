"""A fourth game family written only for the tests: a one-die race to a goal with one snake.

It proves the family interface is real: registered at test time, it goes through
``solve``, ``explain``, ``simulate``, ``crosscheck``, ``export`` and ``report`` of
the command line and the API without any of them knowing it. Each seat throws one
die in turn; reaching or passing ``goal`` wins at once; ending a move on the snake's
head sends the piece to its tail. The state is the mixed-radix number of every
seat's square and the seat to move.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from markov_oca.analysis.chain import Chain
from markov_oca.analysis.results import summarise_length
from markov_oca.analysis.sampling import SimSummary
from markov_oca.core.errors import RulesError
from markov_oca.core.rulefile import check_keys, game_table, game_texts, int_value
from markov_oca.engine.family import Family, Play, RuleSource, Setting
from markov_oca.engine.page import Heading, Num, Table, length_blocks, para

RACE_TOML = """
[game]
name = "race10"
family = "race"
title = "A race to ten"
players = 2

[race]
goal = 10
faces = 6
snake = [8, 3]
"""


@dataclass(frozen=True)
class RaceRules:
    name: str
    title: str
    source: str
    goal: int
    faces: int
    snake: tuple[int, int]
    default_players: int
    options: dict

    def step(self, square: int, throw: int) -> int:
        """Where a throw takes a piece (``goal`` when it finishes)."""
        to = square + throw
        if to >= self.goal:
            return self.goal
        return self.snake[1] if to == self.snake[0] else to


@dataclass
class RaceResults:
    rules: str
    players: int
    wins: list[float]
    turns: float
    length: Any

    def to_dict(self, with_pmf: bool = True) -> dict:
        return {"schema": "race/1", "rules": self.rules, "players": self.players, "wins": self.wins,
                "expected_turns": self.turns, "length": self.length.to_dict(with_pmf=with_pmf)}

    def text(self) -> str:
        return "\n".join([f"{self.rules} with {self.players} players"]
                         + [f"seat {k + 1} wins {w:.6f}" for k, w in enumerate(self.wins)]
                         + [f"expected turns {self.turns:.4f}"])


class RaceFamily(Family):
    name = "race"
    boards = "race boards"
    rules_type = RaceRules
    settings = (Setting("players", "number of players (1 to 3)", int, short="-n"),)

    def load(self, source: RuleSource, options: dict[str, Any]) -> RaceRules:
        if options:
            raise RulesError(f"a race board has no options, got {', '.join(options)}", source=source.name)
        game = game_table(source.name, source.raw, {"game", "race"}, {"name", "family", "title", "players"}, "race")
        texts = game_texts(source.name, game)
        race = source.raw.get("race", {})
        check_keys(source.name, "race", race, {"goal", "faces", "snake"})
        goal = int_value(source.name, "race.goal", race.get("goal", 10), 2, 100)
        faces = int_value(source.name, "race.faces", race.get("faces", 6), 1, 20)
        head, tail = race.get("snake", [goal, goal])
        return RaceRules(texts["name"], texts["title"], source.name, goal, faces,
                         (int_value(source.name, "race.snake", head, 1),
                          int_value(source.name, "race.snake", tail, 0)),
                         int_value(source.name, "game.players", game.get("players", 2), 1, 3), {})

    def players(self, play: Play) -> int:
        n = play["players"] or play.rules.default_players
        if not 1 <= n <= 3:
            raise RulesError(f"a race is for 1 to 3 players, not {n}")
        return n

    def check_play(self, play: Play) -> None:
        self.players(play)

    def describe_play(self, play: Play) -> str:
        return f"{self.players(play)} players"

    def chain(self, play: Play, progress: bool = False) -> Chain:
        r, n = play.rules, self.players(play)
        g = r.goal
        states = g**n * n  # (squares in mixed radix) * n + seat to move
        ids = np.arange(states)
        mover, rest = ids % n, ids // n
        squares = np.stack([(rest // g**k) % g for k in range(n)], axis=1)
        step = np.array([[r.step(s, t) for t in range(1, r.faces + 1)] for s in range(g)])
        to = step[squares[np.arange(states), mover]]  # (states, faces)
        won = to >= g
        new_rest = rest[:, None] + (to - squares[np.arange(states), mover][:, None]) * g ** mover[:, None]
        nxt = np.where(won, states + mover[:, None], new_rest * n + (mover[:, None] + 1) % n)
        outs = np.arange(states, states + n)
        nxt = np.vstack([nxt, np.column_stack([outs, np.full((n, r.faces - 1), -1)])]).astype(np.int32)
        pnum = np.vstack([np.ones((states, r.faces)), np.column_stack([np.full(n, r.faces),
                                                                        np.zeros((n, r.faces - 1))])])
        all_ids = np.arange(states + n)
        turn = all_ids < states
        return Chain(next=nxt, pnum=pnum.astype(np.int32), denom=r.faces, init=0,
                     outcomes={f"seat {k + 1} wins": states + k for k in range(n)}, players=n,
                     mover=np.where(turn, all_ids % n, -1).astype(np.int8),
                     state_rewards={"turns": turn, "throws": turn.astype(np.int8)}, turn_start=turn,
                     state_ids=all_ids, describe_state=lambda s: {"seat_to_move": int(s % n) + 1})

    def solve(self, play: Play, *, tail: float = 1e-10, progress: bool = False) -> RaceResults:
        c = self.chain(play)
        wins = c.outcome_probabilities()
        turns = c.expected({"turns": c.state_rewards["turns"]})["turns"]
        length = summarise_length(c.length_distribution(tail=tail), turns[1])
        return RaceResults(play.rules.name, c.players, [float(wins[k]) for k in c.outcomes], float(turns[0]),
                           length)

    def simulate(self, play: Play, games: int, *, seed: int = 0, turn_limit: int | None = None,
                 on_batch=None, progress: bool = False, **extra: Any) -> SimSummary:
        r, n = play.rules, self.players(play)
        limit = turn_limit or 10_000
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        square = np.zeros((games, n), np.int64)
        winner = np.full(games, -1)
        turns = np.zeros(games, np.int64)
        step = np.array([[r.step(s, t) for t in range(1, r.faces + 1)] for s in range(r.goal)])
        for t in range(limit):
            live = np.flatnonzero(winner < 0)
            if live.size == 0:
                break
            seat = t % n
            to = step[square[live, seat], rng.integers(0, r.faces, live.size)]
            square[live, seat] = to
            turns[live] = t + 1
            done = live[to >= r.goal]
            winner[done] = seat
        s = SimSummary(rules=r.name, seats=[f"seat {k + 1}" for k in range(n)],
                       outcome_names=[f"seat {k + 1} wins" for k in range(n)], turn_limit=limit, seed=seed)
        s.add_batch(winner, turns, turns)
        if on_batch is not None:
            on_batch(winner, turns, turns)
        s.elapsed = time.perf_counter() - t0
        return s

    def exact_answer(self, play: Play, *, tail: float = 1e-10, progress: bool = False):
        from markov_oca.analysis.crosscheck import ExactAnswer

        c = self.chain(play)
        throws = c.expected({"throws": c.state_rewards["throws"]})["throws"]
        return ExactAnswer(rules=play.rules.name, seats=[f"seat {k + 1}" for k in range(c.players)],
                           outcome_names=list(c.outcomes), length=c.length_distribution(tail=tail),
                           throws_given_end=float(throws[1]))

    def explain(self, rules: RaceRules) -> dict:
        return {"schema": "race-explain/1", "rules": rules.name, "goal": rules.goal, "faces": rules.faces,
                "snake": list(rules.snake)}

    def explain_text(self, rules: RaceRules) -> str:
        return (f"{rules.title}: one d{rules.faces}, first to reach {rules.goal} wins; the snake at "
                f"{rules.snake[0]} sends a piece to {rules.snake[1]}")

    def page(self, play: Play, progress: bool = False):
        res = self.solve(play)
        blocks = [Heading(1, res.rules), para("Who wins:"),
                  Table(["Seat", "Chance"], [[f"seat {k + 1}", Num(f"{w:.6f}")] for k, w in enumerate(res.wins)])]
        return res.rules, blocks + length_blocks(res.length, "every seat's turns")


FAMILY = RaceFamily()
