"""A pair of Ur policies solved: each side's chance to win, turns, throws, length.

Up to :data:`CHAIN_PIECES` pieces a side the pair is a :class:`~markov_oca.chain.Chain`
(``ur_chain``) and its analyses; above that, or with ``method="sweeps"``, it is solved by
sweeps over the ranked positions (:mod:`.sweeps`): below :data:`PUSH_ONLY_PIECES` a layered
policy evaluation for the chances, turns and throws and a forward push of the length
distribution; from there (or with ``method="push"``) the push alone, which also sums the turns
and throws. They give the same figures where both run (tests/test_ur_full.py, tests/test_ur_push.py),
and every route's figures carry certified error bounds (:mod:`.sweepbounds` for the sweeps).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from ..analysis.bounds import PRECISION, meets
from ..analysis.chain import Chain
from ..analysis.results import Expectation, certify_length, length_summary, summarise_length
from ..core.errors import SolverError
from ..core.progress import progress_bar
from ..linalg.certify import SLACK, U
from .results import UrResults

#: Largest number of pieces a side solved as a chain by default (the sweeps take over above).
CHAIN_PIECES = 3
#: From this many pieces the optimal values are not solved on the way: the table must be saved first.
TABLE_FIRST_PIECES = 6
#: From this many pieces a pair of policies is solved by the forward push alone (no policy evaluation):
#: at four pieces random against greedy the evaluation took 65 s of the 107, the push 41 s.
PUSH_ONLY_PIECES = 4
#: The push's sums give the turns and throws from PUSH_ONLY_PIECES pieces: it is carried to this tail at
#: least, whatever the length distribution asks (the tail beyond is extrapolated). With a looser tail asked,
#: the turns and throws (and each side's chance, but for the table's optimal pair) are swept instead
#: (:func:`.bound.sums_on_tables`) and the push stops at that tail.
PUSH_SUMS_TAIL = 1e-10
#: From this many pieces ``ur solve`` sweeps the optimal pair's bound on the throws to come
#: (:func:`.bound.throws_bound`) and keeps it beside the table, for the push's bounds (:mod:`.sweepbounds`)
#: of ``solve ur`` to read back.
THROWS_BOUND_PIECES = PUSH_ONLY_PIECES
#: The loose evaluation's relative change per layer: the bound is then within 1% of the largest throws.
THROWS_BOUND_TOL = 1e-4
#: The layered evaluation's change per layer, and the one it is swept to again when a bound misses the precision.
EVALUATE_TOL = 1e-11
EVALUATE_REFINE_TOL = 1e-14


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
    method : {"auto", "chain", "sweeps", "push"}
        ``"auto"``: the chain up to ``CHAIN_PIECES`` pieces, or when ``chain`` is given or a
        policy is a callable; the sweeps above. ``"push"``: the forward push alone (the route of
        the sweeps from ``PUSH_ONLY_PIECES`` pieces) at any number of pieces.
    values : array, optional
        The optimal table itself (for instance memory-mapped from a file saved by
        ``markov-oca ur solve``). Without it or ``optimal``, a table saved for these rules is
        used when there is one.
    precision : float
        The relative precision every figure's certified error bound must meet, on every route.

    Returns
    -------
    UrResults

    Raises
    ------
    RulesError
        Bad rules or options, or an unknown ``method``.
    SolverError
        No bound within ``precision`` could be had (the text names what would work).

    Examples
    --------
    >>> r = solve_ur("ur", "optimal", "random", options={"pieces": 2})
    >>> round(float(r.wins["light"]), 4)
    0.755
    """
    from ..core.errors import RulesError
    from .rules import UrRules, load_ur

    r = rules if isinstance(rules, UrRules) else load_ur(rules, options or {})
    if method not in ("auto", "chain", "sweeps", "push"):
        raise RulesError(f"method {method!r}: auto, chain, sweeps or push")
    if method == "auto":
        simple = all(isinstance(p, str) for p in (light, dark))
        method = "chain" if (chain is not None or not simple or r.pieces <= CHAIN_PIECES) else "sweeps"
    if method in ("sweeps", "push"):
        return _solve_sweeps(r, light, dark, tail=tail, progress=progress, optimal=optimal, values=values,
                             precision=precision, push_only=True if method == "push" else None)
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
                  "optimal_value": _optimal_bound(fig, residual, light, dark, values, len(r.throws))}
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


