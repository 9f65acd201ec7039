"""What optimal play means for an Ur rule set: the game's length, the shortest game, the cost of weaker play
and the regret of every decision of the optimal table.

:func:`ur_stats` gathers five figures:

* **optimal against optimal**: light's chance, the expected turns and throws and the length distribution
  in turns, from the pair evaluation :func:`.solve.solve_ur` (the chain up to three pieces, the forward push
  above);
* **the shortest game**, in turns and in throws: the fewest the game can take when every throw and every
  move goes the way that ends it soonest (either side winning). It is a shortest path over the game's graph:
  the positions, joined by every legal move of every throw of positive probability (a pass included). With
  ``d(s)`` the throws still to come from ``s``, ``d(s) = min over throws t, moves m of 1 + d(m)``, ``d = 0``
  past a move that ends the game; the turns after the current one follow the same equation with cost 0 for
  a move that throws again and 1 for any other. Both are min-plus (Bellman-Ford) sweeps from infinity, layer
  by layer of pieces off (:func:`.layers.layers`: a move only keeps or adds pieces off), each layer swept
  in its progress order (most pips walked first) until a sweep changes nothing. Costs are nonnegative and no
  cycle costs nothing (a move that throws again walks a piece on), so the fixed point reached is the shortest
  path. The game's shortest length is ``1 + turns(start)`` turns and ``throws(start)`` throws;
* **the cost of weaker play**: light's chance when light plays ``random`` (or ``greedy``, :mod:`.policy`)
  against an optimal dark, subtracted from light's chance under optimal play by both; and the same for dark.
  Each pair's chances are swept layer by layer, one sweep serving the pair and its mirror (the weaker policy
  moving first and second: :func:`.layersums.layered_pairs`), certified to the precision asked;
* **the regret of every decision of the table**: for every position (of the table: every position of the
  ranked space that is not over, whether optimal play reaches it or not, each counted once) and every throw
  with at least two legal moves, the chance to win lost by each move other than the best (the best minus
  the move's value, :func:`.kernel.move_value`), and the decision's *gap*, the best minus the second best.
  Decisions are counted, not weighted by how often play reaches them nor by the throw's chance. Two moves
  within :data:`TIE` of each other are tied (the table's values are exact to about 1e-13); a tie for the best
  counts one of them as a non-best move of regret 0.

The shortest game and the regrets are one pass of the move kernel over the table per sweep (numba, chunks of
:data:`.layers.CHUNK` positions, no Python per position): the regrets are summed in the first sweep of each
layer. Quantiles come from a histogram of :data:`PER_DECADE` bins per decade between :data:`TIE` and 1, each
reported as its bin's upper edge (at most 1.2% above the exact quantile); the histogram shown has the stated
:data:`HIST_EDGES`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import prange

from ..analysis.bounds import PRECISION
from ..analysis.results import quantile_words
from ..core.errors import RulesError, TooLargeError
from ..core.progress import progress_bar
from .kernel import AGAIN, GAME_OVER, kernel_args, move_value, moves_kernel
from .layers import CHUNK, layer_members, layers
from .rules import UrRules, load_ur
from .state import space_of

__all__ = ["HIST_EDGES", "PER_DECADE", "TIE", "Regrets", "Shortest", "UrStats", "table_passes", "ur_stats"]

#: The optimal pair's length distribution is carried until this much is left by default (its quantiles are
#: exact from a tail of 1e-2; the expected turns and throws are swept, whatever the tail).
STATS_TAIL = 1e-4
#: Two moves' values closer than this are one value: a tie.
TIE = 1e-12
#: Bins per decade of the fine histogram the quantiles are read from (between TIE and 1).
PER_DECADE = 200
_DECADES = 12  # log10(1 / TIE)
_FINE = _DECADES * PER_DECADE + 2  # bin 0: below TIE; 1..: the decades
#: The edges of the histogram reported (chance to win, 0 to 1): [0, 1e-12) holds the ties.
HIST_EDGES = (0.0, 1e-12, 1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0)
#: The gaps (best minus second best) counted: decisions whose best move is clear by this much or more.
CLEAR = (0.001, 0.01, 0.1)
#: The quantiles reported.
QUANTILES = (0.5, 0.9, 0.99, 0.999)
_INF = 30_000  # the int16 distances' infinity
_SUMS = 7  # decisions, non-best moves, sum of regrets, largest regret, sum of gaps, decisions tied, largest gap


# ----------------------------------------------------------------------------- the kernels


@numba.njit(cache=True, inline="always")
def _fine_bin(x):
    if x < TIE:
        return 0
    b = 1 + int((np.log10(x) + _DECADES) * PER_DECADE)
    return min(max(b, 1), _FINE - 1)


@numba.njit(cache=True, inline="always")
def _coarse_bin(x, edges):
    b = 0
    while b < edges.shape[0] - 2 and x >= edges[b + 1]:
        b += 1
    return b


@numba.njit(cache=True, parallel=True)
def _shortest_chunk(idx, succ, events, n_moves, probs, throws_left, turns_left, parts):
    """One Gauss-Seidel min-plus update of the positions ``idx`` (their moves given): the throws still to come,
    and the turns after the current one; the number of positions whose figures fell."""
    k = idx.shape[0]
    changed = np.zeros(parts, np.int64)
    for part in prange(parts):
        for i in range(part * k // parts, (part + 1) * k // parts):
            bt = _INF
            bu = _INF
            for t in range(probs.shape[0]):
                if probs[t] <= 0.0:
                    continue
                for m in range(n_moves[i, t]):
                    ev = events[i, t, m]
                    if ev & GAME_OVER:
                        ct = 1
                        cu = 0
                    else:
                        c = succ[i, t, m]
                        ct = 1 + np.int64(throws_left[c])
                        cu = np.int64(turns_left[c]) + (0 if ev & AGAIN else 1)
                    bt = min(bt, ct)
                    bu = min(bu, cu)
            s = idx[i]
            if bt < throws_left[s] or bu < turns_left[s]:
                throws_left[s] = min(bt, throws_left[s])
                turns_left[s] = min(bu, turns_left[s])
                changed[part] += 1
    return changed.sum()


@numba.njit(cache=True, parallel=True)
def _regret_chunk(succ, events, n_moves, probs, values, edges, clear, fine, coarse, counts, sums):
    """Add the decisions of a chunk (every throw of positive chance with two legal moves or more) to the
    histograms (``fine``, ``coarse``: [part, regret 0 / gap 1, bin]), the gap counts (``counts``: [part,
    threshold]) and the sums (``sums``: [part, _SUMS])."""
    k, nt = n_moves.shape
    parts = fine.shape[0]
    for part in prange(parts):
        for i in range(part * k // parts, (part + 1) * k // parts):
            for t in range(nt):
                n = n_moves[i, t]
                if n < 2 or probs[t] <= 0.0:
                    continue
                best = -1.0
                second = -1.0
                for m in range(n):
                    x = move_value(events[i, t, m], values, succ[i, t, m])
                    if x > best:
                        second = best
                        best = x
                    elif x > second:
                        second = x
                gap = best - second
                sums[part, 0] += 1
                sums[part, 1] += n - 1
                sums[part, 4] += gap
                sums[part, 6] = max(sums[part, 6], gap)
                if gap < TIE:
                    sums[part, 5] += 1
                fine[part, 1, _fine_bin(gap)] += 1
                coarse[part, 1, _coarse_bin(gap, edges)] += 1
                for c in range(clear.shape[0]):
                    if gap >= clear[c]:
                        counts[part, c] += 1
                skipped = False  # the best move itself (the first of equals) has no regret
                for m in range(n):
                    r = best - move_value(events[i, t, m], values, succ[i, t, m])
                    if r == 0.0 and not skipped:
                        skipped = True
                        continue
                    sums[part, 2] += r
                    sums[part, 3] = max(sums[part, 3], r)
                    fine[part, 0, _fine_bin(r)] += 1
                    coarse[part, 0, _coarse_bin(r, edges)] += 1


# ----------------------------------------------------------------------------- the results


def _quantile(length: dict, name: str) -> str:
    """A quantile of ``UrStats.length`` worded by :func:`~markov_oca.analysis.results.quantile_words`."""
    return quantile_words(length[name], length.get("more_than", {}).get(name, len(length["pmf"]) - 1))


@dataclass
class Shortest:
    """The shortest game: the fewest turns and the fewest throws a game can take (each on its own best line)."""

    turns: int
    throws: int
    sweeps: int  # sweeps over the layers, all told
    seconds: float


@dataclass
class Distribution:
    """A distribution summarised: quantiles (upper edges of bins of :data:`PER_DECADE` a decade) and a
    histogram over :data:`HIST_EDGES`."""

    count: int
    mean: float
    largest: float
    quantiles: dict[str, float]
    edges: list[float]
    histogram: list[int]


@dataclass
class Regrets:
    """The regret of every decision of the table (see the module docstring)."""

    decisions: int  # (position, throw) with two legal moves or more
    moves: int  # non-best moves of those decisions
    tied: int  # decisions whose two best moves are within TIE
    regret: Distribution  # the chance lost by each non-best move
    gap: Distribution  # per decision, the best move's value minus the second best's
    clear: dict[str, float]  # share of decisions with a gap of at least this (keys "0.001", "0.01", "0.1")
    tie: float = TIE
    weighting: str = "every decision of the table counted once (not weighted by reach or by the throw's chance)"


@dataclass
class UrStats:
    """What optimal play means for one rule set and number of pieces (:func:`ur_stats`)."""

    rules: str
    title: str
    pieces: int
    positions: int
    light_wins: float  # optimal against optimal
    turns: float
    throws: float
    length: dict[str, Any]  # median, p90, p99 in turns (None when the tail leaves one open: more_than), pmf, tail
    shortest: Shortest
    chances: dict[str, dict[str, float]]  # "light random" -> {"light": ..., "dark": ...}
    losses: dict[str, dict[str, float]]  # "random" -> {"light": loss as light, "dark": loss as dark}
    regrets: Regrets
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self, with_pmf: bool = True) -> dict:
        length = dict(self.length)
        if not with_pmf:
            length.pop("pmf", None)
        return {"schema": "markov_oca.ur-stats/1", "rules": self.rules, "title": self.title, "pieces": self.pieces,
                "positions": self.positions,
                "optimal": {"light_wins": self.light_wins, "dark_wins": 1.0 - self.light_wins,
                            "turns": self.turns, "throws": self.throws, "length": length},
                "shortest": asdict(self.shortest), "chances": self.chances, "losses": self.losses,
                "regrets": asdict(self.regrets), "timings": self.timings}

    def text(self) -> str:
        """The report to read in a terminal."""
        L, s, g = self.length, self.shortest, self.regrets
        lines = [f"{self.title} [{self.rules}] with {self.pieces} piece{'s' if self.pieces > 1 else ''} a side "
                 f"({self.positions:,} positions per side to move)", "",
                 "optimal against optimal:",
                 f"  light (moves first) wins {self.light_wins:.9f}, dark {1 - self.light_wins:.9f}",
                 f"  expected turns {self.turns:.4f}, throws {self.throws:.4f}",
                 f"  length in turns: median {_quantile(L, 'median')}, 90th percentile {_quantile(L, 'p90')}, "
                 f"99th percentile {_quantile(L, 'p99')}",
                 f"shortest possible game: {s.turns} turns, {s.throws} throws (the most favourable throws and "
                 "moves)"]
        if self.losses:
            lines += ["", "chance lost against optimal play (light's chance with both optimal minus with light "
                      "playing the policy against an optimal dark; the same for dark):"]
        for pol, d in self.losses.items():
            lines.append(f"  {pol:>7}: as light {_six(d['light'])} (wins {self.chances[f'light {pol}']['light']:.6f}),"
                         f" as dark {_six(d['dark'])} (wins {self.chances[f'dark {pol}']['dark']:.6f})")
        r = g.regret
        lines += ["", f"decisions of the table (position and throw with two legal moves or more, each counted "
                      f"once): {g.decisions:,}, with {g.moves:,} moves other than the best",
                  "  best move clear of the second best by: "
                  + ", ".join(f"{_points(float(k))} or more {v:.2%}" for k, v in g.clear.items())
                  + f"; tied (within {g.tie:g}) {g.tied / max(g.decisions, 1):.2%}",
                  f"  regret of a non-best move: mean {r.mean:.3g}, largest {r.largest:.3g}; "
                  + ", ".join(f"{k} {v:.3g}" for k, v in r.quantiles.items()),
                  f"  gap best minus second best: mean {g.gap.mean:.3g}; "
                  + ", ".join(f"{k} {v:.3g}" for k, v in g.gap.quantiles.items()),
                  "  histogram (chance to win lost)       non-best moves     decisions by gap"]
        e = r.edges
        for b in range(len(e) - 1):
            lo = "0" if e[b] == 0 else f"{e[b]:g}"
            lines.append(f"    [{lo}, {e[b + 1]:g}{']' if b == len(e) - 2 else ')'}".ljust(40)
                         + f"{r.histogram[b]:>15,}   {g.gap.histogram[b]:>15,}")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- the passes over the table


def _points(x: float) -> str:
    """A share of the chance to win in percentage points, as words: "0.1 points", "1 point"."""
    n = f"{x * 100:g}"
    return f"{n} point" + ("" if n == "1" else "s")


def _six(x: float) -> str:
    """Six decimals, a rounding's negative zero shown as zero (a loss of nothing, within the bounds)."""
    s = f"{x:.6f}"
    return s[1:] if s == "-0.000000" else s


