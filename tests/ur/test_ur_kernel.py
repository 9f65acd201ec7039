"""Ur rule files and the move kernel: hand-checked positions, a plain-Python reference, invariants."""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest

from markov_oca.core.errors import RulesError
from markov_oca.ur.kernel import (
    AGAIN,
    CAPTURE,
    GAME_OVER,
    MAX_MOVES,
    MOVER_WINS,
    OFF,
    PASS,
    ROSETTE,
    is_terminal,
    moves,
    winner,
)
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace, decode, encode, mirror

LANE = range(5, 13)


@functools.lru_cache
def space(n):
    return UrSpace(n)


def at(mine, theirs, rules=None):
    """{throw: [(frm, (mine after, theirs after) from the next mover's view, events)]} of one position."""
    n = len(mine)
    rules = rules or load_ur("ur", {"pieces": n})
    sp = space(n)
    m = moves(sp, [sp.rank(*encode(mine, theirs))], rules)
    out = {}
    for t, thr in enumerate(m.throws):
        out[int(thr)] = [(int(m.frm[0, t, j]), decode(sp.unrank(int(m.succ[0, t, j]))), int(m.events[0, t, j]))
                         for j in range(m.n_moves[0, t])]
    return out


def flipped(mine, theirs):
    """The decoded position seen by the other side."""
    return tuple(sorted(theirs)), tuple(sorted(mine))


# ----------------------------------------------------------------------------- rule files


def test_shipped_rule_sets():
    ur = load_ur("ur")
    assert (ur.family, ur.pieces, ur.throw_kind, ur.end, ur.total) == ("ur", 7, "coins", "all-off", None)
    assert ur.throws == tuple((k, Fraction(c, 16)) for k, c in enumerate((1, 4, 6, 4, 1)))
    assert ur.rosettes == (4, 8, 14) and ur.path_length == 14 and ur.shared == (5, 12)
    assert "modern Spanish rule sheet" in ur.seed
    simp = load_ur("ur-simplificado")
    assert (simp.pieces, simp.throw_kind) == (5, "die")
    assert simp.throws == tuple((k, Fraction(1, 4)) for k in range(1, 5))
    resc = load_ur("ur-7-rescatados")
    assert (resc.pieces, resc.end, resc.total, resc.end_total) == (7, "total-off", 7, 7)


def test_options():
    assert load_ur("ur", {"pieces": "3"}).pieces == 3
    assert load_ur("ur-simplificado", {"pieces": 2}).pieces == 2
    r = load_ur("ur", {"throw": "die", "end": "total-off"})
    assert (r.throw_kind, r.throw_count, r.end, r.total) == ("die", 4, "total-off", 7)
    assert load_ur("ur-7-rescatados", {"total": "5"}).total == 5
    assert load_ur("ur-7-rescatados", {"end": "all-off"}).total is None
    assert dict(load_ur("ur", {"pieces": 4}).options) == {"pieces": 4, "throw": "coins", "end": "all-off"}


@pytest.mark.parametrize("options, words", [
    ({"pieces": 8}, "option pieces: must be at most 7"),
    ({"pieces": "0"}, "option pieces: must be at least 1"),
    ({"pieces": "many"}, "option pieces: expected a whole number"),
    ({"colour": "red"}, "unknown option 'colour'"),
    ({"throw": "dice"}, "option throw: 'dice' is not one of coins, die"),
    ({"total": 5}, "option total: 'total' applies only with end = total-off"),
])
def test_option_errors(options, words):
    with pytest.raises(RulesError) as e:
        load_ur("ur", options)
    assert words in str(e.value) and "\n" not in str(e.value)
    assert str(e.value).startswith("ur")


def test_even_total_is_refused():
    with pytest.raises(RulesError, match="option total: must be odd"):
        load_ur("ur-7-rescatados", {"total": 6})


GOOD = """
[game]
name = "mine"
family = "ur"
pieces = 3
[throw]
kind = "coins"
count = 4
[board]
path_length = 14
rosettes = [4, 8, 14]
shared = [5, 12]
[end]
rule = "total-off"
total = 5
"""


