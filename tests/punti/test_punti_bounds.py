"""Certified bounds of the points game's chain route: present for every float figure, and each figure within its
bound (plus the independent paths' own rounding) of the independent paths' answer."""

from __future__ import annotations

import pytest
from support import CALM, write

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
    assert ind.bounds is None and "not certified on this route" in ind.text()
