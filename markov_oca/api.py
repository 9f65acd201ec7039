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
        A shipped name (:func:`variants` lists them) or the path of a TOML file, of any family.
    options : mapping, optional
        Option values by name; strings are converted to the option's type.
    **kw
        More options, by keyword.

    Returns
    -------
    object
        The family's validated rules (``GooseRules``, ``UrRules``, ``PuntiRules``, ...).

    Raises
    ------
    RulesError
        An unknown name, a missing or malformed file, an unknown option or a value out of range.

    Examples
    --------
    >>> load("oca-moderna", until="last").until
    'last'
    >>> load("ur-simplificado", pieces=2).pieces
    2
    >>> load("oca-moderna", {"until": "never"})
    Traceback (most recent call last):
    ...
    markov_oca.core.errors.RulesError: ...
    """
    src = read_rules(rules)
    return family_named(src.family, src.name).load(src, {**(options or {}), **kw})


def family(rules: Any) -> str:
    """The name of a rule set's family (``goose``, ``ur``, ``punti``, ...).

    Parameters
    ----------
    rules : str, Path or loaded rules
        A shipped name, the path of a TOML file, or rules returned by :func:`load`.

    Returns
    -------
    str

    Examples
    --------
    >>> family("ur-simplificado"), family("oca-moderna"), family(load("gioco-oca-punti"))
    ('ur', 'goose', 'punti')
    """
    return family_of_rules(rules).name


def build(rules: Any, players: int | None = None, *, options: Mapping[str, Any] | None = None,
          progress: bool = False, **settings: Any) -> Chain:
    """The compiled chain of a rule set (of any family) with its settings in force.

    Parameters
    ----------
    rules : str, Path or loaded rules
        A shipped name, the path of a TOML file, or rules returned by :func:`load`.
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

    Raises
    ------
    RulesError
        Bad rules or options, or a setting the family does not take.
    TooLargeError
        A chain whose estimated size does not fit in memory.

    Examples
    --------
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
    rules, players, options, progress
        As for :func:`build`.
    tail : float
        Carry the length distribution until this much probability is left.
    **settings
        The family's settings for ``solve`` (goose: ``exact``, ``landings``; Ur: ``pieces``,
        ``light``, ``dark``; points: ``bet``, ``method``, ``postcards``).

    Returns
    -------
    SolveResults, UrResults or PuntiResults
        The family's results, each with ``to_dict()`` (the JSON of ``solve --format json``)
        and ``text()``.

    Raises
    ------
    RulesError
        Bad rules, options or settings, or ``tail`` outside (0, 1).

    Examples
    --------
    Two players on the modern Spanish board: each seat's chance to win, the chance that the
    game never ends (both in the well or the prison) and the expected turns of a game that ends.

    >>> r = solve("oca-moderna", players=2, landings=False)
    >>> [round(float(s.win), 4) for s in r.seats], round(float(r.deadlock), 4)
    ([0.4207, 0.4129], 0.1664)
    >>> round(float(r.expected["turns"].given_end), 2)
    45.31

    One piece a side on the simplified Ur board, optimal play against random moves:

    >>> round(float(solve("ur-simplificado", pieces=1, dark="random").wins["light"]), 4)
    0.5387
    """
    if not 0 < tail < 1:
        raise RulesError(f"--tail must be between 0 and 1, got {tail}")
    play = prepare(rules, "solve", options, players=players, **settings)
    return play.family.solve(play, tail=tail, progress=progress)


@dataclass(frozen=True)
class Explained:
    """A rule set as the engine reads it: ``to_dict()`` for JSON, ``text()`` for people.

    Parameters
    ----------
    family : Family
        The rule set's family.
    rules : object
        The loaded rules (from :func:`load`).

    Examples
    --------
    >>> e = explain("oca-moderna")
    >>> isinstance(e, Explained), e.to_dict()["rules"], e.text().splitlines()[2]
    (True, 'oca-moderna', 'squares 0 (start, off the board) to 63 (the goal); 2d6 thrown')
    """

    family: Family
    rules: Any

    def to_dict(self) -> dict:
        return self.family.explain(self.rules)

    def text(self) -> str:
        return self.family.explain_text(self.rules)


def explain(rules: Any, options: Mapping[str, Any] | None = None, **kw: Any) -> Explained:
    """The board of a rule set as the engine reads it, square by square, with the options in force.

    Parameters
    ----------
    rules : str, Path or loaded rules
        A shipped name, the path of a TOML file, or rules returned by :func:`load`.
    options : mapping, optional
        Option values by name, with a name or path only.
    **kw
        More options, by keyword.

    Returns
    -------
    Explained

    Raises
    ------
    RulesError
        As :func:`load` raises it.

    Examples
    --------
    >>> explain("ur-simplificado", pieces=3).to_dict()["pieces"]
    3
    >>> print(explain("oca-moderna", until="last").text())  # doctest: +ELLIPSIS
    Juego de la Oca (modern Spanish board) ...
      until = last  (choices: first, last)...
    """
    if isinstance(rules, (str, Path)):
        rules = load(rules, options, **kw)
    return Explained(family_of_rules(rules), rules)


def variants() -> list[dict[str, Any]]:
    """Every shipped rule set, one dict each.

    Each dict holds the rule set's ``name``, ``family``, ``title``, ``summary`` and
    ``default_players``, and under ``seed`` the tradition and rule text it follows, in words.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> [(v["name"], v["family"]) for v in variants()][:3]
    [('gioco-oca-punti', 'punti'), ('jeu-de-l-oie', 'goose'), ('oca-moderna', 'goose')]
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
    rules, players, options, progress
        As for :func:`build`.
    games, seed : int
        How many games, and the random seed: the same seed plays the same games.
    turn_limit : int, optional
        Cut games off unfinished after this many turns.
    out : str or Path, optional
        The results file to write.
    **settings
        The family's settings for ``simulate`` (Ur: ``pieces``, ``light``, ``dark``,
        random by default; points: ``bet``).

    Returns
    -------
    SimSummary
        The counts: ``games``, ``outcomes`` (one count per outcome, in ``outcome_names``
        order), ``unfinished``, ``length`` (finished games by turns).

    Raises
    ------
    RulesError
        Bad rules, options or settings, ``games`` or ``turn_limit`` below 1, or an ``out``
        that cannot be written.

    Examples
    --------
    >>> s = simulate("oca-moderna", players=2, games=1000, seed=3)
    >>> s.outcome_names, s.outcomes.tolist(), s.unfinished
    (['seat 1 wins', 'seat 2 wins'], [415, 405], 180)
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

    Parameters
    ----------
    rules, players, progress
        As for :func:`build`.
    tail : float
        Carry the length distribution until this much probability is left.
    **settings
        The family's settings for ``crosscheck`` (Ur: ``light``, ``dark``); goose boards also
        take ``landings`` (``None``: for chains of up to 20,000 states).

    Returns
    -------
    ExactAnswer
        The chances of the outcomes by turn, the deadlock, the expected throws and the landings.

    Examples
    --------
    >>> a = exact_answer(load("oca-moderna"), 1, landings=False)
    >>> a.seats, round(a.length.mean(), 4), round(a.deadlock, 4)
    (['seat 1'], 22.431, 0.5082)
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
    rules, players, progress
        As for :func:`build`.
    games, seed : int
        The simulation's size and random seed (ignored with ``results``).
    results : str or Path, optional
        Someone else's games (a ``winner,turns,throws`` file, as :func:`simulate` writes) instead of
        our simulator.
    turn_limit : int, optional
        Where simulated games are cut off as unfinished (default: the turn after
        which less than 1e-10 of the games that end are left).
    options, simulate_options : mapping, optional
        Rule options for both sides, and extra ones for the simulated games only
        (a deliberately wrong simulation, to see the check fail).
    alpha : float
        Family-wise error rate of the verdict, Holm-corrected.
    **settings
        The family's other settings for ``crosscheck`` (Ur: ``pieces``, ``light``, ``dark``,
        whose policies default to ``random`` here; points: ``bet``).

    Returns
    -------
    CrosscheckResult

    Raises
    ------
    RulesError
        Bad rules, options or settings, ``games`` or ``turn_limit`` below 1, ``alpha`` outside
        (0, 1), or a results file that cannot be read.

    Examples
    --------
    >>> r = crosscheck("oca-moderna", players=1, games=2000, seed=1)
    >>> r.passed, r.games, r.checks[0].quantity
    (True, 2000, 'seat 1 wins (within 389 turns)')

    A simulation that plays another rule (a throw past the goal finishes instead of bouncing back)
    fails:

    >>> crosscheck("oca-moderna", players=1, games=2000, seed=1,
    ...            simulate_options={"overshoot": "finish"}).passed
    False
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
    rules, players, progress
        As for :func:`build` (``players`` may be None: the rule set's default).
    fmt : str
        One of ``FORMATS``: ``graphml``, ``gexf``, ``dot``, ``json``, ``prism``, ``storm``, ``drn``, ...
    out : str or Path
        The file, or for ``prism`` and ``storm`` the stem of the files.
    options : mapping, optional
        Rule options (Ur: ``pieces``, ``throw``, ``end``, ``total``).
    max_states : int or None
        Refuse a chain larger than this (None: no limit).
    **settings
        The family's settings for ``export`` (Ur: ``pieces``, ``light``, ``dark``, whose
        policies default to ``optimal``; points: ``bet``).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    RulesError
        An unknown format, bad rules or settings, or a chain above ``max_states``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in export("ur-simplificado", None, "graphml", pathlib.Path(d) / "ur1",
    ...                             options={"pieces": 1}, light="random", dark="random")]
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
    rules, options, progress
        As for :func:`build` (rules already loaded take no ``options``).
    out : str or Path
        The directory to write into (created when missing; files of the same
        names are replaced, each only once it is whole).
    **settings
        The family's settings for ``report`` (goose: ``players``, ``landings``; Ur:
        ``pieces``, ``light``, ``dark``; points: ``players``, ``bet``).

    Returns
    -------
    list of Path
        The files written: ``index.html``, ``report.md`` and the pictures beside it
        (``length.png`` and ``board.png``; a points board also ``points.png``, first).

    Raises
    ------
    RulesError
        Bad rules, options or settings, or a directory that cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in write_report("oca-moderna", d, players=1)]
    ['index.html', 'report.md', 'length.png', 'board.png']
    """
    play = prepare(rules, "report", options, **settings)
    title, blocks = play.family.page(play, progress=progress)
    return write_page(Path(out), title, blocks)
