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


def options_lines(rules, show=option_text) -> list[str]:
    """``options in force:`` and one line per option of loaded rules (any family): value, choices, meaning."""
    lines = ["options in force:"]
    for k, v in rules.options.items():
        choices = rules.option_choices.get(k)
        extra = f"  (choices: {', '.join(map(str, choices))})" if choices else ""
        lines.append(f"  {k} = {show(v)}{extra}  {rules.option_docs.get(k, '')}")
    return lines




