"""Solving a goose rule set for a number of players: build the chain, analyse it.

When the players never meet (:func:`~markov_oca.goose.independent.never_meet`), the
figures come from one player's race instead of the joint chain, for up to
:data:`~markov_oca.goose.independent.MAX_PLAYERS` players; the results' solver
line says so. Exact answers and a single player always take the joint chain.
"""

from __future__ import annotations

import time

from ..core.errors import RulesError
from ..core.progress import progress_bar
from ..engine.race import SolveResults, analyse
from .independent import MAX_PLAYERS, never_meet, single_race, solve_independent
from .model import goose_model
from .rotated import JOINT_LANDINGS_UPTO, solve_rotated
from .rules import GooseRules, special_squares

ROTATED_FROM = 3  # players from which a floating-point solve takes the chain seen from the mover
# Up to JOINT_LANDINGS_UPTO players, asking for the landings (landings=True) takes the joint chain instead: it
# gives the chance of ever landing on each square as well (one block solve, a column per square and seat).


def solve_goose(rules: GooseRules, players: int, *, exact: bool = False, landings: bool | None = None,
                tail: float = 1e-10, progress: bool = False, route: str = "auto") -> SolveResults:
    """Every seat's winning chance, deadlock, expectations, length and landings of ``rules``.

    ``route`` is ``"auto"`` (independent races when the players never meet and the
    answer is in floating point; from :data:`ROTATED_FROM` players the chain seen
    from the mover, :mod:`~markov_oca.goose.rotated`, unless ``landings=True`` asks
    for the chances of ever landing up to :data:`JOINT_LANDINGS_UPTO` players), ``"joint"`` (the joint chain,
    whatever the number of players), ``"rotated"`` or ``"independent"``.
    """
    if route not in ("auto", "joint", "rotated", "independent"):
        raise ValueError(f"route must be auto, joint, rotated or independent, got {route!r}")
    independent = route == "independent" or (route == "auto" and not exact and players >= 2 and never_meet(rules))
    if independent:
        if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS:
            raise RulesError(f"players must be a whole number from 1 to {MAX_PLAYERS} when the players never "
                             f"meet, got {players!r}")
        if not never_meet(rules):
            raise RulesError(f"{rules.name}: the players meet (occupancy or a waiting square), "
                             "so they cannot be solved as independent races", source=rules.source, key="rules")
        race = single_race(rules)
        if race.never == 0:
            return solve_independent(rules, players, landings=True if landings is None else landings, tail=tail,
                                     race=race)
        if route == "independent":
            raise RulesError(f"{rules.name}: a single player may never finish (chance {race.never:.3g}), "
                             "so the race cannot be split by player", source=rules.source)
    m = goose_model(rules, players)
    rotated = route == "auto" and not exact and players >= ROTATED_FROM and not (
        landings is True and players <= JOINT_LANDINGS_UPTO)
    if route == "rotated" or rotated:
        if exact:
            raise RulesError("the chain seen from the mover is solved in floating point only", key="exact")
        return solve_rotated(m, landings=landings, tail=tail, progress=progress)
    timer: dict[str, float] = {}
    t0 = time.perf_counter()
    chain = m.build(progress=progress)
    timer["build"] = time.perf_counter() - t0
    with progress_bar(progress) as bar:
        bar.add_task(f"solving {chain.n:,} states" + (" exactly" if exact else ""), total=None)
        return analyse(chain, rules=rules, players=m.players, exact=exact, special=special_squares(rules),
                       landing_events=lambda seat: m.landing_events(chain, seat),
                       landings=landings, tail=tail, timer=timer)
