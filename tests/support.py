"""What several test modules share: small boards written inline, and comparisons of two solves' figures.

Test modules import these by name (``from support import board``); they never import each other.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from markov_oca.goose.rules import build_goose


def board(goal: int, squares: dict[int, dict] | None = None, *, faces: int = 2, count: int = 1,
          players: int = 1, **rules: Any):
    """A tiny goose board: one ``faces``-sided die unless told, squares by number."""
    raw = {
        "game": {"name": "tiny", "goal": goal, "players": players},
        "dice": {"count": count, "faces": faces},
        "rules": rules,
        "squares": {str(k): v for k, v in (squares or {}).items()},
    }
    return build_goose(raw, "tiny.toml", {})


def figures(r) -> dict[str, float]:
    out = {f"outcome {k}": v for k, v in r.outcomes.items()} | {"deadlock": r.deadlock}
    for s in r.seats:
        for name in ("turns", "throws", "stakes"):
            e = getattr(s, name)
            if e is not None:
                out[f"seat {s.seat} {name}"] = e.total
                out[f"seat {s.seat} {name} given end"] = e.given_end
    for k, e in r.expected.items():
        out[k] = e.total
        out[k + " given end"] = e.given_end
    for i, p in enumerate(r.length.pmf):
        out[f"length {i}"] = p
    out |= {"tail": r.length.tail_mass, "never ends": r.length.never_ends}
    for x in r.landings or []:
        out[f"seat {x.seat} lands {x.square}"] = x.expected
    return out


def same_figures(a, b, tol):
    fa, fb = figures(a), figures(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        x, y = fa[k], fb[k]
        if math.isinf(x) or math.isnan(x):
            assert (math.isinf(y) and x == y) or (math.isnan(x) and math.isnan(y)), k
        else:
            assert y == pytest.approx(x, abs=tol, rel=tol / 10), k  # totals of tens of turns: 1e-13 relative


# Three players: balances in steps of 10 on six squares keep the chain small.
TINY3 = """
[game]
name = "tiny3"
family = "punti"
goal = 6
players = 3
[dice]
faces = 3
[economy]
dowry = 40
entry_tax = 10
head_fee = 0
bank_fund = 20
bet_cost = 10
bet_prize = 30
aid = 10
[squares]
2 = { pay_bank = 20, pulcinella = 1 }
3 = { pulcinella = 2 }
4 = { collect_each = 10 }
5 = { pay_each = 10 }
6 = { collect_bank = 20 }
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


# Two squares with an effect on a three-square board, one two-faced die (derived by hand below).
TWO_SQUARES = """
[game]
name = "two-squares"
family = "punti"
goal = 3
players = 2
[dice]
faces = 2
[economy]
dowry = 100
entry_tax = 0
head_fee = 0
bank_fund = 100
aid_uses = 0
[squares]
2 = { pay_each = 10 }
3 = { collect_bank = 20 }
"""


SMALL = """
[game]
name = "small"
family = "punti"
goal = {goal}
players = 2
[dice]
faces = 3
[economy]
dowry = 60
entry_tax = 10
head_fee = 5
bank_fund = 20
bet_cost = 10
bet_prize = 30
aid = 10
[squares]
2 = {{ pay_bank = 20, pulcinella = 1 }}
3 = {{ collect_each = 15 }}
4 = {{ pay_each = 10 }}
5 = {{ pulcinella = 2 }}
6 = {{ collect_bank = 25 }}
{extra}
"""


def small(tmp_path: Path, goal: int = 7, extra: str = "7 = { pay_bank = 5 }") -> Path:
    return write(tmp_path, f"small{goal}", SMALL.format(goal=goal, extra=extra))


def against_simulation(r, sim, z: float = 4.5) -> None:
    g = sim.games
    for i, s in enumerate(r.seats):
        for exact, count in ((s.win, sim.win[i]), (s.tie, sim.tie[i]), (s.bankrupt, sim.bankrupt[i])):
            se = max(np.sqrt(exact * (1 - exact) / g), 1 / g)
            assert abs(count / g - exact) < z * se + 1e-12, (i, exact, count / g)
        var = sum(v * p for v, p in s.points_pmf.items() for v in [v * v]) - s.points**2
        assert abs(sim.points[i] / g - s.points) < z * np.sqrt(max(var, 1e-9) / g)
    mean_turns = sim.turns / g
    var_t = sim.turns_sq / g - mean_turns**2
    assert abs(mean_turns - r.expected["turns"]) < z * np.sqrt(var_t / g)


