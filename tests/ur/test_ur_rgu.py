"""RoyalUr's ``.rgu`` lookup tables: keys worked out by hand from RoyalUr-Java's ``SimpleGameStateEncoding``
for each board, every shipped rule set written and read back (several maps once the keys pass 32 bits), and,
when RoyalUr-Python's lookup-table code can be imported, its reader on our files and its encoder against ours.

RoyalUr-Python's ``royalur.lut`` is not in its 0.0.6 wheel; the tests that use it look for it on ``sys.path``
or in the folder named by ``MARKOV_OCA_ROYALUR`` (a checkout of RoyalUr/RoyalUr-Python, or a
``pip install --target`` of one) and are skipped without it.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import decode, encode, space_of
from markov_oca.ur.table import game_settings, read_rgu, rgu_encoding, rgu_keys, royalur_game, write_rgu

SHIPPED = ("ur", "ur-simplificado", "ur-7-rescatados", "ur-blitz", "ur-masters", "ur-aseb")
HALF_STEP = 100 / 65535 / 2 + 1e-12


def _key(name: str, pieces: int, light: list[int], dark: list[int]) -> int:
    """Our key of a position (light to move), from each piece's path square (0 hand, L + 1 off)."""
    r = load_ur(name, {"pieces": pieces})
    p = encode(light, dark, r.code)
    return int(rgu_keys(r, p.lane, p.mine_mask, p.mine_hand, p.their_mask, p.their_hand))


# Keys by hand. RoyalUr's key, low bits first: dark's own squares (one bit each), the shared squares, light's own
# squares, dark's pieces in hand (3 bits), light's (3 bits). Own squares and shared squares are taken in board order
# (row 1 first; columns 1, 2, 3 within a row). The shared squares are cut into segments (all 8 of Bell's path in one;
# the 12 of Masters' path and Aseb's board in two of 6, the first in the high bits); a segment's occupants (0 empty,
# 1 dark, 2 light; 2 bits a square, the first square the most significant) are numbered in increasing order among
# those with at most N pieces of each colour, in as many bits as the largest number needs.
HAND_KEYS = [
    # Bell, 7 pieces: light on its square 4 (tile [1,1]: light's bit 0, at bit 19) and 5 off, one in hand; dark on
    # square 5 (tile [2,1], the first shared square: state 1 << 14, numbered 3**7 = 2187, the states with the first
    # square empty coming first) and 14 (tile [3,7], dark's fifth own square: bit 4), 5 off
    ("ur", 7, [4, 0, 15, 15, 15, 15, 15], [5, 14, 15, 15, 15, 15, 15],
     (1 << 4) | (2187 << 6) | (1 << 19) | (0 << 25) | (1 << 28)),
    ("ur", 7, [0] * 7, [0] * 7, (7 << 25) | (7 << 28)),
    # Bell, 2 pieces: the shared row has 945 states (10 bits); first square dark comes after the 519 states with it
    # empty (7 squares, at most 2 a colour: 1 + 7 + 7 + 21 + 21 + 42 + 105 + 105 + 210); light's bits at 16
    ("ur", 2, [4, 0], [5, 14], (1 << 4) | (519 << 6) | (1 << 16) | (0 << 22) | (1 << 25)),
    # the two-piece start: RoyalUr-Java's key for two pieces (board 22 bits), not the seven-piece Finkel layout's
    # 2 << 25 | 2 << 28 = 603979776 that RoyalUr-Python's encoder (and RoyalUr's older finkel2p.rgu) use
    ("ur", 2, [0, 0], [0, 0], (2 << 22) | (2 << 25)),
    ("ur-simplificado", 1, [0], [0], (1 << 19) | (1 << 22)),  # 73 states of 8 squares with one piece: 7 bits
    # Masters' path, 1 piece: segments of 6 squares, 43 states (6 bits); the board takes 4 + 12 + 4 = 20 bits.
    # Light's square 16 is tile [1,7], the first square of the second segment (row 7: [1,7] [2,7] [3,7], row 8):
    # light there comes after the 31 states with it empty and the 6 with dark there, number 37
    ("ur-masters", 1, [16], [0], (37 << 4) | (1 << 20)),
    # light's square 1 is tile [1,4] (light's bit 3, at bit 16 + 3); dark's square 5 is tile [2,1], the first of the
    # first segment: dark there is number 31, in the high segment (31 << 6, then shifted past dark's 4 bits)
    ("ur-masters", 1, [1], [5], (31 << 10) | (1 << 19)),
    # dark's square 16 is tile [3,7], the third square of the second segment: 13 states have the first three
    # squares empty (1 + 3 + 3 + 6), so number 13
    ("ur-blitz", 1, [0], [16], (13 << 4) | (1 << 23)),
    # Blitz, 2 pieces: 283 states of a segment (9 bits, board 26): light on square 5 (the first of the first segment)
    # comes after 141 states with it empty and 71 with dark there: number 212
    ("ur-blitz", 2, [5, 0], [0, 0], (212 << 13) | (2 << 26) | (1 << 29)),
    # Aseb's board, 1 piece: the middle row's 12 squares, rows 1-6 then 7-12. Dark on its square 16 (tile [2,12],
    # the last square): state 1, number 1
    ("ur-aseb", 1, [0], [16], (1 << 4) | (1 << 23)),
    # dark's square 1 is tile [3,4] (its bit 3); light's square 4 is tile [1,1] (its bit 0, at bit 16)
    ("ur-aseb", 1, [4], [1], 8 | (1 << 16)),
    # light's square 11 is tile [2,7], the first square of the second segment: number 37 (as on Masters' path)
    ("ur-aseb", 1, [11], [0], (37 << 4) | (1 << 20)),
    # Masters, 3 pieces: 583 states of a segment (10 bits), the board 28 bits: light's 3 in hand sit at bits 31-33,
    # past 32 bits (upper key 1)
    ("ur-masters", 3, [0] * 3, [0] * 3, (3 << 28) | (3 << 31)),
]