def _optimal_bound(fig, residual: float | None, light, dark, values, throws: int) -> float | None:
    """How far the optimal table's value of the start is from the chance of the pair that plays the table's moves
    (:func:`.sweepbounds.optimal_bound`), the expected throws from the start certified from the chain's forward
    column of expected steps (:func:`~markov_oca.analysis.bounds.upper_steps`). None for another pair (its
    chain is not the optimal pair's) or without a residual.
    """
    from .sweepbounds import optimal_bound

    if values is None or residual is None or not light == dark == "optimal" or fig.visits is None:
        return None
    steps = float(fig.visits.t_up[fig.forward_init]) if fig.forward_init is not None else float("inf")
    return optimal_bound(residual, steps, throws)


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


def _kept_bound(r, light, dark, handed_in, timer):
    """(bound kept beside the saved table by an earlier run or None, whether to keep the one computed now). Only
    when the values are the saved table's, not values handed in or solved now."""
    keep = not handed_in and "optimal" not in timer
    if keep:
        from .table import saved_bound

        bound = saved_bound(r, light, dark, THROWS_BOUND_TOL)
        if bound is not None:
            timer["throws_bound"] = 0.0
            return bound, False
    return None, keep


def _bound_entry(bound, kept: bool) -> dict:
    return {"method": "Gauss-Seidel evaluation of the throws to come, loose: an upper bound on them "
                      "from every position" + (" (kept beside the table by an earlier run, which "
                                               f"swept it in {bound.seconds:.0f} s)" if kept else ""),
            "residual": bound.residual, "iterations": bound.sweeps, "bound": bound.bound}


def _misses(figures: dict[str, tuple[float, float]], precision: float) -> list[str]:
    """The figures (name -> (value, bound)) whose bound misses the relative ``precision``."""
    return [k for k, (x, b) in figures.items() if not meets(x, b, precision)]


def sums_meet(sums, precision: float) -> bool:
    """Whether swept sums (a :class:`.bound.TableSums`) meet the relative ``precision``: the throws and turns,
    and each side's chance when they were swept."""
    ok = meets(sums.throws, sums.throws_bound, precision) and meets(sums.turns, sums.turns_bound, precision)
    return ok if math.isnan(sums.win) else ok and chances_meet(sums, precision)


def chances_meet(sums, precision: float) -> bool:
    """Whether each side's swept chance (light's ``sums.win``, dark's its complement) meets ``precision``."""
    return meets(sums.win, sums.win_bound, precision) and meets(1.0 - sums.win, sums.win_bound + 2 * U, precision)


def _refused(precision: float, failed: list[str], how: str) -> SolverError:
    return SolverError(f"no bound under {precision:g} (relative) for {', '.join(failed[:3])} ({how}): ask a looser "
                       "--precision, or the chain's route (up to 3 pieces a side)")


def _evaluated(r, light, dark, values, start, precision, progress, timer):
    """The layered evaluation's (figures, bound on the throws from the start, solver entry, entries, route),
    swept again to :data:`EVALUATE_REFINE_TOL` when a bound misses ``precision``, else refused."""
    from .evaluate import evaluate_policies

    route = ""
    for tol in (EVALUATE_TOL, EVALUATE_REFINE_TOL):
        t0 = time.perf_counter()
        ev = evaluate_policies(r, light, dark, values, tol=tol, progress=progress)
        timer["evaluate"] = timer.get("evaluate", 0.0) + time.perf_counter() - t0
        (win, throws, turns), (bw, by, bz) = ev.at(start, 0), ev.bounds(start, 0)
        figures = {"P(light wins)": (win, bw), "P(dark wins)": (1.0 - win, bw + 2 * U),
                   "E[turns]": (turns, bz), "E[throws]": (throws, by)}
        steps = (throws + by) * SLACK  # the throws to come from the start, at most
        entry = {"method": "layered Gauss-Seidel policy evaluation (sweeps)", "residual": ev.change,
                 "iterations": ev.sweeps, "residual_bound": max(ev.residual)}
        failed = _misses(figures, precision)
        if not failed:
            return figures, steps, entry, ev.entries, route
        route = f"the evaluation swept again to a change of {EVALUATE_REFINE_TOL:g}"
        del ev
    raise _refused(precision, failed, f"the evaluation's residual, swept to {EVALUATE_REFINE_TOL:g}")


