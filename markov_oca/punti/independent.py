"""The points game as independent paths: exact, in seconds, when no balance can change a move.

In the points game the players never touch each other's pieces: a player's path
(the squares landed on, turn after turn) depends only on their own throws. The
balances couple the players only through bankruptcy, mutual aid (asked only when
a loss cannot be covered), the bank running dry, and the stake a bet needs. When
none of these can happen, every balance is a sum of contributions of the paths:

    b_j = s_j + u_j + sum over i != j of v_i,

where ``u_i`` is what player i's own landings did to their balance and ``v_i``
what they did to *each* other player's (collect from everyone: u += a (N-1),
v -= a; pay everyone: u -= a (N-1), v += a; the bank: u only). The leaders are
those with the largest ``s_j + u_j - v_j`` (the sum of all v is common to all).

The game ends at the (N-1)-th arrival. So every way the game can end is a choice
of the player e whose arrival ends it, on their own turn k, and the player r
still racing (who took k turns if seated before e, k - 1 after), every other
player having arrived before (own turn a < k, or a = k seated before e). Given
that choice the players' paths are independent, so the chance of every
outcome, each seat's final points and the length of the game are sums, over
(e, r, k), of products and convolutions of one player's distributions: the
joint law of (u, v) after k turns without arriving, and on arriving at turn k,
computed once from a chain of one piece (a few thousand states).

:func:`applies` checks the conditions on the exact set of reachable (square, u, v)
of one player: bets never taken (``--bet never``); no money effect in the bounce
zone (it could be landed on again and again); every balance stays non-negative
(``s_j + min u + (N-1) min v >= 0``: no loss is ever left uncovered, so no
mutual aid and no bankruptcy); the bank always pays in full
(``bank_0 - N max(u + (N-1) v) >= 0``). These are sums of per-player extremes,
so they bound every reachable joint state. When they fail the layered or the
whole-chain solve is used.

Error bounds (:func:`independent_bounds`). Two things part a figure from its true value:

- *rounding*: every figure is built from one player's pushed law by additions, products,
  convolutions and divisions of nonnegative numbers only, so a computed figure is its exact
  value (on the laws followed) times ``1 + theta`` with ``|theta| <= gamma_D``, ``D`` the most
  roundings on any path of the computation (Higham, *Accuracy and Stability of Numerical
  Algorithms*, lemma 3.1): ``K (1 + fan-in)`` for the push over ``K`` turns, plus the sums over
  squares, levels, turns and endings that follow (:func:`_depth` counts them generously);
- an outcome whose leaders no reachable balances allow (:func:`_impossible`) is 0 exactly;
- *truncation*: the push stops after ``K`` turns with a chance ``m`` (computed, then bounded
  above with its own rounding) that one player has not arrived. A game left out ends with some
  player's arrival on an own turn ``k > K`` while another is still racing, so two players have
  not arrived after ``K`` turns: chance at most ``C(N, 2) m^2``. A chance is off by at most
  that; the final points by that times the points in play; a seat's turns (at most ``k``, and
  ``k`` at most the earlier of the two arrivals) by ``C(N, 2) (K + 1 + G) m^2``, since one
  player's expected throws to arrival from any square are at most ``G`` (fewer than ``B`` throws
  reach the bounce zone, from which every throw arrives with chance ``1 / faces``).

Bankruptcy, mutual aid and bets are exactly 0 under the conditions :func:`applies` proves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..analysis.bounds import clip_probability
from ..analysis.chain import LengthDistribution
from ..analysis.results import certify_length, summarise_length
from ..core.errors import RulesError, SolverError
from ..linalg.certify import SLACK, U, gamma
from .model import MODE_NEVER, PuntiModel
from .results import PuntiResults, PuntiSeat, game_fields, win_tie_share
from .rules import COLLECT_BANK, COLLECT_EACH, PAY_BANK, PAY_EACH


def _effects(m: PuntiModel) -> tuple[np.ndarray, np.ndarray]:
    """(du, dv) of landing on each square, in levels, for m.players players."""
    G, N = m.rules.goal, m.players
    du = np.zeros(G + 1, np.int64)
    dv = np.zeros(G + 1, np.int64)
    for s, sq in m.rules.squares.items():
        a = sq.amount // m.unit
        if sq.code == PAY_BANK:
            du[s] = -a
        elif sq.code == COLLECT_BANK:
            du[s] = a
        elif sq.code == COLLECT_EACH:
            du[s], dv[s] = a * (N - 1), -a
        elif sq.code == PAY_EACH:
            du[s], dv[s] = -a * (N - 1), a
    return du, dv


def _target(m: PuntiModel, s: int, d: int) -> int:
    G = m.rules.goal
    t = s + d
    if t > G:
        t = G if m.rules.overshoot == "finish" else 2 * G - t
    return t


def _support(m: PuntiModel, du: np.ndarray, dv: np.ndarray) -> set[tuple[int, int, int]]:
    """Every (square, u, v) one player can reach (square G: arrived), by breadth-first search."""
    G, F = m.rules.goal, m.rules.faces
    seen = {(1, 0, 0)}
    todo = [(1, 0, 0)]
    while todo:
        s, u, v = todo.pop()
        if s == G:
            continue
        for d in range(1, F + 1):
            t = _target(m, s, d)
            nxt = (t, u + int(du[t]), v + int(dv[t]))
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def applies(m: PuntiModel, mode: int) -> tuple[bool, str]:
    """Whether the independent-paths solve is exact for this board, players and bet policy; why not."""
    r, N = m.rules, m.players
    if mode != MODE_NEVER:
        return False, "bets are taken: a bet needs the stake in hand, which couples the balances"
    du, dv = _effects(m)
    G = r.goal
    if r.overshoot == "bounce":
        for s in range(max(1, G + 1 - r.faces), G):
            if du[s] or dv[s]:
                return False, f"square {s} has a money effect in the bounce zone (it can be landed on again and again)"
    sup = _support(m, du, dv)
    u = np.array([x[1] for x in sup])
    v = np.array([x[2] for x in sup])
    starts = [b // m.unit for b in r.initial_balances(N)]
    for j, s_j in enumerate(starts):
        low = s_j + int(u.min()) + (N - 1) * int(v.min())
        if low < 0:
            return False, f"seat {j + 1} may face a loss it cannot cover (mutual aid and bankruptcy reachable)"
    if r.initial_bank(N) // m.unit - N * int((u + (N - 1) * v).max()) < 0:
        return False, "the bank may run short of a payment"
    return True, "no balance can change a move: no bets, no uncovered loss, the bank always pays"


def _player_laws(m: PuntiModel, eps: float, max_turns: int):
    """One player's law turn by turn: R[k] (not arrived after k turns) and A[k] (arrived at turn k),
    each over (u, v) levels; with the offsets of u and v."""
    G, F = m.rules.goal, m.rules.faces
    du, dv = _effects(m)
    sup = _support(m, du, dv)
    umin = min(x[1] for x in sup)
    vmin = min(x[2] for x in sup)
    U = max(x[1] for x in sup) - umin + 1
    V = max(x[2] for x in sup) - vmin + 1
    P = np.zeros((G, U, V))
    P[1, -umin, -vmin] = 1.0
    R = [P.sum(axis=0)]
    A = [np.zeros((U, V))]
    moves = [[(_target(m, s, d), int(du[_target(m, s, d)]), int(dv[_target(m, s, d)])) for d in range(1, F + 1)]
             for s in range(G)]
    k = 0
    left = float(P.sum())
    while left > eps:
        k += 1
        if k > max_turns:
            raise SolverError(f"one player's path still runs after {max_turns} turns (mass {left:.1e})")
        new = np.zeros_like(P)
        arr = np.zeros((U, V))
        for s in range(1, G):
            if not P[s].any():
                continue
            src = P[s] / F
            for t, a, b in moves[s]:
                dst = arr if t == G else new[t]
                # u + a, v + b stays inside the support's box (the support is exact).
                dst[max(a, 0):U + min(a, 0), max(b, 0):V + min(b, 0)] += src[max(-a, 0):U - max(a, 0),
                                                                             max(-b, 0):V - max(b, 0)]
        P = new
        R.append(P.sum(axis=0))
        A.append(arr)
        left = float(P.sum())
    fan_in = np.bincount([t for row in moves[1:] for t, _a, _b in row], minlength=G + 1).max()
    return np.array(R), np.array(A), umin, vmin, left, int(fan_in)


def _below(pw: np.ndarray) -> np.ndarray:
    """P(w < x) along the last axis."""
    c = np.cumsum(pw, axis=-1)
    return np.concatenate([np.zeros((*c.shape[:-1], 1)), c[..., :-1]], axis=-1)


@dataclass
class _Laws:
    """One player's laws turn by turn (not arrived R, arrived at A, arrived within CA; the arrival
    turn's law alpha), with each seat's w = s + u - v on one common axis of W values (PW, by law
    name and seat) and the u and v marginals (um, vm: (turn, U) and (turn, V))."""

    K: int  # the longest path followed, in turns
    U: int
    V: int
    umin: int
    vmin: int
    W: int  # values of w on the common axis
    starts: np.ndarray
    alpha: np.ndarray
    PW: dict[str, list[np.ndarray]]
    um: dict[str, np.ndarray]
    vm: dict[str, np.ndarray]
    left: float  # the computed chance that one player has not arrived after K turns
    fan_in: int  # the most (square, throw) pairs that land on one square


def _laws(m: PuntiModel, eps: float, max_turns: int) -> _Laws:
    N = m.players
    R, A, umin, vmin, left, fan_in = _player_laws(m, eps, max_turns)
    U, V = R.shape[1], R.shape[2]
    CA = np.cumsum(A, axis=0)  # CA[k]: arrived within k turns
    starts = np.array([b // m.unit for b in m.rules.initial_balances(N)])
    # Each seat's w = s + u - v on one common axis: the projection of a (u, v) law onto it.
    uu, vv = np.meshgrid(np.arange(U) + umin, np.arange(V) + vmin, indexing="ij")
    w_lo = int(starts.min()) + umin - (V - 1 + vmin)
    W = int(starts.max()) + (U - 1 + umin) - vmin - w_lo + 1

    def on_w(laws: np.ndarray, seat: int) -> np.ndarray:
        proj = np.zeros((U * V, W))
        proj[np.arange(U * V), (starts[seat] + uu - vv - w_lo).ravel()] = 1.0
        return laws.reshape(laws.shape[0], U * V) @ proj

    return _Laws(
        K=A.shape[0] - 1, U=U, V=V, umin=umin, vmin=vmin, W=W, starts=starts, alpha=A.sum(axis=(1, 2)),
        PW={name: [on_w(law, j) for j in range(N)] for name, law in (("A", A), ("R", R), ("CA", CA))},
        um={"A": A.sum(axis=2), "R": R.sum(axis=2), "CA": CA.sum(axis=2)},
        vm={"A": A.sum(axis=1), "R": R.sum(axis=1), "CA": CA.sum(axis=1)}, left=left, fan_in=fan_in,
    )


class _Sums:
    """What the ways to end add up: outcome by leaders' mask, final points, turns, length."""

    def __init__(self, m: PuntiModel, L: _Laws) -> None:
        N = m.players
        self.masks = m.outcome_masks()
        self.timed = N <= 3  # the outcome turn by turn (the crosscheck's by_outcome)
        self.outcome = np.zeros(2**N)
        pad = N * (L.U + L.V)  # the (u, v) box may reach past the points in play where no path goes
        self.pmf = np.zeros((N, m.levels + 1 + pad))
        self.turns = np.zeros(N)
        T = N * (L.K + 1) + 1
        self.length = np.zeros(T)
        self.by_outcome = np.zeros((T, len(self.masks))) if self.timed else None


