"""Any absorbing chain: textbook closed forms, a dense solve, closed classes, bad matrices, files in and out."""

from __future__ import annotations

import doctest
import importlib
from fractions import Fraction as F

import numpy as np
import pytest
import scipy.sparse as sp

from markov_oca import api
from markov_oca.analysis.build import ChainError, from_matrix, from_networkx
from markov_oca.analysis.general import analyse, expected_visits, hitting_probability
from markov_oca.io.chains import read_chain
from markov_oca.io.drn import write_drn
from markov_oca.io.graph import to_networkx
from markov_oca.io.write import write_chain


def ruin_matrix(target: int, win):
    P = np.zeros((target + 1, target + 1), object)
    P[0, 0] = P[target, target] = 1
    for i in range(1, target):
        P[i, i + 1], P[i, i - 1] = win, 1 - win
    return P


def test_gamblers_ruin_closed_forms_exactly():
    # From 3 to 10 winning each bet with 2/5: the textbook P(reach 10) and expected duration, as fractions.
    p, q, start, N = F(2, 5), F(3, 5), 3, 10
    r = q / p
    reach = (1 - r ** start) / (1 - r ** N)
    duration = start / (q - p) - N / (q - p) * reach
    chain = from_matrix(ruin_matrix(N, p), init=start, labels={"broke": [0], "rich": [N]})
    res = analyse(chain, hit={"halfway": [5]})
    assert res.exact and res.outcomes == {"broke": 1 - reach, "rich": reach}
    assert res.steps == duration and res.deadlock == 0
    # reaching 5 from 3 is the ruin problem on 0..5
    assert res.hitting["halfway"] == (1 - r ** start) / (1 - r ** 5)
    assert res.agreement < 1e-12
    # the floats alone, to the closed forms
    fl = analyse(chain, exact=False)
    assert abs(fl.outcomes["rich"] - float(reach)) < 1e-14 and abs(fl.steps - float(duration)) < 1e-12
    pmf = np.array(fl.length.pmf)
    assert abs(pmf.sum() + fl.length.tail_mass - 1) < 1e-12
    assert abs(fl.length.mean - float(duration)) < 1e-6
    assert pmf[1] == 0 and pmf[2] == 0 and abs(pmf[3] - 0.6 ** 3) < 1e-15  # ruin in three straight losses


def test_random_chain_against_dense_solve():
    rng = np.random.default_rng(7)
    n, k = 120, 3
    P = rng.random((n, n)) * (rng.random((n, n)) < 0.08)
    P[:, n - k:] += rng.random((n, k)) * rng.uniform(0.05, 1, size=(n, 1))
    P[n - k:] = 0
    P[n - k:, n - k:] = np.eye(k)
    P /= P.sum(axis=1, keepdims=True)
    cost = rng.random(n)
    chain = from_matrix(sp.csr_array(P), init=4, rewards={"cost": cost})
    res = analyse(chain, hit={"s7": [7]})
    m = n - k
    Q, R = P[:m, :m], P[:m, m:]
    Nrow = np.linalg.solve((np.eye(m) - Q).T, np.eye(m)[4])
    H = np.linalg.solve(np.eye(m) - Q, R)  # absorption from every state
    assert np.allclose([c.absorption for c in res.classes], Nrow @ R, atol=1e-12, rtol=0)
    assert np.allclose(res.visits[:m], Nrow, atol=1e-12, rtol=0)
    assert abs(res.steps - Nrow.sum()) < 1e-11
    assert abs(res.rewards["cost"]["total"] - Nrow @ cost[:m]) < 1e-11
    for c, cls in enumerate(res.classes):
        assert abs(cls.steps_given - (Nrow @ H[:, c]) / (Nrow @ R[:, c])) < 1e-9
    # hitting state 7: absorb at 7, solve densely
    keep = [i for i in range(m) if i != 7]
    hq = np.linalg.solve(np.eye(m - 1) - Q[np.ix_(keep, keep)], Q[keep, 7])
    assert abs(res.hitting["s7"] - hq[keep.index(4)]) < 1e-11
    assert max(s["residual"] for s in res.solver) < 1e-11
    assert res.solver[0]["residual_1"] < 1e-10


