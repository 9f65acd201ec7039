"""Exact (rational) solves of two-player chains: the targets of issue 14, timed.

Prints, for each case, the chain's size, the sparse LU's fill, the lifting and
certificate steps, the seconds of each phase, and the largest gap between the
exact and the floating-point answers. Run from the repository root:

    PYTHONPATH=$PWD python benchmarks/bench_exact.py [sl48] [moderna] [tradicional] [ur]

Measure peak memory from outside: ``/usr/bin/time -v python benchmarks/bench_exact.py sl48``.
"""

from __future__ import annotations

import sys
import time
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANCHOR = "0.50780277346091397787392387841954080716542767187942"


def digits(x: Fraction, n: int = 50) -> str:
    """``x`` rounded to ``n`` decimal places."""
    getcontext().prec = n + 20
    return str((Decimal(x.numerator) / Decimal(x.denominator)).quantize(Decimal(1).scaleb(-n)))


def report(name: str, chain, ex, t_build: float, t_exact: float, gaps: dict[str, float]) -> None:
    r = ex.reports[0] if ex.reports else None
    fill = f"fill {r.fill:,} ({r.ordering}), steps {r.steps} + certificate {r.certify_steps}, " if r else ""
    phases = ", ".join(f"{k} {v:.2f} s" for k, v in (r.seconds.items() if r else ()))
    print(f"{name}: {chain.n:,} states ({ex.ids.size:,} transient), {fill}")
    print(f"    build {t_build:.2f} s, exact {t_exact:.2f} s [{phases}]")
    print("    largest |exact - float|: " + ", ".join(f"{k} {v:.1e}" for k, v in gaps.items()))


def bench_sl48() -> None:
    from markov_oca.analysis.exact import ExactChain
    from markov_oca.api import build

    t0 = time.perf_counter()
    chain = build(ROOT / "examples" / "snakes_and_ladders_48.toml", players=2)
    t1 = time.perf_counter()
    ex = ExactChain(chain)
    p = ex.outcome_probabilities()
    t2 = time.perf_counter()
    first = p["seat 1 wins"]
    fl = chain.outcome_probabilities()
    report("snakes and ladders 48 -> 26, 2 players", chain, ex, t1 - t0, t2 - t1,
           {k: abs(float(v) - fl[k]) for k, v in p.items()})
    print(f"    first player: {digits(first)} (anchor {ANCHOR}: {'match' if digits(first) == ANCHOR else 'MISMATCH'})")
    print(f"    numerator {len(str(first.numerator)):,} digits, denominator {len(str(first.denominator)):,} digits; "
          f"outcomes sum to {sum(p.values())}")


def bench_goose(name: str) -> None:
    from markov_oca.analysis.exact import ExactChain
    from markov_oca.api import build

    t0 = time.perf_counter()
    chain = build(name, players=2)
    t1 = time.perf_counter()
    ex = ExactChain(chain)
    vals = {"throws": chain.branch_rewards["throws"], "turns": chain.state_rewards["turns"]}
    for i in range(2):
        vals[f"throws@{i}"] = chain.branch_rewards["throws"] & (chain.mover == i)[:, None]
    e = ex.expected(vals)
    p = ex.outcome_probabilities()
    t2 = time.perf_counter()
    fl_p = chain.outcome_probabilities()
    fl_e = chain.expected(vals)
    gaps = {k: abs(float(v) - fl_p[k]) for k, v in p.items()}
    for k in vals:
        for j, tag in enumerate(("total", "given end")):
            a, b = e[k][j], fl_e[k][j]
            gaps[f"{k} {tag}"] = abs(float(a) - b) if not isinstance(a, float) else (0.0 if a == b else float("nan"))
    report(f"{name}, 2 players", chain, ex, t1 - t0, t2 - t1, gaps)
    print(f"    outcomes sum to {sum(p.values())}; deadlock {float(p['deadlock']):.17g} "
          f"({len(str(p['deadlock'].denominator)):,}-digit denominator); throws given the end "
          f"{float(e['throws'][1]):.15g} ({len(str(e['throws'][1].denominator)):,}-digit denominator)")


def bench_ur() -> None:
    from markov_oca.analysis.exact import ExactChain
    from markov_oca.ur.chain import ur_chain
    from markov_oca.ur.optimal import solve_optimal
    from markov_oca.ur.rules import load_ur

    rules = load_ur("ur", {"pieces": 2})
    t0 = time.perf_counter()
    values = solve_optimal(rules).values
    t_opt = time.perf_counter() - t0
    for light, dark in (("random", "random"), ("optimal", "optimal")):
        t0 = time.perf_counter()
        chain = ur_chain(rules, light, dark, values)
        t1 = time.perf_counter()
        ex = ExactChain(chain)
        vals = {"turns": chain.state_rewards["turns"], "throws": chain.state_rewards["throws"]}
        e = ex.expected(vals)
        p = ex.outcome_probabilities()
        t2 = time.perf_counter()
        fl_p, fl_e = chain.outcome_probabilities(), chain.expected(vals)
        gaps = {k: abs(float(v) - fl_p[k]) for k, v in p.items()}
        gaps.update({f"{k} total": abs(float(e[k][0]) - fl_e[k][0]) for k in vals})
        report(f"Ur 2 pieces, {light} vs {dark}", chain, ex, t1 - t0, t2 - t1, gaps)
        lw = p["light wins"]
        print(f"    light wins {float(lw):.17g} ({len(str(lw.numerator)):,}/{len(str(lw.denominator)):,} digits); "
              f"outcomes sum to {sum(p.values())}" + (f"; value iteration {t_opt:.2f} s" if light == "optimal" else ""))


def main(argv: list[str]) -> None:
    sys.set_int_max_str_digits(0)
    which = argv or ["sl48", "moderna", "tradicional", "ur"]
    for w in which:
        {"sl48": bench_sl48, "moderna": lambda: bench_goose("oca-moderna"),
         "tradicional": lambda: bench_goose("oca-tradicional"), "ur": bench_ur}[w]()


if __name__ == "__main__":
    main(sys.argv[1:])
