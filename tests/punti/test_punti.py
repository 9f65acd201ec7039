"""The Italian points game: hand-derived economies, conservation of points, exact against simulation."""

from __future__ import annotations

import numpy as np
import pytest
from support import TINY3, TWO_SQUARES, against_simulation, small, write

from markov_oca.core.errors import RulesError
from markov_oca.punti import load_punti, punti_model, punti_text, solve_punti
from markov_oca.punti.model import MODE_ALWAYS, MODE_DECIDE, MODE_NEVER
from markov_oca.punti.optimal import policy_chain, solve_policy
from markov_oca.punti.simulate import simulate_punti

# The same board where square 2 bankrupts unless mutual aid (one throw of the two-faced die) saves.
AID = """
[game]
name = "aid"
family = "punti"
goal = 3
players = 2
[dice]
faces = 2
[economy]
dowry = 15
entry_tax = 0
head_fee = 0
bank_fund = 100
aid = 10
aid_throws = 1
aid_uses = 1
[squares]
2 = { pay_bank = 20 }
3 = { collect_bank = 5 }
"""








# ----------------------------------------------------------------------------- derived by hand


def test_two_square_economy_by_hand(tmp_path):
    # Seat 1 (A) throws first. A 2 from square 1 finishes: A 120, B 100. A 1 lands on 2: A pays B 10.
    # Then B: a 2 finishes (B 130, A 90); a 1 lands on 2 and pays A back (100, 100), A to move, both
    # on 2, where each throw ends the game (a 1 reaches 3) or bounces back to 2 and pays 10 again.
    # From there A wins with p = 1/2 + 1/4 p = 2/3, so A wins 1/2 + 1/4 * 2/3 = 2/3 of the games,
    # always with (120, 100); B wins 1/3 with (90, 130). Every turn ends the game with chance 1/2.
    r = solve_punti(write(tmp_path, "two", TWO_SQUARES), 2)
    a, b = r.seats
    assert a.win == pytest.approx(2 / 3, abs=1e-12) and b.win == pytest.approx(1 / 3, abs=1e-12)
    assert a.tie == 0 and b.tie == 0 and a.bankrupt == 0 and b.bankrupt == 0
    assert a.points_pmf == pytest.approx({90: 1 / 3, 120: 2 / 3}, abs=1e-12)
    assert b.points_pmf == pytest.approx({100: 2 / 3, 130: 1 / 3}, abs=1e-12)
    assert a.points == pytest.approx(110, abs=1e-9) and b.points == pytest.approx(110, abs=1e-9)
    assert r.expected["turns"] == pytest.approx(2.0, abs=1e-10)
    assert r.length.pmf[1:6] == pytest.approx([0.5, 0.25, 0.125, 0.0625, 0.03125], abs=1e-12)
    assert r.total_points == 300 and r.bank_start == 100


def test_generic_chain_analyses_agree(tmp_path):
    # The report's figures come from one forward solve of the visits; the Chain's own backward
    # analyses must give the same outcome chances and expected turns.
    from markov_oca.punti import build_punti_chain

    path = small(tmp_path, goal=7)
    for bet in ("always", "optimal"):
        r = solve_punti(path, 2, bet=bet)
        chain = build_punti_chain(path, 2, bet=bet).chain
        probs = chain.outcome_probabilities()
        assert probs["deadlock"] == 0
        for name, p in r.outcomes.items():
            assert probs[name] == pytest.approx(p, abs=1e-10)
        turns = chain.expected({"turns": chain.state_rewards["turns"]})["turns"][0]
        assert turns == pytest.approx(r.expected["turns"], abs=1e-9)


