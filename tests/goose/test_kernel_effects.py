"""Every effect of the goose rules, played on crafted positions with exact probabilities.

The comments number the steps of a turn as follows: (1) a player stuck on a waiting square
passes; (2) a player with turns to miss passes and the count drops by one; (3) the player
throws two dice, or one where the rule set says so; (4) from square 0 a throw of 9 goes to
26 when it is 6+3 and to 53 when it is 5+4; (5) past the goal G the piece bounces back by
the excess; (6) the effect of each square the piece is moved to applies in turn; (7) with
one player per square, a piece where the mover comes to rest goes to the square the mover
started from; (8) on oca-tradicional a goose earns another throw; (9) reaching G finishes.
"Square effects" are the boards' special squares (geese, bridge, inn, well, maze, prison,
death). Choices the rule texts leave open are marked (choice); each is a named option.

Two levels are checked:

* the compiled board (``compile_board``): what one throw from one square does to the
  moving piece (``board.throws[square]``);
* the joint kernel (``markov_oca.goose.kernel._expand``): one step from a crafted joint
  state, with every interaction between the pieces (occupancy, release from a waiting
  square, missed turns, another throw, finishing). Where a crafted state is reachable, the
  built chain's row is checked to be the same.

Pieces are written as ``P(square, skip, wait, again)``; a plain square can be given as an int.
Probabilities are exact fractions (``pnum / denom``).
"""

from __future__ import annotations

import copy
import functools
from fractions import Fraction as F
from typing import Any, NamedTuple

import numpy as np
import pytest

from markov_oca.core.errors import RulesError
from markov_oca.core.rulefile import read_toml, resolve_source, shipped_names
from markov_oca.goose.board import compile_board
from markov_oca.goose.kernel import _expand, _scratch
from markov_oca.goose.model import goose_model
from markov_oca.goose.rules import build_goose, load_goose

SHIPPED = ("oca-tradicional", "oca-moderna", "jeu-de-l-oie")


# ----------------------------------------------------------------------------- helpers


class P(NamedTuple):
    """One piece: its square, turns still to miss, waiting, throwing again."""

    square: int
    skip: int = 0
    wait: bool = False
    again: bool = False


class Branch(NamedTuple):
    next: Any  # (seat to move, (P, ...)) or an outcome name
    p: F
    throw: bool
    stake: int
    place: int


def _opts_key(options: dict[str, Any] | None) -> tuple:
    return tuple(sorted((options or {}).items()))


@functools.cache
def _rules(name: str, opts: tuple) -> Any:
    return load_goose(name, dict(opts))


def rules(name: str, **options: Any):
    return _rules(name, _opts_key(options))


@functools.cache
def _model(name: str, players: int, opts: tuple):
    return goose_model(_rules(name, opts), players)


def model(name: str, players: int, **options: Any):
    return _model(name, players, _opts_key(options))


@functools.cache
def _chain(name: str, players: int, opts: tuple):
    return _model(name, players, opts).build()


def chain(name: str, players: int, **options: Any):
    return _chain(name, players, _opts_key(options))


def throws_from(r, square: int) -> dict[int, list]:
    """The compiled throws from ``square``, by total (a total may have several branches)."""
    out: dict[int, list] = {}
    for t in compile_board(r).throws[square]:
        out.setdefault(t.total, []).append(t)
    return out


def one_throw(r, square: int, total: int):
    ts = throws_from(r, square)[total]
    assert len(ts) == 1, ts
    return ts[0]


def local_id(m, piece: P | int) -> int:
    piece = P(piece) if isinstance(piece, int) else piece
    lc = m.local
    if piece.square == m.rules.goal:
        return int(np.nonzero(lc.finished)[0][0])
    hits = np.nonzero((lc.square == piece.square) & (lc.skip == piece.skip) & (lc.wait == piece.wait)
                      & (lc.again == piece.again) & ~lc.finished)[0]
    assert hits.size == 1, f"no local state {piece} in this model"
    return int(hits[0])


_PIECES: dict[int, tuple[Any, tuple[P, ...]]] = {}


def _pieces_table(m) -> tuple[P, ...]:
    """The piece of every local state of a model, built once per model."""
    if id(m) not in _PIECES or _PIECES[id(m)][0] is not m:
        lc = m.local
        _PIECES[id(m)] = (m, tuple(P(int(lc.square[l]), int(lc.skip[l]), bool(lc.wait[l]), bool(lc.again[l]))
                                   for l in range(lc.size)))
    return _PIECES[id(m)][1]


def piece_of(m, l: int) -> P:
    return _pieces_table(m)[l]


def encode(m, seat: int, pieces) -> int:
    return m.encode(seat, [local_id(m, p) for p in pieces])


def decode(m, full_id: int):
    """Seat to move and pieces of a model id (the mixed radix of model.py, in plain Python)."""
    table, n, L = _pieces_table(m), m.players, m.n_local
    seat, rest = full_id % n, full_id // n
    pieces = []
    for _ in range(n):
        pieces.append(table[rest % L])
        rest //= L
    return seat, tuple(pieces)


def step(m, seat: int, pieces) -> list[Branch]:
    """Every branch of one step of the joint kernel from a crafted state."""
    n_full = m.full_size
    sc = _scratch(m.players, m.board.branches + 1)
    out_next, out_p, out_throw, out_stake, out_place = sc[2:7]
    c = _expand(encode(m, seat, pieces), m.tables(), sc)
    names = m.outcome_names()
    out = []
    for j in range(c):
        t = int(out_next[j])
        nxt = names[t - n_full] if t >= n_full else decode(m, t)
        out.append(Branch(nxt, F(int(out_p[j]), m.board.denominator), bool(out_throw[j]), int(out_stake[j]),
                          int(out_place[j])))
    assert sum(b.p for b in out) == 1
    return out


def dist(branches) -> dict:
    """Successor -> total probability."""
    d: dict = {}
    for b in branches:
        d[b.next] = d.get(b.next, F(0)) + b.p
    return d


_INDEX: dict[int, tuple[Any, dict[int, int]]] = {}


def state_index(c) -> dict[int, int]:
    """Model id -> chain state, built once per chain."""
    if id(c) not in _INDEX or _INDEX[id(c)][0] is not c:
        _INDEX[id(c)] = (c, {int(s): i for i, s in enumerate(c.state_ids)})
    return _INDEX[id(c)][1]


