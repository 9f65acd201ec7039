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
RoyalUr.net ships its lookup tables in this format (read by
``royalur/lut/reader.py`` of RoyalUr-Python): the bytes ``RGU``, a version byte 0,
a big-endian int32 length and that many bytes of a UTF-8 JSON header, an int32
number of maps (here 1), an int32 size per map, then the keys (big-endian uint32,
ascending) and the values. The header names ``value_type`` (``percent16``: uint16,
the percentage times 65535 / 100, rounded; ``float32`` / ``float64``: big-endian
floats holding the percentage) and the ``game_settings``. RoyalUr-Python's reader
takes 2-byte values only, so it reads ``percent16`` files.

A key is a position with light to move, RoyalUr's ``SimpleGameStateEncoding``: bits
0-5 dark's own squares, 6-18 the shared lane (13 bits, compressed), 19-24 light's
own squares, 25-27 dark's pieces in hand, 28-30 light's. On a side's own lane bits
0-3 are its squares 4, 3, 2, 1 and bits 4-5 its squares 14 and 13. The shared
lane's occupants (0 empty, 1 dark, 2 light, two bits per square from square 5 up)
are numbered in the order RoyalUr enumerates them (square 5 first, most
significant; at most seven of a colour). A value is light's chance to win, in
percent. Positions where the game is over are left out.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..core.atomic import atomic_files
from .rules import UrRules, _throws
from .state import BELL, LANE_CONFIGS, space_of
from .store import load_table, rules_identity, save_table

__all__ = ["RguTable", "find_table", "read_rgu", "rgu_keys", "save_bound", "saved_bound", "table_dir", "table_path",
           "write_rgu", "write_table"]

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
    if key is None:
        return False
    bounds = _read_bounds(rules)
    bounds[key] = asdict(bound)
    data = {"schema": "markov_oca.ur-bounds/1", "game": rules_identity(rules), "bounds": bounds}
    path = _bounds_file(rules)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_files([path]) as (tmp,):
            tmp.write_text(json.dumps(data, indent=1))
    except OSError:
        return False
    return True


# ----------------------------------------------------------------------------- .rgu keys


def _lane_compression() -> np.ndarray:
    """Our lane code -> RoyalUr's compressed shared-lane number (-1 where they have none)."""
    order = []

    def walk(state: int, light: int, dark: int, index: int) -> None:
        for occupant in range(3):
            nl, nd = light - (occupant == 2), dark - (occupant == 1)
            if nl < 0 or nd < 0:
                continue
            new = state | occupant << (2 * index)
            if index == 7:
                order.append(new)
            else:
                walk(new, nl, nd, index + 1)

    walk(0, 7, 7, 0)
    number = {s: i for i, s in enumerate(order)}
    out = np.full(LANE_CONFIGS, -1, np.int64)
    for lane in range(LANE_CONFIGS):
        x, state = lane, 0
        for d in range(8):
            digit = x % 3  # ours: 1 light (to move), 2 dark; theirs: 1 dark, 2 light
            x //= 3
            state |= (0, 2, 1)[digit] << (2 * d)
        out[lane] = number.get(state, -1)
    return out


_LANE_NUMBER = _lane_compression()
#: our private-mask bit (squares 1, 2, 3, 4, 13, 14) -> their lane bit (board rows 3, 2, 1, 0, 7, 6)
_THEIR_BIT = (3, 2, 1, 0, 5, 4)
_MASK_MAP = np.array([sum(1 << _THEIR_BIT[b] for b in range(6) if m >> b & 1) for m in range(64)], np.int64)


def rgu_keys(lane, mine_mask, mine_hand, their_mask, their_hand) -> np.ndarray:
    """RoyalUr keys (int64) of positions, the side to move (mine) playing light."""
    lane_no = _LANE_NUMBER[np.asarray(lane, np.int64)]
    if (lane_no < 0).any():
        raise ValueError("a shared lane RoyalUr's encoding does not number (eight pieces of a colour)")
    mine, theirs = _MASK_MAP[np.asarray(mine_mask, np.int64)], _MASK_MAP[np.asarray(their_mask, np.int64)]
    return (theirs | lane_no << 6 | mine << 19 | np.asarray(their_hand, np.int64) << 25
            | np.asarray(mine_hand, np.int64) << 28)


