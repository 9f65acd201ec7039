"""The solved table on disk: where it is kept, and RoyalUr's ``.rgu`` lookup-table format.

Saved tables
------------
``markov-oca ur solve`` writes the optimal values of every position as one
``.npy`` (float64, in the ranking of :mod:`.state`) and a ``.json`` beside it naming
the rules and the solve. By default they go to ``$MARKOV_OCA_TABLES`` (or
``~/.cache/markov_oca/ur``) under a name made of the rule set, the pieces and a
hash of what fixes the values (:func:`.store.rules_identity`), so that
:func:`find_table` hands them (memory-mapped) to ``ur best-move`` and
``solve ur`` instead of solving again.

The ``.rgu`` format
-------------------
RoyalUr.net ships its lookup tables in this format (written by RoyalUr-Java's ``Lut``, read by
``royalur/lut/reader.py`` of RoyalUr-Python): the bytes ``RGU``, a version byte 0,
a big-endian int32 length and that many bytes of a UTF-8 JSON header, an int32
number of maps, an int32 size per map, then the keys of every map (big-endian uint32,
ascending within a map), then the values of every map. The header names ``value_type``
(``percent16``: uint16, the percentage times 65535 / 100, rounded; ``float32`` / ``float64``:
big-endian floats holding the percentage) and the ``game_settings`` as RoyalUr's JSON
notation writes them (``board_shape``, ``paths``, ``dice``, ``start_pieces``,
``safe_rosettes``, ``rosettes_grant_rolls``, ``captures_grant_rolls``). RoyalUr-Python's
reader takes 2-byte values only, so it reads ``percent16`` files.

A key is a position with light to move, RoyalUr-Java's ``SimpleGameStateEncoding`` of the
board (:class:`RguEncoding`), low bits first: one bit for each of dark's own squares, the
shared squares, one bit for each of light's own squares, dark's pieces in hand (3 bits),
light's (3 bits). Own and shared squares are taken in RoyalUr's board order (row 1 first;
columns 1, 2, 3 within a row). The shared squares are cut into segments (up to 8 in one;
the 12 of Masters' path and Aseb's board in two of 6, the first in the high bits); a
segment's occupants (0 empty, 1 dark, 2 light; two bits a square, the first square the most
significant) are numbered in increasing order among those with at most N pieces of each
colour, N the game's pieces, in the bits the largest number needs. Bell's path at seven
pieces: 6 + 13 + 6 + 3 + 3 = 31 bits (RoyalUr's Finkel encoding); at one piece 25 bits.
Masters' path and Aseb's board at seven pieces: 4 + 20 + 4 + 3 + 3 = 34 bits. A key past 32
bits goes to the map numbered by its bits from 32 up (RoyalUr's upper key), under its low
32 bits; maps run from 0 to the largest such number, empty ones included.

A value is light's chance to win, in percent. As in RoyalUr's tables, the positions where
light has already taken all its pieces off are there (at 100%), those where dark has are not.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core.atomic import atomic_files
from ..core.errors import RulesError
from .board import PATHS, expand_waypoints
from .rules import _BELL as BELL_BOARD
from .rules import UrRules, _throws
from .state import PathCode, space_of
from .store import load_table, rules_identity, save_table

__all__ = ["RguEncoding", "RguTable", "find_table", "game_settings", "read_rgu", "rgu_encoding", "rgu_keys",
           "royalur_game", "save_bound", "saved_bound", "table_dir", "table_path", "write_rgu", "write_table"]

VALUE_TYPES = {"percent16": ">u2", "float32": ">f4", "float64": ">f8"}
_PERCENT16_MAX = (1 << 16) - 1


# ----------------------------------------------------------------------------- saved tables


def table_dir() -> Path:
    return Path(os.environ.get("MARKOV_OCA_TABLES") or Path.home() / ".cache" / "markov_oca" / "ur")


def table_path(rules: UrRules, directory: str | Path | None = None) -> Path:
    """Where the table of ``rules`` is kept by default."""
    ident = json.dumps(rules_identity(rules), sort_keys=True)
    tag = hashlib.sha256(ident.encode()).hexdigest()[:10]
    return Path(directory or table_dir()) / f"{rules.name}-{rules.pieces}p-{tag}.npy"


def write_table(rules: UrRules, values: np.ndarray, path: str | Path | None = None, **info) -> Path:
    """Save ``values`` (.npy, once) and a ``.json`` naming the rules and ``info`` beside it."""
    path = Path(path) if path is not None else table_path(rules)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_table(values, path)
    meta = {"schema": "markov_oca.ur-table/1", "game": rules_identity(rules), **info}
    with atomic_files([path.with_suffix(".json")]) as (tmp,):
        tmp.write_text(json.dumps(meta, indent=1))
    return path


def find_table(rules: UrRules, path: str | Path | None = None) -> tuple[np.ndarray, float | None] | None:
    """(memory-mapped values, final residual) of a saved table for ``rules``, or None."""
    path = Path(path) if path is not None else table_path(rules)
    meta_path = path.with_suffix(".json")
    if not path.exists() or not meta_path.exists():
        return None
    meta = json.loads(meta_path.read_text())
    if meta.get("game") != rules_identity(rules):
        raise ValueError(f"{path}: the table of other rules ({meta.get('game')})")
    return load_table(path, rules), meta.get("residual")


def saved_values(rules: UrRules, table: str | Path | None = None) -> np.ndarray | None:
    """The optimal values of ``rules`` from the table file named (``.npy``, checked against its ``.json``
    when there is one), else from the table saved for them; None when there is none.

    Raises RulesError (one line) for a missing file or a table of other rules.
    """
    found = saved_table(rules, table)
    return None if found is None else found[0]


def saved_table(rules: UrRules, table: str | Path | None = None) -> tuple[np.ndarray, float | None] | None:
    """:func:`saved_values` with the table's final Bellman residual (None when its ``.json`` is missing)."""
    try:
        if table is not None:
            path = Path(table)
            if not path.exists():
                raise RulesError("no such table file", source=str(path))
            found = find_table(rules, path) if path.with_suffix(".json").exists() else (load_table(path, rules), None)
        else:
            found = find_table(rules)
    except ValueError as exc:
        raise RulesError(str(exc)) from None
    return found