def _pushed(r, light, dark, values, *, tail, progress, timer, bound_tol, sums_precision=None, sums_win=False,
            on_sums=None):
    from .push import push_lengths

    t1 = time.perf_counter()
    push = push_lengths(r, light, dark, values, tail=tail, progress=progress, bound_tol=bound_tol,
                        sums_precision=sums_precision, sums_win=sums_win, on_sums=on_sums)
    timer["length"] = timer.get("length", 0.0) + time.perf_counter() - t1
    timer["length_build"] = timer.get("length_build", 0.0) + push.build_seconds
    return push


def _push_figures(push, ceiling, r, light, dark, residual, optimal_value):
    """The push's figures (name -> (value, bound)), the table's value of the start for optimal against optimal
    when its bound is the smaller (it is the chance of the pair that plays the table's moves, within the Bellman
    residual times the throws to come)."""
    from .sweepbounds import optimal_bound, push_figures

    pf = push_figures(push, ceiling, r)
    light_w, dark_w = pf.light, pf.dark
    if light == dark == "optimal" and optimal_value is not None:
        ob = optimal_bound(residual, ceiling, len(r.throws))
        if ob is not None and ob < pf.light[1]:
            light_w, dark_w = (optimal_value, ob), (1.0 - optimal_value, ob + 2 * U)
    return pf, {"P(light wins)": light_w, "P(dark wins)": dark_w, "E[turns]": pf.turns, "E[throws]": pf.throws}


def _push_only(r, light, dark, values, residual, optimal_value, handed_in, tail, precision, progress, timer, solver):
    """The push alone: (push, figures, bound on the throws from the start, rounding of its masses, mass let go,
    route), carried on to a smaller tail when a bound misses ``precision``, else refused. The bound on the throws
    to come is read beside the saved table, or swept on the push's moves (deterministic pairs), or by the layered
    evaluation (a ``random`` side); its entry and the push's go into ``solver``."""
    from .bound import throws_bound
    from .sweepbounds import moves_a_throw, throws_ceiling

    random = "random" in (light, dark)
    if tail > PUSH_SUMS_TAIL:
        return _swept_sums(r, light, dark, values, residual, optimal_value, handed_in, tail, precision, progress,
                           timer, solver)
    bound, keep = _kept_bound(r, light, dark, handed_in, timer)
    kept = bound is not None
    shared = bound is None and not random  # the bound swept on the push's own moves
    if bound is None and random:
        t0 = time.perf_counter()
        bound = throws_bound(r, light, dark, values, tol=THROWS_BOUND_TOL, progress=progress)
        timer["throws_bound"] = time.perf_counter() - t0
    push_tail = min(tail, PUSH_SUMS_TAIL)
    push = _pushed(r, light, dark, values, tail=push_tail, progress=progress, timer=timer,
                   bound_tol=THROWS_BOUND_TOL if shared else None)
    if shared:
        bound = push.bound
        timer["throws_bound"] = bound.seconds  # of "length": swept on the moves built for the push
        timer["length"] -= bound.seconds
    if keep and not kept:
        from .table import save_bound

        save_bound(r, light, dark, THROWS_BOUND_TOL, bound)
    solver.append(_bound_entry(bound, kept))
    ceiling = throws_ceiling(bound.largest, bound.residual, len(r.throws), moves_a_throw(r, random))
    if not math.isfinite(ceiling):
        raise _refused(precision, ["E[turns]", "E[throws]"], f"no bound on the throws to come: the loose "
                       f"evaluation's residual {bound.residual:.2g}")
    pf, figures = _push_figures(push, ceiling, r, light, dark, residual, optimal_value)
    failed = _misses(figures, precision)
    route = ""
    if failed:  # push on until what is left, worth at most `ceiling` throws a unit, meets the precision
        need = min(abs(x) for x, _ in figures.values() if x) * precision / 4
        push_tail = min(push_tail * 1e-2, need / max(ceiling, 1.0))
        push = _pushed(r, light, dark, values, tail=push_tail, progress=progress, timer=timer, bound_tol=None)
        pf, figures = _push_figures(push, ceiling, r, light, dark, residual, optimal_value)
        failed = _misses(figures, precision)
        if failed:
            raise _refused(precision, failed, f"pushed to a tail of {push_tail:.1e}, the rounding of its "
                           f"masses {pf.rounding:.1e} relative")
        route = f"the push carried on to a tail of {push_tail:.1e}"
    solver.append({"method": "forward push of the length distribution (turns and throws summed, the tail "
                             "beyond the last turn extrapolated geometrically)",
                   "residual": float(push.dist.tail), "iterations": push.dist.pmf.size - 1})
    return push, figures, ceiling, pf.rounding, pf.lost, route


