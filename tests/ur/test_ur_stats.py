"""``ur stats``: every figure against an independent evaluation over explicit positions, hand counts of the
shortest game, and invariants.

The reference below plays the game on the board's squares (``rules.board``: each side's path as tiles, the
rosette tiles), not on the position encoding: a position is (the mover's path squares, the opponent's), sorted.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from markov_oca.ur.layered import solve_layered
from markov_oca.ur.rules import load_ur
from markov_oca.ur.solve import solve_ur
from markov_oca.ur.state import decode, encode, space_of
from markov_oca.ur.stats import CLEAR, HIST_EDGES, PER_DECADE, STATS_TAIL, TIE, table_passes, ur_stats

# ----------------------------------------------------------------------------- the reference game


class Game:
    """The rules on the board's tiles: moves, their successors and whether the mover throws again."""

    def __init__(self, rules):
        self.r = rules
        self.n = rules.pieces
        self.off = rules.off_square
        self.mine_tiles = rules.board.light
        self.their_tiles = rules.board.dark
        self.ros = rules.board.rosettes
        self.throws = [(int(v), float(p)) for v, p in rules.throws]
        self.start = ((0,) * self.n, (0,) * self.n)

    def over(self, pos):
        a, b = pos[0].count(self.off), pos[1].count(self.off)
        t = self.r.end_total
        return a == self.n or b == self.n or bool(t and a + b >= t)

    @functools.cache  # noqa: B019 (the game lives as long as the test)
    def moves(self, pos, thr):
        """[(source, successor, again, over, mover wins)], sources ascending; [] for a pass."""
        mine, theirs = pos
        out = []
        if thr == 0:
            return out
        for o in sorted(set(s for s in mine if s != self.off)):
            d = o + thr
            if d > self.off or (d < self.off and d in mine):
                continue
            th = list(theirs)
            capture = False
            if d < self.off:
                tile = self.mine_tiles[d - 1]
                hit = [i for i, q in enumerate(th) if 0 < q < self.off and self.their_tiles[q - 1] == tile]
                if hit:
                    if tile in self.ros and self.r.safe_rosettes:
                        continue
                    th[hit[0]] = 0
                    capture = True
            mi = list(mine)
            mi[mi.index(o)] = d
            nxt = (tuple(sorted(mi)), tuple(sorted(th)))
            ros = d < self.off and self.mine_tiles[d - 1] in self.ros
            if self.over(nxt):
                out.append((o, nxt, False, True, nxt[0].count(self.off) > nxt[1].count(self.off)))
                continue
            again = (ros and self.r.rosette_again) or (capture and self.r.capture_again)
            out.append((o, nxt if again else (nxt[1], nxt[0]), again, False, False))
        return out

    def branches(self, pos, choose):
        """[(probability, successor from the next mover's view, again, over, mover wins)] with ``choose(pos,
        thr, moves)`` picking the moves played (each an equal share)."""
        out = []
        for thr, p in self.throws:
            mv = self.moves(pos, thr)
            if not mv:
                out.append((p, (pos[1], pos[0]), False, False, False))
                continue
            played = choose(pos, thr, mv)
            out += [(p / len(played), *m[1:]) for m in played]
        return out


def reach(game, choose=lambda pos, thr, mv: mv):
    """Every position reachable from the start (mover-relative) playing ``choose``, the start first."""
    seen = {game.start: 0}
    queue = deque([game.start])
    while queue:
        pos = queue.popleft()
        for _p, nxt, _a, over, _w in game.branches(pos, choose):
            if not over and nxt not in seen:
                seen[nxt] = len(seen)
                queue.append(nxt)
    return seen


def value_iteration(game):
    """The optimal values of every reachable position, by plain value iteration (1 piece only: small)."""
    states = list(reach(game))
    v = dict.fromkeys(states, 0.5)
    change = 1.0
    while change > 1e-14:
        change = 0.0
        for s in states:
            new = 0.0
            for thr, p in game.throws:
                mv = game.moves(s, thr)
                new += p * (max((1.0 if w else 0.0) if o else (v[x] if a else 1.0 - v[x]) for _s, x, a, o, w in mv)
                            if mv else 1.0 - v[(s[1], s[0])])
            change = max(change, abs(new - v[s]))
            v[s] = new
    return v


def table_value(rules, values, pos):
    return float(values[space_of(rules.pieces, rules.code).rank(*encode(list(pos[0]), list(pos[1]), rules.code))])