def _add_ending(L: _Laws, acc: _Sums, N: int, e: int, r: int, k: int) -> None:
    """Add the games that end with e's arrival on their own turn k, r still racing (module docstring)."""
    others = [i for i in range(N) if i not in (e, r)]
    kr = k if r < e else k - 1
    kmax = {i: (k if i < e else k - 1) for i in others}
    pick = {e: ("A", k), r: ("R", kr)} | {i: ("CA", kmax[i]) for i in others}
    tot = {j: float(L.um[name][t].sum()) for j, (name, t) in pick.items()}
    mass = float(np.prod(list(tot.values())))
    if mass == 0.0:
        return
    pw = {j: L.PW[name][j][t] for j, (name, t) in pick.items()}
    _add_leaders(L, acc, N, e, r, k, kr, others, kmax, pw)
    # Points of seat j: s_j + u_j + sum over i != j of v_i (a convolution).
    for j in range(N):
        law = L.um[pick[j][0]][pick[j][1]]
        for i in range(N):
            if i != j:
                law = np.convolve(law, L.vm[pick[i][0]][pick[i][1]])
        lo = L.starts[j] + L.umin + (N - 1) * L.vmin
        acc.pmf[j, lo:lo + law.size] += law
    # Turns: e took k, r took kr, each other i its arrival turn a <= kmax[i].
    acc.turns[e] += k * mass
    acc.turns[r] += kr * mass
    tl = np.array([tot[e] * tot[r]])
    for i in others:
        a_law = L.alpha[: kmax[i] + 1]
        acc.turns[i] += float((np.arange(a_law.size) * a_law).sum()) * mass / tot[i]
        tl = np.convolve(tl, a_law)
    acc.length[k + kr: k + kr + tl.size] += tl