@pytest.mark.parametrize("name,pieces,light,dark,key", HAND_KEYS)
def test_keys_by_hand(name, pieces, light, dark, key):
    assert _key(name, pieces, light, dark) == key


def test_encoding_sizes():
    # RoyalUr-Java: 8 shared squares in one segment (13 bits at seven pieces), 12 in two of 6 (10 bits at seven)
    e = rgu_encoding(load_ur("ur"))
    assert (e.segment_tiles, e.segment_bits, e.board_bits, e.key_bits) == (8, 13, 25, 31)
    for name in ("ur-masters", "ur-aseb"):
        e = rgu_encoding(load_ur(name))
        assert (e.segment_tiles, e.segment_bits, e.board_bits, e.key_bits) == (6, 10, 28, 34)


@pytest.mark.parametrize("name,settings", [
    ("ur", ("standard", "bell", "four_binary", True, True, False, True)),
    ("ur-blitz", ("standard", "masters", "four_binary", False, True, True, True)),
    ("ur-masters", ("standard", "masters", "three_binary_0eq4", False, True, False, True)),
    ("ur-aseb", ("aseb", "aseb", "four_binary", True, True, False, True)),
    ("ur-simplificado", ("standard", "bell", "die_4", True, True, False, False)),  # a four-sided die
    ("ur-7-rescatados", ("standard", "bell", "four_binary", True, True, False, False)),  # ends at 7 off in all
])
def test_game_settings_as_royalur_writes_them(name, settings):
    r = load_ur(name, {"pieces": 2})
    gs = game_settings(r)
    assert list(gs) == ["board_shape", "paths", "dice", "start_pieces", "safe_rosettes", "rosettes_grant_rolls",
                        "captures_grant_rolls"]
    assert (gs["board_shape"], gs["paths"], gs["dice"], gs["safe_rosettes"], gs["rosettes_grant_rolls"],
            gs["captures_grant_rolls"], royalur_game(r)) == settings
    assert gs["start_pieces"] == 2


@functools.cache
def _solved(name: str, pieces: int) -> np.ndarray:
    return solve_optimal(load_ur(name, {"pieces": pieces})).values


