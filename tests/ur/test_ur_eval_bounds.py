"""Ur policy pairs by sweeps with a stated accuracy: the policy evaluation's residual and error bounds, the
bound on the throws to come, and the push route's error bounds, against the chain (two pieces)."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from markov_oca.ur import solve as ur_solve
from markov_oca.ur.chain import ur_chain
from markov_oca.ur.layered import solve_layered
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace
from markov_oca.ur.sweeps import evaluate_policies, push_lengths, throws_bound


@pytest.fixture(scope="module")
def two():
    rules = load_ur("ur", {"pieces": 2})
    return rules, solve_layered(rules).values


def _chain_start(rules, light, dark, v):
    chain = ur_chain(rules, light, dark, v)
    exp = chain.expected({"turns": chain.state_rewards["turns"], "throws": chain.state_rewards["throws"]})
    return chain.outcome_probabilities()["light wins"], exp["throws"][0], exp["turns"][0]


@pytest.mark.parametrize("light,dark", [("optimal", "greedy"), ("random", "optimal")])
def test_evaluation_errors_within_their_bounds(two, light, dark):
    # deterministic pairs take the fixed-width moves, a random side the packed ones: both report the
    # residual of the whole system, and the values at the start are within residual * throws of the chain's
    rules, v = two
    ref = _chain_start(rules, light, dark, v)
    start = UrSpace(2).rank(0, 0, 2, 0, 0, 2, 0)
    loose = evaluate_policies(rules, light, dark, v, tol=1e-5)
    tight = evaluate_policies(rules, light, dark, v, tol=1e-13)
    for ev in (loose, tight):
        for got, want, bound in zip(ev.at(start), ref, ev.bounds(start), strict=True):
            assert abs(got - float(want)) <= bound * (1 + 1e-9) + 1e-13
    assert max(loose.bounds(start)) > 1e-6  # a loose solve is seen as loose (not a bound that cannot fail)
    assert max(tight.bounds(start)) < 1e-9
    for got, want in zip(tight.at(start), ref, strict=True):
        assert got == pytest.approx(float(want), abs=1e-11)


@pytest.mark.parametrize("light,dark", [("optimal", "optimal"), ("optimal", "greedy"), ("greedy", "random")])
def test_throws_bound_is_above_every_position_and_close(two, light, dark):
    # deterministic pairs: swept on the push's moves, one value a place and side; a random side: the evaluation
    rules, v = two
    exact = evaluate_policies(rules, light, dark, v, tol=1e-13).throws.max()
    b = throws_bound(rules, light, dark, v, tol=1e-4)
    assert b.largest <= exact * (1 + 1e-12) <= b.bound <= exact * 1.01
    # y <= ŷ / (1 - r), r the residual raised by its own rounding (and the quotient's)
    assert 0 < b.residual < 0.01 and b.largest / (1 - b.residual) < b.bound
    assert b.bound == pytest.approx(b.largest / (1 - b.residual), rel=1e-5)
    tight = throws_bound(rules, light, dark, v, tol=1e-12)
    assert tight.largest == pytest.approx(exact, rel=1e-9) and tight.residual < 1e-8
    if "random" not in (light, dark):  # the push computes the same bound on the moves it builds
        p = push_lengths(rules, light, dark, v, tail=1e-3, bound_tol=1e-4)
        assert p.bound.bound == pytest.approx(b.bound, rel=1e-12) and p.bound.sweeps == b.sweeps


def test_push_route_states_bounds_that_hold(two, monkeypatch):
    # stopped at a tail of 1e-5, the push's sums with their extrapolated tail are within the stated bounds of
    # the chain's values, and the bounds are not vacuous
    rules, v = two
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    monkeypatch.setattr(ur_solve, "THROWS_BOUND_PIECES", 1)
    monkeypatch.setattr(ur_solve, "PUSH_SUMS_TAIL", 1e-5)
    for light, dark in (("optimal", "optimal"), ("random", "greedy")):
        win, throws, turns = _chain_start(rules, light, dark, v)
        # a loose precision: the push is not carried on, and its bounds are those of a tail of 1e-5
        res = ur_solve.solve_ur(rules, light, dark, values=v, method="sweeps", tail=1e-5, precision=1e-2)
        assert "throws to come" in res.solver[0]["method"] and res.solver[0]["bound"] > float(throws)
        err = {k: res.bounds["expected"][k]["total"] for k in ("turns", "throws")}
        for k, want in (("turns", turns), ("throws", throws)):
            got = float(res.expected[k].total)
            assert abs(got - float(want)) <= err[k]
            assert 1e-12 < err[k] < 1e-2
        # without the table's residual (values handed in) the chances are the push's, within what it left
        assert abs(float(res.wins["light"]) - float(win)) <= res.bounds["wins"]["light"] < 1e-5
    assert np.isfinite(res.timings["throws_bound"])


def test_bound_kept_beside_the_table_and_read_back(two, monkeypatch, tmp_path):
    # the first run sweeps the bound and keeps it beside the saved table; the next reads it back (no sweeps,
    # the same figures); a table written again makes it stale, and it is swept again
    from markov_oca.ur.table import saved_bound, write_table

    rules, v = two
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    monkeypatch.setattr(ur_solve, "THROWS_BOUND_PIECES", 1)
    monkeypatch.setattr(ur_solve, "PUSH_SUMS_TAIL", 1e-5)
    write_table(rules, v)
    tol = ur_solve.THROWS_BOUND_TOL
    for light, dark in (("optimal", "optimal"), ("greedy", "random")):
        assert saved_bound(rules, light, dark, tol) is None
        first = ur_solve.solve_ur(rules, light, dark, method="sweeps", tail=1e-5)
        assert first.timings["throws_bound"] > 0.0
        kept = saved_bound(rules, light, dark, tol)
        assert kept is not None and kept.bound == first.solver[0]["bound"] > 1.0
        again = ur_solve.solve_ur(rules, light, dark, method="sweeps", tail=1e-5)
        assert again.timings["throws_bound"] == 0.0 and "kept beside the table" in again.solver[0]["method"]
        assert again.solver[0]["bound"] == first.solver[0]["bound"]
        assert again.bounds == first.bounds
        assert float(again.expected["turns"].total) == float(first.expected["turns"].total)
    # values handed in are not the saved table's: nothing is read or kept for them
    handed = ur_solve.solve_ur(rules, "optimal", "optimal", values=v, method="sweeps", tail=1e-5)
    assert handed.timings["throws_bound"] > 0.0
    time.sleep(0.01)
    write_table(rules, v)  # a new table (its time of writing changed): the optimal pair's bound is stale
    os.utime(tmp_path / next(p.name for p in tmp_path.glob("*.npy")))
    assert saved_bound(rules, "optimal", "optimal", tol) is None
    assert saved_bound(rules, "greedy", "random", tol) is not None  # no table in it
    (tmp_path / next(p.name for p in tmp_path.glob("*.bounds.json"))).write_text("{not json")
    assert saved_bound(rules, "greedy", "random", tol) is None  # unreadable: swept again, not an error
    assert ur_solve.solve_ur(rules, "greedy", "random", method="sweeps", tail=1e-5).timings["throws_bound"] > 0.0


def test_table_solve_keeps_the_optimal_pairs_bound_for_solve_ur(monkeypatch, tmp_path):
    # `ur solve` (into the table folder) sweeps the optimal pair's bound on the table it wrote and keeps it:
    # the next `solve ur` optimal against optimal reads it back, with the same bound as a sweep of its own
    import json

    from typer.testing import CliRunner

    from markov_oca.ur.commands import app
    from markov_oca.ur.table import saved_bound

    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    monkeypatch.setattr(ur_solve, "THROWS_BOUND_PIECES", 2)
    monkeypatch.setattr(ur_solve, "PUSH_SUMS_TAIL", 1e-5)
    rules = load_ur("ur", {"pieces": 2})
    res = CliRunner().invoke(app, ["solve", "--pieces", "2", "--format", "json"])
    assert res.exit_code == 0, res.output
    b = json.loads(res.output)["throws_bound"]
    assert b["kept"] and b["bound"] >= b["largest"] > 1.0 and b["residual"] < 1.0
    kept = saved_bound(rules, "optimal", "optimal", ur_solve.THROWS_BOUND_TOL)
    assert kept is not None and kept.bound == b["bound"]
    got = ur_solve.solve_ur(rules, "optimal", "optimal", method="sweeps", tail=1e-5)
    assert got.timings["throws_bound"] == 0.0 and got.solver[0]["bound"] == b["bound"]
    table = np.load(next(tmp_path.glob("*.npy")))
    own = throws_bound(rules, "optimal", "optimal", table, tol=ur_solve.THROWS_BOUND_TOL)
    assert own.bound == pytest.approx(b["bound"], rel=1e-12)
    # below THROWS_BOUND_PIECES, or with --no-bound, none is swept
    res = CliRunner().invoke(app, ["solve", "--pieces", "1", "--format", "json"])
    assert res.exit_code == 0 and json.loads(res.output)["throws_bound"] is None
    res = CliRunner().invoke(app, ["solve", "--pieces", "2", "--no-bound", "--format", "json"])
    assert res.exit_code == 0 and "throws_bound" not in json.loads(res.output)


def _tables(rules, light, dark, v):
    from markov_oca.core.progress import progress_bar
    from markov_oca.ur.policy import policy_codes
    from markov_oca.ur.pushmoves import push_tables
    from markov_oca.ur.pushorder import push_placement
    from markov_oca.ur.state import space_of

    space = space_of(rules.pieces, rules.code)
    newpos, levels = push_placement(space, rules.pieces)
    start = int(newpos[space.rank(0, 0, rules.pieces, 0, 0, rules.pieces, 0)])
    with progress_bar(False) as bar:
        tables, _ = push_tables(space, rules, policy_codes(light, dark), np.asarray(v, np.float64), newpos, bar)
    return tables, np.asarray(rules.throw_probabilities, np.float64), levels, rules.off_square * rules.pieces + 1, start


@pytest.mark.parametrize("light,dark", [("optimal", "optimal"), ("greedy", "optimal")])
def test_swept_sums_hold_their_bounds_loose_and_tight(two, light, dark):
    # the expected throws and turns swept on the push's moves: stopped early, the stated bounds still hold;
    # swept on, they are tight
    from markov_oca.ur.bound import sums_on_tables

    rules, v = two
    _, throws, turns = _chain_start(rules, light, dark, v)
    tables, probs, levels, width, start = _tables(rules, light, dark, v)
    loose = sums_on_tables(tables, probs, levels, width, start=start, tol=1e-3)
    tight = sums_on_tables(tables, probs, levels, width, start=start, precision=1e-12)
    for s in (loose, tight):
        assert abs(s.throws - float(throws)) <= s.throws_bound
        assert abs(s.turns - float(turns)) <= s.turns_bound
        assert s.ceiling >= s.largest
    assert abs(loose.turns - float(turns)) > 1e-4  # stopped early it is off, and says so
    assert tight.throws_bound < 1e-12 * float(throws) and tight.turns_bound < 1e-12 * float(turns)
    assert tight.sweeps > loose.sweeps


def test_a_loose_tail_takes_the_sums_from_the_sweeps_and_the_push_stops_there(two, monkeypatch):
    # optimal against optimal with a tail looser than the push's sums need: the turns and throws are swept,
    # within 1e-9 of the chain's, and the push is carried only to the tail; the quantiles it reaches are the
    # tight push's; each side's chance is the table's, certified by its residual
    rules, v = two
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    _, throws, turns = _chain_start(rules, "optimal", "optimal", v)
    optimal = solve_layered(rules, residual=True)
    loose = ur_solve.solve_ur(rules, optimal=optimal, method="sweeps", tail=1e-2)
    tight = ur_solve.solve_ur(rules, optimal=optimal, method="sweeps", tail=1e-10)
    assert "sweeps of the expected throws and turns" in loose.solver[0]["method"]
    assert "push" in tight.solver[-1]["method"] and "sweeps of the expected" not in tight.solver[0]["method"]
    for k, want in (("turns", turns), ("throws", throws)):
        err = loose.bounds["expected"][k]["total"]
        assert abs(float(loose.expected[k].total) - float(want)) <= err < 1e-9 * float(want)
    assert 1e-3 < loose.length.tail_mass <= 1e-2 and tight.length.tail_mass <= 1e-10
    assert len(loose.length.pmf) < len(tight.length.pmf)
    assert (loose.length.median, loose.length.p90) == (tight.length.median, tight.length.p90)
    assert loose.wins == tight.wins  # the table's value, both times
    assert loose.bounds["wins"]["light"] < 1e-9
    # values handed in without their residual: each side's chance is swept with the sums, within its bound
    plain = ur_solve.solve_ur(rules, values=v, method="sweeps", tail=1e-2)
    assert "each side's chance" in plain.solver[0]["method"] and plain.length.tail_mass > 1e-3
    light, _, _ = _chain_start(rules, "optimal", "optimal", v)
    assert abs(float(plain.wins["light"]) - float(light)) <= plain.bounds["wins"]["light"] < 1e-9


@pytest.mark.parametrize("light,dark", [("random", "optimal"), ("optimal", "greedy"), ("random", "random")])
def test_swept_chances_hold_their_bounds_loose_and_tight(two, light, dark):
    # each side's chance swept with the throws and turns, on fixed moves and on a random side's packed ones:
    # stopped early the stated bounds hold, swept on they are tight; the wins add up to 1
    from markov_oca.ur.bound import sums_on_tables
    from markov_oca.ur.sweepbounds import moves_a_throw

    rules, v = two
    win, throws, turns = _chain_start(rules, light, dark, v)
    tables, probs, levels, width, start = _tables(rules, light, dark, v)
    moves = moves_a_throw(rules, "random" in (light, dark))
    loose = sums_on_tables(tables, probs, levels, width, start=start, tol=1e-3, win=True, moves=moves)
    tight = sums_on_tables(tables, probs, levels, width, start=start, precision=1e-12, win=True, moves=moves)
    for s in (loose, tight):
        assert abs(s.win - float(win)) <= s.win_bound
        assert abs(s.throws - float(throws)) <= s.throws_bound
        assert abs(s.turns - float(turns)) <= s.turns_bound
    assert abs(loose.win - float(win)) > 1e-9  # stopped early it is off, and says so
    assert tight.win_bound < 1e-11 and abs(tight.win - float(win)) < 1e-12


def test_a_sides_chance_is_swept_at_every_place_and_bounded_relative_to_itself(two):
    # two policies: one side's chance at every place (every term nonnegative), its bound relative to itself; the
    # side guessed first (light) is the likelier winner here, so the sweeps turn to dark's chance (1 - x) and
    # its sum (y - g); the mover's chance (side -1) gives the same values within both bounds
    from markov_oca.ur.bound import sums_on_tables
    from markov_oca.ur.sweepbounds import moves_a_throw, side_chance_bound, sum_roundings

    rules, v = two
    win, _throws, _turns = _chain_start(rules, "optimal", "random", v)
    tables, probs, levels, width, start = _tables(rules, "optimal", "random", v)
    moves = moves_a_throw(rules, True)
    kw = dict(start=start, precision=1e-12, win=True, turns=False, moves=moves)
    sided = sums_on_tables(tables, probs, levels, width, side=0, **kw)
    mover = sums_on_tables(tables, probs, levels, width, side=-1, **kw)
    dark = 1 - float(win)
    assert float(win) > 0.5 and sided.side == 1 and mover.side == -1
    for s in (sided, mover):
        assert abs(s.win - float(win)) <= s.win_bound and abs((1 - s.win) - dark) <= s.win_bound
    assert sided.win_bound <= 1e-12 * dark
    # the sum of dark's chance over the throws to come lies between its chance (the first throw's) and the throws
    # to come (each chance is at most 1); more than its chance times the throws: dark wins the longer games
    g0 = sided.chance_sum[0]
    assert dark * sided.throws < g0 < sided.throws
    # the bound is the relative residual times that sum, at least: a residual larger by c, a bound larger by c g0
    roundings = sum_roundings(probs.size, moves)
    before = side_chance_bound(sided, 0.0, roundings)
    sided.chance_relative += 1e-12
    assert side_chance_bound(sided, 0.0, roundings) - before >= 1e-12 * g0


def test_a_loose_tail_sweeps_any_pairs_chances(two, monkeypatch):
    # a weaker side against optimal play with a loose tail: chances, turns and throws swept (within 1e-9 of the
    # chain's, bounds included), the push only to the tail; and the stats' pairs agree with the chain
    from markov_oca.ur.stats import ur_stats

    rules, v = two
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    for light, dark in (("random", "optimal"), ("optimal", "greedy")):
        win, throws, turns = _chain_start(rules, light, dark, v)
        res = ur_solve.solve_ur(rules, light, dark, values=v, method="sweeps", tail=1e-3)
        assert "each side's chance" in res.solver[0]["method"]
        for got, want, err in ((res.wins["light"], win, res.bounds["wins"]["light"]),
                               (res.wins["dark"], 1 - win, res.bounds["wins"]["dark"]),
                               (res.expected["turns"].total, turns, res.bounds["expected"]["turns"]["total"]),
                               (res.expected["throws"].total, throws, res.bounds["expected"]["throws"]["total"])):
            assert abs(float(got) - float(want)) <= err <= 1e-9 * float(want)
    st = ur_stats(rules, values=v, policies=("random",))
    assert st.chances["light random"]["light"] == pytest.approx(float(_chain_start(rules, "random", "optimal", v)[0]),
                                                                abs=1e-10)
    assert st.chances["dark random"]["dark"] == pytest.approx(1 - float(_chain_start(rules, "optimal", "random",
                                                                                      v)[0]), abs=1e-10)


def test_swept_sums_kept_beside_the_table_and_read_back(two, monkeypatch, tmp_path):
    # a loose tail sweeps the sums and keeps them beside the saved table; the next run reads them back (the
    # same figures, no sweeps); a stricter precision than they meet is not met by them; `ur stats` keeps its pairs'
    from markov_oca.core.errors import SolverError
    from markov_oca.ur import stats as ur_stats_mod
    from markov_oca.ur.table import saved_sums, write_table

    rules, v = two
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    write_table(rules, v, residual=solve_layered(rules, residual=True).residual)
    for light, dark in (("optimal", "optimal"), ("random", "optimal")):
        first = ur_solve.solve_ur(rules, light, dark, method="sweeps", tail=1e-3)
        win = light != dark  # the optimal pair's chance is the table's (its residual kept with it)
        kept = saved_sums(rules, light, dark, win)
        assert kept is not None and kept.turns == float(first.expected["turns"].total)
        again = ur_solve.solve_ur(rules, light, dark, method="sweeps", tail=1e-3)
        assert again.timings["sums"] == 0.0 and "kept beside the table" in again.solver[0]["method"]
        assert again.bounds == first.bounds and again.wins == first.wins
        assert ur_solve.sums_meet(kept, 1e-9) and not ur_solve.sums_meet(kept, 1e-14)
        with pytest.raises(SolverError, match="sums swept"):  # kept sums short of it are not taken as they are
            ur_solve.solve_ur(rules, light, dark, method="sweeps", tail=1e-3, precision=1e-14)
    calls = []
    import markov_oca.ur.layersums as layersums_mod

    orig = layersums_mod.layered_pairs
    monkeypatch.setattr(layersums_mod, "layered_pairs", lambda *a, **k: calls.append(a[1:3]) or orig(*a, **k))
    one = ur_stats_mod.ur_stats(rules, policies=("greedy",))
    assert calls == [("greedy", "optimal")]  # one sweep: the pair and its mirror
    two_ = ur_stats_mod.ur_stats(rules, policies=("greedy",))
    assert len(calls) == 1 and two_.chances == one.chances and two_.losses == one.losses
    # pairs whose chances are kept need no memory for sweeps: not refused for it; a pair not kept still is (random
    # against optimal was kept by the solves above, not its mirror)
    import markov_oca.core.memory as memory_mod
    from markov_oca.core.errors import TooLargeError

    monkeypatch.setattr(memory_mod, "available_memory", lambda: 1_000)
    assert ur_stats_mod.ur_stats(rules, policies=("greedy",)).chances == one.chances
    with pytest.raises(TooLargeError, match="optimal against random"):
        ur_stats_mod.ur_stats(rules, policies=("random",))


def test_swept_sums_are_kept_before_the_push_so_a_stopped_push_keeps_them(two, monkeypatch, tmp_path):
    # the push stopped (as by Ctrl-C) after the sums are swept: they are beside the table all the same, and the
    # next run reads them back instead of sweeping again
    import markov_oca.ur.push as push_mod
    from markov_oca.ur.table import saved_sums, write_table

    rules, v = two
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    write_table(rules, v, residual=solve_layered(rules, residual=True).residual)
    orig = push_mod._push

    def stopped(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(push_mod, "_push", stopped)
    assert saved_sums(rules, "greedy", "optimal", True) is None
    with pytest.raises(KeyboardInterrupt):
        ur_solve.solve_ur(rules, "greedy", "optimal", method="sweeps", tail=1e-3)
    kept = saved_sums(rules, "greedy", "optimal", True)
    assert kept is not None and kept.sweeps > 0
    monkeypatch.setattr(push_mod, "_push", orig)
    again = ur_solve.solve_ur(rules, "greedy", "optimal", method="sweeps", tail=1e-3)
    assert again.timings["sums"] == 0.0 and float(again.expected["turns"].total) == kept.turns


def test_ur_stats_with_a_tail_that_leaves_the_p99_open_says_so(two, monkeypatch, tmp_path):
    # the push stopped at a tail of 5e-2 cannot place the 99th percentile: it is None in JSON with the turn it
    # lies beyond, "more than N" in the text; the median and p90 are the full distribution's
    import json

    from markov_oca.ur.stats import ur_stats
    from markov_oca.ur.table import write_table

    rules, v = two
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    monkeypatch.setattr(ur_solve, "PUSH_ONLY_PIECES", 1)
    write_table(rules, v, residual=solve_layered(rules, residual=True).residual)
    full = ur_stats(rules, policies=(), tail=1e-9).length
    open_ = ur_stats(rules, policies=(), tail=5e-2)
    L = json.loads(json.dumps(open_.to_dict()))["optimal"]["length"]
    assert L["p99"] is None and L["more_than"]["p99"] < full["p99"] and 5e-2 > L["tail"] > 1e-2
    assert (L["median"], L["p90"]) == (full["median"], full["p90"])
    assert f"99th percentile more than {L['more_than']['p99']}" in open_.text()