def _add_leaders(L: _Laws, acc: _Sums, N: int, e: int, r: int, k: int, kr: int, others: list[int],
                 kmax: dict[int, int], pw: dict[int, np.ndarray]) -> None:
    """The chance of each set of leaders: P(set M leads at x) = prod_{j in M} P(w_j = x) prod_{j not in M}
    P(w_j < x); turn by turn when timed."""
    lt = {j: _below(pw[j]) for j in range(N)}
    for c, mask in enumerate(acc.masks):
        if acc.timed and others:  # one other player, resolved by its arrival turn
            (i,) = others
            fixed = (pw[e] if mask >> e & 1 else lt[e]) * (pw[r] if mask >> r & 1 else lt[r])
            rows = L.PW["A"][i][1:kmax[i] + 1]
            fac = rows if mask >> i & 1 else _below(rows)
            per_turn = fac @ fixed
            acc.by_outcome[k + kr + 1:k + kr + 1 + per_turn.size, c] += per_turn
            acc.outcome[mask] += per_turn.sum()
            continue
        prod = np.ones(L.W)
        for j in range(N):
            prod *= pw[j] if mask >> j & 1 else lt[j]
        acc.outcome[mask] += prod.sum()
        if acc.timed:
            acc.by_outcome[k + kr, c] += prod.sum()