def chain_step(m, c, seat: int, pieces) -> list[Branch]:
    """The built chain's row of a crafted (reachable) state, decoded like ``step``."""
    index = state_index(c)
    state = encode(m, seat, pieces)
    assert state in index, f"state {seat, pieces} is not reachable"
    i = index[state]
    by_index = {v: k for k, v in c.outcomes.items()}
    out = []
    for j in range(c.next.shape[1]):
        t = int(c.next[i, j])
        if t < 0:
            continue
        nxt = by_index[t] if t in by_index else decode(m, int(c.state_ids[t]))
        place = int(c.branch_rewards["place"][i, j]) if "place" in c.branch_rewards else 0
        stake = int(c.branch_rewards["stakes"][i, j]) if "stakes" in c.branch_rewards else 0
        out.append(Branch(nxt, F(int(c.pnum[i, j]), c.denom), bool(c.branch_rewards["throws"][i, j]), stake, place))
    return out


def chain_index(m, c, seat: int, pieces) -> int:
    return state_index(c)[encode(m, seat, pieces)]


def raw_rules(name: str) -> dict:
    source, path = resolve_source(name)
    return copy.deepcopy(read_toml(source, path))


def tiny_raw(goal: int, squares: dict[int, dict] | None = None, *, count: int = 1, faces: int = 6,
             **engine: Any) -> dict:
    return {
        "game": {"name": "tiny", "goal": goal, "players": 2},
        "dice": {"count": count, "faces": faces},
        "rules": engine,
        "squares": {str(k): v for k, v in (squares or {}).items()},
    }


# ----------------------------------------------------------------------------- first-throw rule


@pytest.mark.parametrize("name", SHIPPED)
def test_first_throw_targets_on_shipped_boards(name):
    # Turn step 4: from square 0 a 9 goes to 26 when it is 6+3 and to 53 when
    # it is 5+4; each has probability 2/36 (two orders of the dice). The piece is placed
    # there and (default) the square's effect is not applied.
    r = rules(name)
    nines = throws_from(r, 0)[9]
    assert sorted((t.faces, t.final, t.probability) for t in nines) == [
        ((5, 4), 53, F(2, 36)),
        ((6, 3), 26, F(2, 36)),
    ]
    for t in nines:
        assert t.landings == (t.final,) and t.moved and not t.finished
        assert (t.skip, t.wait, t.again, t.stake) == (0, False, False, 0)
    # Every 9 from 0 is one of these two: nothing else totals 9 from 0.
    assert sum(t.probability for t in nines) == F(4, 36)
    # In the joint chain: seat 1 opens with 6+3 / 5+4 and seat 2 is to move.
    m, c = model(name, 2), chain(name, 2)
    d = dist(chain_step(m, c, 0, [0, 0]))
    assert d[(1, (P(26), P(0)))] == F(2, 36)
    assert d[(1, (P(53), P(0)))] == F(2, 36)
    assert d == dist(step(m, 0, [0, 0]))


def test_first_throw_effect_not_applied_on_tradicional():
    # Turn step 4 (choice): the square reached by the first-throw rule keeps no
    # effect. On oca-tradicional 26 and 53 are "dice" squares (26 -> 34, 53 -> 61), but a
    # first throw of 6+3 / 5+4 stays on 26 / 53.
    r = rules("oca-tradicional")
    assert r.square(26).jump == 34 and r.square(53).jump == 61
    by_faces = {t.faces: t for t in throws_from(r, 0)[9]}
    assert by_faces[(6, 3)].final == 26 and by_faces[(6, 3)].landings == (26,)
    assert by_faces[(5, 4)].final == 53 and by_faces[(5, 4)].landings == (53,)
    # A 9 that is not a first throw does apply the square: 17 + 9 = 26 -> 34.
    t = one_throw(r, 17, 9)
    assert (t.final, t.landings, t.probability) == (34, (26, 34), F(4, 36))


def test_first_throw_effect_option_applies_it():
    # Turn step 4: option first_throw_effect = true applies the square's effect.
    r = rules("oca-tradicional", first_throw_effect=True)
    by_faces = {t.faces: t for t in throws_from(r, 0)[9]}
    assert (by_faces[(6, 3)].final, by_faces[(6, 3)].landings) == (34, (26, 34))
    assert (by_faces[(5, 4)].final, by_faces[(5, 4)].landings) == (61, (53, 61))
    assert by_faces[(6, 3)].probability == by_faces[(5, 4)].probability == F(2, 36)
    m = model("oca-tradicional", 2, first_throw_effect=True)
    d = dist(step(m, 0, [0, 0]))
    assert d[(1, (P(34), P(0)))] == F(2, 36)
    assert d[(1, (P(61), P(0)))] == F(2, 36)
    assert (1, (P(26), P(0))) not in d and (1, (P(53), P(0))) not in d


def test_first_throw_applies_again_after_death():
    # Turn step 4: the rule applies to every throw from 0, so again after death
    # (58 -> 0, pay 1) sends a piece back to 0.
    r = rules("oca-tradicional")
    death = one_throw(r, 51, 7)
    assert (death.final, death.landings, death.stake, death.probability) == (0, (58, 0), 1, F(1, 6))
    m, c = model("oca-tradicional", 2), chain("oca-tradicional", 2)
    br = [b for b in chain_step(m, c, 0, [51, 40]) if b.next == (1, (P(0), P(40)))]
    assert len(br) == 1 and br[0].p == F(1, 6) and br[0].stake == 1
    # Back on 0 (seat 2 elsewhere, so this state exists only after a death): 6+3 -> 26 and
    # 5+4 -> 53 again, 2/36 each, and 26 is again not applied.
    d = dist(chain_step(m, c, 0, [0, 40]))
    assert d[(1, (P(26), P(40)))] == F(2, 36)
    assert d[(1, (P(53), P(40)))] == F(2, 36)
    assert (1, (P(34), P(40))) not in d
    # Same on the modern board, where the occupant-returns rule can also bring a piece to 0.
    m2 = model("oca-moderna", 2)
    d2 = dist(step(m2, 1, [40, 0]))
    assert d2[(0, (P(40), P(26)))] == F(2, 36)
    assert d2[(0, (P(40), P(53)))] == F(2, 36)


# ----------------------------------------------------------------------------- overshoot