def _dice_id(rules: UrRules) -> str:
    """RoyalUr's id of the throw (``four_binary``, ``three_binary_0eq4``), else ours."""
    law = tuple((int(v), p) for v, p in rules.throws)
    for count, zero_as, name in ((4, 0, "four_binary"), (3, 4, "three_binary_0eq4")):
        if law == _throws("coins", count, zero_as):
            return name
    return f"{rules.throw_kind}_{rules.throw_count}"


def game_settings(rules: UrRules) -> dict:
    """RoyalUr's names for the game the table solves (ours beside them)."""
    dice = _dice_id(rules)
    finkel = (dice == "four_binary" and rules.rosettes == (4, 8, 14) and rules.end == "all-off"
              and rules.code == BELL and rules.safe_rosettes and rules.rosette_again and not rules.capture_again)
    return {"board_shape": "standard", "paths": "bell", "dice": dice,
            "start_pieces": rules.pieces, "safe_rosettes": rules.safe_rosettes,
            "rosettes_grant_extra_rolls": rules.rosette_again,
            "capture_grant_extra_rolls": rules.capture_again, "finkel": finkel,
            "markov_oca": rules_identity(rules)}


# ----------------------------------------------------------------------------- writing and reading


def write_rgu(rules: UrRules, values: np.ndarray, path: str | Path, value_type: str = "percent16",
              chunk: int = 1 << 22) -> int:
    """Write the table as a ``.rgu`` file; the number of entries (positions not over)."""
    if value_type not in VALUE_TYPES:
        raise ValueError(f"value type {value_type!r}: one of {', '.join(VALUE_TYPES)}")
    if rules.code != BELL:
        raise ValueError(f"{rules.name}: RoyalUr's .rgu keys for the {rules.board_name} (12 shared squares, keys "
                         "past 32 bits spread over several maps) are not written yet; only Bell's path is exported")
    space = space_of(rules.pieces, rules.code)
    n = rules.pieces
    total = rules.end_total
    keys_parts, vals_parts = [], []
    for lo in range(0, space.size, chunk):
        idx = np.arange(lo, min(lo + chunk, space.size), dtype=np.int64)
        p = space.unrank_many(idx)
        mo, to = p.mine_off.astype(np.int64), p.their_off.astype(np.int64)
        live = (mo < n) & (to < n) & ~((total > 0) & (mo + to >= total))
        keys_parts.append(rgu_keys(p.lane[live], p.mine_mask[live], p.mine_hand[live], p.their_mask[live],
                                   p.their_hand[live]).astype(np.uint32))
        vals_parts.append(_rgu_values(np.asarray(values[idx[live]], np.float64), value_type))
    keys = np.concatenate(keys_parts)
    del keys_parts
    out = np.concatenate(vals_parts)
    del vals_parts
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    out = out[order]
    del order
    if keys.size > 1 and not (keys[1:] > keys[:-1]).all():
        raise RuntimeError("two positions with one RoyalUr key")
    header = json.dumps({"value_type": value_type, "game_settings": game_settings(rules),
                         "producer": "markov_oca", "values": "light's chance to win, percent; light to move"})
    hb = header.encode("utf-8")
    with atomic_files([Path(path)]) as (tmp,):
        with open(tmp, "wb") as fh:
            fh.write(b"RGU" + bytes([0]))
            fh.write(len(hb).to_bytes(4, "big", signed=True))
            fh.write(hb)
            fh.write((1).to_bytes(4, "big", signed=True))
            fh.write(int(keys.size).to_bytes(4, "big", signed=True))
            fh.write(memoryview(keys.astype(">u4")).cast("B"))
            fh.write(memoryview(out.astype(VALUE_TYPES[value_type])).cast("B"))  # big-endian, as the keys
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
    header: dict
    keys: np.ndarray  # uint32, ascending
    values: np.ndarray  # float64 percent

    def lookup(self, key: int) -> float:
        i = int(np.searchsorted(self.keys, key))
        if i >= self.keys.size or int(self.keys[i]) != key:
            raise KeyError(key)
        return float(self.values[i])


def read_rgu(path: str | Path) -> RguTable:
    """Read a ``.rgu`` file (one map) back: header, keys, values in percent."""
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
    keys = np.frombuffer(data, ">u4", count=n, offset=at).astype(np.uint32)
    vt = header.get("value_type", "percent16")
    raw = np.frombuffer(data, VALUE_TYPES[vt], count=n, offset=at + 4 * n)
    vals = raw.astype(np.float64) * (100.0 / _PERCENT16_MAX) if vt == "percent16" else raw.astype(np.float64)
    return RguTable(header, keys, vals)
