"""Results of a race between seats: each seat's chance to win, the deadlock, expected totals, landings.

Any family whose chain has seats that move in turn (the goose boards, a user's own race)
fills a :class:`SolveResults` with :func:`analyse`; the command line prints its
:meth:`SolveResults.text` and the JSON output is its ``to_dict()`` (``docs/json.md``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.bounds import PRECISION, clip_probability, meets, rounded
from ..analysis.chain import Chain
from ..analysis.exact import DENSE_LIMIT, ExactChain
from ..analysis.results import (
    SCHEMA,
    Expectation,
    LengthSummary,
    Number,
    certify_length,
    html_table,
    length_frame,
    length_summary,
    number,
    pandas,
)
from ..core.errors import SolverError
from ..core.text import option_text
from ..linalg.certify import SLACK, U, gamma
from .certified import RaceFigures, race_figures
from .text import bounds_line, fmt, without_pmf

LANDING_LIMIT = 20_000  # states up to which landing chances are computed unless asked


@dataclass
class SeatResult:
    seat: int
    win: Number
    turns: Expectation
    throws: Expectation
    stakes: Expectation | None = None
    places: list[Number] | None = None  # places[k] = chance of finishing in place k + 1

    def to_dict(self) -> dict:
        return {
            "seat": self.seat,
            "win": number(self.win),
            "turns": self.turns.to_dict(),
            "throws": self.throws.to_dict(),
            "stakes": self.stakes.to_dict() if self.stakes else None,
            "places": [number(p) for p in self.places] if self.places is not None else None,
        }


@dataclass
class Landing:
    seat: int
    square: int
    chance: Number  # that the seat ever lands on the square
    expected: Number  # expected number of landings

    def to_dict(self) -> dict:
        return {"seat": self.seat, "square": self.square, "chance": number(self.chance),
                "expected": number(self.expected)}


@dataclass
class SolveResults:
    """The answers of a race between seats, as :func:`~markov_oca.solve` gives them for a goose board.

    ``text()`` is what the command line prints, ``to_dict()`` the JSON of ``solve --format json``,
    ``to_frame()`` a pandas DataFrame; in a notebook the object shows itself as a table.

    Attributes
    ----------
    rules, title, source : str
        The rule set's name, its title, and the file or name it was read from.
    seed : str
        The reference of the traditional rule text the rule set reads (empty for a user's board).
    players : int
        The number of seats.
    options : dict
        The rule options in force.
    states, transitions : int
        The size of the chain solved.
    exact : bool
        Whether the figures are fractions (``exact=True``) or floats.
    outcomes : dict
        Each outcome's chance (``seat 1 wins``, ...).
    deadlock : float or Fraction
        The chance that the game never ends.
    seats : list of SeatResult
        Per seat: ``win``, expected ``turns`` and ``throws`` (each an ``Expectation`` with
        ``total`` and ``given_end``), and the chance of each finishing place when all play on.
    expected : dict of str to Expectation
        The game's expected ``turns``, ``throws`` and ``rounds``.
    length : LengthSummary
        The distribution of the game's length in turns: mean, median, quantiles, pmf.
    landings : list of Landing or None
        Each seat's chance to land on each square, and the expected landings (None when not
        computed).
    landings_note, note : str
        Why landings were left out; how the answer was found when not from the joint chain.
    special_squares : list of int
        The squares with a rule of their own.
    solver, timings : list of dict, dict
        Each solve's method and residual; the seconds of each stage.
    bounds : dict or None
        The certified error bound of every figure, in the figures' own tree (``docs/json.md``);
        0 for an exact figure; None when the route taken does not certify its figures.
    precision : float or None
        The relative precision every bound was checked against (float mode).
    route : str
        How the figures were found when the first float solve could not certify them.

    Examples
    --------
    Two players on a board of six squares, a three-sided die, a ladder 2 to 5 and a snake 4 to 1,
    solved in fractions:

    >>> import pathlib, tempfile
    >>> from markov_oca import solve
    >>> board = '''
    ... [game]
    ... name = "tiny"
    ... family = "goose"
    ... goal = 6
    ... players = 2
    ... [dice]
    ... count = 1
    ... faces = 3
    ... [rules]
    ... overshoot = "stay"
    ... occupancy = "none"
    ... [squares]
    ... 2 = { jump = 5, name = "ladder" }
    ... 4 = { jump = 1, name = "snake" }
    ... '''
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = pathlib.Path(d) / "tiny.toml"
    ...     _ = path.write_text(board)
    ...     r = solve(path, exact=True, landings=False)
    >>> r.states, [s.win for s in r.seats], r.deadlock
    (24, [Fraction(741, 1298), Fraction(557, 1298)], Fraction(0, 1))
    >>> r.expected["turns"].total
    Fraction(17949, 2950)
    """

    rules: str
    title: str
    seed: str
    source: str
    players: int
    options: dict[str, Any]
    states: int
    transitions: int
    exact: bool
    outcomes: dict[str, Number]
    deadlock: Number
    seats: list[SeatResult]
    expected: dict[str, Expectation]
    length: LengthSummary
    landings: list[Landing] | None
    landings_note: str = ""
    special_squares: list[int] = field(default_factory=list)
    solver: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    #: How the answer was found when not from the joint chain (players who never meet).
    note: str = ""
    bounds: dict[str, Any] | None = None
    precision: float | None = None
    route: str = ""

    def text(self) -> str:
        """The report for reading in a terminal (what ``markov-oca`` prints)."""
        return solve_text(self)

    def _repr_html_(self) -> str:
        rows: list[tuple[str, Any]] = [("players", self.players), ("states", f"{self.states:,}")]
        for s in self.seats:
            rows += [(f"seat {s.seat} wins", s.win), (f"seat {s.seat} turns (given the end)", s.turns.given_end)]
        L = self.length
        rows += [("deadlock", self.deadlock), ("turns (given the end)", self.expected["turns"].given_end),
                 ("length median, p90, p99", ", ".join(L.quantile_text(k) for k in ("median", "p90", "p99")))]
        return html_table(f"{self.title} ({'exact' if self.exact else 'floating point'})", rows)

    def to_frame(self, what: str = "seats"):
        """A pandas DataFrame (pandas is an optional extra): ``"seats"`` (one row a seat),
        ``"landings"`` (one row per seat and square) or ``"length"`` (one row a turn)."""
        pd = pandas()
        if what == "seats":
            return pd.DataFrame([{"seat": s.seat, "win": s.win, "turns": s.turns.total,
                                  "turns_given_end": s.turns.given_end, "throws": s.throws.total,
                                  "throws_given_end": s.throws.given_end,
                                  **({"stakes": s.stakes.total} if s.stakes else {}),
                                  **({f"place_{k + 1}": p for k, p in enumerate(s.places)} if s.places else {})}
                                 for s in self.seats]).set_index("seat")
        if what == "landings":
            if self.landings is None:
                raise ValueError(f"no landing chances in these results: {self.landings_note or 'not asked for'}")
            return pd.DataFrame([x.to_dict() | {"chance": x.chance, "expected": x.expected}
                                 for x in self.landings]).set_index(["seat", "square"])
        if what == "length":
            return length_frame(self.length)
        raise ValueError(f"to_frame: what is 'seats', 'landings' or 'length', not {what!r}")

    def to_dict(self, with_pmf: bool = True) -> dict:
        return {
            "schema": SCHEMA,
            "game": {"rules": self.rules, "title": self.title, "seed": self.seed, "source": self.source,
                     "players": self.players, "options": dict(self.options)},
            "chain": {"states": self.states, "transitions": self.transitions},
            "exact": self.exact,
            "outcomes": {k: number(v) for k, v in self.outcomes.items()},
            "deadlock": number(self.deadlock),
            "seats": [s.to_dict() for s in self.seats],
            "expected": {k: v.to_dict() for k, v in self.expected.items()},
            "length": self.length.to_dict(with_pmf),
            "landings": [x.to_dict() for x in self.landings] if self.landings is not None else None,
            "landings_note": self.landings_note,
            "special_squares": self.special_squares,
            "note": self.note,
            "bounds": without_pmf(self.bounds, with_pmf),
            "precision": self.precision,
            "route": self.route,
            "solver": self.solver,
            "timings": self.timings,
        }


def _seat_mask(chain: Chain, seat: int) -> np.ndarray:
    return chain.mover == seat


def analyse(chain: Chain, *, rules: Any, players: int, exact: bool = False,
            landing_events=None, landings: bool | None = None, tail: float = 1e-10,
            timer: dict[str, float] | None = None, special: list[int] | None = None,
            precision: float = PRECISION) -> SolveResults:
    """Every analysis of a race on one chain: wins, deadlock, expectations, length, landings.

    In floating point every figure carries a certified error bound (:mod:`.certified`), each
    within the relative ``precision``; when the first solve cannot certify them all, the visits
    are solved again with iterative refinement, then the chain exactly when it is small enough
    (its figures rounded to floats, the rounding their bound); else one line refuses.

    Parameters
    ----------
    chain : Chain
        The race's chain, one seat moving at a time (``chain.mover``).
    rules : Any
        The loaded rules: ``name``, ``title``, ``seed`` (the tradition followed), ``source``, ``options``, ``goal``.
    players : int
        The number of seats.
    exact : bool
        Rational answers (:class:`ExactChain`) instead of floating point.
    landing_events : callable, optional
        ``landing_events(seat)`` gives the seat's landings as events ``(key, table)``
        (see :meth:`GooseModel.landing_events`).
    landings : bool or None
        Whether to compute the landing chances; ``None`` computes them for chains of at most
        :data:`LANDING_LIMIT` states.
    tail : float
        The mass left in play at which the length distribution stops.
    timer : dict, optional
        Filled with the seconds each part took.
    special : list of int, optional
        The squares the text reports landings on (the family's special squares).
    precision : float
        The relative precision every float figure's certified bound must meet.

    Returns
    -------
    SolveResults
        The figures, with ``text()`` and ``to_dict()``.

    Raises
    ------
    SolverError
        A float figure whose bound misses ``precision`` on a chain too large to solve exactly.
    """
    timer = {} if timer is None else timer
    if exact:
        return _analyse_exact(chain, rules, players, landing_events, landings, tail, timer, special)
    t0 = time.perf_counter()
    specs = _reward_specs(chain, players)
    given = [k for k in specs if not k.startswith("place")]
    fig, failed, why = _attempt(chain, specs, given, precision, None)
    route = ""
    if failed:
        fig, failed, why = _attempt(chain, specs, given, precision, precision * 1e-3)
        route = "the visits solved again with iterative refinement"
    if failed:
        return _exact_fallback(chain, failed, why, rules, players, landing_events, landings, tail, timer, special,
                               precision)
    outcome_p = {k: x for k, (x, _) in fig.outcomes.items()}
    exp = {k: (x, fig.given.get(k, (float("nan"), None))[0]) for k, (x, _) in fig.totals.items()}
    timer["solve"] = time.perf_counter() - t0
    seats = _seat_results(chain, players, exp, outcome_p)
    t1 = time.perf_counter()
    length = length_summary(chain, exp["turns"][1], tail)
    certify_length(length, chain.length_distribution(tail=tail), fig.given["turns"][1], fig.deadlock)
    timer["length"] = time.perf_counter() - t1
    wanted, note = _landings_wanted(chain, chain, False, landings)
    landing_list, landing_bounds, rep = None, None, []
    if wanted and landing_events is not None:
        t2 = time.perf_counter()
        landing_list = _landings(chain, chain, False, players, rules.goal, landing_events, {"reports": rep}, rep)
        landing_bounds = _landing_bounds(chain, fig, landing_list, rep, landing_events)
        failed = [f"landing of seat {x.seat} on {x.square}" for x, b in zip(landing_list, landing_bounds, strict=True)
                  if not (meets(x.chance, b["chance"], precision) and meets(x.expected, b["expected"], precision))
                  and np.isfinite(x.expected)]
        if failed:
            return _exact_fallback(chain, failed, why_uncertified(fig), rules, players, landing_events, landings,
                                   tail, timer, special, precision)
        timer["landings"] = time.perf_counter() - t2
    res = _results(chain, rules, players, False, outcome_p, fig.deadlock[0], seats, exp, length, landing_list, note,
                   special, timer)
    res.solver = fig.reports + [{"method": r.method, "residual": r.residual, "iterations": r.iterations} for r in rep]
    res.bounds = bounds_tree(fig, players, res, landing_bounds)
    res.precision, res.route = precision, route
    check_sum(res)
    return res


def _analyse_exact(chain: Chain, rules: Any, players: int, landing_events, landings: bool | None, tail: float,
                   timer: dict[str, float], special: list[int] | None) -> SolveResults:
    """The figures as fractions (bound 0); the length distribution, pushed in floats, with its own bounds."""
    t0 = time.perf_counter()
    engine = ExactChain(chain)
    values = _reward_values(chain, players)
    exp = engine.expected(values, given_end=[k for k in values if not k.startswith("place")])
    outcome_p = engine.outcome_probabilities()
    deadlock = outcome_p.pop("deadlock")
    timer["solve"] = time.perf_counter() - t0
    seats = _seat_results(chain, players, exp, outcome_p)
    t1 = time.perf_counter()
    length = length_summary(chain, exp["turns"][1], tail)
    certify_length(length, chain.length_distribution(tail=tail), 0.0, rounded(deadlock))
    timer["length"] = time.perf_counter() - t1
    wanted, note = _landings_wanted(chain, engine, True, landings)
    landing_list = None
    if wanted and landing_events is not None:
        t2 = time.perf_counter()
        landing_list = _landings(chain, engine, True, players, rules.goal, landing_events, {}, [])
        timer["landings"] = time.perf_counter() - t2
    res = _results(chain, rules, players, True, outcome_p, deadlock, seats, exp, length, landing_list, note,
                   special, timer)
    res.bounds = _zero_bounds(res)
    return res


def _results(chain: Chain, rules: Any, players: int, exact: bool, outcome_p: dict, deadlock: Number,
             seats: list[SeatResult], exp: dict, length: LengthSummary, landing_list: list[Landing] | None,
             note: str, special: list[int] | None, timer: dict[str, float]) -> SolveResults:
    return SolveResults(
        rules=rules.name,
        title=rules.title,
        seed=rules.seed,
        source=rules.source,
        players=players,
        options=dict(rules.options),
        states=chain.n,
        transitions=chain.n_transitions,
        exact=exact,
        outcomes=outcome_p,
        deadlock=deadlock,
        seats=seats,
        expected={k: Expectation(*exp[k]) for k in ("turns", "rounds", "throws")},
        length=length,
        landings=landing_list,
        landings_note=note,
        special_squares=list(special) if special is not None else [],
        timings=timer,
    )


def _attempt(chain: Chain, specs: dict, given: list[str], precision: float,
             target: float | None) -> tuple[RaceFigures | None, list[str], str]:
    """The certified figures, those that miss the precision, and why (a solve that fails misses them all)."""
    try:
        fig = race_figures(chain, specs, given, target=target)
    except SolverError as exc:
        return None, ["every figure"], str(exc)
    return fig, fig.misses(precision), why_uncertified(fig)


def why_uncertified(fig: RaceFigures) -> str:
    norm = fig.forward.norm
    return (f"||N||_inf {f'<= {norm:.3g}' if np.isfinite(norm) else 'not certifiable'}, "
            f"true residual up to {fig.visits.mass:.2g}")


def _exact_fallback(chain: Chain, failed: list[str], why: str, rules: Any, players: int, landing_events,
                    landings: bool | None, tail: float, timer: dict[str, float], special: list[int] | None,
                    precision: float) -> SolveResults:
    """The sound route when refinement did not certify every figure: the exact figures, rounded; else refuse."""
    n_t = int(chain.structure.transient.sum())
    if n_t > DENSE_LIMIT:
        raise SolverError(f"no bound under {precision:g} (relative) for {', '.join(failed[:3])} ({why}); the chain has "
                          f"{n_t:,} transient states, more than the {DENSE_LIMIT:,} solved exactly unasked: ask "
                          f"--exact (fractions), or a looser --precision")
    res = _analyse_exact(chain, rules, players, landing_events, landings, tail, timer, special)
    _as_floats(res)
    res.precision = precision
    res.route = f"solved exactly and rounded: the float solve could not certify {', '.join(failed[:3])} ({why})"
    return res


def _as_floats(res: SolveResults) -> None:
    """Exact results as floats, each bound the rounding of its fraction."""
    fl = rounded
    res.exact = False
    res.bounds["outcomes"] = {k: fl(x)[1] for k, x in res.outcomes.items()}
    res.outcomes = {k: fl(x)[0] for k, x in res.outcomes.items()}
    res.bounds["deadlock"] = fl(res.deadlock)[1]
    res.deadlock = float(res.deadlock)
    for s, sb in zip(res.seats, res.bounds["seats"], strict=True):
        sb["win"] = fl(s.win)[1]
        s.win = float(s.win)
        for k in ("turns", "throws", "stakes"):
            e = getattr(s, k)
            if e is not None:
                sb[k] = {"total": fl(e.total)[1], "given_end": fl(e.given_end)[1]}
                setattr(s, k, Expectation(float(e.total), float(e.given_end)))
        if s.places is not None:
            sb["places"] = [fl(p)[1] for p in s.places]
            s.places = [float(p) for p in s.places]
    for k, e in res.expected.items():
        res.bounds["expected"][k] = {"total": fl(e.total)[1], "given_end": fl(e.given_end)[1]}
        res.expected[k] = Expectation(float(e.total), float(e.given_end))
    res.bounds["length"]["mean_given_end"] = fl(res.length.mean_given_end)[1]
    res.length.mean_given_end = float(res.length.mean_given_end)
    for x, lb in zip(res.landings or [], res.bounds["landings"] or [], strict=True):
        lb.update(chance=fl(x.chance)[1], expected=fl(x.expected)[1])
        x.chance, x.expected = float(x.chance), float(x.expected)


def _zero_bounds(res: SolveResults) -> dict[str, Any]:
    """The bounds of exact figures (0), with the length distribution's own."""
    def exp(e: Expectation | None) -> dict | None:
        return None if e is None else {"total": 0.0, "given_end": 0.0}

    return {"outcomes": dict.fromkeys(res.outcomes, 0.0), "deadlock": 0.0,
            "seats": [{"win": 0.0, "turns": exp(s.turns), "throws": exp(s.throws), "stakes": exp(s.stakes),
                       "places": None if s.places is None else [0.0] * len(s.places)} for s in res.seats],
            "expected": {k: exp(e) for k, e in res.expected.items()},
            "length": {**res.length.bounds, "mean_given_end": 0.0},
            "landings": None if res.landings is None else [{"chance": 0.0, "expected": 0.0} for _ in res.landings]}


def bounds_tree(fig: RaceFigures, players: int, res: SolveResults, landing_bounds: list[dict] | None) -> dict[str, Any]:
    """Every float figure's certified bound, in the tree of the figures (``to_dict``)."""
    def exp(name: str) -> dict:
        return {"total": fig.totals[name][1], "given_end": fig.given.get(name, (None, None))[1]}

    names = list(fig.outcomes)
    seats = []
    for i, s in enumerate(res.seats):
        places = None if s.places is None else [fig.totals[f"place{k}@{i}"][1] for k in range(1, players)] + [
            fig.outcomes[names[i]][1]]
        seats.append({"win": places[0] if places else fig.outcomes[names[i]][1], "turns": exp(f"turns@{i}"),
                      "throws": exp(f"throws@{i}"), "stakes": exp(f"stakes@{i}") if s.stakes is not None else None,
                      "places": places})
    return {"outcomes": {k: b for k, (_, b) in fig.outcomes.items()}, "deadlock": fig.deadlock[1], "seats": seats,
            "expected": {k: exp(k) for k in ("turns", "rounds", "throws")}, "length": res.length.bounds,
            "landings": landing_bounds}


def _landing_bounds(chain: Chain, fig: RaceFigures, landing_list: list[Landing], rep: list,
                    landing_events) -> list[dict]:
    """The bounds of the landings: a chance is a forward solve's ``||N||_inf`` times its certified residual
    (the stopped chain's ``N`` is below the chain's); an expected count is read from the visits, one
    landing at most a step, its sums off by ``gamma`` of their terms. A landing no branch from a
    transient state makes is 0, exactly."""
    vb, per_seat = fig.visits, len(landing_list) // max(1, len(rep) // 2)
    sums = float(gamma(chain.n * chain.next.shape[1]))
    possible = {}
    for seat in {x.seat for x in landing_list}:
        key, table = landing_events(seat - 1)
        keys = key[chain.structure.transient]
        possible[seat] = table[np.unique(keys[keys >= 0])].any(axis=0)
    out = []
    for k, x in enumerate(landing_list):
        if not possible[x.seat][x.square]:
            x.chance, x.expected = 0.0, 0.0
            out.append({"chance": 0.0, "expected": 0.0})
            continue
        chance_rep = rep[2 * (k // per_seat)]
        bc = vb.norm * chance_rep.residual * SLACK if np.isfinite(vb.norm) else float("inf")
        x.chance = clip_probability(float(x.chance), bc)
        be = 0.0 if np.isinf(x.expected) else (vb.steps + sums * abs(float(x.expected))) * SLACK
        out.append({"chance": bc, "expected": be})
    return out


def check_sum(res: SolveResults) -> None:
    """The outcomes and the deadlock sum to 1 within their bounds, or the solve is refused."""
    b = res.bounds
    total = sum(res.outcomes.values()) + res.deadlock
    allowed = (sum(b["outcomes"].values()) + b["deadlock"]) * SLACK + 4 * U * (len(res.outcomes) + 1)
    if not abs(total - 1.0) <= allowed:
        raise SolverError(f"the outcomes and the deadlock sum to {total!r}, off 1 by more than their bounds "
                          f"({allowed:.3g})")


def solve_text(r: SolveResults) -> str:
    lines = [
        f"{r.title} [{r.rules}] "
        f"with {r.players} player{'s' if r.players > 1 else ''}",
        "options: " + ", ".join(f"{k}={option_text(v)}" for k, v in r.options.items()),
        f"chain: {r.states:,} states, {r.transitions:,} transitions; "
        + ("exact rational arithmetic" if r.exact else "floating point"),
        *([r.note] if r.note else []),
        "",
        "chance to win, by seat:",
    ]
    for s in r.seats:
        lines.append(f"  seat {s.seat}: {fmt(s.win)}")
    lines.append(f"chance of deadlock (the game never ends): {fmt(r.deadlock)}")
    if r.seats and r.seats[0].places is not None:
        lines.append("")
        lines.append("finishing places (place 1, 2, ...), by seat:")
        for s in r.seats:
            lines.append(f"  seat {s.seat}: " + "  ".join(f"{float(p):.6f}" for p in s.places))
    lines.append("")
    lines.append("expected totals (whole game; and given that the game ends):")
    for k, e in r.expected.items():
        lines.append(f"  {k:7s} {fmt(e.total):>12s}   given it ends: {fmt(e.given_end)}")
    for s in r.seats:
        turns = fmt(s.turns.total, 4)
        if isinstance(s.turns.total, float) and math.isinf(s.turns.total):
            turns += f" ({fmt(s.turns.given_end, 4)} given it ends)"
        parts = [f"turns {turns}", f"throws {fmt(s.throws.total, 4)}"]
        if s.stakes is not None:
            parts.append(f"stakes paid {fmt(s.stakes.total, 4)}")
        lines.append(f"  seat {s.seat}: " + ", ".join(parts))
    L = r.length
    lines += [
        "",
        "game length in turns (all seats' turns, missed ones included):",
        f"  mean given it ends {fmt(L.mean_given_end, 4)}; median {L.quantile_text('median')}, "
        f"90th percentile {L.quantile_text('p90')}, "
        f"99th percentile {L.quantile_text('p99')}",
        f"  distribution computed to a tail mass of {L.tail_mass:.1e}; never ends with chance {L.never_ends:.6g}",
    ]
    if L.never_ends > 0:
        lines.append(f"  of the games that end: median {L.quantile_text('given_end median')}, 90th percentile "
                     f"{L.quantile_text('given_end p90')}, 99th percentile {L.quantile_text('given_end p99')}")
    if r.landings:
        lines.append("")
        lines.append("landing on special squares (chance ever / expected number of landings), by seat:")
        special = sorted({l.square for l in r.landings if l.square in r.special_squares})
        for sq in special:
            row = [l for l in r.landings if l.square == sq]
            lines.append(f"  square {sq:3d}: " + "   ".join(
                f"seat {l.seat} {_chance(l.chance)} / {float(l.expected):.4f}" for l in row))
        lines.append("  (every square in --format json)")
    if r.landings_note:
        lines += ["", r.landings_note]
    res = max((s["residual"] for s in r.solver if s.get("residual") is not None), default=0.0)
    if not r.exact:
        lines += ["", f"largest residual of the {len(r.solver)} linear solves: {res:.2e}"]
    lines += bounds_line(r)
    return "\n".join(lines)



def _chance(x) -> str:
    """A landing chance, or ``-`` where it was not computed (nan: see the results' landings note)."""
    return "-" if x is None or x != x else f"{float(x):.4f}"


def _reward_specs(chain: Chain, players: int) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Every reward whose expected total a race reports, the game's and each seat's: name -> (values, seat mask)."""
    specs: dict[str, tuple[np.ndarray, np.ndarray | None]] = {
        "turns": (chain.state_rewards["turns"], None),
        "rounds": (chain.state_rewards["rounds"], None),
        "throws": (chain.branch_rewards["throws"], None),
    }
    stakes = chain.branch_rewards.get("stakes")
    place = chain.branch_rewards.get("place")
    places = {k: (place == k) for k in range(1, players)} if place is not None else {}
    for i in range(players):
        mine = _seat_mask(chain, i)
        specs[f"turns@{i}"] = (chain.state_rewards["turns"], mine)
        specs[f"throws@{i}"] = (chain.branch_rewards["throws"], mine)
        if stakes is not None:
            specs[f"stakes@{i}"] = (stakes, mine)
        for k, at in places.items():
            specs[f"place{k}@{i}"] = (at, mine)
    return specs


def _reward_values(chain: Chain, players: int) -> dict[str, np.ndarray]:
    """The rewards of :func:`_reward_specs` as the exact engine takes them: integers per state or per branch."""
    out = {}
    for name, (values, seat) in _reward_specs(chain, players).items():
        if seat is None:
            out[name] = values
        elif values.ndim == 1:
            out[name] = values & seat
        else:
            out[name] = values * seat[:, None]
    return out


def _seat_results(chain: Chain, players: int, exp: dict, outcome_p: dict) -> list[SeatResult]:
    """Each seat's chance to win (or finishing places), turns, throws and stakes."""
    stakes = chain.branch_rewards.get("stakes")
    place = chain.branch_rewards.get("place")
    names = list(chain.outcomes)
    seats = []
    for i in range(players):
        places = None
        win = outcome_p[names[i]]
        if place is not None:
            places = [exp[f"place{k}@{i}"][0] for k in range(1, players)] + [outcome_p[names[i]]]
            win = places[0]
        seats.append(SeatResult(seat=i + 1, win=win, turns=Expectation(*exp[f"turns@{i}"]),
                                throws=Expectation(*exp[f"throws@{i}"]),
                                stakes=Expectation(*exp[f"stakes@{i}"]) if stakes is not None else None,
                                places=places))
    return seats


def _landings_wanted(chain: Chain, engine: Any, exact: bool, landings: bool | None) -> tuple[bool, str]:
    """Whether to compute the landing chances, and the note that says why not when they are left out."""
    if landings is None and exact and getattr(engine, "sparse", False):
        return False, ("exact landing chances not computed above 1,000 transient states (one sparse factorisation "
                       "and lifting per seat and square); ask for them with --landings")
    if landings is None:
        if chain.n <= LANDING_LIMIT:
            return True, ""
        return False, (f"landing chances not computed for chains over {LANDING_LIMIT:,} states "
                       "(chances: one right-hand side per seat and square); ask for them with --landings")
    return landings, ""


def _landings(chain: Chain, engine: Any, exact: bool, players: int, goal: int, landing_events: Any,
              logged: dict, rep: list) -> list[Landing]:
    """Each seat's chance of ever landing on each square, and its expected number of landings there."""
    out = []
    squares = range(0, goal + 1)
    for i in range(players):
        key, table = landing_events(i)
        chances = engine.hitting_probabilities(key, table, **logged)
        if exact:
            found = engine.expected({str(q): ((key >= 0) & table[np.maximum(key, 0), q]).astype(np.int8)
                                     for q in squares}, given_end=False)
            counts = [found[str(q)][0] for q in squares]
        else:  # every square's expected landings from one adjoint solve (the expected visits)
            flat, report = chain.expected_landings(key, table)
            rep.append(report)
            counts = [float(flat[q]) for q in squares]
        out.extend(Landing(i + 1, q, ch, cnt) for q, ch, cnt in zip(squares, chances, counts, strict=True))
    return out
