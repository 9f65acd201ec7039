"""The whole-game Ur machinery on small piece counts: the layered optimal solve, its checkpoints
and table, the policy sweeps against the chain, and the RoyalUr .rgu file read back."""

from __future__ import annotations

import json

import numpy as np
import pytest

from markov_oca.ur.chain import ur_chain
from markov_oca.ur.layered import (
    bellman_residual,
    layer_members,
    layers,
    load_table,
    solve_layered,
    terminal_values,
)
from markov_oca.ur.optimal import solve_optimal_whole
from markov_oca.ur.rules import load_ur
from markov_oca.ur.solve import solve_ur
from markov_oca.ur.state import UrSpace
from markov_oca.ur.sweeps import evaluate_policies, length_distribution
from markov_oca.ur.table import find_table, read_rgu, write_table

ON_14 = 1 << 5
ON_13 = 1 << 4


@pytest.fixture(scope="module")
def two():
    rules = load_ur("ur", {"pieces": 2})
    return rules, solve_layered(rules, residual=True)


def test_layers_cover_every_position_once():
    # Every position not over is in exactly one layer; with the positions over, the whole space.
    for name, n in (("ur", 3), ("ur-7-rescatados", 3)):
        rules = load_ur(name, {"pieces": n})
        sp = UrSpace(n)
        seen = np.zeros(sp.size, np.int64)
        for pair in layers(rules):
            idx, flag = layer_members(sp, pair, "progress", pairs=True)
            seen[idx] += 1
            # a pair is a position and its mirror: the same board, the other side to move
            p = sp.unrank_many(idx[flag == 1])
            q = sp.unrank_many(idx[np.flatnonzero(flag == 1) + 1])
            assert np.array_equal(p.mine_mask, q.their_mask) and np.array_equal(p.their_off, q.mine_off)
        over = np.full(sp.size, -1.0)
        assert terminal_values(rules, over) == int((seen == 0).sum())
        assert (seen <= 1).all() and ((seen == 1) == (over < 0)).all()


def test_one_piece_values_by_hand():
    # As tests/test_ur_optimal.py derives them: 4/7 for a race from square 14 each, 116/161 for 13 against 14.
    v = solve_layered(load_ur("ur", {"pieces": 1})).values
    sp = UrSpace(1)
    assert v[sp.rank(0, ON_14, 0, 0, ON_14, 0, 0)] == pytest.approx(4 / 7, abs=1e-12)
    assert v[sp.rank(0, ON_13, 0, 0, ON_14, 0, 0)] == pytest.approx(116 / 161, abs=1e-12)


@pytest.mark.parametrize("name", ["ur", "ur-simplificado", "ur-7-rescatados"])
def test_layered_agrees_with_the_whole_table_solve(name):
    rules = load_ur(name, {"pieces": 2})
    whole = solve_optimal_whole(rules, tol=1e-14).values
    ways = (("pairs", "progress"), ("gs", "rank"), ("jacobi", "reverse")) if name == "ur" else (("pairs", "progress"),)
    for method, order in ways:
        sol = solve_layered(rules, method=method, order=order, tol=1e-14)
        assert np.abs(sol.values - whole).max() < 1e-12, (method, order)
    assert bellman_residual(rules, sol.values) < 1e-12


def test_final_bellman_pass_sees_a_wrong_value(two):
    rules, sol = two
    assert sol.residual < 1e-12
    v = sol.values.copy()
    s = UrSpace(2).rank(0, 0, 2, 0, 0, 2, 0)
    v[s] += 1e-6
    # The start is its own mirror, and a throw of 0 (1/16) passes to it: its update falls by 1e-6 / 16
    # while its value rose by 1e-6. (The start's predecessors are none: no position leads back to it.)
    assert bellman_residual(rules, v) == pytest.approx(17 / 16 * 1e-6, rel=1e-9)


def test_checkpoint_resumes_and_refuses_another_solve(tmp_path, two):
    rules, sol = two
    ck = tmp_path / "layers"
    first = solve_layered(rules, checkpoint=ck)
    files = sorted(p.name for p in ck.glob("layer_*.npy"))
    assert files == ["layer_0_0.npy", "layer_0_1.npy", "layer_1_1.npy"]
    (ck / "layer_0_0.npy").unlink()  # interrupted before the last layer
    again = solve_layered(rules, checkpoint=ck)
    assert [s.resumed for s in again.layers] == [True, True, False]
    # (two threads sweep side by side, so the last bits are not reproducible run to run)
    assert np.abs(again.values - first.values).max() < 1e-12
    with pytest.raises(ValueError, match="a checkpoint of another solve"):
        solve_layered(rules, checkpoint=ck, tol=1e-12)