def _distribution(fine: np.ndarray, coarse: np.ndarray, count: int, total: float, largest: float) -> Distribution:
    """Quantiles from the fine histogram (each its bin's upper edge), the coarse histogram as it is."""
    cum = np.cumsum(fine)
    quant = {}
    for q in QUANTILES:
        b = int(np.searchsorted(cum, q * count, side="left")) if count else 0
        quant[f"p{q * 100:g}"] = 0.0 if b == 0 else min(1.0, 10.0 ** (b / PER_DECADE - _DECADES))
    return Distribution(count, total / count if count else 0.0, largest, quant, list(HIST_EDGES),
                        [int(x) for x in coarse])


def table_passes(rules: UrRules, values: np.ndarray, *, parts: int | None = None,
                 progress: bool = False) -> tuple[Shortest, Regrets]:
    """The shortest game and the regrets of every decision, from the optimal ``values`` (see the module
    docstring): layer by layer, each sweep one pass of the move kernel over the layer's positions.

    Parameters
    ----------
    rules : UrRules
        The game.
    values : numpy.ndarray
        The optimal table (the mover's chance to win in each ranked position), memory-mapped or not.
    parts : int, optional
        Threads; numba's count by default.
    progress : bool
        Show progress bars on stderr.

    Returns
    -------
    (Shortest, Regrets)

    Examples
    --------
    >>> from markov_oca.ur.layered import solve_layered
    >>> r = load_ur("ur", {"pieces": 1})
    >>> s, g = table_passes(r, solve_layered(r).values)
    >>> (s.turns, s.throws, g.decisions)
    (3, 5, 0)
    """
    t0 = time.perf_counter()
    parts = int(parts or numba.get_num_threads())
    space = space_of(rules.pieces, rules.code)
    kargs = kernel_args(rules)
    probs = np.asarray(rules.throw_probabilities, np.float64)
    vals = np.asarray(values, np.float64)
    throws_left = np.full(space.size, _INF, np.int16)
    turns_left = np.full(space.size, _INF, np.int16)
    edges = np.asarray(HIST_EDGES, np.float64)
    clear = np.asarray(CLEAR, np.float64)
    fine = np.zeros((parts, 2, _FINE), np.int64)
    coarse = np.zeros((parts, 2, len(HIST_EDGES) - 1), np.int64)
    counts = np.zeros((parts, len(CLEAR)), np.int64)
    sums = np.zeros((parts, _SUMS))
    sweeps = 0
    todo = layers(rules)
    with progress_bar(progress) as bar:
        task = bar.add_task(f"{rules.name}, {rules.pieces} pieces: the shortest game and the regrets",
                            total=len(todo))
        for pair in todo:
            members, _ = layer_members(space, pair, "progress")
            first = True
            while True:
                changed = 0
                for lo in range(0, members.size, CHUNK):
                    idx = members[lo:lo + CHUNK]
                    succ, _frm, events, n_moves, _over, _win = moves_kernel(space.tables, idx, *kargs)
                    changed += _shortest_chunk(idx, succ, events, n_moves, probs, throws_left, turns_left, parts)
                    if first:
                        _regret_chunk(succ, events, n_moves, probs, vals, edges, clear, fine, coarse, counts, sums)
                sweeps += 1
                first = False
                if changed == 0:
                    break
            bar.update(task, advance=1)
    start = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    shortest = Shortest(1 + int(turns_left[start]), int(throws_left[start]), sweeps, 0.0)
    del throws_left, turns_left
    f, c, tot = fine.sum(axis=0), coarse.sum(axis=0), sums.sum(axis=0)
    decisions, moves = int(tot[0]), int(tot[1])
    regrets = Regrets(
        decisions, moves, int(tot[5]),
        _distribution(f[0], c[0], moves, float(tot[2]), float(sums[:, 3].max(initial=0.0))),
        _distribution(f[1], c[1], decisions, float(tot[4]), float(sums[:, 6].max(initial=0.0))),
        {f"{x:g}": (float(counts[:, k].sum()) / decisions if decisions else 0.0) for k, x in enumerate(CLEAR)})
    shortest.seconds = time.perf_counter() - t0
    return shortest, regrets


