"""The text of ``solve`` and ``explain`` for the Royal Game of Ur."""

from __future__ import annotations

from ..engine.text import bounds_line, fmt, options_lines


def ur_text(r) -> str:
    """The text report of a pair of Ur policies (:class:`~markov_oca.results.UrResults`)."""
    L = r.length
    lines = [
        f"{r.title} [{r.rules}] with {r.pieces} piece{'s' if r.pieces > 1 else ''} a side",
        f"light (moves first) plays {r.light}, dark plays {r.dark}",
        f"positions per side to move: {r.positions:,}; policy chain: {r.states:,} states, "
        f"{r.transitions:,} transitions",
        "",
        f"chance to win: light {fmt(r.wins['light'])}, dark {fmt(r.wins['dark'])}",
    ]
    if r.optimal_value is not None:
        within = (r.bounds or {}).get("optimal_value")
        lines.append(f"(light's chance when both play optimally: {r.optimal_value:.6f}"
                     + (f" ± {within:.1g}" if within is not None else "")
                     + f"; value iteration to a final change of {r.optimal_residual:.1e})")
    lines += [
        f"expected throws {fmt(r.expected['throws'].total, 4)}, turns {fmt(r.expected['turns'].total, 4)} "
        "(a rosette's extra throw is part of the same turn)",
        f"game length in turns: median {L.quantile_text('median')}, 90th percentile {L.quantile_text('p90')}, "
        f"99th percentile {L.quantile_text('p99')}",
    ]
    # the loose sweep that bounds the throws to come (an entry with its "bound") has a residual of its own,
    # far above the figures' solves by design: it is not one of them
    solves = [s for s in r.solver if "bound" not in s]
    res = max((s["residual"] for s in solves if s.get("residual") is not None), default=0.0)
    lines += ["", f"largest residual of the {len(solves)} linear solves: {res:.2e}", *bounds_line(r)]
    return "\n".join(lines)


def ur_explain_dict(rules) -> dict:
    """An Ur rule set as read, for ``explain --format json`` (schema ``markov_oca.explain-ur/1``)."""
    return {
        "schema": "markov_oca.explain-ur/1",
        "rules": rules.name, "title": rules.title, "seed": rules.seed, "source": rules.source,
        "pieces": rules.pieces, "path_length": rules.path_length, "shared": list(rules.shared),
        "rosettes": list(rules.rosettes), "throw": rules.describe_throw(),
        "throws": [{"move": v, "probability": str(p)} for v, p in rules.throws],
        "end": rules.describe_end(),
        "options": {k: {"value": v, "choices": list(rules.option_choices.get(k, ())) or None,
                        "doc": rules.option_docs.get(k, "")} for k, v in rules.options.items()},
    }


def ur_explain_text(rules) -> str:
    """An Ur rule set as the engine reads it: path, rosettes, the throw, the end, the options."""
    lo, hi = rules.shared
    lines = [
        f"{rules.title} [{rules.name}] from {rules.source}",
        *([f"it follows {rules.seed}"] if rules.seed else []),
        f"{rules.pieces} piece{'s' if rules.pieces > 1 else ''} a side; each walks path squares 1..{rules.path_length}"
        f" (0 is the hand, {rules.path_length + 1} off the board); squares {lo}..{hi} are shared, where a piece "
        "landing on an opponent's sends it back to the hand"
        + ("; a capture gives another throw" if rules.capture_again else ""),
        f"rosettes ({'another throw' if rules.rosette_again else 'no extra throw'}; "
        f"{'a piece on a shared one cannot be taken' if rules.safe_rosettes else 'a piece on one can be taken'}): "
        + ", ".join(map(str, rules.rosettes)),
        f"throw: {rules.describe_throw()}: "
        + ", ".join(f"{v} with {p}" for v, p in rules.throws),
        f"end: {rules.describe_end()}",
        "",
        *options_lines(rules),
    ]
    return "\n".join(lines)
