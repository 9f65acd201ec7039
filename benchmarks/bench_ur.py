"""Solve the Royal Game of Ur optimally; print positions, time, sweeps, residual and peak memory.

    python benchmarks/bench_ur.py 4                        # the classic game with four pieces
    python benchmarks/bench_ur.py 5 ur-simplificado
    python benchmarks/bench_ur.py 4 --pair random,greedy   # solve ur for a policy pair (sweeps and push)
    python benchmarks/bench_ur.py 3 --chain random,random  # build the policy chain: states, branches, memory

solve_optimal runs the layered solve (markov_oca/ur/layered.py): one layer's
successors at a time; benchmarks/ur_full.py prints each layer of it and runs the
seven-piece game. ``--pair`` times ``solve_ur`` (the optimal values first when a side
plays optimal, unless a table is saved): the policy evaluation, the push's build and the
push itself. ``--chain`` builds :func:`markov_oca.ur.chain.ur_chain` and prints its
size beside the bound of issue 12 (250 bytes a state and 16 a transition) and the
guard's estimate. Peak memory is this process's; measure it from outside too
(``/usr/bin/time -v``).
"""

from __future__ import annotations

import argparse
import resource
import time

from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace


def peak() -> str:
    return f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pieces", nargs="?", type=int, default=4)
    ap.add_argument("rules", nargs="?", default="ur")
    ap.add_argument("--pair", default=None, help="LIGHT,DARK: solve ur for this pair of policies")
    ap.add_argument("--chain", default=None, help="LIGHT,DARK: build the policy chain")
    ap.add_argument("--tail", type=float, default=1e-10)
    args = ap.parse_args()
    rules = load_ur(args.rules, {"pieces": args.pieces})
    sp = UrSpace(args.pieces)
    if args.pair:
        from markov_oca.ur.solve import solve_ur

        light, dark = args.pair.split(",")
        t0 = time.perf_counter()
        res = solve_ur(rules, light, dark, tail=args.tail)
        dt = time.perf_counter() - t0
        print(f"{args.rules}, {args.pieces} pieces, {light} against {dark}: {dt:.1f} s "
              f"({', '.join(f'{k} {v:.1f} s' for k, v in res.timings.items())})")
        print(f"  light wins {float(res.wins['light']):.12f}, expected turns {float(res.expected['turns'].total):.6f}, "
              f"throws {float(res.expected['throws'].total):.6f}, {len(res.length.pmf) - 1} turns to a tail of "
              f"{args.tail:.0e}")
        print(f"  {peak()}")
        return
    if args.chain:
        from markov_oca.ur.chain import chain_bytes, ur_chain

        light, dark = args.chain.split(",")
        values = solve_optimal(rules).values if "optimal" in (light, dark) else None
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        t0 = time.perf_counter()
        c = ur_chain(rules, light, dark, values)
        dt = time.perf_counter() - t0
        branches = int((c.next >= 0).sum())
        bound = 250 * c.n + 16 * branches
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
        print(f"{args.rules}, {args.pieces} pieces, {light} against {dark}: chain of {c.n:,} states, {branches:,} "
              f"branches (width {c.next.shape[1]}) built in {dt:.1f} s")
        print(f"  the build grew the peak by {grown / 2**20:,.0f} MiB; bound 250 B/state + 16 B/branch "
              f"{bound / 2**20:,.0f} MiB; guard's estimate {chain_bytes(rules) / 2**20:,.0f} MiB")
        print(f"  {peak()}")
        return
    solve_optimal(load_ur(args.rules, {"pieces": 1}))  # compile / load the numba cache
    t0 = time.perf_counter()
    sol = solve_optimal(rules)
    dt = time.perf_counter() - t0
    start = sp.rank(0, 0, args.pieces, 0, 0, args.pieces, 0)
    print(f"{args.rules}, {args.pieces} pieces: {sp.size:,} positions per side to move")
    print(f"  optimal values in {dt:.1f} s, {sol.sweeps} Gauss-Seidel sweeps over the layers, "
          f"largest final change {sol.residual:.1e}")
    print(f"  light (moves first) wins with {sol.values[start]:.12f} under optimal play")
    print(f"  {peak()}")


if __name__ == "__main__":
    main()