def _swept_sums(r, light, dark, values, residual, optimal_value, handed_in, tail, precision, progress, timer,
                solver):
    """:func:`_push_only`'s figures with the expected turns and throws swept on the push's moves
    (:func:`.bound.sums_on_tables`) and the push carried only to ``tail``, for the distribution (a tail looser
    than :data:`PUSH_SUMS_TAIL`). Each side's chance is swept with them, except optimal against optimal with the
    table's residual known: then it is the table's."""
    from .table import save_bound, save_sums, saved_sums

    table_chance = light == dark == "optimal" and residual is not None
    saved = not handed_in and "optimal" not in timer  # the saved table's: what is swept is kept beside it
    kept = saved_sums(r, light, dark, not table_chance, lambda s: sums_meet(s, precision)) if saved else None

    def keep(swept, bound):  # as soon as they are swept: a push stopped later does not lose them
        save_bound(r, light, dark, THROWS_BOUND_TOL, bound)
        save_sums(r, light, dark, not table_chance, swept)

    push = _pushed(r, light, dark, values, tail=tail, progress=progress, timer=timer, bound_tol=None,
                   sums_precision=None if kept is not None else precision, sums_win=not table_chance,
                   on_sums=keep if saved and kept is None else None)
    sums = kept if kept is not None else push.sums
    if kept is not None:
        timer["sums"] = 0.0
    else:
        timer["sums"] = sums.seconds
        timer["length"] -= sums.seconds
    pf, figures = _push_figures(push, sums.ceiling, r, light, dark, residual, optimal_value)
    figures["E[turns]"] = (sums.turns, sums.turns_bound)
    figures["E[throws]"] = (sums.throws, sums.throws_bound)
    what = "the expected throws and turns"
    if not table_chance:
        figures["P(light wins)"] = (sums.win, sums.win_bound)
        figures["P(dark wins)"] = (1.0 - sums.win, sums.win_bound + 2 * U)
        what = "each side's chance, the expected throws and turns"
    solver.append({"method": f"Gauss-Seidel sweeps of {what} to come on the policies' moves (the push's order)"
                             + (f" (kept beside the table by an earlier run, which swept them in {sums.seconds:.0f} s)"
                                if kept is not None else ""),
                   "residual": max(sums.residual), "iterations": sums.sweeps, "change": sums.change,
                   "bound": sums.ceiling})
    failed = _misses(figures, precision)
    if failed:
        raise _refused(precision, failed, f"the sums swept to a change of {sums.change:.1e}, the push to "
                       f"a tail of {tail:.1e}")
    solver.append({"method": "forward push of the length distribution", "residual": float(push.dist.tail),
                   "iterations": push.dist.pmf.size - 1})
    return push, figures, sums.ceiling, pf.rounding, pf.lost, ""