def test_bounce_back_by_the_excess():
    # Turn step 5: past G the piece bounces back by the excess, G - (target - G).
    r = rules("oca-moderna")
    # From 60 a 9 is 6 too many: 63 - 6 = 57; a 10 is 7 too many: 56.
    t = one_throw(r, 60, 9)
    assert (t.final, t.landings, t.moved, t.finished, t.probability) == (57, (57,), True, False, F(4, 36))
    t = one_throw(r, 60, 10)
    assert (t.final, t.landings, t.probability) == (56, (56,), F(3, 36))
    t = one_throw(r, 60, 3)
    assert t.finished and t.final == 63 and t.landings == (63,) and t.probability == F(2, 36)
    # A bounce onto the skull is a chain too: 60 + 8 = 68 -> 58 -> 0.
    assert one_throw(r, 60, 8).landings == (58, 0)
    # The joint chain: only the exact 3 wins.
    m = model("oca-moderna", 2)
    d = dist(step(m, 0, [60, 10]))
    assert d["seat 1 wins"] == F(2, 36)
    assert d[(1, (P(57), P(10)))] == F(4, 36)
    assert d[(1, (P(56), P(10)))] == F(3, 36)
    assert d[(1, (P(0), P(10)))] == F(5, 36)


def test_exact_finish_false_finishes_on_overshoot():
    # Turn step 5: option exact_finish = false, reaching or passing G finishes.
    r = rules("oca-moderna", exact_finish=False)
    assert r.overshoot == "finish"
    ts = throws_from(r, 60)
    for total in range(3, 13):
        (t,) = ts[total]
        assert t.finished and t.final == 63 and (t.skip, t.wait, t.again) == (0, False, False)
    assert not ts[2][0].finished and ts[2][0].final == 62
    m = model("oca-moderna", 2, exact_finish=False)
    d = dist(step(m, 0, [60, 10]))
    assert d == {"seat 1 wins": F(35, 36), (1, (P(62), P(10))): F(1, 36)}


def test_overshoot_stay_leaves_the_piece():
    # Turn step 5, engine option overshoot = "stay": a throw past G leaves the piece
    # where it was (moved False, no square landed on).
    r = rules("oca-moderna", overshoot="stay")
    t = one_throw(r, 60, 10)
    assert (t.final, t.moved, t.landings, t.finished, t.probability) == (60, False, (), False, F(3, 36))
    m = model("oca-moderna", 2, overshoot="stay")
    d = dist(step(m, 0, [60, 10]))
    # 3 finishes; 2 goes to 62; 4..12 stay on 60 (the other piece is untouched).
    assert d == {"seat 1 wins": F(2, 36), (1, (P(62), P(10))): F(1, 36), (1, (P(60), P(10))): F(33, 36)}


# ----------------------------------------------------------------------------- geese


def test_goose_repeats_the_total():
    # Square effects (oca-moderna): a goose moves on again by the same total.
    r = rules("oca-moderna")
    t = one_throw(r, 4, 5)
    assert (t.final, t.landings, t.again, t.probability) == (14, (9, 14), False, F(4, 36))
    m = model("oca-moderna", 2)
    d = dist(step(m, 0, [4, 20]))
    assert d[(1, (P(14), P(20)))] == F(4, 36) + F(3, 36)  # 5 via the goose, 10 directly


def test_chain_of_effects():
    # Turn step 6: the effect of each square the piece is moved to is applied in turn.
    r = rules("oca-moderna")
    # goose then maze: 30 + 6 = 36 (goose) -> 42 (maze) -> 30
    t = one_throw(r, 30, 6)
    assert (t.final, t.landings) == (30, (36, 42, 30))
    # goose then skull: 50 + 4 = 54 (goose) -> 58 (skull) -> 0
    t = one_throw(r, 50, 4)
    assert (t.final, t.landings) == (0, (54, 58, 0))
    # Goose then goose needs a total of 9 (the geese are 9 apart), which from 0 is the
    # first-throw rule: on the same board without it, 0 + 9 runs every goose and reaches 63.
    raw = raw_rules("oca-moderna")
    raw["first_throw"] = {}
    r2 = build_goose(raw, "no-first-throw.toml", {})
    t = one_throw(r2, 0, 9)
    assert t.landings == (9, 18, 27, 36, 45, 54, 63) and t.finished and t.probability == F(4, 36)
    assert (t.skip, t.wait, t.again) == (0, False, False)


def test_goose_after_bounce_forward_and_backward():
    # Turn step 6 (choice): a goose reached by bouncing back repeats the throw
    # forward (bouncing again past G); goose_after_bounce = "backward" keeps the direction.
    # From 61 a total of 11 reaches 72, bounces to 54 (a goose).
    fwd = one_throw(rules("oca-moderna"), 61, 11)
    assert (fwd.final, fwd.landings, fwd.probability) == (61, (54, 61), F(2, 36))  # 54 + 11 = 65 -> 61
    back = one_throw(rules("oca-moderna", goose_after_bounce="backward"), 61, 11)
    assert (back.final, back.landings, back.probability) == (43, (54, 43), F(2, 36))  # 54 - 11 = 43
    # From 62 a total of 10 reaches 72 -> 54 too: forward 64 -> 62, backward 44.
    assert one_throw(rules("jeu-de-l-oie"), 62, 10).landings == (54, 62)
    assert one_throw(rules("jeu-de-l-oie", goose_after_bounce="backward"), 62, 10).landings == (54, 44)
    m = model("oca-moderna", 2, goose_after_bounce="backward")
    assert dist(step(m, 0, [61, 10]))[(1, (P(43), P(10)))] == F(2, 36)