def move_val(rules, values, m):
    _s, x, again, over, wins = m
    if over:
        return 1.0 if wins else 0.0
    return table_value(rules, values, x) if again else 1.0 - table_value(rules, values, x)


def optimal_choice(rules, values):
    """The optimal policy as the package plays it: the first move of the highest value, sources ascending."""
    def choose(pos, thr, mv):
        vals = [move_val(rules, values, m) for m in mv]
        return [mv[int(np.argmax(vals))]]
    return choose


def pair(game, light, dark):
    """Light's chance, expected turns and throws of a policy pair, by iterating over the explicit
    (position, side to move) chain."""
    sides = (light, dark)
    index: dict = {}
    rows, cols, vals, b_win, b_thr, b_turn = [], [], [], [], [], []
    queue = deque()

    def at(key):
        if key not in index:
            index[key] = len(index)
            queue.append(key)
            b_win.append(0.0)
            b_thr.append(1.0)
            b_turn.append(0.0)
        return index[key]

    at((game.start, 0))
    while queue:
        pos, side = key = queue.popleft()
        i = index[key]
        for p, nxt, again, over, wins in game.branches(pos, sides[side]):
            if over:
                b_win[i] += p * (1.0 if wins == (side == 0) else 0.0)
                continue
            j = at((nxt, side if again else 1 - side))
            rows.append(i)
            cols.append(j)
            vals.append(p)
            if not again:
                b_turn[i] += p  # the next turn starts
    n = len(index)
    q = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    b = np.array([b_win, b_thr, b_turn]).T
    x = b.copy()  # x = b + Q x by plain iteration (Q is sub-stochastic and every game ends)
    while True:
        new = b + q @ x
        if np.abs(new - x).max() < 1e-13:
            break
        x = new
    return float(new[0, 0]), 1.0 + float(new[0, 2]), float(new[0, 1])


def shortest(game):
    """(turns, throws) of the shortest game: breadth-first over throws, 0-1 breadth-first over turns."""
    def search(cost):
        dist = {game.start: 0}
        dq = deque([game.start])
        best = None
        while dq:
            pos = dq.popleft()
            d = dist[pos]
            for thr, _p in game.throws:
                mv = game.moves(pos, thr) or [(-1, (pos[1], pos[0]), False, False, False)]
                for _s, nxt, again, over, _w in mv:
                    c = cost(again, over)
                    if over:
                        best = d + c if best is None else min(best, d + c)
                    elif nxt not in dist or d + c < dist[nxt]:
                        dist[nxt] = d + c
                        (dq.appendleft if c == 0 else dq.append)(nxt)
        return best

    turns = 1 + search(lambda again, over: 0 if again or over else 1)
    return turns, search(lambda again, over: 1)


def decisions(rules, values):
    """Every (position of the table, throw) with two legal moves or more: the sorted values of its moves."""
    game = Game(rules)
    space = space_of(rules.pieces, rules.code)
    out = []
    for i in range(space.size):
        mine, theirs = decode(space.unrank(i), rules.code)
        pos = (tuple(sorted(mine)), tuple(sorted(theirs)))
        if game.over(pos):
            continue
        for thr, _p in game.throws:
            mv = game.moves(pos, thr)
            if len(mv) >= 2:
                out.append(sorted((move_val(rules, values, m) for m in mv), reverse=True))
    return out


# ----------------------------------------------------------------------------- the tests


@functools.lru_cache
def solved(name, pieces):
    r = load_ur(name, {"pieces": pieces})
    return r, solve_layered(r).values


@pytest.mark.parametrize("name, turns, throws", [
    ("ur", 3, 5),  # Bell's path: 4, 8 rosettes then 12 ends the turn; dark throws; then 3 off (15/4: 4 throws)
    ("ur-simplificado", 3, 5),  # the same with a die 1-4
    ("ur-blitz", 1, 5),  # Masters' path: 4, 8, 12, 16 are rosettes, then 1 off: one turn
    ("ur-masters", 1, 5),  # the same with three coins, no heads counting 4
    ("ur-aseb", 1, 5),  # Aseb's path: rosettes 4, 8, 12, 16 too
])
def test_shortest_game_of_one_piece_by_hand(name, turns, throws):
    r, v = solved(name, 1)
    s, g = table_passes(r, v)
    assert (s.turns, s.throws) == (turns, throws)
    assert (s.turns, s.throws) == shortest(Game(r))
    assert g.decisions == 0  # one piece: never a choice


