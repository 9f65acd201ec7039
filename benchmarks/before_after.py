"""Two trees of markov_oca measured in one run: every benchmark on each, alternating, from outside.

    python benchmarks/before_after.py --old /path/to/old/checkout --new . [--only goose3,ur5] [--repeat 2]

Each case runs as its own process under ``/usr/bin/time -v`` with ``PYTHONPATH`` set to one tree,
the two trees taking turns (old, new, old, new, ...) so that a change in the machine's load falls
on both. It prints, per case and tree, the best wall time, the user + system CPU seconds of that
run and the peak resident memory, then the ratio new / old. Each tree runs its own copy of a
benchmark script (``TREE/benchmarks/...``), so a script may import the modules as each tree
names them. A case's figures are compared between the trees (the JSON without its timings, or a script's lines of
figures), so a
redesign that changed a figure shows it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

CLI = ["-m", "markov_oca.cli"]
#: name -> (arguments after the Python interpreter, a tree-relative script or the CLI)
CASES = {
    "goose3": [*CLI, "solve", "oca-moderna", "--players", "3", "--format", "json"],
    "goose4": [*CLI, "solve", "oca-moderna", "--players", "4", "--format", "json"],
    "exact2": [*CLI, "solve", "oca-moderna", "--players", "2", "--exact", "--format", "json"],
    "million": ["{tree}/benchmarks/bench_any_chain.py", "--case", "random-1000000"],
    "ur5": ["{tree}/benchmarks/ur_full.py", "5"],
    "ur6": ["{tree}/benchmarks/ur_full.py", "6"],
    "ur7": ["{tree}/benchmarks/ur_full.py", "7"],
}
DEFAULT = ["goose3", "exact2", "million", "ur5", "goose4"]
#: Lines of a script's output that hold figures, not timings.
_FIGURES = re.compile(r"wins with|residual|probabilit|expected|published")


def figures(out: str) -> str:
    """What two runs must agree on: the JSON without its timings, or a script's lines of figures."""
    try:
        d = json.loads(out)
    except ValueError:
        return "\n".join(line for line in out.splitlines() if _FIGURES.search(line) and " s " not in line)
    d.pop("timings", None)
    return json.dumps(d, sort_keys=True)


def run(case: str, tree: Path) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, peak kB, output with its timings blanked) of one case on one tree."""
    args = [a.format(tree=tree) for a in CASES[case]]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    p = subprocess.run(["/usr/bin/time", "-v", sys.executable, *args], capture_output=True, text=True, env=env,
                       cwd=tree)
    if p.returncode != 0:
        raise SystemExit(f"{case} on {tree}: exit {p.returncode}\n{p.stderr[-2000:]}")

    def field(name: str) -> str:
        return re.search(rf"{re.escape(name)}: (.*)", p.stderr).group(1).strip()

    h, m, sec = ([0, 0, *field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")])[-3:]
    wall = int(h) * 3600 + int(m) * 60 + float(sec)
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return wall, cpu, int(field("Maximum resident set size (kbytes)")), figures(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, default=Path("."))
    ap.add_argument("--only", default=",".join(DEFAULT), help=f"cases, of {', '.join(CASES)}")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    trees = {"old": a.old.resolve(), "new": a.new.resolve()}
    print(f"old {trees['old']}\nnew {trees['new']}")
    print(f"{'case':8s} {'tree':4s} {'wall s':>8s} {'cpu s':>8s} {'peak MB':>8s}")
    for case in a.only.split(","):
        best: dict[str, tuple[float, float, int, str]] = {}
        for _ in range(a.repeat):
            for name, tree in trees.items():
                r = run(case, tree)
                if name not in best or r[0] < best[name][0]:
                    best[name] = r
        for name in trees:
            w, c, kb, _ = best[name]
            print(f"{case:8s} {name:4s} {w:8.1f} {c:8.1f} {kb / 1024:8.0f}", flush=True)
        same = "same output" if best["old"][3] == best["new"][3] else "OUTPUT DIFFERS"
        if best["old"][3] != best["new"][3] and not best["old"][3].startswith("{"):
            for a, b in zip(best["old"][3].splitlines(), best["new"][3].splitlines(), strict=False):
                if a != b:
                    print(f"  old: {a}\n  new: {b}")
        print(f"{case:8s} new/old wall {best['new'][0] / best['old'][0]:.2f}, "
              f"cpu {best['new'][1] / best['old'][1]:.2f}, peak {best['new'][2] / best['old'][2]:.2f}; {same}",
              flush=True)


if __name__ == "__main__":
    main()
