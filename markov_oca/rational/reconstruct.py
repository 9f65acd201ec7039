"""Rational reconstruction: the fraction behind a p-adic or a binary approximation, and digits to integers."""

from __future__ import annotations

import math

import flint
import numpy as np


def rational_reconstruct(a: int, m: int) -> tuple[int, int] | None:
    """``(n, d)`` with ``n = a d (mod m)``, ``|n|, d <= sqrt(m/2)``, ``gcd(n, d) = 1``, or None.

    The pair is the shortest vector of the lattice spanned by ``(m, 0)`` and
    ``(a, 1)``, which FLINT's LLL finds several times faster than the extended
    Euclidean algorithm in Python on numbers of tens of thousands of digits; the
    conditions are checked on the result.
    """
    a %= m
    if a == 0:
        return 0, 1
    red = flint.fmpz_mat([[m, 0], [a, 1]]).lll()
    bound = math.isqrt(m // 2)
    for row in range(2):
        n, d = int(red[row, 0]), int(red[row, 1])
        if d < 0:
            n, d = -n, -d
        if 0 < d <= bound and abs(n) <= bound and (n - a * d) % m == 0 and math.gcd(n, d) == 1:
            return n, d
    return None




def _from_digits(digits: np.ndarray, p: int) -> int:
    v = 0
    for dgt in digits[::-1].tolist():
        v = v * p + dgt
    return v



def _int_from_digits(digits: np.ndarray, shifts: list[int]) -> tuple[list[int], int]:
    """Each column's ``sum_t digits[t] 2**(shifts[t+1] + ... + shifts[-1])`` as a Python int, and that top shift.

    ``digits`` is (K, size) int64 (signed, ``|.| < 2**62``); every shift is a multiple
    of 8. The digits are normalised to ``[0, 2**shift)`` by a carry pass from the
    least significant (whole-vector numpy), packed little-endian into one byte row
    per entry and read by ``int.from_bytes``; the signed top digit is added last.
    """
    K = digits.shape[0]
    total = int(sum(shifts[1:K]))
    size = digits.shape[1]
    carry = np.zeros(size, np.int64)
    parts = []
    for t in range(K - 1, 0, -1):  # least significant first; digit 0 is the top, kept whole
        s = shifts[t]
        v = digits[t] + carry
        low = v & ((1 << s) - 1)
        carry = v >> s
        parts.append(low.astype("<u8").view(np.uint8).reshape(size, 8)[:, : s // 8])
    top = (digits[0] + carry).tolist()
    if parts:
        packed = np.ascontiguousarray(np.concatenate(parts, axis=1))
        rows = [int.from_bytes(packed[i].tobytes(), "little") for i in range(size)]
    else:
        rows = [0] * size
    return [v + (t << total) for v, t in zip(rows, top, strict=True)], total


def approx_reconstruct(v: int, bits: int, gap: int = 24) -> tuple[int, int] | None:
    """The fraction ``(t, d)`` nearest ``v / 2**bits`` with a small denominator, or None.

    The shortest vector ``(d v - t 2**bits, d)`` of the lattice spanned by
    ``(2**bits, 0)`` and ``(v mod 2**bits, 1)`` (FLINT's 2x2 LLL), accepted only when
    it is shorter than ``2**(bits/2 - gap)``: a fraction whose denominator and error
    times ``2**bits`` times its denominator are that small is the only one of its size
    (a candidate; the caller proves it).
    """
    m = 1 << bits
    a = v % m
    whole = (v - a) >> bits
    if a == 0:
        return whole, 1
    red = flint.fmpz_mat([[m, 0], [a, 1]]).lll()
    limit = 1 << max(bits // 2 - gap, 1)
    for row in range(2):
        e, d = int(red[row, 0]), int(red[row, 1])
        if d < 0:
            e, d = -e, -d
        if 0 < d < limit and abs(e) < limit:
            t, rem = divmod(d * a - e, m)
            if rem == 0:
                num = t + d * whole
                g = math.gcd(num, d)
                return num // g, d // g
    return None
