"""Certified bounds of a race's float figures: present for every figure, and each true error within its bound."""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from support import board, check_tree

from markov_oca.analysis.chain import Chain
from markov_oca.core.errors import SolverError
from markov_oca.engine.race import analyse
from markov_oca.goose.solve import solve_goose


def well_board(players: int = 2):
    """Seven squares, a three-sided die, wells on 3 and 5 that hold a piece until another lands there:
    one piece in each, and nobody moves again (a deadlock)."""
    return board(7, {3: {"name": "well", "wait": True}, 4: {"jump": 1, "name": "snake"},
                     5: {"name": "well", "wait": True}}, faces=3, players=players, waiting="until-replaced",
                 overshoot="bounce")


def pairs(f, e, prefix=""):
    """(path, float figure, exact figure) over two results' dicts."""
    if isinstance(e, dict) and "fraction" in e:
        yield prefix, f, Fraction(e["fraction"].replace(",", "").replace("_", ""))
    elif isinstance(e, dict):
        for k in e:
            yield from pairs(f[k], e[k], f"{prefix}/{k}")
    elif isinstance(e, list):
        for i, (a, b) in enumerate(zip(f, e, strict=True)):
            yield from pairs(a, b, f"{prefix}/{i}")


def bound_at(bounds, path):
    for k in path.strip("/").split("/"):
        bounds = bounds[int(k)] if isinstance(bounds, list) else bounds[k]
    return bounds


@pytest.mark.parametrize("rules", [well_board(), board(7, {2: {"jump": 5}, 5: {"jump": 1}}, faces=3, players=2)])
def test_every_float_error_within_its_bound_against_exact(rules):
    fl = solve_goose(rules, 2, landings=True, route="joint")
    ex = solve_goose(rules, 2, exact=True, landings=True)
    df, de = fl.to_dict(), ex.to_dict()
    assert check_tree(df) > 50 and df["precision"] == 1e-9 and df["route"] == ""
    checked = 0
    for key in ("outcomes", "deadlock", "seats", "expected", "landings"):
        for path, x, exact in pairs(df[key], de[key], key):
            if x in ("inf", None):
                continue
            b = bound_at(df["bounds"], path)
            assert abs(Fraction(x) - exact) <= Fraction(b), (path, x, float(exact), b)
            checked += 1
    assert checked > 40
    # the exact route's figures have bound 0
    assert de["bounds"]["deadlock"] == 0.0 and de["bounds"]["seats"][0]["win"] == 0.0
    total = sum(df["outcomes"].values()) + df["deadlock"]
    assert abs(total - 1) <= sum(df["bounds"]["outcomes"].values()) + df["bounds"]["deadlock"]


def test_the_well_board_has_a_deadlock_and_finite_given_end_bounds():
    r = solve_goose(well_board(), 2)
    d = r.to_dict()
    assert 0 < r.deadlock < 1 and r.expected["turns"].total == math.inf
    assert d["bounds"]["expected"]["turns"] == {"total": 0.0, "given_end": d["bounds"]["expected"]["turns"]
                                                ["given_end"]}
    assert 0 < d["bounds"]["expected"]["turns"]["given_end"] <= 1e-9 * r.expected["turns"].given_end
    assert "error bounds: certified, each figure within 1e-09 relative" in r.text()


def test_quantiles_that_rounding_could_move_are_more_than():
    from markov_oca.analysis.chain import LengthDistribution
    from markov_oca.analysis.results import certify_length, summarise_length

    pmf = np.array([0.0, 0.6, 0.3 - 1e-12, 0.1 + 1e-12])  # the 90th percentile within rounding of turn 2
    dist = LengthDistribution(pmf, 0.0, 0.0, rounding=1e-10)
    s = summarise_length(dist, 1.6)
    certify_length(s, dist, 1e-12, (0.0, 0.0))
    assert s.median == 1.0 and s.p99 == 3.0 and s.p90 is None and s.more_than["p90"] == 1
    assert s.quantile_text("p90") == "more than 1" and s.to_dict()["p90"] is None
    never = LengthDistribution(np.array([0.0, 0.6]), 0.4, 0.0, rounding=1e-15)
    s = summarise_length(never, 1.0)
    certify_length(s, never, 0.0, (0.4, 1e-15))
    assert s.p90 == math.inf and s.median == 1.0 and s.given_end["p90"] == 1.0


