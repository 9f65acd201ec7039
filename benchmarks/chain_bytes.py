"""Bytes a state of the chains every family builds: peak memory beside the bound and the guard's estimate.

    python benchmarks/chain_bytes.py                 # every case below
    python benchmarks/chain_bytes.py --case ur:4     # one case

Issue 12 bounds the build, the solves and the length distribution of any chain at
about 250 bytes a state plus 16 a transition, and asks the memory guard's estimate to
be within 1.5 times the measured peak. Each case runs in a child process under
``/usr/bin/time -v`` (its peak resident set, measured from outside): the family's own
route from rules to every figure on the generic :class:`~markov_oca.chain.Chain`
(goose: the joint chain and ``results.analyse``; Ur: ``solve_ur(method="chain")`` for a
policy pair; points: ``solve_punti(method="chain")``), length distribution to 1e-10.

Columns: states and transitions (distinct next states per state); the peak; the bound
``base + 250 n + 16 t`` with ``base`` the interpreter once the solve's compiled kernels are
loaded (:data:`markov_oca.core.memory.BASE_BYTES`, measured); the guard's estimate (goose:
``GooseModel.estimated_bytes`` with the counted states; Ur: ``ur.chain.chain_bytes``;
points: ``PuntiModel.bytes_per_state`` times the states plus the base) and its ratio to the
peak; and the bytes a state over the base.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

CASES = ["goose:oca-moderna:2", "goose:oca-moderna:3", "goose:oca-tradicional:3", "ur:2", "ur:3", "ur:4",
         "punti:never", "punti:always"]


def child(case: str) -> dict:
    from markov_oca.core.memory import BASE_BYTES

    kind, *rest = case.split(":")
    t0 = time.perf_counter()
    if kind == "goose":
        from markov_oca.engine.race import analyse
        from markov_oca.goose.model import goose_model
        from markov_oca.goose.rules import load_goose

        rules = load_goose(rest[0])
        m = goose_model(rules, int(rest[1]))
        chain = m.build()
        res = analyse(chain, rules=rules, players=m.players, tail=1e-10, landings=False)
        n, t = chain.n, chain.n_transitions
        estimate = m.estimated_bytes(n, t)
        figure = res.seats[0].win
    elif kind == "ur":
        from markov_oca.ur.chain import chain_bytes
        from markov_oca.ur.rules import load_ur
        from markov_oca.ur.solve import solve_ur

        rules = load_ur("ur", {"pieces": int(rest[0])})
        res = solve_ur(rules, "random", "random", method="chain", tail=1e-10)
        n, t = res.states, res.transitions
        estimate = chain_bytes(rules)
        figure = float(res.wins["light"])
    elif kind == "punti":
        from markov_oca.punti import solve_punti
        from markov_oca.punti.model import punti_model
        from markov_oca.punti.rules import load_punti

        rules = load_punti("gioco-oca-punti")
        res = solve_punti(rules, bet=rest[0], method="chain", tail=1e-10)
        n, t = res.states, res.transitions
        estimate = BASE_BYTES + n * punti_model(rules).bytes_per_state()
        figure = res.seats[0].win
    else:
        raise SystemExit(f"unknown case {case!r}")
    return {"case": case, "states": int(n), "transitions": int(t), "estimate": int(estimate),
            "base": int(BASE_BYTES), "seconds": time.perf_counter() - t0, "figure": float(figure)}


def run(case: str) -> dict:
    proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, __file__, "--child", case],
                          capture_output=True, text=True, env=os.environ)
    if proc.returncode != 0:
        raise SystemExit(f"{case}: child failed\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["peak"] = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1)) * 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", action="append", help=f"one of {', '.join(CASES)} (repeatable)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    mib = 2**20
    print(f"{'case':<24} {'states':>11} {'transitions':>12} {'s':>6} {'peak MiB':>9} {'bound MiB':>10} "
          f"{'peak/bound':>10} {'estimate':>9} {'est/peak':>8} {'B/state':>8}")
    for case in args.case or CASES:
        r = run(case)
        bound = r["base"] + 250 * r["states"] + 16 * r["transitions"]
        per_state = (r["peak"] - r["base"]) / r["states"]
        print(f"{case:<24} {r['states']:>11,} {r['transitions']:>12,} {r['seconds']:>6.1f} {r['peak'] / mib:>9,.0f} "
              f"{bound / mib:>10,.0f} {r['peak'] / bound:>10.2f} {r['estimate'] / mib:>9,.0f} "
              f"{r['estimate'] / r['peak']:>8.2f} {per_state:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
