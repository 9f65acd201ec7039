"""The README's table of answers, computed through ``markov_oca.solve`` and printed as markdown.

For each shipped goose game and 2, 3 and 4 players: each seat's chance to win, the chance of
deadlock and the expected length of the games that end, in turns. For each shipped Ur rule set:
light's chance to win (light moves first) when both sides play optimally, and the expected
turns. The figures are rounded (chances to 4 decimals, turns to 2) so that the table does not
change with the last bits of a float solve.

Usage::

    python benchmarks/answers.py                      # print the table
    python benchmarks/answers.py --write README.md    # replace the table between the markers
    python benchmarks/answers.py --check README.md    # exit 1 if the README's table differs
    python benchmarks/answers.py --players 2 --no-ur  # only the 2-player rows (seconds)

Four players of a goose game take about 2.5 GB each; the Ur rows solve the optimal values in
memory (``UR_PIECES``: four pieces a side).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tree whose README the table goes in
import markov_oca

START = "<!-- answers:start -->"
END = "<!-- answers:end -->"

GOOSE = ("oca-tradicional", "oca-moderna", "jeu-de-l-oie")
PLAYERS = (2, 3, 4)
MAX_SEATS = max(PLAYERS)
#: The Ur rule sets and the pieces a side solved for each: four, where the optimal values are found in
#: memory in minutes (the seven-piece table is ``markov-oca ur solve --pieces 7``). With four pieces
#: or fewer, ``ur-7-rescatados`` is the base game: seven pieces off in all cannot come before one
#: side has all of its own off.
UR_PIECES = (("ur", 4), ("ur-simplificado", 4))

GOOSE_HEAD = (["game", "players"] + [f"seat {k}" for k in range(1, MAX_SEATS + 1)]
              + ["deadlock", "turns"])
UR_HEAD = ["game", "pieces a side", "light wins", "dark wins", "turns"]


def chance(x) -> str:
    """A chance to 4 decimals."""
    return f"{float(x):.4f}"


def goose_row(game: str, players: int) -> list[str]:
    """One goose game's row: each seat's chance, the deadlock chance, the mean length in turns.

    Parameters
    ----------
    game : str
        A shipped goose rule set.
    players : int
        Number of players.

    Returns
    -------
    list of str
        The row's cells; seats beyond ``players`` are left blank.
    """
    r = markov_oca.solve(game, players=players, landings=False)
    seats = [chance(s.win) for s in r.seats] + [""] * (MAX_SEATS - players)
    return [game, str(players), *seats, chance(r.deadlock), f"{float(r.expected['turns'].given_end):.2f}"]


def ur_row(game: str, pieces: int) -> list[str]:
    """One Ur rule set's row: each side's chance under optimal play by both, the expected turns.

    Parameters
    ----------
    game : str
        A shipped Ur rule set.
    pieces : int
        Pieces a side.

    Returns
    -------
    list of str
        The row's cells.
    """
    r = markov_oca.solve(game, pieces=pieces, light="optimal", dark="optimal")
    return [game, str(pieces), chance(r.wins["light"]), chance(r.wins["dark"]),
            f"{float(r.expected['turns'].given_end):.2f}"]


def markdown(head: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table, numbers right-aligned."""
    align = ["---" if k < 2 else "--:" for k in range(len(head))]
    return ["| " + " | ".join(cells) + " |" for cells in (head, align, *rows)]


def table(players=PLAYERS, ur=True, log=None) -> str:
    """The block between the markers (markers included)."""
    def note(what):
        if log:
            print(what, file=log, flush=True)

    goose = []
    for n in players:
        for game in GOOSE:
            goose.append(goose_row(game, n))
            note(" | ".join(goose[-1]))
    goose.sort(key=lambda row: (GOOSE.index(row[0]), int(row[1])))
    lines = [START, *markdown(GOOSE_HEAD, goose)]
    if ur:
        rows = []
        for game, pieces in UR_PIECES:
            rows.append(ur_row(game, pieces))
            note(" | ".join(rows[-1]))
        lines += ["", *markdown(UR_HEAD, rows)]
    return "\n".join([*lines, END])


def split(text: str, path: str) -> tuple[str, str, str]:
    """The text before the table, the table (markers included) and the text after it."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{path}: no {START} ... {END} block")
    end += len(END)
    return text[:start], text[start:end], text[end:]


def table_rows(block: str) -> list[str]:
    """The table lines of a block (header, rule and rows), in order."""
    return [line for line in block.splitlines() if line.startswith("|")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", metavar="README", help="replace the table between the markers in this file")
    ap.add_argument("--check", metavar="README", help="exit 1 if this file's table differs")
    ap.add_argument("--players", type=int, nargs="+", default=list(PLAYERS), choices=PLAYERS,
                    help="goose rows for these numbers of players only (with --check: compare those rows)")
    ap.add_argument("--no-ur", dest="ur", action="store_false", help="leave out the Ur rows")
    a = ap.parse_args(argv)
    whole = sorted(a.players) == list(PLAYERS) and a.ur
    if a.write and not whole:
        ap.error("--write takes the whole table: no --players or --no-ur with it")
    block = table(sorted(set(a.players)), a.ur, log=sys.stderr)
    if a.check:
        _, old, _ = split(Path(a.check).read_text(encoding="utf-8"), a.check)
        new, have = table_rows(block), table_rows(old)
        wrong = [line for line in new if line not in have]
        if whole:
            wrong += [f"{line} (no longer computed)" for line in have if line not in new]
        for line in wrong:
            print(f"{a.check}: differs: {line}", file=sys.stderr)
        return 1 if wrong else 0
    if a.write:
        path = Path(a.write)
        before, _, after = split(path.read_text(encoding="utf-8"), a.write)
        path.write_text(before + block + after, encoding="utf-8")
        return 0
    print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
