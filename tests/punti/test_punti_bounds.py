"""Certified bounds of the points game on each method: present for every float figure, within the precision,
and the methods' figures within the sum of their bounds of each other."""

from __future__ import annotations

import pytest
from support import CALM, SMALL, TINY3, punti_within_bounds, write

from markov_oca.core.errors import SolverError
from markov_oca.punti import solve_punti

CHANCES = ("win", "tie", "win_share", "bankrupt", "aid", "aid_success")


@pytest.mark.parametrize("players", [2, 3])
def test_chain_figures_within_their_bounds_of_the_independent_paths(tmp_path, players):
    path = write(tmp_path, "calm", CALM)
    chain = solve_punti(path, players, method="chain")
    ind = solve_punti(path, players, method="independent")
    d, b = chain.to_dict(), chain.bounds
    assert d["precision"] == 1e-9 and d["bounds"]["length"] is not None
    for k, x in d["outcomes"].items():
        assert 0 <= x <= 1 and b["outcomes"][k] <= 1e-9 * x
        assert abs(x - ind.outcomes[k]) <= b["outcomes"][k] + 1e-13
    for k, x in d["expected"].items():
        assert b["expected"][k] <= 1e-9 * abs(x)
        assert abs(x - ind.expected[k]) <= b["expected"][k] + 1e-12 * abs(x)
    for s, sb, si in zip(d["seats"], b["seats"], ind.seats, strict=True):
        for k in (*CHANCES, "points", "bets", "turns"):
            assert sb[k] <= 1e-9 * abs(s[k]), k
            assert abs(s[k] - getattr(si, k)) <= sb[k] + 1e-12 * max(1.0, abs(s[k])), k
            if k in CHANCES:
                assert 0 <= s[k] <= 1, k
        assert sb["points_pmf"].keys() == s["points_pmf"].keys()
        for v, p in s["points_pmf"].items():
            assert abs(p - si.points_pmf[int(v)]) <= sb["points_pmf"][v] + 1e-13
    assert "error bounds: certified, each figure within 1e-09 relative" in chain.text()
    # independent paths certify theirs: the two agree within the sum of the bounds, each within the precision
    assert ind.precision == 1e-9 and "error bounds: certified, each figure within 1e-09" in ind.text()
    assert punti_within_bounds(chain, ind) > 10 + 10 * players
    assert ind.bounds["length"]["median"] == 0.0 and ind.length.median == chain.length.median
    for s in ind.bounds["seats"]:
        assert s["bankrupt"] == s["aid"] == s["bets"] == 0.0  # exact zeros where independent paths apply


@pytest.mark.parametrize("players,bet", [(2, "always"), (3, "always"), (3, "never")])
def test_layered_figures_within_their_bounds_of_the_chain(tmp_path, players, bet):
    # Bets, bankruptcy and mutual aid are common on this board: every kind of figure is exercised.
    path = write(tmp_path, "tiny3", TINY3)
    chain = solve_punti(path, players, bet=bet, method="chain")
    lay = solve_punti(path, players, bet=bet, method="layered")
    assert punti_within_bounds(chain, lay) > 20
    assert lay.solver[0]["residual_bound"] < 1e-11
    for s, sb in zip(lay.seats, lay.bounds["seats"], strict=True):
        assert s.bankrupt > 0.01 and 0 < sb["bankrupt"] < 1e-9 * s.bankrupt
        assert (s.bets > 0.1) == (bet == "always") and (sb["bets"] == 0.0) == (bet == "never")
    assert lay.bounds["length"] is None  # bankruptcy is reachable: no length distribution, no bound
    assert "error bounds: certified, each figure within 1e-09" in lay.text()


def test_layered_rare_chance_gets_a_bound_relative_to_it(tmp_path):
    # Seat 1 goes bankrupt with chance 2.2e-4: the residual's 1-norm (about 3e-14) is 1.3e-10 of it, while the
    # time-weighted visits bound its error by about 1e-13 of it, and meet a precision of 1e-11.
    path = write(tmp_path, "rare", SMALL.format(goal=9, extra="9 = { pay_bank = 5 }").replace("dowry = 60",
                                                                                             "dowry = 65"))
    chain = solve_punti(path, 2, bet="always", method="chain")
    lay = solve_punti(path, 2, bet="always", method="layered", precision=1e-11)
    x, b = lay.seats[0].bankrupt, lay.bounds["seats"][0]["bankrupt"]
    assert 1e-4 < x < 1e-3 and lay.solver[0]["residual_bound"] > 1e-10 * x > 100 * b
    assert abs(x - chain.seats[0].bankrupt) <= b + chain.bounds["seats"][0]["bankrupt"]
    for k, v in lay.outcomes.items():
        assert lay.bounds["outcomes"][k] <= 1e-11 * v
        assert abs(v - chain.outcomes[k]) <= lay.bounds["outcomes"][k] + chain.bounds["outcomes"][k]


def test_layered_length_from_the_race_is_certified(tmp_path):
    path = write(tmp_path, "calm", CALM)
    chain = solve_punti(path, 2, method="chain")
    lay = solve_punti(path, 2, method="layered")
    punti_within_bounds(chain, lay)
    lb = lay.bounds["length"]
    assert lb["mean_given_end"] == lay.bounds["expected"]["turns"]
    assert (lay.length.median, lay.length.p90, lay.length.p99) == (chain.length.median, chain.length.p90,
                                                                   chain.length.p99)
    assert lb["median"] == lb["p90"] == lb["p99"] == 0.0
    assert all(abs(x - y) <= b for x, y, b in zip(lay.length.pmf, chain.length.pmf, lb["pmf"], strict=False))


@pytest.mark.parametrize("method", ["independent", "layered"])
def test_a_miss_refuses_in_one_line(tmp_path, method):
    path = write(tmp_path, "calm", CALM)
    with pytest.raises(SolverError, match=r"no bound under 1e-30 .*--method chain") as exc:
        solve_punti(path, 2, method=method, precision=1e-30)
    assert "\n" not in str(exc.value)