def solve_independent(m: PuntiModel, mode: int = MODE_NEVER, *, eps: float = 1e-18,
                      max_turns: int = 100_000) -> dict:
    """Every figure of the points game by independent paths (see the module docstring).

    Returns a dict: ``outcome`` by leaders' mask, ``points_pmf`` (N, levels + 1), ``turns`` per
    seat, ``length`` (a :class:`~markov_oca.chain.LengthDistribution` in turns of all seats; for
    up to three players with ``by_outcome``, the chance of each outcome on each turn, in the
    order of :meth:`PuntiModel.outcome_masks`), ``player_turns`` (the longest path followed),
    ``lost``, ``why`` (the conditions that hold) and ``timings``. Refuses (:class:`RulesError`) a board,
    player count or bet policy where :func:`applies` says no.
    """
    ok, why = applies(m, mode)
    if not ok:  # (a money effect in the bounce zone would make one player's support endless)
        raise RulesError(f"--method independent does not apply to {m.rules.name} with {m.players} players: {why}")
    t0 = time.perf_counter()
    N = m.players
    L = _laws(m, eps, max_turns)
    acc = _Sums(m, L)
    for e in range(N):
        for r in range(N):
            if r != e:
                for k in range(1, L.K + 1):
                    _add_ending(L, acc, N, e, r, k)
    levels = m.levels
    if acc.pmf[:, levels + 1:].any():
        raise SolverError("independent paths: a final balance beyond the points in play")
    lost = 1.0 - float(acc.outcome.sum())
    rel = float(gamma(_depth(m, L)))
    # the chance that one player is still racing after K turns: the computed one, its own rounding added
    one = L.left * (1.0 + 2.0 * float(gamma(L.K * (1 + L.fan_in) + m.rules.goal * L.U * L.V))) * SLACK
    # Drop the turns past the last with any mass worth keeping (the tail is reported).
    length = acc.length
    rest = np.cumsum(length[::-1])[::-1]
    keep = max(int(np.flatnonzero(rest > 1e-17)[-1]) + 1 if (rest > 1e-17).any() else 1, 1)
    dropped = float(length[keep:].sum())
    by_outcome = None if acc.by_outcome is None else acc.by_outcome[:keep]
    return {
        "outcome": acc.outcome, "points_pmf": acc.pmf[:, : levels + 1], "turns": acc.turns,
        "length": LengthDistribution(pmf=length[:keep], never_ends=0.0, tail=max(lost, 0.0) + dropped,
                                     by_outcome=by_outcome, rounding=rel),
        "rounding": rel, "unfinished": N * (N - 1) / 2 * one * one * SLACK, "impossible": _impossible(m),
        "player_turns": L.K, "player_support": (L.U, L.V), "lost": lost, "why": why,
        "timings": {"independent paths": time.perf_counter() - t0},
    }


