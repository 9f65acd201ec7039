"""Ur position space: count S(N), perfect ranking, mirror symmetry."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from markov_oca.ur.state import (
    Position,
    UrSpace,
    count_positions,
    decode,
    encode,
    mirror,
    mirror_many,
)

EXPECTED = {1: 248, 2: 13_112, 3: 264_304, 4: 2_606_947, 5: 14_680_840, 6: 53_212_388, 7: 137_913_936}
LANE = range(5, 13)


def _side_placements(n):
    """All placements of one side's n identical pieces on path squares 0..15 (own board squares distinct)."""
    out = []
    for squares in itertools.combinations_with_replacement(range(16), n):
        board = [s for s in squares if 1 <= s <= 14]
        if len(set(board)) == len(board):
            out.append(squares)
    return out


@functools.lru_cache
def brute_force(n):
    """Every position (sorted piece squares of the side to move, of the other side), by plain enumeration."""
    sides = _side_placements(n)
    positions = set()
    for mine in sides:
        mine_lane = {s for s in mine if s in LANE}
        for theirs in sides:
            if mine_lane.isdisjoint(s for s in theirs if s in LANE):
                positions.add((mine, theirs))
    return positions


@pytest.fixture(scope="module")
def space7():
    return UrSpace(7)


def test_counts():
    got = {n: count_positions(n) for n in range(1, 8)}
    print("S(N):", got)
    assert got == EXPECTED
    assert count_positions(7) == 137_913_936
    for n in range(1, 8):
        assert len(UrSpace(n)) == EXPECTED[n]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_brute_force_count(n):
    assert len(brute_force(n)) == EXPECTED[n] == count_positions(n)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_full_bijection_small(n):
    sp = UrSpace(n)
    idx = np.arange(sp.size, dtype=np.int64)
    pos = sp.unrank_many(idx)
    # every index gives a valid position that ranks back to itself
    assert np.array_equal(sp.rank_many(*pos), idx)
    for field in pos[1:]:
        assert field.min() >= 0
    mine_lane = np.zeros(sp.size, np.int64)
    their_lane = np.zeros(sp.size, np.int64)
    lane = pos.lane.astype(np.int64)
    for _ in range(8):
        mine_lane += lane % 3 == 1
        their_lane += lane % 3 == 2
        lane //= 3
    popm = np.array([bin(m).count("1") for m in range(64)])
    assert np.all(pos.mine_hand + popm[pos.mine_mask] + mine_lane + pos.mine_off == n)
    assert np.all(pos.their_hand + popm[pos.their_mask] + their_lane + pos.their_off == n)
    # encoding the brute-force set ranks onto 0..S-1, and index i unranks to the brute position of rank i
    enc = [np.array(c) for c in zip(*(encode(m, t) for m, t in brute_force(n)), strict=True)]
    ranks = sp.rank_many(*enc)
    order = np.argsort(ranks)
    assert np.array_equal(ranks[order], idx)
    for a, b in zip(pos, enc, strict=True):
        assert np.array_equal(a, b[order])
    if n <= 2:  # the decoded positions are exactly the brute-force set, each once
        decoded = [decode(p) for p in zip(*pos, strict=True)]
        assert len(set(decoded)) == sp.size
        assert set(decoded) == brute_force(n)


def test_scalar_api_and_order():
    sp = UrSpace(2)
    assert sp.unrank(0) == Position(0, 0, 2, 0, 0, 2, 0)  # empty lane, all in hand
    assert sp.rank(0, 0, 2, 0, 0, 2, 0) == 0
    last = sp.unrank(sp.size - 1)
    assert sp.rank(*last) == sp.size - 1
    start = encode([0, 0], [0, 0])
    assert decode(start) == ((0, 0), (0, 0))
    p = encode([4, 8], [15, 9])
    assert p == Position(1 * 3**3 + 2 * 3**4, 0b1000, 0, 0, 0, 0, 1)  # square 8 -> digit 3, 9 -> digit 4
    assert decode(p) == ((4, 8), (9, 15))
    with pytest.raises(ValueError):
        encode([8, 0], [8, 0])  # two pieces on one lane square
    with pytest.raises(ValueError):
        encode([3, 3], [0, 0])
    with pytest.raises(ValueError):
        sp.rank(0, 0, 1, 0, 0, 2, 0)  # one piece missing
    with pytest.raises(IndexError):
        sp.unrank(sp.size)


