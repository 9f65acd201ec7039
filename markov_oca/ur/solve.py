"""A pair of Ur policies solved: each side's chance to win, turns, throws, length."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..chain import Chain
from ..progress import progress_bar
from ..results import Expectation, UrResults, length_summary


def solve_ur(rules: Any, light: str = "optimal", dark: str = "optimal", *,
             options: Mapping[str, Any] | None = None, tail: float = 1e-10, progress: bool = False,
             optimal: Any = None, chain: Chain | None = None) -> UrResults:
    """A pair of Ur policies as a chain: each side's chance to win, turns, throws, length.

    ``rules`` is a rule set's name or path, or loaded :class:`~markov_oca.ur.rules.UrRules`.
    A caller that already holds the optimal values (an
    :class:`~markov_oca.ur.optimal.OptimalSolution`) or this policy pair's chain passes them
    as ``optimal`` and ``chain``, so they are not computed a second time.

    Example
    -------
    >>> r = solve_ur("ur", "optimal", "random", options={"pieces": 2})
    >>> round(float(r.wins["light"]), 4)
    0.755
    """
    from .chain import check_chain_memory, ur_chain
    from .optimal import solve_optimal
    from .rules import UrRules, load_ur
    from .state import UrSpace

    r = rules if isinstance(rules, UrRules) else load_ur(rules, options or {})
    check_chain_memory(r)  # before the value iteration, which would be wasted on a refused chain
    timer: dict[str, float] = {}
    with progress_bar(progress) as bar:
        bar.add_task(f"solving {r.name} with {r.pieces} pieces", total=None)
        t0 = time.perf_counter()
        if optimal is None and "optimal" in (light, dark):
            optimal = solve_optimal(r)
            timer["optimal"] = time.perf_counter() - t0
        values, residual = (optimal.values, optimal.residual) if optimal is not None else (None, None)
        if chain is None:
            t1 = time.perf_counter()
            chain = ur_chain(r, light, dark, values)
            timer["build"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        exp = chain.expected({"turns": chain.state_rewards["turns"], "throws": chain.state_rewards["throws"]})
        wins = chain.outcome_probabilities()
        timer["solve"] = time.perf_counter() - t2
        length = length_summary(chain, exp["turns"][1], tail)
    start = UrSpace(r.pieces).rank(0, 0, r.pieces, 0, 0, r.pieces, 0)
    return UrResults(
        rules=r.name, title=r.title, seed=r.seed, source=r.source, pieces=r.pieces, light=light, dark=dark,
        options=dict(r.options), states=chain.n, transitions=chain.n_transitions,
        wins={"light": wins["light wins"], "dark": wins["dark wins"]},
        expected={k: Expectation(*v) for k, v in exp.items()},
        length=length,
        optimal_value=float(values[start]) if values is not None else None,
        optimal_residual=residual,
        positions=UrSpace(r.pieces).size,
        solver=[{"method": x.method, "residual": x.residual, "iterations": x.iterations} for x in chain.reports],
        timings=timer,
    )