def _written(tmp_path: Path, name: str, pieces: int, value_type: str = "percent16", values=None):
    """(rules, values, the file, its entries, every position and which of them the file holds)."""
    r = load_ur(name, {"pieces": pieces})
    v = _solved(name, pieces) if values is None else values
    path = tmp_path / f"{name}-{pieces}.rgu"
    n = write_rgu(r, v, path, value_type)
    sp = space_of(pieces, r.code)
    p = sp.unrank_many(np.arange(sp.size))
    mo, to = p.mine_off.astype(int), p.their_off.astype(int)
    over = (mo == pieces) | (to == pieces) | ((r.end_total > 0) & (mo + to >= r.end_total))
    held = ((mo == pieces) & (to < pieces)) | ~over
    return r, v, path, n, p, held


@pytest.mark.parametrize("pieces", [1, 2])
@pytest.mark.parametrize("name", SHIPPED)
def test_every_rule_set_written_and_read_back(tmp_path, name, pieces):
    r, v, path, n, p, held = _written(tmp_path, name, pieces)
    table = read_rgu(path)
    assert table.header["game_settings"] == game_settings(r) and table.header["value_type"] == "percent16"
    # RoyalUr's key set: light to move, dark not yet won (the positions light has won are there, at 100%)
    assert n == table.keys.size == int(held.sum()) and (np.diff(table.keys) > 0).all()
    keys = rgu_keys(r, p.lane[held], p.mine_mask[held], p.mine_hand[held], p.their_mask[held],
                    p.their_hand[held]).astype(np.uint64)
    at = np.searchsorted(table.keys, keys)
    assert np.array_equal(table.keys[at], keys)
    want = np.where(p.mine_off[held] == pieces, 100.0, 100 * v[held])
    assert np.abs(table.values[at] - want).max() <= HALF_STEP
    assert table.sizes == (n,)  # one and two pieces: keys of at most 32 bits, one map
    if name == "ur" and pieces == 2:
        assert n == 12_990  # the entries of RoyalUr's own two-piece Finkel table
    start = _key(name, pieces, [0] * pieces, [0] * pieces)
    first = space_of(pieces, r.code).rank(*encode([0] * pieces, [0] * pieces, r.code))
    assert table.lookup(start) == pytest.approx(100 * v[first], abs=HALF_STEP)


@pytest.mark.parametrize("name", ["ur-masters", "ur-aseb", "ur"])
def test_three_pieces_keys_past_32_bits_go_to_more_maps(tmp_path, name):
    # values made up (the keys and maps are the point): a position's rank over the space's size
    r = load_ur(name, {"pieces": 3})
    size = space_of(3, r.code).size
    r, v, path, n, p, held = _written(tmp_path, name, 3, "float64", np.arange(size) / size)
    table = read_rgu(path)
    keys = rgu_keys(r, p.lane[held], p.mine_mask[held], p.mine_hand[held], p.their_mask[held],
                    p.their_hand[held]).astype(np.uint64)
    upper = keys >> np.uint64(32)
    if name == "ur":  # 30 bits: one map
        assert table.sizes == (n,)
    else:  # 34 bits: light's pieces in hand at bits 31-33, so 2 or 3 in hand go to map 1
        assert table.sizes == (int((upper == 0).sum()), int((upper == 1).sum())) and table.sizes[1] > 0
        assert np.array_equal(upper == 1, p.mine_hand[held] >= 2)
    at = np.searchsorted(table.keys, keys)
    assert np.array_equal(table.keys[at], keys)
    want = np.where(p.mine_off[held] == 3, 100.0, 100 * v[held])
    assert np.abs(table.values[at] - want).max() < 1e-12
    assert table.lookup(_key(name, 3, [0] * 3, [0] * 3)) == pytest.approx(
        100 * v[space_of(3, r.code).rank(*encode([0] * 3, [0] * 3, r.code))], abs=1e-12)


# ----------------------------------------------------------------------------- RoyalUr-Python's own code


