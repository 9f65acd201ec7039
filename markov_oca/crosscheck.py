"""Testing simulated games against the exact chain: ours, or anyone's.

A cross-check puts the exact answer of a rule set beside a sample of games,
played by :mod:`markov_oca.simulate` or read from someone else's file (one row
per game: the winner and the length in turns), and tests every quantity the
sample can estimate:

* each outcome's share (exact binomial test against the exact chance of that
  outcome *within the turn limit*, so cutting games off is not a bias);
* the share of games not over after the turn limit (deadlocks, and games
  longer than the limit) against the exact ``P(length > limit)``;
* the mean length of the finished games (z-test with the exact variance) and
  the mean number of throws (z-test with the sample's variance);
* length quantiles: the number of games at most the exact quantile long is
  binomial, which is the test; the interval is the distribution-free 99%
  interval of the sample quantile from order statistics;
* the landing chance of every special square for every seat (our simulator
  only);
* the whole length distribution: Pearson's chi-square over turns, adjacent
  bins pooled until each expects at least five games.

Each row shows a 99% interval for the simulated value. The verdict controls
the family-wise error at ``alpha`` (1% by default) with Holm's step-down
correction over all the tests; a row passes when its Holm-adjusted p-value is
at least ``alpha``. (SciPy has no Holm procedure; it is five lines below.)
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .chain import LengthDistribution
from .errors import RulesError
from .sampling.summary import SimSummary

SCHEMA = "markov_oca.crosscheck/1"
QUANTILES = (0.1, 0.5, 0.9, 0.99)
MIN_EXPECTED = 5.0  # chi-square bins are pooled until each expects this many games


@dataclass
class Check:
    """One tested quantity: exact value, simulated value, its 99% interval, the test's verdict."""

    quantity: str
    exact: float
    simulated: float
    low: float
    high: float
    p_value: float
    test: str
    adjusted: float = float("nan")  # Holm-adjusted p-value
    passed: bool = True

    def to_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in vars(self).items()}


@dataclass
class CrosscheckResult:
    """Every check of one sample against one exact chain, with the overall verdict."""

    rules: str
    players: int
    source: str  # "markov_oca simulator (seed S)" or the results file
    games: int
    turn_limit: int
    alpha: float
    checks: list[Check]
    chi_square: dict[str, Any]
    passed: bool
    exact_deadlock: float
    simulated_options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    setting: str = ""  # the game as played: players, or Ur pieces and policies

    def text(self) -> str:
        """The checks side by side for reading in a terminal (what ``markov-oca crosscheck`` prints)."""
        from .report import crosscheck_text

        return crosscheck_text(self)

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA, "rules": self.rules, "players": self.players, "setting": self.setting,
            "source": self.source,
            "games": self.games, "turn_limit": self.turn_limit, "alpha": self.alpha,
            "correction": "holm", "passed": self.passed, "exact_deadlock": self.exact_deadlock,
            "simulated_options": self.simulated_options,
            "checks": [c.to_dict() for c in self.checks], "chi_square": self.chi_square,
            "notes": self.notes, "timings": self.timings,
        }


