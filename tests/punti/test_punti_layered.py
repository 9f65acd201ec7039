"""The points game solved layer by layer agrees with the whole chain, figure by figure."""

from __future__ import annotations

import pytest
from support import TINY3, punti_within_bounds, same_punti, small, write

from markov_oca.core.errors import RulesError, TooLargeError
from markov_oca.punti import load_punti, punti_model, punti_text, solve_punti
from markov_oca.punti.layered import bounce_start, solve_layered
from markov_oca.punti.model import MODE_ALWAYS


@pytest.mark.parametrize("players,bet,goal", [(2, "never", 7), (2, "always", 7), (2, "always", 9),
                                               (3, "never", None), (3, "always", None)])
def test_layered_equals_chain_with_bankruptcy(tmp_path, players, bet, goal):
    # Boards where bets, bankruptcy and mutual aid are common, and bounces cycle at the end.
    path = small(tmp_path, goal=goal) if goal else write(tmp_path, "tiny3", TINY3)
    chain = solve_punti(path, players, bet=bet, method="chain")
    lay = solve_punti(path, players, bet=bet, method="layered")
    assert chain.method == "chain" and lay.method == "layered"
    assert sum(s.bankrupt for s in chain.seats) > 0.001  # the boards do exercise bankruptcy
    same_punti(chain, lay)
    assert lay.length is None and any("bankruptcy is reachable" in n for n in lay.notes)
    assert "length distribution not computed" in punti_text(lay)


def test_layered_overshoot_finish(tmp_path):
    path = write(tmp_path, "finish", TINY3.replace("[squares]", '[rules]\novershoot = "finish"\n[squares]'))
    assert bounce_start(punti_model(load_punti(path), 3)) == 7
    same_punti(solve_punti(path, 3, method="chain"), solve_punti(path, 3, method="layered"))


def test_layered_shipped_two_players_with_length_from_the_race():
    # No bankruptcy is reachable on the example board with two players: the length distribution
    # comes from the race alone and must equal the whole chain's.
    chain = solve_punti("gioco-oca-punti", 2, method="chain")
    lay = solve_punti("gioco-oca-punti", 2, method="layered")
    same_punti(chain, lay, tol=1e-10)  # both bounds are wider (about 1e-9 on the chain's turns, 1.4e-10 here)
    punti_within_bounds(chain, lay)
    assert lay.length is not None
    assert lay.length.pmf == pytest.approx(chain.length.pmf, abs=1e-12)
    assert (lay.length.median, lay.length.p90, lay.length.p99) == (chain.length.median, chain.length.p90,
                                                                   chain.length.p99)
    d = lay.to_dict()
    assert d["method"] == "layered" and d["length"]["pmf"]


@pytest.mark.slow
def test_layered_kernel_invariants():
    # Every layer's system is solved to a tiny true residual, no mass is lost, and the layers
    # never go backwards (an inflow left over would raise).
    m = punti_model(load_punti("gioco-oca-punti"), 2)
    ls = solve_layered(m, MODE_ALWAYS)
    assert ls.residual < 1e-13
    assert ls.outcome.sum() == pytest.approx(1.0, abs=1e-10)
    assert ls.bankruptcy_reachable  # betting down to the last points, then a loss
    assert ls.layers > 30 and ls.largest_layer < ls.states


def test_method_errors(tmp_path):
    path = small(tmp_path)
    with pytest.raises(RulesError, match="--method"):
        solve_punti(path, 2, method="fast")
    with pytest.raises(RulesError, match="optimal"):
        solve_punti(path, 2, bet="optimal", method="layered")


def test_auto_refuses_what_neither_the_chain_nor_independent_paths_can_do():
    # Three players betting on the shipped board: the chain does not fit and bets couple the
    # balances; auto refuses at once, with the estimate, naming the layered solve (hours).
    m = punti_model(load_punti("gioco-oca-punti"), 3)
    assert not m.fits_chain()
    with pytest.raises(TooLargeError, match=r"states.*--method layered"):
        solve_punti("gioco-oca-punti", 3, bet="always")
