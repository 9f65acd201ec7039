"""A family whose every answer comes from its chain: a new game in a rules type, a loader and a chain.

:class:`ChainFamily` is the shortest way to add a game. A subclass declares its rules type,
how a rule file loads into it and how the rules with their settings become a :class:`Chain`
whose outcomes are one absorbing state a seat (``seat 1 wins``, ...) and whose ``turns`` and
``throws`` are state rewards. The engine then gives everything else from that chain:

- ``solve``: each outcome's chance, the expected turns and throws, the length distribution
  (:class:`ChainResults`, with ``text()`` and ``to_dict()``);
- ``simulate``: games sampled from the chain itself, many at once (a family with a simulator
  of its own rules, written apart from its chain, checks more and should override it);
- ``exact_answer`` (what ``crosscheck`` tests a sample against), ``explain`` (the rules'
  fields), ``describe_play`` and ``page`` (the report page's blocks).

Examples
--------
>>> import numpy as np
>>> from dataclasses import dataclass
>>> from markov_oca.analysis.chain import Chain
>>> @dataclass(frozen=True)
... class CoinRules:
...     name: str = "coin"
...     title: str = "First head wins"
...     default_players: int = 1
...     options: tuple = ()
>>> class Coin(ChainFamily):
...     name = "coin"
...     def load(self, source, options):
...         return CoinRules()
...     def chain(self, play, progress=False):  # throw a coin until heads: state 1 is the win
...         return Chain(next=np.array([[0, 1], [1, -1]], np.int32), pnum=np.array([[1, 1], [2, 0]], np.int32),
...                      denom=2, init=0, outcomes={"seat 1 wins": 1}, players=1,
...                      mover=np.array([0, -1], np.int8),
...                      state_rewards={"turns": np.array([1, 0], np.int8), "throws": np.array([1, 0], np.int8)})
>>> play = Coin().play(CoinRules(), "solve", players=1)
>>> r = Coin().solve(play)
>>> r.outcomes["seat 1 wins"], r.turns
(1.0, 2.0)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analysis.chain import Chain
from ..analysis.crosscheck import ExactAnswer
from ..analysis.results import LengthSummary, summarise_length
from ..analysis.sampling import SimSummary
from ..core.errors import RulesError
from .family import Family, Play, Setting
from .page import Block, Heading, Num, Table, length_blocks, para


@dataclass
class ChainResults:
    """What a chain says of a race: each outcome's chance, expected turns and throws, the length.

    Parameters
    ----------
    rules : str
        The rule set's name.
    players : int
        The number of seats.
    outcomes : dict of str to float
        Each outcome's chance.
    turns, throws : float
        The expected turns and throws of the whole game.
    length : LengthSummary
        The distribution of the game's length in turns.

    Examples
    --------
    >>> from markov_oca.analysis.results import LengthSummary
    >>> r = ChainResults("coin", 1, {"seat 1 wins": 1.0}, 2.0, 2.0,
    ...                  LengthSummary([0.0, 0.5, 0.25], 2.0, 2.0, 3.0, 7.0, 0.0, 0.25))
    >>> r.text().splitlines()[1]
    'seat 1 wins 1.000000'
    """

    rules: str
    players: int
    outcomes: dict[str, float]
    turns: float
    throws: float
    length: LengthSummary

    def to_dict(self, with_pmf: bool = True) -> dict:
        return {"schema": "markov_oca.chain-results/1", "rules": self.rules, "players": self.players,
                "outcomes": self.outcomes, "expected_turns": self.turns, "expected_throws": self.throws,
                "length": self.length.to_dict(with_pmf=with_pmf)}

    def text(self) -> str:
        return "\n".join([f"{self.rules} with {self.players} player{'s' if self.players > 1 else ''}"]
                         + [f"{k} {v:.6f}" for k, v in self.outcomes.items()]
                         + [f"expected turns {self.turns:.4f}", f"expected throws {self.throws:.4f}"])


class ChainFamily(Family):
    """A family that gives its rules and its chain; the engine answers everything from the chain.

    Subclasses set :attr:`name` and implement ``load(source, options)`` and ``chain(play)``.
    Rules carry ``name``, ``title``, ``default_players`` and ``options``; :attr:`max_players`
    bounds the ``players`` setting.
    """

    boards = "boards"
    max_players: int = 4

    def __init__(self) -> None:
        self.settings = (Setting("players", f"number of players (1 to {self.max_players})", int, short="-n"),)

    def players(self, play: Play) -> int:
        n = play.settings.get("players") or play.rules.default_players
        if not 1 <= n <= self.max_players:
            raise RulesError(f"{play.rules.name} is for 1 to {self.max_players} players, not {n}")
        return n

    def check_play(self, play: Play) -> None:
        self.players(play)

    def describe_play(self, play: Play) -> str:
        return f"{self.players(play)} players"

    def explain(self, rules: Any) -> dict:
        fields = dataclasses.asdict(rules) if dataclasses.is_dataclass(rules) else dict(vars(rules))
        return {"schema": f"{self.name}-explain/1", **fields}

    def explain_text(self, rules: Any) -> str:
        return "\n".join([rules.title] + [f"  {k} = {v}" for k, v in self.explain(rules).items() if k != "schema"])

    def solve(self, play: Play, *, tail: float = 1e-10, progress: bool = False) -> ChainResults:
        c = self.chain(play, progress=progress)
        wins = c.outcome_probabilities()
        totals = c.expected({k: c.state_rewards[k] for k in ("turns", "throws")})
        return ChainResults(play.rules.name, c.players, {k: float(wins[k]) for k in c.outcomes},
                            float(totals["turns"][0]), float(totals["throws"][0]),
                            summarise_length(c.length_distribution(tail=tail), totals["turns"][1]))

    def exact_answer(self, play: Play, *, tail: float = 1e-10, progress: bool = False) -> ExactAnswer:
        c = self.chain(play, progress=progress)
        throws = c.expected({"throws": c.state_rewards["throws"]})["throws"]
        return ExactAnswer(rules=play.rules.name, seats=[f"seat {k + 1}" for k in range(c.players)],
                           outcome_names=list(c.outcomes), length=c.length_distribution(tail=tail),
                           throws_given_end=float(throws[1]))

    def simulate(self, play: Play, games: int, *, seed: int = 0, turn_limit: int | None = None,
                 on_batch: Callable | None = None, progress: bool = False, **extra: Any) -> SimSummary:
        c = self.chain(play, progress=progress)
        limit = turn_limit or 10_000
        t0 = time.perf_counter()
        winner, turns, throws = sample_chain(c, games, seed, limit)
        s = SimSummary(rules=play.rules.name, seats=[f"seat {k + 1}" for k in range(c.players)],
                       outcome_names=list(c.outcomes), turn_limit=limit, seed=seed)
        s.add_batch(winner, turns, throws)
        if on_batch is not None:
            on_batch(winner, turns, throws)
        s.elapsed = time.perf_counter() - t0
        return s

    def page_blocks(self, rules: Any, results: ChainResults) -> tuple[str, list[Block]]:
        rows = [[k, Num(f"{v:.6f}")] for k, v in results.outcomes.items()]
        blocks: list[Block] = [Heading(1, rules.title), para("Who wins:"), Table(["Outcome", "Chance"], rows)]
        return rules.title, blocks + length_blocks(results.length, "every seat's turns")


def sample_chain(chain: Chain, games: int, seed: int, turn_limit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Walk ``games`` copies of a chain from its initial state, all at once.

    Parameters
    ----------
    chain : Chain
        A chain in branch form with ``turns`` and ``throws`` state rewards.
    games : int
        How many walks.
    seed : int
        The seed of NumPy's default generator.
    turn_limit : int
        Walks still going after this many turns stop, unfinished.

    Returns
    -------
    winner, turns, throws : numpy.ndarray
        Each walk's outcome (its index in ``chain.outcomes``, -1 when unfinished), its turns and throws.

    Examples
    --------
    >>> import numpy as np
    >>> c = Chain(next=np.array([[0, 1], [1, -1]], np.int32), pnum=np.array([[1, 1], [2, 0]], np.int32), denom=2,
    ...           init=0, outcomes={"seat 1 wins": 1}, players=1, mover=np.array([0, -1], np.int8),
    ...           state_rewards={"turns": np.array([1, 0], np.int8), "throws": np.array([1, 0], np.int8)})
    >>> w, t, _ = sample_chain(c, 10_000, 1, 100)
    >>> bool((w == 0).all()), bool(1.9 < t.mean() < 2.1)
    (True, True)
    """
    rng = np.random.default_rng(seed)
    cum = np.cumsum(chain.pnum, axis=1)
    outcome_of = np.full(chain.n, -1, np.int64)
    outcome_of[list(chain.outcomes.values())] = np.arange(len(chain.outcomes))
    turn = np.asarray(chain.state_rewards["turns"], np.int64)
    throw = np.asarray(chain.state_rewards["throws"], np.int64)
    state = np.full(games, chain.init, np.int64)
    turns = np.zeros(games, np.int64)
    throws = np.zeros(games, np.int64)
    live = np.arange(games)
    while live.size:
        s = state[live]
        turns[live] += turn[s]
        throws[live] += throw[s]
        r = rng.integers(0, chain.denom, live.size)
        j = (cum[s] <= r[:, None]).sum(axis=1)
        state[live] = chain.next[s, j]
        live = live[(outcome_of[state[live]] < 0) & (turns[live] < turn_limit)]
    return outcome_of[state], turns, throws
