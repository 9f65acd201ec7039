"""The results of a solved points board (every solve's: the whole chain, independent paths, layers).

Ties: the winner is the seat with the most points at the end; bankrupt seats
have none and never win. ``win`` is the chance to hold the most points alone,
``tie`` the chance to share the most with others, and ``win_share`` counts a tie
of k seats as 1/k of a win, so the seats' shares add up to 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analysis.results import LengthSummary, html_table, length_frame, number, pandas
from ..engine.text import without_pmf

SCHEMA = "markov_oca.solve-punti/1"


@dataclass
class PuntiSeat:
    """One seat's results."""

    seat: int
    start_points: int
    win: float  # the most points, alone
    tie: float  # the most points, shared
    win_share: float  # win + each tie of k seats counted 1/k
    bankrupt: float
    points: float  # expected final points (0 when bankrupt)
    points_pmf: dict[int, float]  # final points -> chance
    bets: float  # expected Pulcinella bets made
    aid: float  # chance of asking for mutual aid
    aid_success: float
    turns: float  # expected turns this seat takes

    def to_dict(self) -> dict:
        return {
            "seat": self.seat, "start_points": self.start_points, "win": number(self.win), "tie": number(self.tie),
            "win_share": number(self.win_share), "bankrupt": number(self.bankrupt), "points": number(self.points),
            "points_pmf": {str(k): v for k, v in sorted(self.points_pmf.items())},
            "bets": number(self.bets), "aid": number(self.aid), "aid_success": number(self.aid_success),
            "turns": number(self.turns),
        }


@dataclass
class PuntiResults:
    """A points board solved for a number of players under a bet policy."""

    rules: str
    title: str
    seed: str
    source: str
    players: int
    bet: str  # never, always, optimal
    options: dict[str, Any]
    unit: int  # points per balance level
    total_points: int  # every balance plus the bank, constant
    bank_start: int
    states: int | None  # None: no chain was built (independent paths)
    transitions: int | None
    outcomes: dict[str, float]
    seats: list[PuntiSeat]
    expected: dict[str, float]  # turns, throws, bets of the whole game
    length: LengthSummary | None  # None: not computed (see notes)
    policy: dict[str, Any] | None = None  # the optimal bet policy: how it was found
    postcards: dict[str, Any] | None = None  # simulated effect of the postcards
    solver: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    method: str = "chain"  # chain: the whole chain built and solved; layered: solved layer by layer
    notes: list[str] = field(default_factory=list)
    #: Certified error bounds in the figures' tree (``outcomes``, ``seats``, ``expected``, ``length``), on every
    #: method: the chain's (:func:`~markov_oca.punti.analysis.analyse`), independent paths'
    #: (:func:`~markov_oca.punti.independent.independent_bounds`), the layered solve's
    #: (:func:`~markov_oca.punti.layered.layered_bounds`).
    bounds: dict[str, Any] | None = None
    precision: float | None = None  # the relative precision the bounds were checked against

    def text(self) -> str:
        """The report for reading in a terminal (what ``markov-oca`` prints)."""
        from .report import punti_text

        return punti_text(self)

    def _repr_html_(self) -> str:
        rows: list[tuple[str, Any]] = [("players", self.players), ("bet", self.bet),
                                       ("states", "not built" if self.states is None else f"{self.states:,}")]
        for s in self.seats:
            rows += [(f"seat {s.seat} wins (share)", s.win_share), (f"seat {s.seat} bankrupt", s.bankrupt),
                     (f"seat {s.seat} final points", s.points)]
        rows += [(f"expected {k}", v) for k, v in self.expected.items()]
        return html_table(self.title, rows)

    def to_frame(self, what: str = "seats"):
        """A pandas DataFrame (an optional extra): ``"seats"`` (one row a seat), ``"points"`` (each seat's
        final points distribution, one row per seat and points) or ``"length"`` (one row a turn)."""
        pd = pandas()
        if what == "seats":
            return pd.DataFrame([{k: v for k, v in s.to_dict().items() if k != "points_pmf"}
                                 for s in self.seats]).set_index("seat")
        if what == "points":
            return pd.DataFrame([{"seat": s.seat, "points": k, "chance": v}
                                 for s in self.seats for k, v in sorted(s.points_pmf.items())]
                                ).set_index(["seat", "points"])
        if what == "length":
            if self.length is None:
                raise ValueError("no length distribution in these results (see notes)")
            return length_frame(self.length)
        raise ValueError(f"to_frame: what is 'seats', 'points' or 'length', not {what!r}")

    def to_dict(self, with_pmf: bool = True) -> dict:
        return {
            "schema": SCHEMA,
            "game": {"rules": self.rules, "title": self.title, "seed": self.seed, "source": self.source,
                     "players": self.players, "options": dict(self.options)},
            "bet": self.bet,
            "economy": {"unit": self.unit, "total_points": self.total_points, "bank_start": self.bank_start},
            "chain": {"states": self.states, "transitions": self.transitions},
            "outcomes": {k: number(v) for k, v in self.outcomes.items()},
            "ties": "win = the most points alone; tie = the most points shared; win_share counts a tie of k "
                    "seats as 1/k",
            "seats": [s.to_dict() for s in self.seats],
            "expected": {k: number(v) for k, v in self.expected.items()},
            "length": None if self.length is None else self.length.to_dict(with_pmf),
            "policy": self.policy,
            "postcards": self.postcards,
            "solver": self.solver,
            "method": self.method,
            "bounds": without_pmf(self.bounds, with_pmf),
            "precision": self.precision,
            "notes": list(self.notes),
            "timings": self.timings,
        }


def game_fields(m, bet: str) -> dict[str, Any]:
    """The fields of :class:`PuntiResults` that name the game and its economy (every solve's)."""
    rules, N = m.rules, m.players
    return {"rules": rules.name, "title": rules.title, "seed": rules.seed, "source": rules.source, "players": N,
            "bet": bet, "options": dict(rules.options), "unit": m.unit, "total_points": rules.total_points(N),
            "bank_start": rules.initial_bank(N)}


def win_tie_share(masks: list[int], probs, seat: int) -> tuple[float, float, float]:
    """A seat's chance to lead alone, to share the lead, and its win share (a tie of k counts 1/k),
    from the chance ``probs[k]`` of each set of leaders ``masks[k]``."""
    win = tie = share = 0.0
    for mask, p in zip(masks, probs, strict=True):
        if mask >> seat & 1:
            k = bin(mask).count("1")
            share += float(p) / k
            if k == 1:
                win += float(p)
            else:
                tie += float(p)
    return win, tie, share
