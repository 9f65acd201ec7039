"""Solving a goose rule set for a number of players: build the chain, analyse it.

When the players never meet (:func:`~markov_oca.goose.independent.never_meet`), the
figures come from one player's race instead of the joint chain, for up to
:data:`~markov_oca.goose.independent.MAX_PLAYERS` players, each with its certified error bound
(:func:`~markov_oca.goose.independent.independent_bounds`); the results' note says so. Exact answers
and a single player always take the joint chain.
"""

from __future__ import annotations

import time

from ..analysis.bounds import PRECISION
from ..core.errors import RulesError, TooLargeError
from ..core.progress import progress_bar
from ..engine.race import SolveResults, analyse
from .independent import MAX_PLAYERS, never_meet, single_race, solve_independent
from .model import goose_model
from .rotated import JOINT_LANDINGS_UPTO, solve_rotated
from .rules import GooseRules, special_squares

#: The length pass's pace, states a turn times turns a second, measured on oca-moderna with waiting turns
#: (turns:2,000: 4,056 states, 28,305 turns in 0.32 s; turns:100,000: 200,056 states in 290-380 s).
LENGTH_PACE = 4e8
#: Turns the length distribution runs to per turn a waiting square holds a piece (turns:K), measured: K = 2,000
#: gives 28,305 turns to the tail 1e-10.
TURNS_PER_WAIT = 15
#: Seconds of estimated work above which a solve is refused up front (the figure is named in the refusal).
WORK_LIMIT = 600.0

ROTATED_FROM = 3  # players from which a floating-point solve takes the chain seen from the mover
# Up to JOINT_LANDINGS_UPTO players, asking for the landings (landings=True) takes the joint chain instead: it
# gives the chance of ever landing on each square as well (one block solve, a column per square and seat).


def length_work(rules: GooseRules, chain) -> float:
    """Estimated seconds of the length distribution's pass: turns to its tail times states a turn.

    The waiting squares' ``turns:K`` multiplies the game's length (a piece can sit out K turns), so the
    pass runs to about ``TURNS_PER_WAIT * K`` turns over every state; a refusal up front names the
    estimate rather than running for hours (``--option waiting=turns:100000``).
    """
    waits = rules.waiting_turns or 0
    turns = 300 + TURNS_PER_WAIT * waits * max(1, chain.players)
    return turns * chain.n / LENGTH_PACE


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} hours" if seconds >= 3600 else f"{seconds / 60:,.0f} min"


def check_length_work(rules: GooseRules, chain) -> str:
    """Refuse in one line a solve estimated over :data:`WORK_LIMIT`; else a few words on a long one's time."""
    seconds = length_work(rules, chain)
    if seconds > WORK_LIMIT:
        raise TooLargeError(
            f"{rules.name}: the length distribution of {chain.n:,} states with waiting={rules.waiting} would take "
            f"about {_duration(seconds)} (every state pushed on each of about "
            f"{seconds * LENGTH_PACE / chain.n:,.0f} turns; the limit is {WORK_LIMIT / 60:.0f} min): choose fewer "
            "waiting turns, or simulate")
    return f" (about {_duration(seconds)})" if seconds > 60 else ""


#: Joint states up to which two players who never meet still take the joint chain (auto route); beyond, one
#: player's race. Both routes certify every figure (:mod:`~markov_oca.engine.certified`,
#: :func:`~markov_oca.goose.independent.independent_bounds`).
JOINT_CERTIFIED_STATES = 200_000


def joint_certified(rules: GooseRules, players: int) -> bool:
    """Whether the auto route takes the joint chain, whose every figure is certified, for players who never meet:
    two players on a board whose joint chain has at most :data:`JOINT_CERTIFIED_STATES` states (about)."""
    return players == 2 and 2 * (rules.goal + 1) ** 2 <= JOINT_CERTIFIED_STATES


def solve_goose(rules: GooseRules, players: int, *, exact: bool = False, landings: bool | None = None,
                tail: float = 1e-10, progress: bool = False, route: str = "auto",
                precision: float = PRECISION) -> SolveResults:
    """Every seat's winning chance, deadlock, expectations, length and landings of ``rules``.

    ``route`` is ``"auto"`` (independent races when the players never meet and the
    answer is in floating point, but for two players on a board of up to some 300 squares, whose joint
    chain is certified, :func:`joint_certified`; from :data:`ROTATED_FROM` players the chain seen
    from the mover, :mod:`~markov_oca.goose.rotated`, unless ``landings=True`` asks
    for the chances of ever landing up to :data:`JOINT_LANDINGS_UPTO` players), ``"joint"`` (the joint chain,
    whatever the number of players), ``"rotated"`` or ``"independent"``.
    """
    if route not in ("auto", "joint", "rotated", "independent"):
        raise ValueError(f"route must be auto, joint, rotated or independent, got {route!r}")
    independent = route == "independent" or (route == "auto" and not exact and players >= 2 and never_meet(rules)
                                              and not joint_certified(rules, players))
    if independent:
        if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS:
            raise RulesError(f"players must be a whole number from 1 to {MAX_PLAYERS} when the players never "
                             f"meet, got {players!r}")
        if not never_meet(rules):
            raise RulesError(f"{rules.name}: the players meet (occupancy or a waiting square), "
                             "so they cannot be solved as independent races", source=rules.source, key="rules")
        race = single_race(rules)
        if race.never == 0 and not race.closed:
            return solve_independent(rules, players, landings=True if landings is None else landings, tail=tail,
                                     race=race, precision=precision)
        if route == "independent":
            raise RulesError(f"{rules.name}: a single player may never finish (chance {race.never:.3g}), "
                             "so the race cannot be split by player", source=rules.source)
    m = goose_model(rules, players)
    rotated = route == "auto" and not exact and players >= ROTATED_FROM and not (
        landings is True and players <= JOINT_LANDINGS_UPTO)
    if route == "rotated" or rotated:
        if exact:
            raise RulesError("the chain seen from the mover is solved in floating point only", key="exact")
        return solve_rotated(m, landings=landings, tail=tail, progress=progress, precision=precision)
    timer: dict[str, float] = {}
    t0 = time.perf_counter()
    chain = m.build(progress=progress)
    timer["build"] = time.perf_counter() - t0
    eta = check_length_work(rules, chain)
    with progress_bar(progress) as bar:
        bar.add_task(f"solving {chain.n:,} states" + (" exactly" if exact else "") + eta, total=None)
        return analyse(chain, rules=rules, players=m.players, exact=exact, special=special_squares(rules),
                       landing_events=lambda seat: m.landing_events(chain, seat),
                       landings=landings, tail=tail, timer=timer, precision=precision)
