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

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.chain import LengthDistribution
from ..core.text import option_text
from .sampling import SimSummary

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
    """Every check of one sample against one exact chain, with the overall verdict.

    :func:`~markov_oca.crosscheck` returns it; ``text()`` is what the command line prints and
    ``to_dict()`` its JSON.

    Attributes
    ----------
    rules, source : str
        The rule set, and where the games came from (the simulator and its seed, or a file).
    players, games, turn_limit : int
        The seats, the games tested, and the turns after which a game counts as unfinished.
    alpha : float
        The family-wise error rate of the verdict (Holm-corrected).
    checks : list of Check
        One row per tested quantity: ``quantity``, ``exact``, ``simulated``, the interval
        ``low`` to ``high``, the Holm-adjusted ``p_value`` and its verdict.
    chi_square : dict
        The Pearson test of the whole length distribution.
    passed : bool
        The verdict: every check passed.
    exact_deadlock : float
        The exact chance that the game never ends.
    simulated_options, notes, timings, setting : dict, list of str, dict, str
        The rule options the simulation played differently, notes on what was left out, the
        seconds of each stage, and the game as played in words.

    Examples
    --------
    >>> from markov_oca import crosscheck
    >>> r = crosscheck("oca-moderna", players=1, games=2000, seed=1)
    >>> r.passed, r.to_dict()["correction"]
    (True, 'holm')
    >>> print(r.text().splitlines()[0])
    cross-check of oca-moderna, 1 player: 2,000 games from markov_oca simulator, seed 1
    """

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


def _landing_checks(exact: ExactAnswer, sample: SimSummary, checks: list[Check], notes: list[str]) -> None:
    """Each seat's landing chance on each special square (binomial), or a note saying why it is not tested."""
    T, n = sample.turn_limit, sample.games
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
    _landing_checks(exact, sample, checks, notes)

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




# ----------------------------------------------------------------------------- someone else's games


















# ----------------------------------------------------------------------------- the whole job






def crosscheck_text(r) -> str:
    """A cross-check side by side: exact, simulated, the 99% interval, pass or fail (Holm)."""
    lines = [
        f"cross-check of {r.rules}, {r.setting or f'{r.players} players'}: "
        f"{r.games:,} games from {r.source}",
        f"games cut at {r.turn_limit} turns count as unfinished; exact chance of deadlock {r.exact_deadlock:.6g}",
    ]
    if r.simulated_options:
        lines.append("simulated with different options: "
                     + ", ".join(f"{k}={option_text(v)}" for k, v in r.simulated_options.items()))
    head = f"{'quantity':48s} {'exact':>12s} {'simulated':>12s}   {'99% interval':25s} {'p (Holm)':>9s}  verdict"
    lines += ["", head]
    for c in r.checks:
        if c.test.startswith("chi-square"):
            interval = f"chi2 = {c.simulated:.1f}, {c.test.split(', ')[1]}"
            exact, sim = "", ""
        else:
            exact, sim = _cell(c.exact), _cell(c.simulated)
            interval = "" if math.isnan(c.low) else f"[{_cell(c.low)}, {_cell(c.high)}]"
        lines.append(f"{c.quantity[:48]:48s} {exact:>12s} {sim:>12s}   {interval:25s} {c.adjusted:9.3g}  "
                     + ("pass" if c.passed else "FAIL"))
    lines += [""] + [f"note: {n}" for n in r.notes]
    failed = sum(not c.passed for c in r.checks)
    lines.append(f"verdict: {'PASS' if r.passed else 'FAIL'} ({len(r.checks)} tests, {failed} failed; "
                 f"Holm-corrected at {r.alpha:g} family-wise)")
    return "\n".join(lines)


def _cell(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:.0f}" if float(x).is_integer() and abs(x) >= 2 else f"{x:.6f}"
