"""Results of a solve as plain dataclasses, and the analysis that fills them.

The CLI, the JSON output, the reports and the tests all read these objects.
Values are floats, or :class:`fractions.Fraction` in exact mode; an expected
total that a deadlock makes infinite is ``float('inf')``. ``to_dict()`` gives
the documented JSON schema (``docs/json.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .chain import Chain
from .exact import ExactChain

Number = float | Fraction
SCHEMA = "markov_oca.solve/1"
LANDING_LIMIT = 20_000  # states up to which landing chances are computed unless asked


def number(x: Number) -> Any:
    """A JSON value: a float, ``"inf"``, ``null`` for nan, or ``{"fraction", "value"}`` when exact."""
    if isinstance(x, Fraction):
        return {"fraction": f"{x.numerator}/{x.denominator}", "value": float(x)}
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(x)
    if math.isinf(x):
        return "inf"
    if math.isnan(x):
        return None
    return x


def _cell(x: Any) -> str:
    """A figure as a table shows it: a fraction with its decimal, a float to 10 digits."""
    if isinstance(x, Fraction):
        return f"{x} = {float(x):.10g}" if x.denominator != 1 else str(x.numerator)
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.10g}"
    return "" if x is None else str(x)


def html_table(title: str, rows: list[tuple[str, Any]]) -> str:
    """A two-column HTML table (label, figure), what Jupyter shows for ``_repr_html_``."""
    import html

    body = "".join(f"<tr><th style='text-align:left'>{html.escape(str(a))}</th><td>{html.escape(_cell(b))}</td></tr>"
                   for a, b in rows)
    return f"<table><caption>{html.escape(title)}</caption>{body}</table>"


def pandas():
    """pandas, an optional extra for ``to_frame()``: a clear ImportError without it."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_frame() needs pandas, an optional extra: pip install pandas") from None
    return pd


def length_frame(length: LengthSummary):
    """The length distribution as a DataFrame indexed by turn: pmf and cdf."""
    pd = pandas()
    return pd.DataFrame({"pmf": length.pmf, "cdf": np.cumsum(length.pmf)},
                        index=pd.RangeIndex(len(length.pmf), name="turn"))


@dataclass
class Expectation:
    """An expected total: unconditional (maybe infinite) and given that the game ends."""

    total: Number
    given_end: Number

    def to_dict(self) -> dict:
        return {"total": number(self.total), "given_end": number(self.given_end)}


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
class LengthSummary:
    """The distribution of the game's length in turns (always computed in floating point)."""

    pmf: list[float]
    mean_given_end: Number
    median: float
    p90: float
    p99: float
    never_ends: float
    tail_mass: float
    given_end: dict[str, float] = field(default_factory=dict)  # median, p90, p99 of the games that end

    @property
    def cdf(self) -> list[float]:
        return list(np.cumsum(self.pmf))

    def to_dict(self, with_pmf: bool = True) -> dict:
        d = {
            "unit": "turns",
            "mean_given_end": number(self.mean_given_end),
            "median": number(self.median),
            "p90": number(self.p90),
            "p99": number(self.p99),
            "never_ends": self.never_ends,
            "tail_mass": self.tail_mass,
            "given_end": {k: number(v) for k, v in self.given_end.items()},
        }
        if with_pmf:
            d["pmf"] = self.pmf
            d["cdf"] = [float(x) for x in np.cumsum(self.pmf)]
        return d


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

    def text(self) -> str:
        """The report for reading in a terminal (what ``markov-oca`` prints)."""
        from .goose.report import solve_text

        return solve_text(self)

    def _repr_html_(self) -> str:
        rows: list[tuple[str, Any]] = [("players", self.players), ("states", f"{self.states:,}")]
        for s in self.seats:
            rows += [(f"seat {s.seat} wins", s.win), (f"seat {s.seat} turns (given the end)", s.turns.given_end)]
        rows += [("deadlock", self.deadlock), ("turns (given the end)", self.expected["turns"].given_end),
                 ("length median, p90, p99", f"{self.length.median:g}, {self.length.p90:g}, {self.length.p99:g}")]
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
            "solver": self.solver,
            "timings": self.timings,
        }


