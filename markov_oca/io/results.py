"""Results files of simulated games: one row a game (winner, turns, throws), in CSV or JSON lines.

:class:`_GameWriter` writes them as ``markov-oca simulate --out`` plays; :func:`read_results`
reads anyone's, refusing a malformed row in one line that names the file and the row.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..analysis.crosscheck import ExactAnswer
from ..analysis.sampling import SimSummary
from ..core.errors import RulesError


def read_results(path: str | Path, exact: ExactAnswer, turn_limit: int | None = None) -> SimSummary:
    """Games from a CSV (header ``winner,turns[,throws]``) or JSON-lines file, as a :class:`SimSummary`.

    ``winner`` is a seat number (1, 2, ...), a seat or outcome name (``seat 2``,
    ``light``, ``dark wins``), or empty / ``none`` for a game cut off unfinished;
    ``turns`` is the game's length in turns (for an unfinished game, the turns
    played when it was cut). Files ending in ``.jsonl`` or ``.ndjson`` hold one
    object per line with the same keys. Any malformed row is a one-line
    :class:`RulesError` naming the file and the row.
    """
    path = Path(path)
    name = str(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")  # a spreadsheet's byte-order mark is not a column
    except OSError as exc:
        raise RulesError(f"cannot read results: {exc.strerror or exc}", source=name) from None
    except UnicodeDecodeError as exc:
        raise RulesError(f"not UTF-8 text (byte {exc.start} of the file)", source=name) from None
    rows = _jsonl_rows(name, text) if path.suffix.lower() in (".jsonl", ".ndjson") else _csv_rows(name, text)
    lookup = _winner_names(exact)
    winners, turns, throws = [], [], []
    has_throws = True
    for line, row in rows:
        where = f"row {line}"
        w = str(row.get("winner", "") if row.get("winner") is not None else "").strip().lower()
        if w not in lookup:
            raise RulesError(f"winner {row.get('winner')!r} is not one of {_choices(exact)}", source=name, key=where)
        t = _count(name, where, "turns", row.get("turns"))
        th = row.get("throws")
        if th is None or str(th).strip() == "":
            has_throws = False
            th_v = 0
        else:
            th_v = _count(name, where, "throws", th)
        winners.append(lookup[w])
        turns.append(t)
        throws.append(th_v)
    if not winners:
        raise RulesError("no games in the file", source=name)
    winners_a = np.array(winners, np.int64)
    turns_a = np.array(turns, np.int64)
    unfinished = winners_a < 0
    if turn_limit is None:
        turn_limit = int(turns_a[unfinished].max()) if unfinished.any() else max(exact.horizon, int(turns_a.max()))
    long = np.flatnonzero(~unfinished & (turns_a > turn_limit))
    if long.size:
        raise RulesError(f"a finished game of {turns_a[long[0]]} turns, beyond the turn limit {turn_limit}",
                         source=name, key=f"row {rows[long[0]][0]}")
    s = SimSummary(rules=exact.rules, seats=exact.seats, outcome_names=exact.outcome_names,
                   turn_limit=turn_limit, seed=-1)
    s.add_batch(winners_a, turns_a, np.array(throws, np.int64) if has_throws else np.zeros(len(throws)))
    return s


def _csv_rows(name: str, text: str) -> list[tuple[int, dict[str, Any]]]:
    # Lines of spaces count as blank (the csv module skips only empty ones); row numbers are file lines.
    lines = ["" if not line.strip() else line for line in text.splitlines()]
    reader = csv.DictReader(lines)
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    missing = {"winner", "turns"} - set(fields)
    if missing:
        raise RulesError(f"the header must name the columns winner and turns (missing: {', '.join(sorted(missing))})",
                         source=name, key=f"row {max(reader.line_num, 1)}")
    out = []
    for raw in reader:
        i = reader.line_num
        if None in raw:
            raise RulesError("more fields than the header names", source=name, key=f"row {i}")
        row = {k.strip().lower(): v for k, v in raw.items()}
        if any(v is None for v in row.values()):
            raise RulesError("fewer fields than the header names", source=name, key=f"row {i}")
        out.append((i, row))
    return out


def _jsonl_rows(name: str, text: str) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RulesError(f"not JSON ({exc.msg})", source=name, key=f"line {i}") from None
        except (ValueError, RecursionError):  # a number of thousands of digits, nesting without end
            raise RulesError("not a JSON object of winner and turns", source=name, key=f"line {i}") from None
        if not isinstance(obj, dict):
            raise RulesError("each line must be a JSON object with winner and turns", source=name, key=f"line {i}")
        out.append((i, {str(k).lower(): v for k, v in obj.items()}))
    return out


def _winner_names(exact: ExactAnswer) -> dict[str, int]:
    """Every way a results file may name an outcome: its name, and for one seat's outcome the
    seat's number and name (``1``, ``seat 1``, ``light``)."""
    names: dict[str, int] = {"": -1, "none": -1, "-": -1, "unfinished": -1}
    for k, outcome in enumerate(exact.outcome_names):
        names[outcome.lower()] = k
    for i, seat in enumerate(exact.seats):
        k = _seat_outcome(exact, i)
        if k is not None:
            names[str(i + 1)] = k
            names[seat.lower()] = k
    return names