def test_tradicional_goose_to_goose_and_throw_again():
    # Square effects (oca-tradicional): a goose jumps to the next goose and the player
    # throws again (step 8): the same seat moves next in the joint chain.
    r = rules("oca-tradicional")
    t = one_throw(r, 0, 5)
    assert (t.final, t.landings, t.again, t.skip, t.stake, t.probability) == (9, (5, 9), True, 0, 0, F(4, 36))
    m, c = model("oca-tradicional", 2), chain("oca-tradicional", 2)
    d = dist(chain_step(m, c, 0, [0, 0]))
    assert d[(0, (P(9, again=True), P(0)))] == F(4, 36)
    # The throw again, from 9: a 3 goes to 12 and now seat 2 moves; a 5 lands on 14 (a
    # goose) -> 18 and seat 1 throws once more.
    d = dist(chain_step(m, c, 0, [P(9, again=True), P(0)]))
    assert d[(1, (P(12), P(0)))] == F(2, 36)
    assert d[(0, (P(18, again=True), P(0)))] == F(4, 36)
    assert c.turn_start[chain_index(m, c, 0, [P(9, again=True), P(0)])] == False  # noqa: E712
    # 59 -> 63 finishes: from 55 a 4 lands on 59, a 12 bounces (67 -> 59), both finish.
    assert one_throw(r, 55, 4).landings == (59, 63) and one_throw(r, 55, 4).finished
    t = one_throw(r, 55, 12)
    assert t.landings == (59, 63) and t.finished and not t.again
    d = dist(step(m, 0, [55, 10]))
    assert d["seat 1 wins"] == F(3, 36) + F(5, 36) + F(1, 36)  # 4, 8 (exact), 12


def test_tradicional_bridge_to_inn():
    # Square effects (oca-tradicional): 6 is a bridge to 19 and applies 19 (miss 1
    # turn); 6 pays 1 and 19 pays 1.
    r = rules("oca-tradicional")
    t = one_throw(r, 0, 6)
    assert (t.final, t.landings, t.skip, t.stake, t.probability) == (19, (6, 19), 1, 2, F(5, 36))
    m = model("oca-tradicional", 2)
    (b,) = [b for b in step(m, 0, [0, 0]) if b.next == (1, (P(19, 1), P(0)))]
    assert b.p == F(5, 36) and b.stake == 2 and b.throw
    # Straight onto the inn: miss 1, pay 1.
    t = one_throw(r, 15, 4)
    assert (t.final, t.landings, t.skip, t.stake) == (19, (19,), 1, 1)


def test_tradicional_second_bridge_option():
    # Square effects: option second_bridge, 6 -> 12 (the toll of 1 still paid).
    r = rules("oca-tradicional", second_bridge=True)
    t = one_throw(r, 0, 6)
    assert (t.final, t.landings, t.skip, t.stake, t.probability) == (12, (6, 12), 0, 1, F(5, 36))


def test_tradicional_maze_and_death():
    # Square effects (oca-tradicional): 42 maze -> 30, miss 1, pay 1; 58 death -> 0, pay 1.
    r = rules("oca-tradicional")
    t = one_throw(r, 35, 7)
    assert (t.final, t.landings, t.skip, t.stake, t.probability) == (30, (42, 30), 1, 1, F(6, 36))
    t = one_throw(r, 51, 7)
    assert (t.final, t.landings, t.skip, t.stake) == (0, (58, 0), 0, 1)
    m = model("oca-tradicional", 2)
    bs = {b.next: b for b in step(m, 0, [35, 10])}
    assert bs[(1, (P(30, 1), P(10)))].stake == 1 and bs[(1, (P(30, 1), P(10)))].p == F(1, 6)
    # A plain move pays nothing: a 2 to 37.
    assert bs[(1, (P(37), P(10)))].stake == 0


def test_tradicional_one_die_from_sixty():
    # Turn step 3, square effects (oca-tradicional): one die from square 60 on.
    r = rules("oca-tradicional")
    b = compile_board(r)
    for s in (60, 61, 62):
        assert len(b.throws[s]) == 6
        assert [t.total for t in b.throws[s]] == [1, 2, 3, 4, 5, 6]
        assert all(t.probability == F(1, 6) for t in b.throws[s])
    assert [t.final for t in b.throws[60]] == [61, 62, 63, 62, 61, 60]
    assert len(b.throws[57]) == 11  # two dice below 60
    assert b.denominator == 36
    m = model("oca-tradicional", 2)
    d = dist(step(m, 0, [60, 10]))
    assert d == {"seat 1 wins": F(1, 6), (1, (P(61), P(10))): F(2, 6), (1, (P(62), P(10))): F(2, 6),
                 (1, (P(60), P(10))): F(1, 6)}


def test_tradicional_one_die_option():
    # Square effects: option dice = 1, one die all game, and so no first-throw 9.
    r = rules("oca-tradicional", dice=1)
    b = compile_board(r)
    assert b.denominator == 6 and r.first_throw == () and r.dice_from == ()
    for s in range(63):
        assert [t.total for t in b.throws[s]] == [1, 2, 3, 4, 5, 6]
        assert all(t.faces is None for t in b.throws[s])
    assert [t.final for t in b.throws[0]] == [1, 2, 3, 4, 9, 19]  # 5 goose -> 9, 6 bridge -> 19
    m = model("oca-tradicional", 2, dice=1)
    d = dist(step(m, 0, [0, 0]))
    assert d[(0, (P(9, again=True), P(0)))] == F(1, 6)
    assert d[(1, (P(19, 1), P(0)))] == F(1, 6)


# ----------------------------------------------------------------------------- turns to miss


def test_missed_turns_count_down():
    # Turn step 2: a player with turns to lose passes, the counter drops by one,
    # the turn passes on; probability 1, no throw. oca-moderna: the hotel (19) misses 2.
    m, c = model("oca-moderna", 2), chain("oca-moderna", 2)
    t = one_throw(m.rules, 15, 4)
    assert (t.final, t.skip) == (19, 2)
    (b,) = chain_step(m, c, 0, [P(19, 2), P(10)])
    assert b == Branch((1, (P(19, 1), P(10))), F(1), False, 0, 0)
    (b,) = chain_step(m, c, 0, [P(19, 1), P(10)])
    assert b == Branch((1, (P(19), P(10))), F(1), False, 0, 0)
    # After the missed turns, seat 1 throws from 19 again.
    assert len(chain_step(m, c, 0, [P(19), P(10)])) == 11
    # Seat 2 too; a missed turn of seat 2 passes to seat 1.
    (b,) = step(m, 1, [P(10), P(19, 2)])
    assert b == Branch((0, (P(10), P(19, 1))), F(1), False, 0, 0)
    # Turns still count (a missed turn is a turn).
    assert c.turn_start[chain_index(m, c, 0, [P(19, 2), P(10)])]


def test_missed_turn_in_tradicional_maze():
    # Maze: miss 1 on oca-tradicional, then the piece throws from 30.
    m = model("oca-tradicional", 2)
    (b,) = step(m, 0, [P(30, 1), P(12)])
    assert b == Branch((1, (P(30), P(12))), F(1), False, 0, 0)


