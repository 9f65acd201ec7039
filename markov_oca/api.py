"""The public entry points: load a rule set, build its chain, solve it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .chain import Chain
from .errors import RulesError
from .goose.model import GooseModel, goose_model
from .goose.rules import GooseRules, build_goose
from .goose.solve import solve_goose
from .results import SolveResults
from .rulefile import read_toml, resolve_source, shipped_names
from .ur.solve import solve_ur


def load(rules: str | Path, options: Mapping[str, Any] | None = None, **kw: Any) -> GooseRules:
    """Load a shipped rule set by name, or a user's TOML file by path, with options in force.

    Example
    -------
    >>> load("oca-moderna", until="last").until
    'last'
    """
    source, raw, fam = _read(rules)
    if fam != "goose":
        raise RulesError(f"rule sets of the '{fam}' family are loaded by their own loader (markov_oca.{fam})",
                         source=source, key="game.family")
    return build_goose(raw, source, {**(options or {}), **kw})


def _read(rules: str | Path) -> tuple[str, dict[str, Any], str]:
    """A rule file's display name, parsed TOML and family (``goose`` when unsaid)."""
    source, path = resolve_source(rules)
    raw = read_toml(source, path)
    game = raw.get("game")
    return source, raw, game.get("family", "goose") if isinstance(game, dict) else "goose"


def model(rules: GooseRules | str | Path, players: int | None = None) -> GooseModel:
    """The model (state space and kernel) of a rule set for a number of players."""
    if not isinstance(rules, GooseRules):
        rules = load(rules)
    return goose_model(rules, rules.default_players if players is None else players)


def build(rules: GooseRules | str | Path, players: int | None = None, progress: bool = False) -> Chain:
    """The compiled chain of a rule set for a number of players.

    Example
    -------
    >>> c = build("oca-moderna", players=1)
    >>> round(c.outcome_probabilities()["seat 1 wins"], 6)
    0.491845
    """
    return model(rules, players).build(progress=progress)


def solve(rules: GooseRules | str | Path, players: int | None = None, *, exact: bool = False,
          landings: bool | None = None, tail: float = 1e-10, progress: bool = False,
          options: Mapping[str, Any] | None = None) -> SolveResults:
    """Build and solve: every seat's winning chance, deadlock, expectations, length, landings.

    Example
    -------
    >>> r = solve("examples/snakes_and_ladders.toml", exact=True, landings=False)
    >>> float(r.expected["turns"].total)  # doctest: +ELLIPSIS
    39.225122308...
    """
    if not isinstance(rules, GooseRules):
        rules = load(rules, options)
    return solve_goose(rules, rules.default_players if players is None else players, exact=exact,
                       landings=landings, tail=tail, progress=progress)


def variants() -> list[dict[str, Any]]:
    """Every shipped rule set: name, family, seed, title, summary and default players."""
    rows = []
    for name in shipped_names():
        _source, raw, fam = _read(name)
        game = raw.get("game", {})
        rows.append({"name": game.get("name", name), "family": fam,
                     "seed": str(game.get("seed", "")), "title": game.get("title", name),
                     "summary": game.get("summary", ""), "default_players": game.get("players", 2)})
    return rows


def family(rules: str | Path) -> str:
    """The family of a rule set (``goose``, ``ur`` or ``punti``), read from its ``[game]`` table."""
    return _read(rules)[2]


def simulate(rules: str | Path, players: int | None = None, games: int = 100_000, *, seed: int = 0,
             turn_limit: int | None = None, options: Mapping[str, Any] | None = None,
             pieces: int | None = None, light: str = "random", dark: str = "random", bet: str = "never",
             out: str | Path | None = None, progress: bool = False):
    """Play ``games`` games by sampling (goose rule sets, an Ur policy pair, a points board) and count them.

    With ``out``, every game is also written as a row ``winner,turns,throws`` (a
    ``.jsonl`` name writes JSON lines): the format ``crosscheck --results`` reads.
    The rows stream to the file batch by batch, so memory does not grow with ``games``.

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
    opts = dict(options or {})
    writer = _GameWriter(Path(out)) if out is not None else None
    try:
        if family(rules) == "punti":
            from .punti import load_punti, punti_model
            from .punti.simulate import simulate_summary

            p = load_punti(rules, opts)
            if writer is not None:
                m = punti_model(p, players)
                names = [m.outcome_name(k) for k in m.outcome_masks()]
                writer.start([_seat_number(n) for n in names], throws=False)
            return simulate_summary(p, players, games, bet=bet, seed=seed,
                                    turn_limit=10_000 if turn_limit is None else turn_limit, on_batch=writer,
                                    progress=progress)
        if family(rules) == "ur":
            from .simulate.ur import simulate_ur
            from .ur.rules import load_ur

            if pieces is not None:
                opts["pieces"] = pieces
            r = load_ur(rules, opts)
            return simulate_ur(r, light, dark, games, seed=seed, turn_limit=turn_limit,
                               on_batch=writer, progress=progress)
        from .simulate.goose import simulate_goose

        g = load(rules, opts)
        return simulate_goose(g, g.default_players if players is None else players, games, seed=seed,
                              turn_limit=turn_limit, on_batch=writer, progress=progress)
    finally:
        if writer is not None:
            writer.close()


def _seat_number(outcome: str) -> str:
    """``seat 3 wins`` -> ``3``; an outcome of several seats keeps its name (``seats 1 and 2 tie``)."""
    import re

    m = re.fullmatch(r"seat (\d+) (wins|last)", outcome)
    return m.group(1) if m else outcome


class _GameWriter:
    """Writes simulated games, one row each, as they stream out of the simulator.

    ``winner`` is the outcome's number (1, 2, ...: the seat, or with ``until = "last"`` the
    seat that came last), or its name where it is not one seat (``seats 1 and 2 tie``), or
    empty / null for a game not over at the turn limit. ``throws`` is left out where the
    simulator does not count them (the points game).
    """

    def __init__(self, path: Path):
        self.path = path
        self.labels: list[str] | None = None
        self.throws = True
        self.file = None

    def start(self, labels: list[str] | None = None, throws: bool = True) -> None:
        try:
            self.file = self.path.open("w", encoding="utf-8", newline="")
        except OSError as exc:
            raise RulesError(f"cannot write: {exc.strerror or exc}", source=str(self.path)) from None
        self.labels, self.throws = labels, throws
        self.jsonl = self.path.suffix.lower() in (".jsonl", ".ndjson")
        if not self.jsonl:
            import csv

            self.csv = csv.writer(self.file, lineterminator="\n")
            self.csv.writerow(["winner", "turns", "throws"] if throws else ["winner", "turns"])

    def __call__(self, winner, turns, throws) -> None:
        import json

        if self.file is None:
            self.start()
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

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


__all__ = ["build", "family", "load", "model", "read_toml", "resolve_source", "simulate", "solve", "solve_ur",
           "variants"]
