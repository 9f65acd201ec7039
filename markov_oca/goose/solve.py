"""Solving a goose rule set for a number of players: build the chain, analyse it."""

from __future__ import annotations

import time

from ..progress import progress_bar
from ..results import SolveResults, analyse
from .model import goose_model
from .rules import GooseRules


def solve_goose(rules: GooseRules, players: int, *, exact: bool = False, landings: bool | None = None,
                tail: float = 1e-10, progress: bool = False) -> SolveResults:
    """Every seat's winning chance, deadlock, expectations, length and landings of ``rules``."""
    m = goose_model(rules, players)
    timer: dict[str, float] = {}
    t0 = time.perf_counter()
    chain = m.build(progress=progress)
    timer["build"] = time.perf_counter() - t0
    with progress_bar(progress) as bar:
        bar.add_task(f"solving {chain.n:,} states" + (" exactly" if exact else ""), total=None)
        return analyse(chain, rules=rules, players=m.players, exact=exact,
                       landing_events=lambda seat: m.landing_events(chain, seat),
                       landings=landings, tail=tail, timer=timer)
