"""The points game's three solves side by side: times, sizes, peak memory, and whether they agree.

    python benchmarks/bench_punti.py                  # 2 players (chain, layered, independent), 3 (independent)
    python benchmarks/bench_punti.py --layered-3      # also 3 players layer by layer: about an hour

Each solve runs in a child process so that its peak memory is its own. The first
run compiles the numba kernels (cached afterwards); a warm-up keeps that out.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import time


def _run(args: tuple[str, int, str, str], queue) -> None:
    from markov_oca.punti import solve_punti

    rules, players, bet, method = args
    t0 = time.perf_counter()
    r = solve_punti(rules, players, bet=bet, method=method, progress=True)
    queue.put({
        "seconds": time.perf_counter() - t0,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "states": r.states, "shares": [s.win_share for s in r.seats], "points": [s.points for s in r.seats],
        "turns": r.expected["turns"], "residual": max(x["residual"] for x in r.solver),
        "median": None if r.length is None else r.length.median,
    })


def run(rules: str, players: int, bet: str, method: str) -> dict:
    queue = mp.get_context("fork").Queue()
    p = mp.get_context("fork").Process(target=_run, args=((rules, players, bet, method), queue))
    p.start()
    out = queue.get()
    p.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rules", nargs="?", default="gioco-oca-punti")
    ap.add_argument("--layered-3", action="store_true", help="also solve 3 players layer by layer (about an hour)")
    args = ap.parse_args()
    from markov_oca.punti import solve_punti

    solve_punti(args.rules, 2, method="layered")  # compile / load the numba caches
    cases = [(2, "never", "chain"), (2, "never", "layered"), (2, "never", "independent"),
             (2, "always", "chain"), (2, "always", "layered"), (3, "never", "independent")]
    if args.layered_3:
        cases.append((3, "never", "layered"))
    print(f"{'players':>7} {'bets':>6} {'method':>11} {'states':>12} {'seconds':>8} {'peak MB':>8}  "
          "win shares / expected turns")
    for players, bet, method in cases:
        r = run(args.rules, players, bet, method)
        states = "-" if r["states"] is None else f"{r['states']:,}"
        shares = " ".join(f"{x:.10f}" for x in r["shares"])
        print(f"{players:>7} {bet:>6} {method:>11} {states:>12} {r['seconds']:8.1f} {r['peak_mb']:8.0f}  "
              f"{shares} / {r['turns']:.10f}", flush=True)
        print("        " + json.dumps({k: r[k] for k in ("points", "residual", "median")}), flush=True)


if __name__ == "__main__":
    main()