@dataclass
class ExactAnswer:
    """What the exact chain says about the quantities a sample can estimate."""

    rules: str
    seats: list[str]
    outcome_names: list[str]
    length: LengthDistribution  # with ``by_outcome``
    throws_given_end: float | None = None
    landings: dict[tuple[int, int], float] = field(default_factory=dict)  # (seat 0-based, square) -> chance
    deadlock: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: What the simulation must be given to play the same game (the points game's bet policy).
    simulate_with: dict[str, Any] = field(default_factory=dict)

    @property
    def horizon(self) -> int:
        """The turn after which less than the distribution's tail of the ending games is left."""
        return int(self.length.pmf.size - 1)


# ----------------------------------------------------------------------------- statistics


def _stats():
    """scipy.stats, imported on first use: it adds half a second to every command's start."""
    from scipy import stats

    return stats


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control), in the input order."""
    m = len(p_values)
    order = np.argsort(p_values, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted.tolist()


def _binomial(quantity: str, k: int, n: int, p0: float) -> Check:
    """Exact two-sided binomial test of ``k`` in ``n`` against ``p0``, Clopper-Pearson 99% interval."""
    if n == 0:
        return Check(quantity, p0, float("nan"), float("nan"), float("nan"), 1.0, "binomial (no games)")
    p0 = min(max(float(p0), 0.0), 1.0)
    res = _stats().binomtest(k, n, p0)
    ci = res.proportion_ci(confidence_level=0.99, method="exact")
    return Check(quantity, p0, k / n, float(ci.low), float(ci.high), float(res.pvalue), "binomial")


def _z(quantity: str, exact: float, mean: float, sd: float, n: int, test: str) -> Check:
    if n == 0 or not math.isfinite(exact):
        return Check(quantity, exact, mean, float("nan"), float("nan"), 1.0, f"{test} (not testable)")
    se = sd / math.sqrt(n)
    half = _stats().norm.ppf(0.995) * se
    if se == 0:
        p = 1.0 if mean == exact else 0.0
    else:
        p = float(2 * _stats().norm.sf(abs(mean - exact) / se))
    return Check(quantity, exact, mean, mean - half, mean + half, p, test)


def _pooled_bins(expected: np.ndarray) -> list[tuple[int, int]]:
    """Adjacent bins ``[lo, hi)`` pooled from the left until each expects at least MIN_EXPECTED."""
    bins: list[tuple[int, int]] = []
    lo, acc = 0, 0.0
    for t, e in enumerate(expected):
        acc += e
        if acc >= MIN_EXPECTED:
            bins.append((lo, t + 1))
            lo, acc = t + 1, 0.0
    if lo < expected.size:  # the sparse tail joins the last full bin
        if bins:
            bins[-1] = (bins[-1][0], expected.size)
        else:
            bins.append((0, expected.size))
    return bins


def _chi_square(hist: np.ndarray, cond_pmf: np.ndarray, n: int) -> tuple[dict[str, Any], Check | None]:
    expected = cond_pmf * n
    bins = _pooled_bins(expected)
    if len(bins) < 2:
        return {"bins": len(bins), "note": "too few games for a chi-square test"}, None
    obs = np.array([hist[a:b].sum() for a, b in bins], float)
    exp = np.array([expected[a:b].sum() for a, b in bins])
    exp *= obs.sum() / exp.sum()  # the exact pmf sums to 1 only to rounding
    res = _stats().chisquare(obs, exp)
    info = {"statistic": float(res.statistic), "dof": len(bins) - 1, "p_value": float(res.pvalue),
            "bins": len(bins), "min_expected": MIN_EXPECTED}
    check = Check("length distribution (chi-square)", float(len(bins) - 1), float(res.statistic),
                  float("nan"), float("nan"), float(res.pvalue), f"chi-square, {len(bins) - 1} dof")
    return info, check


def _quantile_check(q: float, hist: np.ndarray, cond_cdf: np.ndarray, n: int) -> Check:
    t_exact = int(np.searchsorted(cond_cdf, q - 1e-12))
    cum = np.cumsum(hist)
    t_sim = int(np.searchsorted(cum, q * n - 1e-9)) if n else 0
    # The number of games at most t_exact turns long is binomial(n, F(t_exact)).
    k = int(cum[min(t_exact, cum.size - 1)])
    res = _stats().binomtest(k, n, min(float(cond_cdf[t_exact]), 1.0))
    # Distribution-free 99% interval of the sample quantile: order statistics by binomial ranks.
    r_lo = int(_stats().binom.ppf(0.005, n, q))
    r_hi = min(int(_stats().binom.ppf(0.995, n, q)) + 1, n)
    lo = int(np.searchsorted(cum, max(r_lo, 1) - 1e-9))
    hi = int(np.searchsorted(cum, r_hi - 1e-9))
    return Check(f"length, {q:.0%} quantile (turns)", float(t_exact), float(t_sim), float(lo), float(hi),
                 float(res.pvalue), "binomial count at the exact quantile")


def compare(exact: ExactAnswer, sample: SimSummary, *, alpha: float = 0.01,
            source: str = "", players: int | None = None) -> CrosscheckResult:
    """Test a sample of games against the exact answer.

    Parameters
    ----------
    exact : ExactAnswer
        From :func:`exact_answer`.
    sample : SimSummary
        Simulated or read games; ``sample.turn_limit`` is where unfinished games were cut.
    alpha : float
        Family-wise error rate of the verdict (Holm).

    Returns
    -------
    CrosscheckResult
    """
    T = sample.turn_limit
    n = sample.games
    dist = exact.length
    pmf = np.zeros(T + 1)
    m = min(T + 1, dist.pmf.size)
    pmf[:m] = dist.pmf[:m]
    within = dist.by_outcome[: T + 1].sum(axis=0)
    checks: list[Check] = []
    for k, name in enumerate(exact.outcome_names):
        checks.append(_binomial(f"{name} (within {T} turns)", int(sample.outcomes[k]), n, within[k]))
    p_unfinished = max(0.0, 1.0 - float(pmf.sum()))
    checks.append(_binomial(f"not over after {T} turns (deadlock {exact.deadlock:.6g})",
                            sample.unfinished, n, p_unfinished))

    nf = sample.finished
    ended = float(pmf.sum())
    hist = sample.length[: T + 1].astype(float)
    notes = list(exact.notes)
    if ended > 0 and nf > 0:
        cond = pmf / ended
        t = np.arange(T + 1)
        mean = float((t * cond).sum())
        sd = math.sqrt(max(float((t * t * cond).sum()) - mean * mean, 0.0))
        sim_mean = float((t * hist).sum() / nf)
        checks.append(_z("mean length of finished games (turns)", mean, sim_mean, sd, nf, "z, exact variance"))
        cdf = np.cumsum(cond)
        for q in QUANTILES:
            checks.append(_quantile_check(q, hist, cdf, nf))
        # Throws and landings are exact over whole games; below the horizon, games still
        # running at the limit would bias them, so they are tested only from the horizon on.
        whole_games = T >= exact.horizon
        if exact.throws_given_end is not None and sample.throws_sum > 0 and whole_games:
            th_mean = sample.throws_sum / nf
            th_sd = math.sqrt(max(sample.throws_sumsq / nf - th_mean * th_mean, 0.0) * nf / max(nf - 1, 1))
            checks.append(_z("mean throws of finished games", exact.throws_given_end, th_mean, th_sd, nf,
                             "z, sample variance"))
        elif exact.throws_given_end is not None and sample.throws_sum > 0:
            notes.append(f"mean throws not tested: the turn limit {T} is below {exact.horizon}, where the "
                         "games that end are all over")
        chi_info, chi = _chi_square(hist, cond, nf)
        if chi is not None:
            checks.append(chi)
    else:
        chi_info = {"note": "no finished games"}
    if sample.landings is not None and exact.landings and T >= exact.horizon:
        for (seat, square), chance in sorted(exact.landings.items()):
            if square < sample.landings.shape[1]:
                checks.append(_binomial(f"{exact.seats[seat]} lands on {square}",
                                        int(sample.landings[seat, square]), n, chance))
    elif sample.landings is not None and exact.landings:
        notes.append(f"landing chances not tested: the turn limit {T} is below {exact.horizon}, where the "
                     "games that end are all over")
    elif sample.landings is None and exact.landings:
        notes.append("no landings in the sample: landing chances not tested")

    adjusted = holm([c.p_value for c in checks])
    for c, a in zip(checks, adjusted, strict=True):
        c.adjusted = a
        c.passed = a >= alpha
    return CrosscheckResult(
        rules=exact.rules, players=players or len(exact.seats), source=source, games=n, turn_limit=T,
        alpha=alpha, checks=checks, chi_square=chi_info, passed=all(c.passed for c in checks),
        exact_deadlock=exact.deadlock, notes=notes,
    )


# ----------------------------------------------------------------------------- the exact side


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
    from .family import prepare

    extra = {"landings": settings.pop("landings")} if "landings" in settings else {}
    play = prepare(rules, "crosscheck", players=players, **settings)
    return play.family.exact_answer(play, tail=tail, progress=progress, **extra)


# ----------------------------------------------------------------------------- someone else's games


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


# ----------------------------------------------------------------------------- the whole job


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

    from .family import prepare

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


__all__ = ["Check", "CrosscheckResult", "ExactAnswer", "compare", "crosscheck", "exact_answer", "holm",
           "read_results"]
