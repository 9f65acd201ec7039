"""Certified bounds on the sweeps' and the push's routes of `solve ur` (markov_oca/ur/sweepbounds.py), against
the chain's route: each figure within the bounds both report of the chain's, every bound within the precision,
and a precision that cannot be met refused in one line."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from markov_oca.analysis.bounds import meets
from markov_oca.core.errors import SolverError
from markov_oca.ur import solve as ur_solve
from markov_oca.ur.layered import solve_layered
from markov_oca.ur.rules import load_ur
from markov_oca.ur.sweepbounds import fan_in, push_rounding, turn_throws


@pytest.fixture(autouse=True)
def _tables(monkeypatch, tmp_path):
    """The push keeps its bound on the throws to come beside the table folder: a temporary one here."""
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))


@pytest.fixture(scope="module")
def two():
    rules = load_ur("ur", {"pieces": 2})
    return rules, solve_layered(rules, residual=True)


def _figures(res):
    """(name, figure, bound) of every float figure and its bound."""
    out = [(f"wins {k}", float(res.wins[k]), res.bounds["wins"][k]) for k in ("light", "dark")]
    for k in ("turns", "throws"):
        for part in ("total", "given_end"):
            out.append((f"{k} {part}", float(getattr(res.expected[k], part)), res.bounds["expected"][k][part]))
    return out


def _agree(got, want, precision=1e-9):
    """``got`` (a sweeps' route) and ``want`` (the chain's) within the sum of their bounds, each bound within
    the precision and not zero (a bound that cannot fail would pass anything)."""
    for (name, x, b), (_, y, c) in zip(_figures(got), _figures(want), strict=True):
        assert 0 < b and meets(x, b, precision), (name, x, b)
        assert abs(x - y) <= b + c, (name, x, y, b, c)
    for q in ("median", "p90", "p99"):  # the quantiles kept are certain: the same turn on both routes
        assert got.bounds["length"][q] == 0.0 and getattr(got.length, q) == getattr(want.length, q)
    assert got.bounds["length"]["mean_given_end"] == got.bounds["expected"]["turns"]["given_end"]


@pytest.mark.parametrize("method", ["sweeps", "push"])
@pytest.mark.parametrize("light,dark", [("optimal", "optimal"), ("greedy", "random"), ("random", "optimal")])
def test_two_pieces_sweeps_and_push_within_the_chains_bounds(two, method, light, dark):
    rules, lay = two
    chain = ur_solve.solve_ur(rules, light, dark, optimal=lay, method="chain")
    got = ur_solve.solve_ur(rules, light, dark, optimal=lay, method=method)
    assert got.precision == 1e-9 and got.route == ""
    _agree(got, chain)
    if light == dark == "optimal":  # the table's value: the chance of the pair that plays its moves
        ob = got.bounds["optimal_value"]
        assert 0 < ob < 1e-9 and abs(got.optimal_value - float(chain.wins["light"])) <= ob + chain.bounds["wins"][
            "light"]
    else:
        assert got.bounds["optimal_value"] is None
    assert "error bounds: certified, each figure within 1e-09 relative" in got.text()


@pytest.mark.slow  # the two-piece cases above check the same routes in seconds
def test_three_pieces_sweeps_and_push_within_the_chains_bounds():
    # a pair that needs no table (the optimal pairs on two pieces above): 264,304 positions a side
    rules = load_ur("ur", {"pieces": 3})
    chain = ur_solve.solve_ur(rules, "greedy", "random", method="chain")
    for method in ("sweeps", "push"):
        _agree(ur_solve.solve_ur(rules, "greedy", "random", method=method), chain)


@pytest.mark.parametrize("name", ["ur-blitz", "ur-masters"])
def test_capture_that_throws_again_push_within_the_chains_bounds(name):
    # a capture gives another throw (Blitz; Masters' rosettes that do not protect): the push goes in place
    # order, and a turn may hold a throw more a piece the capture allows
    rules = load_ur(name, {"pieces": 2})
    assert rules.again_after_capture
    assert turn_throws(rules) == 1 + 2 * (len(rules.rosettes) * rules.rosette_again + 1)
    lay = solve_layered(rules, residual=True)
    for light, dark in (("optimal", "optimal"), ("greedy", "random")):
        _agree(ur_solve.solve_ur(rules, light, dark, optimal=lay, method="push"),
               ur_solve.solve_ur(rules, light, dark, optimal=lay, method="chain"))


def test_push_rounding_grows_with_the_turns_and_stays_small():
    rules = load_ur("ur", {"pieces": 7})
    # seven pieces: 1 + 7 * 3 throws a turn at most, 2 * 5 * 8 + 5 branches into a position
    assert turn_throws(rules) == 22 and fan_in(rules) == 85
    assert push_rounding(rules, 100) < push_rounding(rules, 1000) < 1e-9


def test_a_precision_out_of_reach_is_refused_in_one_line(two):
    rules, lay = two
    for method in ("sweeps", "push"):
        with pytest.raises(SolverError, match=r"no bound under 1e-16 \(relative\)") as err:
            ur_solve.solve_ur(rules, "greedy", "random", optimal=lay, method=method, precision=1e-16)
        assert "\n" not in str(err.value) and "--precision" in str(err.value)


def test_a_miss_pushes_on_to_a_smaller_tail(two, monkeypatch):
    # the push stopped early leaves too much for 1e-9: it is carried on to a tail that meets it, and says so
    rules, lay = two
    monkeypatch.setattr(ur_solve, "PUSH_SUMS_TAIL", 1e-6)
    res = ur_solve.solve_ur(rules, "optimal", "random", optimal=lay, method="push", tail=1e-6)
    assert res.route.startswith("the push carried on to a tail of")
    _agree(res, ur_solve.solve_ur(rules, "optimal", "random", optimal=lay, method="chain"))


def test_cli_refuses_a_miss_on_the_push(monkeypatch):
    from markov_oca.cli import app

    monkeypatch.setattr(ur_solve, "CHAIN_PIECES", 1)  # two pieces go to the sweeps
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 2)  # ... and the push alone
    res = CliRunner().invoke(app, ["solve", "ur", "--pieces", "2", "--light", "greedy", "--dark", "random",
                                   "--precision", "1e-16"])
    assert res.exit_code == 1 and res.output.strip().count("\n") == 0
    assert "no bound under 1e-16 (relative)" in res.output
    res = CliRunner().invoke(app, ["solve", "ur", "--pieces", "2", "--light", "greedy", "--dark", "random",
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    import json

    d = json.loads(res.output)
    assert d["precision"] == 1e-9 and all(math.isfinite(b) for b in d["bounds"]["wins"].values())
    assert d["solver"][0]["bound"] > d["expected"]["throws"]["total"]


def test_exact_length_certified():
    # --exact: the fractions have bound 0, the length distribution (pushed in floats) its certified bounds,
    # and the table's value its distance from the exact chance of the pair that plays its moves
    from markov_oca.ur.exact import solve_ur_exact

    one = load_ur("ur", {"pieces": 1})
    ex = solve_ur_exact(one, "optimal", "optimal", values=solve_layered(one).values)
    fl = ur_solve.solve_ur(one, "optimal", "optimal", method="chain")
    assert ex.bounds["length"]["median"] == 0.0 and ex.length.median == fl.length.median
    assert 0 < max(ex.bounds["length"]["pmf"]) < 1e-12
    ob = ex.bounds["optimal_value"]
    # compared exactly: rounding the fraction to a float first can move it by half a unit in the last place,
    # more than the distance itself when the table is that close
    from fractions import Fraction

    assert ob is not None and ob < 1e-11 and abs(Fraction(ex.optimal_value) - ex.wins["light"]) <= ob


def test_a_miss_sweeps_the_evaluation_again(two):
    # swept to a change of 1e-11 the chances are within about 1e-10: 1e-10 relative asks for the second sweep,
    # which the route names, and whose bounds still hold against the chain's
    rules, lay = two
    # (how far the first sweep lands varies with the threads' order: the precision asked is set below its bound)
    loose = ur_solve.solve_ur(rules, "greedy", "random", optimal=lay, method="sweeps")
    dark, bound = float(loose.wins["dark"]), loose.bounds["wins"]["dark"]
    assert loose.route == "" and meets(dark, bound, 1e-9) and bound > 0
    precision = max(0.5 * bound / dark, 1e-12)
    assert not meets(dark, bound, precision)
    res = ur_solve.solve_ur(rules, "greedy", "random", optimal=lay, method="sweeps", precision=precision)
    assert res.route == "the evaluation swept again to a change of 1e-14"
    _agree(res, ur_solve.solve_ur(rules, "greedy", "random", optimal=lay, method="chain"), precision=precision)


def test_each_sides_chance_from_the_push_has_a_bound_relative_to_itself(two):
    """The push sums each side's wins on its own: the rounding of the side that wins less is relative to its own
    chance, not to the other side's (a greedy pair of the seven-piece game was refused on P(dark wins) when dark's
    bound was light's plus 2u). Pushed far enough that the rounding is most of each bound."""
    rules, lay = two
    got = ur_solve.solve_ur(rules, "optimal", "random", optimal=lay, method="push", tail=1e-15)
    want = ur_solve.solve_ur(rules, "optimal", "random", optimal=lay, method="chain")
    _agree(got, want)
    (wl, wd), (bl, bd) = got.wins.values(), got.bounds["wins"].values()
    assert wd < 0.4 * wl and bd < 0.5 * bl
    assert abs(wl + wd - 1) <= bl + bd
