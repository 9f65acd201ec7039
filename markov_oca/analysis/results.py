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
from ..linalg.certify import SLACK, U, gamma

Number = float | Fraction
SCHEMA = "markov_oca.solve/1"


def number(x: Number | None) -> Any:
    """A JSON value: a float, ``"inf"``, ``null`` for nan or None, or ``{"fraction", "value"}`` when exact."""
    if isinstance(x, Fraction):
        return {"fraction": f"{int_text(x.numerator)}/{int_text(x.denominator)}", "value": float(x)}
    if x is None:
        return None
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


def quantile_words(x: float | None, beyond: int) -> str:
    """A quantile of a length distribution as reports word it: a turn, ``never`` when infinite, or
    ``more than N`` (``N`` = ``beyond``) when the distribution is cut before the quantile is certain."""
    if x is None:
        return f"more than {beyond:,}"
    return "never" if math.isinf(x) else str(int(x))


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
    #: Certified bounds, the figures' tree (float mode; None when not certified): see :func:`certify_length`.
    bounds: dict[str, Any] | None = None
    #: Quantiles that rounding or the tail leave beyond a turn: name -> that turn ("more than N";
    #: ``given_end median`` and so on for the games that end); their figure is None.
    more_than: dict[str, int] = field(default_factory=dict)

    @property
    def cdf(self) -> list[float]:
        return list(np.cumsum(self.pmf))

    def quantile_text(self, name: str) -> str:
        """A quantile as the report words it: a turn, ``never``, or ``more than N`` when not certain."""
        x = self.given_end.get(name[len("given_end "):]) if name.startswith("given_end ") else getattr(self, name)
        return quantile_words(x, self.more_than.get(name, len(self.pmf) - 1))

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
        if self.more_than:
            d["more_than"] = dict(self.more_than)
        if with_pmf:
            d["pmf"] = self.pmf
            d["cdf"] = [float(x) for x in np.cumsum(self.pmf)]
        return d












def length_summary(chain: Chain, turns_given_end: Number, tail: float) -> LengthSummary:
    """The length distribution of a chain, summarised."""
    return summarise_length(chain.length_distribution(tail=tail), turns_given_end)


def certify_length(summary: LengthSummary, dist, mean_bound: float, deadlock: tuple[float, float],
                   absolute: float = 0.0) -> None:
    """Bound every figure of ``summary`` (from ``dist``), and keep only the quantiles rounding cannot move.

    Every pushed mass is off by at most ``dist.rounding`` relative (no cancellation: the masses are
    nonnegative), and every entry by ``dist.misplaced`` more (mass a pass let go or counted late), the
    running sums of the CDF by ``gamma`` of their length more. A quantile is the
    turn where the CDF first reaches ``q``: it is kept when the CDF's low and high bounds reach ``q``
    on the same turn (:func:`~markov_oca.analysis.tails.quantile_bracket`); when even the high bound
    stays below ``q`` and the chance of ending, ``1 - deadlock``, is certainly below ``q`` too, the
    quantile is never reached (infinite, exactly); otherwise it is "more than" the last turn the high
    bound stays below ``q``. Given the end, the CDF is divided by ``1 - deadlock``, whose bound
    widens the bracket. ``never_ends`` becomes the certified deadlock (the pass's deadlocked mass
    misses what was still in play). ``absolute`` is an error of every entry of the CDF besides the relative
    one (the games a truncated computation left out), added to every bound.
    """
    from .tails import quantile_bracket  # tails imports this module

    pmf = np.asarray(dist.pmf, np.float64)
    cdf = np.cumsum(pmf)
    rel = (dist.rounding + float(gamma(pmf.size))) * SLACK
    lost = float(dist.misplaced) + absolute  # let go or counted late, and left out
    err = rel * cdf + lost + 2e-15  # _quantile reads q less 1e-15
    p_d, b_d = deadlock
    summary.never_ends, summary.more_than = p_d, {}
    ends_lo, ends_hi = 1.0 - p_d - b_d, 1.0 - p_d + b_d
    bounds: dict[str, Any] = {"mean_given_end": mean_bound, "never_ends": b_d,
                              "tail_mass": float(dist.tail) * rel + lost + 64 * U, "given_end": {},
                              "pmf": (rel * pmf + lost).tolist(), "cdf": (rel * cdf + lost).tolist()}
    for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99)):
        lo, hi = quantile_bracket(cdf - err, cdf + err, q)
        value, bounds[name] = _certain(lo, hi, ends_hi < q, summary.more_than, name, pmf.size)
        setattr(summary, name, value)
        if ends_lo > 0:
            g_lo, g_hi = quantile_bracket((cdf - err) / ends_hi * (1 - 4 * U), (cdf + err) / ends_lo * (1 + 4 * U), q)
            summary.given_end[name], bounds["given_end"][name] = _certain(g_lo, g_hi, False, summary.more_than,
                                                                          f"given_end {name}", pmf.size)
    summary.bounds = bounds


def _certain(lo: int | None, hi: int | None, never: bool, more: dict[str, int], name: str,
             size: int) -> tuple[float | None, float | None]:
    """A quantile and its bound (0: exact) from its bracket; None and a "more than" when not certain."""
    if lo is not None and lo == hi:
        return float(lo), 0.0
    if lo is None and never:
        return float("inf"), 0.0
    more[name] = (lo if lo is not None else size) - 1
    return None, None


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
