"""The points family declared once: the Italian goose game played for points, with a
dowry, taxes, a bank, Pulcinella bets, bankruptcy and mutual aid."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.bounds import PRECISION
from ..engine.family import Family, Play, RuleSource, Setting
from .model import BETS
from .rules import PuntiRules, build_punti
from .solve import METHODS


class PuntiFamily(Family, name="punti", boards="points boards", rules_type=PuntiRules,
                  explainer=(".report", "punti_explain_dict", "punti_explain_text")):
    settings = (
        Setting("players", "number of players (default: the rule set's)", int, short="-n"),
        Setting("bet", "when a player on a Pulcinella square bets on the die: never, always, or optimal, as "
                "best helps them win", str, "never", BETS),
        Setting("method", "the solver: auto picks one; chain, independent or layered force it, as docs/punti.md "
                "explains", str, "auto", METHODS,
                commands=("solve",)),
        Setting("postcards", "also simulate this many games with the postcards, the card trading the exact solve "
                "leaves out, and as many without, to compare", int, 0,
                commands=("solve",)),
        Setting("precision", "relative precision every float figure's certified error bound must meet (every "
                "method)", float, PRECISION, commands=("solve",)),
    )

    def load(self, source: RuleSource, options: dict[str, Any]) -> PuntiRules:
        return build_punti(source.raw, source.name, options)

    def model(self, play: Play):
        from .model import punti_model

        return punti_model(play.rules, play["players"])

    def describe_play(self, play: Play) -> str:
        return f"{self.model(play).players} players, bets {play['bet']}"

    def chain(self, play: Play, progress: bool = False):
        from .solve import build_punti_chain

        return build_punti_chain(play.rules, play["players"], bet=play["bet"], progress=progress).chain

    def solve(self, play: Play, *, tail: float = 1e-10, progress: bool = False):
        from .solve import solve_punti

        return solve_punti(play.rules, play["players"], bet=play["bet"], progress=progress, tail=tail,
                           postcards=play.settings.get("postcards", 0), method=play.settings.get("method", "auto"),
                           precision=play.settings.get("precision", PRECISION))

    def simulate(self, play: Play, games: int, *, seed: int = 0, turn_limit: int | None = None,
                 on_batch: Callable | None = None, progress: bool = False, **extra: Any):
        from .simulate import simulate_summary

        return simulate_summary(play.rules, play["players"], games, bet=play["bet"], policy=extra.get("policy"),
                                seed=seed, turn_limit=10_000 if turn_limit is None else turn_limit,
                                on_batch=on_batch, progress=progress)

    def outcome_labels(self, play: Play) -> list[str]:
        m = self.model(play)
        return [m.outcome_name(k) for k in m.outcome_masks()]

    def counts_throws(self, play: Play) -> bool:
        return False

    def exact_answer(self, play: Play, *, tail: float = 1e-10, progress: bool = False):
        """The exact answer, with the bet policy the simulation must follow (``simulate_with``)."""
        from ..analysis.crosscheck import ExactAnswer
        from ..core.progress import progress_bar
        from .solve import build_punti_chain

        rules, bet = play.rules, play["bet"]
        m = self.model(play)
        seats = [f"seat {k + 1}" for k in range(m.players)]
        if bet != "optimal" and not m.fits_chain() and m.players <= 3:
            from .independent import applies, solve_independent
            from .model import MODES

            ok, why = applies(m, MODES[bet])
            if ok:  # the chain is out of reach; independent paths give the same law, turn by turn
                dist = solve_independent(m, MODES[bet])["length"]
                return ExactAnswer(rules=rules.name, seats=seats, outcome_names=self.outcome_labels(play),
                                   length=dist, notes=[f"exact side by independent paths: {why}"])
        policy = None
        if bet == "optimal":
            from .optimal import optimal_chain

            pc, _info, policy = optimal_chain(m, progress=progress)
        else:
            pc = build_punti_chain(rules, play["players"], bet=bet, progress=progress)
        chain = pc.chain
        with progress_bar(progress) as bar:
            bar.add_task(f"solving {chain.n:,} states", total=None)
            dist = chain.length_distribution(tail=tail)
        return ExactAnswer(rules=rules.name, seats=seats, outcome_names=list(chain.outcomes), length=dist,
                           deadlock=dist.never_ends, simulate_with={"policy": policy})

    def page_blocks(self, rules, results):
        from .page import punti_page

        return punti_page(rules, results)


FAMILY = PuntiFamily()
