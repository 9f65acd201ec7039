"""What a points-game chain says: wins and ties, bankruptcy, final points, length.

The chain's own analyses (:class:`~markov_oca.chain.Chain`) give the outcome
chances (one outcome per set of leaders: a seat alone, or a tie), the expected
totals (turns, throws, bets, bankruptcies, mutual aid, final points) and the
length distribution. The *distribution* of each seat's final points needs the
chance of every way the game can end, so it comes from the expected number of
visits to each state (one forward solve of ``x = e_init + Q^T x``, Gauss-Seidel
in the order of the race), weighted by the branches into the end.

Ties are counted as :mod:`markov_oca.punti.results` says.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..analysis.bounds import PRECISION, VisitBounds, clip_probability, meets, rounded
from ..analysis.results import certify_length, length_summary
from ..core.errors import SolverError
from ..engine.certified import into, relative_bound, visit_bounds
from ..linalg.certify import SLACK, gamma
from .model import ACT_BET, ACT_THROW, PuntiChain
from .results import PuntiResults, PuntiSeat, game_fields, win_tie_share

# ----------------------------------------------------------------------------- analysis


def analyse(pc: PuntiChain, *, bet: str, tail: float = 1e-10, timer: dict[str, float] | None = None,
            policy: dict[str, Any] | None = None, precision: float = PRECISION) -> PuntiResults:
    """Every figure of the points game on one chain (see the module docstring), each with a certified
    error bound (:func:`_bounds`) within the relative ``precision``, or one line refuses."""
    timer = {} if timer is None else timer
    m, chain = pc.model, pc.chain
    n = pc.n_states

    # One forward solve gives every figure: expected totals are visits times step rewards, and the
    # chance of each way to end is visits times the branch into it.
    t1 = time.perf_counter()
    visits, report = chain.visits_by_sweeps()
    x = visits[:n]
    timer["solve"] = time.perf_counter() - t1

    t0 = time.perf_counter()
    exp, w, out_k, finals, events = _rewards(pc, x)
    mass = np.bincount(out_k, weights=w, minlength=len(pc.masks))
    outcome_p = {name: float(mass[k]) for k, name in enumerate(chain.outcomes)}
    timer["rewards"] = time.perf_counter() - t0
    seats = _seats(pc, exp, mass, w, finals)

    t3 = time.perf_counter()
    vb, fwd = visit_bounds(chain, visits)
    bounds = _bounds(pc, vb, exp, mass, w, finals, seats, precision, events)
    timer["bounds"] = time.perf_counter() - t3
    t2 = time.perf_counter()
    length = length_summary(chain, exp["turns"], tail)
    if not chain.structure.deadlock.any():
        certify_length(length, chain.length_distribution(tail=tail), bounds["expected"]["turns"], (0.0, 0.0))
        bounds["length"] = length.bounds
    timer["length"] = time.perf_counter() - t2
    res = PuntiResults(
        **game_fields(m, bet), states=chain.n, transitions=chain.n_transitions,
        outcomes=outcome_p, seats=seats,
        expected={k: exp[k] for k in ("turns", "throws", "bets")},
        length=length, policy=policy,
        solver=[{"method": report.method, "residual": report.residual, "iterations": report.iterations,
                 "residual_bound": vb.mass}, fwd.report],
        timings=timer, bounds=bounds, precision=precision,
    )
    failed = missed(res, bounds, precision)
    if failed and all(p.split("/")[-1] in ("bankrupt", "aid", "aid_success") for p in failed):
        _exact_events(pc, res, failed)
        failed = missed(res, bounds, precision)
    if failed:
        raise SolverError(f"no bound under {precision:g} (relative) for {', '.join(failed[:3])} (true residual up to "
                          f"{vb.mass:.2g}, ||N||_inf <= {fwd.norm:.3g}): ask a looser --precision")
    return res


def _bounds(pc: PuntiChain, vb: VisitBounds, exp: dict[str, float], mass: np.ndarray, w: np.ndarray,
            finals: np.ndarray, seats: list[PuntiSeat], precision: float,
            events: dict[str, np.ndarray]) -> dict[str, Any]:
    """The certified bounds of the chain's figures, in their tree (``PuntiResults.to_dict``).

    A chance (an outcome, a win, a tie, a share, each entry of a seat's final points; a bankruptcy and
    mutual aid, which happen once at most) is a sum over the visits of the chance of a step into it,
    ``v . b`` with ``N b`` in [0, 1]: off by the residual's 1-norm (``vb.mass``), and by the rounding
    of its sum of nonnegative terms. An expected total's step reward is at most 1 an event (turns,
    throws, bets), or the largest final points: off by that times ``vb.steps``, and by the rounding of
    the step rewards and of the sums over the states. The entries of a seat's final points distribution
    carry their bound but are not held to the relative precision (a tail entry of 1e-12 cannot be).
    """
    chain = pc.chain
    ends = float(gamma(w.size + 3))

    # A figure summed to 0 exactly is 0: its terms are visits times nonnegative rewards, and the sweeps from
    # the start leave a positive visit count at every state they reach, so no reached state earns it.
    def chance(x: float) -> float:
        return 0.0 if x == 0.0 else float((vb.mass + ends * abs(x)) * SLACK)

    sums = float(gamma(chain.n + chain.next.shape[1] + 4))
    top = float(np.maximum(finals, 0).max(initial=0)) if finals.size else 0.0

    def total(x: float, big: float = 1.0) -> float:
        return 0.0 if x == 0.0 else float((vb.steps * big + sums * abs(x)) * SLACK)

    # outcomes: a small one gets a bound relative to it (a forward column of its chance from every state)
    ob = np.array([chance(float(x)) for x in mass])
    for k, state in enumerate(chain.outcomes.values()):
        if ob[k] > precision * mass[k]:
            target = np.zeros(chain.n, bool)
            target[state] = True
            ob[k] = min(ob[k], relative_bound(chain, vb, into(chain, target), ends * float(mass[k])))
    out: dict[str, Any] = {"outcomes": {name: float(ob[k]) for k, name in enumerate(chain.outcomes)},
                           "expected": {k: total(exp[k]) for k in ("turns", "throws", "bets")}, "seats": [],
                           "length": None}
    for i, s in enumerate(seats):
        # a win, a tie and a share are sums of outcomes with coefficients in [0, 1]: so are their bounds
        win_b, tie_b, share_b = win_tie_share(pc.masks, ob, i)
        out["seats"].append({
            "win": win_b * SLACK, "tie": tie_b * SLACK, "win_share": share_b * SLACK,
            "bankrupt": chance(s.bankrupt), "points": total(s.points, top),
            "points_pmf": {str(k): chance(v) for k, v in sorted(s.points_pmf.items())},
            "bets": total(s.bets), "aid": chance(s.aid), "aid_success": chance(s.aid_success),
            "turns": total(exp[f"turns@{i}"])})
        for k in ("bankrupt", "aid", "aid_success"):  # a small chance gets a bound relative to it
            x, b = getattr(s, k), out["seats"][-1][k]
            if b > precision * abs(x):
                step = events[f"{'aid_ok' if k == 'aid_success' else k}@{i}"]
                out["seats"][-1][k] = min(b, relative_bound(chain, vb, step, sums * abs(x), once=False))
        for k in ("win", "tie", "win_share", "bankrupt", "aid", "aid_success"):
            setattr(s, k, clip_probability(getattr(s, k), out["seats"][-1][k]))
    return out


def missed(res: PuntiResults, bounds: dict[str, Any], precision: float) -> list[str]:
    """The figures whose bound misses the precision (a final points distribution's entries are not held to it)."""
    return [path for path, x, b in _leaves(res.to_dict(with_pmf=False), bounds)
            if not (b == 0.0 or meets(x, b, precision) or "points_pmf" in path)]


def _exact_events(pc: PuntiChain, res: PuntiResults, failed: list[str]) -> None:
    """The sound route for a seat's bankruptcy or aid too rare for the float bound: its chance solved exactly
    (:class:`~markov_oca.analysis.exact.ExactChain`, on chains it reaches), rounded, the rounding its bound."""
    from fractions import Fraction

    from ..analysis.exact import EXACT_LIMIT, ExactChain

    chain, N = pc.chain, pc.model.players
    if int(chain.structure.transient.sum()) > EXACT_LIMIT:
        return
    aidm = np.zeros(chain.next.shape, np.int64)
    aidm[:pc.n_states] = pc.model.details(pc, np.arange(pc.n_states))[1]
    broke = np.zeros(chain.next.shape, np.int64)
    broke[:pc.n_states] = pc.broke[:pc.n_states]
    values = {}
    for path in failed:
        i, k = int(path.split("/")[1]), path.split("/")[2]
        bits = {"bankrupt": (broke >> i) & 1, "aid": (aidm >> i) & 1, "aid_success": (aidm >> (N + i)) & 1}[k]
        values[path] = np.where(chain.next >= 0, bits, 0)
    exact = ExactChain(chain).expected(values, given_end=False)
    for path, (x, _) in exact.items():
        i, k = int(path.split("/")[1]), path.split("/")[2]
        value, res.bounds["seats"][i][k] = rounded(Fraction(x))
        setattr(res.seats[i], k, value)
    res.notes.append(f"solved exactly (float bounds above the precision): {', '.join(failed[:3])}")


def _leaves(d: dict, bounds: dict) -> list[tuple[str, float, float]]:
    """(path, figure, bound) for every float figure that has a bound."""
    out = []

    def walk(x, b, path):
        if isinstance(b, dict):
            for k, v in b.items():
                walk(x[int(k)] if isinstance(x, list) else x[k], v, f"{path}/{k}")
        elif isinstance(b, list):
            for k, v in enumerate(b):
                walk(x[k], v, f"{path}/{k}")
        elif b is not None and isinstance(x, float):
            out.append((path.lstrip("/"), x, b))

    walk(d, {k: v for k, v in bounds.items() if k != "length"}, "")
    return out


def _rewards(pc: PuntiChain, x: np.ndarray) -> tuple[dict[str, float], np.ndarray, np.ndarray, np.ndarray,
                                                      dict[str, np.ndarray]]:
    """The expected totals (game and per seat ``name@seat``) from the visits ``x``, every branch into
    the end: its mass, its outcome and the final balances (points); and the one-step chance of each
    seat's bankruptcy and aid from every state (``bankrupt@i``, ``aid@i``, ``aid_ok@i``: their bounds).

    The step rewards are taken a block of states at a time, each summed against the visits at once:
    nothing of (states x branches) or (states x rewards) is held for the whole chain.
    """
    m, chain = pc.model, pc.chain
    N, n = m.players, pc.n_states
    names = ["turns", "throws", "bets"] + [f"{k}@{i}" for i in range(N)
                                           for k in ("turns", "bets", "bankrupt", "aid", "aid_ok", "points")]
    exp = dict.fromkeys(names, 0.0)
    turn_start = chain.state_rewards["turns"]
    mover = chain.mover
    w_parts, k_parts, f_parts = [], [], []
    events = {f"{k}@{i}": np.zeros(chain.n) for i in range(N) for k in ("bankrupt", "aid", "aid_ok")}
    block = 50_000  # the details of a block are (rows x branches x players) int64, and a copy of them
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        rows = np.arange(lo, hi)
        nxt = chain.next[lo:hi]
        valid = nxt >= 0
        p = np.where(valid, chain.pnum[lo:hi], 0) / chain.denom
        xs = x[lo:hi]
        ts = turn_start[lo:hi]
        mv = mover[lo:hi]
        bets = (p * (pc.act[lo:hi] == ACT_BET)).sum(axis=1)
        exp["turns"] += float(xs @ ts)
        exp["throws"] += float(xs @ (p * (pc.act[lo:hi] == ACT_THROW)).sum(axis=1))
        exp["bets"] += float(xs @ bets)
        _bank, aidm, final = m.details(pc, rows)
        aidm = aidm.astype(np.int64)
        broke = pc.broke[lo:hi].astype(np.int64)
        for i in range(N):
            mine = mv == i
            exp[f"turns@{i}"] += float(xs @ (ts & mine))
            exp[f"bets@{i}"] += float(xs @ np.where(mine, bets, 0.0))
            for key, bits in ((f"bankrupt@{i}", (broke >> i) & 1), (f"aid@{i}", (aidm >> i) & 1),
                              (f"aid_ok@{i}", (aidm >> (N + i)) & 1)):
                events[key][lo:hi] = (p * bits).sum(axis=1)
                exp[key] += float(xs @ events[key][lo:hi])
            exp[f"points@{i}"] += float(xs @ (p * np.maximum(final[:, :, i], 0)).sum(axis=1))
        er, ec = np.nonzero(valid & (nxt >= n))
        w_parts.append(xs[er] * p[er, ec])
        k_parts.append(nxt[er, ec] - n)
        f_parts.append(final[er, ec])
    w = np.concatenate(w_parts) if w_parts else np.zeros(0)
    out_k = np.concatenate(k_parts) if k_parts else np.zeros(0, np.int64)
    finals = np.concatenate(f_parts) if f_parts else np.zeros((0, N), np.int64)
    return exp, w, out_k, finals, events


def _seats(pc: PuntiChain, exp: dict[str, float], mass: np.ndarray, w: np.ndarray,
           finals: np.ndarray) -> list[PuntiSeat]:
    """Each seat's figures: win, tie and share from the outcome masses, the final points' law from the
    branches into the end, the expected totals."""
    rules, N = pc.model.rules, pc.model.players
    seats = []
    starts = rules.initial_balances(N)
    for i in range(N):
        win, tie, share = win_tie_share(pc.masks, mass, i)
        pts, inv = np.unique(finals[:, i], return_inverse=True)
        pmass = np.bincount(inv.ravel(), weights=w, minlength=pts.size)
        pmf = {int(v): float(q) for v, q in zip(pts, pmass, strict=True) if q > 0}
        seats.append(PuntiSeat(
            seat=i + 1, start_points=starts[i], win=win, tie=tie, win_share=share,
            bankrupt=exp[f"bankrupt@{i}"], points=exp[f"points@{i}"], points_pmf=pmf,
            bets=exp[f"bets@{i}"], aid=exp[f"aid@{i}"], aid_success=exp[f"aid_ok@{i}"],
            turns=exp[f"turns@{i}"],
        ))
    return seats
