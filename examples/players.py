"""Who has the advantage, and how long a game lasts: the shipped goose games and the Royal Game of Ur.

Who it is for: a player who wants to know whether moving first matters, or a teacher who wants
a table and two pictures for a class on chance.

What it shows, computed exactly from each game's Markov chain (no simulation):

- for each shipped goose game (``oca-tradicional``, ``oca-moderna``, ``jeu-de-l-oie``, and the
  snakes and ladders board of ``examples/snakes_and_ladders.toml``) and 2 and 3 players: each
  seat's chance to win, the chance that the game never ends (every piece stuck in the well and
  the prison), the expected number of turns of a game that ends, its median and its 90th
  percentile (a turn is each time the turn comes to a player);
- the Royal Game of Ur with 1 to 3 pieces a side, both sides playing optimally: the chance that
  the side that moves first (light) wins;
- the pictures ``advantage.png`` (how far each seat's chance to win is from an equal share),
  ``length.png`` (the distribution of a game's length) and ``ur.png``, written to a directory
  (no window is opened).

Run::

    python examples/players.py                   # 2 and 3 players, a minute or two
    python examples/players.py --four            # 4 players too: a minute or more each
    python examples/players.py --out pictures/ --games oca-moderna --players 2 --ur-pieces 1 2

The same figures from the command line: ``markov-oca solve oca-moderna --players 3`` and
``markov-oca solve ur --pieces 2``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no window

import matplotlib.pyplot as plt

import markov_oca

HERE = Path(__file__).resolve().parent
GAMES = {
    "oca-tradicional": "oca-tradicional",
    "oca-moderna": "oca-moderna",
    "jeu-de-l-oie": "jeu-de-l-oie",
    "snakes-and-ladders": str(HERE / "snakes_and_ladders.toml"),
}


def goose_rows(games: list[str], players: list[int]) -> list[dict]:
    """One row per game and number of players: chances to win, deadlock, length."""
    rows = []
    for name in games:
        for n in players:
            r = markov_oca.solve(GAMES[name], players=n, landings=False)
            ended = r.length.given_end  # the quantiles of the games that end
            rows.append({"game": name, "players": n, "wins": [float(s.win) for s in r.seats],
                         "deadlock": float(r.deadlock), "turns": float(r.expected["turns"].given_end),
                         "median": ended.get("median", r.length.median), "p90": ended.get("p90", r.length.p90),
                         "pmf": r.length.pmf})
            print(f"  solved {name}, {n} players ({r.states:,} states)", file=sys.stderr)
    return rows


def ur_rows(pieces: list[int], rules: str = "ur") -> list[dict]:
    """Light's (the first mover's) chance to win the Royal Game of Ur under optimal play by both sides."""
    rows = []
    for k in pieces:
        r = markov_oca.solve(rules, pieces=k)
        rows.append({"pieces": k, "light": float(r.wins["light"]), "dark": float(r.wins["dark"]),
                     "turns": float(r.expected["turns"].given_end), "states": r.states})
    return rows


def goose_table(rows: list[dict]) -> str:
    seats = max(r["players"] for r in rows)
    head = (f"{'game':<20}{'players':>8}" + "".join(f"{f'seat {i + 1}':>9}" for i in range(seats))
            + f"{'no end':>9}{'turns':>8}{'median':>8}{'p90':>6}")
    lines = [head, "-" * len(head)]
    for r in rows:
        wins = "".join(f"{w:>9.4f}" for w in r["wins"]) + " " * 9 * (seats - len(r["wins"]))
        lines.append(f"{r['game']:<20}{r['players']:>8}{wins}{r['deadlock']:>9.4f}{r['turns']:>8.1f}"
                     f"{r['median']:>8g}{r['p90']:>6g}")
    lines.append("seat k: the chance that the player who moves k-th wins; no end: the chance that every piece "
                 "is stuck for ever;\nturns: the expected number of turns of a game that ends (each time the turn "
                 "comes to a player); median, p90: of those games' length")
    same = {(a["game"], b["game"]) for a in rows for b in rows
            if a["game"] < b["game"] and a["players"] == b["players"] and a["wins"] == b["wins"]}
    lines += [f"{a} and {b} give the same figures: their boards and rules are the same" for a, b in sorted(same)]
    return "\n".join(lines)


def ur_table(rows: list[dict]) -> str:
    lines = [f"{'pieces':>6}{'light (first) wins':>20}{'dark wins':>11}{'turns':>8}{'states':>10}"]
    for r in rows:
        lines.append(f"{r['pieces']:>6}{r['light']:>20.6f}{r['dark']:>11.6f}{r['turns']:>8.1f}{r['states']:>10,}")
    lines.append("both sides play optimally (each move chosen to maximise its side's chance to win)")
    return "\n".join(lines)


def panels(rows: list[dict], out: Path, name: str, draw) -> Path:
    """One picture with a panel per number of players; ``draw(ax, n, rows of n players)`` fills a panel."""
    players = sorted({r["players"] for r in rows})
    fig, axes = plt.subplots(1, len(players), figsize=(5 * len(players), 4), squeeze=False)
    for ax, n in zip(axes[0], players, strict=True):
        draw(ax, n, [r for r in rows if r["players"] == n])
        ax.legend(fontsize="small")
    return save(fig, out / name)


def save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def draw_advantage(ax, n: int, mine: list[dict]) -> None:
    width = 0.8 / n
    for seat in range(n):  # percentage points above an equal share of the games that end
        edge = [100 * (r["wins"][seat] - (1 - r["deadlock"]) / n) for r in mine]
        ax.bar([i + (seat - (n - 1) / 2) * width for i in range(len(mine))], edge, width, label=f"seat {seat + 1}")
    ax.axhline(0, color="black", linewidth=1)
    ax.set_xticks(range(len(mine)), [r["game"] for r in mine], rotation=20, ha="right")
    ax.set_title(f"{n} players: advantage of each seat")
    ax.set_ylabel("chance to win minus an equal share (points of %)")


def draw_length(ax, n: int, mine: list[dict]) -> None:
    for r in mine:
        shown = int(2 * r["p90"]) + 1
        ax.plot(range(min(shown, len(r["pmf"]))), r["pmf"][:shown], label=r["game"])
    ax.set_title(f"{n} players: length of a game")
    ax.set_xlabel("turns")
    ax.set_ylabel("chance the game ends on that turn")


def plot_ur(rows: list[dict], out: Path) -> Path:
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.bar([str(r["pieces"]) for r in rows], [r["light"] for r in rows], color="tab:orange")
    ax.axhline(0.5, color="black", linestyle="--", linewidth=1)
    ax.set_ylim(0.4, 0.6)
    ax.set_xlabel("pieces a side")
    ax.set_ylabel("chance that the first mover wins")
    ax.set_title("Royal Game of Ur, optimal play")
    return save(fig, out / "ur.png")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Who has the advantage, and how long games last.")
    ap.add_argument("--out", type=Path, default=None, help="directory for the pictures (default: a temp dir)")
    ap.add_argument("--games", nargs="+", choices=list(GAMES), default=list(GAMES), help="goose games to solve")
    ap.add_argument("--players", nargs="+", type=int, choices=(2, 3, 4), default=[2, 3])
    ap.add_argument("--four", action="store_true", help="add 4 players (a minute or more a game)")
    ap.add_argument("--ur-pieces", nargs="*", type=int, default=[1, 2, 3], choices=range(1, 8),
                    help="Ur pieces a side (1-3 solve in seconds; 4 and more take much longer)")
    args = ap.parse_args(argv)
    players = sorted(set(args.players) | ({4} if args.four else set()))
    out = args.out or Path(tempfile.mkdtemp(prefix="markov_oca_players_"))
    out.mkdir(parents=True, exist_ok=True)

    rows = goose_rows(args.games, players)
    print("Goose games: each seat's chance to win, and how long a game lasts\n")
    print(goose_table(rows))
    pictures = [panels(rows, out, "advantage.png", draw_advantage), panels(rows, out, "length.png", draw_length)]
    if args.ur_pieces:
        ur = ur_rows(args.ur_pieces)
        print("\nThe Royal Game of Ur: the first mover's advantage\n")
        print(ur_table(ur))
        pictures.append(plot_ur(ur, out))
    print("\npictures:", ", ".join(str(p) for p in pictures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
