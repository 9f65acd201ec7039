"""Text for people: number formats every family's report shares, and the cross-check's table.

Each family lays out its own ``solve`` and ``explain`` text beside its code
(:mod:`markov_oca.goose.report`, :mod:`markov_oca.ur.report`,
:mod:`markov_oca.punti.report`) with the formats here; the JSON output is each
result's ``to_dict()``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..analysis.results import Number
from ..core.text import int_text, option_text


def fmt(x: Number, digits: int = 6) -> str:
    if isinstance(x, Fraction):
        s = f"{float(x):.{digits}f}"
        frac = f"{int_text(x.numerator)}/{int_text(x.denominator)}"
        return f"{s}  (= {frac})"
    if isinstance(x, float) and math.isinf(x):
        return "infinite"
    if isinstance(x, float) and math.isnan(x):
        return "n/a"
    return f"{float(x):.{digits}f}"


def turn_text(x: float | None) -> str:
    """A quantile in turns: ``never`` when infinite, ``beyond the horizon`` when not certain (None)."""
    if x is None:
        return "beyond the horizon"
    return "never" if math.isinf(x) else str(int(x))


def largest_bound(bounds) -> float:
    """The largest bound in a tree of bounds (the length distribution's lists left out: they are tiny).

    Examples
    --------
    >>> largest_bound({"outcomes": {"a": 1e-12}, "seats": [{"win": 3e-12}], "length": {"pmf": [1.0]}})
    3e-12
    """
    if isinstance(bounds, dict):
        return max((largest_bound(v) for k, v in bounds.items() if k not in ("pmf", "cdf")), default=0.0)
    if isinstance(bounds, list):
        return max((largest_bound(v) for v in bounds), default=0.0)
    return float(bounds) if isinstance(bounds, (int, float)) else 0.0


def without_pmf(bounds: dict | None, with_pmf: bool) -> dict | None:
    """A tree of bounds without the length distribution's lists (JSON without the pmf)."""
    if bounds is None or with_pmf or bounds.get("length") is None:
        return bounds
    return {**bounds, "length": {k: v for k, v in bounds["length"].items() if k not in ("pmf", "cdf")}}


def bounds_line(r) -> list[str]:
    """The text's statement of the bounds: certified, within the precision, the largest (float results)."""
    if r.bounds is None:
        return [] if getattr(r, "exact", False) else [
            "error bounds: not certified on this route (the figures are those of its solves, residuals above)"]
    if r.precision is None:
        return []
    return [f"error bounds: certified, each figure within {r.precision:g} relative (the largest "
            f"{largest_bound(r.bounds):.2g})" + (f"; {r.route}" if getattr(r, "route", "") else "")]


def options_lines(rules, show=option_text) -> list[str]:
    """``options in force:`` and one line per option of loaded rules (any family): value, choices, meaning."""
    lines = ["options in force:"]
    for k, v in rules.options.items():
        choices = rules.option_choices.get(k)
        extra = f"  (choices: {', '.join(map(str, choices))})" if choices else ""
        lines.append(f"  {k} = {show(v)}{extra}  {rules.option_docs.get(k, '')}")
    return lines




