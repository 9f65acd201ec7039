"""RoyalUr's rule sets as data: paths, throws, safe and unsafe rosettes, captures that throw again.

Hand-derived cases for each setting, position counts against an enumeration of RoyalUr's
(``FastSimpleFlags.loopLightGameStates``), and the one- and two-piece values of every rule
set against a small value iteration written here over explicit positions (pieces as lists of
squares on the paths' tiles, no ranking, no move kernel).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from markov_oca.core.errors import RulesError
from markov_oca.ur.kernel import AGAIN, CAPTURE, GAME_OVER, PASS, ROSETTE, moves
from markov_oca.ur.layered import solve_layered
from markov_oca.ur.rules import build_ur, load_ur
from markov_oca.ur.state import BELL, count_positions, decode, encode, mirror, space_of

SETS = ("ur", "ur-blitz", "ur-masters", "ur-aseb")

# RoyalUr's paths (net.royalur.model.path), light's tiles [column, row], start and end tiles left out
BELL_TILES = [(1, 4), (1, 3), (1, 2), (1, 1)] + [(2, y) for y in range(1, 9)] + [(1, 8), (1, 7)]
MASTERS_TILES = ([(1, 4), (1, 3), (1, 2), (1, 1)] + [(2, y) for y in range(1, 8)]
                 + [(3, 7), (3, 8), (2, 8), (1, 8), (1, 7)])
ASEB_TILES = [(1, 4), (1, 3), (1, 2), (1, 1)] + [(2, y) for y in range(1, 13)]


def test_paths_are_royalurs():
    assert list(load_ur("ur").board.light) == BELL_TILES
    assert list(load_ur("ur-blitz").board.light) == MASTERS_TILES
    assert list(load_ur("ur-masters").board.light) == MASTERS_TILES
    assert list(load_ur("ur-aseb").board.light) == ASEB_TILES
    m = load_ur("ur-masters")
    assert m.board.dark[11] == (1, 7) and m.board.dark[15] == (3, 7)  # dark's 12 and 16
    # light's 12..16 are dark's 16, 15, 14, 13, 12: the paths meet head on at the end of the side rows
    assert m.code.private == (1, 2, 3, 4)
    assert m.code.shared == tuple(range(5, 17))
    assert m.code.theirs == (5, 6, 7, 8, 9, 10, 11, 16, 15, 14, 13, 12)
    assert load_ur("ur-aseb").code.theirs == tuple(range(5, 17))
    assert load_ur("ur").code == BELL


def test_rosettes_and_flags():
    # RoyalUr: standard board rosettes (1,1) (3,1) (2,4) (1,7) (3,7); Aseb (1,1) (3,1) (2,4) (2,8) (2,12)
    assert load_ur("ur").rosettes == (4, 8, 14)
    assert load_ur("ur-masters").rosettes == (4, 8, 12, 16)  # (3,7) is light's 12, (1,7) its 16
    assert load_ur("ur-aseb").rosettes == (4, 8, 12, 16)
    flags = {n: (r.safe_rosettes, r.rosette_again, r.capture_again, r.pieces)
             for n in SETS for r in [load_ur(n)]}
    assert flags == {"ur": (True, True, False, 7), "ur-blitz": (False, True, True, 5),
                     "ur-masters": (False, True, False, 7), "ur-aseb": (True, True, False, 5)}


def test_three_coins_with_zero_as_four():
    # three fair coins: 0 heads 1/8 (counts 4), 1 head 3/8, 2 heads 3/8, 3 heads 1/8
    assert load_ur("ur-masters").throws == ((1, Fraction(3, 8)), (2, Fraction(3, 8)), (3, Fraction(1, 8)),
                                            (4, Fraction(1, 8)))
    assert dict(load_ur("ur-blitz").throws) == {k: Fraction([1, 4, 6, 4, 1][k], 16) for k in range(5)}


def _one(rules, light, dark, throw):
    """The moves of one position (light to move) for one throw: [(from, events, successor position)]."""
    sp = space_of(rules.pieces, rules.code)
    idx = sp.rank(*encode(light, dark, rules.code))
    mv = moves(sp, [idx], rules)
    t = list(mv.throws).index(throw)
    out = []
    for m in range(int(mv.n_moves[0, t])):
        ev = int(mv.events[0, t, m])
        out.append((int(mv.frm[0, t, m]), ev, decode(sp.unrank(int(mv.succ[0, t, m])), rules.code)))
    return out


def test_safe_rosette_against_an_unsafe_one():
    # dark's piece on the middle rosette (2,4): path square 8 of both; light's piece at 6 throws 2
    safe, unsafe = load_ur("ur-aseb", {"pieces": 2}), load_ur("ur-masters", {"pieces": 2})
    assert [m[0] for m in _one(safe, [6, 0], [8, 0], 2)] == [0]  # only the hand's piece (to 2) may move
    got = {m[0]: m for m in _one(unsafe, [6, 0], [8, 0], 2)}
    frm, ev, (mine, theirs) = got[6]
    assert ev & CAPTURE and ev & ROSETTE and ev & AGAIN  # captured on the rosette, and the rosette throws again
    assert mine == (0, 8) and theirs == (0, 0)  # not mirrored: light moves again


def test_capture_grants_a_throw_in_blitz_only():
    blitz, masters = load_ur("ur-blitz", {"pieces": 2}), load_ur("ur-masters", {"pieces": 2})
    for rules, again in ((blitz, True), (masters, False)):
        got = {m[0]: m for m in _one(rules, [5, 0], [7, 0], 2)}
        frm, ev, (mine, theirs) = got[5]
        assert ev & CAPTURE and not ev & ROSETTE
        assert bool(ev & AGAIN) == again
        # after a throw again the successor is seen by light; otherwise by dark (mirrored)
        assert (mine, theirs) == (((0, 7), (0, 0)) if again else ((0, 0), (0, 7)))


def test_masters_paths_meet_head_on():
    r = load_ur("ur-masters", {"pieces": 2})
    # light 13 -> 15 is tile (1,8), dark's 13: a capture there
    frm, ev, (mine, theirs) = {m[0]: m for m in _one(r, [13, 0], [13, 0], 2)}[13]
    assert ev & CAPTURE and mine == (0, 0) and theirs == (0, 15)  # mirrored: dark to move, light's piece at 15
    # light's 12 is tile (3,7), dark's 16 (a rosette): unsafe in Masters, so light's piece at 11 captures there
    frm, ev, (mine, theirs) = {m[0]: m for m in _one(r, [11, 0], [16, 0], 1)}[11]
    assert ev & CAPTURE and ev & ROSETTE and ev & AGAIN and mine == (0, 12) and theirs == (0, 0)
    # and bearing off needs the exact throw: from 16, 1 leaves; 2 does not
    assert [m[0] for m in _one(r, [16, 0], [0, 0], 1)] == [0, 16]
    assert [m[0] for m in _one(r, [16, 0], [0, 0], 2)] == [0]


def test_mirror_on_masters_board():
    code = load_ur("ur-masters").code
    pos = encode([12, 5, 0], [13, 15, 3], code)
    m = mirror(pos, code)
    assert decode(m, code) == ((3, 13, 15), (0, 5, 12))
    assert mirror(m, code) == pos


def _royalur_count(tiles_light, n):
    """Light-to-move positions as RoyalUr's loopLightGameStates counts them: every board, pieces in hand from 0
    to n each, dark never with all pieces off."""
    dark = [(4 - c, y) for c, y in tiles_light]
    board = sorted(set(tiles_light) | set(dark))

    def walk(i, a, b):  # tiles from i on, a light and b dark pieces placed so far (the tile loop of RoyalUr)
        if i == len(board):
            # light's hand 0..n-a (the rest off), dark's hand 0..n-b with fewer than n off
            return (n - a + 1) * sum(1 for hand in range(n - b + 1) if n - b - hand < n)
        t = board[i]
        out = walk(i + 1, a, b)
        if t in tiles_light and a < n:
            out += walk(i + 1, a + 1, b)
        if t in dark and b < n:
            out += walk(i + 1, a, b + 1)
        return out

    return walk(0, 0, 0)


@pytest.mark.parametrize("name", SETS)
def test_counts_match_royalurs_enumeration(name):
    r = load_ur(name)
    for n in (1, 2):
        ours = count_positions(n, r.code)
        sp = space_of(n, r.code)
        p = sp.unrank_many(np.arange(sp.size))
        theirs_off = int((p.their_off == n).sum())  # ours hold the positions dark has won; RoyalUr's do not
        assert ours - theirs_off == _royalur_count(list(r.board.light), n)
    assert count_positions(7, load_ur("ur-masters").code) == 501_032_952
    assert count_positions(5, load_ur("ur-blitz").code) == 41_264_288


def _explicit_values(rules, tol=1e-15):
    """Light's chance to win under optimal play from the start, by value iteration over explicit positions.

    A position is (mover's squares, opponent's squares), each along its own path; the opponent's piece at
    square q stands on tile ``dark[q - 1]``. Nothing of the ranking or the move kernel is used.
    """
    n = rules.pieces
    light, dark = list(rules.board.light), list(rules.board.dark)
    off = len(light) + 1
    ros = rules.board.rosettes
    throws = [(int(v), float(p)) for v, p in rules.throws]
    start = (tuple([0] * n), tuple([0] * n))
    index, succ = {start: 0}, []
    todo = [start]  # in the order of their numbers: succ[i] belongs to todo[i]
    while len(succ) < len(todo):
        mine, theirs = todo[len(succ)]
        rows = []
        for thr, p in throws:
            opts = []
            for o in sorted(set(mine)) if thr > 0 else []:
                if o == off:
                    continue
                d = o + thr
                if d > off or (d < off and d in mine):
                    continue
                new_mine = list(mine)
                new_mine[new_mine.index(o)] = d
                new_theirs = list(theirs)
                cap = ros_hit = False
                if d < off:
                    tile = light[d - 1]
                    ros_hit = tile in ros
                    hit = [i for i, q in enumerate(theirs) if 0 < q < off and dark[q - 1] == tile]
                    if hit:
                        if ros_hit and rules.safe_rosettes:
                            continue
                        cap = True
                        new_theirs[hit[0]] = 0
                nm, nt = tuple(sorted(new_mine)), tuple(sorted(new_theirs))
                if nm.count(off) == n:
                    opts.append(("win", None))
                    continue
                again = (ros_hit and rules.rosette_again) or (cap and rules.capture_again)
                key = (nm, nt) if again else (nt, nm)
                opts.append(("again" if again else "other", key))
            if not opts:
                opts.append(("other", (theirs, mine)))
            for _kind, key in opts:
                if key is not None and key not in index:
                    index[key] = len(index)
                    todo.append(key)
            rows.append((p, [(kind, index[key] if key is not None else -1) for kind, key in opts]))
        succ.append(rows)
    # Jacobi sweeps over padded arrays: option value 1 (a win), v[j] (the mover throws again), 1 - v[j]
    S, T = len(succ), len(throws)
    M = max([len(opts) for rows in succ for _p, opts in rows] + [1])
    tgt = np.zeros((S, T, M), np.int64)
    sign = np.zeros((S, T, M))  # value = base + sign * v[tgt]
    base = np.full((S, T, M), -np.inf)
    for s, rows in enumerate(succ):
        for t, (_p, opts) in enumerate(rows):
            for m, (k, j) in enumerate(opts):
                base[s, t, m], sign[s, t, m], tgt[s, t, m] = {"win": (1.0, 0.0, 0), "again": (0.0, 1.0, j),
                                                              "other": (1.0, -1.0, j)}[k]
    probs = np.array([p for _t, p in throws])
    live = np.array([bool(rows) for rows in succ])
    v = np.full(S, 0.5)
    for _ in range(200_000):
        new = np.where(live, ((base + sign * v[tgt]).max(axis=2) * probs).sum(axis=1) if S else 0.0, v)
        change = float(np.abs(new - v).max())
        v = new
        if change < tol:
            break
    return float(v[0])


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("pieces", [1, 2])
def test_values_against_explicit_value_iteration(name, pieces):
    r = load_ur(name, {"pieces": pieces})
    sol = solve_layered(r, tol=1e-14)
    sp = space_of(pieces, r.code)
    ours = float(sol.values[sp.rank(0, 0, pieces, 0, 0, pieces, 0)])
    assert ours == pytest.approx(_explicit_values(r), abs=1e-10)


def test_pass_and_terminal_on_aseb():
    r = load_ur("ur-aseb", {"pieces": 1})
    got = _one(r, [16], [0], 2)  # overshoot: no legal move, a pass to dark
    assert len(got) == 1 and got[0][0] == -1 and got[0][1] & PASS
    got = _one(r, [16], [0], 1)
    assert got[0][1] & GAME_OVER


def _raw(**board):
    raw = {"game": {"name": "x", "family": "ur", "title": "x", "seed": "003", "summary": "x", "pieces": 2},
           "board": {"light_path": [[1, 4], [1, 1], [2, 1], [2, 8], [1, 8], [1, 7]], **board}}
    return raw


@pytest.mark.parametrize("board, key, words", [
    ({"light_path": [[1, 4], [2, 5]]}, "board.light_path[1]", "straight line"),
    ({"light_path": [[1, 4], [1, 1], [1, 3]]}, "board.light_path", "twice"),
    ({"light_path": [[4, 1]]}, "board.light_path[0]", "at most 3"),
    ({"rosettes": [[2, 9]]}, "board.rosettes[0]", "neither path"),
    ({"again": ["pass"]}, "board.again[0]", "'pass' is not one of rosette, capture"),
    ({"safe_rosettes": "yes"}, "board.safe_rosettes", "true or false"),
    ({"path_length": 16}, "board.path_length", "follows from light_path"),
])
def test_board_errors_name_the_key(board, key, words):
    with pytest.raises(RulesError) as exc:
        build_ur(_raw(**board), "x.toml", {})
    msg = str(exc.value)
    assert "\n" not in msg and key in msg and words in msg


@pytest.mark.parametrize("throw, key, words", [
    ({"kind": "coins", "count": 3, "zero_as": 2}, "throw.zero_as", "more than the 3 coins"),
    ({"kind": "table", "values": [1, 2], "weights": [1]}, "throw.weights", "1 entries for 2 values"),
    ({"kind": "table", "values": [1, 1], "weights": [1, 1]}, "throw.values", "twice"),
    ({"kind": "die", "faces": 4, "zero_as": 4}, "throw.zero_as", "not 'zero_as'"),
])
def test_throw_errors_name_the_key(throw, key, words):
    raw = _raw()
    raw["throw"] = throw
    with pytest.raises(RulesError) as exc:
        build_ur(raw, "x.toml", {})
    assert key in str(exc.value) and words in str(exc.value)


def test_a_throw_table():
    raw = _raw()
    raw["throw"] = {"kind": "table", "values": [1, 2, 3, 4], "weights": [3, 3, 1, 1]}
    assert build_ur(raw, "x.toml", {}).throws == load_ur("ur-masters").throws


@pytest.mark.parametrize("name", ["ur-blitz", "ur-masters"])
def test_simulated_games_over_ranked_positions_agree_with_the_values(name):
    from markov_oca.ur.simulate import simulate_ur

    r = load_ur(name, {"pieces": 1})
    sol = solve_layered(r, tol=1e-14)
    exact = float(sol.values[space_of(1, r.code).rank(0, 0, 1, 0, 0, 1, 0)])
    games = 40_000
    s = simulate_ur(r, "optimal", "optimal", games, seed=5, values=sol.values)
    won = s.outcomes[0] / games
    assert s.unfinished == 0
    assert abs(won - exact) < 4.5 * (exact * (1 - exact) / games) ** 0.5
