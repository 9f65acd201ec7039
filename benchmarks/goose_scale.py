"""Goose chains from 1 to 4 players: states, transitions, times, peak memory and the guard's estimate.

    python benchmarks/goose_scale.py                      # 1-3 players solved, 4 players built only
    python benchmarks/goose_scale.py --solve-four         # 4 players solved too (about 14 GB, long)
    python benchmarks/goose_scale.py --rules oca-moderna --players 3
    python benchmarks/goose_scale.py --one oca-moderna 3  # one run in this process, as JSON

Each run is a child process measured from outside with ``/usr/bin/time -v`` (its
peak resident set, the interpreter included), beside the guard's estimate for
the counted states (``GooseModel.estimated_bytes``) and its ratio. "solve" is
every seat's winning chance, deadlock and expected turns, rounds and throws;
"length" the length distribution to ``--tail``. A 1-player warm-up in each child
loads the compiled kernels first.

With stormpy installed (the ``[storm]`` extra) each solved chain is also written
as Storm explicit files (``markov_oca.export.write_explicit``) and handed to
Storm, which computes seat 1's winning chance with its sound default; the
benchmark prints Storm's time, the ratio and whether the two agree to 1e-9.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RULES = ("oca-moderna", "jeu-de-l-oie", "oca-tradicional")
ROOT = Path(__file__).resolve().parent.parent


def one(rules_name: str, players: int, build_only: bool, tail: float, storm: bool) -> dict:
    import numba

    from markov_oca.goose.model import BASE_BYTES, goose_model
    from markov_oca.goose.rules import load_goose
    from markov_oca.goose.solve import solve_goose

    @numba.njit(cache=True)
    def merged(nxt):
        total = 0
        for s in range(nxt.shape[0]):
            for j in range(nxt.shape[1]):
                t = nxt[s, j]
                if t < 0:
                    break
                dup = False
                for k in range(j):
                    if nxt[s, k] == t:
                        dup = True
                total += not dup
        return total

    rules = load_goose(rules_name)
    solve_goose(rules, 1, landings=False)  # warm-up: the compiled kernels
    m = goose_model(rules, players)
    out: dict = {"rules": rules_name, "players": players, "full_ids": m.full_size,
                 "estimate_upper": m.estimated_bytes()}
    if build_only:
        t0 = time.perf_counter()
        chain = m.build()
        out.update(states=chain.n, transitions=int(merged(chain.next)), build=time.perf_counter() - t0)
    else:
        res = solve_goose(rules, players, landings=False, tail=tail)
        out.update(states=res.states, transitions=res.transitions, build=res.timings["build"],
                   solve=res.timings["solve"], length=res.timings["length"],
                   residual=max(s["residual"] for s in res.solver), wins=[float(s.win) for s in res.seats],
                   length_turns=len(res.length.pmf))
        if storm:
            out.update(storm_run(m, out["wins"][0]))
    phases = m.estimated_phases(out["states"], out["transitions"])
    if build_only:  # what the build holds: its own phase and the exploration's
        phases.pop("solve")
    out["estimate"] = BASE_BYTES + max(phases.values())
    return out


def storm_run(m, seat1: float) -> dict:
    """Seat 1's winning chance by Storm from the exported explicit files: time and agreement."""
    try:
        import stormpy
    except ImportError:
        return {}
    from markov_oca.export import write_explicit

    chain = m.build()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_explicit(chain, Path(tmp) / "chain", "storm")
        tra = next(str(p) for p in paths if p.suffix == ".tra")
        lab = next(str(p) for p in paths if p.suffix == ".lab")
        t0 = time.perf_counter()
        model = stormpy.build_model_from_explicit(tra, lab)
        label = next(x for x in model.labeling.get_labels() if "1" in x and "win" in x)
        prop = stormpy.parse_properties(f'P=? [F "{label}"]')[0]
        env = stormpy.environments.sound()
        result = stormpy.model_checking(model, prop, environment=env)
        value = float(result.at(model.initial_states[0]))
        took = time.perf_counter() - t0
    return {"storm": took, "storm_seat1": value, "storm_agrees": abs(value - seat1) <= 1e-9}


def measured(rules_name: str, players: int, build_only: bool, tail: float, storm: bool) -> dict:
    cmd = ["/usr/bin/time", "-v", sys.executable, __file__, "--one", rules_name, str(players), "--tail", str(tail)]
    if build_only:
        cmd.append("--build-only")
    if storm:
        cmd.append("--storm")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    wall = time.perf_counter() - t0
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    if p.returncode != 0:
        last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "?"
        for line in p.stderr.splitlines():
            if "Error" in line:
                last = line
                break
        return {"rules": rules_name, "players": players, "error": last, "wall": wall}
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    out["peak"] = int(peak.group(1)) * 1024 if peak else 0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2, metavar=("RULES", "PLAYERS"))
    ap.add_argument("--rules", action="append")
    ap.add_argument("--players", type=int, action="append")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--solve-four", action="store_true", help="solve 4 players as well (else built only)")
    ap.add_argument("--tail", type=float, default=1e-10)
    ap.add_argument("--storm", action="store_true", help="also hand each solved chain to Storm (stormpy)")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.build_only, args.tail, args.storm)))
        return
    mib = 2**20
    print(f"{'rules':16} {'N':>2} {'states':>12} {'transitions':>13} {'B/state':>8} {'build s':>8} {'solve s':>8} "
          f"{'length s':>8} {'wall s':>7} {'peak MiB':>9} {'est MiB':>8} {'est/peak':>8} {'residual':>9}")
    for name in args.rules or RULES:
        for n in args.players or (1, 2, 3, 4):
            build_only = args.build_only or (n == 4 and not args.solve_four)
            r = measured(name, n, build_only, args.tail, args.storm)
            if "error" in r:
                print(f"{name:16} {n:>2} refused or failed after {r['wall']:.1f} s: {r['error']}")
                continue
            per = (r["peak"] - 160 * mib) / r["states"]
            line = (f"{name:16} {n:>2} {r['states']:>12,} {r['transitions']:>13,} {per:>8.0f} {r['build']:>8.1f} "
                    f"{r.get('solve', float('nan')):>8.1f} {r.get('length', float('nan')):>8.1f} {r['wall']:>7.1f} "
                    f"{r['peak'] / mib:>9.0f} {r['estimate'] / mib:>8.0f} {r['estimate'] / r['peak']:>8.2f} "
                    f"{r.get('residual', float('nan')):>9.1e}")
            if build_only:
                line += "  (built only)"
            if "storm" in r:
                line += (f"  storm {r['storm']:.1f} s, ratio {r['storm'] / (r['wall']):.2f}, "
                         f"agrees to 1e-9: {r['storm_agrees']}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
