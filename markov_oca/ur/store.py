"""The solved table on disk as this package keeps it: one ``.npy`` of float64 values, in the ranking of
:mod:`.state`, written whole or not at all and read back memory-mapped; and what names the game it belongs
to (:func:`rules_identity`). Where tables are kept and the ``.rgu`` format are :mod:`.table`'s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.atomic import atomic_files
from .rules import UrRules
from .state import BELL, space_of

__all__ = ["load_table", "rules_identity", "save_table"]


def rules_identity(rules: UrRules) -> dict:
    """What fixes the game's values: the checkpoint manifest and the table's header name it."""
    out = {"rules": rules.name, "pieces": rules.pieces, "throws": [[int(v), str(p)] for v, p in rules.throws],
           "rosettes": list(rules.rosettes), "end": rules.end, "total": rules.total}
    if rules.code != BELL or not rules.safe_rosettes or not rules.rosette_again or rules.capture_again:
        # named only off Bell's classic rules, so that the tables saved for those keep their names
        out |= {"path": [list(t) for t in rules.board.light], "safe_rosettes": rules.safe_rosettes,
                "rosette_again": rules.rosette_again, "capture_again": rules.capture_again}
    if rules.decided_off:
        # the positions whose winner is decided hold exactly 1 and 0 (a table that swept them is another table)
        out["decided"] = "exact"
    return out



def save_table(values: np.ndarray, path: str | Path) -> Path:
    """Write the table as ``.npy``, whole or not at all."""
    path = Path(path)
    with atomic_files([path]) as (tmp,):
        with open(tmp, "wb") as fh:
            np.save(fh, np.asarray(values, np.float64))
    return path


def load_table(path: str | Path, rules: UrRules | None = None) -> np.ndarray:
    """A saved table, memory-mapped read-only; with ``rules``, its length is checked."""
    v = np.load(Path(path), mmap_mode="r")
    if rules is not None and v.shape != (space_of(rules.pieces, rules.code).size,):
        raise ValueError(f"{path}: {v.shape} values, not one per position of {rules.pieces} pieces "
                         f"({space_of(rules.pieces, rules.code).size:,})")
    return v
