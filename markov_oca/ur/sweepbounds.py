"""Certified error bounds for the figures of Ur's sweeps: the layered policy evaluation and the forward push.

**The evaluation** (:mod:`.evaluate`) solves ``x = c + A x`` for each of (win, throws, turns), ``|A|`` the
chain of throws ``P`` (sub-stochastic; the win's with some signs flipped). A computed ``x'`` with
``|x' - (c + A x')| <= r`` everywhere is off by ``(I - |A|)^-1 r <= r y``, ``y = (I - P)^-1 1`` the
expected throws to come; and ``y <= ŷ / (1 - r_y)`` state by state for the computed throws ``ŷ`` with
residual ``r_y`` (:mod:`.bound`). The residuals are computed in floating point: a state's update is a sum
of at most ``nt (k + 3) + 3`` rounded terms (``nt`` throws, ``k`` moves a throw) whose magnitudes add up to
at most the largest value the state reads (the probabilities sum to 1), so the true residual is at most the
computed one plus ``gamma`` of that count times that magnitude (:func:`true_residual`).

**The push** (:mod:`.push`) moves nonnegative masses: a mass after one throw is a sum of at most ``F``
terms ``m p_t / k`` (``F`` the fan-in: a position is entered from at most ``2 nt (pieces + 1) + nt``
(source, throw, move) triples: the moved piece's landing square, the throw, a capture or not; and the
passes), so it is off by ``gamma_(F + 6)`` relative to the exact push of the masses before it. A turn is at
most ``W`` throws (each extra throw lands a piece on a rosette, or captures, and a piece moves only forward
within its side's turn), so after ``T`` turns every mass is off by at most ``gamma_(T W (F + 6))``
relative (:func:`push_rounding`). The push's sums (the mass in play at each turn's start: the turns; the
mass visited: the throws) are lower bounds of the exact expectations; what it leaves (the mass in play
at the end and the mass let go, ``tail``) has at most ``B`` throws and turns to come a unit (the
:class:`~.bound.ThrowsBound`), so the exact value lies in ``[sum, sum + tail B]`` (:func:`push_figures`).
Each side's chance is bounded the same way: what is left may go either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..linalg.certify import SLACK, U, gamma

INF = float("inf")


def update_roundings(throws: int, moves: int) -> int:
    """Roundings in one state's update of the evaluation or of the throws' sweep: a generous count of
    ``nt (k + 3) + 3`` terms for ``throws`` throws and at most ``moves`` moves a throw."""
    return throws * (moves + 3) + 3


def sum_roundings(throws: int, moves: int) -> int:
    """Roundings that bound one state's update of the sweeps on the push's moves (:func:`.bound.sums_on_tables`):
    a sum of at most ``throws * moves`` terms and one constant, each term ``fl(fl(p / k) * v)`` with ``v`` a
    value read, ``1 - v`` or ``v - 1`` (at most three roundings of its own), summed in order: the computed
    update is within ``gamma(throws * moves + 4)`` times the sum of the terms' magnitudes of the exact one."""
    return throws * moves + 4


def moves_a_throw(rules, random: bool) -> int:
    """The most moves a throw weighs: every piece's (one more for the hand) with ``random``, else one."""
    return rules.pieces + 1 if random else 1


def true_residual(computed: float, magnitude: float, roundings: int) -> float:
    """An upper bound on the exact ``|x - F(x)|`` from the computed one: plus ``gamma`` of the update's
    roundings times the magnitude of its terms."""
    if not math.isfinite(computed) or not math.isfinite(magnitude):
        return INF
    return float((computed * (1 + 2 * U) + float(gamma(roundings)) * magnitude) * SLACK)


def throws_ceiling(largest: float, residual: float, throws: int, moves: int) -> float:
    """A certified upper bound on the throws to come from any position: ``ŷ / (1 - r)`` with the true
    residual ``r`` of the computed throws ``ŷ`` (their largest ``largest``, computed residual ``residual``;
    ``throws`` throws of at most ``moves`` moves each)."""
    r = true_residual(residual, 1.0 + largest, update_roundings(throws, moves))
    return largest / (1.0 - r) * SLACK if r < 1.0 else INF


def evaluation_bounds(ev, index: int, side: int = 0) -> tuple[float, float, float]:
    """Certified bounds on :meth:`.evaluate.PolicyEvaluation.at`'s (win, throws, turns) at a state: each
    true residual times the bound on the throws to come from it."""
    roundings = update_roundings(len(ev.rules.throws), ev.moves)
    mags = (max(1.0, float(np.abs(ev.win).max(initial=0.0))) + 1.0,
            1.0 + float(ev.throws.max(initial=0.0)),
            2.0 + float(np.abs(ev.turns).max(initial=0.0)))
    rw, ry, rz = (true_residual(r, m, roundings) for r, m in zip(ev.residual, mags, strict=True))
    return _times_throws(ev.at(index, side)[1], ry, (rw, ry, rz))


