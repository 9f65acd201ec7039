"""Independent paths: exact where no balance can change a move; equal to the whole chain figure by figure."""

from __future__ import annotations

import numpy as np
import pytest
from support import CALM, TINY3, against_simulation, punti_within_bounds, same_punti, write

from markov_oca.core.errors import RulesError, TooLargeError
from markov_oca.punti import load_punti, punti_model, punti_text, solve_punti
from markov_oca.punti.independent import applies, solve_independent
from markov_oca.punti.model import MODE_ALWAYS, MODE_NEVER
from markov_oca.punti.simulate import simulate_punti

# A shorter board for four players (their whole chain stays small): goal 7, bounce zone 5 and 6.
CALM4 = CALM.replace("goal = 9", "goal = 7").replace("5 = { collect_bank = 15, pulcinella = 1 }\n", "").replace(
    "9 = { collect_bank = 5 }", "7 = { collect_bank = 5 }")


def _same_length(a, b) -> None:
    n = min(len(a.length.pmf), len(b.length.pmf))
    assert np.abs(np.array(a.length.pmf[:n]) - np.array(b.length.pmf[:n])).max() < 1e-12
    assert sum(a.length.pmf[n:]) + sum(b.length.pmf[n:]) < 1e-9
    assert (a.length.median, a.length.p90, a.length.p99) == (b.length.median, b.length.p90, b.length.p99)


@pytest.mark.parametrize("players,overshoot", [(2, "bounce"), (3, "bounce"), (4, "bounce"), (3, "finish")])
def test_independent_equals_chain(tmp_path, players, overshoot):
    text = CALM4 if players == 4 else CALM
    path = write(tmp_path, "calm", text.replace("[squares]", f'[rules]\novershoot = "{overshoot}"\n[squares]'))
    assert applies(punti_model(load_punti(path), players), MODE_NEVER)[0]
    chain = solve_punti(path, players, method="chain")
    ind = solve_punti(path, players, method="independent")
    assert ind.method == "independent" and ind.states is None
    chain.states = chain.transitions = None  # independent paths build no chain to count
    same_punti(chain, ind)
    _same_length(chain, ind)
    # The seats' turns add up to the game's, and ties are really there (three-way included).
    assert sum(s.turns for s in ind.seats) == pytest.approx(ind.expected["turns"], rel=1e-12)
    assert ind.outcomes["seats 1 and 2 tie"] > 0
    assert players == 2 or ind.outcomes["seats 1, 2 and 3 tie"] > 0
    punti_within_bounds(chain, ind)
    if players == 4:  # the arrived seats' balances have one parity, seat 1's start another: no four-way tie
        name = "seats 1, 2, 3 and 4 tie"
        assert ind.outcomes[name] == chain.outcomes[name] == ind.bounds["outcomes"][name] == 0.0


def test_independent_shipped_two_players_equals_chain():
    chain = solve_punti("gioco-oca-punti", 2, method="chain")
    ind = solve_punti("gioco-oca-punti", 2, method="independent")
    chain.states = chain.transitions = None
    same_punti(chain, ind)
    _same_length(chain, ind)


def test_three_players_on_the_shipped_board():
    # The whole chain would hold hundreds of millions of states; auto takes independent paths.
    r = solve_punti("gioco-oca-punti", 3)
    assert r.method == "independent" and r.length is not None
    assert sum(s.win_share for s in r.seats) == pytest.approx(1.0, abs=1e-12)
    assert sum(r.outcomes.values()) == pytest.approx(1.0, abs=1e-12)
    for s in r.seats:
        assert sum(s.points_pmf.values()) == pytest.approx(1.0, abs=1e-12)
        assert s.bankrupt == 0 and s.aid == 0
    assert r.seats[0].win_share > r.seats[1].win_share > r.seats[2].win_share  # seat order: fee and tempo
    assert "independent paths" in punti_text(r)
    sim = simulate_punti(load_punti("gioco-oca-punti"), 3, bet="never", games=20_000, seed=11)
    against_simulation(r, sim)


