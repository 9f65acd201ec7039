"""Your own chain in, exact fractions out, and two rule variants compared figure by figure.

Who it is for: a researcher who has a Markov chain of their own (as a matrix or as a file from
Storm or PRISM), or who studies how a rule changes a game.

What it shows:

1. a small board game of your own written as a NumPy matrix of exact fractions: the chance of
   each ending, the expected number of moves, the chance to ever meet the snake, and the
   absorption time's median and 90th percentile, all as fractions where they are rational;
   the same matrix as a SciPy sparse matrix of floats gives the same figures in floating point;
2. a chain in Storm's DRN format, written by this script (Knuth and Yao's die made of coin
   flips), read back: each face 1/6, 11/3 flips on average, exactly;
3. an exact answer for a shipped board: the expected length of a one-player game of snakes and
   ladders as a fraction;
4. two variants of ``oca-moderna`` (by default as shipped, and with ``waiting=turns:2``: the well
   and the prison cost two turns instead of holding a piece until another comes) solved side by
   side, and every figure that differs printed with its difference.

Run::

    python examples/research.py
    python examples/research.py --option overshoot=stay --players 3

``markov-oca variants`` lists the rule sets; ``markov-oca explain oca-moderna`` shows each option,
its key and its choices. The same comparison from the command line is two runs of
``markov-oca solve oca-moderna --players 2 [--option waiting=turns:2] --format json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import markov_oca

HERE = Path(__file__).resolve().parent


# 1. A chain of your own, from a matrix --------------------------------------------------------

def little_board() -> tuple[np.ndarray, list[int]]:
    """A one-player board of squares 0..8 and a coin: heads moves 1, tails moves 2; the goal 8 must
    be reached exactly (a throw past it stays put). Square 5 is a snake's head: the next step slides
    the piece to square 1 without a throw. Returns the matrix and the throws made from each state."""
    goal, snake, tail = 8, 5, 1
    half = Fraction(1, 2)
    P = np.full((goal + 1, goal + 1), Fraction(0), dtype=object)
    for s in range(goal):
        if s == snake:
            P[s, tail] = Fraction(1)
            continue
        for step in (1, 2):
            t = s + step if s + step <= goal else s
            P[s, t] += half
    P[goal, goal] = Fraction(1)
    throws = [0 if s in (snake, goal) else 1 for s in range(goal + 1)]
    return P, throws


def own_chain() -> dict:
    P, throws = little_board()
    how = {"labels": {"home": [8]}}
    exact = markov_oca.analyse(markov_oca.from_matrix(P, init=0, **how), rewards={"throws": throws},
                               hit={"snake": [5]})
    floats = markov_oca.analyse(markov_oca.from_matrix(sp.csr_matrix(P.astype(float)), init=0, **how),
                                rewards={"throws": throws}, hit={"snake": [5]}, exact=False)
    t_exact, t_float = exact.rewards["throws"]["total"], float(floats.rewards["throws"]["total"])
    print("1. A board of your own as a matrix (9 squares, a coin, a snake from 5 to 1)")
    print(f"   chance to reach home:          {exact.outcomes['home']}")
    print(f"   expected coin throws:          {t_exact}  = {float(t_exact):.12f}")
    print(f"   chance to meet the snake:      {exact.hitting['snake']}")
    print(f"   steps (throws and slides):     expected {exact.steps}, median {exact.length.median:g}, "
          f"90% {exact.length.p90:g}")
    print(f"   the same from a SciPy sparse float matrix: {t_float:.12f} expected throws "
          f"(differs by {abs(t_float - float(t_exact)):.1e})")
    return {"throws": t_exact, "snake": exact.hitting["snake"], "float_throws": t_float}


# 2. A chain from a DRN file -------------------------------------------------------------------

KNUTH_YAO_DRN = """\
// Knuth and Yao's die: a fair coin flipped until it names a face 1..6
@type: DTMC
@parameters

@reward_models
flips
@nr_states
13
@nr_choices
13
@model
state 0 [1] init
	action 0 [0]
		1 : 1/2
		2 : 1/2
state 1 [1]
	action 0 [0]
		3 : 1/2
		4 : 1/2
