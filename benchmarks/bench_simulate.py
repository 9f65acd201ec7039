"""Games per second of the simulators: the numba kernels against a plain-Python loop.

    python benchmarks/bench_simulate.py                    # every part
    python benchmarks/bench_simulate.py goose --games 4000000 --python-games 20000
    python benchmarks/bench_simulate.py goose --threads 1  # one core's worth

Goose part: oca-moderna (or ``--rules``) with 1 and 2 players, the numba
simulator (``simulate_goose``, all numba threads) against ``play_goose_python``
(one core, ``random.Random`` dice). A warm-up run first loads the kernels from
numba's cache (or compiles them), so the figures are the steady state.
Ur part: random against random with seven pieces (the shipped ``ur``), the numba
simulator (``simulate_ur``) against ``play_ur_python``; a fifth of the goose games
(Ur games are about seven times longer).

Each part is a function returning rows ``(label, games, seconds)``; ``main``
prints them and the speedups.
"""

from __future__ import annotations

import argparse
import random
import time

import numba

from markov_oca import api
from markov_oca.goose.simulate import flatten_goose, play_goose_python, simulate_goose
from markov_oca.ur.rules import load_ur
from markov_oca.ur.simulate import play_ur_python, simulate_ur

Row = tuple[str, int, float]  # label, games, seconds


# ----------------------------------------------------------------------------- goose


def bench_goose(rules: str = "oca-moderna", players: tuple[int, ...] = (1, 2), games: int = 2_000_000,
                python_games: int = 20_000, seed: int = 1) -> list[tuple[Row, Row]]:
    """For each player count: (numba row, plain-Python row)."""
    r = api.load(rules)
    simulate_goose(r, 2, 1_000, seed=seed)  # warm-up: load or compile the kernels
    flat = flatten_goose(r)  # flattened once, as the simulator does, so the loop alone is timed
    out = []
    for p in players:
        s = simulate_goose(r, p, games, seed=seed)
        fast = (f"goose {rules} {p}p numba", games, s.elapsed)
        rng = random.Random(seed)
        t0 = time.perf_counter()
        for _ in range(python_games):
            play_goose_python(flat, p, rng)
        slow = (f"goose {rules} {p}p python", python_games, time.perf_counter() - t0)
        out.append((fast, slow))
    return out


# ----------------------------------------------------------------------------- ur


def bench_ur(rules: str = "ur", games: int = 400_000, python_games: int = 2_000,
             seed: int = 1) -> list[tuple[Row, Row]]:
    """Random against random, seven pieces: (numba row, plain-Python row)."""
    r = load_ur(rules)
    simulate_ur(r, games=1_000, seed=seed)  # warm-up: load or compile the kernels
    s = simulate_ur(r, games=games, seed=seed)
    fast = (f"{rules} {r.pieces} pieces random/random numba", games, s.elapsed)
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for _ in range(python_games):
        play_ur_python(r, rng=rng)
    slow = (f"{rules} {r.pieces} pieces random/random python", python_games, time.perf_counter() - t0)
    return [(fast, slow)]



# ----------------------------------------------------------------------------- report


def report(pairs: list[tuple[Row, Row]]) -> None:
    for fast, slow in pairs:
        for label, n, sec in (fast, slow):
            print(f"  {label:40s} {n:>11,} games {sec:8.2f} s {n / sec:>13,.0f} games/s")
        print(f"  {'speedup':40s} {(fast[1] / fast[2]) / (slow[1] / slow[2]):>46,.0f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", nargs="?", default="all", choices=["all", "goose", "ur"])
    ap.add_argument("--rules", default="oca-moderna", help="goose rule set")
    ap.add_argument("--games", type=int, default=2_000_000, help="games for the numba simulator")
    ap.add_argument("--python-games", type=int, default=20_000, help="games for the plain-Python loop")
    ap.add_argument("--threads", type=int, default=None, help="numba threads (default: all cores)")
    args = ap.parse_args()
    if args.threads:
        numba.set_num_threads(args.threads)
    print(f"numba threads: {numba.get_num_threads()} ({numba.config.THREADING_LAYER} layer requested)")
    if args.part in ("all", "goose"):
        report(bench_goose(args.rules, (1, 2), args.games, args.python_games))
    if args.part in ("all", "ur"):
        report(bench_ur("ur", max(args.games // 5, 1_000), max(args.python_games // 10, 100)))


if __name__ == "__main__":
    main()
