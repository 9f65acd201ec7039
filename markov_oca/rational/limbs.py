"""Big integers as rows of 24-bit limbs (two's complement), for exact checks by whole-array int64 products."""

from __future__ import annotations

import numba
import numpy as np


def _to_limbs(values: list[int], K: int) -> np.ndarray:
    """Python ints as (len, K) int64 24-bit limbs of their two's complement modulo ``2**(24 K)``."""
    mask = (1 << (24 * K)) - 1
    raw = b"".join((v & mask).to_bytes(3 * K, "little") for v in values)
    b = np.frombuffer(raw, np.uint8).reshape(len(values), K, 3).astype(np.int64)
    return b[:, :, 0] | (b[:, :, 1] << 8) | (b[:, :, 2] << 16)


def _from_limbs(row: np.ndarray) -> int:
    """The signed integer of one row of two's complement 24-bit limbs."""
    K = row.size
    v = int.from_bytes(np.asarray(row, "<u4").astype("<u4").view(np.uint8).reshape(K, 4)[:, :3].tobytes(), "little")
    return v - (1 << (24 * K)) if row[-1] >= 1 << 23 else v


@numba.njit(cache=True)
def _carry_rows(W):
    """In place: each row's limbs carried into ``[0, 2**24)``, the carry out of the top dropped."""
    for i in range(W.shape[0]):
        carry = 0
        for t in range(W.shape[1]):
            v = W[i, t] + carry
            W[i, t] = v & 0xFFFFFF
            carry = v >> 24


@numba.njit(cache=True)
def _divide_rows(W, d, q):
    """``q`` = each two's complement limb row of ``W`` divided by ``d[i]``; False if a remainder is left."""
    ok = True
    for i in range(W.shape[0]):
        K = W.shape[1]
        rem = -1 if W[i, K - 1] >= 1 << 23 else 0  # the sign above the top limb
        di = d[i]
        for t in range(K - 1, -1, -1):
            cur = (rem << 24) + W[i, t]
            qt = cur // di
            rem = cur - qt * di
            q[i, t] = qt & 0xFFFFFF
        if rem != 0:
            ok = False
    return ok


def _normalise(W: np.ndarray) -> np.ndarray:
    """Limb rows (int64, any sizes) carried into ``[0, 2**24)``, modulo ``2**(24 K)`` (two's complement)."""
    W = np.array(W, np.int64, order="C")
    _carry_rows(W)
    return W


def _limb_divide(W: np.ndarray, d: np.ndarray) -> np.ndarray | None:
    """Two's complement limb rows divided exactly by positive ``d`` (one per row); None if one does not divide."""
    W = np.ascontiguousarray(W, np.int64)
    q = np.empty_like(W)
    return q if _divide_rows(W, np.asarray(d, np.int64), q) else None
