"""Solve the Royal Game of Ur optimally; print positions, time, sweeps, residual and peak memory.

    python benchmarks/bench_ur.py 4            # the classic game with four pieces
    python benchmarks/bench_ur.py 5 ur-simplificado

solve_optimal runs the layered solve (markov_oca/ur/layered.py): one layer's
successors at a time; benchmarks/ur_full.py prints each layer of it and runs the
seven-piece game.
"""

from __future__ import annotations

import argparse
import resource
import time

from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pieces", nargs="?", type=int, default=4)
    ap.add_argument("rules", nargs="?", default="ur")
    args = ap.parse_args()
    solve_optimal(load_ur(args.rules, {"pieces": 1}))  # compile / load the numba cache
    rules = load_ur(args.rules, {"pieces": args.pieces})
    t0 = time.perf_counter()
    sol = solve_optimal(rules)
    dt = time.perf_counter() - t0
    sp = UrSpace(args.pieces)
    start = sp.rank(0, 0, args.pieces, 0, 0, args.pieces, 0)
    print(f"{args.rules}, {args.pieces} pieces: {sp.size:,} positions per side to move")
    print(f"  optimal values in {dt:.1f} s, {sol.sweeps} Gauss-Seidel sweeps over the layers, "
          f"largest final change {sol.residual:.1e}")
    print(f"  light (moves first) wins with {sol.values[start]:.12f} under optimal play")
    print(f"  peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