def test_bankruptcy_and_mutual_aid_by_hand(tmp_path):
    # A (15 points) throws first: a 2 finishes (A 20, B 15). A 1 lands on 2, a loss of 20 A cannot
    # cover: mutual aid (one throw, 1/2). Failure: A is bankrupt, the game ends, B wins (0, 15).
    # Success: B gives 10, A pays 20 (A 5, B 5). B throws: a 2 finishes (A 5, B 10: B wins); a 1
    # lands on 2: B cannot cover 20 even with aid (A gives its 5, B has 10), so B is bankrupt and A
    # wins with 0 (aid succeeded, 1/2) or 5 (aid failed, 1/2).
    r = solve_punti(write(tmp_path, "aid", AID), 2)
    a, b = r.seats
    assert a.win == pytest.approx(5 / 8, abs=1e-12) and b.win == pytest.approx(3 / 8, abs=1e-12)
    assert a.bankrupt == pytest.approx(1 / 4, abs=1e-12) and b.bankrupt == pytest.approx(1 / 8, abs=1e-12)
    assert a.aid == pytest.approx(1 / 2, abs=1e-12) and a.aid_success == pytest.approx(1 / 4, abs=1e-12)
    assert b.aid == pytest.approx(1 / 8, abs=1e-12) and b.aid_success == pytest.approx(1 / 16, abs=1e-12)
    assert a.points == pytest.approx(10 + 15 / 16, abs=1e-10) and b.points == pytest.approx(12.5, abs=1e-10)
    assert a.points_pmf == pytest.approx({0: 1 / 4 + 1 / 16, 5: 1 / 16 + 1 / 8, 20: 1 / 2}, abs=1e-12)
    assert b.points_pmf == pytest.approx({0: 1 / 8, 10: 1 / 8, 15: 3 / 4}, abs=1e-12)


# ----------------------------------------------------------------------------- conservation


def _check_conservation(model, pc) -> int:
    """Every branch of the chain: the balances' change plus the bank's gain is zero; nothing negative."""
    chain = pc.chain
    n = pc.n_states
    total = model.rules.total_points(model.players)
    d = model.decode(chain.state_ids)
    src = d.points.sum(axis=1)
    assert (d.points >= 0).all() and (src <= total).all()
    bank_gain, _aid, final = model.details(pc)
    valid = chain.next[:n] >= 0
    to_state = valid & (chain.next[:n] < n)
    dst = np.where(to_state, src[np.minimum(np.maximum(chain.next[:n], 0), n - 1)], 0)
    ending = valid & ~to_state
    dst = np.where(ending, final.sum(axis=2), dst)
    assert (final[ending] >= 0).all()
    change = np.where(valid, dst - src[:, None] + bank_gain, 0)
    assert not change.any(), "points created or destroyed"
    bank_before = total - src
    assert (np.where(valid, bank_before[:, None] + bank_gain, 0) >= 0).all(), "the bank went below zero"
    return int(valid.sum())


@pytest.mark.parametrize("players,mode", [(2, MODE_DECIDE), (3, MODE_DECIDE), (3, MODE_ALWAYS)])
def test_points_conserved_on_every_transition_small(tmp_path, players, mode):
    rules = load_punti(small(tmp_path, goal=7) if players == 2 else write(tmp_path, "tiny3", TINY3))
    m = punti_model(rules, players)
    pc = m.build(mode)
    assert (pc.chain.row_sums()[pc.n_states:] == pc.chain.denom).all()
    assert _check_conservation(m, pc) > 1000
    assert pc.broke.any()  # bankruptcies happen on this board


def test_points_conserved_on_every_transition_shipped():
    m = punti_model(load_punti("gioco-oca-punti"), 2)
    pc = m.build(MODE_NEVER)
    assert (pc.chain.row_sums() == pc.chain.denom).all()
    assert _check_conservation(m, pc) > 1_000_000


def test_policy_chain_conserves_and_is_a_chain(tmp_path):
    rules = load_punti(small(tmp_path, goal=7))
    m = punti_model(rules, 2)
    mdp = m.build(MODE_DECIDE)
    bet, info = solve_policy(mdp)
    pc = policy_chain(mdp, bet)
    assert (pc.chain.row_sums() == pc.chain.denom).all()
    _check_conservation(m, pc)
    assert info["bet_states"] > 0


# ----------------------------------------------------------------------------- the bet as a decision


