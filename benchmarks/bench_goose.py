"""Build and solve goose chains; print states, times and peak memory.

    python benchmarks/bench_goose.py                 # 3-player oca-moderna, the issue's target
    python benchmarks/bench_goose.py oca-tradicional 2 --landings

"Solve" is what `markov-oca solve` needs first: every seat's winning chance,
the deadlock chance and the expected turns, rounds and throws (one block
solve). The length distribution and the landing chances are timed apart.
The first run compiles the numba kernels (cached afterwards); a warm-up on a
1-player chain keeps that out of the figures.
"""

from __future__ import annotations

import argparse
import resource
import time

import markov_oca
from markov_oca.engine.race import analyse


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rules", nargs="?", default="oca-moderna")
    ap.add_argument("players", nargs="?", type=int, default=3)
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("--landings", action="store_true")
    ap.add_argument("--length", action="store_true", help="also time the length distribution")
    args = ap.parse_args()
    opts = dict(o.split("=", 1) for o in args.option)

    markov_oca.solve(args.rules, 1, options=opts, landings=False)  # compile / load the numba cache

    rules = markov_oca.load(args.rules, opts)
    m = markov_oca.model(rules, args.players)
    t0 = time.perf_counter()
    chain = m.build()
    t_build = time.perf_counter() - t0
    t1 = time.perf_counter()
    exp = chain.expected({"turns": chain.state_rewards["turns"], "rounds": chain.state_rewards["rounds"],
                          "throws": chain.branch_rewards["throws"]})  # one block solve, absorption included
    wins = chain.outcome_probabilities()
    t_solve = time.perf_counter() - t1
    print(f"{args.rules}, {args.players} players, options {opts or 'default'}")
    print(f"  states                {chain.n:,} (mixed-radix space {m.full_size:,})")
    print(f"  transitions           {chain.n_transitions:,}")
    print(f"  build                 {t_build:.2f} s")
    print(f"  solve (wins+expected) {t_solve:.2f} s")
    print(f"  build + solve         {t_build + t_solve:.2f} s")
    for r in chain.reports:
        print(f"    {r.method}: {r.iterations} iterations, residual {r.residual:.2e}")
    print("  outcomes              " + ", ".join(f"{k} {v:.10f}" for k, v in wins.items()))
    print(f"  expected turns        {exp['turns'][0]:.10f} (given the game ends {exp['turns'][1]:.10f})")
    if args.length:
        t2 = time.perf_counter()
        dist = chain.length_distribution(tail=1e-10)
        print(f"  length distribution   {time.perf_counter() - t2:.2f} s, {dist.pmf.size - 1} turns, "
              f"median {dist.quantile(0.5):.0f}, p99 {dist.quantile(0.99):.0f}")
    if args.landings:
        t3 = time.perf_counter()
        analyse(chain, rules=rules, players=args.players, landing_events=lambda s: m.landing_events(chain, s),
                landings=True)
        print(f"  full analysis with landings {time.perf_counter() - t3:.2f} s")
    print(f"  peak memory           {peak_mb():.0f} MB")


if __name__ == "__main__":
    main()
