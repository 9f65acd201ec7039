"""Text for people: number formats every family's report shares, and the cross-check's table.

Each family lays out its own ``solve`` and ``explain`` text beside its code
(:mod:`markov_oca.goose.report`, :mod:`markov_oca.ur.report`,
:mod:`markov_oca.punti.report`) with the formats here; the JSON output is each
result's ``to_dict()``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .results import Number


def fmt(x: Number, digits: int = 6) -> str:
    if isinstance(x, Fraction):
        s = f"{float(x):.{digits}f}"
        frac = f"{x.numerator}/{x.denominator}"
        return f"{s}  (= {frac})"
    if isinstance(x, float) and math.isinf(x):
        return "infinite"
    if isinstance(x, float) and math.isnan(x):
        return "n/a"
    return f"{float(x):.{digits}f}"


def turn_text(x: float) -> str:
    return "never" if math.isinf(x) else str(int(x))


def option_text(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def options_lines(rules, show=option_text) -> list[str]:
    """``options in force:`` and one line per option of loaded rules (any family): value, choices, meaning."""
    lines = ["options in force:"]
    for k, v in rules.options.items():
        choices = rules.option_choices.get(k)
        extra = f"  (choices: {', '.join(map(str, choices))})" if choices else ""
        lines.append(f"  {k} = {show(v)}{extra}  {rules.option_docs.get(k, '')}")
    return lines


def crosscheck_text(r) -> str:
    """A cross-check side by side: exact, simulated, the 99% interval, pass or fail (Holm)."""
    lines = [
        f"cross-check of {r.rules}, {r.setting or f'{r.players} players'}: "
        f"{r.games:,} games from {r.source}",
        f"games cut at {r.turn_limit} turns count as unfinished; exact chance of deadlock {r.exact_deadlock:.6g}",
    ]
    if r.simulated_options:
        lines.append("simulated with different options: "
                     + ", ".join(f"{k}={option_text(v)}" for k, v in r.simulated_options.items()))
    head = f"{'quantity':48s} {'exact':>12s} {'simulated':>12s}   {'99% interval':25s} {'p (Holm)':>9s}  verdict"
    lines += ["", head]
    for c in r.checks:
        if c.test.startswith("chi-square"):
            interval = f"chi2 = {c.simulated:.1f}, {c.test.split(', ')[1]}"
            exact, sim = "", ""
        else:
            exact, sim = _cell(c.exact), _cell(c.simulated)
            interval = "" if math.isnan(c.low) else f"[{_cell(c.low)}, {_cell(c.high)}]"
        lines.append(f"{c.quantity[:48]:48s} {exact:>12s} {sim:>12s}   {interval:25s} {c.adjusted:9.3g}  "
                     + ("pass" if c.passed else "FAIL"))
    lines += [""] + [f"note: {n}" for n in r.notes]
    failed = sum(not c.passed for c in r.checks)
    lines.append(f"verdict: {'PASS' if r.passed else 'FAIL'} ({len(r.checks)} tests, {failed} failed; "
                 f"Holm-corrected at {r.alpha:g} family-wise)")
    return "\n".join(lines)


def _cell(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:.0f}" if float(x).is_integer() and abs(x) >= 2 else f"{x:.6f}"