# ----------------------------------------------------------------------------- occupancy


def test_occupancy_occupant_returns_to_origin():
    # Turn step 7 (oca-moderna): the piece resting where the mover comes to rest
    # goes to the square the mover threw from.
    m = model("oca-moderna", 2)
    d = dist(step(m, 0, [10, 15]))
    assert d[(1, (P(15), P(10)))] == F(4, 36)
    # Resting square counts, not squares passed in a chain: 3 + 3 = 6 (bridge) -> 12.
    # Seat 2 on 12: a 3 (bridge) and a 9 both come to rest on 12 and send it to 3.
    d = dist(step(m, 0, [3, 12]))
    assert d[(1, (P(12), P(3)))] == F(2, 36) + F(4, 36)
    # Seat 2 on 7 stays there when the mover rests on 12 (a 3 via the bridge, or a 9).
    d = dist(step(m, 0, [3, 7]))
    assert d[(1, (P(12), P(7)))] == F(2, 36) + F(4, 36)
    # A bounce, then a bump: 60 + 9 -> 57 where seat 2 stands; seat 2 goes to 60.
    d = dist(step(m, 0, [60, 57]))
    assert d[(1, (P(57), P(60)))] == F(4, 36)
    # The first-throw rule too: 6+3 -> 26 where seat 2 stands; seat 2 goes to 0.
    d = dist(step(m, 0, [0, 26]))
    assert d[(1, (P(26), P(0)))] == F(2, 36)


def test_occupancy_bumped_piece_takes_no_effect_and_loses_missed_turns():
    # Turn step 7 (choice): the bumped piece takes no effect on the mover's origin and
    # loses its turns to miss and its waiting status.
    m = model("oca-moderna", 2)
    # Seat 2 misses 2 on the hotel; seat 1 lands there from 15: seat 2 to 15, plain.
    d = dist(step(m, 0, [15, P(19, 2)]))
    assert d[(1, (P(19, 2), P(15)))] == F(3, 36)
    d = dist(step(m, 0, [15, P(19, 1)]))
    assert d[(1, (P(19, 2), P(15)))] == F(3, 36)
    # The mover threw from the hotel (its turns served): the bumped piece lands on 19 with
    # no turns to miss.
    d = dist(step(m, 0, [19, 24]))
    assert d[(1, (P(24), P(19)))] == F(4, 36)
    # Waiting status lost: seat 2 waits in the well (31); seat 1 comes to rest there from 25.
    d = dist(step(m, 0, [25, P(31, wait=True)]))
    assert d[(1, (P(31, wait=True), P(25)))] == F(5, 36)
    # Prison (52) the same, from 46.
    d = dist(step(m, 0, [46, P(52, wait=True)]))
    assert d[(1, (P(52, wait=True), P(46)))] == F(5, 36)


def test_occupancy_squares_zero_and_goal_are_shared():
    # Turn step 7: squares 0 and G hold any number of pieces (no bump).
    m = model("oca-moderna", 2)
    # 51 + 7 = 58 (skull) -> 0 where seat 2 stands: both on 0.
    d = dist(step(m, 0, [51, 0]))
    assert d[(1, (P(0), P(0)))] == F(6, 36)
    # 63: with until = "last" (3 players) seat 2 already finished; seat 1 finishes on 63
    # too and seat 3, the only one left, is last.
    m3 = model("oca-moderna", 3, until="last")
    bs = [b for b in step(m3, 0, [60, 63, 10]) if b.next == "seat 3 last"]
    assert len(bs) == 1 and bs[0].p == F(2, 36) and bs[0].place == 2


def test_occupancy_mover_returns_option():
    # Engine option occupancy = "mover-returns": the mover goes back to its origin instead.
    m = model("oca-moderna", 2, occupancy="mover-returns")
    d = dist(step(m, 0, [10, 15]))
    assert d[(1, (P(10), P(15)))] == F(4, 36)


def test_no_occupancy_pieces_share_squares():
    # Turn step 7: oca-tradicional has no occupancy rule; pieces share squares.
    m = model("oca-tradicional", 2)
    d = dist(step(m, 0, [10, 17]))
    assert d[(1, (P(17), P(17)))] == F(6, 36)  # a 7: 10 -> 17, where seat 2 stands


# ----------------------------------------------------------------------------- waiting squares


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("square", [31, 52])
def test_stuck_player_passes(name, square):
    # Turn step 1: a player stuck on a waiting square passes the turn.
    m = model(name, 2)
    (b,) = step(m, 0, [P(square, wait=True), P(10)])
    assert b == Branch((1, (P(square, wait=True), P(10))), F(1), False, 0, 0)
    # ... forever while nobody comes: alone on the board, the pass loops on itself.
    m1 = model(name, 1)
    (b,) = step(m1, 0, [P(square, wait=True)])
    assert b == Branch((0, (P(square, wait=True),)), F(1), False, 0, 0)


def test_landing_on_waiting_square_waits():
    # Square effects: well 31 and prison 52 hold the piece (pay 1 on oca-tradicional).
    for name, stake in (("oca-tradicional", 1), ("oca-moderna", 0), ("jeu-de-l-oie", 0)):
        r = rules(name)
        for start, square in ((25, 31), (46, 52)):
            t = one_throw(r, start, 6)
            assert (t.final, t.wait, t.skip, t.again, t.stake) == (square, True, 0, False, stake)


def test_waiting_release_with_occupancy_sends_stuck_piece_to_origin():
    # "wait until replaced" with the occupancy rule (oca-moderna): the stuck
    # piece is sent to the mover's origin and is no longer waiting; the mover now waits.
    m, c = model("oca-moderna", 2), chain("oca-moderna", 2)
    d = dist(chain_step(m, c, 1, [P(31, wait=True), 25]))
    assert d[(0, (P(25), P(31, wait=True)))] == F(5, 36)
    # The released piece throws on its next turn.
    assert len(step(m, 0, [P(25), P(31, wait=True)])) == 11


