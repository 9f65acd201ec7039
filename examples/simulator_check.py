"""Check a simulator written elsewhere against the exact chain, and read the verdict.

Who it is for: someone with a simulator of the Game of the Goose in another language (C,
JavaScript, Java, ...) who wants to know whether it plays the rules right.

What it shows:

1. your program plays games and writes a results file, one row a game: ``winner,turns,throws``
   (``oca_simulator.py`` beside this file stands for your program: plain Python, no markov_oca;
   ``oca_simulator.js`` is the same program in JavaScript, to read);
2. ``markov_oca.crosscheck(..., results=FILE)`` tests the file against the exact chain of
   ``oca-moderna``: each seat's chance to win, the unfinished (deadlocked) share, the mean and
   the quantiles of the length, the mean number of throws and the whole length distribution,
   each with an exact test, Holm-corrected; the command line does the same with
   ``markov-oca crosscheck oca-moderna --players 2 --results FILE``;
3. the verdict read aloud: PASS, or FAIL and the rows that failed;
4. the same with a planted bug (the prison on square 56 instead of 52): the check fails.

How many games a bug needs to be seen depends on its size: the prison four squares off is seen
in 20,000 games; the bridge moved from square 6 to square 5 changes the game so little that
100,000 games do not see it. A pass says the simulator agrees with the rules as far as this
sample can tell.

Run::

    python examples/simulator_check.py                  # 20,000 games each, a few seconds
    python examples/simulator_check.py --games 100000 --dir results/

It exits with 0 when the correct simulator passes and the planted bug fails.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import markov_oca

HERE = Path(__file__).resolve().parent
SIMULATOR = HERE / "oca_simulator.py"
RULES = "oca-moderna"


def run_simulator(out: Path, players: int, games: int, seed: int, extra: list[str]) -> None:
    """Run the simulator as a program of its own, as you would run yours."""
    cmd = [sys.executable, str(SIMULATOR), "--players", str(players), "--games", str(games),
           "--seed", str(seed), "--out", str(out), *extra]
    print("$", " ".join(["python", f"examples/{SIMULATOR.name}", *cmd[2:]]))
    subprocess.run(cmd, check=True)


def read_aloud(r: markov_oca.CrosscheckResult) -> str:
    """The verdict in words: what agreed, and what did not."""
    failed = [c for c in r.checks if not c.passed]
    head = (f"{r.games:,} games of {r.rules} ({r.setting or f'{r.players} players'}) from {r.source}, "
            f"{len(r.checks)} checks at a family-wise error rate of {r.alpha:g}")
    if not failed:
        return (f"{head}:\n  PASS: every check agrees with the exact chain (for example, seat 1 wins "
                f"{r.checks[0].simulated:.4f} of the games, the chain says {r.checks[0].exact:.4f}).")
    lines = [f"{head}:", f"  FAIL: {len(failed)} of {len(r.checks)} checks disagree with the exact chain:"]
    for c in failed:
        if c.test.startswith("chi-square"):  # exact: the degrees of freedom; simulated: the statistic
            lines.append(f"    {c.quantity}: chi-square {c.simulated:.1f} on {c.exact:g} degrees of freedom, "
                         f"Holm-adjusted p = {c.adjusted:.2g}")
            continue
        lines.append(f"    {c.quantity}: exact {c.exact:.6g}, simulated {c.simulated:.6g} "
                     f"(99% interval {c.low:.6g} to {c.high:.6g}), Holm-adjusted p = {c.adjusted:.2g}")
    return "\n".join(lines)


def check(path: Path, players: int) -> markov_oca.CrosscheckResult:
    print(f"$ markov-oca crosscheck {RULES} --players {players} --results {path}")
    return markov_oca.crosscheck(RULES, players=players, results=path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Cross-check a stand-alone simulator's results file.")
    ap.add_argument("--games", type=int, default=20_000, help="games per results file (default 20,000)")
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=None, help="where to write the results files (default: a temp dir)")
    args = ap.parse_args(argv)
    out = args.dir or Path(tempfile.mkdtemp(prefix="simulator_check_"))
    out.mkdir(parents=True, exist_ok=True)

    print("1. The simulator as written, and its cross-check")
    good = out / "games.csv"
    run_simulator(good, args.players, args.games, args.seed, [])
    r_good = check(good, args.players)
    print(r_good.text())
    print(read_aloud(r_good))

    print("\n2. The same simulator with the prison on square 56 instead of 52 (a planted bug)")
    bad = out / "games_prison56.csv"
    run_simulator(bad, args.players, args.games, args.seed, ["--prison", "56"])
    r_bad = check(bad, args.players)
    print(read_aloud(r_bad))

    print(f"\nverdict, simulator as written: {'PASS' if r_good.passed else 'FAIL'}")
    print(f"verdict, prison on 56: {'PASS' if r_bad.passed else 'FAIL'}")
    print(f"results files in {out}")
    return 0 if r_good.passed and not r_bad.passed else 1


if __name__ == "__main__":
    sys.exit(main())
