"""Certified bounds of the points game's chain route: present for every float figure, and each figure within its
bound (plus the independent paths' own rounding) of the independent paths' answer."""

from __future__ import annotations

import pytest
from support import write

from markov_oca.punti import solve_punti

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