def test_conditions_refused_with_a_reason(tmp_path):
    calm = write(tmp_path, "calm", CALM)
    m = punti_model(load_punti(calm), 3)
    ok, why = applies(m, MODE_ALWAYS)
    assert not ok and "bets" in why
    zone = write(tmp_path, "zone", CALM.replace("9 = { collect_bank = 5 }", "7 = { pay_bank = 5 }\n9 = {}"))
    ok, why = applies(punti_model(load_punti(zone), 3), MODE_NEVER)
    assert not ok and "square 7" in why and "bounce zone" in why
    poor = write(tmp_path, "poor", CALM.replace("dowry = 100", "dowry = 35"))
    ok, why = applies(punti_model(load_punti(poor), 3), MODE_NEVER)
    assert not ok and "cannot cover" in why
    bank = write(tmp_path, "bank", CALM.replace("bank_fund = 50", "bank_fund = 0").replace("entry_tax = 10",
                                                                                         "entry_tax = 0"))
    ok, why = applies(punti_model(load_punti(bank), 3), MODE_NEVER)
    assert not ok and "bank" in why
    with pytest.raises(RulesError, match=r"does not apply.*bounce zone"):
        solve_punti(zone, 3, method="independent")
    with pytest.raises(RulesError, match="optimal"):
        solve_punti(calm, 3, bet="optimal", method="independent")


def test_where_the_conditions_fail_the_chain_has_bankruptcy(tmp_path):
    # The check is not vacuous: on the board it refuses, bankruptcy does happen.
    tiny = write(tmp_path, "tiny3", TINY3)
    assert not applies(punti_model(load_punti(tiny), 3), MODE_NEVER)[0]
    poor = write(tmp_path, "poor", CALM.replace("dowry = 100", "dowry = 35"))
    r = solve_punti(poor, 3, method="chain")
    assert sum(s.bankrupt for s in r.seats) > 0


def test_player_law_is_a_distribution():
    m = punti_model(load_punti("gioco-oca-punti"), 3)
    out = solve_independent(m)
    assert out["lost"] < 1e-14
    assert out["length"].pmf.sum() == pytest.approx(1.0, abs=1e-14)
    assert out["points_pmf"].sum(axis=1) == pytest.approx(np.ones(3), abs=1e-14)


def test_outcome_turn_by_turn_equals_chain(tmp_path):
    # The crosscheck compares each outcome within a turn limit: the law of (outcome, length).
    path = write(tmp_path, "calm", CALM)
    for players in (2, 3):
        m = punti_model(load_punti(path), players)
        dist = solve_independent(m)["length"]
        from markov_oca.punti import build_punti_chain

        ref = build_punti_chain(path, players).chain.length_distribution(tail=1e-14)
        n = min(dist.by_outcome.shape[0], ref.by_outcome.shape[0])
        assert np.abs(dist.by_outcome[:n] - ref.by_outcome[:n]).max() < 1e-13
        assert dist.by_outcome.sum(axis=1) == pytest.approx(dist.pmf, abs=1e-15)


@pytest.mark.slow
def test_crosscheck_three_players_on_the_shipped_board():
    # The chain is out of reach; the exact side comes from independent paths. A correct
    # simulation passes; one where the head-of-game fee goes to the bank (equal dowries) fails.
    from markov_oca.api import crosscheck

    ok = crosscheck("gioco-oca-punti", players=3, games=20_000, seed=5)
    assert ok.passed and any("independent paths" in n for n in ok.notes)
    bad = crosscheck("gioco-oca-punti", players=3, games=20_000, seed=5,
                     simulate_options={"head_fee_to": "bank"})
    assert not bad.passed


def test_independent_refuses_by_itself_and_takes_six_players(tmp_path):
    # Called directly on a board it does not apply to, it refuses at once (one player's support
    # would never end); six players need no joint state ids, so their overflow does not matter.
    zone = write(tmp_path, "zone", '[game]\nname = "zone"\nfamily = "punti"\ngoal = 5\n[dice]\nfaces = 3\n'
                                   '[squares]\n4 = { pay_bank = 5 }\n')
    with pytest.raises(RulesError, match="bounce zone"):
        solve_independent(punti_model(load_punti(zone), 2))
    six = write(tmp_path, "six", CALM.replace("bank_fund = 50", "bank_fund = 100"))
    with pytest.raises(TooLargeError, match="overflow"):
        punti_model(load_punti(six), 6).check_ids()
    r = solve_punti(six, 6)
    assert r.method == "independent"
    assert sum(s.win_share for s in r.seats) == pytest.approx(1.0, abs=1e-12)
    assert sum(r.length.pmf) == pytest.approx(1.0, abs=1e-12)
