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

from ..analysis.chain import Chain
from ..core.text import fraction_text, int_text

Number = float | Fraction
SCHEMA = "markov_oca.solve/1"


def number(x: Number) -> Any:
    """A JSON value: a float, ``"inf"``, ``null`` for nan, or ``{"fraction", "value"}`` when exact."""
    if isinstance(x, Fraction):
        return {"fraction": f"{int_text(x.numerator)}/{int_text(x.denominator)}", "value": float(x)}
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
        return f"{fraction_text(x)} = {float(x):.10g}" if x.denominator != 1 else int_text(x.numerator)
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
