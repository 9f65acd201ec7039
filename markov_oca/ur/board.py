"""Ur boards as data: a path of board squares for each side, the squares they share, the rosettes.

A board square is a tile ``(column, row)``: column 1 is light's side row, 2 the middle row,
3 dark's side row; rows count from 1 (RoyalUr's tile coordinates, 1-based). A side's path
is written as waypoints, ``[[1, 4], [1, 1], [2, 1], [2, 8], [1, 8], [1, 7]]``: the path
walks in a straight line from each waypoint to the next, both included (Bell's path:
light's row from row 4 down to row 1, the middle row from 1 to 8, back on light's row to
row 7). The squares are numbered along the path from 1; the hand is square 0 and off the
board is the path's length plus 1.

Dark's path is light's reflected across the middle row (column ``c`` -> ``4 - c``); a
square on both paths is *shared* (pieces there can be captured), a square on one path
only is that side's own. A rosette listed on one side's row stands for its reflection
too. The position encoding (:class:`~markov_oca.ur.state.PathCode`) takes the mover's
path squares of the shared and own squares from here.

The three paths RoyalUr plays (net.royalur.model.path), as waypoints:

* ``bell``: ``[1,4] [1,1] [2,1] [2,8] [1,8] [1,7]`` (14 squares: 4 own, 8 shared, 2 own);
* ``masters``: ``[1,4] [1,1] [2,1] [2,7] [3,7] [3,8] [1,8] [1,7]`` (16 squares: 4 own, then
  12 shared: the middle row to 7, dark's rows 7 and 8, the middle row's 8, light's rows
  8 and 7, the last two being the first two of dark's way out);
* ``aseb``: ``[1,4] [1,1] [2,1] [2,12]`` (16 squares: 4 own, 12 shared, on the 3 x 12
  board's middle row).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ..core.errors import RulesError
from ..core.rulefile import int_value
from .state import PathCode

__all__ = ["PATHS", "UrBoard", "board_from_waypoints", "expand_waypoints"]

#: RoyalUr's paths (light's waypoints, start and end tiles left out).
PATHS: dict[str, tuple[tuple[int, int], ...]] = {
    "bell": ((1, 4), (1, 1), (2, 1), (2, 8), (1, 8), (1, 7)),
    "masters": ((1, 4), (1, 1), (2, 1), (2, 7), (3, 7), (3, 8), (1, 8), (1, 7)),
    "aseb": ((1, 4), (1, 1), (2, 1), (2, 12)),
}
#: Own squares a side at most (the mask of a side is an int8), shared squares at most (3**12 lane codes).
MAX_OWN = 7
MAX_SHARED = 12
MAX_ROWS = 16


@dataclass(frozen=True)
class UrBoard:
    """A validated board: both paths as tiles, the rosette tiles, and the position encoding's view."""

    light: tuple[tuple[int, int], ...]
    dark: tuple[tuple[int, int], ...]
    rosettes: frozenset[tuple[int, int]]
    code: PathCode

    @property
    def path_length(self) -> int:
        return len(self.light)

    @property
    def tiles(self) -> frozenset[tuple[int, int]]:
        """The board's squares (the union of both paths)."""
        return frozenset(self.light) | frozenset(self.dark)

    @property
    def rosette_squares(self) -> tuple[int, ...]:
        """Path squares (of either side's path: the board is symmetric) that are rosettes, ascending."""
        return tuple(i + 1 for i, t in enumerate(self.light) if t in self.rosettes)

    @property
    def shared_tiles(self) -> tuple[tuple[int, int], ...]:
        """The shared squares in light's path order."""
        return tuple(self.light[q - 1] for q in self.code.shared)


def _tile(source: str, key: str, value: Any) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise RulesError(f"a square is [column, row], got {value!r}", source=source, key=key)
    return (int_value(source, key, value[0], lo=1, hi=3), int_value(source, key, value[1], lo=1, hi=MAX_ROWS))


