"""A game family written only for the tests: a one-die race to a goal with one snake.

It proves the family interface is real: registered at test time, it goes through ``solve``,
``explain``, ``simulate``, ``crosscheck``, ``export`` and ``report`` of the command line and
the API without any of them knowing it; ChainFamily answers all from its chain. One die a turn;
reaching ``goal`` wins; ending on the snake's head sends the piece to its tail. The state is the
mixed-radix number of every seat's square and the seat to move.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from markov_oca.analysis.chain import Chain
from markov_oca.core.errors import RulesError
from markov_oca.core.rulefile import check_keys, game_table, game_texts, int_value
from markov_oca.engine.chainfamily import ChainFamily

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
    goal: int
    faces: int
    snake: tuple[int, int]
    default_players: int
    seed: str = ""
    summary: str = ""
    options: dict = field(default_factory=dict)

    def step(self, square: int, throw: int) -> int:
        """Where a throw takes a piece (``goal`` when it finishes)."""
        return self.snake[1] if min(square + throw, self.goal) == self.snake[0] else min(square + throw, self.goal)


class RaceFamily(ChainFamily):
    name = "race"
    rules_type = RaceRules
    max_players = 3

    def load(self, source, options) -> RaceRules:
        if options:
            raise RulesError(f"a race board has no options, got {', '.join(options)}", source=source.name)
        f = source.name
        game = game_table(f, source.raw, {"game", "race"}, {"name", "family", "title", "players"}, "race")
        race = source.raw.get("race", {})
        check_keys(f, "race", race, {"goal", "faces", "snake"})
        goal = int_value(f, "race.goal", race.get("goal", 10), 2, 100)
        head, tail = race.get("snake", [goal, goal])
        faces, snake = int_value(f, "race.faces", race.get("faces", 6), 1, 20), (int_value(f, "race.snake", head, 1),
                                                                                int_value(f, "race.snake", tail, 0))
        return RaceRules(**game_texts(f, game), goal=goal, faces=faces, snake=snake,
                         default_players=int_value(f, "game.players", game.get("players", 2), 1, 3))

    def chain(self, play, progress: bool = False) -> Chain:
        r, n = play.rules, self.players(play)
        g = r.goal
        states, seat = g**n * n, np.arange(g**n * n) % n
        squares = (np.arange(states)[:, None] // n // g ** np.arange(n)) % g
        here = squares[np.arange(states), seat][:, None]
        to = np.array([[r.step(s, t) for t in range(1, r.faces + 1)] for s in range(g)])[here[:, 0]]
        moved = (np.arange(states)[:, None] // n + (to - here) * g ** seat[:, None]) * n + (seat[:, None] + 1) % n
        nxt = np.where(to >= g, states + seat[:, None], moved)
        ends = np.column_stack([np.arange(states, states + n), np.full((n, r.faces - 1), -1)])
        pnum = np.vstack([np.ones((states, r.faces)), np.column_stack([np.full(n, r.faces), 0 * ends[:, 1:]])])
        turn = np.arange(states + n) < states
        return Chain(next=np.vstack([nxt, ends]).astype(np.int32), pnum=pnum.astype(np.int32), denom=r.faces, init=0,
                     outcomes={f"seat {k + 1} wins": states + k for k in range(n)}, players=n,
                     mover=np.where(turn, np.arange(states + n) % n, -1).astype(np.int8), turn_start=turn,
                     state_rewards={"turns": turn, "throws": turn.astype(np.int8)}, state_ids=np.arange(states + n),
                     describe_state=lambda s: {"seat_to_move": int(s % n) + 1})


FAMILY = RaceFamily()