def test_waiting_release_without_occupancy_stays_on_square():
    # "wait until replaced" without occupancy (oca-tradicional): the stuck piece
    # stays on the square, released; the mover waits there now and pays 1.
    m, c = model("oca-tradicional", 2), chain("oca-tradicional", 2)
    bs = [b for b in chain_step(m, c, 1, [P(31, wait=True), 25]) if b.next == (0, (P(31), P(31, wait=True)))]
    assert len(bs) == 1 and bs[0].p == F(5, 36) and bs[0].stake == 1
    bs = [b for b in chain_step(m, c, 0, [46, P(52, wait=True)]) if b.next == (1, (P(52, wait=True), P(52)))]
    assert len(bs) == 1 and bs[0].p == F(5, 36) and bs[0].stake == 1
    # The released piece throws on its next turn (from 31: 11 totals) ...
    assert len(chain_step(m, c, 0, [P(31), P(31, wait=True)])) == 11
    # ... and the new prisoner passes.
    (b,) = chain_step(m, c, 1, [P(40), P(31, wait=True)])
    assert b.next == (0, (P(40), P(31, wait=True))) and b.p == 1 and not b.throw


def test_waiting_turns_option():
    # Square effects (jeu-de-l-oie): option waiting = "turns:K" makes the well and the
    # prison miss K turns instead (K = 2 by default: "turns" alone means turns:2).
    r = rules("jeu-de-l-oie", waiting="turns:2")
    for start, square in ((25, 31), (46, 52)):
        t = one_throw(r, start, 6)
        assert (t.final, t.wait, t.skip) == (square, False, 2)
    assert rules("jeu-de-l-oie", waiting="turns").waiting_turns == 2
    assert one_throw(rules("jeu-de-l-oie", waiting="turns:3"), 25, 6).skip == 3
    m = model("jeu-de-l-oie", 2, waiting="turns:2")
    assert not m.local.wait.any()
    d = dist(step(m, 0, [25, 10]))
    assert d[(1, (P(31, 2), P(10)))] == F(5, 36)
    (b,) = step(m, 0, [P(31, 2), P(10)])
    assert b.next == (1, (P(31, 1), P(10)))
    (b,) = step(m, 0, [P(31, 1), P(10)])
    assert b.next == (1, (P(31), P(10)))
    # No deadlock is possible any more.
    for players in (1, 2):
        c = chain("jeu-de-l-oie", players, waiting="turns:2")
        assert c.structure.deadlock_classes == 0 and not c.structure.deadlock.any()


# ----------------------------------------------------------------------------- deadlock


def test_deadlock_one_player():
    # "wait until replaced": alone, a stuck player can never move again; the game
    # is deadlocked, a result with a probability, not a hang.
    m, c = model("oca-moderna", 1), chain("oca-moderna", 1)
    for square in (31, 52):
        i = chain_index(m, c, 0, [P(square, wait=True)])
        assert c.structure.deadlock[i]
        assert list(c.next[i][c.next[i] >= 0]) == [i]
    assert c.structure.deadlock_classes == 2
    assert not c.structure.deadlock[c.init]
    p = c.deadlock_probability
    assert 0 < p < 1
    assert c.outcome_probabilities()["seat 1 wins"] + p == pytest.approx(1, abs=1e-12)


def test_deadlock_two_players_both_stuck():
    # When every player still in the game is stuck, the game is deadlocked.
    m, c = model("oca-moderna", 2), chain("oca-moderna", 2)
    both = [(0, [P(31, wait=True), P(52, wait=True)]), (1, [P(31, wait=True), P(52, wait=True)]),
            (0, [P(52, wait=True), P(31, wait=True)]), (1, [P(52, wait=True), P(31, wait=True)])]
    for seat, pieces in both:
        assert c.structure.deadlock[chain_index(m, c, seat, pieces)]
    assert c.structure.deadlock_classes == 2
    # One stuck, the other free: not a deadlock.
    assert not c.structure.deadlock[chain_index(m, c, 0, [P(31, wait=True), P(40)])]
    assert c.deadlock_probability > 0
    total = sum(c.outcome_probabilities().values())
    assert total == pytest.approx(1, abs=1e-9)


# ----------------------------------------------------------------------------- until last


def test_until_last_three_players_kernel():
    # Turn step 9, option until = "last": the others play on; the game ends when one
    # player is left.
    m = model("oca-moderna", 3, until="last")
    bs = {b.next: b for b in step(m, 0, [60, 10, 20])}
    fin = bs[(1, (P(63), P(10), P(20)))]
    assert fin.p == F(2, 36) and fin.place == 1
    # Seat 2 moves next; after it, seat 3, then seat 2 again (seat 1 left the board).
    (b,) = [b for b in step(m, 2, [63, 10, 15]) if b.next == (1, (P(63), P(10), P(17)))]
    assert b.p == F(1, 36)
    # Seat 2 finishing second ends the game: seat 3 is last, seat 2 takes place 2.
    bs = {b.next: b for b in step(m, 1, [63, 60, 20])}
    assert bs["seat 3 last"].p == F(2, 36) and bs["seat 3 last"].place == 2


def test_until_last_three_players_chain():
    # Turn step 9 on a tiny board (goal 4, one 3-sided die, bounce), 3 players.
    raw = tiny_raw(4, faces=3, until="last")
    r = build_goose(raw, "tiny.toml", {})
    m = goose_model(r, 3)
    c = m.build()
    assert set(c.outcomes) == {"seat 1 last", "seat 2 last", "seat 3 last"}
    place = c.branch_rewards["place"]
    # From 1, a 3 finishes: first of three, place 1.
    bs = [b for b in chain_step(m, c, 0, [1, 2, 1]) if b.next == (1, (P(4), P(2), P(1)))]
    assert len(bs) == 1 and bs[0].place == 1 and bs[0].p == F(1, 3)
    # One finished: the two others play on, seat 2 then seat 3 then seat 2. Seat 2 on 2: a 1
    # goes to 3, a 3 bounces (5 -> 3), a 2 finishes second and ends the game: seat 3 is last.
    row = chain_step(m, c, 1, [4, 2, 1])
    bs = {b.next: b for b in row}
    assert dist(row) == {(2, (P(4), P(3), P(1))): F(2, 3), "seat 3 last": F(1, 3)}
    assert bs["seat 3 last"].place == 2
    # Seat 3 on 1 (seat 1 is skipped, it left the board): a 2 shares 3 with seat 2 (no
    # occupancy), a 3 finishes and seat 2 is last.
    row = chain_step(m, c, 2, [4, 3, 1])
    bs = {b.next: b for b in row}
    assert dist(row) == {(1, (P(4), P(3), P(2))): F(1, 3), (1, (P(4), P(3), P(3))): F(1, 3),
                                 "seat 2 last": F(1, 3)}
    assert bs["seat 2 last"].place == 2 and bs[(1, (P(4), P(3), P(2)))].place == 0
    # Every finishing branch has place 1 or 2 (nobody plays for place 3), and the first
    # finisher's place is 1 exactly on branches from states where nobody has finished.
    n = c.state_ids.size
    seats, locs = m.decode(c.state_ids)
    finished_before = m.local.finished[locs].sum(axis=1)
    for i in range(n):
        for j in range(c.next.shape[1]):
            if c.next[i, j] < 0 or place[i, j] == 0:
                continue
            assert place[i, j] == finished_before[i] + 1
    assert set(np.unique(place[:n])) == {0, 1, 2}
    probs = c.outcome_probabilities()
    assert sum(probs.values()) == pytest.approx(1, abs=1e-12) and probs["deadlock"] == 0
    # Every game has exactly one first and one second finisher.
    ex = c.expected({"first": (place == 1).astype(float), "second": (place == 2).astype(float)})
    assert ex["first"][0] == pytest.approx(1, abs=1e-9)
    assert ex["second"][0] == pytest.approx(1, abs=1e-9)