def test_optimal_two_players_value_and_shares(tmp_path):
    path = small(tmp_path, goal=7)
    res = {bet: solve_punti(path, 2, bet=bet) for bet in ("never", "always", "optimal")}
    opt = res["optimal"]
    assert opt.policy["converged"]
    # Zero-sum: seat 1's optimal share is the game's value, the value iteration's figure.
    assert opt.seats[0].win_share == pytest.approx(opt.policy["value"], abs=1e-9)
    for r in res.values():
        assert sum(s.win_share for s in r.seats) == pytest.approx(1.0, abs=1e-12)
    # The saddle point (each seat's policy a best reply to the other's) is test_optimal_is_a_best_response.
    assert 0 < opt.seats[0].win_share < 1


def test_optimal_is_a_best_response(tmp_path):
    from markov_oca.punti.optimal import _iterate, decision_states, shares

    rules = load_punti(small(tmp_path, goal=7))
    m = punti_model(rules, 2)
    mdp = m.build(MODE_DECIDE)
    bet, info = solve_policy(mdp)
    n = mdp.n_states
    mover = mdp.chain.mover[:n]
    deciding = decision_states(mdp)
    for seat in (0, 1):
        # Seat `seat` free to choose, the other fixed at its optimal policy: no better than the value.
        side = np.where(deciding & (mover == seat), 1, 0).astype(np.int8)
        v, _, _ = _iterate(mdp, shares(mdp.masks, seat), side, bet, 1e-13, 100_000)
        own = info["value"] if seat == 0 else 1 - info["value"]
        assert v[mdp.chain.init] == pytest.approx(own, abs=1e-9)


def test_three_players_optimal_iterated_best_responses(tmp_path):
    r = solve_punti(write(tmp_path, "tiny3", TINY3), 3, bet="optimal")
    assert r.policy["rounds"] >= 1 and "iterated best responses" in r.policy["method"]
    assert sum(s.win_share for s in r.seats) == pytest.approx(1.0, abs=1e-12)


# ----------------------------------------------------------------------------- exact against simulation




@pytest.mark.parametrize("players,bet", [(2, "always"), (2, "never"), (3, "always"), (3, "never")])
def test_exact_against_simulation_small(tmp_path, players, bet):
    path = small(tmp_path, goal=7) if players == 2 else write(tmp_path, "tiny3", TINY3)
    r = solve_punti(path, players, bet=bet)
    if bet == "always":  # the stakes make bankruptcy and mutual aid common
        assert any(s.bankrupt > 0.01 for s in r.seats) and any(s.aid > 0.01 for s in r.seats)
    sim = simulate_punti(load_punti(path), players, bet=bet, games=20_000, seed=7)
    against_simulation(r, sim)


def test_exact_against_simulation_shipped_board():
    r = solve_punti("gioco-oca-punti", 2, bet="never")
    sim = simulate_punti(load_punti("gioco-oca-punti"), 2, bet="never", games=20_000, seed=3)
    against_simulation(r, sim)


def test_optimal_policy_simulated(tmp_path):
    from markov_oca.punti.optimal import optimal_chain

    rules = load_punti(small(tmp_path, goal=7))
    m = punti_model(rules, 2)
    _pc, _info, policy = optimal_chain(m)
    r = solve_punti(rules, 2, bet="optimal")
    sim = simulate_punti(rules, 2, bet="optimal", games=20_000, seed=11, policy=policy)
    against_simulation(r, sim)


# ----------------------------------------------------------------------------- results and report


def test_results_dict_and_report(tmp_path):
    r = solve_punti(write(tmp_path, "two", TWO_SQUARES), 2, postcards=200)
    d = r.to_dict()
    assert d["schema"] == "markov_oca.solve-punti/1" and d["bet"] == "never"
    assert len(d["seats"]) == 2 and "ties" in d
    text = punti_text(r)
    assert "win" in text and "bankrupt" in text and "postcards" in text


def test_postcards_change_the_game():
    rules = load_punti("gioco-oca-punti")
    sim = simulate_punti(rules, 2, games=300, seed=5, postcards=True)
    assert sim.cards_played > 0


