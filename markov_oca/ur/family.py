"""The Ur family declared once: the Royal Game of Ur, two sides, a policy each (random, greedy or
optimal by value iteration), any pair of policies as a chain."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.bounds import PRECISION
from ..engine.family import Family, Play, RuleSource, Setting
from .rules import UrRules, build_ur

POLICIES = ("random", "greedy", "optimal")
_SAMPLING = {"simulate": "random", "crosscheck": "random"}


class UrFamily(Family, name="ur", boards="Ur rule sets", rules_type=UrRules,
               explainer=(".report", "ur_explain_dict", "ur_explain_text")):
    settings = (
        Setting("pieces", "pieces each side plays with, 1 to 7 (default: the rule set's)", int, option=True),
        Setting("light", "how light (who moves first) chooses its moves: random, greedy or optimal", str,
                "optimal", POLICIES, defaults=_SAMPLING),
        Setting("dark", "how dark (who moves second) chooses its moves: random, greedy or optimal", str,
                "optimal", POLICIES, defaults=_SAMPLING),
        Setting("exact", "exact fractions instead of floating point (up to 2 pieces a side)", bool, False,
                commands=("solve",)),
        Setting("precision", "relative precision every float figure's certified error bound must meet", float,
                PRECISION, commands=("solve",)),
    )

    def load(self, source: RuleSource, options: dict[str, Any]) -> UrRules:
        return build_ur(source.raw, source.name, options)

    def describe_play(self, play: Play) -> str:
        p = play.rules.pieces
        return f"{p} piece{'s' if p > 1 else ''} a side, light {play['light']} against dark {play['dark']}"

    def optimal(self, play: Play):
        """The optimal values (computed once per play, when a side plays optimally or a page shows moves)."""
        if "optimal" not in play.cache:
            from .optimal import solve_optimal

            play.cache["optimal"] = solve_optimal(play.rules)
        return play.cache["optimal"]

    def chain(self, play: Play, progress: bool = False):
        from .chain import check_chain_memory, ur_chain

        check_chain_memory(play.rules)  # before the value iteration, which would be wasted on a refused chain
        values = self.optimal(play).values if "optimal" in (play["light"], play["dark"]) else None
        return ur_chain(play.rules, play["light"], play["dark"], values)

    def solve(self, play: Play, *, tail: float = 1e-10, progress: bool = False):
        if play.settings.get("exact"):
            return self.solve_exact(play, tail=tail, progress=progress)
        from .solve import solve_ur

        return solve_ur(play.rules, play["light"], play["dark"], tail=tail, progress=progress,
                        optimal=play.cache.get("optimal"), precision=play.settings.get("precision", PRECISION))

    def solve_exact(self, play: Play, *, tail: float = 1e-10, progress: bool = False):
        """Winning chances, throws and turns as fractions (:mod:`.exact`); refused above its reach."""
        from .exact import check_exact_size, solve_ur_exact

        check_exact_size(play.rules)  # before the value iteration
        opt = self.optimal(play) if "optimal" in (play["light"], play["dark"]) else None
        return solve_ur_exact(play.rules, play["light"], play["dark"], values=opt.values if opt else None,
                              residual=opt.residual if opt else None, tail=tail, progress=progress)

    def simulate(self, play: Play, games: int, *, seed: int = 0, turn_limit: int | None = None,
                 on_batch: Callable | None = None, progress: bool = False, **extra: Any):
        from .simulate import simulate_ur

        return simulate_ur(play.rules, play["light"], play["dark"], games, seed=seed, turn_limit=turn_limit,
                           on_batch=on_batch, progress=progress)

    def exact_answer(self, play: Play, *, tail: float = 1e-10, progress: bool = False):
        from ..analysis.crosscheck import ExactAnswer
        from ..core.progress import progress_bar

        with progress_bar(progress) as bar:
            bar.add_task(f"solving {play.rules.name} with {play.rules.pieces} pieces", total=None)
            chain = self.chain(play)
            exp = chain.expected({"throws": chain.state_rewards["throws"]})
            dist = chain.length_distribution(tail=tail)
        return ExactAnswer(rules=play.rules.name, seats=["light", "dark"], outcome_names=list(chain.outcomes),
                           length=dist, throws_given_end=float(exp["throws"][1]), deadlock=dist.never_ends)

    def page(self, play: Play, progress: bool = False):
        from .page import ur_page

        return ur_page(play.rules, play["light"], play["dark"], progress)

    def commands(self):
        from .commands import app

        return app


FAMILY = UrFamily()