def _solve_sweeps(r, light, dark, *, tail, progress, optimal, values, precision=PRECISION,
                  push_only: bool | None = None) -> UrResults:
    """The sweeps: a layered policy evaluation (chances, turns, throws) and the forward push (length); from
    :data:`PUSH_ONLY_PIECES` pieces (or with ``push_only``) the push alone, which also sums the turns and throws.

    Every figure carries a certified bound (:mod:`.sweepbounds`): the evaluation's by its true residual times
    the throws to come; the push's by what it leaves (in play and let go) times a certified bound on the
    throws to come from any position (:mod:`.bound`), plus the rounding of its masses. A bound that misses
    ``precision`` sends the evaluation to sweep again to a smaller change, the push to run to a smaller tail;
    then the solve is refused.
    """
    from .state import space_of
    from .sweepbounds import optimal_bound, push_losses
    from .sweeps import check_sweeps_memory

    _check_sweep_policies(r, light, dark, values, optimal)
    push_only = r.pieces >= PUSH_ONLY_PIECES if push_only is None else push_only
    swept = push_only and tail > PUSH_SUMS_TAIL  # the sums (and chances) swept on the push's moves
    timer: dict[str, float] = {}
    handed_in = values is not None or optimal is not None  # not the saved table's (nor solved here)
    check_sweeps_memory(r, 1 if light == dark else 2, light, dark,
                        evaluate=not push_only or ("random" in (light, dark) and not swept),
                        sums=3 if swept else 0)
    values, residual = _optimal_values(r, light, dark, optimal, values, timer, progress)
    space = space_of(r.pieces, r.code)
    start = space.rank(0, 0, r.pieces, 0, 0, r.pieces, 0)
    optimal_value = float(values[start]) if values is not None else None
    solver: list[dict] = []
    if not push_only:
        figures, steps, entry, transitions, route = _evaluated(r, light, dark, values, start, precision, progress,
                                                               timer)
        solver.append(entry)
        push = _pushed(r, light, dark, values, tail=tail, progress=progress, timer=timer, bound_tol=None)
        rounding, lost = push_losses(push, r)
    else:
        push, figures, steps, rounding, lost, route = _push_only(r, light, dark, values, residual, optimal_value,
                                                                 handed_in, tail, precision, progress, timer, solver)
        transitions = push.entries
    ob = optimal_bound(residual, steps, len(r.throws)) if light == dark == "optimal" else None
    dist = push.dist
    dist.rounding = rounding
    turns, throws = figures["E[turns]"], figures["E[throws]"]
    length = summarise_length(dist, turns[0])
    # the game ends with probability 1 (the throws to come are bounded): no deadlock
    certify_length(length, dist, turns[1], (0.0, 0.0), absolute=lost)
    res = UrResults(
        rules=r.name, title=r.title, seed=r.seed, source=r.source, pieces=r.pieces, light=light, dark=dark,
        options=dict(r.options), states=space.size * (1 if light == dark else 2), transitions=transitions,
        wins={"light": figures["P(light wins)"][0], "dark": figures["P(dark wins)"][0]},
        expected={"turns": Expectation(turns[0], turns[0]), "throws": Expectation(throws[0], throws[0])},
        length=length,
        optimal_value=optimal_value,
        optimal_residual=residual,
        positions=space.size,
        solver=solver,
        timings=timer,
        precision=precision, route=route,
    )
    res.bounds = {"wins": {"light": figures["P(light wins)"][1], "dark": figures["P(dark wins)"][1]},
                  "expected": {k: {"total": figures[f"E[{k}]"][1], "given_end": figures[f"E[{k}]"][1]}
                               for k in ("turns", "throws")},
                  "length": length.bounds,
                  "optimal_value": ob}
    return res