def test_closed_class_is_a_named_deadlock_by_hand():
    h, q = F(1, 2), F(1, 4)
    P = [[h, q, q, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, h, 0, h], [0, 0, 0, 1, 0]]
    chain = from_matrix(P, init=0, labels={"home": [1]})
    res = analyse(chain, rewards={"coins": [3, 100, 100, 100, 100]})
    assert [(c.name, c.kind, c.states.tolist()) for c in res.classes] == [
        ("home", "absorbing", [1]), ("closed class 1", "closed class", [2, 3, 4])]
    assert res.absorption == {"home": F(1, 2), "closed class 1": F(1, 2)} and res.deadlock == F(1, 2)
    assert res.steps == 2 and res.visits_exact[:2] == [2, 0]
    assert res.rewards["coins"]["total"] == 6  # two steps from state 0, 3 coins each; none counted once absorbed
    assert res.length.pmf[:3] == [0.0, 0.5, 0.25]
    assert res.to_dict()["classes"][1]["size"] == 3
    # Chain's own analyses see the class as deadlock
    assert chain.outcome_probabilities() == {"home": 0.5, "deadlock": 0.5}


def test_float_rows_made_exactly_stochastic():
    P = np.array([[0.1, 0.2, 0.7 + 1e-13], [0, 1, 0], [1e-300, 0, 1 - 1e-16]])
    chain = from_matrix(P, init=0)
    assert (chain.row_sums() == chain.denom).all()
    assert chain.pnum[2, 0] > 0  # a tiny chance is kept: state 2 still leaves
    assert chain.outcomes == {"state 1": 1} and not chain.exact


@pytest.mark.parametrize("P, init, message", [
    ([[0.5, 0.4], [0, 1]], 0, "state 0: probabilities sum to 0.9, not 1"),
    ([[F(1, 2), F(1, 3)], [0, 1]], 0, "state 0: probabilities sum to 5/6, not 1 (exactly)"),
    ([[1.5, -0.5], [0, 1]], 0, "state 0: entry to state 1 is negative (-0.5)"),
    ([[np.nan, 1], [0, 1]], 0, "state 0: entry to state 0 is nan"),
    ([[0.5, 0.5, 0], [0, 1, 0]], 0, "the matrix has shape (2, 3)"),
    ([0.5, 0.5], 0, "the matrix has shape (2,)"),
    ([[0.0, 0.0], [0.0, 1.0]], 0, "state 0: probabilities sum to 0.0, not 1 (tolerance 1e-09) (give an absorbing"),
    ([[1, 0], [0, 1]], 5, "init: init 5 is not a state (0..1)"),
])
def test_bad_matrices_one_line(P, init, message):
    with pytest.raises(ChainError) as e:
        from_matrix(P, init=init)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_bad_files_one_line(tmp_path):
    mdp = tmp_path / "m.drn"
    mdp.write_text("@type: MDP\n@parameters\n\n@nr_states\n1\n@model\nstate 0\n\taction 0\n\t\t0 : 1\n")
    with pytest.raises(ChainError, match=r"m.drn: @type: a DRN model of type MDP: only DTMCs"):
        read_chain(mdp)
    bad = tmp_path / "b.tra"
    bad.write_text("dtmc\n0 1 0.5\n0 0 0.4\n1 1 1\n")
    with pytest.raises(ChainError, match=r"b.tra: state 0: probabilities sum to 0.9"):
        read_chain(bad)
    with pytest.raises(ChainError, match="no such file"):
        read_chain(tmp_path / "none.drn")


def test_round_trip_through_our_drn_and_explicit_files(tmp_path):
    p = F(2, 5)
    chain = from_matrix(ruin_matrix(6, p), init=2, labels={"broke": [0], "rich": [6]},
                        rewards={"bet": [0, 1, 2, 3, 4, 5, 0]})
    want = analyse(chain)
    back = analyse(read_chain(write_drn(chain, tmp_path / "r.drn")))
    assert back.exact and back.outcomes == want.outcomes and back.steps == want.steps
    assert back.rewards["bet"]["total"] == want.rewards["bet"]["total"]
    for flavour in ("storm", "prism"):
        files = write_chain(chain, tmp_path / flavour, flavour)
        got = analyse(read_chain(files[0]))
        assert abs(got.outcomes["rich"] - float(want.outcomes["rich"])) < 1e-14
        assert abs(got.rewards["bet"]["total"] - float(want.rewards["bet"]["total"])) < 1e-12