# ----------------------------------------------------------------------------- rule errors


def test_effect_loop_is_a_rules_error():
    # Turn step 6: a chain of effects that would loop is a rule-set error found when
    # the rules are loaded.
    raw = tiny_raw(10, {5: {"jump": 7}, 7: {"jump": 5}}, faces=6)
    with pytest.raises(RulesError, match="loop"):
        build_goose(raw, "loop.toml", {})


def test_goose_bounce_loop_is_a_rules_error():
    # Turn step 6: a loop through repeat geese and the bounce. Goal 20, one die,
    # geese 16 and 18; a 6 from 10: 16 -> 22 bounces to 18 -> 24 bounces to 16 -> ... forever.
    raw = tiny_raw(20, {16: {"goose": "repeat"}, 18: {"goose": "repeat"}}, faces=6)
    with pytest.raises(RulesError, match="loop"):
        build_goose(raw, "goose-loop.toml", {})
    # Kept direction (backward) there is no loop: 18 is left backward, 18 - 6 = 12.
    r = build_goose(raw, "goose-loop.toml", {"goose_after_bounce": "backward"})
    t = one_throw(r, 10, 6)
    assert t.landings == (16, 18, 12)


def test_shipped_rule_files_load():
    assert set(SHIPPED) <= set(shipped_names())


def _effects(r) -> dict:
    return {s: (sq.jump, sq.goose, sq.again, sq.miss, sq.wait, sq.stake) for s, sq in r.squares.items()}


def test_shipped_square_tables():
    # Square effects: the table, square by square, for the three boards.
    trad = _effects(rules("oca-tradicional"))
    geese = (5, 9, 14, 18, 23, 27, 32, 36, 41, 45, 50, 54, 59)
    assert trad == {
        **{g: (None, "next", True, 0, False, 0) for g in geese},
        6: (19, None, False, 0, False, 1),
        19: (None, None, False, 1, False, 1),
        26: (34, None, False, 0, False, 0),
        31: (None, None, False, 0, True, 1),
        42: (30, None, False, 1, False, 1),
        52: (None, None, False, 0, True, 1),
        53: (61, None, False, 0, False, 0),
        58: (0, None, False, 0, False, 1),
    }
    modern = {
        **{g: (None, "repeat", False, 0, False, 0) for g in (9, 18, 27, 36, 45, 54)},
        6: (12, None, False, 0, False, 0),
        19: (None, None, False, 2, False, 0),
        31: (None, None, False, 0, True, 0),
        42: (30, None, False, 0, False, 0),
        52: (None, None, False, 0, True, 0),
        58: (0, None, False, 0, False, 0),
    }
    assert _effects(rules("oca-moderna")) == modern
    assert _effects(rules("jeu-de-l-oie")) == modern
    # Occupancy on oca-moderna and jeu-de-l-oie, not on oca-tradicional; one die from 60 only on oca-tradicional.
    assert rules("oca-tradicional").occupancy == "none"
    assert rules("oca-moderna").occupancy == rules("jeu-de-l-oie").occupancy == "occupant-returns"
    assert [(s, d.count) for s, d in rules("oca-tradicional").dice_from] == [(60, 1)]
    assert rules("oca-moderna").dice_from == rules("jeu-de-l-oie").dice_from == ()
    for name in SHIPPED:
        r = rules(name)
        assert (r.goal, r.dice.count, r.dice.faces, r.until, r.overshoot) == (63, 2, 6, "first", "bounce")
        assert r.goose_after_bounce == "forward" and r.first_throw_effect is False
        assert dict(r.first_throw) == {(6, 3): 26, (5, 4): 53}
    # waiting = "turns:K" on the traditional board keeps the stake of the well and prison.
    t = one_throw(rules("oca-tradicional", waiting="turns:2"), 25, 6)
    assert (t.final, t.wait, t.skip, t.stake) == (31, False, 2, 1)


# ----------------------------------------------------------------------------- row sums


VARIANTS = [(name, {}) for name in SHIPPED] + [
    ("oca-tradicional", {"second_bridge": True}),
    ("oca-tradicional", {"dice": 1}),
    ("oca-tradicional", {"first_throw_effect": True}),
    ("oca-moderna", {"exact_finish": False}),
    ("oca-moderna", {"overshoot": "stay"}),
    ("oca-moderna", {"goose_after_bounce": "backward"}),
    ("oca-moderna", {"until": "last"}),
    ("jeu-de-l-oie", {"waiting": "turns:2"}),
]


@pytest.mark.parametrize("players", [1, 2])
@pytest.mark.parametrize("name,options", VARIANTS, ids=lambda v: str(v))
def test_row_sums(name, options, players):
    # Every row's probabilities (ignoring the -1 padding) sum to one, exactly.
    c = chain(name, players, **options)
    pn = np.where(c.next >= 0, c.pnum.astype(np.int64), 0)
    assert (pn.sum(axis=1) == c.denom).all()
    assert (c.row_sums() == c.denom).all()
    assert (c.pnum[c.next >= 0] > 0).all()
    # every transition points at a state of the chain
    assert c.next.max() < c.n
    # outcome states absorb
    for idx in c.outcomes.values():
        assert c.next[idx, 0] == idx and c.pnum[idx, 0] == c.denom