def _seat_mask(chain: Chain, seat: int) -> np.ndarray:
    return chain.mover == seat


def analyse(chain: Chain, *, rules: Any, players: int, exact: bool = False,
            landing_events=None, landings: bool | None = None, tail: float = 1e-10,
            timer: dict[str, float] | None = None) -> SolveResults:
    """Every analysis of the issue on one chain: wins, deadlock, expectations, length, landings.

    ``landing_events(seat)`` gives the seat's landings as events ``(key, table)``
    (see :meth:`GooseModel.landing_events`); ``landings=None`` computes landings only for chains of at most
    :data:`LANDING_LIMIT` states.
    """
    import time

    timer = {} if timer is None else timer
    t0 = time.perf_counter()
    engine = ExactChain(chain) if exact else chain

    # Every expected total in one call (one block solve with the absorption in floating point).
    values: dict[str, np.ndarray] = {
        "turns": chain.state_rewards["turns"],
        "rounds": chain.state_rewards["rounds"],
        "throws": chain.branch_rewards["throws"],
    }
    stakes = chain.branch_rewards.get("stakes")
    place = chain.branch_rewards.get("place")
    if exact:  # the exact engine takes integer rewards per branch
        def per_seat(branch_values: np.ndarray, mine: np.ndarray) -> np.ndarray:
            return branch_values * mine[:, None]
    else:  # a step reward per state (8 bytes a state) instead of a copy of the branches per seat
        steps: dict[int, np.ndarray] = {}

        def per_seat(branch_values: np.ndarray, mine: np.ndarray) -> np.ndarray:
            key = id(branch_values)
            if key not in steps:
                steps[key] = chain.step_reward(branch_values)
            return np.where(mine, steps[key], 0.0)
    places = {k: (place == k) for k in range(1, players)} if place is not None else {}
    for i in range(players):
        mine = _seat_mask(chain, i)
        values[f"turns@{i}"] = chain.state_rewards["turns"] & mine
        values[f"throws@{i}"] = per_seat(chain.branch_rewards["throws"], mine)
        if stakes is not None:
            values[f"stakes@{i}"] = per_seat(stakes, mine)
        for k, at in places.items():
            values[f"place{k}@{i}"] = per_seat(at, mine)
    # Places are chances, not conditioned on the end; every total is given both ways.
    # The solves' reports are returned to this list (the exact solves report nothing).
    rep: list = []
    logged = {} if exact else {"reports": rep}
    exp = engine.expected(values, given_end=[k for k in values if not k.startswith("place")], **logged)
    outcome_p = engine.outcome_probabilities(**logged)
    deadlock = outcome_p.pop("deadlock")
    timer["solve"] = time.perf_counter() - t0

    def expectation(key: str) -> Expectation:
        return Expectation(*exp[key])

    seats = []
    names = list(chain.outcomes)
    for i in range(players):
        if place is not None:
            places = [exp[f"place{k}@{i}"][0] for k in range(1, players)] + [outcome_p[names[i]]]
            win = places[0]
        else:
            places = None
            win = outcome_p[names[i]]
        seats.append(SeatResult(
            seat=i + 1,
            win=win,
            turns=expectation(f"turns@{i}"),
            throws=expectation(f"throws@{i}"),
            stakes=expectation(f"stakes@{i}") if stakes is not None else None,
            places=places,
        ))

    t1 = time.perf_counter()
    length = length_summary(chain, exp["turns"][1], tail)
    timer["length"] = time.perf_counter() - t1

    landing_list = None
    note = ""
    if landings is None and exact and getattr(engine, "sparse", False):
        landings = False
        note = ("exact landing chances not computed above 1,000 transient states (one sparse factorisation "
                "and lifting per seat and square); ask for them with --landings")
    if landings is None:
        landings = chain.n <= LANDING_LIMIT
        if not landings:
            note = (f"landing chances not computed for chains over {LANDING_LIMIT:,} states "
                    "(chances: one right-hand side per seat and square); ask for them with --landings")
    if landings and landing_events is not None:
        t2 = time.perf_counter()
        landing_list = []
        squares = range(0, rules.goal + 1)
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
            for q, ch, cnt in zip(squares, chances, counts, strict=True):
                landing_list.append(Landing(i + 1, q, ch, cnt))
        timer["landings"] = time.perf_counter() - t2

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
        expected={k: expectation(k) for k in ("turns", "rounds", "throws")},
        length=length,
        landings=landing_list,
        landings_note=note,
        special_squares=sorted(set(rules.squares) | {t for _, t in rules.first_throw} | {rules.goal}),
        solver=[{"method": r.method, "residual": r.residual, "iterations": r.iterations} for r in rep],
        timings=timer,
    )


