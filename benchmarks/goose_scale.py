"""Goose chains from 1 to 4 players: states, transitions, times, peak memory and the guard's estimate.

    python benchmarks/goose_scale.py                      # 1-4 players of each rule set, solved
    python benchmarks/goose_scale.py --storm              # and Storm on the same chains (2-3 players)
    python benchmarks/goose_scale.py --rules oca-moderna --players 3
    python benchmarks/goose_scale.py --one oca-moderna 3  # one run in this process, as JSON
    python benchmarks/goose_scale.py --turns oca-tradicional 60  # the 4-player pass's cost a turn, by kernel

Each run is a child process measured from outside with ``/usr/bin/time -v`` (its
peak resident set, the interpreter included), beside the guard's estimate for
the counted states and its ratio (``GooseModel.estimated_phases`` for the joint
chain, ``rotated_phases`` for the chain seen from the mover, which ``solve``
takes from 4 players: its rows say "rot" and give the joint states they stand
for). "solve" is every seat's winning chance, deadlock and expected turns,
rounds and throws; "length" the length distribution to ``--tail``. On the rotated
chain with turns in seat order (every default rule set) one forward pass on both
cores gives the length and the visits together, so "solve" includes "length"
and the row names the pass (turns played, the rest's geometric series); otherwise
the length runs beside the seat-shifted solve. A 1-player warm-up in each child
loads the compiled kernels first.

With stormpy installed (the ``[storm]`` extra) and ``--storm``, each joint chain
of 2 and 3 players is also written as Storm explicit files
(``markov_oca.export.write_explicit``) and handed to Storm, which computes seat
1's winning chance with its sound default (exact precision 1e-10); the benchmark
prints Storm's time (reading the files and checking), the ratio to our whole
run and whether the two agree to 1e-9.
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


def one(rules_name: str, players: int, build_only: bool, tail: float, storm: bool, storm_only: bool = False) -> dict:
    from markov_oca.goose.model import BASE_BYTES, goose_model
    from markov_oca.goose.rotated import rotated_phases
    from markov_oca.goose.rules import load_goose
    from markov_oca.goose.solve import ROTATED_FROM, solve_goose

    rules = load_goose(rules_name)
    if storm_only:
        return storm_run(goose_model(rules, players))
    solve_goose(rules, 1, landings=False)  # warm-up: the compiled kernels
    m = goose_model(rules, players)
    out: dict = {"rules": rules_name, "players": players, "full_ids": m.full_size,
                 "estimate_upper": m.estimated_bytes()}
    if build_only:
        t0 = time.perf_counter()
        chain = m.build()
        out.update(states=chain.n, transitions=chain.n_transitions, build=time.perf_counter() - t0)
    else:
        res = solve_goose(rules, players, landings=False, tail=tail)
        out.update(states=res.states, transitions=res.transitions, build=res.timings["build"],
                   solve=res.timings["solve"], length=res.timings["length"],
                   residual=max(s["residual"] for s in res.solver), wins=[float(s.win) for s in res.seats],
                   deadlock=float(res.deadlock), length_turns=len(res.length.pmf),
                   iterations=[s["iterations"] for s in res.solver], method=res.solver[0]["method"])
    if players >= ROTATED_FROM and not build_only:
        out["rotated"] = True
        out["joint_states"] = (out["states"] - players) * players
        phases = rotated_phases(m, out["states"], out["transitions"])
        out["estimate"] = BASE_BYTES + max(phases.values())
        return out
    phases = m.estimated_phases(out["states"], out["transitions"])
    if build_only:  # what the build holds: its own phase and the exploration's
        phases.pop("solve")
    out["estimate"] = BASE_BYTES + max(phases.values())
    return out


def storm_run(m) -> dict:
    """Seat 1's winning chance by Storm from the exported explicit files, and Storm's time (reading the
    files and checking; the export is not timed)."""
    try:
        import stormpy
    except ImportError:
        return {}
    from markov_oca.io.explicit import write_explicit

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
        native = env.solver().native()
        native.precision = stormpy.Rational("1/10000000000")  # a string: Rational(1e-10) is the binary float
        native.relative_termination_criterion = False
        result = stormpy.model_checking(model, prop, environment=env)
        value = float(result.get_value(model.initial_states[0]))
        took = time.perf_counter() - t0
    return {"storm": took, "storm_seat1": value}


def measured(rules_name: str, players: int, build_only: bool, tail: float, storm: bool) -> dict:
    """One run in a child process of its own (Storm, when asked, in another one, so that the peaks stay apart)."""
    out = _child(rules_name, players, build_only, tail, [])
    if storm and "error" not in out and not build_only and "wins" in out and 2 <= players <= 3:
        st = _child(rules_name, players, False, tail, ["--storm-only"])
        if "storm" in st:
            out.update(storm=st["storm"], storm_seat1=st["storm_seat1"], storm_peak=st["peak"],
                       storm_agrees=abs(st["storm_seat1"] - out["wins"][0]) <= 1e-9)
    return out


def _child(rules_name: str, players: int, build_only: bool, tail: float, extra: list[str]) -> dict:
    cmd = ["/usr/bin/time", "-v", sys.executable, __file__, "--one", rules_name, str(players), "--tail", str(tail),
           *extra]
    if build_only:
        cmd.append("--build-only")
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


def turns_run(rules_name: str, players: int, turns: int) -> None:
    """The forward pass's cost a turn: ``turns`` turns of the 4-player pass, one part then two, with each
    kernel's wall time and CPU time (``thread_time`` of the thread that ran it), summed over the parts, per
    turn. The pass stops short of its residual on purpose (its SolverError is expected)."""
    from markov_oca.core.errors import SolverError
    from markov_oca.goose import forward as F
    from markov_oca.goose import rotated as R
    from markov_oca.goose.model import goose_model
    from markov_oca.goose.rules import load_goose

    t0 = time.perf_counter()
    rc = R.build_rotated(goose_model(load_goose(rules_name), players))
    st = R.rotated_structure(rc)
    print(f"{rules_name} {players} players: {rc.n_states:,} states built in {time.perf_counter() - t0:.1f} s")
    kernels = ("_push_skipped", "_push_part", "_mids_sweep")
    plain = {k: getattr(F, k) for k in kernels}
    for parts in (1, 2):
        cost: dict[str, list[float]] = {}

        def timed(name, f, cost=cost):
            def g(*a):
                w0, c0 = time.perf_counter(), time.thread_time()
                r = f(*a)
                c = cost.setdefault(name, [0.0, 0.0, 0])
                c[0] += time.perf_counter() - w0
                c[1] += time.thread_time() - c0
                c[2] += 1
                return r
            return g

        for k in kernels:
            setattr(F, k, timed(k, plain[k]))
        t0 = time.perf_counter()
        try:
            R.forward_pass(rc, st, 1e-6, max_turns=turns, parts=parts)
        except SolverError:  # the visits are not done after so few turns: expected
            pass
        finally:
            for k in kernels:
                setattr(F, k, plain[k])
        wall = time.perf_counter() - t0
        parts_line = ", ".join(f"{k} {c[0] / turns:.4f} s wall ({c[1] / turns:.4f} CPU, {c[2] / turns:.1f} calls)"
                               for k, c in cost.items())
        print(f"  {parts} part(s): {wall / turns:.4f} s a turn over {turns} turns (setup included); per turn: "
              f"{parts_line}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2, metavar=("RULES", "PLAYERS"))
    ap.add_argument("--rules", action="append")
    ap.add_argument("--players", type=int, action="append")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--build-four", action="store_true", help="only build 4 players' joint chain (no solve)")
    ap.add_argument("--tail", type=float, default=1e-10)
    ap.add_argument("--storm", action="store_true", help="also hand each joint chain of 2-3 players to Storm (stormpy)")
    ap.add_argument("--storm-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--turns", nargs=2, metavar=("RULES", "TURNS"),
                    help="time TURNS turns of the 4-player forward pass, kernel by kernel, on one part and two")
    args = ap.parse_args()
    if args.turns:
        turns_run(args.turns[0], (args.players or [4])[0], int(args.turns[1]))
        return
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.build_only, args.tail, args.storm, args.storm_only)))
        return
    mib = 2**20
    print(f"{'rules':16} {'N':>2} {'states':>12} {'transitions':>13} {'B/state':>8} {'build s':>8} {'solve s':>8} "
          f"{'length s':>8} {'wall s':>7} {'peak MiB':>9} {'est MiB':>8} {'est/peak':>8} {'residual':>9}")
    for name in args.rules or RULES:
        for n in args.players or (1, 2, 3, 4):
            build_only = args.build_only or (n == 4 and args.build_four)
            r = measured(name, n, build_only, args.tail, args.storm)
            if "error" in r:
                print(f"{name:16} {n:>2} refused or failed after {r['wall']:.1f} s: {r['error']}")
                continue
            per = max(0.0, r["peak"] - 182 * mib) / r["states"]  # over the 1-player run's peak (the interpreter)
            line = (f"{name:16} {n:>2} {r['states']:>12,} {r['transitions']:>13,} {per:>8.0f} {r['build']:>8.1f} "
                    f"{r.get('solve', float('nan')):>8.1f} {r.get('length', float('nan')):>8.1f} {r['wall']:>7.1f} "
                    f"{r['peak'] / mib:>9.0f} {r['estimate'] / mib:>8.0f} {r['estimate'] / r['peak']:>8.2f} "
                    f"{r.get('residual', float('nan')):>9.1e}")
            if build_only:
                line += "  (built only)"
            if r.get("rotated"):
                each = per * r["states"] / r["joint_states"]
                line += f"  (rot: stands for {r['joint_states']:,} joint states, {each:.0f} B each; {r['method']})"
            if "storm" in r:
                line += (f"  storm {r['storm']:.1f} s ({r['storm_peak'] / mib:.0f} MiB), ours/storm "
                         f"{r['wall'] / r['storm']:.2f}, seat 1 agrees to 1e-9: {r['storm_agrees']}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