def test_shipped_board_reads_the_rule_text_economy():
    r = load_punti("gioco-oca-punti")
    assert (r.goal, r.faces, r.dowry, r.entry_tax, r.head_fee, r.bet_cost, r.bet_prize, r.aid, r.aid_uses) == (
        37, 6, 200, 50, 5, 10, 50, 10, 1)
    assert r.square(35).pulcinella == 2 and r.aid_chance == (11, 36)
    assert r.initial_balances(3) == [160, 145, 145]
    assert r.family == "punti" and r.seed.startswith("the Gioco dell'Oca played for points, as an Italian")


# ----------------------------------------------------------------------------- a user's board


def test_user_board_and_options(tmp_path):
    path = write(tmp_path, "mine", TWO_SQUARES)
    r = load_punti(path, {"aid_uses": "1", "overshoot": "finish"})
    assert r.aid_uses == 1 and r.overshoot == "finish"
    res = solve_punti(path, 2, options={"overshoot": "finish"})
    assert sum(s.win_share for s in res.seats) == pytest.approx(1.0)


BAD = [
    ("unknown_key", TWO_SQUARES.replace("goal = 3", "goal = 3\ncolour = 'red'"), "game.colour"),
    ("two_money_effects", TWO_SQUARES.replace("pay_each = 10", "pay_each = 10, pay_bank = 5"), "squares.2"),
    ("unknown_effect", TWO_SQUARES.replace("pay_each = 10", "teleport = 10"), "squares.2.teleport"),
    ("negative_amount", TWO_SQUARES.replace("pay_each = 10", "pay_each = -10"), "squares.2.pay_each"),
    ("square_one", TWO_SQUARES + "1 = { pay_bank = 5 }\n", "squares.1"),
    ("off_board", TWO_SQUARES + "9 = { pay_bank = 5 }\n", "squares.9"),
    ("three_pulcinellas", TWO_SQUARES.replace("pay_each = 10", "pulcinella = 3"), "squares.2.pulcinella"),
    ("bad_overshoot", TWO_SQUARES + "[rules]\novershoot = 'wrap'\n", "rules.overshoot"),
    ("bad_economy", TWO_SQUARES.replace("dowry = 100", "dowry = 'lots'"), "economy.dowry"),
    ("dowry_too_small", TWO_SQUARES.replace("entry_tax = 0", "entry_tax = 150"), "economy.dowry"),
    ("wrong_family", TWO_SQUARES.replace('family = "punti"', 'family = "ur"'), "game.family"),
    ("broken", "[game\nname = 1", "invalid TOML"),
]


@pytest.mark.parametrize("name,text,key", BAD, ids=[b[0] for b in BAD])
def test_bad_board_one_line_error(tmp_path, name, text, key):
    path = write(tmp_path, name, text)
    with pytest.raises(RulesError) as exc:
        load_punti(path)
    msg = str(exc.value)
    assert str(path) in msg and key in msg and "\n" not in msg


def test_bad_options_and_players(tmp_path):
    path = write(tmp_path, "two", TWO_SQUARES)
    with pytest.raises(RulesError, match="unknown option 'nonsense'"):
        load_punti(path, {"nonsense": 1})
    with pytest.raises(RulesError, match="option head_fee_to"):
        load_punti(path, {"head_fee_to": "me"})
    with pytest.raises(RulesError, match="players"):
        solve_punti(path, 1)
    with pytest.raises(RulesError, match="--bet"):
        solve_punti(path, 2, bet="sometimes")


def test_three_player_chain_on_the_shipped_board_is_refused_up_front():
    from markov_oca.core.errors import TooLargeError

    m = punti_model(load_punti("gioco-oca-punti"), 3)
    with pytest.raises(TooLargeError, match="states"):
        m.check_memory()


def test_points_quantiles_in_any_order():
    # The report asks for the median before the 10% and 90% points.
    from markov_oca.punti.report import quantiles

    pmf = {100: 0.1, 120: 0.3, 150: 0.4, 180: 0.2}
    assert quantiles(pmf, (0.5, 0.1, 0.9)) == [150, 100, 180]
    assert quantiles(pmf, (0.4, 0.8, 0.81)) == [120, 150, 180]