def same_punti(a, b, tol: float = 1e-11) -> None:
    """Every figure of two PuntiResults (the chain's and the layered solve's) agrees."""
    assert a.states == b.states
    assert a.transitions == b.transitions
    assert a.outcomes.keys() == b.outcomes.keys()
    for k in a.outcomes:
        assert a.outcomes[k] == pytest.approx(b.outcomes[k], abs=tol), k
    for k in ("turns", "throws", "bets"):
        assert a.expected[k] == pytest.approx(b.expected[k], rel=tol, abs=tol), k
    for s, t in zip(a.seats, b.seats, strict=True):
        for f in ("win", "tie", "win_share", "bankrupt", "bets", "aid", "aid_success", "turns"):
            assert getattr(s, f) == pytest.approx(getattr(t, f), abs=tol), (s.seat, f)
        assert s.points == pytest.approx(t.points, rel=tol)
        assert s.points_pmf.keys() == t.points_pmf.keys()
        for v in s.points_pmf:
            assert s.points_pmf[v] == pytest.approx(t.points_pmf[v], abs=tol), (s.seat, v)


def punti_within_bounds(a, b) -> int:
    """Every float figure of two PuntiResults (two methods) agrees within the sum of their certified bounds;
    every bound but a final points entry's meets its precision. Returns the figures compared."""
    da, db = a.to_dict(with_pmf=False), b.to_dict(with_pmf=False)
    pairs = [(f"outcomes/{k}", x, db["outcomes"][k], a.bounds["outcomes"][k], b.bounds["outcomes"][k])
             for k, x in da["outcomes"].items()]
    pairs += [(f"expected/{k}", x, db["expected"][k], a.bounds["expected"][k], b.bounds["expected"][k])
              for k, x in da["expected"].items()]
    for s, t, sa, sb in zip(da["seats"], db["seats"], a.bounds["seats"], b.bounds["seats"], strict=True):
        pairs += [(f"seat {s['seat']}/{k}", s[k], t[k], sa[k], sb[k]) for k in sa if k != "points_pmf"]
        assert s["points_pmf"].keys() == t["points_pmf"].keys() == sa["points_pmf"].keys()
        pairs += [(f"seat {s['seat']}/points {v}", p, t["points_pmf"][v], sa["points_pmf"][v], sb["points_pmf"][v])
                  for v, p in s["points_pmf"].items()]
    for path, x, y, bx, by in pairs:
        assert abs(x - y) <= bx + by, (path, x, y, bx, by)
        if "points " not in path:
            assert bx <= a.precision * abs(x) and by <= b.precision * abs(y), (path, x, bx, y, by)
    return len(pairs)


#: The repository's root (examples/ and docs/ are read from it).
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


# Every money effect below the bounce zone (squares 6..8 for a three-faced die and goal 9), dowries
# large enough that no loss is ever uncovered: the conditions hold for two, three and four players.
CALM = """
[game]
name = "calm"
family = "punti"
goal = 9
players = 3
[dice]
faces = 3
[economy]
dowry = 100
entry_tax = 10
head_fee = 5
bank_fund = 50
[squares]
2 = { pay_bank = 10 }
3 = { collect_each = 5 }
4 = { pay_each = 10 }
5 = { collect_bank = 15, pulcinella = 1 }
9 = { collect_bank = 5 }
"""


PROBABILITIES = ("outcomes", "deadlock", "win", "places", "chance", "never_ends", "pmf", "cdf")


def walk(fig, bound, path=""):
    """Every float figure of a results tree beside its bound: (path, figure, bound)."""
    if isinstance(fig, dict) and "fraction" in fig:
        yield path, fig["value"], bound
    elif isinstance(fig, dict):
        for k, v in fig.items():
            if k in ("unit", "more_than") or v is None or (isinstance(v, (int, str)) and v != "inf"):
                continue
            assert isinstance(bound, dict) and k in bound, f"{path}/{k}: no bound"
            yield from walk(v, bound[k], f"{path}/{k}")
    elif isinstance(fig, list):
        assert isinstance(bound, list) and len(bound) == len(fig), f"{path}: no bounds"
        for i, (v, b) in enumerate(zip(fig, bound, strict=True)):
            yield from walk(v, b, f"{path}/{i}")
    elif isinstance(fig, float) or fig == "inf":
        yield path, fig, bound


def check_tree(d: dict, keys=("outcomes", "deadlock", "seats", "expected", "length", "landings")) -> int:
    """Every float figure has a finite bound under the precision, and every probability lies in [0, 1]."""
    seen = 0
    for key in keys:
        if d[key] is None:
            continue
        for path, x, b in walk(d[key], d["bounds"][key], key):
            seen += 1
            if x == "inf":
                assert b == 0.0, path
                continue
            assert b is not None and math.isfinite(b) and b >= 0, path
            if path.split("/")[0] in ("outcomes", "deadlock") or any(p in path for p in PROBABILITIES[2:]):
                assert 0.0 <= x <= 1.0, path
            if not any(p in path for p in ("pmf", "cdf", "tail_mass")):
                assert b <= d["precision"] * abs(x) or b == 0.0, path
    return seen
