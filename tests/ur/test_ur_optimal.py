"""Optimal play of the Royal Game of Ur: values derived by hand, and the Bellman equations."""

from __future__ import annotations

import numpy as np
import pytest

from markov_oca.ur.kernel import AGAIN, GAME_OVER, MOVER_WINS, moves
from markov_oca.ur.optimal import load_values, save_values, solve_optimal
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace

ON_14 = 1 << 5  # private-square mask bit of path square 14
ON_13 = 1 << 4


@pytest.fixture(scope="module")
def one_piece():
    return solve_optimal(load_ur("ur", {"pieces": 1}))


def test_last_square_race_is_four_sevenths(one_piece):
    # Each side has its one piece on square 14, light to move. Only a throw of 1 (4/16)
    # bears off; otherwise dark gets the same chance: V = 1/4 + 3/4 * 3/4 * V = 4/7.
    sp = UrSpace(1)
    s = sp.rank(0, ON_14, 0, 0, ON_14, 0, 0)
    assert one_piece.values[s] == pytest.approx(4 / 7, abs=1e-11)


def test_thirteen_against_fourteen(one_piece):
    # Mine on 13, theirs on 14, mine to move. A 1 (4/16) reaches the rosette 14 and throws
    # again: 4/7 as above; a 2 (6/16) bears off; 0, 3, 4 (6/16) pass. After a pass the
    # opponent wins with W = 1/4 + 3/4 (1 - V). So V = 1/7 + 3/8 + 3/8 (1 - W) = 1/7 + 3/8
    # + 9/32 V, V = 116/161.
    sp = UrSpace(1)
    s = sp.rank(0, ON_13, 0, 0, ON_14, 0, 0)
    assert one_piece.values[s] == pytest.approx(116 / 161, abs=1e-11)


def test_four_sided_die_last_square():
    # ur-simplificado: a d4, so a 1 comes with chance 1/4 too: again 4/7.
    sol = solve_optimal(load_ur("ur-simplificado", {"pieces": 1}))
    sp = UrSpace(1)
    assert sol.values[sp.rank(0, ON_14, 0, 0, ON_14, 0, 0)] == pytest.approx(4 / 7, abs=1e-11)


@pytest.mark.parametrize("name,pieces", [("ur", 2), ("ur-simplificado", 2), ("ur-7-rescatados", 2)])
def test_values_satisfy_bellman_equations(name, pieces):
    rules = load_ur(name, {"pieces": pieces})
    sol = solve_optimal(rules)
    v = sol.values
    assert sol.residual <= 1e-12
    assert ((v >= 0) & (v <= 1)).all()
    mv = moves(UrSpace(pieces), None, rules)
    # Recompute every position's value from its successors with numpy and compare.
    val = np.where(mv.events & GAME_OVER, np.where(mv.events & MOVER_WINS, 1.0, 0.0),
                   np.where(mv.events & AGAIN, v[np.maximum(mv.succ, 0)], 1.0 - v[np.maximum(mv.succ, 0)]))
    val = np.where(np.arange(7)[None, None, :] < mv.n_moves[:, :, None], val, -1.0)
    best = val.max(axis=2)
    bellman = (best * mv.probs[None, :]).sum(axis=1)
    bellman = np.where(mv.terminal, np.where(mv.win > 0, 1.0, 0.0), bellman)
    assert np.abs(bellman - v).max() < 1e-10


def test_values_save_and_memory_map(tmp_path, one_piece):
    path = tmp_path / "ur1.npy"
    save_values(one_piece.values, path)
    back = load_values(path)
    assert isinstance(back, np.memmap)
    assert np.array_equal(back, one_piece.values)


def test_value_iteration_too_large_for_memory_is_refused_up_front(monkeypatch):
    # The move table is held whole; a solve that cannot fit must stop before building it.
    import markov_oca.core.memory as gm
    from markov_oca.core.errors import TooLargeError
    from markov_oca.ur.optimal import estimated_bytes, solve_optimal

    rules = load_ur("ur", {"pieces": 5})
    monkeypatch.setattr(gm, "available_memory", lambda: estimated_bytes(load_ur("ur", {"pieces": 3})) + 1)
    with pytest.raises(TooLargeError, match=r"ur with 5 pieces: optimal values over 14,680,840 positions .* "
                                            r"\(try --pieces 3 or fewer\)"):
        solve_optimal(rules)