@pytest.mark.parametrize("name", ["ur", "ur-blitz", "ur-aseb", "ur-masters", "ur-simplificado", "ur-7-rescatados"])
def test_shortest_game_of_two_pieces_against_a_search(name):
    r, v = solved(name, 2)
    s, _g = table_passes(r, v)
    assert (s.turns, s.throws) == shortest(Game(r))


def test_random_play_reaches_the_shortest_game():
    # random play plays every legal move, so its length distribution starts at the shortest game
    r, v = solved("ur-blitz", 2)
    s, _g = table_passes(r, v)
    pmf = np.asarray(solve_ur(r, "random", "random").length.pmf)
    assert int(np.flatnonzero(pmf > 0)[0]) == s.turns


@pytest.mark.parametrize("name", ["ur", "ur-blitz", "ur-aseb"])
def test_one_piece_against_value_iteration_and_explicit_pairs(name):
    r, v = solved(name, 1)
    game = Game(r)
    ref = value_iteration(game)
    for pos, x in ref.items():
        assert table_value(r, v, pos) == pytest.approx(x, abs=1e-11)
    st = ur_stats(r, values=v)
    opt = optimal_choice(r, v)
    win, turns, throws = pair(game, opt, opt)
    assert st.light_wins == pytest.approx(ref[game.start], abs=1e-11)
    assert (st.light_wins, st.turns, st.throws) == pytest.approx((win, turns, throws), abs=1e-8)
    # one piece: every policy plays the only move, so nothing is lost
    for pol in ("random", "greedy"):
        assert st.losses[pol]["light"] == pytest.approx(0.0, abs=1e-9)
        assert st.losses[pol]["dark"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("name", ["ur", "ur-blitz", "ur-masters"])
def test_two_pieces_against_explicit_positions(name):
    r, v = solved(name, 2)
    game = Game(r)
    st = ur_stats(r, values=v)
    opt = optimal_choice(r, v)
    rand = lambda pos, thr, mv: mv  # noqa: E731
    win, turns, throws = pair(game, opt, opt)
    assert (st.light_wins, st.turns, st.throws) == pytest.approx((win, turns, throws), abs=1e-8)
    as_light, _, _ = pair(game, rand, opt)
    as_dark, _, _ = pair(game, opt, rand)
    assert st.losses["random"]["light"] == pytest.approx(win - as_light, abs=1e-9)
    assert st.losses["random"]["dark"] == pytest.approx((1 - win) - (1 - as_dark), abs=1e-9)
    # the regrets, decision by decision
    dec = decisions(r, v)
    regrets = np.array([d[0] - x for d in dec for x in d[1:]])
    gaps = np.array([d[0] - d[1] for d in dec])
    g = st.regrets
    assert (g.decisions, g.moves) == (len(dec), regrets.size)
    assert g.tied == int((gaps < TIE).sum())
    assert g.regret.mean == pytest.approx(regrets.mean(), rel=1e-9)
    assert g.regret.largest == pytest.approx(regrets.max(), rel=1e-12)
    assert g.gap.mean == pytest.approx(gaps.mean(), rel=1e-9)
    assert g.gap.largest == pytest.approx(gaps.max(), rel=1e-12)
    for x in CLEAR:
        assert g.clear[f"{x:g}"] == pytest.approx((gaps >= x).mean(), abs=1e-12)
    assert g.regret.histogram == np.histogram(regrets, bins=HIST_EDGES)[0].tolist()
    assert g.gap.histogram == np.histogram(gaps, bins=HIST_EDGES)[0].tolist()
    step = 10 ** (1 / PER_DECADE)
    for dist, xs in ((g.regret, regrets), (g.gap, gaps)):
        for key, q in dist.quantiles.items():
            exact = np.sort(xs)[int(np.ceil(float(key[1:]) / 100 * xs.size)) - 1]
            if exact < TIE:
                assert q == 0.0
            else:
                assert exact * (1 - 1e-9) <= q <= exact * step * (1 + 1e-9), (key, exact, q)


def test_invariants():
    r, v = solved("ur-aseb", 2)
    st = ur_stats(r, values=v)
    for d in st.losses.values():
        assert d["light"] > 0 and d["dark"] > 0  # two pieces: weaker play loses something
    assert 0 < st.light_wins < 1
    pmf = np.asarray(st.length["pmf"])
    assert (pmf >= 0).all() and abs(pmf.sum() + st.length["tail"] - 1) < 1e-12 and st.length["tail"] <= STATS_TAIL
    assert int(np.flatnonzero(pmf > 0)[0]) >= st.shortest.turns
    assert st.length["median"] <= st.length["p90"] <= st.length["p99"]
    g = st.regrets
    assert all(0 <= x <= 1 for x in g.clear.values())
    assert list(g.clear.values()) == sorted(g.clear.values(), reverse=True)
    assert sum(g.regret.histogram) == g.moves and sum(g.gap.histogram) == g.decisions
    assert 0 <= g.regret.quantiles["p50"] <= g.regret.quantiles["p99"] <= g.regret.largest * 10 ** (1 / PER_DECADE)
    assert g.regret.mean > 0 and g.gap.mean > 0 and g.regret.largest <= 1


def _run(*args, tables):
    env = {**os.environ, "MARKOV_OCA_TABLES": str(tables)}
    return subprocess.run([sys.executable, "-m", "markov_oca.launch", "ur", *args], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).parents[2])


