"""The results of an Ur solve: each side's chance under the policies played, expected turns and throws, length."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analysis.results import Expectation, LengthSummary, Number, html_table, length_frame, number, pandas
from ..engine.text import without_pmf


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
    #: Certified error bounds in the figures' tree (``wins``, ``expected``, ``length``, ``optimal_value``);
    #: 0 for an exact figure (every route certifies its figures: the chain's, the sweeps', the exact one).
    bounds: dict[str, Any] | None = None
    precision: float | None = None  # the relative precision the bounds were checked against
    route: str = ""  # how the figures were found when the first solve could not certify them

    def text(self) -> str:
        """The report for reading in a terminal (what ``markov-oca`` prints)."""
        from .report import ur_text

        return ur_text(self)

    def _repr_html_(self) -> str:
        rows: list[tuple[str, Any]] = [("pieces", self.pieces), ("policies", f"light {self.light}, dark {self.dark}"),
                                       ("states", f"{self.states:,}")]
        rows += [(f"{k} wins", v) for k, v in self.wins.items()]
        rows += [(f"expected {k} (given the end)", v.given_end) for k, v in self.expected.items()]
        quantiles = ", ".join(self.length.quantile_text(k) for k in ("median", "p90", "p99"))
        rows.append(("length median, p90, p99", quantiles))
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
            "bounds": without_pmf(self.bounds, with_pmf),
            "precision": self.precision,
            "route": self.route,
            "solver": self.solver,
            "timings": self.timings,
        }