def _seat_outcome(exact: ExactAnswer, seat: int) -> int | None:
    """The index of the outcome that belongs to one seat alone (``seat 2 wins``, ``dark wins``)."""
    for k, outcome in enumerate(exact.outcome_names):
        if outcome.lower() in (f"{exact.seats[seat].lower()} wins", f"{exact.seats[seat].lower()} last"):
            return k
    return None


def _choices(exact: ExactAnswer) -> str:
    seats = ", ".join(str(i + 1) for i in range(len(exact.seats)) if _seat_outcome(exact, i) is not None)
    others = [o for k, o in enumerate(exact.outcome_names)
              if k not in {_seat_outcome(exact, i) for i in range(len(exact.seats))}]
    extra = f", {', '.join(others)}" if others else ""
    return f"{seats} (or {', '.join(exact.seats)}{extra}), or empty for unfinished"


#: The most turns or throws a game in a results file may report: the length histogram has a bin per turn.
MAX_COUNT = 10_000_000


def _count(name: str, where: str, key: str, value: Any) -> int:
    text = str(value).strip()
    try:
        v = int(text) if len(text) <= 20 else None
    except (TypeError, ValueError):
        v = None
    if v is None:
        shown = value if len(text) <= 40 else text[:20] + "..."
        raise RulesError(f"{key} must be a whole number of turns, got {shown!r}", source=name, key=where)
    if v < 0:
        raise RulesError(f"{key} must not be negative, got {v}", source=name, key=where)
    if v > MAX_COUNT:
        raise RulesError(f"{key} must be at most {MAX_COUNT:,}, got {v:,}", source=name, key=where)
    return v


def _seat_number(outcome: str) -> str:
    """``seat 3 wins`` -> ``3``; an outcome of several seats keeps its name (``seats 1 and 2 tie``)."""
    m = re.fullmatch(r"seat (\d+) (wins|last)", outcome)
    return m.group(1) if m else outcome


class _GameWriter:
    """Writes simulated games, one row each, as they stream out of the simulator.

    ``winner`` is the outcome's number (1, 2, ...: the seat, or with ``until = "last"`` the
    seat that came last), or its name where it is not one seat (``seats 1 and 2 tie``), or
    empty / null for a game not over at the turn limit. ``throws`` is left out where the
    simulator does not count them (the points game).
    """

    def __init__(self, file: IO[str], jsonl: bool, labels: list[str] | None, throws: bool):
        self.file, self.jsonl, self.labels, self.throws = file, jsonl, labels, throws
        if not jsonl:
            self.csv = csv.writer(file, lineterminator="\n")
            self.csv.writerow(["winner", "turns", "throws"] if throws else ["winner", "turns"])

    def __call__(self, winner, turns, throws) -> None:
        out = []
        for w, t, th in zip(winner.tolist(), turns.tolist(), throws.tolist(), strict=True):
            label = "" if w < 0 else (self.labels[w] if self.labels else str(w + 1))
            if self.jsonl:
                row = {"winner": (int(label) if label.isdigit() else label) if label else None, "turns": t}
                if self.throws:
                    row["throws"] = th
                out.append(json.dumps(row) + "\n")
            else:
                out.append([label, t, th] if self.throws else [label, t])
        if self.jsonl:
            self.file.writelines(out)
        else:
            self.csv.writerows(out)
