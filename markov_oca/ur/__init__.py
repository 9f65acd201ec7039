"""The Royal Game of Ur (RULES.md section 3).

``state``: the position space and its perfect ranking (re-exported here);
``rules``: rule sets as data; ``kernel``: legal moves and successors;
``optimal``: values under optimal play; ``chain``: a pair of policies as a Chain;
``bestmove``: the value of every move of one position.
"""

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
    "UrSpace",
    "count_positions",
    "decode",
    "encode",
    "mirror",
    "mirror_many",
]
