"""Exact two-piece Ur at the position level (markov_oca/ur/exact.py, ur/certify.py), timed.

Cases (any of them, in order; default all):

* ``ur2-optimal``: both sides optimal (the mirror systems: 12,786 unknowns each);
* ``ur2-random``: both sides random;
* ``ur2-mixed``: light random, dark optimal (one system of position and side, 25,572 unknowns);
* ``ur2-certify``: the float-optimal policy evaluated exactly over all 12,869 positions not
  over, and every move compared exactly (:func:`markov_oca.ur.certify.certify_optimal`).

For each: the unknowns, the float LU's fill, the lifting steps and bits a step, the seconds
of each phase (wall) and the process's CPU seconds, the denominators' digits, and the
largest gap between the exact fractions and the float chain (``solve_ur(method="chain")``).
Run from the repository root:

    PYTHONPATH=$PWD /usr/bin/time -v python benchmarks/bench_ur_exact.py ur2-optimal

(peak memory from outside, as ``Maximum resident set size``).
"""

from __future__ import annotations

import sys
import time

CASES = {"ur2-optimal": ("optimal", "optimal"), "ur2-random": ("random", "random"),
         "ur2-mixed": ("random", "optimal")}


def cpu() -> float:
    t = time.process_time()
    return t


def bench_pair(name: str, light: str, dark: str) -> None:
    from markov_oca.ur.exact import _digits, solve_ur_exact
    from markov_oca.ur.optimal import solve_optimal
    from markov_oca.ur.rules import load_ur
    from markov_oca.ur.solve import solve_ur

    rules = load_ur("ur", {"pieces": 2})
    opt = solve_optimal(rules)
    w0, c0 = time.perf_counter(), cpu()
    res = solve_ur_exact(rules, light, dark, values=opt.values, residual=opt.residual)
    wall, used = time.perf_counter() - w0, cpu() - c0
    fl = solve_ur(rules, light, dark, method="chain", optimal=opt)
    gaps = {"light wins": abs(float(res.wins["light"]) - float(fl.wins["light"])),
            "dark wins": abs(float(res.wins["dark"]) - float(fl.wins["dark"])),
            "throws": abs(float(res.expected["throws"].total) - float(fl.expected["throws"].total)),
            "turns": abs(float(res.expected["turns"].total) - float(fl.expected["turns"].total))}
    print(f"{name}: light {light} against dark {dark}: exact solve {wall:.1f} s wall, {used:.1f} s CPU")
    for s in res.solver:
        print(f"    {s['unknowns']:,} unknowns, fill {s['fill']:,}, {s['iterations']:,} steps: {s['method']}; "
              f"common denominator {s['denominator_digits']:,} digits")
    print("    phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in res.timings.items()))
    w = res.wins["light"]
    print(f"    light wins {float(w):.17g} (numerator {_digits(w.numerator):,} digits, denominator "
          f"{_digits(w.denominator):,}); sum of the chances {res.wins['light'] + res.wins['dark']}")
    print(f"    throws {float(res.expected['throws'].total):.15g}, turns {float(res.expected['turns'].total):.15g}")
    print("    largest |exact - float chain|: " + ", ".join(f"{k} {v:.1e}" for k, v in gaps.items()))


def bench_certify() -> None:
    from markov_oca.ur.certify import certify_optimal
    from markov_oca.ur.optimal import solve_optimal
    from markov_oca.ur.rules import load_ur

    rules = load_ur("ur", {"pieces": 2})
    values = solve_optimal(rules).values
    w0, c0 = time.perf_counter(), cpu()
    cert = certify_optimal(rules, values)
    wall, used = time.perf_counter() - w0, cpu() - c0
    print(f"ur2-certify: {wall:.1f} s wall, {used:.1f} s CPU; " + cert.text())
    print("    phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in cert.seconds.items()))


def main(argv: list[str]) -> None:
    names = argv or [*CASES, "ur2-certify"]
    for name in names:
        if name == "ur2-certify":
            bench_certify()
        elif name in CASES:
            bench_pair(name, *CASES[name])
        else:
            raise SystemExit(f"unknown case {name!r}: {', '.join([*CASES, 'ur2-certify'])}")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