def expand_waypoints(source: str, key: str, raw: Any) -> tuple[tuple[int, int], ...]:
    """The squares of a path written as waypoints (straight steps between them, both ends included).

    Parameters
    ----------
    source, key : str
        Named in errors.
    raw : list
        ``[[column, row], ...]``, at least one waypoint.

    Examples
    --------
    >>> expand_waypoints("x", "k", [[1, 2], [1, 1], [2, 1], [2, 3]])
    ((1, 2), (1, 1), (2, 1), (2, 2), (2, 3))
    """
    if not isinstance(raw, list) or not raw:
        raise RulesError("must be a list of [column, row] waypoints", source=source, key=key)
    points = [_tile(source, f"{key}[{i}]", v) for i, v in enumerate(raw)]
    path = [points[0]]
    for i, (a, b) in enumerate(itertools.pairwise(points), start=1):
        if a == b or (a[0] != b[0] and a[1] != b[1]):
            raise RulesError(f"waypoint {list(b)} is not in a straight line from {list(a)}", source=source,
                             key=f"{key}[{i}]")
        dx, dy = (b[0] > a[0]) - (b[0] < a[0]), (b[1] > a[1]) - (b[1] < a[1])
        x, y = a
        while (x, y) != b:
            x, y = x + dx, y + dy
            path.append((x, y))
    seen = set()
    for t in path:
        if t in seen:
            raise RulesError(f"the path passes square {list(t)} twice", source=source, key=key)
        seen.add(t)
    return tuple(path)


def board_from_waypoints(source: str, light_raw: Any, rosettes_raw: Any, *, key: str = "board.light_path",
                         rosette_key: str = "board.rosettes") -> UrBoard:
    """Validate a board: light's path (waypoints) and the rosettes (tiles, or path squares of light's path).

    Parameters
    ----------
    source : str
        Named in errors.
    light_raw : list
        Light's path as waypoints (:func:`expand_waypoints`).
    rosettes_raw : list
        Rosettes, each ``[column, row]`` or a path square number (1..L); reflections are added.
    key, rosette_key : str
        The keys named in errors.

    Examples
    --------
    >>> b = board_from_waypoints("x", [list(t) for t in PATHS["masters"]], [[1, 1], [2, 4], [1, 7]])
    >>> b.path_length, len(b.code.private), len(b.code.shared), b.rosette_squares
    (16, 4, 12, (4, 8, 12, 16))
    """
    light = expand_waypoints(source, key, light_raw)
    dark = tuple((4 - c, r) for c, r in light)
    dark_at = {t: i + 1 for i, t in enumerate(dark)}
    shared = tuple(i + 1 for i, t in enumerate(light) if t in dark_at)
    private = tuple(i + 1 for i, t in enumerate(light) if t not in dark_at)
    if len(private) > MAX_OWN:
        raise RulesError(f"the path has {len(private)} squares of its own; at most {MAX_OWN} are supported",
                         source=source, key=key)
    if len(shared) > MAX_SHARED:
        raise RulesError(f"the paths share {len(shared)} squares; at most {MAX_SHARED} are supported",
                         source=source, key=key)
    theirs = tuple(dark_at[light[q - 1]] for q in shared)
    if not isinstance(rosettes_raw, list):
        raise RulesError("must be a list of squares ([column, row] or a path square)", source=source,
                         key=rosette_key)
    ros: set[tuple[int, int]] = set()
    for i, v in enumerate(rosettes_raw):
        k = f"{rosette_key}[{i}]"
        if isinstance(v, list):
            t = _tile(source, k, v)
            if t not in dark_at and t not in set(light):
                raise RulesError(f"square {v} is on neither path", source=source, key=k)
        else:
            t = light[int_value(source, k, v, lo=1, hi=len(light)) - 1]
        ros |= {t, (4 - t[0], t[1])}
    return UrBoard(light, dark, frozenset(ros), PathCode(private, shared, theirs, len(light)))