@pytest.fixture(scope="module")
def royalur():
    """RoyalUr-Python's ``royalur`` package with its ``lut`` code, or a skip."""
    where = os.environ.get("MARKOV_OCA_ROYALUR")
    added = False
    if where and (Path(where) / "royalur" / "lut" / "reader.py").exists() and where not in sys.path:
        sys.path.insert(0, where)
        added = True
    try:
        from royalur.lut import board_encoder, reader
        from royalur.model import board, player, shape
    except ImportError:
        pytest.skip("RoyalUr-Python's royalur.lut (not in its 0.0.6 wheel): set MARKOV_OCA_ROYALUR to a checkout")
    yield SimpleNamespace(reader=reader, encoder=board_encoder, board=board, player=player, shape=shape)
    if added:
        sys.path.remove(where)


@pytest.mark.parametrize("pieces", [1, 2, 3])
@pytest.mark.parametrize("name", SHIPPED)
def test_royalur_python_reads_our_files(tmp_path, royalur, name, pieces):
    if pieces == 3 and name not in ("ur", "ur-masters", "ur-aseb"):
        pytest.skip("three pieces: a sample of the boards")
    values = None
    if pieces == 3:
        size = space_of(3, load_ur(name, {"pieces": 3}).code).size
        values = np.arange(size) / size
    r, v, path, n, p, held = _written(tmp_path, name, pieces, values=values)
    lut = royalur.reader.LutReader(str(path)).read()
    meta = lut.get_metadata()
    ours = read_rgu(path)
    assert meta["decoded_header"]["game_settings"] == game_settings(r)
    assert meta["number_of_maps"] == len(ours.sizes) and tuple(meta["size_of_maps"]) == ours.sizes
    start = 0
    for m, size in enumerate(ours.sizes):  # each map's keys (the low 32 bits) and percent16 values, in order
        theirs_k = lut.keys_as_numpy(m).astype(np.uint64) | np.uint64(m) << np.uint64(32)
        assert np.array_equal(theirs_k, ours.keys[start:start + size])
        pct = lut.values_as_numpy(m) * (100 / 65535)
        assert np.abs(pct - ours.values[start:start + size]).max() < 1e-9
        start += size
    if len(ours.sizes) == 1:  # its lookup searches one map only when the file has one
        rng = np.random.default_rng(pieces)
        for i in rng.choice(np.flatnonzero(held), size=min(200, int(held.sum())), replace=False):
            key = int(rgu_keys(r, p.lane[i], p.mine_mask[i], p.mine_hand[i], p.their_mask[i], p.their_hand[i]))
            want = 100.0 if p.mine_off[i] == pieces else 100 * v[i]
            assert lut.lookup(0, key) * 100 / 65535 == pytest.approx(want, abs=HALF_STEP)


def test_royalur_python_encoder_agrees_at_seven_pieces_on_bells_path(royalur):
    # RoyalUr-Python's encoder is the Finkel encoding (Bell's path, the shared row numbered for seven pieces):
    # RoyalUr-Java's SimpleGameStateEncoding of the seven-piece game. Random positions, light to move.
    r = load_ur("ur")
    sp = space_of(7, r.code)
    light_tiles = r.board.light
    enc = royalur.encoder.SimpleGameStateEncoding()
    P, B = royalur.player.PlayerType, royalur.board
    rng = np.random.default_rng(7)
    idx = rng.integers(0, sp.size, 400)
    p = sp.unrank_many(idx)
    keep = (p.mine_off < 7) & (p.their_off < 7)
    ours = rgu_keys(r, p.lane, p.mine_mask, p.mine_hand, p.their_mask, p.their_hand)
    for j in np.flatnonzero(keep):
        mine, theirs = decode(sp.unrank(int(idx[j])), r.code)
        board = B.Board(royalur.shape.StandardBoardShape())
        for owner, squares, mirror in ((P.LIGHT, mine, False), (P.DARK, theirs, True)):
            for s in squares:
                if 1 <= s <= 14:
                    c, row = light_tiles[s - 1]
                    board.set_by_indices((4 - c if mirror else c) - 1, row - 1, B.Piece(owner, s))
        state = SimpleNamespace(board=board, get_turn=lambda: P.LIGHT,
                                light_player=SimpleNamespace(_piece_count=int(p.mine_hand[j])),
                                dark_player=SimpleNamespace(_piece_count=int(p.their_hand[j])))
        assert enc.encode_game_state(state) == int(ours[j])