def _bound_key(rules: UrRules, light: str, dark: str, tol: float) -> str | None:
    """What a saved bound on the throws to come depends on: the pair, the sweeps' tolerance and, when a side
    plays optimally, the saved table it was computed on (its size and time of writing); None without one."""
    key = f"{light},{dark},{tol!r}"
    if "optimal" in (light, dark):
        path = table_path(rules)
        if not path.exists():
            return None
        st = path.stat()
        key += f",{st.st_size},{st.st_mtime_ns}"
    return key


def _bounds_file(rules: UrRules) -> Path:
    return table_path(rules).with_suffix(".bounds.json")


def _read_bounds(rules: UrRules) -> dict:
    """The entries of the bounds file of ``rules``: {} when there is none, it is unreadable or of other rules."""
    try:
        data = json.loads(_bounds_file(rules).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("game") != rules_identity(rules):
        return {}
    bounds = data.get("bounds")
    return bounds if isinstance(bounds, dict) else {}


def saved_bound(rules: UrRules, light: str, dark: str, tol: float):
    """The bound on the throws to come (a :class:`.bound.ThrowsBound`) that :func:`save_bound` kept for this
    pair and table, or None.

    The bound takes minutes of sweeps at seven pieces; it is a property of the rules, the pair and the table,
    so ``solve ur`` keeps it beside the table (``*.bounds.json``) and later runs read it back. An unreadable
    or stale file is ignored (the bound is computed again)."""
    from .bound import ThrowsBound

    key = _bound_key(rules, light, dark, tol)
    entry = _read_bounds(rules).get(key) if key is not None else None
    if entry is None:
        return None
    try:
        return ThrowsBound(float(entry["bound"]), float(entry["largest"]), float(entry["residual"]),
                           int(entry["sweeps"]), float(entry["seconds"]))
    except (KeyError, TypeError, ValueError):
        return None


def save_bound(rules: UrRules, light: str, dark: str, tol: float, bound) -> bool:
    """Keep ``bound`` (a :class:`.bound.ThrowsBound`) beside the table for :func:`saved_bound`; False when
    the directory cannot be written (the bound is then only this run's)."""
    key = _bound_key(rules, light, dark, tol)
    return key is not None and _save_entry(rules, key, asdict(bound))


def _save_entry(rules: UrRules, key: str, entry: dict) -> bool:
    """Write ``entry`` under ``key`` in the bounds file of ``rules``, atomically; False when it cannot be."""
    bounds = _read_bounds(rules)
    bounds[key] = entry
    data = {"schema": "markov_oca.ur-bounds/1", "game": rules_identity(rules), "bounds": bounds}
    path = _bounds_file(rules)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_files([path]) as (tmp,):
            tmp.write_text(json.dumps(data, indent=1))
    except OSError:
        return False
    return True


def saved_sums(rules: UrRules, light: str, dark: str, win: bool, meets: Callable[[Any], bool] | None = None):
    """The swept sums (a :class:`.bound.TableSums`, with each side's chance when ``win``) that :func:`save_sums`
    kept for this pair and the saved table, or None (stale or unreadable entries are ignored, and sums that
    ``meets`` refuses: say, bounds that miss the precision asked now)."""
    from .bound import TableSums

    key = _sums_key(rules, light, dark, win)
    entry = _read_bounds(rules).get(key) if key is not None else None
    if entry is None:
        return None
    try:
        out = TableSums(**{k: entry[k] for k in TableSums.__dataclass_fields__})
        out.residual = tuple(float(x) for x in out.residual)
        out.win_range = tuple(float(x) for x in out.win_range)
        out.chance_sum = tuple(float(x) for x in out.chance_sum)
    except (KeyError, TypeError, ValueError):
        return None
    if not (len(out.residual) == 3 and len(out.win_range) == 2 and len(out.chance_sum) == 3):
        return None
    return out if meets is None or meets(out) else None


def save_sums(rules: UrRules, light: str, dark: str, win: bool, sums) -> bool:
    """Keep ``sums`` (a :class:`.bound.TableSums`) beside the table for :func:`saved_sums`, as :func:`save_bound`
    keeps a bound: the sweeps take half an hour at seven pieces."""
    key = _sums_key(rules, light, dark, win)
    return key is not None and _save_entry(rules, key, asdict(sums))


def _sums_key(rules: UrRules, light: str, dark: str, win: bool) -> str | None:
    """The bounds file's key of a pair's swept sums (with its chances or not), None without a saved table."""
    key = _bound_key(rules, light, dark, 0.0)
    return None if key is None else f"sums,{int(win)},{key}"


# ----------------------------------------------------------------------------- .rgu keys


@dataclass(frozen=True)
class RguEncoding:
    """RoyalUr's ``SimpleGameStateEncoding`` of one board at one piece count, in the terms of our positions.

    ``war_digits``: our lane digit of each shared square, in RoyalUr's board order (row by row from row 1,
    columns 1 to 3 within a row); ``light_bits`` / ``dark_bits``: our private-mask bit of each square of
    light's / dark's own, in the same order; ``segment_tiles`` shared squares make a segment, numbered
    by ``compression`` (2 bits a square, the first square the most significant; 0 empty, 1 dark, 2 light)
    into ``segment_bits`` bits, the first segment the most significant.
    """

    pieces: int
    war_digits: tuple[int, ...]
    light_bits: tuple[int, ...]
    dark_bits: tuple[int, ...]
    segment_tiles: int
    segment_bits: int
    compression: np.ndarray

    @property
    def safe_bits(self) -> int:
        return len(self.light_bits)

    @property
    def war_bits(self) -> int:
        return len(self.war_digits) // self.segment_tiles * self.segment_bits

    @property
    def board_bits(self) -> int:
        """Bits of the board; dark's pieces in hand follow (3 bits), then light's (3 bits)."""
        return 2 * self.safe_bits + self.war_bits

    @property
    def key_bits(self) -> int:
        return self.board_bits + 6

    def keys(self, lane, mine_mask, mine_hand, their_mask, their_hand) -> np.ndarray:
        """RoyalUr keys (int64, up to ``key_bits`` bits) of positions, the side to move (mine) playing light."""
        lane = np.asarray(lane, np.int64)
        mine_mask, their_mask = np.asarray(mine_mask, np.int64), np.asarray(their_mask, np.int64)
        t = self.segment_tiles
        war = np.zeros(lane.shape, np.int64)
        for seg in range(0, len(self.war_digits), t):
            state = np.zeros(lane.shape, np.int64)
            for d in self.war_digits[seg:seg + t]:
                digit = lane // 3**d % 3  # ours: 1 light (to move), 2 dark; theirs: 1 dark, 2 light
                state = state << 2 | (3 - digit) % 3
            number = self.compression[state]
            if (number < 0).any():
                raise ValueError("a shared row RoyalUr's encoding does not number (more pieces of a colour "
                                 "than the table's)")
            war = war << self.segment_bits | number
        light = _gather_bits(mine_mask, self.light_bits)
        dark = _gather_bits(their_mask, self.dark_bits)
        s, b = self.safe_bits, self.board_bits
        return (dark | war << s | light << (s + self.war_bits) | np.asarray(their_hand, np.int64) << b
                | np.asarray(mine_hand, np.int64) << (b + 3))


def _gather_bits(mask: np.ndarray, bits: tuple[int, ...]) -> np.ndarray:
    """Bit i of the result is bit ``bits[i]`` of ``mask``."""
    out = np.zeros(mask.shape, np.int64)
    for i, b in enumerate(bits):
        out |= (mask >> b & 1) << i
    return out


def _bits_required(largest: int) -> int:
    """RoyalUr's ``calculateBitsRequired``: the least b >= 1 with largest <= 2**b (as written there)."""
    bits = 1
    while largest > 1 << bits:
        bits += 1
    return bits


def _segment_tiles(war_tiles: int) -> int:
    """RoyalUr's ``estimateGoodWarTileCompressionTileCount``: 8 or fewer in one segment, else the fewest
    equal segments of at most 8 squares (12 -> two of 6)."""
    if war_tiles <= 8:
        return war_tiles
    segments = 2
    while True:
        tiles = -(-war_tiles // segments)
        segments += 1
        if tiles <= 8:
            return tiles


def _compression(pieces: int, tiles: int) -> np.ndarray:
    """RoyalUr's ``generateWarTileCompression``: the states of ``tiles`` squares (2 bits each, the first
    square the most significant) with at most ``pieces`` of each colour, numbered in increasing order; -1
    for the others."""
    states = np.arange(1 << (2 * tiles), dtype=np.int64)
    digits = states[:, None] >> (2 * np.arange(tiles, dtype=np.int64))[None, :] & 3
    ok = ~(digits == 3).any(axis=1) & ((digits == 1).sum(axis=1) <= pieces) & ((digits == 2).sum(axis=1) <= pieces)
    out = np.full(states.size, -1, np.int64)
    out[ok] = np.arange(int(ok.sum()))
    out.setflags(write=False)
    return out


def _board_index(tile: tuple[int, int]) -> int:
    """RoyalUr's board index of a tile (column, row), 1-based: the board is three columns wide."""
    return (tile[0] - 1) + 3 * (tile[1] - 1)


@functools.cache
def _encoding(light: tuple[tuple[int, int], ...], code: PathCode, pieces: int) -> RguEncoding:
    dark = tuple((4 - c, r) for c, r in light)
    light_sq = {t: i + 1 for i, t in enumerate(light)}
    dark_sq = {t: i + 1 for i, t in enumerate(dark)}
    war = sorted(set(light_sq) & set(dark_sq), key=_board_index)
    own_light = sorted(set(light_sq) - set(dark_sq), key=_board_index)
    own_dark = sorted(set(dark_sq) - set(light_sq), key=_board_index)
    tiles = _segment_tiles(len(war))
    if len(war) % tiles:
        raise ValueError(f"{len(war)} shared squares do not split into equal segments of {tiles}")
    comp = _compression(pieces, tiles)
    return RguEncoding(pieces, tuple(code.shared.index(light_sq[t]) for t in war),
                       tuple(code.private.index(light_sq[t]) for t in own_light),
                       tuple(code.private.index(dark_sq[t]) for t in own_dark), tiles,
                       _bits_required(int(comp.max())), comp)


def rgu_encoding(rules: UrRules) -> RguEncoding:
    """RoyalUr's encoding of positions for ``rules``' board and pieces (see the module docstring).

    Parameters
    ----------
    rules : UrRules
        The rule set, with its pieces.

    Examples
    --------
    >>> from markov_oca.ur.rules import load_ur
    >>> e = rgu_encoding(load_ur("ur-masters"))
    >>> e.segment_tiles, e.segment_bits, e.board_bits, e.key_bits
    (6, 10, 28, 34)
    """
    board = rules.board if rules.board is not None else BELL_BOARD
    return _encoding(board.light, rules.code, rules.pieces)


def rgu_keys(rules: UrRules, lane, mine_mask, mine_hand, their_mask, their_hand) -> np.ndarray:
    """RoyalUr keys (int64) of positions of ``rules``, the side to move (mine) playing light."""
    return rgu_encoding(rules).keys(lane, mine_mask, mine_hand, their_mask, their_hand)


def _dice_id(rules: UrRules) -> str:
    """RoyalUr's id of the throw (``four_binary``, ``three_binary_0eq4``), else ours."""
    law = tuple((int(v), p) for v, p in rules.throws)
    for count, zero_as, name in ((4, 0, "four_binary"), (3, 4, "three_binary_0eq4")):
        if law == _throws("coins", count, zero_as):
            return name
    return f"{rules.throw_kind}_{rules.throw_count}"


#: RoyalUr's board shapes (rosette tiles) and paths (light's tiles), by their ids
_SHAPES = {"standard": frozenset({(1, 1), (3, 1), (2, 4), (1, 7), (3, 7)}),
           "aseb": frozenset({(1, 1), (3, 1), (2, 4), (2, 8), (2, 12)})}
_PATHS = {name: expand_waypoints(name, "path", [list(t) for t in way]) for name, way in PATHS.items()}


def game_settings(rules: UrRules) -> dict:
    """RoyalUr's ``GameSettings`` of the game the table solves, as its JSON notation writes them
    (``board_shape``, ``paths``, ``dice``, ``start_pieces``, ``safe_rosettes``, ``rosettes_grant_rolls``,
    ``captures_grant_rolls``)."""
    board = rules.board if rules.board is not None else BELL_BOARD
    paths = next((name for name, light in _PATHS.items() if light == board.light), "own")
    shape = "aseb" if max(r for _, r in board.tiles) > 8 else "standard"
    return {"board_shape": shape, "paths": paths, "dice": _dice_id(rules), "start_pieces": rules.pieces,
            "safe_rosettes": rules.safe_rosettes, "rosettes_grant_rolls": rules.rosette_again,
            "captures_grant_rolls": rules.capture_again}


def royalur_game(rules: UrRules) -> bool:
    """Whether RoyalUr's settings (:func:`game_settings`) describe ``rules`` exactly: its dice, board shape
    (the rosettes) and path, the first to take all pieces off winning."""
    board = rules.board if rules.board is not None else BELL_BOARD
    gs = game_settings(rules)
    return (gs["dice"] in ("four_binary", "three_binary_0eq4") and gs["paths"] in _PATHS
            and board.rosettes == _SHAPES[gs["board_shape"]] and rules.end == "all-off")


# ----------------------------------------------------------------------------- writing and reading


def write_rgu(rules: UrRules, values: np.ndarray, path: str | Path, value_type: str = "percent16",
              chunk: int = 1 << 22) -> int:
    """Write the table as a ``.rgu`` file with RoyalUr's keys for the board; the number of entries.

    Parameters
    ----------
    rules : UrRules
        The rule set the values solve, with its pieces.
    values : ndarray
        The mover's chance to win in each ranked position (the table of ``markov-oca ur solve``).
    path : str or Path
        The file to write.
    value_type : str
        ``percent16``, ``float32`` or ``float64``.
    chunk : int
        Positions unranked at a time.
    """
    if value_type not in VALUE_TYPES:
        raise ValueError(f"value type {value_type!r}: one of {', '.join(VALUE_TYPES)}")
    enc = rgu_encoding(rules)
    space = space_of(rules.pieces, rules.code)
    n = rules.pieces
    total = rules.end_total
    # percent16: each key and its value packed in one uint64 (key << 16 | value; keys have at most 34 bits)
    # and sorted in place: 8 bytes a position at the peak; floats: keys, values and the sorting order
    packed = value_type == "percent16"
    keys = np.empty(space.size, np.uint64)
    vals = None if packed else np.empty(space.size, np.dtype(VALUE_TYPES[value_type]).newbyteorder("="))
    at = 0
    for lo in range(0, space.size, chunk):
        idx = np.arange(lo, min(lo + chunk, space.size), dtype=np.int64)
        p = space.unrank_many(idx)
        mo, to = p.mine_off.astype(np.int64), p.their_off.astype(np.int64)
        won = (mo == n) & (to < n)  # light (to move) has won: RoyalUr's tables hold these, at 100%
        keep = won | ((mo < n) & (to < n) & ~((total > 0) & (mo + to >= total)))
        k = enc.keys(p.lane[keep], p.mine_mask[keep], p.mine_hand[keep], p.their_mask[keep],
                     p.their_hand[keep]).astype(np.uint64)
        v = _rgu_values(np.where(won[keep], 1.0, np.asarray(values[idx[keep]], np.float64)), value_type)
        if packed:
            keys[at:at + k.size] = k << np.uint64(16) | v.astype(np.uint64)
        else:
            keys[at:at + k.size] = k
            vals[at:at + k.size] = v
        at += k.size
    keys = keys[:at]
    if packed:
        keys.sort()
        out = (keys & np.uint64(_PERCENT16_MAX)).astype(np.uint16)
        keys >>= np.uint64(16)
    else:
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        out = vals[:at][order]
        del order, vals
    if keys.size > 1 and not (keys[1:] > keys[:-1]).all():
        raise RuntimeError("two positions with one RoyalUr key")
    # one map per value of the bits above 32 (RoyalUr's upper key), from 0 to the largest, empty ones kept
    top = int(keys[-1]) >> 32 if keys.size else 0
    bounds = np.searchsorted(keys, np.arange(top + 2, dtype=np.uint64) << np.uint64(32))
    sizes = np.diff(bounds)
    header = json.dumps({"value_type": value_type, "game_settings": game_settings(rules),
                         "royalur_rules": royalur_game(rules), "markov_oca": rules_identity(rules),
                         "producer": "markov_oca", "values": "light's chance to win, percent; light to move"})
    hb = header.encode("utf-8")
    with atomic_files([Path(path)]) as (tmp,):
        with open(tmp, "wb") as fh:
            fh.write(b"RGU" + bytes([0]))
            fh.write(len(hb).to_bytes(4, "big", signed=True))
            fh.write(hb)
            fh.write(int(sizes.size).to_bytes(4, "big", signed=True))
            for size in sizes:
                fh.write(int(size).to_bytes(4, "big", signed=True))
            step = 1 << 24
            for lo in range(0, keys.size, step):  # the keys of the maps in turn, then their values, big-endian
                fh.write(memoryview((keys[lo:lo + step] & np.uint64(0xFFFFFFFF)).astype(">u4")).cast("B"))
            for lo in range(0, out.size, step):
                fh.write(memoryview(out[lo:lo + step].astype(VALUE_TYPES[value_type])).cast("B"))
    return int(keys.size)


def _rgu_values(vals: np.ndarray, value_type: str) -> np.ndarray:
    """Light's chances as the file stores them (in native byte order): percent, as uint16 steps of
    100/65535 or floats."""
    pct = np.clip(vals * 100.0, 0.0, 100.0)
    if value_type == "percent16":
        return np.rint(pct / 100.0 * _PERCENT16_MAX).astype(np.uint16)
    return pct.astype(np.dtype(VALUE_TYPES[value_type]).newbyteorder("="))


@dataclass
class RguTable:
    """A ``.rgu`` file read back: its header, the keys (upper key << 32 | the key in its map; uint64,
    ascending), the values in percent and the size of each map."""

    header: dict
    keys: np.ndarray
    values: np.ndarray
    sizes: tuple[int, ...] = ()

    def lookup(self, key: int) -> float:
        i = int(np.searchsorted(self.keys, np.uint64(key)))
        if i >= self.keys.size or int(self.keys[i]) != key:
            raise KeyError(key)
        return float(self.values[i])


def read_rgu(path: str | Path) -> RguTable:
    """Read a ``.rgu`` file back (every map): header, keys, values in percent.

    Parameters
    ----------
    path : str or Path
        The file.
    """
    data = Path(path).read_bytes()
    if data[:3] != b"RGU" or data[3] != 0:
        raise ValueError(f"{path}: not an RGU version 0 file")
    hl = int.from_bytes(data[4:8], "big", signed=True)
    header = json.loads(data[8:8 + hl].decode("utf-8"))
    at = 8 + hl
    maps = int.from_bytes(data[at:at + 4], "big", signed=True)
    sizes = [int.from_bytes(data[at + 4 + 4 * i:at + 8 + 4 * i], "big", signed=True) for i in range(maps)]
    at += 4 + 4 * maps
    n = sum(sizes)
    vt = header.get("value_type", "percent16")
    if vt not in VALUE_TYPES:
        raise ValueError(f"{path}: value type {vt!r} is not one of {', '.join(VALUE_TYPES)}")
    if len(data) < at + n * (4 + np.dtype(VALUE_TYPES[vt]).itemsize):
        raise ValueError(f"{path}: shorter than its {n:,} entries")
    upper = np.repeat(np.arange(maps, dtype=np.uint64), sizes)
    keys = upper << np.uint64(32) | np.frombuffer(data, ">u4", count=n, offset=at).astype(np.uint64)
    raw = np.frombuffer(data, VALUE_TYPES[vt], count=n, offset=at + 4 * n)
    vals = raw.astype(np.float64) * (100.0 / _PERCENT16_MAX) if vt == "percent16" else raw.astype(np.float64)
    return RguTable(header, keys, vals, tuple(sizes))
