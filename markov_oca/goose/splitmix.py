"""The dice of the simulators: SplitMix64 (Steele, Lea and Flood 2014), one stream per game.

A 64-bit counter stepped by the golden gamma and a strong mixer. Each game gets
its own counter, the mix of (seed, game number), so games are independent of
how they are batched or spread over threads. A die takes 32 bits (two dice per
draw): face = 1 + (bits * faces) >> 32, whose bias is below faces / 2**32.
"""

from __future__ import annotations

import numba
import numpy as np

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
GAME_STRIDE = np.uint64(0xD1B54A32D192ED03)
_LOW32 = np.uint64(0xFFFFFFFF)
_SPARE = np.uint64(1 << 32)  # marks a buffered half-draw, which may itself be 0
_M64 = (1 << 64) - 1


@numba.njit(cache=True, inline="always")
def mix(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _mix_py(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def seed_base(seed: int) -> int:
    return _mix_py(seed & _M64)


class SplitMix64:
    """The dice stream of one simulated game, in plain Python (what the kernel draws, bit for bit).

    Only ``randint(a, b)`` is offered (as :class:`random.Random` has it), which
    is all :func:`play_goose_python` draws.
    """

    def __init__(self, state: int):
        self.state = state & _M64
        self.spare = 0

    def randint(self, a: int, b: int) -> int:
        if self.spare:
            bits, self.spare = self.spare & 0xFFFFFFFF, 0
        else:
            self.state = (self.state + 0x9E3779B97F4A7C15) & _M64
            x = _mix_py(self.state)
            bits, self.spare = x & 0xFFFFFFFF, (x >> 32) | (1 << 32)
        return a + ((bits * (b - a + 1)) >> 32)


def game_stream(seed: int, game: int) -> SplitMix64:
    """The dice stream :func:`simulate_goose` uses for game number ``game`` (0-based) of ``seed``."""
    return SplitMix64(_mix_py((seed_base(seed) + game * 0xD1B54A32D192ED03) & _M64))



@numba.njit(cache=True, inline="always")
def draw(state, spare, n_faces):
    """One die of ``n_faces`` faces from the stream at counter ``state`` with the buffered half-draw ``spare``
    (0 for none): ``(face, state, spare)``, two dice per 64-bit draw."""
    if spare != np.uint64(0):
        bits = spare & _LOW32
        spare = np.uint64(0)
    else:
        state += _GAMMA
        x = mix(state)
        bits = x & _LOW32
        spare = (x >> np.uint64(32)) | _SPARE
    return np.int64((bits * n_faces) >> np.uint64(32)) + 1, state, spare
