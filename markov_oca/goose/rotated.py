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
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..analysis.chain import Chain, _count_distinct
from ..core.progress import progress_bar
from .forward import forward_pass, turn_columns
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
from .seat_sums import GivenEnd, SeatTotals, expected_landings, given_end, seat_totals

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
                  timer: dict[str, float] | None = None, max_memory: int | None = None):
    """Every figure of ``solve`` for ``model`` from its chain seen from the mover (floating point).

    Winning chances, deadlock, each seat's turns, throws, stakes and places,
    rounds, the length distribution (computed beside the visits' solve, on the
    other core) and the expected landings per seat and square, all from one
    seat-shifted adjoint solve. The chance of ever landing on a square needs one
    N-column solve per square; it is left out (``nan``) and the note says so.

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
            dist, v, report = forward_pass(rc, st, tail)
            box = {"dist": dist, "seconds": time.perf_counter() - t_push}
            th = None
        else:
            th, box = _length_in_thread(rc.chain, tail)
            v, report = visits_block(rc)
        reports = [report]
        tot = seat_totals(rc, v)
        end = given_end(rc, st, v, tot, reports)
        timer["solve"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        landing_list, ever_note = None, ""
        if landings is None or landings:
            landing_list, ever_note = _landings(rc, st, v, end, landings, progress, reports)
            timer["landings"] = time.perf_counter() - t2
        if th is not None:
            th.join()
    if "error" in box:
        raise box["error"]
    timer["length"] = box["seconds"]
    return _results(rc, tot, end, box["dist"], landing_list, ever_note, reports, timer)


def _landings(rc: RotatedChain, st, v: np.ndarray, end: GivenEnd, landings: bool | None, progress: bool,
              reports: list) -> tuple[list, str]:
    """The landings per seat and square (expected; the chances of ever landing from four players when
    ``landings`` is True, :mod:`~markov_oca.goose.rotated_landings`) and the note on those chances."""
    from ..engine.race import Landing

    N, goal = rc.players, rc.model.board.goal
    counts = expected_landings(rc, v, end.dead_seen)
    landing_list = [Landing(a + 1, q, float("nan"), float(counts[a, q])) for a in range(N) for q in range(goal + 1)]
    ever_note = ""
    if N > JOINT_LANDINGS_UPTO:  # the chances of ever landing (rotated_landings), when asked for
        from .rotated_landings import ever_landing
        landing_list, ever_note, ever_rep = ever_landing(rc, st, landing_list, compute=landings is True,
                                                         progress=progress)
        reports += [ever_rep] if ever_rep is not None else []
    return landing_list, ever_note


def _seats(rc: RotatedChain, tot: SeatTotals, end: GivenEnd) -> list:
    """Each seat's result: its chance, places, and expected turns, throws and stakes (in all, given the end)."""
    from ..analysis.results import Expectation
    from ..engine.race import SeatResult

    g = end.given
    seats = []
    for a in range(rc.players):
        if rc.place.shape[0] > 1 and rc.players > 1:
            pl = [float(tot.places[a, k - 1]) for k in range(1, rc.players)] + [float(tot.wins[a])]
            win = pl[0]
        else:
            pl, win = None, float(tot.wins[a])
        stakes = Expectation(float("inf") if end.inf_stakes[a] else float(tot.stakes[a]), float(g.stakes[a]))
        seats.append(SeatResult(
            seat=a + 1, win=win, places=pl,
            turns=Expectation(float("inf") if end.inf_turns[a] else float(tot.turns[a]), float(g.turns[a])),
            throws=Expectation(float("inf") if end.inf_throws[a] else float(tot.throws[a]), float(g.throws[a])),
            stakes=stakes if rc.stake.shape[0] > 1 else None))
    return seats


def _results(rc: RotatedChain, tot: SeatTotals, end: GivenEnd, dist, landing_list: list | None, ever_note: str,
             reports: list, timer: dict[str, float]):
    """The :class:`~markov_oca.results.SolveResults` of a rotated solve."""
    from ..analysis.results import Expectation, summarise_length
    from ..engine.race import SolveResults

    model, chain, N, n_states = rc.model, rc.chain, rc.players, rc.n_states
    rules, g = model.rules, end.given

    def ex(total: float, given: float, infinite: bool) -> Expectation:
        return Expectation(float("inf") if infinite else float(total), float(given))

    expected = {
        "turns": ex(tot.turns.sum(), g.turns.sum(), end.inf_turns.any()),
        "rounds": ex(tot.rounds[0], g.rounds[0], end.inf_rounds),
        "throws": ex(tot.throws.sum(), g.throws.sum(), end.inf_throws.any()),
    }
    names = model.outcome_names()
    note = (f"solved on the chain seen from the player to move: {n_states:,} states for the {N} seats' "
            f"{N * n_states:,} joint ones (transitions counted with their seat shift)")
    landings_note = ""
    if landing_list is not None:
        landings_note = (
            "chance of ever landing not computed on the chain seen from the mover; ask for it with --landings "
            "(the joint chain: one block solve, a column per square and seat)" if N <= JOINT_LANDINGS_UPTO else
            ever_note)
    length = summarise_length(dist, expected["turns"].given_end)
    length.never_ends = float(end.deadlock)  # the solve's, as the joint chain gives it (the pass misses its tail)
    return SolveResults(
        rules=rules.name, title=rules.title, seed=rules.seed, source=rules.source, players=N,
        options=dict(rules.options), states=chain.n, transitions=int(_count_distinct(chain.next, rc.shift)),
        exact=False, outcomes={names[a]: float(tot.wins[a]) for a in range(N)}, deadlock=end.deadlock,
        seats=_seats(rc, tot, end), expected=expected, length=length,
        landings=landing_list, landings_note=landings_note, special_squares=special_squares(rules),
        solver=[{"method": r.method, "residual": r.residual, "iterations": r.iterations} for r in reports],
        timings=timer, note=note,
    )
