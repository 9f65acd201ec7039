"""The Royal Game of Ur (RULES.md section 3): position space and its perfect ranking."""

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