@pytest.mark.parametrize("old, new, key", [
    ("pieces = 3", "pieces = 3\ncolour = 1", "game.colour"),
    ("count = 4", "count = 4\nsides = 2", "throw.sides"),
    ("path_length = 14", "path_length = 15", "board.path_length"),
    ("shared = [5, 12]", "shared = [5, 11]", "board.shared"),
    ("rosettes = [4, 8, 14]", "rosettes = [4, 8, 15]", "board.rosettes[2]"),
    ("rosettes = [4, 8, 14]", "rosettes = [4, 4]", "board.rosettes"),
    ("total = 5", "total = 4", "end.total"),
    ('rule = "total-off"', 'rule = "first-off"', "end.rule"),
    ('family = "ur"', 'family = "goose"', "game.family"),
    ('kind = "coins"', 'kind = "die"', "throw.count"),
    ("pieces = 3", "pieces = 9", "game.pieces"),
    ("[end]", "[ending]\n[end]", "ending"),
])
def test_file_errors_name_file_and_key(tmp_path, old, new, key):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(RulesError) as e:
        load_ur(str(path))
    assert e.value.source == str(path) and e.value.key == key, str(e.value)
    assert "\n" not in str(e.value)


def test_user_file_and_unknown_name(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(GOOD.replace("rosettes = [4, 8, 14]", "rosettes = [14, 4]"))
    r = load_ur(path)
    assert (r.name, r.pieces, r.total, r.rosettes, r.rosette_mask) == ("mine", 3, 5, (4, 14), (1 << 4) | (1 << 14))
    with pytest.raises(RulesError, match="unknown rule set 'ur-grande'"):
        load_ur("ur-grande")


# ----------------------------------------------------------------------------- hand-checked positions


def test_bearing_off_needs_the_exact_throw():
    got = at([12], [0])
    assert got[3] == [(12, ((0,), (15,)), OFF | GAME_OVER | MOVER_WINS)]  # leaves and wins; the mirror is ranked
    assert got[4] == [(-1, ((0,), (12,)), PASS)]  # 12 + 4 = 16 overshoots: no legal move, a pass
    assert got[2] == [(12, ((14,), (0,)), ROSETTE | AGAIN)]  # 14 is a rosette: moves again, not mirrored
    assert got[1] == [(12, ((0,), (13,)), 0)]


def test_capture_in_the_shared_lane():
    got = at([3, 0], [7, 0])
    assert got[4] == [(0, ((3, 4), (0, 7)), ROSETTE | AGAIN), (3, ((0, 0), (0, 7)), CAPTURE)]
    assert at([3, 0], [6, 0])[3] == [(3, ((0, 0), (0, 6)), CAPTURE)]  # hand -> 3 is blocked
    # the captured piece is in its owner's hand; the opponent's private squares never meet mine
    got = at([1], [1])
    assert got[1] == [(1, ((1,), (2,)), 0)]


def test_no_capture_on_the_shared_rosette():
    assert at([5], [8])[3] == [(-1, ((8,), (5,)), PASS)]
    got = at([5, 0], [8, 0])
    assert got[3] == [(0, ((0, 8), (3, 5)), 0)]  # only the hand piece moves
    assert got[4] == [(0, ((4, 5), (0, 8)), ROSETTE | AGAIN), (5, ((0, 8), (0, 9)), 0)]


def test_shared_rosette_when_free():
    assert at([5], [0])[3] == [(5, ((8,), (0,)), ROSETTE | AGAIN)]


def test_own_piece_blocks():
    got = at([1, 3], [0, 0])
    assert got[2] == [(3, ((0, 0), (1, 5)), 0)]  # 1 -> 3 is blocked by my own piece
    assert at([4, 0], [0, 0])[4] == [(4, ((0, 8), (0, 0)), ROSETTE | AGAIN)]  # hand -> 4 blocked
    # blocked by my own piece on the lane and on the far private squares
    assert at([13, 14], [0, 0])[1] == [(14, ((0, 0), (13, 15)), OFF)]


def test_rosette_gives_another_throw_unmirrored():
    got = at([0], [0])
    assert got[4] == [(0, ((4,), (0,)), ROSETTE | AGAIN)]
    assert got[3] == [(0, ((0,), (3,)), 0)]


def test_throw_of_zero_passes():
    got = at([3, 9], [6, 0])
    assert got[0] == [(-1, ((0, 6), (3, 9)), PASS)]
    sp = space(2)
    m = moves(sp, np.arange(sp.size))
    assert (m.n_moves[:, 0][~m.terminal] == 1).all() and m.passed[:, 0, 0][~m.terminal].all()
    mir = sp.rank_many(*mirror_many_of(sp, np.arange(sp.size)))
    assert (m.succ[:, 0, 0][~m.terminal] == mir[~m.terminal]).all()


def mirror_many_of(sp, idx):
    from markov_oca.ur.state import mirror_many

    return mirror_many(*sp.unrank_many(idx))


def test_die_has_no_zero():
    r = load_ur("ur-simplificado", {"pieces": 1})
    got = at([0], [0], r)
    assert sorted(got) == [1, 2, 3, 4]
    assert got[4] == [(0, ((4,), (0,)), ROSETTE | AGAIN)]


def test_total_off_end():
    resc = load_ur("ur-7-rescatados", {"pieces": 5})
    base = load_ur("ur", {"pieces": 5})
    mine, theirs = [15, 15, 15, 12, 0], [15, 15, 15, 0, 0]
    # the 7th piece off ends the game, 4 against 3: the mover wins
    assert at(mine, theirs, resc)[3][1] == (12, ((0, 0, 15, 15, 15), (0, 15, 15, 15, 15)),
                                            OFF | GAME_OVER | MOVER_WINS)
    assert at(mine, theirs, base)[3][1] == (12, ((0, 0, 15, 15, 15), (0, 15, 15, 15, 15)), OFF)
    # the 7th piece off, 3 against 4: the game is over and the mover has lost
    mine, theirs = [15, 15, 14, 0, 0], [15, 15, 15, 15, 0]
    assert at(mine, theirs, resc)[1][1] == (14, ((0, 15, 15, 15, 15), (0, 0, 15, 15, 15)), OFF | GAME_OVER)
    assert at(mine, theirs, base)[1][1] == (14, ((0, 15, 15, 15, 15), (0, 0, 15, 15, 15)), OFF)
    over = encode([0, 0, 15, 15, 15], [0, 15, 15, 15, 15])
    assert is_terminal(over, resc) and winner(over, resc) == -1 and winner(mirror(over), resc) == 1
    assert not is_terminal(over, base) and winner(over, base) == 0
    done = encode([15] * 5, [0] * 5)
    assert is_terminal(done, base) and winner(done, base) == 1 and winner(done, resc) == 1


def test_terminal_positions_have_no_moves():
    sp = space(1)
    m = moves(sp, [sp.rank(*encode([15], [3])), sp.rank(*encode([3], [15]))])
    assert m.terminal.tolist() == [True, True] and m.win.tolist() == [1, -1]
    assert (m.n_moves == 0).all() and (m.succ == -1).all()


# ----------------------------------------------------------------------------- a plain reference, every position


def reference(mine, theirs, thr, rules):
    """Legal moves by the prose rules: [(frm, successor (mine, theirs) from the next mover's view, events)]."""
    n = rules.pieces
    total = rules.end_total

    def over(a, b):
        return a == n or b == n or (total and a + b >= total)

    if over(mine.count(15), theirs.count(15)):
        return []
    out = []
    if thr > 0:
        for o in sorted(set(s for s in mine if s != 15)):
            d = o + thr
            if d > 15 or (d < 15 and d in mine):
                continue
            ev = 0
            th = list(theirs)
            if d in LANE and d in theirs:
                if d in rules.rosettes:
                    continue
                th[th.index(d)] = 0
                ev |= CAPTURE
            mi = list(mine)
            mi[mi.index(o)] = d
            if d == 15:
                ev |= OFF
            if d in rules.rosettes:
                ev |= ROSETTE
            a, b = mi.count(15), th.count(15)
            if over(a, b):
                ev |= GAME_OVER | (MOVER_WINS if a > b else 0)
            elif ev & ROSETTE:
                ev |= AGAIN
            nxt = (tuple(sorted(mi)), tuple(sorted(th))) if ev & AGAIN else flipped(mi, th)
            out.append((o, nxt, ev))
    if not out:
        out = [(-1, flipped(mine, theirs), PASS)]
    return out


RULE_CASES = [
    ("ur", {}),
    ("ur-simplificado", {}),
    ("ur-7-rescatados", {"total": 3}),
    ("ur-7-rescatados", {}),
]


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("name, opts", RULE_CASES)
def test_every_position_against_reference(n, name, opts):
    rules = load_ur(name, {**opts, "pieces": n})
    sp = space(n)
    m = moves(sp, None, rules)
    for i in range(sp.size):
        mine, theirs = decode(sp.unrank(i))
        for t, thr in enumerate(m.throws):
            got = [(int(m.frm[i, t, j]), decode(sp.unrank(int(m.succ[i, t, j]))), int(m.events[i, t, j]))
                   for j in range(m.n_moves[i, t])]
            assert got == reference(list(mine), list(theirs), int(thr), rules), (mine, theirs, int(thr))


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("name, opts", RULE_CASES)
def test_invariants_over_all_positions(n, name, opts):
    rules = load_ur(name, {**opts, "pieces": n})
    sp = space(n)
    m = moves(sp, None, rules)
    k, nt = sp.size, len(rules.throws)
    assert m.succ.shape == (k, nt, MAX_MOVES) and m.n_moves.shape == (k, nt)
    assert np.isclose(m.probs.sum(), 1.0)
    # terminal positions have no moves; every other one has at least one entry per throw
    assert (m.n_moves[m.terminal] == 0).all() and (m.n_moves[~m.terminal] >= 1).all()
    assert (m.win[~m.terminal] == 0).all()
    assert (m.legal <= n).all()
    used = np.arange(MAX_MOVES)[None, None, :] < m.n_moves[:, :, None]
    assert (m.succ[used] >= 0).all() and (m.succ[used] < k).all() and (m.succ[~used] == -1).all()
    assert (m.frm[~used] == -1).all() and (m.events[~used] == 0).all()
    # a pass is the only entry; moves come from distinct squares, ascending
    assert (m.passed[:, :, 1:] == False).all()  # noqa: E712
    real = used & ~m.passed
    assert (np.diff(m.frm.astype(np.int16), axis=2)[real[:, :, 1:] & real[:, :, :-1]] > 0).all()
    assert ((m.frm[real] >= 0) & (m.frm[real] <= 14)).all()
    # events hang together
    ev = m.events[used]
    assert (((ev & AGAIN) != 0) <= ((ev & ROSETTE) != 0)).all()
    assert (((ev & GAME_OVER) != 0) <= ((ev & OFF) != 0)).all()
    assert (((ev & MOVER_WINS) != 0) <= ((ev & GAME_OVER) != 0)).all()
    assert not ((ev & AGAIN) & ((ev & GAME_OVER) >> 4)).any()
    assert (((ev & PASS) != 0) <= (ev == PASS)).all()
    # every successor unranks to a valid position with N pieces a side; game over iff it is terminal
    pos = sp.unrank_many(m.succ[used].astype(np.int64))
    assert (sp.rank_many(*pos) == m.succ[used]).all()
    lane = pos.lane.astype(np.int64)
    digits = np.stack([(lane // 3**d) % 3 for d in range(8)])
    pop = np.array([bin(x).count("1") for x in range(64)])
    for mask, hand, off, colour in ((pos.mine_mask, pos.mine_hand, pos.mine_off, 1),
                                    (pos.their_mask, pos.their_hand, pos.their_off, 2)):
        assert (hand >= 0).all() and (off >= 0).all()
        assert (hand + pop[mask] + (digits == colour).sum(axis=0) + off == n).all()
    nxt = moves(sp, m.succ[used], rules)
    assert (nxt.terminal == ((ev & GAME_OVER) != 0)).all()
    # a finished game is won by the side that just moved iff MOVER_WINS (the successor is mirrored)
    go = (ev & GAME_OVER) != 0
    assert (nxt.win[go] == np.where((ev[go] & MOVER_WINS) != 0, -1, 1)).all()
    src = np.broadcast_to(np.arange(k)[:, None, None], m.succ.shape)[used]
    before = sp.unrank_many(src.astype(np.int64))
    again = (ev & AGAIN) != 0
    # after a rosette the opponent's side is untouched (no capture on a rosette)
    for fld in ("their_mask", "their_hand", "their_off"):
        assert (getattr(pos, fld)[again] == getattr(before, fld)[again]).all()
    # the side that did not move keeps its pieces, up to a capture
    cap = (ev & CAPTURE) != 0
    assert ((pos.mine_hand[~again] - before.their_hand[~again]) == cap[~again]).all()