def test_cli_json_text_and_saved_table(tmp_path):
    r, v = solved("ur", 2)
    from markov_oca.ur.table import write_table

    path = write_table(r, v, tmp_path / "t.npy")
    out = _run("stats", "--pieces", "2", "--table", str(path), "--format", "json", tables=tmp_path / "none")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["schema"] == "markov_oca.ur-stats/1"
    assert d["shortest"]["turns"] == 7 and d["shortest"]["throws"] == 11
    assert d["optimal"]["light_wins"] == pytest.approx(0.5185729075, abs=1e-9)
    assert set(d["losses"]) == {"random", "greedy"} and d["regrets"]["decisions"] > 0
    text = _run("stats", "--pieces", "2", "--table", str(path), "--policies", "greedy", tables=tmp_path / "none")
    assert text.returncode == 0 and "shortest possible game: 7 turns, 11 throws" in text.stdout
    assert "greedy: as light" in text.stdout and "random" not in text.stdout
    assert "0.1 points or more" in text.stdout and ", 1 point or more" in text.stdout


@pytest.mark.parametrize("args, message", [
    (["--policies", "optimal"], "policy 'optimal'"),
    (["--table", "nowhere.npy"], "nowhere.npy: no such table file"),
    (["--tail", "0.5"], "--tail"),
    (["--precision", "2"], "--precision must be between 0 and 1"),
    (["--rules", "no-such-ur"], "no-such-ur"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, message):
    out = _run("stats", "--pieces", "1", *args, tables=tmp_path)
    assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_precision_reaches_every_pair_and_a_refusal_exits_1(monkeypatch, tmp_path):
    """--precision is each pair evaluation's (the refusal of a pair names it); a pair that cannot be certified
    ends the command in one line with exit code 1, as solve's refusals do."""
    from typer.testing import CliRunner

    import markov_oca.ur.solve as us
    from markov_oca.cli import app
    from markov_oca.core.errors import SolverError

    seen = []

    def refuse(*args, precision, **kw):
        seen.append(precision)
        raise SolverError("no bound under 1e-12 (relative) for P(dark wins) (pushed to a tail of 1e-20): ask a "
                          "looser --precision")

    monkeypatch.setattr(us, "solve_ur", refuse)
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))
    out = CliRunner().invoke(app, ["ur", "stats", "--pieces", "1", "--precision", "1e-12"])
    assert out.exit_code == 1 and seen == [1e-12], out.output
    assert "no bound under 1e-12" in out.output and "Traceback" not in out.output


def test_a_pair_too_large_is_refused_before_anything_is_solved(monkeypatch):
    # the weaker pairs' memory is checked first: no table is solved, no optimal pair pushed, one line naming it
    from markov_oca.core.errors import TooLargeError
    from markov_oca.ur import layered

    monkeypatch.setattr("markov_oca.core.memory.available_memory", lambda: 1_000)
    monkeypatch.setattr(layered, "solve_layered", lambda *a, **k: pytest.fail("solved before the refusal"))
    with pytest.raises(TooLargeError, match=r"random against optimal: the swept evaluation needs about .*; --policies "
                                            "without random leaves it out"):
        ur_stats("ur", options={"pieces": 2})
    with pytest.raises(TooLargeError, match="greedy against optimal"):
        ur_stats("ur", options={"pieces": 2}, policies=("greedy",))
