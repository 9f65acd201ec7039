"""The Royal Game of Ur, the rules as ``docs/ur.md`` states them.

``state``: the position space and its perfect ranking (re-exported here);
``rules``: rule sets as data; ``kernel``: legal moves and successors;
``optimal``: values under optimal play; ``chain``: a pair of policies as a Chain;
``bestmove``: the value of every move of one position; ``layered``: the whole-game optimal
solve, one layer of pieces off at a time; ``sweeps``: policy pairs without a chain; ``table``:
saved tables and RoyalUr ``.rgu`` files; ``solve``: :func:`solve_ur`; ``stats``: :func:`ur_stats`,
what optimal play means; ``certify``: exact certificates of optimal play for small games;
``family``: the family declared for the shared modules (``markov_oca.load("ur", pieces=2)`` and
``markov_oca.solve`` reach it).
"""

from .rules import UrRules, load_ur
from .state import (
    LANE_SQUARES,
    PRIVATE_SQUARES,
    Position,
    UrSpace,
    count_positions,
    decode,
    encode,
    mirror,
    mirror_many,
)

__all__ = [
    "LANE_SQUARES",
    "PRIVATE_SQUARES",
    "Position",
    "UrRules",
    "UrSpace",
    "count_positions",
    "decode",
    "encode",
    "load_ur",
    "mirror",
    "mirror_many",
]