def test_decode_helper_matches_the_model():
    m, c = model("oca-tradicional", 2), chain("oca-tradicional", 2)
    seats, locs = m.decode(c.state_ids)
    for i in range(0, c.state_ids.size, 37):
        seat, pieces = decode(m, int(c.state_ids[i]))
        assert seat == seats[i] and [local_id(m, p) for p in pieces] == list(locs[i])
        assert encode(m, seat, pieces) == c.state_ids[i]


def test_kernel_and_chain_agree_on_every_state():
    # The helper above (the kernel on a crafted state) and the built chain agree on every
    # reachable state of a 2-player modern board.
    m, c = model("oca-moderna", 2), chain("oca-moderna", 2)
    rng = np.random.default_rng(0)
    for i in rng.choice(c.state_ids.size, 200, replace=False):
        seat, pieces = decode(m, int(c.state_ids[i]))
        assert dist(step(m, seat, pieces)) == dist(chain_step(m, c, seat, pieces))


# ----------------------------------------------------------------------------- a second reading


def reference_step(m, seat: int, pieces) -> dict:
    """One step read straight from the turn steps 1-9 above, in plain Python, for comparison
    with the numba kernel: (successor, stake paid, place taken) -> probability. The moving
    piece follows ``board.throws`` (checked above)."""
    r, goal, n = m.rules, m.rules.goal, m.players
    pieces = [P(p) if isinstance(p, int) else p for p in pieces]

    def next_seat(ps, s):
        for k in range(1, n + 1):
            if ps[(s + k) % n].square != goal:
                return (s + k) % n
        return s

    out: dict = {}

    def add(key, p, stake=0, place=0):
        k = (key, stake, place)
        out[k] = out.get(k, F(0)) + p

    me = pieces[seat]
    if me.wait or me.skip:  # steps 1-2: pass, one turn fewer to miss
        ps = list(pieces)
        ps[seat] = me._replace(skip=max(0, me.skip - 1))
        add((next_seat(ps, seat), tuple(ps)), F(1))
        return out
    for t in m.board.throws[me.square]:  # steps 3-6
        ps = list(pieces)
        if t.finished:  # step 9
            if r.until == "first":
                add(f"seat {seat + 1} wins", t.probability, t.stake)
                continue
            place = sum(p.square == goal for p in ps) + 1
            ps[seat] = P(goal)
            left = [k for k in range(n) if ps[k].square != goal]
            if len(left) <= 1:
                add(f"seat {(left[0] if left else seat) + 1} last", t.probability, t.stake, place)
            else:
                add((next_seat(ps, seat), tuple(ps)), t.probability, t.stake, place)
            continue
        ps[seat] = P(t.final, t.skip, t.wait, t.again)
        if t.moved and t.final not in (0, goal):  # step 7 and "wait until replaced"
            for k in range(n):
                if k == seat or ps[k].square != t.final:
                    continue
                if r.occupancy == "occupant-returns":
                    ps[k] = P(me.square)
                elif r.occupancy == "mover-returns":
                    ps[seat] = P(me.square)
                elif ps[k].wait:
                    ps[k] = P(t.final)
        nxt = seat if ps[seat].again else next_seat(ps, seat)  # step 8
        add((nxt, tuple(ps)), t.probability, t.stake)
    return out


def detailed(branches) -> dict:
    d: dict = {}
    for b in branches:
        k = (b.next, b.stake, b.place)
        d[k] = d.get(k, F(0)) + b.p
    return d


@pytest.mark.parametrize("name,options", [(name, {}) for name in SHIPPED] + [
    ("oca-moderna", {"until": "last"}),
    ("oca-tradicional", {"occupancy": "occupant-returns"}),
    ("oca-moderna", {"occupancy": "mover-returns"}),
    ("jeu-de-l-oie", {"waiting": "turns:2"}),
], ids=lambda v: str(v))
def test_chain_rows_match_a_second_reading(name, options):
    # Every reachable state of the 2-player chain: the built row (successors, stakes, places)
    # equals the reference step.
    m, c = model(name, 2, **options), chain(name, 2, **options)
    for sid in c.state_ids:
        seat, pieces = decode(m, int(sid))
        assert detailed(chain_step(m, c, seat, pieces)) == reference_step(m, seat, pieces), (seat, pieces)


TINY_SQUARES = {2: {"goose": "repeat"}, 4: {"wait": True, "stake": 1}, 5: {"miss": 1}, 7: {"jump": 1, "stake": 1},
                8: {"goose": "next", "again": True}}


@pytest.mark.parametrize("engine", [
    {},
    {"occupancy": "occupant-returns"},
    {"until": "last"},
    {"until": "last", "occupancy": "occupant-returns"},
    {"occupancy": "mover-returns", "goose_after_bounce": "backward"},
], ids=lambda v: str(v))
def test_three_player_rows_match_a_second_reading(engine):
    # Three pieces on a tiny board with every kind of square (repeat goose, waiting square,
    # turns to miss, jump back, next goose and throw again; goal 10, one 3-sided die): the
    # interactions of three pieces (two waiting, bumps, release) row by row.
    raw = tiny_raw(10, TINY_SQUARES, faces=3, **engine)
    m = goose_model(build_goose(raw, "tiny.toml", {}), 3)
    c = m.build()
    assert (c.row_sums() == c.denom).all()
    for sid in c.state_ids:
        seat, pieces = decode(m, int(sid))
        assert detailed(chain_step(m, c, seat, pieces)) == reference_step(m, seat, pieces), (seat, pieces)


def test_large_common_denominator_builds_or_is_refused():
    # A legal rule file: one die whose number of faces changes on every square (7, 11, 13, ...,
    # 41 faces; all within the loader's limits). The common denominator is their product,
    # 10_141_675_450_907 > 2**31. Probabilities are int32 numerators over the common
    # denominator, so the loader refuses such a board, naming the dice.
    primes = [11, 13, 17, 19, 23, 29, 31, 37, 41]
    raw = tiny_raw(12, faces=7)
    raw["dice"]["from_square"] = [{"square": i + 1, "count": 1, "faces": f} for i, f in enumerate(primes)]
    with pytest.raises(RulesError, match=r"primes.toml: dice: .*10,141,675,450,907"):
        build_goose(raw, "primes.toml", {})
