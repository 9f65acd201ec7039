"""Numbers and lines of text chain files, read by whole buffers: numba kernels over the file's bytes.

A number token is converted in one pass: an integer or a fraction ``a/b`` is a rational literal (kept as
numerator and denominator); a decimal (``0.7``, ``1e-3``) gets its float, correctly rounded when its
significand has at most 15 digits and its exponent at most 22 (Clinger's fast path, which covers what
Storm writes), and its exact value ``m / 10**k`` when that fits 64 bits. Anything else is left to Python
(``float``, :class:`~fractions.Fraction`), once per distinct token, so every value is the correctly rounded
or exact one.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

import numba
import numpy as np

from ..analysis.build import ChainError
from ..core.files import line_of
from ..core.interrupt import THREADS, in_threads, spans

#: Token flags: not a rational literal (a decimal), float needs Python, exact value needs Python, not our grammar.
DECIMAL, FLOAT_SLOW, EXACT_SLOW, ODD = 1, 2, 4, 8
_POW10 = np.array([10.0 ** k for k in range(23)])
_IPOW10 = np.array([10 ** k for k in range(19)], np.int64)
_BIG = 2 ** 53


@numba.njit(cache=True, inline="always")
def _is_space(c):
    return c == 32 or c == 9 or c == 13


@numba.njit(cache=True, inline="always")
def _more_digits(buf, i, end, v, big):
    """``v`` extended by the digits at ``i``: (value, digits read, digits kept in the value, overflowed, next
    index); once the value would overflow int64 the digits are still read but no longer kept."""
    k = 0
    kept = 0
    while i < end and 48 <= buf[i] <= 57:
        if v > 92233720368547757:
            big = True
        else:
            v = v * 10 + (buf[i] - 48)
            kept += 1
        k += 1
        i += 1
    return v, k, kept, big, i


@numba.njit(cache=True)
def _digits(buf, i, end):
    """(value, digits read, overflowed, next index) of the digits at ``i``."""
    v, k, _, big, i = _more_digits(buf, i, end, 0, False)
    return v, k, big, i


@numba.njit(cache=True)
def _number(buf, i, end):
    """Parse ``buf[i:end]`` as a number: (flags, float value, numerator, denominator)."""
    neg = False
    if i < end and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    m, k, big, i = _digits(buf, i, end)
    if i < end and buf[i] == 47:  # a fraction a/b
        d, kd, bigd, j = _digits(buf, i + 1, end)
        if k == 0 or kd == 0 or j != end or d == 0:
            return ODD | FLOAT_SLOW | EXACT_SLOW, 0.0, 0, 1
        num = -m if neg else m
        if big or bigd:
            return FLOAT_SLOW | EXACT_SLOW, 0.0, 0, 1
        if m >= _BIG or d >= _BIG:
            return FLOAT_SLOW, 0.0, num, d
        return 0, num / d, num, d
    flags = 0
    frac = 0
    if i < end and buf[i] == 46:  # decimal point
        flags = DECIMAL
        m, kf, frac, big, i = _more_digits(buf, i + 1, end, m, big)
        k += kf
    if k == 0:
        return ODD | FLOAT_SLOW | EXACT_SLOW, 0.0, 0, 1
    e = 0
    if i < end and (buf[i] == 101 or buf[i] == 69):
        flags = DECIMAL
        eneg = False
        i += 1
        if i < end and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        e, ke, bige, i = _digits(buf, i, end)
        if ke == 0 or bige:
            return ODD | FLOAT_SLOW | EXACT_SLOW, 0.0, 0, 1
        if eneg:
            e = -e
    if i != end:
        return ODD | FLOAT_SLOW | EXACT_SLOW, 0.0, 0, 1
    if big:
        return flags | FLOAT_SLOW | EXACT_SLOW, 0.0, 0, 1
    e10 = e - frac
    value = 0.0
    if m == 0:
        value = 0.0
    elif m < _BIG and 0 <= e10 <= 22:
        value = m * _POW10[e10]
    elif m < _BIG and -22 <= e10 < 0:
        value = m / _POW10[-e10]
    else:
        flags |= FLOAT_SLOW
    if neg:
        value = -value
        m = -m
    if m == 0:
        return flags, value, 0, 1
    if e10 >= 0:
        if e10 <= 18 and abs(m) <= 9223372036854775807 // _IPOW10[e10]:
            return flags, value, m * _IPOW10[e10], 1
        return flags | EXACT_SLOW, value, 0, 1
    if -e10 <= 18:
        return flags, value, m, _IPOW10[-e10]
    return flags | EXACT_SLOW, value, 0, 1


@numba.njit(cache=True, nogil=True)
def _convert_into(buf, start, length, exact, lo, hi, flags, value, num, den):
    """Tokens ``lo`` to ``hi`` of :func:`_convert`, into its arrays (no GIL: pieces run on threads)."""
    for q in range(lo, hi):
        f, v, a, b = _number(buf, start[q], start[q] + length[q])
        flags[q] = f
        value[q] = v
        if exact:
            num[q] = a
            den[q] = b


#: Token counts from which the conversion is split over :data:`THREADS` threads.
PARALLEL_TOKENS = 1 << 20


def _convert(buf, start, length, exact):
    """Every token ``buf[start:start+length]``: flags, floats, and (when ``exact``) numerators and denominators;
    a large file's tokens in pieces on :data:`THREADS` threads."""
    t = start.size
    flags = np.empty(t, np.uint8)
    value = np.empty(t, np.float64)
    num = np.empty(t if exact else 0, np.int64)
    den = np.empty(t if exact else 0, np.int64)
    in_threads(lambda s: _convert_into(buf, start, length, exact, s[0], s[1], flags, value, num, den),
               spans(t, THREADS if t >= PARALLEL_TOKENS else 1))
    return flags, value, num, den


