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

from ..analysis.chain import Chain
from ..analysis.exact import ExactChain
from ..analysis.results import (
    SCHEMA,
    Expectation,
    LengthSummary,
    Number,
    html_table,
    length_frame,
    length_summary,
    number,
    pandas,
)
from ..core.text import option_text
from .text import fmt, turn_text

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

    def text(self) -> str:
        """The report for reading in a terminal (what ``markov-oca`` prints)."""
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
            timer: dict[str, float] | None = None, special: list[int] | None = None) -> SolveResults:
    """Every analysis of a race on one chain: wins, deadlock, expectations, length, landings.

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

    Returns
    -------
    SolveResults
        The figures, with ``text()`` and ``to_dict()``.
    """
    timer = {} if timer is None else timer
    t0 = time.perf_counter()
    engine = ExactChain(chain) if exact else chain
    values = _reward_values(chain, players, exact)
    # Places are chances, not conditioned on the end; every total is given both ways.
    # The solves' reports are returned to this list (the exact solves report nothing).
    rep: list = []
    logged = {} if exact else {"reports": rep}
    exp = engine.expected(values, given_end=[k for k in values if not k.startswith("place")], **logged)
    outcome_p = engine.outcome_probabilities(**logged)
    deadlock = outcome_p.pop("deadlock")
    timer["solve"] = time.perf_counter() - t0
    seats = _seat_results(chain, players, exp, outcome_p)
    t1 = time.perf_counter()
    length = length_summary(chain, exp["turns"][1], tail)
    timer["length"] = time.perf_counter() - t1
    landings, note = _landings_wanted(chain, engine, exact, landings)
    landing_list = None
    if landings and landing_events is not None:
        t2 = time.perf_counter()
        landing_list = _landings(chain, engine, exact, players, rules.goal, landing_events, logged, rep)
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
        expected={k: Expectation(*exp[k]) for k in ("turns", "rounds", "throws")},
        length=length,
        landings=landing_list,
        landings_note=note,
        special_squares=list(special) if special is not None else [],
        solver=[{"method": r.method, "residual": r.residual, "iterations": r.iterations} for r in rep],
        timings=timer,
    )


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
        f"  mean given it ends {fmt(L.mean_given_end, 4)}; median {turn_text(L.median)}, "
        f"90th percentile {turn_text(L.p90)}, "
        f"99th percentile {turn_text(L.p99)}",
        f"  distribution computed to a tail mass of {L.tail_mass:.1e}; never ends with chance {L.never_ends:.6g}",
    ]
    if L.never_ends > 0:
        lines.append(f"  of the games that end: median {turn_text(L.given_end['median'])}, 90th percentile "
                     f"{turn_text(L.given_end['p90'])}, 99th percentile {turn_text(L.given_end['p99'])}")
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
    res = max((s["residual"] for s in r.solver), default=0.0)
    if not r.exact:
        lines += ["", f"largest residual of the {len(r.solver)} linear solves: {res:.2e}"]
    return "\n".join(lines)


def _chance(x) -> str:
    """A landing chance, or ``-`` where it was not computed (nan: see the results' landings note)."""
    return "-" if x is None or x != x else f"{float(x):.4f}"


def _reward_values(chain: Chain, players: int, exact: bool) -> dict[str, np.ndarray]:
    """Every reward whose expected total a race reports: the game's and each seat's, in one dict for one solve."""
    values: dict[str, np.ndarray] = {
        "turns": chain.state_rewards["turns"],
        "rounds": chain.state_rewards["rounds"],
        "throws": chain.branch_rewards["throws"],
    }
    stakes = chain.branch_rewards.get("stakes")
    place = chain.branch_rewards.get("place")
    steps: dict[int, np.ndarray] = {}

    def per_seat(branch_values: np.ndarray, mine: np.ndarray) -> np.ndarray:
        if exact:  # the exact engine takes integer rewards per branch
            return branch_values * mine[:, None]
        # a step reward per state (8 bytes a state) instead of a copy of the branches per seat
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
    return values


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