def _impossible(m: PuntiModel) -> list[int]:
    """The sets of leaders no game can end with. A game ends with every seat but one (the racer) arrived: the
    set is possible only if, for some racer, a value of ``w = s + u - v`` is reachable by every seat in it
    (arrived or racing, on the exact support of one player) and lies above the least reachable by every
    other seat. The chance of the others is 0 exactly (the sums give 0 too)."""
    du, dv = _effects(m)
    sup = _support(m, du, dv)
    G, N = m.rules.goal, m.players
    starts = [b // m.unit for b in m.rules.initial_balances(N)]
    ws = {arrived: [{s_j + u - v for t, u, v in sup if (t == G) == arrived} for s_j in starts]
          for arrived in (True, False)}
    out = []
    for mask in m.outcome_masks():
        possible = False
        for r in range(N):
            w = [ws[j != r][j] for j in range(N)]
            low = max((min(w[j]) for j in range(N) if not mask >> j & 1), default=None)
            common = set.intersection(*(w[j] for j in range(N) if mask >> j & 1))
            possible = possible or any(low is None or x > low for x in common)
        if not possible:
            out.append(mask)
    return out


def _depth(m: PuntiModel, L: _Laws) -> int:
    """The most roundings on any path of the computation of a figure (module docstring), counted generously."""
    N, K, G, U_, V, W = m.players, L.K, m.rules.goal, L.U, L.V, L.W
    push = K * (1 + L.fan_in) + G + 2 * K + 3 * U_ * V + 2 * (U_ + V)  # the law, its sums, the projections onto w
    ending = 2 * N + 3 * W + K + N * (2 + U_ + N * V) + N * (K + 4)  # products, leaders, convolutions, turns, length
    return push + ending + N * N * K + 2**N + m.levels + 16  # the sums over the endings; the seats' figures


#: An absolute allowance for underflow: fewer than 1e16 roundings, each off by at most 2**-1074 in the
#: subnormal range, then multiplied by turns or points below 1e20.
UNDERFLOW = 1e-280


def independent_bounds(m: PuntiModel, out: dict, res: PuntiResults) -> dict:
    """The certified bounds of the figures of :func:`independent_results` in their tree (module docstring);
    the chances are moved into [0, 1] within their bounds, the length's quantiles kept where certain."""
    rel, lost = out["rounding"], out["unfinished"]
    N, G, K = m.players, m.rules.goal, out["player_turns"]
    turns_lost = lost * (K + 1 + G)  # C(N, 2) (K + 1 + G) m^2: a seat's turns in the games left out

    def rounding(x: float) -> float:
        return rel * abs(x) / (1.0 - rel) * SLACK + UNDERFLOW

    def chance(x: float) -> float:
        return (rounding(x) + lost) * SLACK

    zero = {m.outcome_name(k) for k in out["impossible"]}
    if any(res.outcomes[k] != 0.0 for k in zero):
        raise SolverError("independent paths: an outcome no reachable balances allow has a chance")
    out_b = {"outcomes": {k: 0.0 if k in zero else chance(x) for k, x in res.outcomes.items()},
             "expected": {"turns": (rounding(res.expected["turns"]) + N * turns_lost) * SLACK,
                          "throws": (rounding(res.expected["throws"]) + N * turns_lost) * SLACK, "bets": 0.0},
             "seats": [], "length": None}
    for s in res.seats:
        sb = {k: chance(getattr(s, k)) for k in ("win", "tie", "win_share")}
        sb |= {"bankrupt": 0.0, "aid": 0.0, "aid_success": 0.0, "bets": 0.0,  # exact zeros (:func:`applies`)
               "points": (rounding(s.points) + lost * res.total_points) * SLACK,
               "points_pmf": {str(k): chance(v) for k, v in sorted(s.points_pmf.items())},
               "turns": (rounding(s.turns) + turns_lost) * SLACK}
        out_b["seats"].append(sb)
        for k in ("win", "tie", "win_share"):
            setattr(s, k, clip_probability(getattr(s, k), sb[k]))
    if res.length is not None:
        certify_length(res.length, out["length"], out_b["expected"]["turns"], (0.0, 0.0), absolute=lost)
        # the tail is 1 less the outcomes' sum: their rounding, and the games left out
        res.length.bounds["tail_mass"] = (res.length.bounds["tail_mass"] + rel + lost + 4 * U) * SLACK
        out_b["length"] = res.length.bounds
    return out_b


def independent_results(m: PuntiModel, out: dict, *, bet: str, timer: dict[str, float] | None = None,
                        precision: float | None = None):
    """:class:`~markov_oca.punti.results.PuntiResults` from :func:`solve_independent`, with the certified bounds
    of :func:`independent_bounds` (checked against ``precision`` by the caller)."""
    timer = {} if timer is None else timer
    timer.update(out["timings"])
    rules, N = m.rules, m.players
    masks = m.outcome_masks()
    starts = rules.initial_balances(N)
    seats = []
    for i in range(N):
        win, tie, share = win_tie_share(masks, out["outcome"][masks], i)
        law = out["points_pmf"][i]
        pmf = {int(v) * m.unit: float(q) for v, q in enumerate(law) if q > 0}
        turns = float(out["turns"][i])
        seats.append(PuntiSeat(
            seat=i + 1, start_points=starts[i], win=win, tie=tie, win_share=share, bankrupt=0.0,
            points=float((law * np.arange(law.size)).sum()) * m.unit, points_pmf=pmf, bets=0.0, aid=0.0,
            aid_success=0.0, turns=turns,
        ))
    total_turns = float(out["turns"].sum())
    U, V = out["player_support"]
    lost = out["lost"]
    res = PuntiResults(
        **game_fields(m, bet), states=None, transitions=None,
        outcomes={m.outcome_name(k): float(out["outcome"][k]) for k in masks}, seats=seats,
        expected={"turns": total_turns, "throws": total_turns, "bets": 0.0},
        length=summarise_length(out["length"], total_turns),
        solver=[{"method": f"independent paths (one player's law over {out['player_turns']} turns, "
                           f"{U} x {V} contribution levels)", "residual": abs(lost),
                 "iterations": out["player_turns"]}],
        timings=timer, method="independent",
        notes=[f"solved as independent paths: {out['why']}; the joint chain is never built (its states are not "
               "counted)",
               f"games still running after {out['player_turns']} turns of every path: chance at most "
               f"{out['unfinished']:.1e}"],
        precision=precision,
    )
    res.bounds = independent_bounds(m, out, res)
    return res