# ----------------------------------------------------------------------------- the whole


def _values(r: UrRules, table: str | Path | None, timer: dict, progress: bool):
    """The optimal table and its Bellman residual: the file named, else the one saved for these rules, else
    solved now (up to :data:`.solve.TABLE_FIRST_PIECES` - 1 pieces)."""
    from .solve import TABLE_FIRST_PIECES
    from .table import saved_table

    found = saved_table(r, table)
    if found is not None:
        return found
    if r.pieces >= TABLE_FIRST_PIECES:
        raise RulesError(f"{r.name} with {r.pieces} pieces: the statistics need the solved table; run "
                         f"`markov-oca ur solve --pieces {r.pieces} --rules {r.name}` first (or give --table)")
    from .layered import solve_layered

    t0 = time.perf_counter()
    lay = solve_layered(r, residual=True, progress=progress)
    timer["optimal"] = time.perf_counter() - t0
    return lay.values, lay.residual


@dataclass
class _Table:
    """The optimal values as :func:`.solve.solve_ur` takes them solved, with their residual."""

    values: np.ndarray
    residual: float | None


def _kept_chances(r: UrRules, light: str, dark: str, precision: float):
    """A pair's swept sums kept beside the saved table (:func:`.table.saved_sums`) whose chances meet
    ``precision``, else None."""
    from .solve import chances_meet
    from .table import saved_sums

    return saved_sums(r, light, dark, True, lambda s: chances_meet(s, precision))


