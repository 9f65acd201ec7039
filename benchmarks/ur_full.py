"""The whole Royal Game of Ur solved optimally, layer by layer; print what each layer cost.

    python benchmarks/ur_full.py                      # seven pieces, Gauss-Seidel by mirror pairs, progress order
    python benchmarks/ur_full.py 4 --method jacobi    # to compare (gs: plain Gauss-Seidel)
    python benchmarks/ur_full.py 4 --order rank       # or reverse
    python benchmarks/ur_full.py 7 --checkpoint /tmp/ur7 --table /tmp/ur7.npy

Prints states, sweeps and seconds per layer, the total, the residual of a final full
Bellman pass (recomputed from the move kernel), the first player's chance to 12
digits and the peak resident memory of this process (measure it from outside too:
``/usr/bin/time -v``).
"""

from __future__ import annotations

import argparse
import resource
import time

from markov_oca.ur.layered import METHODS, ORDERS, save_table, solve_layered
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace

PUBLISHED = 0.515404732509  # first player's chance, seven pieces, Finkel's rules (float64, 3e-14)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pieces", nargs="?", type=int, default=7)
    ap.add_argument("--rules", default="ur")
    ap.add_argument("--method", default="pairs", choices=METHODS)
    ap.add_argument("--order", default="progress", choices=ORDERS)
    ap.add_argument("--tol", type=float, default=1e-13)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--table", default=None, help="save the table here (.npy)")
    ap.add_argument("--no-residual", action="store_true")
    args = ap.parse_args()
    solve_layered(load_ur(args.rules, {"pieces": 1}), residual=True)  # compile / load the numba cache
    rules = load_ur(args.rules, {"pieces": args.pieces})
    sp = UrSpace(args.pieces)
    print(f"{args.rules}, {args.pieces} pieces: {sp.size:,} positions per side to move; "
          f"method {args.method}, order {args.order}, layer tolerance {args.tol:.0e}")
    print(f"{'layer':>8s} {'positions':>12s} {'entries':>13s} {'sweeps':>7s} {'last change':>12s} "
          f"{'build s':>8s} {'sweep s':>8s}", flush=True)

    def row(s):
        print(f"{s.pair!s:>8s} {s.positions:12,d} {s.entries:13,d} {s.sweeps:7d} {s.change:12.1e} "
              f"{s.build_seconds:8.1f} {s.sweep_seconds:8.1f}", flush=True)

    t0 = time.perf_counter()
    sol = solve_layered(rules, tol=args.tol, method=args.method, order=args.order, checkpoint=args.checkpoint,
                        residual=not args.no_residual, progress=True, on_layer=row)
    dt = time.perf_counter() - t0
    resumed = [s for s in sol.layers if s.resumed]
    if resumed:
        print(f"{len(resumed)} layers resumed from the checkpoint")
    build = sum(s.build_seconds for s in sol.layers)
    sweep = sum(s.sweep_seconds for s in sol.layers)
    print(f"total {dt:.1f} s wall (building {build:.1f} s, sweeping {sweep:.1f} s, {sol.sweeps} sweeps)")
    if sol.residual is not None:
        print(f"final full Bellman pass: residual {sol.residual:.2e}")
    start = sp.rank(0, 0, args.pieces, 0, 0, args.pieces, 0)
    p = float(sol.values[start])
    print(f"first player (light) wins with {p:.12f} under optimal play")
    if args.pieces == 7 and args.rules == "ur":
        print(f"published {PUBLISHED:.12f}: difference {abs(p - PUBLISHED):.1e}")
    if args.table:
        t1 = time.perf_counter()
        save_table(sol.values, args.table)
        print(f"table saved to {args.table} in {time.perf_counter() - t1:.1f} s")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
