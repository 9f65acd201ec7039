"""The text report of a solved points board (:class:`~markov_oca.punti.results.PuntiResults`).

The results' ``text`` method calls :func:`punti_text`, so this module leaves the results
module unimported (no cycle between the two): it reads the results' fields only.
"""

from __future__ import annotations

import numpy as np

from ..engine.text import bounds_line, options_lines

_BETS = {
    "never": "nobody bets on Pulcinella",
    "always": "every seat bets whenever it can",
    "optimal": "each seat bets to maximise its chance of winning",
}


def quantiles(pmf: dict[int, float], qs: tuple[float, ...]) -> list[int]:
    """The smallest value whose cumulative chance reaches each ``q`` (any order of ``qs``)."""
    keys = sorted(pmf)
    cdf = np.cumsum([pmf[k] for k in keys])
    return [keys[min(int(np.searchsorted(cdf, q - 1e-12)), len(keys) - 1)] for q in qs]


def punti_text(r) -> str:
    """The report for people: per seat the chance to win, to go bankrupt, the final points; the length.

    Parameters
    ----------
    r : PuntiResults
        A solved board (:class:`~markov_oca.punti.results.PuntiResults`).
    """
    lines = [
        f"{r.title} [{r.rules}] with {r.players} players",
        f"bets: {r.bet} ({_BETS.get(r.bet, r.bet)})",
        "options: " + ", ".join(f"{k}={v}" for k, v in r.options.items()),
        f"points in play {r.total_points} (the bank starts with {r.bank_start}); balances in steps of {r.unit}",
        (f"chain: {r.states:,} states, {r.transitions:,} transitions; floating point" if r.states is not None
         else "chain: not built (independent paths, see the notes); floating point"),
        "",
        "per seat (win: the most points alone; tie: sharing the most; share: a tie of k seats counts 1/k):",
        "  seat  start    win       tie       share     bankrupt  points   (median, 10%-90%)  bets    aid asked/ok",
    ]
    for s in r.seats:
        med, lo, hi = quantiles(s.points_pmf, (0.5, 0.1, 0.9))
        lines.append(
            f"  {s.seat:4d}  {s.start_points:5d}  {s.win:.6f}  {s.tie:.6f}  {s.win_share:.6f}  {s.bankrupt:.6f}  "
            f"{s.points:7.2f}  ({med}, {lo}-{hi})  {s.bets:6.3f}  {s.aid:.4f}/{s.aid_success:.4f}")
    lines.append("outcomes: " + ", ".join(f"{k} {v:.6f}" for k, v in r.outcomes.items()))
    L = r.length
    lines += [
        "",
        f"expected turns {r.expected['turns']:.4f} (all seats), throws {r.expected['throws']:.4f}, "
        f"bets {r.expected['bets']:.4f}",
    ]
    if L is not None:
        lines.append(f"game length in turns: median {L.quantile_text('median')}, 90th percentile "
                     f"{L.quantile_text('p90')}, 99th percentile {L.quantile_text('p99')} (distribution to a tail "
                     f"mass of {L.tail_mass:.1e})")
    lines += [f"note: {n}" for n in r.notes]
    if r.policy:
        p = r.policy
        lines += ["", f"optimal bets: {p.get('method', '')}"]
        for k in ("rounds", "converged", "sweeps", "residual", "decision_states", "bet_states"):
            if k in p:
                lines.append(f"  {k.replace('_', ' ')}: {p[k]}")
    if r.postcards:
        pc = r.postcards
        lines += ["", f"postcards (simulated, {pc['games']:,} games each, seed {pc['seed']}; "
                      f"policy: {pc['policy']}):"]
        lines.append("  seat  share without  share with  (simulated; the exact share without is above)")
        for i, (a, b) in enumerate(zip(pc["without"]["win_share"], pc["with"]["win_share"], strict=True)):
            lines.append(f"  {i + 1:4d}  {a:.4f}         {b:.4f}")
        lines.append(f"  standard error of each share about {pc['stderr']:.4f}")
    res = max((s["residual"] for s in r.solver if s.get("residual") is not None), default=0.0)
    lines += ["", f"largest residual of the {len(r.solver)} solves: {res:.2e}", *bounds_line(r)]
    return "\n".join(lines)


def punti_explain_text(rules) -> str:
    """The points board as read: squares, the economy in force, the options with their docs."""
    lines = [
        f"{rules.title} [{rules.name}] from {rules.source}",
        *([f"it follows {rules.seed}"] if rules.seed else []),
        f"squares 1 (start) to {rules.goal} (the end square); one die of {rules.faces} faces",
        f"each player: dowry {rules.dowry}, entry tax {rules.entry_tax} to the bank, head-of-game fee "
        f"{rules.head_fee}; Pulcinella bet {rules.bet_cost} to win {rules.bet_prize}; mutual aid {rules.aid} "
        f"from each other player, {rules.aid_uses} time(s), {rules.aid_throws} throws",
        "",
        *options_lines(rules, show=str),
    ]
    lines += ["", "squares with an effect:"]
    for s, sq in sorted(rules.squares.items()):
        name = f" ({sq.name})" if sq.name else ""
        lines.append(f"  {s:3d}{name}: {sq.describe()}")
    return "\n".join(lines)


def punti_explain_dict(rules) -> dict:
    """The points board as read, for ``explain --format json`` (schema ``markov_oca.explain-punti/1``)."""
    return {
        "schema": "markov_oca.explain-punti/1",
        "rules": rules.name, "title": rules.title, "seed": rules.seed, "source": rules.source,
        "goal": rules.goal, "faces": rules.faces,
        "options": {k: {"value": v, "choices": list(rules.option_choices.get(k, ())) or None,
                        "doc": rules.option_docs.get(k, "")} for k, v in rules.options.items()},
        "squares": [{"square": q, "name": sq.name, "effect": sq.describe(), "kind": sq.kind or None,
                     "amount": sq.amount, "pulcinella": sq.pulcinella} for q, sq in sorted(rules.squares.items())],
    }
