"""Certified bounds of ``solve ur``: each figure of the float chain within its bound of the exact fractions."""

from __future__ import annotations

from fractions import Fraction

from markov_oca.ur.exact import solve_ur_exact
from markov_oca.ur.rules import load_ur
from markov_oca.ur.solve import solve_ur


def test_two_pieces_float_within_its_bounds_of_the_exact_fractions():
    light = dark = "optimal"
    rules = load_ur("ur", {"pieces": 2})
    fl = solve_ur(rules, light, dark, method="chain")
    ex = solve_ur_exact(rules, light, dark)
    b = fl.bounds
    assert fl.precision == 1e-9 and fl.route == ""
    for side in ("light", "dark"):
        x = fl.wins[side]
        assert 0 <= x <= 1 and 0 < b["wins"][side] <= 1e-9 * x
        assert abs(Fraction(x) - ex.wins[side]) <= Fraction(b["wins"][side])
    for k in ("turns", "throws"):
        for which in ("total", "given_end"):
            x, bound = getattr(fl.expected[k], which), b["expected"][k][which]
            assert 0 < bound <= 1e-9 * x
            assert abs(Fraction(x) - getattr(ex.expected[k], which)) <= Fraction(bound), (k, which)
    assert b["length"]["mean_given_end"] == b["expected"]["turns"]["given_end"]
    assert {b["length"][q] for q in ("median", "p90", "p99")} == {0.0}  # whole turns, certain
    # the table's value of the start is the optimal pair's chance to within its bound
    assert abs(Fraction(fl.optimal_value) - ex.wins["light"]) <= Fraction(b["optimal_value"])
    assert b["optimal_value"] <= 1e-9
    assert solve_ur(load_ur("ur", {"pieces": 1}), "greedy", "random").bounds["optimal_value"] is None
    d = fl.to_dict(with_pmf=False)
    assert d["bounds"]["wins"] == b["wins"] and "pmf" not in d["bounds"]["length"]
    assert "error bounds: certified, each figure within 1e-09 relative" in fl.text()
    assert ex.bounds["wins"] == {"light": 0.0, "dark": 0.0}
