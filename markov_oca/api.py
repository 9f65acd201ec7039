"""The public entry points, for every game family: load a rule set, build its chain, solve it,
simulate it, explain it.

Each function finds the rule set's family (from its ``[game].family``, read once) and
calls that family's implementation of :class:`~markov_oca.family.Family`; none of them
knows which game it serves. A family's settings (goose: ``players``, ``exact``,
``landings``; Ur: ``pieces``, ``light``, ``dark``; points: ``players``, ``bet``,
``method``, ``postcards``) are keyword arguments; one the family does not take is a
:class:`~markov_oca.errors.RulesError`.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .atomic import atomic_write
from .chain import Chain
from .errors import RulesError
from .family import Family, family_named, family_of_rules, prepare, read_rules
from .rulefile import read_toml, resolve_source, shipped_names

#: The length distribution is carried until this much probability is left (``solve``'s ``tail``). The
#: expectations do not depend on it: each engine goes on (or solves) until its own residual is met.
DEFAULT_TAIL = 1e-6


def load(rules: str | Path, options: Mapping[str, Any] | None = None, **kw: Any) -> Any:
    """Load a shipped rule set by name, or a user's TOML file by path, with options in force.

    Parameters
    ----------
    rules : str or Path
        A shipped name (``markov-oca variants`` lists them) or a path to a TOML file, of any family.
    options : mapping, optional
        Option values by name; strings are converted to the option's type.
    **kw
        More options, by keyword.

    Returns
    -------
    The family's validated rules (``GooseRules``, ``UrRules``, ``PuntiRules``, ...).

    Example
    -------
    >>> load("oca-moderna", until="last").until
    'last'
    >>> load("ur-simplificado", pieces=2).pieces
    2
    """
    src = read_rules(rules)
    return family_named(src.family, src.name).load(src, {**(options or {}), **kw})


def family(rules: Any) -> str:
    """The name of a rule set's family (``goose``, ``ur``, ``punti``, ...).

    Example
    -------
    >>> family("ur-simplificado") == family("ur-7-rescatados") != family("oca-moderna")
    True
    """
    return family_of_rules(rules).name


def build(rules: Any, players: int | None = None, *, options: Mapping[str, Any] | None = None,
          progress: bool = False, **settings: Any) -> Chain:
    """The compiled chain of a rule set (of any family) with its settings in force.

    Parameters
    ----------
    rules : str, Path or loaded rules
    players : int, optional
        For families that take it (the rule set's default when None).
    options : mapping, optional
        Rule options, with a name or path only.
    progress : bool
        Show progress bars on stderr.
    **settings
        The family's settings (Ur: ``pieces``, ``light``, ``dark``, defaulting to optimal play).

    Returns
    -------
    Chain

    Example
    -------
    >>> c = build("oca-moderna", players=1)
    >>> round(c.outcome_probabilities()["seat 1 wins"], 6)
    0.491845
    >>> build("ur-simplificado", pieces=1, light="random", dark="random").players
    2
    """
    play = prepare(rules, "export", options, players=players, **settings)
    return play.family.chain(play, progress=progress)


def solve(rules: Any, players: int | None = None, *, options: Mapping[str, Any] | None = None,
          tail: float = DEFAULT_TAIL, progress: bool = False, **settings: Any) -> Any:
    """Solve a rule set of any family: each seat's chance to win, expectations, length and the rest.

    Parameters
    ----------
    rules : str, Path or loaded rules
    players : int, optional
        For families that take it (the rule set's default when None).
    options : mapping, optional
        Rule options, with a name or path only.
    tail : float
        Carry the length distribution until this much probability is left.
    progress : bool
        Show progress bars on stderr.
    **settings
        The family's settings for ``solve`` (goose: ``exact``, ``landings``; Ur: ``pieces``,
        ``light``, ``dark``; points: ``bet``, ``method``, ``postcards``).

    Returns
    -------
    The family's results (``SolveResults``, ``UrResults``, ``PuntiResults``), each with
    ``to_dict()`` (the JSON of ``solve --format json``) and ``text()``.

    Example
    -------
    >>> r = solve("examples/snakes_and_ladders.toml", exact=True, landings=False)
    >>> float(r.expected["turns"].total)  # doctest: +ELLIPSIS
    39.225122308...
    >>> round(float(solve("ur-simplificado", pieces=1, dark="random").wins["light"]), 4)
    0.5387
    """
    if not 0 < tail < 1:
        raise RulesError(f"--tail must be between 0 and 1, got {tail}")
    play = prepare(rules, "solve", options, players=players, **settings)
    return play.family.solve(play, tail=tail, progress=progress)


@dataclass(frozen=True)
class Explained:
    """A rule set as the engine reads it: ``to_dict()`` for JSON, ``text()`` for people."""

    family: Family
    rules: Any

    def to_dict(self) -> dict:
        return self.family.explain(self.rules)

    def text(self) -> str:
        return self.family.explain_text(self.rules)


def explain(rules: Any, options: Mapping[str, Any] | None = None, **kw: Any) -> Explained:
    """The board of a rule set as the engine reads it, square by square, with the options in force.

    Example
    -------
    >>> explain("ur-simplificado", pieces=3).to_dict()["pieces"]
    3
    """
    if isinstance(rules, (str, Path)):
        rules = load(rules, options, **kw)
    return Explained(family_of_rules(rules), rules)


def variants() -> list[dict[str, Any]]:
    """Every shipped rule set: name, family, seed, title, summary and default players.

    Example
    -------
    >>> len({v["family"] for v in variants()}) > 1
    True
    """
    rows = []
    for name in shipped_names():
        src = read_rules(name)
        game = src.raw.get("game", {})
        rows.append({"name": game.get("name", name), "family": src.family,
                     "seed": str(game.get("seed", "")), "title": game.get("title", name),
                     "summary": game.get("summary", ""), "default_players": game.get("players", 2)})
    return rows


def simulate(rules: Any, players: int | None = None, games: int = 100_000, *, seed: int = 0,
             turn_limit: int | None = None, options: Mapping[str, Any] | None = None,
             out: str | Path | None = None, progress: bool = False, **settings: Any):
    """Play ``games`` games of a rule set (any family) by sampling, and count them.

    With ``out``, every game is also written as a row ``winner,turns,throws`` (a
    ``.jsonl`` name writes JSON lines): the format ``crosscheck --results`` reads.
    The rows stream to a temporary file beside ``out``, renamed into place only when
    every game is written, so memory does not grow with ``games`` and an interrupted
    run leaves no partial file.

    Parameters
    ----------
    rules : str, Path or loaded rules
    players : int, optional
    games, seed : int
        How many games, and the seed: the same seed plays the same games.
    turn_limit : int, optional
        Cut games off unfinished after this many turns.
    options : mapping, optional
        Rule options, with a name or path only.
    out : str or Path, optional
        The results file to write.
    **settings
        The family's settings for ``simulate`` (Ur: ``pieces``, ``light``, ``dark``,
        random by default; points: ``bet``).

    Returns
    -------
    SimSummary

    Example
    -------
    >>> s = simulate("oca-moderna", players=1, games=1000, seed=3)
    >>> s.games, int(s.outcomes.sum() + s.unfinished)
    (1000, 1000)
    """
    if games < 1:
        raise RulesError(f"--games must be at least 1, got {games}")
    if turn_limit is not None and turn_limit < 1:
        raise RulesError(f"--turn-limit must be at least 1, got {turn_limit}")
    play = prepare(rules, "simulate", options, players=players, **settings)
    fam = play.family
    if out is None:
        return fam.simulate(play, games, seed=seed, turn_limit=turn_limit, progress=progress)
    out = Path(out)
    labels = fam.outcome_labels(play)
    with contextlib.ExitStack() as stack:
        try:
            fh = stack.enter_context(atomic_write(out, "w", encoding="utf-8", newline=""))
        except OSError as exc:
            raise RulesError(f"cannot write: {exc.strerror or exc}", source=str(out)) from None
        writer = _GameWriter(fh, out.suffix.lower() in (".jsonl", ".ndjson"),
                             [_seat_number(n) for n in labels] if labels is not None else None,
                             fam.counts_throws(play))
        return fam.simulate(play, games, seed=seed, turn_limit=turn_limit, on_batch=writer, progress=progress)


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


__all__ = ["Explained", "build", "explain", "family", "load", "read_toml", "resolve_source", "simulate", "solve",
           "variants"]
