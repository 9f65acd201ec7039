"""The goose race seen from the player to move: one state for every N joint states.

A joint state is the seat to move and every player's local state. Rotating the
seats so that the mover comes first forgets only *which* seat moves, and the
rules do not care (turns go round in order, every interaction is the same for
every seat), so the chain of rotated states is the joint chain's quotient by
the cyclic shift of the seats: about 1/N of its states. A rotated state is
numbered in mixed radix with the mover's local state first::

    id = l_0 + L * (l_1 + L * (...))      (l_k: the k-th player after the mover)

Each branch keeps its *seat shift*: 0 for another throw, 1 when the next seat
moves, more when finished seats are skipped (``until = "last"``); an outcome
is named relative to the mover. Everything per seat is then a block of N
columns (column ``a``: seat ``a`` moves in that state) whose columns the shift
permutes along each branch: the expected visits are one such block from one
adjoint solve (:func:`markov_oca.solve.shifted_adjoint_solve`), and every
seat's chance to win, turns, throws, stakes, places and landings are sums over
it. Quantities that do not depend on the seat (the length of the game, the
chance that it ends) are plain single-column analyses of the rotated chain.

Every figure carries a certified error bound (:func:`~markov_oca.engine.certified.block_figures`:
the block's true residual, summed over each state's seats, against the expected steps of the
rotated chain, one forward column; a second when the game can deadlock), checked against the
relative ``precision``; when one misses it, the block is refined, and when one still misses it the
solve is refused in one line (the chain is far beyond the exact route).
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..analysis.bounds import PRECISION, clip_probability, meets
from ..analysis.chain import Chain, _count_distinct
from ..analysis.results import Expectation, certify_length, summarise_length
from ..core.errors import SolverError
from ..core.memory import available_memory, gib
from ..core.progress import progress_bar
from ..engine.certified import RaceFigures, block_figures, refine_block
from ..engine.race import Landing, SeatResult, SolveResults, bounds_tree, check_sum, why_uncertified
from ..linalg.certify import SLACK, gamma
from .forward import VISITS_L1, forward_pass, turn_columns
from .model import GooseModel
from .rotated_chain import (
    RotatedChain,
    build_rotated,
    check_rotated_memory,
    rotated_estimate,
    rotated_phases,
    rotated_structure,
    visits_block,
)
from .rules import special_squares
from .seat_sums import expected_landings, infinite_totals

__all__ = ["JOINT_LANDINGS_UPTO", "RotatedChain", "build_rotated", "check_rotated_memory", "forward_pass",
           "rotated_estimate", "rotated_phases", "rotated_structure", "solve_rotated", "turn_columns",
           "visits_block"]

JOINT_LANDINGS_UPTO = 3  # players up to which landings=True takes the joint chain (goose.solve), for the chances


def _length_in_thread(chain: Chain, tail: float) -> tuple[threading.Thread, dict]:
    """The length distribution (one column, the seat does not matter) on the other core."""
    box: dict = {}

    def run() -> None:
        t0 = time.perf_counter()
        try:
            box["dist"] = chain.length_distribution(tail=tail)
        except BaseException as exc:  # handed back to the caller
            box["error"] = exc
        box["seconds"] = time.perf_counter() - t0

    th = threading.Thread(target=run, name="length", daemon=True)
    th.start()
    return th, box



def solve_rotated(model: GooseModel, *, landings: bool | None = None, tail: float = 1e-10, progress: bool = False,
                  timer: dict[str, float] | None = None, max_memory: int | None = None,
                  precision: float = PRECISION):
    """Every figure of ``solve`` for ``model`` from its chain seen from the mover (floating point).

    Winning chances, deadlock, each seat's turns, throws, stakes and places,
    rounds, the length distribution (computed beside the visits' solve, on the
    other core) and the expected landings per seat and square, all from one
    seat-shifted adjoint solve, each with its certified error bound. The chance of ever landing on a
    square needs one N-column solve per square; it is left out (``nan``) and the note says so.

    Parameters
    ----------
    model:
        The rule set and number of players.
    landings:
        None: the expected landings; True: the chances of ever landing as well (from four players, see
        :mod:`~markov_oca.goose.rotated_landings`); False: no landings.
    tail:
        The length distribution is carried until this mass is left.
    progress:
        Progress bars on stderr.
    timer:
        Filled with the seconds each phase took.
    max_memory:
        Bytes this may use (default: what is at hand).
    precision:
        The relative precision every figure's certified bound must meet.

    Raises
    ------
    SolverError
        A figure whose bound misses ``precision`` even after the refinement.
    """
    timer = {} if timer is None else timer
    t0 = time.perf_counter()
    rc = build_rotated(model, progress=progress, max_memory=max_memory)
    if landings is True and model.players > JOINT_LANDINGS_UPTO:
        from .rotated_landings import check_landings_cost

        check_landings_cost(rc, max_memory)  # hours of work, or more memory than here, refused before the pass
    timer["build"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    st = rotated_structure(rc)
    with progress_bar(progress) as bar:
        bar.add_task(f"solving {rc.n_states:,} states seen from the mover ({model.players} seats each)", total=None)
        if turn_columns(rc):
            # the seat to move on turn t is t mod N: one push a turn gives the length and the visits
            t_push = time.perf_counter()
            dist, v, report = forward_pass(rc, st, tail, l1=min(VISITS_L1, max(precision * 1e-3, 1e-12)))
            box = {"dist": dist, "seconds": time.perf_counter() - t_push}
            th = None
        else:
            th, box = _length_in_thread(rc.chain, tail)
            v, report = visits_block(rc)
        reports = [{"method": report.method, "residual": report.residual, "iterations": report.iterations}]
        infinite, dead_seen = infinite_totals(rc, st, v)
        specs = _reward_specs(rc)
        given = [k for k in specs if not k.startswith("place")]
        want = landings is None or landings
        route = ""
        for attempt in range(2):
            t_bounds = time.perf_counter()
            fig = block_figures(rc.chain, rc.shift, v, specs, given, model.outcome_names(), infinite)
            timer["bounds"] = timer.get("bounds", 0.0) + time.perf_counter() - t_bounds
            failed = fig.misses(precision)
            landing_list = landing_bounds = None
            if want:
                t2 = time.perf_counter()
                landing_list, landing_bounds = _expected_landings(rc, v, dead_seen, fig)
                failed += [f"landings of seat {x.seat} on {x.square}" for x, b in zip(landing_list, landing_bounds,
                                                                                      strict=True)
                           if np.isfinite(x.expected) and not meets(x.expected, b["expected"], precision)]
                timer["landings"] = time.perf_counter() - t2
            # the refinement's seat-shifted solve: its split matrix (13 bytes a branch) and 17 blocks of N columns
            refine_bytes = int((rc.chain.next >= 0).sum()) * 13 + rc.chain.n * 8 * rc.players * 17
            if not failed or attempt or refine_bytes > available_memory():
                break
            t_refine = time.perf_counter()
            v, rep = refine_block(rc.chain, rc.shift, v, precision * 1e-3)
            timer["refine"] = time.perf_counter() - t_refine
            reports.append(rep)
            route = "the visits solved again with iterative refinement"
        reports[-1]["residual_bound"] = fig.visits.mass
        rc.chain.__dict__.pop("system", None)  # the forward column's solver: not needed again, its memory let go
        if failed:
            raise SolverError(f"no bound under {precision:g} (relative) for {', '.join(failed[:3])} "
                              f"({why_uncertified(fig)}) on the chain seen from the mover, {rc.n_states:,} states, "
                              "beyond the exact route: ask a looser --precision"
                              + ("" if route else f" (refining it would take about {gib(refine_bytes)}, more than "
                                                  f"the {gib(available_memory())} available)"))
        timer["solve"] = time.perf_counter() - t1
        ever_note = ""
        if want and model.players > JOINT_LANDINGS_UPTO:  # the chances of ever landing (rotated_landings), when asked
            from .rotated_landings import ever_landing
            t3 = time.perf_counter()
            landing_list, ever_note, ever_rep = ever_landing(rc, st, landing_list, compute=landings is True,
                                                             progress=progress)
            if ever_rep is not None:
                reports.append({"method": ever_rep.method, "residual": ever_rep.residual,
                                "iterations": ever_rep.iterations})
                bound = fig.visits.norm * ever_rep.residual * SLACK
                _chance_bounds(landing_list, landing_bounds, bound)
                missed = [x for x, b in zip(landing_list, landing_bounds, strict=True)
                          if np.isfinite(x.chance) and not meets(x.chance, b["chance"], precision)]
                if missed:
                    x = missed[0]
                    raise SolverError(f"no bound under {precision:g} (relative) for the chance of seat {x.seat} ever "
                                      f"landing on {x.square} ({bound:.2g}: ||N||_inf times the landing solve's "
                                      "residual): ask a looser --precision")
            timer["landings"] += time.perf_counter() - t3
        if th is not None:
            th.join()
    if "error" in box:
        raise box["error"]
    timer["length"] = box["seconds"]
    res = _results(rc, fig, box["dist"], landing_list, ever_note, reports + fig.reports, timer)
    res.bounds = bounds_tree(fig, rc.players, res, landing_bounds)
    res.precision, res.route = precision, route
    check_sum(res)
    return res


def _reward_specs(rc: RotatedChain) -> dict:
    """Every reward whose expected total ``solve`` reports, as :func:`~markov_oca.engine.certified.block_figures`
    takes them: name -> (values, seats), the game's in every column, each seat's in its own; a round starts
    with the turn of seat ``a <= lead`` (the first seat still in play)."""
    chain, N = rc.chain, rc.players
    turns, throws = chain.turn_start, chain.branch_rewards["throws"]
    specs = {"turns": (turns, None), "rounds": (turns, np.arange(N)[None, :] <= rc.lead[:, None]),
             "throws": (throws, None)}
    places = {k: rc.place == k for k in range(1, N)} if rc.place.shape[0] > 1 and N > 1 else {}
    for a in range(N):
        specs[f"turns@{a}"] = (turns, a)
        specs[f"throws@{a}"] = (throws, a)
        if rc.stake.shape[0] > 1:
            specs[f"stakes@{a}"] = (rc.stake, a)
        for k, at in places.items():
            specs[f"place{k}@{a}"] = (at, a)
    return specs


def _expected_landings(rc: RotatedChain, v: np.ndarray, dead_seen: np.ndarray | None,
                       fig: RaceFigures) -> tuple[list, list]:
    """The expected landings per seat and square, and their bounds: read from the visits, one landing at most
    a step (so bounded as an expected total), the sums off by ``gamma`` of their terms; a landing no (state,
    seat) pair with visits makes is 0, exactly (the sums add nothing else). The chances of ever landing are
    left out (``nan``)."""
    N, goal, steps = rc.players, rc.model.board.goal, fig.visits.steps
    counts, reached = expected_landings(rc, v, dead_seen)
    # a count sums, for each (square, branch) key, one term per state on the square, then over the keys
    keys = rc.model.board.branches * goal
    sums = float(gamma(int(np.bincount(rc.square[:rc.n_states]).max(initial=0)) + 3 + keys))
    out, bounds = [], []
    for a in range(N):
        for q in range(goal + 1):
            x = float(counts[a, q])
            b = 0.0 if (np.isinf(x) or not reached[a, q]) else (steps + sums * abs(x)) * SLACK
            out.append(Landing(a + 1, q, float("nan"), x))
            bounds.append({"chance": None, "expected": b})
    return out, bounds


def _chance_bounds(landing_list: list, landing_bounds: list[dict], bound: float) -> None:
    """The bound of each chance of ever landing computed (a forward solve: ``||N||_inf`` times its residual; 0 where
    the expected landings are 0 exactly)."""
    for x, b in zip(landing_list, landing_bounds, strict=True):
        if np.isfinite(x.chance) and x.expected == 0.0 and b["expected"] == 0.0:
            x.chance, b["chance"] = 0.0, 0.0  # no pair with visits lands there: never, exactly
        elif np.isfinite(x.chance):
            x.chance = clip_probability(float(x.chance), bound)
            b["chance"] = bound


def _seats(rc: RotatedChain, fig: RaceFigures) -> list:
    """Each seat's result: its chance, places, and expected turns, throws and stakes (in all, given the end)."""
    names = list(fig.outcomes)
    seats = []
    for a in range(rc.players):
        win = fig.outcomes[names[a]][0]
        pl = None
        if rc.place.shape[0] > 1 and rc.players > 1:
            pl = [fig.totals[f"place{k}@{a}"][0] for k in range(1, rc.players)] + [win]
            win = pl[0]
        seats.append(SeatResult(seat=a + 1, win=win, places=pl, turns=_expectation(fig, f"turns@{a}"),
                                throws=_expectation(fig, f"throws@{a}"),
                                stakes=_expectation(fig, f"stakes@{a}") if rc.stake.shape[0] > 1 else None))
    return seats