def _times_throws(y: float, r_throws: float, residuals: tuple[float, ...]) -> tuple[float, ...]:
    """Each true residual times the throws to come from a state whose computed throws are ``y`` (at most
    ``y / (1 - r_throws)``, ``r_throws`` the throws' own true residual)."""
    ymax = y / (1.0 - r_throws) * SLACK if r_throws < 1.0 else INF
    return tuple(float(r * ymax * SLACK) for r in residuals)


def turn_throws(rules) -> int:
    """The most throws one turn can have: one, and one more for each rosette a piece lands on (each piece
    each rosette once: it only moves forward while its side throws) and each capture that throws again."""
    extra = len(rules.rosettes) if rules.rosette_again else 0
    extra += 1 if rules.again_after_capture else 0
    return 1 + rules.pieces * extra


def fan_in(rules) -> int:
    """The most (source, throw, move) triples that enter one position: the moved piece's landing square
    (one of the mover's pieces or off the board), the throw, a capture or not; and a pass for each throw."""
    nt = len(rules.throws)
    return 2 * nt * (rules.pieces + 1) + nt


def push_rounding(rules, turns: int) -> float:
    """The relative rounding of every mass of the push after ``turns`` turns (module docstring).

    Examples
    --------
    >>> from markov_oca.ur.rules import load_ur
    >>> four = load_ur("ur", {"pieces": 4})  # 13 throws a turn at most, 55 branches into a position
    >>> turn_throws(four), fan_in(four), f"{push_rounding(four, 238):.1e}"
    (13, 55, '2.1e-11')
    """
    return float(gamma(turns * turn_throws(rules) * (fan_in(rules) + 6) / 2.0 + 8))


def push_losses(push, rules) -> tuple[float, float]:
    """(the relative rounding of every mass of ``push``, the mass it let go raised by that rounding)."""
    rel = push_rounding(rules, int(push.dist.pmf.size - 1))
    return rel, float(push.dropped) * (1 + rel) * SLACK


@dataclass
class PushFigures:
    """The push's figures and their certified bounds (each ``(value, bound)``)."""

    light: tuple[float, float]
    dark: tuple[float, float]
    turns: tuple[float, float]
    throws: tuple[float, float]
    rounding: float  # of every pushed mass, relative
    lost: float  # the mass let go on the way (its rounding included): what the pmf misses at most
    tail: float  # what the push left (in play and let go), an upper bound


def push_figures(push, ceiling: float, rules) -> PushFigures:
    """Each side's chance, the expected turns and throws from ``push`` (:class:`~.push.PushResult`), bounded
    with ``ceiling`` (a certified bound on the throws to come from any position)."""
    dist = push.dist
    turns_pushed = int(dist.pmf.size - 1)
    rel, lost = push_losses(push, rules)
    small = float(gamma(turns_pushed + 8))  # the Python sums over the turns, and a mass's last three roundings
    tail = (float(dist.tail) * (1 + rel) + 2 * U) * SLACK
    room = tail * ceiling * SLACK  # the throws (and turns) the mass left has to come, at most

    def total(computed: float, extrapolated: float) -> tuple[float, float]:
        base = computed - extrapolated  # the sum over the turns pushed
        ext = min(max(extrapolated, 0.0), room) if math.isfinite(extrapolated) else room / 2
        own = (rel + small) * abs(base) * SLACK
        return base + ext, float((max(ext, room - ext) + own + 4 * U * abs(base + ext)) * SLACK)

    turns = total(push.turns, push.tail_turns)
    throws = total(push.throws, push.tail_throws)
    last = dist.by_outcome[-20:].sum(axis=0)
    share = float(last[0] / last.sum()) if last.sum() > 0 else 0.5
    # each side's chance from its own mass (its rounding relative to itself, not to the other side's: a side that
    # rarely wins keeps a bound relative to its own chance), the tail shared as the last turns share it
    split = max(share, 1.0 - share) * tail
    won, won_dark = float(push.wins[0]), float(push.wins[1])
    light = won + float(dist.tail) * share
    dark = won_dark + float(dist.tail) * (1.0 - share)
    b = float((split + (rel + small) * won + 4 * U) * SLACK)
    b_dark = float((split + (rel + small) * won_dark + 4 * U) * SLACK)
    return PushFigures(light=(light, b), dark=(dark, b_dark), turns=turns, throws=throws, rounding=rel,
                       lost=lost, tail=tail)


