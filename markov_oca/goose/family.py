"""The goose family declared once: race boards (the Spanish and French goose games, snakes and
ladders, a user's own board) for any number of players, every interaction in the joint chain."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.bounds import PRECISION
from ..engine.family import Family, Play, RuleSource, Setting
from .rules import GooseRules, build_goose, special_squares
from .solve import check_length_work


class GooseFamily(Family, name="goose", boards="goose boards", rules_type=GooseRules,
                  explainer=(".report", "explain_dict", "explain_text")):
    settings = (
        Setting("players", "number of players (default: the rule set's)", int, short="-n"),
        Setting("exact", "exact fractions instead of floating point (chains of up to 100,000 states)", bool, False,
                commands=("solve",)),
        Setting("landings", "how often each square is landed on (default: on for chains of up to 20,000 states)", bool,
                commands=("solve", "report"), negatable=True),
        Setting("precision", "relative precision every float figure's certified error bound must meet", float,
                PRECISION, commands=("solve",)),
    )

    def load(self, source: RuleSource, options: dict[str, Any]) -> GooseRules:
        return build_goose(source.raw, source.name, options)

    def players(self, play: Play) -> int:
        n = play["players"]
        return play.rules.default_players if n is None else n

    def describe_play(self, play: Play) -> str:
        n = self.players(play)
        return f"{n} player{'s' if n > 1 else ''}"

    def model(self, play: Play):
        from .model import goose_model

        return goose_model(play.rules, self.players(play))

    def chain(self, play: Play, progress: bool = False):
        return self.model(play).build(progress=progress)

    def solve(self, play: Play, *, tail: float = 1e-10, progress: bool = False):
        from .solve import solve_goose

        return solve_goose(play.rules, self.players(play), exact=play.settings.get("exact", False),
                           landings=play.settings.get("landings"), tail=tail, progress=progress,
                           precision=play.settings.get("precision", PRECISION))

    def simulate(self, play: Play, games: int, *, seed: int = 0, turn_limit: int | None = None,
                 on_batch: Callable | None = None, progress: bool = False, **extra: Any):
        from .simulate import simulate_goose

        return simulate_goose(play.rules, self.players(play), games, seed=seed, turn_limit=turn_limit,
                              on_batch=on_batch, progress=progress)

    def exact_answer(self, play: Play, *, tail: float = 1e-10, progress: bool = False, landings: bool | None = None):
        from ..analysis.crosscheck import ExactAnswer
        from ..core.progress import progress_bar
        from ..engine.race import analyse

        m = self.model(play)
        chain = m.build(progress=progress)
        eta = check_length_work(play.rules, chain)
        with progress_bar(progress) as bar:
            bar.add_task(f"solving {chain.n:,} states{eta}", total=None)
            dist = chain.length_distribution(tail=tail)
            res = analyse(chain, rules=play.rules, players=m.players, landings=landings, tail=tail,
                          special=special_squares(play.rules),
                          landing_events=lambda seat: m.landing_events(chain, seat))
        special = set(res.special_squares) - {0}
        table = {(x.seat - 1, x.square): float(x.chance) for x in res.landings or [] if x.square in special}
        return ExactAnswer(
            rules=play.rules.name, seats=[f"seat {k + 1}" for k in range(m.players)],
            outcome_names=list(chain.outcomes), length=dist, throws_given_end=float(res.expected["throws"].given_end),
            landings=table, deadlock=float(res.deadlock), notes=[res.landings_note] if res.landings_note else [],
        )

    def page_blocks(self, rules, results):
        from .page import goose_page

        return goose_page(rules, results)


FAMILY = GooseFamily()