def _expectation(fig: RaceFigures, name: str) -> Expectation:
    """A total and its value given the end, as the certified figures give them."""
    return Expectation(fig.totals[name][0], fig.given.get(name, (float("nan"), None))[0])


def _results(rc: RotatedChain, fig: RaceFigures, dist, landing_list: list | None, ever_note: str, reports: list,
             timer: dict[str, float]):
    """The :class:`~markov_oca.results.SolveResults` of a rotated solve (its bounds set by the caller)."""
    model, chain, N, n_states = rc.model, rc.chain, rc.players, rc.n_states
    rules = model.rules
    expected = {k: _expectation(fig, k) for k in ("turns", "rounds", "throws")}
    note = (f"solved on the chain seen from the player to move: {n_states:,} states for the {N} seats' "
            f"{N * n_states:,} joint ones (transitions counted with their seat shift)")
    landings_note = ""
    if landing_list is not None:
        landings_note = (
            "chance of ever landing not computed on the chain seen from the mover; ask for it with --landings "
            "(the joint chain: one block solve, a column per square and seat)" if N <= JOINT_LANDINGS_UPTO else
            ever_note)
    length = summarise_length(dist, expected["turns"].given_end)
    certify_length(length, dist, fig.given["turns"][1], fig.deadlock)
    return SolveResults(
        rules=rules.name, title=rules.title, seed=rules.seed, source=rules.source, players=N,
        options=dict(rules.options), states=chain.n, transitions=int(_count_distinct(chain.next, rc.shift)),
        exact=False, outcomes={k: x for k, (x, _) in fig.outcomes.items()}, deadlock=fig.deadlock[0],
        seats=_seats(rc, fig), expected=expected, length=length,
        landings=landing_list, landings_note=landings_note, special_squares=special_squares(rules),
        solver=reports, timings=timer, note=note,
    )