def slow_race(N: int) -> Chain:
    """One seat walks 0..2N from N (the walk of Haddad and Monmege): back to N with 1/2 from every leg, so
    the end comes after about 2**N steps and ``I - Q`` is singular to double precision."""
    n = 2 * N + 1
    nxt = np.full((n, 2), -1, np.int32)
    pnum = np.zeros((n, 2), np.int32)
    nxt[0, 0] = 0
    nxt[2 * N, 0] = 2 * N
    pnum[0, 0] = pnum[2 * N, 0] = 10
    nxt[N], pnum[N] = [N - 1, N + 1], [7, 3]
    for x in range(1, N):
        nxt[x], pnum[x] = [x - 1, N], [5, 5]
    for x in range(N + 1, 2 * N):
        nxt[x], pnum[x] = [x + 1, N], [5, 5]
    ones = np.ones(n, np.int64)
    ones[[0, 2 * N]] = 0
    return Chain(next=nxt, pnum=pnum, denom=10, init=N, outcomes={"seat 1 wins": 0, "seat 2 wins": 2 * N},
                 players=2, mover=np.where(ones > 0, 0, -1).astype(np.int8),
                 state_rewards={"turns": ones.astype(bool), "rounds": ones}, branch_rewards={
                     "throws": np.where(nxt >= 0, 1, 0) * ones[:, None]})


def _rules():
    return SimpleNamespace(name="slow", title="slow", seed="", source="slow", options={}, goal=2)


def test_a_chain_floats_cannot_certify_is_solved_exactly_or_refused(monkeypatch):
    import markov_oca.engine.race as race

    # small: solved exactly, the figures rounded (bound: their rounding)
    r = analyse(slow_race(60), rules=_rules(), players=2)
    assert "solved exactly" in r.route and not r.exact
    assert r.outcomes["seat 1 wins"] == 0.7 and r.bounds["outcomes"]["seat 1 wins"] <= 1e-16
    assert r.expected["turns"].total > 2.0 ** 59 and r.bounds["expected"]["turns"]["total"] < 1e-15 * 2.0 ** 60
    assert check_tree(r.to_dict(), ("outcomes", "deadlock", "seats", "expected")) >= 10
    # beyond the exact route's reach: one line names what would work
    monkeypatch.setattr(race, "DENSE_LIMIT", 10)
    with pytest.raises(SolverError, match=r"no bound under 1e-09.*ask --exact"):
        analyse(slow_race(60), rules=_rules(), players=2)


# Three players take the chain seen from the mover (goose.rotated): a deadlock and occupancy, places (until the
# last), stakes and another throw.
ROTATED = {
    "occupant, waiting": board(9, {2: {"jump": 5}, 4: {"miss": 1}, 6: {"wait": True}, 7: {"jump": 1}}, faces=3,
                               occupancy="occupant-returns"),
    "mover returns, last": board(8, {3: {"miss": 2}, 5: {"wait": True}, 6: {"jump": 2}}, faces=3,
                                 occupancy="mover-returns", until="last"),
    "stakes, another throw": board(10, {2: {"goose": "repeat"}, 4: {"stake": 1}, 7: {"miss": 1, "stake": 2},
                                        8: {"jump": 0}}, faces=3, occupancy="occupant-returns"),
    # three wells hold the three pieces: a deadlock, infinite totals and totals given the end
    "three wells": board(8, {2: {"wait": True}, 4: {"wait": True}, 6: {"wait": True}}, faces=3,
                         waiting="until-replaced", overshoot="bounce"),
}
SLOW_EXACT = ("occupant, waiting", "three wells")  # their exact solves take half a minute: the joint chain only