def optimal_bound(residual: float | None, steps: float, throws: int) -> float | None:
    """How far the table's value ``V`` of the start is from the chance ``V_pi`` of the pair ``pi`` that plays
    its moves: ``V - V_pi = N_pi (T_pi V - V)``, and ``|T_pi V - V|`` is at most the Bellman residual (raised
    by the rounding of its sums over ``throws`` throws) plus the rounding of the moves' scores that chose
    ``pi`` (``4 u``), so it is that times the expected throws from the start (at most ``steps``). None
    without a residual."""
    if residual is None or not math.isfinite(steps):
        return None
    r = residual + float(gamma(update_roundings(throws, 1))) + 4 * U
    return float(r * steps * SLACK + 4 * U)


def sums_bounds(sums, throws: int) -> None:
    """Fill in the certified bounds of a :class:`.bound.TableSums`: each true residual (the computed one
    raised by the rounding of its update, :func:`true_residual` with :func:`sum_roundings`) times the throws to
    come from the start, at most ``ŷ / (1 - r_y)``; and the ceiling on the throws to come from any position.
    The chance's equation ``w = c + A w`` has ``|A|`` the chain of throws, so its error is bounded the same way;
    a side's chance at every place (``sums.side``) by :func:`side_chance_bound`."""
    roundings = sum_roundings(throws, sums.moves)
    ry = true_residual(sums.residual[0], 1.0 + sums.largest, roundings)
    # the turns read ``z - 1`` after a rosette: at most the throws to come plus two in magnitude
    rz = true_residual(sums.residual[1], 2.0 + sums.largest, roundings)
    # a chance's terms are ``p w``, ``p (1 - w)`` or ``p``, the shares of one state's throws summing to 1: their
    # magnitudes add up to at most the largest of 1, |w| and |1 - w| over the values computed
    lo, hi = sums.win_range
    rw = true_residual(sums.residual[2], max(1.0, abs(lo), abs(hi), abs(1.0 - lo), abs(1.0 - hi)), roundings)
    sums.throws_bound, sums.turns_bound, win_bound = _times_throws(sums.throws, ry, (ry, rz, rw))
    if getattr(sums, "side", -1) >= 0:
        win_bound = side_chance_bound(sums, ry, roundings)
    sums.win_bound = win_bound if math.isfinite(sums.win) else INF
    sums.ceiling = throws_ceiling(sums.largest, sums.residual[0], throws, sums.moves)


def side_chance_bound(sums, ry: float, roundings: int) -> float:
    """The error bound of one side's chance ``x`` swept at every place (``x = P x + b``, every term nonnegative).

    A state's update sums nonnegative terms whose total is ``F(x')``, the exact update of the computed ``x'``,
    so its rounding is at most ``gamma_m F(x')`` and the true residual ``r = |F(x') - x'|`` is at most
    ``(c (1 + 4u) + gamma_m) / (1 - gamma_m) x'`` where the computed residual relative to ``x'`` is ``c``
    (``x' > TINY``), else ``(a (1 + 2u) + gamma_m TINY) / (1 - gamma_m)`` with ``a`` the computed absolute one
    (plus the underflow's absolute ``2^-1074`` a rounding): ``r <= A + B x'``. The error at the start is at most
    ``(I - P)^-1 r = A Y + B G``: ``Y`` the throws to come (at most ``ŷ / (1 - r_y)``) and ``G = (I - P)^-1 x'``,
    the chance summed over the throws to come, at most the swept ``g'`` plus ``g``'s true residual times
    ``Y``. ``G`` is about the chance times the throws of the games that side wins, so the bound is relative
    to the chance, not to 1."""
    from .bound import TINY

    gm = float(gamma(roundings))
    if not gm < 1.0 or sums.win_range[0] < 0.0:  # the argument takes every chance computed nonnegative
        return INF
    a = (sums.residual[2] * (1 + 2 * U) + gm * TINY + roundings * 2.0**-1074) / (1.0 - gm)
    b = (sums.chance_relative * (1 + 4 * U) + gm) / (1.0 - gm)
    ymax = sums.throws / (1.0 - ry) * SLACK if ry < 1.0 else INF
    g0, rg, glarge = sums.chance_sum
    # g's update sums ``p g`` and ``x'`` (at most 1): magnitude at most its largest (in magnitude) plus one; one more
    # rounding
    rg_true = true_residual(rg, glarge + 1.0, roundings + 1)
    gmax = (g0 + rg_true * ymax) * SLACK
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(gmax)):
        return INF
    # light's chance is 1 - x when x is dark's: one more rounding
    return float((a * ymax + b * gmax + (4 * U if sums.side == 1 else 0.0)) * SLACK)
