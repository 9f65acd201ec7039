"""Chain analyses written once (visits, landings, reports returned) and the size guard of the goose chains."""

from __future__ import annotations

import numpy as np
import pytest
from support import board

from markov_oca.core.errors import TooLargeError
from markov_oca.goose.model import goose_model
from markov_oca.goose.rules import load_goose


def test_expected_visits_by_hand():
    # Squares 0..2, a coin: from 0 a 1 goes to 1 and a 2 finishes; from 1 a 1 finishes and a 2
    # bounces back to 1. Visits: start once; square 1 is entered with chance 1/2 and then held
    # for a geometric number of turns of mean 2: one expected visit.
    rules = board(2)
    m = goose_model(rules, 1)
    chain = m.build()
    v, report = chain.expected_visits()
    seats, locs = m.decode(chain.state_ids)
    at = {int(m.local.square[l[0]]): v[i] for i, l in enumerate(locs)}
    assert at == pytest.approx({0: 1.0, 1: 1.0}, abs=1e-14)
    assert report.residual < 1e-12
    assert v[list(chain.outcomes.values())].tolist() == [0.0]
    key, table = m.landing_events(chain, 0)
    land, _ = chain.expected_landings(key, table)
    # landings on 1: from 0 (chance 1/2), then every bounce back (one visit expected there, less the
    # first: 1/2); on 2 (the goal): once.
    assert land.tolist() == pytest.approx([0.0, 1.0, 1.0], abs=1e-14)


@pytest.mark.parametrize("players", [2, 3])
def test_landings_from_one_adjoint_solve_match_the_per_square_solves(players):
    rules = board(9, {2: {"jump": 5}, 4: {"miss": 1}, 6: {"wait": True}, 7: {"jump": 1}}, faces=3,
                  occupancy="occupant-returns")
    m = goose_model(rules, players)
    chain = m.build()
    for seat in range(players):
        key, table = m.landing_events(chain, seat)
        land, report = chain.expected_landings(key, table)
        per_square = chain.expected({str(q): ((key >= 0) & table[np.maximum(key, 0), q]).astype(np.int8)
                                     for q in range(rules.goal + 1)}, given_end=False, reports=[])
        assert land == pytest.approx([per_square[str(q)][0] for q in range(rules.goal + 1)], abs=1e-10)
        assert report.residual < 1e-10


def test_solve_reports_are_returned_not_kept():
    rules = board(9, {2: {"jump": 5}, 4: {"miss": 1}}, faces=3)
    chain = goose_model(rules, 2).build()
    mine: list = []
    chain.expected({"turns": chain.state_rewards["turns"]}, reports=mine)
    chain.outcome_probabilities(reports=mine)
    key, table = goose_model(rules, 2).landing_events(chain, 0)
    chain.hitting_probabilities(key, table, reports=mine)
    assert chain.reports == []
    assert [r.method.split(",")[0] for r in mine][-1] == "block BiCGSTAB"
    # No deadlock: the totals and the outcomes share one adjoint solve (the expected visits).
    assert len(mine) == 2 and mine[0].method.endswith("adjoint") and all(r.residual < 1e-10 for r in mine)
    a = chain.absorption[chain.init]  # the backward solve, asked for directly, agrees
    outcomes = chain.outcome_probabilities(reports=mine)
    assert [outcomes[k] for k in chain.outcomes] == pytest.approx(a[:-1].tolist(), abs=1e-12)


def test_interacting_players_beyond_reach_are_refused_up_front_with_the_estimate():
    rules = load_goose("oca-moderna")
    five = goose_model(rules, 5)
    with pytest.raises(TooLargeError) as err:
        five.build()  # 7.3e9 ids: refused before anything is allocated
    text = str(err.value)
    assert "7,269,667,840 ids" in text and "GiB just to explore" in text
    assert "simulate" in text and "crosscheck" in text and "\n" not in text
    four = goose_model(rules, 4)
    full = four.full_size  # 85,525,504 ids
    assert four.check_memory(avail=four.estimated_bytes()) is True
    # Room to explore but not for every id: the count decides, once known.
    assert four.check_memory(avail=2 * full * 9) is False
    with pytest.raises(TooLargeError, match=r"32,423,812 reachable states, about [\d.]+ GiB"):
        four.check_memory(avail=2 * full * 9, states=32_423_812)


def test_the_estimate_follows_the_counted_states():
    m = goose_model(load_goose("oca-moderna"), 3)
    chain = m.build()
    upper, counted = m.estimated_bytes(), m.estimated_bytes(chain.n, chain.n_transitions)
    assert counted < upper
    # 3 players, 469,896 states and 4.4M transitions measured at 0.41 GB peak (benchmarks/goose_scale.py)
    assert chain.n == 469_896
    assert 0.3e9 < counted < 0.6e9