def test_invalid_positions_rank_minus_one(space7):
    bad = [
        (0, 0, 7, 0, 0, 6, 0),        # dark has 6 pieces
        (-1, 0, 7, 0, 0, 7, 0),       # lane out of range
        (6561, 0, 7, 0, 0, 7, 0),
        (0, 64, 7, 0, 0, 7, 0),       # mask out of range
        (0, 0b111, 5, 0, 0, 7, 0),    # 3 + 5 = 8 pieces
        (0, 0, 8, -1, 0, 7, 0),       # negative off
        (3**8 - 1, 0, 0, 0, 0, 7, 0),  # 8 light pieces on the lane
    ]
    cols = [np.array(c) for c in zip(*bad, strict=True)]
    assert np.all(space7.rank_many(*cols, check=False) == -1)
    assert not space7.is_valid(*cols).any()
    with pytest.raises(ValueError):
        space7.rank_many(*cols)


def test_random_indices_roundtrip_n7(space7):
    rng = np.random.default_rng(2024)
    idx = rng.integers(0, space7.size, 100_000)
    idx[:4] = [0, 1, space7.size - 2, space7.size - 1]
    pos = space7.unrank_many(idx)
    assert np.array_equal(space7.rank_many(*pos), idx)
    # decode/encode agree with the vectorised unrank on a sample
    for i in range(0, 100_000, 5_000):
        p = Position(*(int(f[i]) for f in pos))
        m, t = decode(p)
        assert len(m) == len(t) == 7
        assert encode(m, t) == p
        assert space7.rank(*p) == idx[i]


def _random_positions(rng, n, k):
    """k random valid positions built piece by piece (independently of unrank)."""
    rows = []
    while len(rows) < k:
        mine = rng.integers(0, 16, n)
        theirs = rng.integers(0, 16, n)
        # drop duplicates on own board squares / shared lane by sending them to hand or off
        for side, other in ((mine, None), (theirs, mine)):
            seen = set()
            for j, s in enumerate(side):
                clash = s in seen or (other is not None and 5 <= s <= 12 and s in set(other.tolist()))
                if 1 <= s <= 14 and clash:
                    side[j] = rng.choice([0, 15])
                seen.add(int(side[j]))
        rows.append(encode(mine, theirs))
    return [np.array(c) for c in zip(*rows, strict=True)]


def test_random_positions_roundtrip_n7(space7):
    rng = np.random.default_rng(7)
    cols = _random_positions(rng, 7, 3_000)
    idx = space7.rank_many(*cols)
    assert idx.min() >= 0 and idx.max() < space7.size
    back = space7.unrank_many(idx)
    for a, b in zip(back, cols, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("n", [2, 7])
def test_mirror(n):
    sp = UrSpace(n)
    rng = np.random.default_rng(n)
    idx = rng.integers(0, sp.size, 50_000) if n == 7 else np.arange(sp.size)
    pos = sp.unrank_many(idx)
    mir = mirror_many(*pos)
    # valid -> valid, in the same space
    midx = sp.rank_many(*mir)
    assert midx.min() >= 0 and midx.max() < sp.size
    # involution
    back = mirror_many(*mir)
    for a, b in zip(back, pos, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(sp.rank_many(*mirror_many(*sp.unrank_many(midx))), idx)
    # a permutation of the whole space for small N
    if n == 2:
        assert np.array_equal(np.sort(midx), idx)
    # mirror swaps the two sides' pieces square for square
    p = Position(*(int(f[0]) for f in pos))
    m, t = decode(p)
    assert decode(mirror(p)) == (t, m)
    assert mirror(mirror(p)) == p