def _pair_chances(r: UrRules, light: str, dark: str, v: np.ndarray, precision: float, progress: bool,
                  keep: bool, swept: dict) -> dict:
    """Each side's chance under a pair of policies: swept layer by layer with the pair of the sides swapped
    (:func:`.layersums.layered_pairs`, kept in ``swept`` for that pair), or read back from ``swept`` or from
    beside the saved table (``keep``: the values are that table's, and what is swept is kept there); refused
    when a bound misses ``precision``."""
    from ..core.errors import SolverError
    from .layersums import layered_pairs
    from .solve import chances_meet
    from .table import save_sums

    s = swept.pop((light, dark), None)
    if s is None and keep:
        s = _kept_chances(r, light, dark, precision)
    if s is None:
        s, swapped = layered_pairs(r, light, dark, v, progress=progress)
        swept[(dark, light)] = swapped
        for (lp, dp), t in (((light, dark), s), ((dark, light), swapped)):
            if keep and chances_meet(t, precision):
                save_sums(r, lp, dp, True, t)
    if not chances_meet(s, precision):
        raise SolverError(f"{light} against {dark}: no bound under {precision:g} (relative) for a side's "
                          f"chance (swept to a change of {s.change:.1e}): ask a looser --precision")
    return {"light": s.win, "dark": 1.0 - s.win}


