"""The whole Royal Game of Ur solved optimally, layer by layer; print what each layer cost.

    python benchmarks/ur_full.py                      # seven pieces, Gauss-Seidel by mirror pairs, progress order
    python benchmarks/ur_full.py 4 --method jacobi    # to compare (gs: plain Gauss-Seidel)
    python benchmarks/ur_full.py 4 --order rank       # or reverse
    python benchmarks/ur_full.py 7 --checkpoint /tmp/ur7 --table /tmp/ur7.npy
    python benchmarks/ur_full.py 7 --pair optimal,optimal --table /tmp/ur7.npy --tail 1e-6
    python benchmarks/ur_full.py 7 --push optimal,optimal --table /tmp/ur7.npy --tail 1e-6 --parts 2
    python benchmarks/ur_full.py 7 --bound optimal,optimal --table /tmp/ur7.npy --bound-tol 1e-4
    python benchmarks/ur_full.py 7 --sums optimal,optimal --table /tmp/ur7.npy --precision 1e-9
    python benchmarks/ur_full.py 5 --evaluate optimal,optimal --table /tmp/ur5.npy --tol 1e-11
    python benchmarks/ur_full.py 7 --layered random,optimal --table /tmp/ur7.npy --rules ur-masters
    python benchmarks/ur_full.py 7 --rgu /tmp/ur7.rgu --table /tmp/ur7.npy --royalur ~/RoyalUr-Python
    python benchmarks/ur_full.py 5 --rules ur-blitz       # any rule set: ur-blitz, ur-masters, ur-aseb

Prints states, sweeps and seconds per layer, the total, the residual of a final full
Bellman pass (recomputed from the move kernel), the first player's chance to 12
digits and the peak resident memory of this process (measure it from outside too:
``/usr/bin/time -v``).

``--pair LIGHT,DARK`` (with a saved ``--table`` when a side plays optimal) solves that pair
of policies instead, as ``solve ur`` does from six pieces: each side's chance, the expected
turns and throws and the length distribution, from the threaded forward push.
``--push LIGHT,DARK`` runs that push alone (``--parts`` threads, places under ``--drop`` let go) and
prints every tenth turn: its seconds, the mass in play and the mass dropped so far.
``--bound LIGHT,DARK`` times the loose layered evaluation that bounds the throws to come from every
position (``--bound-tol``); ``--sums LIGHT,DARK`` sweeps the expected throws and turns from the start on the
push's moves, with their certified bounds (``--precision``, relative); ``--chances LIGHT,DARK`` sweeps each
side's chance on the pair's moves the same way; ``--layered LIGHT,DARK`` sweeps it layer by layer in little memory
(``ur stats``'s weaker pairs), and prints the pair with the sides swapped too (one sweep holds both) and its
memory estimate beside the peak; ``--evaluate LIGHT,DARK`` the
layered policy evaluation (``--tol``), layer by layer, with its residual and the error bounds at the start.
Threads: ``NUMBA_NUM_THREADS``.

``--rgu FILE`` writes the table as a ``.rgu`` file (``--values``, percent16 by default),
timed; with ``--royalur DIR`` (a checkout of RoyalUr-Python, not part of this project) it
loads the file with their ``royalur/lut/reader.py`` and looks up ``--sample`` positions
under keys made by their ``SimpleGameStateEncoding``, against our table. Their encoder is the
seven-piece Finkel encoding (Bell's path), the keys RoyalUr-Java writes at seven pieces only: the
check is made for ``ur`` at seven pieces.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

from markov_oca.ur.layered import METHODS, ORDERS, save_table, solve_layered
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import space_of

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
    ap.add_argument("--pair", default=None, help="LIGHT,DARK: solve a pair of policies from the saved --table")
    ap.add_argument("--tail", type=float, default=1e-6, help="with --pair: the length distribution's tail")
    ap.add_argument("--push", default=None, help="LIGHT,DARK: time the forward push alone, turn by turn")
    ap.add_argument("--parts", type=int, default=1, help="with --push: threads")
    ap.add_argument("--drop", type=float, default=None, help="with --push: let go of places under this mass")
    ap.add_argument("--bound", default=None, help="LIGHT,DARK: time the bound on the throws to come")
    ap.add_argument("--bound-tol", type=float, default=1e-4, help="with --bound: the loose evaluation's change")
    ap.add_argument("--sums", default=None, help="LIGHT,DARK: sweep the expected throws and turns on the push's moves")
    ap.add_argument("--chances", default=None, help="LIGHT,DARK: sweep each side's chance (and the throws and turns) "
                    "on the push's moves, all positions at once")
    ap.add_argument("--layered", default=None, help="LIGHT,DARK: sweep each side's chance layer by layer, as `ur "
                    "stats` does for its weaker pairs")
    ap.add_argument("--precision", type=float, default=1e-9, help="with --sums: the relative bound to meet")
    ap.add_argument("--evaluate", default=None, help="LIGHT,DARK: time the layered policy evaluation (--tol)")
    ap.add_argument("--rgu", default=None, help="write the saved --table as this .rgu file")
    ap.add_argument("--values", default="percent16", help="with --rgu: percent16, float32 or float64")
    ap.add_argument("--royalur", default=None, help="with --rgu: a RoyalUr-Python checkout to read the file with")
    ap.add_argument("--sample", type=int, default=500, help="with --royalur: positions looked up")
    args = ap.parse_args()
    if args.pair:
        return pair(args)
    if args.push:
        return push(args)
    if args.bound:
        return bound(args)
    if args.sums:
        return sums(args)
    if args.chances:
        return chances(args)
    if args.evaluate:
        return evaluate(args)
    if args.layered:
        return layered(args)
    if args.rgu:
        return rgu(args)
    solve_layered(load_ur(args.rules, {"pieces": 1}), residual=True)  # compile / load the numba cache
    rules = load_ur(args.rules, {"pieces": args.pieces})
    sp = space_of(rules.pieces, rules.code)
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


def pair(args) -> None:
    from markov_oca.ur.layered import load_table
    from markov_oca.ur.solve import solve_ur

    light, dark = args.pair.split(",")
    rules = load_ur(args.rules, {"pieces": args.pieces})
    values = load_table(args.table, rules) if args.table else None
    solve_ur(load_ur(args.rules, {"pieces": 2}), light, dark, method="sweeps", tail=1e-3)  # compile
    t0 = time.perf_counter()
    res = solve_ur(rules, light, dark, values=values, method="sweeps", tail=args.tail, progress=True)
    dt = time.perf_counter() - t0
    d = res.to_dict()
    print(f"{args.rules}, {args.pieces} pieces, light {light} against dark {dark}: {res.positions:,} positions")
    print(f"  light wins {float(res.wins['light']):.12f}, dark {float(res.wins['dark']):.12f}")
    turns, throws = float(res.expected["turns"].total), float(res.expected["throws"].total)
    print(f"  expected turns {turns:.9f}, throws {throws:.9f}")
    ln = d["length"]
    print(f"  length: {len(ln['pmf']) - 1} turns pushed, tail {ln['tail_mass']:.1e}; median {ln['median']}, "
          f"p90 {ln['p90']}, p99 {ln['p99']}")
    print(f"  solver: {res.solver}")
    if res.bounds is not None:
        b = res.bounds
        print(f"  error bounds: wins {b['wins']['light']:.1e}, turns {b['expected']['turns']['total']:.1e}, "
              f"throws {b['expected']['throws']['total']:.1e}" + (f"; {res.route}" if res.route else ""))
    print(f"  timings: {', '.join(f'{k} {v:.1f} s' for k, v in res.timings.items())}; total {dt:.1f} s")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def push(args) -> None:
    from markov_oca.ur.layered import load_table
    from markov_oca.ur.sweeps import push_lengths

    light, dark = args.push.split(",")
    rules = load_ur(args.rules, {"pieces": args.pieces})
    values = load_table(args.table, rules) if args.table else None
    small = load_ur(args.rules, {"pieces": 2})
    push_lengths(small, light, dark, solve_layered(small).values, tail=1e-3, parts=args.parts)  # compile
    t0 = time.perf_counter()
    c0 = time.process_time()

    def turn(t, left, dropped, sec):
        if t % 10 == 0:
            print(f"  turn {t:4d}: {sec:6.3f} s, in play {left:.3e}, dropped {dropped:.1e}, "
                  f"CPU so far {time.process_time() - c0:.0f} s", flush=True)

    p = push_lengths(rules, light, dark, values, tail=args.tail, parts=args.parts, drop=args.drop, on_turn=turn)
    dt = time.perf_counter() - t0
    print(f"{args.rules}, {args.pieces} pieces, light {light} against dark {dark}, {args.parts} thread(s): "
          f"build {p.build_seconds:.1f} s, push {p.push_seconds:.1f} s ({p.dist.pmf.size - 1} turns, "
          f"{p.push_seconds / max(1, p.dist.pmf.size - 1):.3f} s a turn); total {dt:.1f} s wall, "
          f"{time.process_time() - c0:.0f} s CPU")
    print(f"  in play {p.left:.3e}, dropped {p.dropped:.3e}, tail {p.dist.tail:.3e}")
    cdf = np.cumsum(p.dist.pmf)
    reached = {q: int(np.searchsorted(cdf, q)) for q in (0.5, 0.9, 0.99) if cdf[-1] >= q}
    print("  turns: " + ", ".join(f"p{round(q * 100)} {t}" for q, t in reached.items()) + " (those the push reached)")
    print(f"  turns {p.turns:.12f} (tail extrapolated {p.tail_turns:.2e}), throws {p.throws:.12f}; "
          f"wins within the turns pushed {p.wins[0]:.12f}, {p.wins[1]:.12f}")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def _pair(args, pair: str):
    """(light, dark, the rules, the table if a side plays optimal, the two-piece rules to compile on)."""
    light, dark = pair.split(",")
    rules = load_ur(args.rules, {"pieces": args.pieces})
    return light, dark, rules, _values(args, rules, light, dark), load_ur(args.rules, {"pieces": 2})


def _values(args, rules, light, dark):
    from markov_oca.ur.layered import load_table

    if args.table:
        return load_table(args.table, rules)
    return solve_layered(rules).values if "optimal" in (light, dark) else None


def bound(args) -> None:
    from markov_oca.ur.sweeps import throws_bound

    light, dark, rules, values, small = _pair(args, args.bound)
    throws_bound(small, light, dark, solve_layered(small).values)  # compile
    t0, c0 = time.perf_counter(), time.process_time()
    b = throws_bound(rules, light, dark, values, tol=args.bound_tol, progress=True)
    print(f"{args.rules}, {args.pieces} pieces, light {light} against dark {dark}: throws to come at most "
          f"{b.bound:.6f} from any position (largest computed {b.largest:.6f}, residual {b.residual:.2e}, "
          f"{b.sweeps} sweeps); {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.0f} s CPU")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def sums(args) -> None:
    from markov_oca.ur.sweeps import push_lengths

    light, dark, rules, values, small = _pair(args, args.sums)
    push_lengths(small, light, dark, solve_layered(small).values, max_turns=0, sums_precision=1e-9)  # compile
    t0, c0 = time.perf_counter(), time.process_time()
    p = push_lengths(rules, light, dark, values, max_turns=0, sums_precision=args.precision, progress=True)
    s = p.sums
    print(f"{args.rules}, {args.pieces} pieces, light {light} against dark {dark}: expected turns {s.turns:.9f} "
          f"± {s.turns_bound:.1e}, throws {s.throws:.9f} ± {s.throws_bound:.1e} ({s.sweeps} sweeps, last change "
          f"{s.change:.1e}, residuals {s.residual[0]:.1e} {s.residual[1]:.1e}, {s.seconds:.1f} s); the moves built in "
          f"{p.build_seconds:.1f} s; {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.0f} s CPU")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def chances(args) -> None:
    from markov_oca.ur.bound import pair_sums

    light, dark, rules, values, small = _pair(args, args.chances)
    pair_sums(small, light, dark, solve_layered(small).values, precision=1e-9)  # compile
    t0, c0 = time.perf_counter(), time.process_time()
    s = pair_sums(rules, light, dark, values, precision=args.precision, progress=True)
    small_side = min(s.win, 1.0 - s.win)
    print(f"{args.rules}, {args.pieces} pieces, light {light} against dark {dark}: light wins {s.win:.12f}, dark "
          f"{1.0 - s.win:.12f}, each ± {s.win_bound:.1e} ({s.win_bound / small_side:.1e} of the smaller); "
          f"{s.sweeps} sweeps, last change {s.change:.1e}, residuals {s.residual[0]:.1e} (throws) {s.residual[2]:.1e} "
          f"(chance); {s.seconds:.1f} s in all, {time.perf_counter() - t0:.1f} s wall, "
          f"{time.process_time() - c0:.0f} s CPU")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def layered(args) -> None:
    from markov_oca.ur.layersums import layered_pairs, layered_sums_bytes

    light, dark, rules, values, small = _pair(args, args.layered)
    layered_pairs(small, light, dark, solve_layered(small).values)  # compile
    need = layered_sums_bytes(rules, light, dark)
    t0, c0 = time.perf_counter(), time.process_time()
    pairs = layered_pairs(rules, light, dark, values, progress=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    for (lt, dk), s in zip(((light, dark), (dark, light)), pairs, strict=True):
        small_side = min(s.win, 1.0 - s.win)
        print(f"{args.rules}, {args.pieces} pieces, light {lt} against dark {dk}: light wins {s.win:.12f}, dark "
              f"{1.0 - s.win:.12f}, each ± {s.win_bound:.1e} ({s.win_bound / small_side:.1e} of the smaller); "
              f"throws {s.throws:.6f} ± {s.throws_bound:.1e}")
    s = pairs[0]
    print(f"  both from one sweep: {s.sweeps} sweeps over the layers, residuals {s.residual[0]:.1e} (throws) "
          f"{s.chance_relative:.1e} (chance, relative); {wall:.1f} s wall, {cpu:.0f} s CPU")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB "
          f"(estimate {need / 2**20:.0f} MB)")


def evaluate(args) -> None:
    from markov_oca.ur.sweeps import evaluate_policies

    light, dark, rules, values, small = _pair(args, args.evaluate)
    evaluate_policies(small, light, dark, solve_layered(small).values)  # compile
    t0, c0 = time.perf_counter(), time.process_time()

    def row(pair, n, k, change, res):
        print(f"  {pair!s:>8s} {n:12,d} positions, {k:4d} sweeps, change {change:.1e}, residual (win, throws, turns) "
              f"{res[0]:.1e} {res[1]:.1e} {res[2]:.1e}; {time.perf_counter() - t0:.0f} s", flush=True)

    ev = evaluate_policies(rules, light, dark, values, tol=args.tol, on_layer=row)
    start = space_of(rules.pieces, rules.code).rank(0, 0, args.pieces, 0, 0, args.pieces, 0)
    (w, y, z), (bw, by, bz) = ev.at(start), ev.bounds(start)
    print(f"{args.rules}, {args.pieces} pieces, light {light} against dark {dark}: light wins {w:.12f} (+-{bw:.1e}), "
          f"throws {y:.9f} (+-{by:.1e}), turns {z:.9f} (+-{bz:.1e}); {ev.sweeps} sweeps, "
          f"{time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.0f} s CPU")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def rgu(args) -> None:
    from markov_oca.ur.layered import load_table
    from markov_oca.ur.table import write_rgu

    rules = load_ur(args.rules, {"pieces": args.pieces})
    values = load_table(args.table, rules)
    t0 = time.perf_counter()
    n = write_rgu(rules, values, args.rgu, args.values)
    dt = time.perf_counter() - t0
    print(f"{args.rgu}: {n:,} positions, values {args.values}, {os.path.getsize(args.rgu) / 2**20:,.1f} MiB, "
          f"written in {dt:.1f} s")
    if args.royalur:
        royalur_check(rules, values, args.rgu, args.royalur, args.sample)
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def royalur_check(rules, values, path, checkout, sample) -> None:
    """Their reader loads the file; their encoder makes the keys of our positions; the values agree."""
    from markov_oca.ur.kernel import is_terminal
    from markov_oca.ur.state import decode

    sys.path.insert(0, checkout)
    from royalur.lut.board_encoder import SimpleGameStateEncoding
    from royalur.lut.reader import LutReader
    from royalur.model.player import PlayerType

    class Piece:
        def __init__(self, owner):
            self.owner = owner

    class Board:  # their board's storage: row-major, three columns, light's column 0
        def __init__(self):
            self._pieces = [None] * 24

        def _calc_tile_index(self, ix, iy):
            return iy * 3 + ix

    class Player:
        def __init__(self, hand):
            self._piece_count = hand

    class State:
        def __init__(self, board, light_hand, dark_hand):
            self.board, self.light_player, self.dark_player = board, Player(light_hand), Player(dark_hand)

        def get_turn(self):
            return PlayerType.LIGHT

    def tile(square, column):  # Bell's paths: down the side column, up the middle, back to rows 7 and 6
        if square <= 4:
            return column, 4 - square
        if square <= 12:
            return 1, square - 5
        return column, 20 - square

    if rules.pieces != 7 or rules.code != space_of(7).code:
        print("RoyalUr-Python's encoder numbers Bell's path for seven pieces: no check at "
              f"{rules.pieces} pieces or off Bell's path (tests/ur/test_ur_rgu.py reads these files)")
        return
    t0 = time.perf_counter()
    lut = LutReader(path).read()
    print(f"RoyalUr-Python's LutReader: {len(lut):,} entries read in {time.perf_counter() - t0:.1f} s, "
          f"value_type {lut.get_metadata()['decoded_header']['value_type']}")
    enc = SimpleGameStateEncoding()
    space = space_of(rules.pieces, rules.code)
    rng = np.random.default_rng(13)
    idx = np.arange(space.size) if space.size <= sample else rng.choice(space.size, sample, replace=False)
    worst, checked = 0.0, 0
    for i in idx:
        pos = space.unrank(int(i))
        if is_terminal(pos, rules):
            continue
        light, dark = decode(pos)
        board = Board()
        for squares, column, who in ((light, 0, PlayerType.LIGHT), (dark, 2, PlayerType.DARK)):
            for sq in squares:
                if 1 <= sq <= 14:
                    board._pieces[board._calc_tile_index(*tile(sq, column))] = Piece(who)
        key = enc.encode_game_state(State(board, light.count(0), dark.count(0)))
        worst = max(worst, abs(lut.lookup(0, key) / 65535.0 - float(values[i])))
        checked += 1
    print(f"{checked:,} positions (not over) looked up under their encoder's keys: largest difference from our "
          f"table {worst:.2e} (half a percent16 step: {0.5 / 65535:.2e})")


if __name__ == "__main__":
    main()
