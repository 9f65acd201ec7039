"""A pair of Ur policies solved: each side's chance to win, turns, throws, length.

Up to :data:`CHAIN_PIECES` pieces a side the pair is a :class:`~markov_oca.chain.Chain`
(``ur_chain``) and its analyses; above that, or with ``method="sweeps"``, it is solved by
sweeps over the ranked positions (:mod:`.sweeps`): below :data:`PUSH_ONLY_PIECES` a layered
policy evaluation for the chances, turns and throws and a forward push of the length
distribution; from there the push alone, which also sums the turns and throws. They give
the same figures where both run (tests/test_ur_full.py, tests/test_ur_push.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..analysis.bounds import PRECISION
from ..analysis.chain import Chain
from ..analysis.results import Expectation, certify_length, length_summary, summarise_length
from ..core.progress import progress_bar
from .results import UrResults

#: Largest number of pieces a side solved as a chain by default (the sweeps take over above).
CHAIN_PIECES = 3
#: From this many pieces the optimal values are not solved on the way: the table must be saved first.
TABLE_FIRST_PIECES = 6
#: From this many pieces a pair of policies is solved by the forward push alone (no policy evaluation):
#: at four pieces random against greedy the evaluation took 65 s of the 107, the push 41 s.
PUSH_ONLY_PIECES = 4
#: The push's sums give the turns and throws from PUSH_ONLY_PIECES pieces: it is carried to this tail at
#: least, whatever the length distribution asks (the tail beyond is extrapolated).
PUSH_SUMS_TAIL = 1e-10
#: From this many pieces the push's turns and throws come with a bound: a loose layered evaluation of the
#: throws to come bounds them from every position (:func:`.bound.throws_bound`), so what the push leaves
#: (the mass in play at its end and the mass let go) is worth at most that many turns and throws each. At
#: five pieces it costs about a quarter of the push (34 of 137 s of CPU), so it starts at six.
THROWS_BOUND_PIECES = 6
#: The loose evaluation's relative change per layer: the bound is then within 1% of the largest throws.
THROWS_BOUND_TOL = 1e-4


def solve_ur(rules: Any, light: str = "optimal", dark: str = "optimal", *,
             options: Mapping[str, Any] | None = None, tail: float = 1e-10, progress: bool = False,
             optimal: Any = None, chain: Chain | None = None, method: str = "auto",
             values: Any = None, precision: float = PRECISION) -> UrResults:
    """A pair of Ur policies: each side's chance to win, turns, throws, length.

    Up to ``CHAIN_PIECES`` pieces a side the pair is solved as a :class:`~markov_oca.Chain`;
    above, by sweeps over the ranked positions.

    Parameters
    ----------
    rules : str, Path or UrRules
        A rule set's name or path, or rules loaded by :func:`~markov_oca.load`.
    light, dark : str or callable
        Each side's policy: ``"random"``, ``"greedy"``, ``"optimal"``, or a function choosing
        a move.
    options : mapping, optional
        Rule options (``pieces``, ...), with a name or path only.
    tail : float
        Carry the length distribution until this much probability is left.
    progress : bool
        Show progress bars on stderr.
    optimal : OptimalSolution, optional
        The optimal values already solved, so that they are not solved a second time.
    chain : Chain, optional
        This policy pair's chain, already built.
    method : {"auto", "chain", "sweeps"}
        ``"auto"``: the chain up to ``CHAIN_PIECES`` pieces, or when ``chain`` is given or a
        policy is a callable; the sweeps above.
    values : array, optional
        The optimal table itself (for instance memory-mapped from a file saved by
        ``markov-oca ur solve``). Without it or ``optimal``, a table saved for these rules is
        used when there is one.
    precision : float
        The relative precision every figure's certified error bound must meet (the chain's route;
        the sweeps report the bounds they have in their solver entries).

    Returns
    -------
    UrResults

    Raises
    ------
    RulesError
        Bad rules or options, or an unknown ``method``.

    Examples
    --------
    >>> r = solve_ur("ur", "optimal", "random", options={"pieces": 2})
    >>> round(float(r.wins["light"]), 4)
    0.755
    """
    from ..core.errors import RulesError
    from .rules import UrRules, load_ur

    r = rules if isinstance(rules, UrRules) else load_ur(rules, options or {})
    if method not in ("auto", "chain", "sweeps"):
        raise RulesError(f"method {method!r}: auto, chain or sweeps")
    if method == "auto":
        simple = all(isinstance(p, str) for p in (light, dark))
        method = "chain" if (chain is not None or not simple or r.pieces <= CHAIN_PIECES) else "sweeps"
    if method == "sweeps":
        return _solve_sweeps(r, light, dark, tail=tail, progress=progress, optimal=optimal, values=values)
    return _solve_chain(r, light, dark, tail=tail, progress=progress, optimal=optimal, chain=chain, values=values,
                        precision=precision)


def _optimal_values(r, light, dark, optimal, values, timer, progress):
    """(values, residual) for the pair: given, found saved, or solved now."""
    from .layered import solve_layered
    from .table import find_table

    if values is not None:
        return values, getattr(optimal, "residual", None)
    if optimal is not None:
        return optimal.values, optimal.residual
    if "optimal" not in (light, dark):
        return None, None
    found = find_table(r)
    if found is not None:
        return found
    t0 = time.perf_counter()
    lay = solve_layered(r, residual=r.pieces <= 5, progress=progress)
    timer["optimal"] = time.perf_counter() - t0
    res = lay.residual if lay.residual is not None else max((s.change for s in lay.layers), default=0.0)
    return lay.values, res


def _solve_chain(r, light, dark, *, tail, progress, optimal, chain, values, precision=PRECISION) -> UrResults:
    from .chain import check_chain_memory, ur_chain
    from .state import space_of

    check_chain_memory(r)  # before the value iteration, which would be wasted on a refused chain
    timer: dict[str, float] = {}
    with progress_bar(progress) as bar:
        bar.add_task(f"solving {r.name} with {r.pieces} pieces", total=None)
        values, residual = _optimal_values(r, light, dark, optimal, values, timer, progress=False)
        if chain is None:
            t1 = time.perf_counter()
            chain = ur_chain(r, light, dark, values)
            timer["build"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        fig, route = _certified(chain, precision)
        timer["solve"] = time.perf_counter() - t2
        length = length_summary(chain, fig.given["turns"][0], tail)
        certify_length(length, chain.length_distribution(tail=tail), fig.given["turns"][1], fig.deadlock)
    start = space_of(r.pieces, r.code).rank(0, 0, r.pieces, 0, 0, r.pieces, 0)
    res = UrResults(
        rules=r.name, title=r.title, seed=r.seed, source=r.source, pieces=r.pieces, light=light, dark=dark,
        options=dict(r.options), states=chain.n, transitions=chain.n_transitions,
        wins={"light": fig.outcomes["light wins"][0], "dark": fig.outcomes["dark wins"][0]},
        expected={k: Expectation(fig.totals[k][0], fig.given[k][0]) for k in ("turns", "throws")},
        length=length,
        optimal_value=float(values[start]) if values is not None else None,
        optimal_residual=residual,
        positions=space_of(r.pieces, r.code).size,
        solver=fig.reports,
        timings=timer,
        precision=precision, route=route,
    )
    res.bounds = {"wins": {"light": fig.outcomes["light wins"][1], "dark": fig.outcomes["dark wins"][1]},
                  "expected": {k: {"total": fig.totals[k][1], "given_end": fig.given[k][1]}
                               for k in ("turns", "throws")},
                  "length": length.bounds,
                  "optimal_value": _optimal_bound(fig, residual, light, dark, values)}
    return res


def _certified(chain: Chain, precision: float):
    """The pair's chances, turns and throws with certified bounds (:mod:`~markov_oca.engine.certified`):
    solved again with iterative refinement when the first solve misses ``precision``, else refused."""
    from ..core.errors import SolverError
    from ..engine.certified import race_figures

    rewards = {"turns": (chain.state_rewards["turns"], None), "throws": (chain.state_rewards["throws"], None)}

    fig = race_figures(chain, rewards, list(rewards))
    failed = fig.misses(precision)
    if not failed:
        return fig, ""
    fig = race_figures(chain, rewards, list(rewards), target=precision * 1e-3)
    failed = fig.misses(precision)
    if failed:
        raise SolverError(f"no bound under {precision:g} (relative) for {', '.join(failed[:3])} (true residual up "
                          f"to {fig.visits.mass:.2g}, ||N||_inf <= {fig.forward.norm:.3g}): ask --exact (up to 2 "
                          "pieces a side) or a looser --precision")
    return fig, "the visits solved again with iterative refinement"


def _optimal_bound(fig, residual: float | None, light, dark, values) -> float | None:
    """How far the optimal table's value of the start is from the chance of the pair that plays greedily on it.

    ``V - V_pi = N_pi (T V - V)`` for the pair ``pi`` greedy on ``V`` (both sides optimal: the chain
    solved), and ``|T V - V| <= residual`` (the Bellman residual) at every position, so the value is off
    by at most the residual times the expected steps (throws) from the start, certified from the
    forward column of expected steps (:func:`~markov_oca.analysis.bounds.upper_steps`). None for
    another pair (its chain is not the optimal pair's) or without a residual.
    """
    from ..linalg.certify import SLACK, U

    if values is None or residual is None or not light == dark == "optimal" or fig.visits is None:
        return None
    steps = float(fig.visits.t_up[fig.forward_init]) if fig.forward_init is not None else float("inf")
    return float(residual * steps * SLACK + 4 * U)


def _check_sweep_policies(r, light, dark, values, optimal) -> None:
    """Refuse what the sweeps cannot solve: a callable or unknown policy, or the optimal policy from
    :data:`TABLE_FIRST_PIECES` pieces without a saved table."""
    from ..core.errors import RulesError
    from .policy import POLICY_CODES

    for p in (light, dark):
        if not isinstance(p, str):
            raise RulesError("a callable policy is solved as a chain (method='chain')")
        if p not in POLICY_CODES:
            raise RulesError(f"unknown policy {p!r} (policies: {', '.join(POLICY_CODES)})")
    if "optimal" in (light, dark) and values is None and optimal is None and r.pieces >= TABLE_FIRST_PIECES:
        from .table import find_table

        if find_table(r) is None:  # an hour's solve is a command of its own, run once, not a side effect
            raise RulesError(f"{r.name} with {r.pieces} pieces: the optimal policy needs the solved table; run "
                             f"`markov-oca ur solve --pieces {r.pieces} --rules {r.name}` first (see docs/ur.md)")


def _kept_bound(r, light, dark, push_only, handed_in, timer):
    """(bound kept beside the saved table by an earlier run or None, whether one is wanted, whether to keep the one
    computed now). Only when the values are the saved table's, not values handed in or solved now."""
    want = push_only and r.pieces >= THROWS_BOUND_PIECES
    keep = want and not handed_in and "optimal" not in timer
    if keep:
        from .table import saved_bound

        bound = saved_bound(r, light, dark, THROWS_BOUND_TOL)
        if bound is not None:
            timer["throws_bound"] = 0.0
            return bound, False, keep
    return None, want, keep


def _bound_entry(bound, kept: bool) -> dict:
    return {"method": "Gauss-Seidel evaluation of the throws to come, loose: an upper bound on them "
                      "from every position" + (" (kept beside the table by an earlier run, which "
                                               f"swept it in {bound.seconds:.0f} s)" if kept else ""),
            "residual": bound.residual, "iterations": bound.sweeps, "bound": bound.bound}


def _push_only_results(light, dark, push, bound, residual, optimal_value):
    """(win, turns, throws, solver entry) from the push alone: the chances are the table's value of the start
    under optimal play by both, else the push's (the mass still in play at the end shared as the last turns'
    endings were)."""
    dist = push.dist
    turns, throws = push.turns, push.throws
    if light == dark == "optimal":
        win = optimal_value
    else:
        last = dist.by_outcome[-20:].sum(axis=0)
        share = float(last[0] / last.sum()) if last.sum() > 0 else 0.5
        win = push.wins[0] + dist.tail * share
    entry = {"method": "forward push of the length distribution (turns and throws summed, the tail "
                       "beyond the last turn extrapolated geometrically)",
             "residual": max(dist.tail, push.tail_turns / max(turns, 1.0)), "iterations": dist.pmf.size - 1}
    if bound is not None:
        # the sums over the turns pushed are lower bounds; what is left (dist.tail: in play and let go) has
        # at most bound.bound turns and throws ahead a unit, so the true value lies within
        # [sum, sum + tail * bound] and the extrapolated one is at most this far from it
        room = dist.tail * bound.bound
        entry["error_bounds"] = {"turns": max(push.tail_turns, room - push.tail_turns),
                                 "throws": max(push.tail_throws, room - push.tail_throws),
                                 # the table's value is the pair's chance (the policy plays greedily on the
                                 # table) to within its Bellman residual times the throws to come
                                 "wins": (residual * bound.bound if residual is not None else None)
                                 if light == dark == "optimal" else dist.tail}
    return win, turns, throws, entry


def _solve_sweeps(r, light, dark, *, tail, progress, optimal, values) -> UrResults:
    """The sweeps: a layered policy evaluation (chances, turns, throws) and the forward push (length).

    From :data:`PUSH_ONLY_PIECES` pieces the evaluation is skipped: the push gives the turns and
    throws (its sums, the tail beyond the last turn extrapolated geometrically), and the chances are
    the table's value of the start under optimal play by both, else the push's (the mass still in play
    at the end shared as the last turns' endings were).
    """
    from .bound import throws_bound
    from .evaluate import evaluate_policies
    from .push import push_lengths
    from .state import space_of
    from .sweeps import check_sweeps_memory

    _check_sweep_policies(r, light, dark, values, optimal)
    push_only = r.pieces >= PUSH_ONLY_PIECES
    check_sweeps_memory(r, 1 if light == dark else 2, light, dark, evaluate=not push_only)
    timer: dict[str, float] = {}
    handed_in = values is not None or optimal is not None  # not the saved table's (nor solved here)
    values, residual = _optimal_values(r, light, dark, optimal, values, timer, progress)
    space = space_of(r.pieces, r.code)
    start = space.rank(0, 0, r.pieces, 0, 0, r.pieces, 0)
    solver = []
    transitions = 0
    if not push_only:
        t0 = time.perf_counter()
        ev = evaluate_policies(r, light, dark, values, progress=progress)
        win, throws, turns = ev.at(start, 0)
        timer["evaluate"] = time.perf_counter() - t0
        transitions = ev.entries
        solver.append({"method": "layered Gauss-Seidel policy evaluation (sweeps)", "residual": ev.change,
                       "iterations": ev.sweeps})
        del ev
    optimal_value = float(values[start]) if values is not None else None
    bound, want_bound, keep = _kept_bound(r, light, dark, push_only, handed_in, timer)
    kept = bound is not None
    shared = want_bound and "random" not in (light, dark)  # the bound swept on the push's own moves
    if want_bound and not shared:
        t0 = time.perf_counter()
        bound = throws_bound(r, light, dark, values, tol=THROWS_BOUND_TOL, progress=progress)
        timer["throws_bound"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    push = push_lengths(r, light, dark, values, tail=min(tail, PUSH_SUMS_TAIL) if push_only else tail,
                        progress=progress, bound_tol=THROWS_BOUND_TOL if shared else None)
    timer["length"] = time.perf_counter() - t1
    timer["length_build"] = push.build_seconds  # of which: the policies' moves built for the push
    if shared:
        bound = push.bound
        timer["throws_bound"] = bound.seconds  # of "length": swept on the moves built for the push
        timer["length"] -= bound.seconds
    if bound is not None:
        if keep and not kept:
            from .table import save_bound

            save_bound(r, light, dark, THROWS_BOUND_TOL, bound)
        solver.append(_bound_entry(bound, kept))
    if push_only:
        win, turns, throws, entry = _push_only_results(light, dark, push, bound, residual, optimal_value)
        transitions = push.entries
        solver.append(entry)
    return UrResults(
        rules=r.name, title=r.title, seed=r.seed, source=r.source, pieces=r.pieces, light=light, dark=dark,
        options=dict(r.options), states=space.size * (1 if light == dark else 2), transitions=transitions,
        wins={"light": win, "dark": 1.0 - win},
        expected={"turns": Expectation(turns, turns), "throws": Expectation(throws, throws)},
        length=summarise_length(push.dist, turns),
        optimal_value=optimal_value,
        optimal_residual=residual,
        positions=space.size,
        solver=solver,
        timings=timer,
    )
