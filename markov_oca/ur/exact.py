"""Exact small Ur games at the position level: winning chances, throws and turns as fractions.

The policy chains (:mod:`.chain`) carry each position four times (which real side moves,
whether the turn is under way) and are densely tied, so the exact sparse solver of the
chains does not finish on two pieces. Here the unknowns are the positions themselves, seen
from the side to move (:mod:`.state`), with the throw distribution and the policies'
choices folded into each equation.

**The systems.** With every probability an integer over ``D`` (16 for the throws, times the
lcm of the numbers of moves a random choice picks among), a position ``s`` not over, a throw
``t`` (``p_t``) and a move ``m`` chosen with weight ``w`` give ``p_t w`` to one of: the
mover wins, the mover loses, the same side moves again from ``succ`` (a rosette) or the
other side moves from ``succ`` (mirrored).

* *Both sides play the same policy* (the mirror symmetry): one unknown per position. The
  chance ``W`` that the side to move wins solves ``D W = sum_again pw W[succ] + sum_other
  pw (1 - W[succ]) + sum_win pw``: the matrix ``D I - Q_again + Q_other``. The throws
  ``Y`` and turns ``Z`` still to come (the turn under way counted once) solve
  ``(D I - Q_again - Q_other) Y = D`` and ``... Z = D - sum_again pw`` (a rosette's throw
  continues the turn). Two matrices of one pattern, on the positions the start reaches.
* *Different policies*: one unknown per position and side to move (``D I - Q``, ``Q >= 0``):
  light's and dark's chances to win, throws and turns in one system of twice the size.

**The solver** (:func:`solve_exact`): numeric-symbolic lifting (Wan's algorithm) on float
LUs. The equations' strongly connected components (only captures, and a pass answered by a
pass, lead back) taken in dependency order make the matrix block lower triangular
(:func:`scc_blocks`: 1,278 components on two pieces, the largest of 1,384); merged into
blocks of about 1,000 rows, each has its own SuperLU factorisation (fill 446K in all against
4.5M for one LU of the whole). With ``r_0 = B`` each step solves ``A x = r_i`` in floats
block after block, rounds ``x_i = round(2^k x)`` and takes the exact residual
``r_{i+1} = 2^k r_i - A x_i`` (int64; it stays small because the float solve is good to more
than ``k`` bits: ``k = 40`` here, against 26 bits a step for p-adic lifting). After ``K``
steps ``X = sum x_i 2^(k (K-1-i))`` is ``2^(kK) A^-1 B`` to within ``|A^-1| |r_K|``. The
fractions of the start and of a random combination of all rows are recovered from their
``X`` by a 2 x 2 lattice reduction (FLINT); their denominators' lcm, times ``SMOOTH^8``,
is ``d``. Then ``z = round(d X / 2^(kK))`` for every row (the leading digits of ``X``
suffice, so only as many digit rows are kept as ``d`` can need: ``d`` divides ``det A``,
whose size the float LU gives) and ``A z = d B`` is checked over the integers, row by row.
That identity *proves* ``z / d`` is the solution once ``A`` is nonsingular, which
:func:`weakly_chained_dominant` proves (every row weakly diagonally dominant, and each
reaches a strictly dominant one: the game can end from every position). Nothing rests on
the floats but the speed: a poor float step fails the contraction check and the lifting
restarts with 8 bits fewer; a wrong ``d`` fails the final check.

The reach: one piece (217 positions) in well under a second; two pieces (12,786 positions
reached, both optimal) in about 20 s of CPU, random against random about 25 s, light random
against dark optimal (25,722 unknowns, 24,722-digit denominators) about 2.2 min; three pieces
(264,304 positions) is refused with its estimate (:func:`estimate`: the kept digits alone
would need over a hundred GB).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

import flint
import numpy as np

from ..core.errors import SolverError, TooLargeError
from .exact_system import PositionSystem, mirror_systems, policy_numerators, side_system
from .kernel import moves
from .lifting import SMOOTH, BlockLU, ExactSolution, scc_blocks, solve_exact, weakly_chained_dominant
from .rules import UrRules
from .state import UrSpace, space_of

__all__ = ["EXACT_PIECES", "SMOOTH", "BlockLU", "ExactSolution", "PositionSystem", "estimate", "mirror_systems",
           "policy_numerators", "scc_blocks", "side_system", "solve_exact", "solve_ur_exact",
           "weakly_chained_dominant"]

#: Pieces a side up to which ``solve ur --exact`` runs (above: refused with the estimate).
EXACT_PIECES = 2


# ----------------------------------------------------------------------------- the game


def estimate(pieces: int) -> tuple[float, float]:
    """(seconds, bytes) of the exact same-policy solve for ``pieces`` a side, extrapolated from one and two pieces.

    Measured on two pieces (12,786 unknowns): 3.0 bits of denominator an unknown, 40 bits a
    step and twice the denominator's bits to lift, block fill 446K (3,395 on one piece: fill
    ~ n^1.2), about 3 ns a fill entry and column, and the leading digit rows of every row
    kept (``n log2 D / 40`` rows of 8 bytes a row and column).
    """
    n = UrSpace(pieces).size
    bits = 3.05 * n
    steps = 2 * bits / 40 * 1.07
    fill = 446e3 * (n / 12_786) ** 1.2
    seconds = 2 * steps * fill * 3e-9 * 2  # the win system and the totals (two columns)
    seconds += 2 * n * 2e-4 * (bits / 38_800) ** 1.6  # the products of the final check
    memory = (n * 4.5 / 40) * n * 8 * 2 + fill * 24
    return seconds, memory


def check_exact_size(rules: UrRules) -> None:
    """Refuse up front an exact solve above :data:`EXACT_PIECES` pieces, with its estimate."""
    if rules.pieces <= EXACT_PIECES:
        return
    from ..core.memory import gib

    secs, mem = estimate(rules.pieces)
    raise TooLargeError(f"{rules.name} with {rules.pieces} pieces: the exact position-level solve of "
                        f"{space_of(rules.pieces, rules.code).size:,} positions would take about "
                        f"{secs / 3600:,.1f} hours and "
                        f"{gib(int(mem))} (extrapolated from one and two pieces); exact answers reach "
                        f"{EXACT_PIECES} pieces a side (drop --exact for floats)")


def solve_ur_exact(rules: UrRules, light: str | Callable = "optimal", dark: str | Callable = "optimal", *,
                   values: np.ndarray | None = None, tail: float = 1e-10, progress: bool = False,
                   residual: float | None = None):
    """Each side's chance to win, expected throws and turns as exact fractions (:class:`~markov_oca.results.UrResults`).

    The length distribution stays in floats (its mean given the end is the exact turns).

    Examples
    --------
    >>> from markov_oca.ur.rules import load_ur
    >>> r = solve_ur_exact(load_ur("ur", {"pieces": 1}), "random", "random")
    >>> r.wins["light"] + r.wins["dark"] == 1, r.wins["light"].denominator > 1
    (True, True)
    """
    from ..analysis.results import Expectation, certify_length, summarise_length
    from ..core.progress import progress_bar
    from .results import UrResults

    check_exact_size(rules)
    timer: dict[str, float] = {}
    space = space_of(rules.pieces, rules.code)
    if values is None and "optimal" in (light, dark):
        from .optimal import solve_optimal

        t0 = time.perf_counter()
        opt = solve_optimal(rules)
        values, residual = opt.values, opt.residual
        timer["optimal"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    mv = moves(space, None, rules)
    same = (isinstance(light, str) and light == dark) or light is dark
    if same:
        systems = mirror_systems(rules, light, values, mv, space)
    else:
        systems = (side_system(rules, light, dark, values, mv, space),)
    timer["build"] = time.perf_counter() - t0
    solved = {}
    solver = []
    with progress_bar(progress) as bar:
        # two columns a lifting: every row's leading digits are kept, so memory grows with the columns
        groups = [(sys_, list(range(i, min(i + 2, len(sys_.columns))))) for sys_ in systems
                  for i in range(0, len(sys_.columns), 2)]
        for sys_, cols in groups:
            names = [sys_.columns[c] for c in cols]
            task = bar.add_task(f"exact {', '.join(names)} ({sys_.n:,} unknowns)", total=None)
            t0 = time.perf_counter()
            sol = solve_exact(sys_.A, sys_.B[:, cols], sys_.start, keep_all=False, bar=bar, task=task)
            timer["exact " + ", ".join(names)] = time.perf_counter() - t0
            for c, name in enumerate(names):
                solved[name] = sol.fraction(c, sys_.start)
            solver.append({"method": f"exact numeric lifting ({sol.bits} bits a step, verified A z = d B)",
                           "residual": 0.0, "iterations": sol.steps, "unknowns": sys_.n, "fill": sol.fill,
                           "denominator_digits": _digits(sol.d), "columns": names})
    if same:
        wins = {"light": solved["win"], "dark": 1 - solved["win"]}
    else:
        wins = {"light": solved["light wins"], "dark": solved["dark wins"]}
        if wins["light"] + wins["dark"] != 1:
            raise SolverError(f"the exact winning chances sum to {wins['light'] + wins['dark']}, not 1")
    t0 = time.perf_counter()
    dist, lost = _length(rules, light, dark, values, tail)
    timer["length"] = time.perf_counter() - t0
    start = space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)
    n_unknowns = sum(s.n for s in systems) if not same else systems[0].n
    exact_bounds = {"wins": {"light": 0.0, "dark": 0.0},
                    "expected": {k: {"total": 0.0, "given_end": 0.0} for k in ("turns", "throws")},
                    "length": None, "optimal_value": None}  # the fractions are exact
    res = UrResults(
        bounds=exact_bounds,
        rules=rules.name, title=rules.title, seed=rules.seed, source=rules.source, pieces=rules.pieces,
        light=light if isinstance(light, str) else getattr(light, "__name__", "callable"),
        dark=dark if isinstance(dark, str) else getattr(dark, "__name__", "callable"),
        options=dict(rules.options), states=n_unknowns, transitions=int(systems[0].A.nnz - systems[0].n),
        wins=wins,
        expected={k: Expectation(solved[k], solved[k]) for k in ("turns", "throws")},
        length=summarise_length(dist, solved["turns"]),
        optimal_value=float(values[start]) if values is not None else None,
        optimal_residual=residual,
        positions=space.size,
        solver=solver,
        timings=timer,
    )
    # the length distribution in floats: bounded by its pushes' rounding (and the mass the push let go); the
    # game ends with probability 1 (the exact chances sum to 1)
    certify_length(res.length, dist, 0.0, (0.0, 0.0), absolute=lost)
    exact_bounds["length"] = res.length.bounds
    if light == dark == "optimal" and values is not None:  # the table's value against the pair's exact chance
        exact_bounds["optimal_value"] = _distance(values[start], wins["light"])
    return res


def _length(rules, light, dark, values, tail):
    """(the length distribution in floats, the mass let go on the way): the sweeps' forward push (string
    policies, its masses' rounding :func:`.sweepbounds.push_losses`) or the chain's (nothing let go)."""
    if isinstance(light, str) and isinstance(dark, str):
        from .push import push_lengths
        from .sweepbounds import push_losses

        push = push_lengths(rules, light, dark, values, tail=tail)
        push.dist.rounding, lost = push_losses(push, rules)
        return push.dist, lost
    from .chain import ur_chain

    return ur_chain(rules, light, dark, values).length_distribution(tail=tail), 0.0


def _distance(value: float, exact: Fraction) -> float:
    """An upper bound on ``|value - exact|`` (the exact distance, rounded up)."""
    d = abs(Fraction(float(value)) - exact)
    return float(d) * (1 + 2 ** -52) + 2.0 ** -1074 if d else 0.0


def _digits(x: int) -> int:
    """Decimal digits of ``abs(x)`` (no str(): Python refuses over 4,300 digits by default)."""
    return len(str(flint.fmpz(abs(x))))