def test_one_of_our_games_as_any_chain(tmp_path):
    chain = api.build("oca-moderna", players=1)
    res = api.solve("oca-moderna", 1, landings=False)
    ours = analyse(chain, exact=False)
    assert abs(ours.deadlock - float(res.deadlock)) < 1e-10
    assert abs(ours.outcomes[next(iter(chain.outcomes))] - float(res.seats[0].win)) < 1e-10
    read = analyse(read_chain(write_drn(chain, tmp_path / "o1.drn")), exact=False)
    assert abs(read.deadlock - ours.deadlock) < 1e-12 and abs(read.steps - ours.steps) < 1e-9
    G = to_networkx(chain)
    g = analyse(from_networkx(G), exact=False)
    assert abs(g.deadlock - ours.deadlock) < 1e-12


def test_storm_reads_our_drn_and_we_read_storms(tmp_path):
    stormpy = pytest.importorskip("stormpy")
    from stormpy.core._io import export_to_drn
    from stormpy.examples.files import prism_dtmc_die

    chain = from_matrix(ruin_matrix(8, F(2, 5)), init=3, labels={"broke": [0], "rich": [8]})
    ours = analyse(chain)
    model = stormpy.build_model_from_drn(str(write_drn(chain, tmp_path / "r.drn")))
    env = stormpy.environments.sound()
    env.solver().native().precision = stormpy.Rational("1/10000000000")
    prop = stormpy.parse_properties('P=? [F "rich"]')[0]
    got = stormpy.model_checking(model, prop, environment=env).get_value(model.initial_states[0])
    assert abs(got - float(ours.outcomes["rich"])) < 1e-9
    # Knuth's die as Storm builds and exports it: each face 1/6, 11/3 coin flips on average
    prism = stormpy.parse_prism_program(prism_dtmc_die)
    die = stormpy.build_model(prism)
    export_to_drn(die, str(tmp_path / "die.drn"))
    res = analyse(read_chain(tmp_path / "die.drn"))
    assert res.states == die.nr_states and len(res.outcomes) == 6
    assert all(abs(v - 1 / 6) < 1e-12 for v in res.outcomes.values())
    assert abs(res.steps - 11 / 3) < 1e-12


def test_hitting_and_visits_helpers():
    chain = from_matrix([[0, 0.5, 0.5, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]], init=0,
                        labels={"left": [1]})
    assert hitting_probability(chain, "left")[0] == 0.5
    assert hitting_probability(chain, [0])[0] == 1.0  # time 0 counts
    v, rep = expected_visits(chain)
    assert v.tolist() == [1.0, 0.5, 0.0, 0.0] and rep["residual"] == 0.0
    with pytest.raises(ChainError, match="no label 'right'"):
        hitting_probability(chain, "right")
    with pytest.raises(ChainError, match="exact mode needs rational"):
        analyse(chain, exact=True)


def test_notebook_views():
    res = analyse(from_matrix([[F(1, 2), F(1, 2)], [0, 1]], init=0))
    html = res._repr_html_()
    assert html.startswith("<table>") and "expected steps to absorption</th><td>2</td>" in html
    pd = pytest.importorskip("pandas")
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame.loc["state 1", "absorption"] == 1
    assert res.to_frame("states")["visits"].tolist() == [2.0, 0.0]


@pytest.mark.parametrize("name", ["markov_oca.analysis.build", "markov_oca.analysis.general",
                                  "markov_oca.analysis.absorbing", "markov_oca.analysis.bounds",
                                  "markov_oca.linalg.certify",
                                  "markov_oca.io.chains"])
def test_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_docs_page_runs():
    from pathlib import Path

    page = Path(__file__).parents[2] / "docs" / "any-chain.md"
    result = doctest.testfile(str(page), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 20