@pytest.mark.parametrize("case", list(ROTATED))
def test_rotated_route_bounds_contain_the_exact_and_the_joint_figures(case):
    rules = ROTATED[case]
    rot = solve_goose(rules, 3)
    joint = solve_goose(rules, 3, route="joint")
    # the exact fractions where they are quick; else the joint chain's floats (pairs reads only "fraction")
    ex = joint if case in SLOW_EXACT else solve_goose(rules, 3, exact=True)
    dr, dj, de = rot.to_dict(), joint.to_dict(), ex.to_dict()
    if case in SLOW_EXACT:
        de = exact_like(de)
    assert "seen from the player to move" in rot.note and joint.note == ""
    assert dr["bounds"].keys() == dj["bounds"].keys() and dr["precision"] == 1e-9
    assert check_tree(dr) > 60
    assert "error bounds: certified, each figure within 1e-09 relative" in rot.text()
    checked = 0
    for key in ("outcomes", "deadlock", "seats", "expected", "landings"):
        for path, x, exact in pairs(dr[key], de[key], key):
            if x in ("inf", None) or path.endswith("chance"):  # the chances of ever landing: not computed (null)
                continue
            b = bound_at(dr["bounds"], path)
            assert 0 <= b <= 1e-9 * abs(x) or b == 0.0, path
            # the true value lies within the bound, and the joint chain's figure within both routes' bounds
            assert abs(Fraction(x) - exact) <= Fraction(b), (path, x, float(exact), b)
            y, bj = bound_at(dj, path), bound_at(dj["bounds"], path)
            assert abs(Fraction(x) - Fraction(y)) <= Fraction(b) + Fraction(bj), (path, x, y, b, bj)
            checked += 1
    assert checked > 30
    # the expected landings (the exact route leaves them out at this size) against the joint chain's
    for x, y, b, bj in zip(dr["landings"], dj["landings"], dr["bounds"]["landings"], dj["bounds"]["landings"],
                           strict=True):
        assert (x["seat"], x["square"]) == (y["seat"], y["square"]) and 0 <= b["expected"] <= 1e-9 * x["expected"]
        assert abs(x["expected"] - y["expected"]) <= b["expected"] + bj["expected"], (x, y, b, bj)
        checked += x["expected"] > 0
    assert checked > 50
    if case == "three wells":
        assert 0.4 < rot.deadlock < 0.41 and rot.expected["turns"].total == math.inf
        assert 0 < dr["bounds"]["expected"]["turns"]["given_end"] < 1e-9 * rot.expected["turns"].given_end
    # the length's figures: the same quantiles, and its bounds' tree
    assert (rot.length.median, rot.length.p90) == (ex.length.median, ex.length.p90)
    assert dr["bounds"]["length"]["mean_given_end"] == dr["bounds"]["expected"]["turns"]["given_end"]
    # the pass's pmf (its pushes' rounding, counted) against the joint chain's, within both bounds
    lr, lj = dr["length"], dj["length"]
    pmf_bounds = zip(lr["pmf"], lj["pmf"], dr["bounds"]["length"]["pmf"], dj["bounds"]["length"]["pmf"],
                     strict=False)  # the common turns (each cut at its own tail)
    assert all(abs(x - y) <= b + c for x, y, b, c in pmf_bounds) and len(lr["pmf"]) > 20


def exact_like(d):
    """A float results' tree with each float as the fraction it is (the joint chain's figures, read by ``pairs``)."""
    if isinstance(d, dict):
        return {k: exact_like(v) for k, v in d.items()}
    if isinstance(d, list):
        return [exact_like(v) for v in d]
    return {"fraction": str(Fraction(d))} if isinstance(d, float) and math.isfinite(d) else d


def test_rotated_route_refuses_in_one_line_when_no_bound_meets_the_precision(tmp_path):
    from typer.testing import CliRunner

    from markov_oca.cli import app

    rules = ROTATED["stakes, another throw"]
    with pytest.raises(SolverError, match=r"no bound under 1e-30 \(relative\) for P\(seat 1 wins\).* on the chain "
                                          r"seen from the mover.*ask a looser --precision") as err:
        solve_goose(rules, 3, precision=1e-30)
    assert "\n" not in str(err.value)
    path = tmp_path / "three.toml"
    path.write_text('[game]\nname = "three"\nfamily = "goose"\ngoal = 8\nplayers = 3\n[dice]\ncount = 1\nfaces = 3\n'
                    '[rules]\novershoot = "stay"\noccupancy = "occupant-returns"\n[squares]\n2 = { jump = 5 }\n')
    r = CliRunner().invoke(app, ["solve", str(path), "--precision", "1e-30"])
    # a SolverError, as the joint chain's refusal: the command's "failed solve" exit
    assert r.exit_code == 1 and "no bound under 1e-30" in r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    ok = CliRunner().invoke(app, ["solve", str(path)])
    assert ok.exit_code == 0 and "seen from the player to move" in ok.output and "error bounds: certified" in ok.output


def test_rotated_route_refines_a_block_whose_bounds_miss(monkeypatch):
    from markov_oca.goose import rotated

    rules = ROTATED["stakes, another throw"]
    good = solve_goose(rules, 3)
    exact_pass = rotated.forward_pass

    def off_pass(rc, st, tail, l1):
        """The pass's visits 1e-8 off: their residual leaves the bounds above the precision."""
        dist, v, rep = exact_pass(rc, st, tail, l1=l1)
        return dist, v * (1 + 1e-8), rep

    monkeypatch.setattr(rotated, "forward_pass", off_pass)
    r = solve_goose(rules, 3)
    assert good.route == "" and r.route == "the visits solved again with iterative refinement"
    assert r.solver[1]["method"].startswith("the seat-shifted block refined (")
    assert r.solver[1]["residual_bound"] < 1e-12 and check_tree(r.to_dict()) > 60
    for a, b in zip(good.seats, r.seats, strict=True):
        assert abs(a.win - b.win) <= 2e-12 and abs(a.turns.total - b.turns.total) <= 1e-10