def ur_stats(rules: Any, *, options: dict | None = None, table: str | Path | None = None,
             values: np.ndarray | None = None, policies: tuple[str, ...] = ("random", "greedy"),
             tail: float = STATS_TAIL, progress: bool = False, precision: float = PRECISION) -> UrStats:
    """What optimal play means for an Ur rule set: length, shortest game, the cost of weaker play, regrets.

    See the module docstring for what each figure is and how it is computed.

    Parameters
    ----------
    rules : str, Path or UrRules
        A rule set's name or path, or rules loaded by :func:`~markov_oca.load`.
    options : dict, optional
        Rule options (``pieces``, ...), with a name or path only.
    table : str or Path, optional
        A table saved by ``markov-oca ur solve`` (``.npy``); by default the one saved for these rules,
        else (up to five pieces) a solve now.
    values : numpy.ndarray, optional
        The optimal table itself (instead of ``table``; its residual unknown, the optimal pair's chances are
        then swept too).
    policies : tuple of str
        The weaker policies whose loss against optimal play is measured (:data:`.policy.POLICY_CODES`).
    tail : float
        The optimal pair's length distribution is carried until this much probability is left (the expected
        turns and throws do not depend on it).
    precision : float
        The relative precision each pair evaluation's figures are certified to (as ``solve ur``'s
        ``--precision``); a pair that cannot meet it is refused.
    progress : bool
        Show progress bars on stderr.

    Returns
    -------
    UrStats

    Raises
    ------
    RulesError
        Bad rules, options, policy or table, or six pieces or more without a saved table.
    TooLargeError
        A weaker pair's sweeps (:func:`.bound.pair_sums_bytes`) would not fit in the memory available: refused
        before anything is solved.
    SolverError
        A figure whose bound misses ``precision``.

    Examples
    --------
    >>> s = ur_stats("ur", options={"pieces": 1})
    >>> (s.shortest.turns, s.shortest.throws, round(s.light_wins, 6))
    (3, 5, 0.53005)
    """
    from .policy import POLICY_CODES
    from .solve import solve_ur

    r = rules if isinstance(rules, UrRules) else load_ur(rules, options or {})
    for p in policies:
        if p not in POLICY_CODES or p == "optimal":
            raise RulesError(f"policy {p!r}: the weaker policies are "
                             f"{', '.join(k for k in POLICY_CODES if k != 'optimal')}")
    from .bound import check_pair_sums_memory

    for p in policies:  # before the hour the optimal pair can take at seven pieces
        for light_p, dark_p in ((p, "optimal"), ("optimal", p)):
            saved = values is None and table is None  # kept beside the saved table: nothing to sweep
            if not saved or _kept_chances(r, light_p, dark_p, precision) is None:
                try:
                    check_pair_sums_memory(r, light_p, dark_p, turns=False)
                except TooLargeError as exc:
                    raise TooLargeError(f"{exc}; --policies without {p} leaves it out (--policies '' measures "
                                        "optimal play alone)") from None
    timer: dict[str, float] = {}
    v, residual = (values, None) if values is not None else _values(r, table, timer, progress)
    keep = values is None and table is None and "optimal" not in timer  # the table saved for these rules
    chances: dict = {}
    swept: dict = {}  # one sweep gives a pair and its mirror (the sides swapped)
    for p in policies:  # first: at seven pieces each takes an hour, and is kept beside the saved table once swept
        t0 = time.perf_counter()
        chances[f"light {p}"] = _pair_chances(r, p, "optimal", v, precision, progress, keep, swept)
        chances[f"dark {p}"] = _pair_chances(r, "optimal", p, v, precision, progress, keep, swept)
        timer[f"{p} pairs"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    # the saved table found by solve_ur itself keeps what is swept on it beside it
    oo = solve_ur(r, "optimal", "optimal", optimal=None if keep else _Table(v, residual), tail=tail,
                  progress=progress, precision=precision)
    timer["optimal pair"] = time.perf_counter() - t0
    light = float(oo.wins["light"])
    losses = {p: {"light": light - chances[f"light {p}"]["light"],
                  "dark": (1.0 - light) - chances[f"dark {p}"]["dark"]} for p in policies}
    shortest, regrets = table_passes(r, v, progress=progress)
    timer["table passes"] = shortest.seconds
    L = oo.length
    # a quantile the push's tail leaves open (the 99th with --tail 1e-2) is None, with the turn it lies beyond
    length = {"unit": "turns", **{k: None if getattr(L, k) is None else float(getattr(L, k))
                                  for k in ("median", "p90", "p99")},
              "tail": float(L.tail_mass), "pmf": [float(x) for x in L.pmf]}
    if L.more_than:
        length["more_than"] = {k: int(n) for k, n in L.more_than.items() if k in ("median", "p90", "p99")}
    return UrStats(r.name, r.title, r.pieces, space_of(r.pieces, r.code).size, light,
                   float(oo.expected["turns"].total), float(oo.expected["throws"].total), length, shortest, chances,
                   losses, regrets, timer)
