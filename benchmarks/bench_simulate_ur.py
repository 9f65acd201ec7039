"""Games per second of simulated Ur, random against random, seven pieces (the shipped ``ur`` rules).

    python benchmarks/bench_simulate_ur.py                    # 400,000 numba games, 2,000 in plain Python
    python benchmarks/bench_simulate_ur.py --games 1000000 --python-games 5000 --threads 1

The numba simulator (:func:`markov_oca.simulate.ur.simulate_ur`, after a warm-up that
compiles it or loads its cache) against the plain-Python loop
(:func:`markov_oca.simulate.ur.play_ur_python`) playing the same rules.
"""

from __future__ import annotations

import argparse

import numba

from markov_oca.simulate.ur import bench_ur


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=400_000, help="games for the numba simulator")
    ap.add_argument("--python-games", type=int, default=2_000, help="games for the plain-Python loop")
    ap.add_argument("--threads", type=int, default=None, help="numba threads (all by default)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        numba.set_num_threads(args.threads)
    r = bench_ur(args.games, args.python_games, args.seed)
    print(f"{r['rules']}, {r['pieces']} pieces, random v random, mean {r['mean_throws']:.1f} throws a game")
    print(f"  numba ({r['threads']} threads): {r['numba_games_per_second']:12,.0f} games/s  ({r['games']:,} games)")
    print(f"  plain Python:        {r['python_games_per_second']:12,.0f} games/s  ({r['python_games']:,} games)")
    print(f"  speedup:             {r['speedup']:12,.1f} x")


if __name__ == "__main__":
    main()