def test_table_saved_once_found_and_memory_mapped(tmp_path, monkeypatch, two):
    rules, sol = two
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    assert find_table(rules) is None
    path = write_table(rules, sol.values, residual=sol.residual)
    values, residual = find_table(rules)
    assert isinstance(values, np.memmap) and np.array_equal(values, sol.values)
    assert residual == sol.residual
    assert json.loads(path.with_suffix(".json").read_text())["game"]["pieces"] == 2
    with pytest.raises(ValueError, match="one per position of 3 pieces"):
        load_table(path, load_ur("ur", {"pieces": 3}))


@pytest.mark.parametrize("light,dark", [("random", "random"), ("optimal", "greedy")])
def test_sweeps_agree_with_the_chain(two, light, dark):
    rules, sol = two
    chain = ur_chain(rules, light, dark, sol.values)
    exp = chain.expected({"turns": chain.state_rewards["turns"], "throws": chain.state_rewards["throws"]})
    win = chain.outcome_probabilities()["light wins"]
    dist = chain.length_distribution(tail=1e-12)
    ev = evaluate_policies(rules, light, dark, sol.values)
    w, throws, turns = ev.at(UrSpace(2).rank(0, 0, 2, 0, 0, 2, 0), 0)
    assert w == pytest.approx(win, abs=1e-10)
    assert throws == pytest.approx(exp["throws"][0], rel=1e-9)
    assert turns == pytest.approx(exp["turns"][0], rel=1e-9)
    ld = length_distribution(rules, light, dark, sol.values, tail=1e-12)
    m = min(ld.pmf.size, dist.pmf.size)
    assert np.abs(ld.by_outcome[:m] - dist.by_outcome[:m]).max() < 1e-13
    assert ld.tail < 1e-12 and ld.pmf.sum() == pytest.approx(1.0, abs=1e-11)
    # the pmf's mean is the expected number of turns
    assert (np.arange(ld.pmf.size) * ld.pmf).sum() == pytest.approx(turns, rel=1e-8)


def test_solve_ur_sweeps_and_chain_give_the_same_results(two):
    rules, sol = two
    a = solve_ur(rules, "optimal", "random", values=sol.values, method="chain", tail=1e-12)
    b = solve_ur(rules, "optimal", "random", values=sol.values, method="sweeps", tail=1e-12)
    da, db = a.to_dict(), b.to_dict()
    assert da.keys() == db.keys() and da["length"].keys() == db["length"].keys()
    assert db["wins"]["light"] == pytest.approx(da["wins"]["light"], abs=1e-10)
    for k in ("turns", "throws"):
        assert db["expected"][k]["total"] == pytest.approx(da["expected"][k]["total"], rel=1e-9)
    for k in ("median", "p90", "p99"):
        assert db["length"][k] == da["length"][k]
    assert db["optimal_value"] == pytest.approx(0.518572907496, abs=1e-11)


def test_cli_solve_then_export(tmp_path):
    from typer.testing import CliRunner

    from markov_oca.ur.commands import app

    runner = CliRunner()
    npy = tmp_path / "ur1.npy"
    res = runner.invoke(app, ["solve", "--pieces", "1", "--table", str(npy), "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["residual"] < 1e-12 and npy.exists() and not (tmp_path / "ur1.layers").exists()
    out = tmp_path / "ur1.rgu"
    res = runner.invoke(app, ["export-table", str(out), "--pieces", "1", "--table", str(npy)])
    assert res.exit_code == 0, res.output
    # one piece on Bell's path: the shared row takes 7 bits, the board 19; the start is 1 << 19 | 1 << 22
    assert read_rgu(out).lookup((1 << 19) | (1 << 22)) == pytest.approx(100 * d["first_player"], abs=0.001)
    res = runner.invoke(app, ["export-table", str(out), "--pieces", "1", "--table", str(tmp_path / "none.npy")])
    assert res.exit_code == 2 and "run `markov-oca ur solve --pieces 1" in res.output


def test_seven_pieces_optimal_needs_the_saved_table_first(tmp_path, monkeypatch):
    # Above the chain's reach an optimal pair is answered from the saved table; without one the request
    # is refused at once (one line), not turned into an hour's solve.
    from markov_oca.core.errors import RulesError

    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    with pytest.raises(RulesError, match=r"run `markov-oca ur solve --pieces 7 --rules ur` first"):
        solve_ur("ur", "optimal", "random")
