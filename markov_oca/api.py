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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .analysis.chain import Chain
from .analysis.crosscheck import CrosscheckResult, ExactAnswer, compare
from .core.atomic import atomic_write
from .core.errors import RulesError
from .core.rulefile import read_toml, resolve_source, shipped_names
from .engine.family import Family, family_named, family_of_rules, prepare, read_rules
from .engine.page import write_page
from .io.results import _GameWriter, _seat_number, read_results
from .io.write import FILE_LIMIT, FORMATS, write_chain

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
    """Every shipped rule set: name, family, tradition (the key ``seed``), title, summary and default players.

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
                     "seed": str(game.get("tradition", game.get("seed", ""))), "title": game.get("title", name),
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






__all__ = ["Explained", "build", "explain", "family", "load", "read_toml", "resolve_source", "simulate", "solve",
           "variants"]


def exact_answer(rules: Any, players: int | None = None, *, tail: float = 1e-10, progress: bool = False,
                 **settings: Any) -> ExactAnswer:
    """The exact answer a sample is tested against: the family's own (``Family.exact_answer``).

    ``rules`` are loaded rules or a rule set's name or path; ``settings`` are the family's
    settings for ``crosscheck`` (Ur: ``light``, ``dark``); goose boards also take
    ``landings`` (``None``: for chains of up to 20,000 states).

    Example
    -------
    >>> from markov_oca import load
    >>> a = exact_answer(load("oca-moderna"), 1, landings=False)
    >>> a.seats, round(a.length.mean(), 4)
    (['seat 1'], 22.431)
    """
    from .engine.family import prepare

    extra = {"landings": settings.pop("landings")} if "landings" in settings else {}
    play = prepare(rules, "crosscheck", players=players, **settings)
    return play.family.exact_answer(play, tail=tail, progress=progress, **extra)


def crosscheck(rules: Any, players: int | None = None, *, games: int = 1_000_000, seed: int = 0,
               results: str | Path | None = None, turn_limit: int | None = None,
               options: Mapping[str, Any] | None = None, simulate_options: Mapping[str, Any] | None = None,
               alpha: float = 0.01, progress: bool = False, **settings: Any) -> CrosscheckResult:
    """Simulate (or read) games of a rule set and test them against its exact chain.

    Parameters
    ----------
    rules : str or Path
        A shipped rule set or a TOML file, of any family.
    players : int, optional
        The number of players, for families that take it (default: the rule set's).
    games, seed : int
        The simulation's size and seed (ignored with ``results``).
    results : path, optional
        Someone else's games (see :func:`read_results`) instead of our simulator.
    turn_limit : int, optional
        Where simulated games are cut off as unfinished (default: the turn after
        which less than 1e-10 of the games that end are left).
    options, simulate_options : mapping
        Rule options for both sides, and extra ones for the simulated games only
        (a deliberately wrong simulation, to see the check fail).
    **settings
        The family's other settings for ``crosscheck`` (Ur: ``pieces``, ``light``, ``dark``,
        whose policies default to ``random`` here; points: ``bet``). A setting the family does
        not take is a :class:`~markov_oca.errors.RulesError`.
    alpha : float
        Family-wise error rate of the verdict, Holm-corrected.

    Returns
    -------
    CrosscheckResult

    Example
    -------
    >>> r = crosscheck("oca-moderna", players=1, games=20_000, seed=1)
    >>> r.passed
    True
    """
    import time

    from .engine.family import prepare

    settings["players"] = players
    if games < 1:
        raise RulesError(f"--games must be at least 1, got {games}")
    if not 0 < alpha < 1:
        raise RulesError(f"--alpha must be between 0 and 1, got {alpha}")
    if turn_limit is not None and turn_limit < 1:
        raise RulesError(f"--turn-limit must be at least 1, got {turn_limit}")
    timer: dict[str, float] = {}
    opts = dict(options or {})
    sim_opts = {**opts, **dict(simulate_options or {})}
    play = prepare(rules, "crosscheck", opts, **settings)
    sim_play = prepare(rules, "crosscheck", sim_opts, **settings) if isinstance(rules, (str, Path)) else play
    fam = play.family
    t0 = time.perf_counter()
    exact = fam.exact_answer(play, tail=1e-10, progress=progress)
    timer["exact"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    if results is not None:
        sample = read_results(results, exact, turn_limit)
        source = str(results)
    else:
        limit = exact.horizon if turn_limit is None else turn_limit
        sample = fam.simulate(sim_play, games, seed=seed, turn_limit=limit, progress=progress, **exact.simulate_with)
        source = f"markov_oca simulator, seed {seed}"
    timer["sample"] = time.perf_counter() - t1
    out = compare(exact, sample, alpha=alpha, source=source, players=len(exact.seats))
    out.simulated_options = {} if results is not None else {k: v for k, v in sim_opts.items() if opts.get(k) != v}
    out.setting = fam.describe_play(play)
    out.timings = timer
    return out


def export(rules: Any, players: int | None, fmt: str, out: str | Path, *,
           options: Mapping[str, Any] | None = None, max_states: int | None = FILE_LIMIT,
           progress: bool = False, **settings: Any) -> list[Path]:
    """Build a rule set's chain and write it: the command line's ``export``.

    Parameters
    ----------
    rules : str, Path or loaded rules
        A shipped rule set's name or a TOML file, of any family.
    players : int or None
        The number of players, for families that take it (the rule set's default when None).
    fmt : str
        One of :data:`FORMATS`.
    out : str or Path
        The file, or for ``prism`` and ``storm`` the stem (see :func:`write_chain`).
    options : mapping, optional
        Rule options (Ur: ``pieces``, ``throw``, ``end``, ``total``).
    max_states : int or None
        As for :func:`write_chain`.
    progress : bool
        Show progress bars while building.
    **settings
        The family's settings for ``export`` (Ur: ``pieces``, ``light``, ``dark``, whose
        policies default to ``optimal``; points: ``bet``).

    Returns
    -------
    list of Path
        The files written.

    Example
    -------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in export("ur-simplificado", None, "graphml", d / "ur1", options={"pieces": 1},
    ...                         light="random", dark="random")]
    ['ur1.graphml']
    """
    from .engine.family import prepare

    if fmt not in FORMATS:
        raise RulesError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")
    play = prepare(rules, "export", options, players=players, **settings)
    chain = play.family.chain(play, progress=progress)
    return write_chain(chain, out, fmt, rules=play.rules.name, max_states=max_states)


def write_report(rules: Any, out: str | Path, *, options: Mapping[str, Any] | None = None,
                 progress: bool = False, **settings: Any) -> list[Path]:
    """Solve a rule set and write its report page into the directory ``out``.

    Parameters
    ----------
    rules : str, Path or loaded rules
        A shipped rule set (``markov-oca variants`` lists them), a path
        to a TOML file, or rules already loaded (which then take no ``options``).
    out : str or Path
        The directory to write into (created when missing; files of the same
        names are replaced, each only once it is whole).
    options : mapping, optional
        Option values to put in force, by name (strings are converted).
    progress : bool
        Show progress bars on stderr while solving.
    **settings
        The family's settings for ``report`` (goose: ``players``, ``landings``; Ur:
        ``pieces``, ``light``, ``dark``; points: ``players``, ``bet``). A setting the
        rule set's family does not take is a :class:`~markov_oca.errors.RulesError`.

    Returns
    -------
    list of Path
        The files written: ``index.html``, ``report.md`` and the pictures beside it
        (``length.png`` and ``board.png``; a points board also ``points.png``, first).

    Example
    -------
    >>> import tempfile
    >>> paths = write_report("examples/snakes_and_ladders.toml", Path(tempfile.mkdtemp()))
    >>> [p.name for p in paths]
    ['index.html', 'report.md', 'length.png', 'board.png']
    """
    play = prepare(rules, "report", options, **settings)
    title, blocks = play.family.page(play, progress=progress)
    return write_page(Path(out), title, blocks)