@numba.njit(cache=True, nogil=True)
def _largest_denominator(flags, num, den):
    """The largest denominator, or 0 when a token's exact value is not at hand (:data:`EXACT_SLOW`, :data:`ODD`),
    a denominator is not positive, or a value lies beyond 1 in size (no probability: the floats say why)."""
    largest = 1
    for q in range(flags.size):
        if flags[q] & (EXACT_SLOW | ODD) or den[q] <= 0 or abs(num[q]) > den[q]:
            return 0
        largest = max(largest, den[q])
    return largest


@numba.njit(cache=True, nogil=True)
def _over_one_denominator(num, den, denom):
    """When every denominator divides ``denom``: each value rewritten in place over ``denom`` (``num`` scaled,
    ``den`` set to ``denom``: the values do not change), True; else nothing written, False."""
    last = 0
    for q in range(den.size):
        if den[q] != last:  # a file's denominators repeat: one division each time one changes
            if denom % den[q]:
                return False
            last = den[q]
    last, factor = 0, 0
    for q in range(num.size):
        if den[q] != last:
            last, factor = den[q], denom // den[q]
        num[q] *= factor
        den[q] = denom
    return True


class Numbers:
    """Number tokens of a buffer converted at once: :attr:`value` (floats), :attr:`rational` (every token an
    integer or a fraction), and :meth:`fractions` (their exact values)."""

    def __init__(self, data: bytes, buf: np.ndarray, start: np.ndarray, length: np.ndarray, source: str,
                 exact: bool = False):
        self.data, self.buf, self.start, self.length, self.source = data, buf, start, length, source
        self.flags, self.value, self.num, self.den = _convert(buf, start, length, exact)
        self._fix(FLOAT_SLOW, float, self.value)
        self.rational = not (self.flags & DECIMAL).any()

    def token(self, q: int) -> str:
        s = int(self.start[q])
        return self.data[s:s + int(self.length[q])].decode(errors="replace")

    def _fix(self, flag: int, convert, out) -> None:
        """Python's own conversion of the tokens the kernel left, once per distinct token."""
        slow = np.flatnonzero(self.flags & flag)
        seen: dict[str, object] = {}
        for q in slow.tolist():
            tok = self.token(q)
            if tok not in seen:
                try:
                    seen[tok] = convert(tok)
                except (ValueError, ZeroDivisionError, OverflowError):
                    raise ChainError(f"line {line_of(self.data, int(self.start[q]))}: {tok!r} is not a number",
                                     source=self.source) from None
            out[q] = seen[tok]

    def scaled(self) -> tuple[np.ndarray, int] | None:
        """Every token as an integer over one denominator, exactly: (numerators, denominator), or None when
        some token's exact value is not at hand in 64 bits or the common denominator exceeds ``2**53``
        (decimals of up to 15 places fit: ``0.98`` and ``0.02`` are ``98`` and ``2`` over ``100``). When every
        denominator divides the largest, the numerators returned are this object's own, rewritten over it."""
        if self.num.size != self.start.size:
            self.flags, _, self.num, self.den = _convert(self.buf, self.start, self.length, True)
        denom = int(_largest_denominator(self.flags, self.num, self.den))
        if not 0 < denom <= _BIG:  # 0: an exact value not at hand, a denominator not positive, or beyond 1
            return None
        if _over_one_denominator(self.num, self.den, denom):  # in place: the exact values stay as they were
            return self.num, denom
        for d in np.unique(self.den).tolist():  # not all powers of ten: the least common multiple of the distinct
            denom = denom * d // gcd(denom, d)
            if denom > _BIG:
                return None
        return self.num * (denom // self.den), denom

    def fractions(self) -> list[Fraction]:
        """The exact value of every token (decimals too: ``0.7`` is ``7/10``)."""
        if self.num.size != self.start.size:
            self.flags, _, self.num, self.den = _convert(self.buf, self.start, self.length, True)
        out = [Fraction(a, b) for a, b in zip(self.num.tolist(), self.den.tolist(), strict=True)]
        self._fix(EXACT_SLOW, Fraction, out)
        return out


def numbers(data: bytes, buf: np.ndarray, start: np.ndarray, length: np.ndarray, source: str,
            exact: bool = False) -> Numbers:
    """Convert the number tokens at ``start`` (``length`` bytes each) of ``data``; see :class:`Numbers`.

    Examples
    --------
    >>> data = b"0.7 1/6 3 1e-3"
    >>> buf = np.frombuffer(data, np.uint8)
    >>> got = numbers(data, buf, np.array([0, 4, 8, 10]), np.array([3, 3, 1, 4]), "x")
    >>> got.value.tolist(), got.rational
    ([0.7, 0.16666666666666666, 3.0, 0.001], False)
    >>> [str(f) for f in got.fractions()]
    ['7/10', '1/6', '3', '1/1000']
    """
    return Numbers(data, buf, np.asarray(start, np.int64), np.asarray(length, np.int64), source, exact)


@numba.njit(cache=True)
def _skip_to_line_end(buf, i):
    """Skip blanks and a ``//`` comment; the index after the newline, or -1 when something else is there."""
    n = buf.size
    while i < n and _is_space(buf[i]):
        i += 1
    if i < n and buf[i] == 47 and i + 1 < n and buf[i + 1] == 47:
        while i < n and buf[i] != 10:
            i += 1
    if i < n and buf[i] != 10:
        return -1
    return i + 1


@numba.njit(cache=True)
def _scan_rows(buf, pos, nint, fill, ints, vstart, vlen):
    """Lines of ``nint`` state numbers and one number token (``.tra``, ``.srew``, ``.trew``).

    Returns (error, offset, rows): error 1 a field that is not a state number, 2 too few fields, 3 too many.
    """
    n = buf.size
    rows = 0
    i = pos
    while i < n:
        line = i
        while i < n and _is_space(buf[i]):
            i += 1
        if i >= n:
            break
        if buf[i] == 10:
            i += 1
            continue
        for c in range(nint):
            while i < n and _is_space(buf[i]):
                i += 1
            if i >= n or buf[i] == 10:
                return 2, line, rows
            v, k, big, j = _digits(buf, i, n)
            if k == 0 or big or (j < n and not _is_space(buf[j]) and buf[j] != 10):
                return 1, line, rows
            if fill:
                ints[c, rows] = v
            i = j
        while i < n and _is_space(buf[i]):
            i += 1
        s = i
        while i < n and not _is_space(buf[i]) and buf[i] != 10:
            i += 1
        if i == s:
            return 2, line, rows
        if fill:
            vstart[rows] = s
            vlen[rows] = i - s
        rows += 1
        while i < n and _is_space(buf[i]):
            i += 1
        if i < n and buf[i] != 10:
            return 3, line, rows
        i += 1
    return 0, 0, rows


def scan_rows(data: bytes, pos: int, nint: int, source: str, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``nint`` integer columns and the number tokens (start, length) of ``data[pos:]``, one row a line.

    Examples
    --------
    >>> ints, start, length = scan_rows(b"0 1 0.5\\n0 0 1/2\\n", 0, 2, "x.tra", "transitions")
    >>> ints.tolist(), start.tolist(), length.tolist()
    ([[0, 0], [1, 0]], [4, 12], [3, 3])
    """
    buf = np.frombuffer(data, np.uint8)
    empty = np.zeros((nint, 0), np.int64)
    err, at, rows = _scan_rows(buf, pos, nint, False, empty, empty[0], empty[0])
    if not err:
        ints = np.empty((nint, rows), np.int64)
        start = np.empty(rows, np.int64)
        length = np.empty(rows, np.int64)
        err, at, rows = _scan_rows(buf, pos, nint, True, ints, start, length)
    if err:
        line = line_of(data, at)
        text = data[at:data.find(b"\n", at) if b"\n" in data[at:] else len(data)].decode(errors="replace").strip()
        why = {1: "a field that is not a state number", 2: "too few fields", 3: "too many fields"}[err]
        shape = " ".join(["state"] * nint + ["value"])
        raise ChainError(f"line {line}: {text[:60]!r} has {why}: {what} are '{shape}' lines", source=source)
    return ints, start, length