state 2 [1]
	action 0 [0]
		5 : 1/2
		6 : 1/2
state 3 [1]
	action 0 [0]
		1 : 1/2
		7 : 1/2
state 4 [1]
	action 0 [0]
		8 : 1/2
		9 : 1/2
state 5 [1]
	action 0 [0]
		10 : 1/2
		11 : 1/2
state 6 [1]
	action 0 [0]
		2 : 1/2
		12 : 1/2
"""


def drn_chain(directory: Path) -> dict:
    faces = "".join(f"state {6 + k} [0] face{k}\n\taction 0 [0]\n\t\t{6 + k} : 1\n" for k in range(1, 7))
    path = directory / "knuth_yao.drn"
    path.write_text(KNUTH_YAO_DRN + faces, encoding="utf-8")
    r = markov_oca.analyse_file(path)
    print(f"\n2. A DRN file ({path.name}: Knuth and Yao's die from coin flips)")
    print("   each face:", ", ".join(f"{k} {v}" for k, v in r.outcomes.items()))
    print(f"   expected flips: {r.rewards['flips']['total']} (the steps: {r.steps})")
    print(f"   the same from the command line: markov-oca analyse {path}")
    return {"faces": r.outcomes, "flips": r.rewards["flips"]["total"]}


# 3. An exact answer for a shipped board -------------------------------------------------------

def exact_board() -> Fraction:
    r = markov_oca.solve(HERE / "snakes_and_ladders.toml", players=1, exact=True, landings=False)
    turns = r.expected["turns"].total
    print("\n3. Snakes and ladders, one player, exactly (markov-oca solve examples/snakes_and_ladders.toml "
          "--players 1 --exact)")
    print(f"   expected turns: {turns.numerator}/{turns.denominator}")
    print(f"                 = {float(turns):.15f}")
    return turns


# 4. Two rule variants, figure by figure -------------------------------------------------------

def figures(r) -> dict[str, float]:
    """The figures of one solve, by name, as floats."""
    out = {f"seat {s.seat} wins": float(s.win) for s in r.seats}
    out["never ends (deadlock)"] = float(r.deadlock)
    out["turns, expected (games that end)"] = float(r.expected["turns"].given_end)
    out["throws, expected (games that end)"] = float(r.expected["throws"].given_end)
    for q in ("median", "p90", "p99"):
        out[f"turns, {q} (games that end)"] = float(r.length.given_end.get(q, getattr(r.length, q)))
    out["states of the chain"] = float(r.states)
    return out


def compare(rules: str, players: int, option: str) -> dict[str, tuple[float, float]]:
    key, _, value = option.partition("=")
    a = figures(markov_oca.solve(rules, players=players, landings=False))
    b = figures(markov_oca.solve(rules, players=players, options={key: value}, landings=False))
    print(f"\n4. {rules}, {players} players: as shipped against {key}={value}")
    print(f"   {'figure':<36}{'as shipped':>14}{option:>20}{'difference':>14}")
    diff = {}
    for name in a:
        if a[name] != b[name]:
            diff[name] = (a[name], b[name])
        mark = "" if a[name] != b[name] else "  (same)"
        print(f"   {name:<36}{a[name]:>14.6g}{b[name]:>20.6g}{b[name] - a[name]:>+14.6g}{mark}")
    return diff


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A chain of your own, exact fractions, two rule variants compared.")
    ap.add_argument("--rules", default="oca-moderna", help="the rule set whose variants are compared")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--option", default="waiting=turns:2", help="KEY=VALUE: the variant (see markov-oca explain)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the DRN file (default: a temp dir)")
    args = ap.parse_args(argv)
    if "=" not in args.option:
        ap.error(f"--option must be KEY=VALUE, got {args.option!r}")
    directory = args.dir or Path(tempfile.mkdtemp(prefix="markov_oca_research_"))
    directory.mkdir(parents=True, exist_ok=True)
    own_chain()
    drn_chain(directory)
    exact_board()
    compare(args.rules, args.players, args.option)
    return 0


if __name__ == "__main__":
    sys.exit(main())