@dataclass
class UrResults:
    """A pair of Ur policies solved as a chain: each side's chance to win, turns, throws, length."""

    rules: str
    title: str
    seed: str
    source: str
    pieces: int
    light: str
    dark: str
    options: dict[str, Any]
    states: int
    transitions: int
    wins: dict[str, Number]
    expected: dict[str, Expectation]
    length: LengthSummary
    optimal_value: float | None = None  # light's chance under optimal play by both, from value iteration
    optimal_residual: float | None = None  # largest final change of the value iteration's layers
    positions: int = 0  # S: positions per side to move for this number of pieces
    solver: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def text(self) -> str:
        """The report for reading in a terminal (what ``markov-oca`` prints)."""
        from .ur.report import ur_text

        return ur_text(self)

    def _repr_html_(self) -> str:
        rows: list[tuple[str, Any]] = [("pieces", self.pieces), ("policies", f"light {self.light}, dark {self.dark}"),
                                       ("states", f"{self.states:,}")]
        rows += [(f"{k} wins", v) for k, v in self.wins.items()]
        rows += [(f"expected {k} (given the end)", v.given_end) for k, v in self.expected.items()]
        rows.append(("length median, p90, p99", f"{self.length.median:g}, {self.length.p90:g}, {self.length.p99:g}"))
        return html_table(self.title, rows)

    def to_frame(self, what: str = "sides"):
        """A pandas DataFrame (an optional extra): ``"sides"`` (each side's chance to win) or ``"length"``."""
        pd = pandas()
        if what == "sides":
            return pd.DataFrame({"win": list(self.wins.values())},
                                index=pd.Index(list(self.wins), name="side"))
        if what == "length":
            return length_frame(self.length)
        raise ValueError(f"to_frame: what is 'sides' or 'length', not {what!r}")

    def to_dict(self, with_pmf: bool = True) -> dict:
        return {
            "schema": "markov_oca.solve-ur/1",
            "game": {"rules": self.rules, "title": self.title, "seed": self.seed, "source": self.source,
                     "pieces": self.pieces, "options": dict(self.options)},
            "policies": {"light": self.light, "dark": self.dark},
            "chain": {"states": self.states, "transitions": self.transitions},
            "wins": {k: number(v) for k, v in self.wins.items()},
            "expected": {k: v.to_dict() for k, v in self.expected.items()},
            "length": self.length.to_dict(with_pmf),
            "optimal_value": self.optimal_value,
            "optimal_residual": self.optimal_residual,
            "positions": self.positions,
            "solver": self.solver,
            "timings": self.timings,
        }


def length_summary(chain: Chain, turns_given_end: Number, tail: float) -> LengthSummary:
    """The length distribution of a chain, summarised."""
    return summarise_length(chain.length_distribution(tail=tail), turns_given_end)


def summarise_length(dist, turns_given_end: Number) -> LengthSummary:
    """A :class:`~markov_oca.chain.LengthDistribution`, summarised."""
    return LengthSummary(
        pmf=[float(x) for x in dist.pmf],
        mean_given_end=turns_given_end,
        median=dist.quantile(0.5),
        p90=dist.quantile(0.9),
        p99=dist.quantile(0.99),
        never_ends=dist.never_ends,
        tail_mass=dist.tail,
        given_end={"median": dist.quantile(0.5, True), "p90": dist.quantile(0.9, True),
                   "p99": dist.quantile(0.99, True)},
    )
