"""Decimal probabilities held exactly, and rows an exporter rounded read back as the fractions they were.

A file's decimals (``0.98``, ``0.02``) are exact values: over one denominator (a power of ten, up to
``2**53``) they are the file's chain itself, not a rounding of it, so a figure certified for the chain
is certified for the file. Storm writes a double with ten significant digits: ``1/6`` becomes
``0.1666666667``, and the row ``1/6, ..., 1/6`` no longer sums to exactly 1. Such a row (off 1 by less
than the rows' tolerance) is read again with each of its decimals taken as the simplest fraction within
half a unit of its last digit at the file's precision (the most significant digits any of its
probabilities has: a shorter one, ``0.5``, is exact at that precision); the row is accepted when these
fractions sum to exactly 1, which a rounding of the true values almost never does by chance. A row that
does not is left as written (float mode reads it as floats; exact mode refuses it).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

from ..analysis.build import from_scaled_triples, row_sums
from .lex import Numbers

#: The least precision (significant digits) whose rounded rows are read back as fractions: a coarser file
#: (``0.33``) is not an exporter's rounding of a double.
MIN_DIGITS = 8
#: How far from 1 a rounded row may sum (the rows' default tolerance).
ROW_OFF = 1e-9


def simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction of least denominator in ``[lo, hi]`` (``0 <= lo <= hi``).

    >>> simplest_between(Fraction(16666666665, 10**11), Fraction(16666666675, 10**11))
    Fraction(1, 6)
    >>> simplest_between(Fraction(3, 10), Fraction(3, 10))
    Fraction(3, 10)
    """
    fl = math.floor(lo)
    if fl == lo:
        return Fraction(fl)
    if fl + 1 <= hi:
        return Fraction(fl + 1)
    return fl + 1 / simplest_between(1 / (hi - fl), 1 / (lo - fl))


def _significant(text: str) -> tuple[int, Fraction] | None:
    """(significant digits, exact value) of a plain decimal token; None for a fraction or integer."""
    t = text.strip().lstrip("+")
    if "/" in t or t.startswith("-"):
        return None
    mant, _, _ = t.lower().partition("e")
    if "." not in mant and "e" not in t.lower():
        return None
    digits = mant.replace(".", "").lstrip("0")
    return len(digits.rstrip("0")) or 1, Fraction(t)


def _half_unit(x: Fraction, digits: int) -> Fraction:
    """Half a unit in the ``digits``-th significant digit of ``x > 0``."""
    lead = math.floor(math.log10(x))
    if Fraction(10) ** (lead + 1) <= x:
        lead += 1
    elif Fraction(10) ** lead > x:
        lead -= 1
    return Fraction(1, 2) * Fraction(10) ** (lead - digits + 1)


def exact_rows(probs: Numbers, rows: np.ndarray, n: int) -> tuple[np.ndarray, int, int] | None:
    """The probabilities as integers over one denominator: (numerators, denominator, rows read back).

    Every row must sum to exactly 1 as written, or be a rounded row read back (see the module's
    docstring); None when some row is neither, or the common denominator exceeds ``2**53``.
    """
    rows = np.asarray(rows, np.int64)
    held = probs.scaled()
    if held is not None:
        num, denom = held
        # positive integers below 2**53 whose sums are compared with denom <= 2**53: exact in doubles
        off = row_sums(rows, num, n) != denom
        if not off.any():
            return num, denom, 0
    if not _near_one(probs, rows, n):
        return None
    if held is not None:
        fast = _by_distinct(probs, rows, n, *held, off)
        if fast is not None:
            return None if fast is False else fast
    return _by_entry(probs, rows, n)


def _near_one(probs: Numbers, rows: np.ndarray, n: int) -> bool:
    """Whether every row sums to 1 within :data:`ROW_OFF` in floating point (an exporter's rounding at most)."""
    floats = np.zeros(n)
    np.add.at(floats, rows, probs.value)
    return not (np.abs(floats - 1.0) > ROW_OFF).any()


@numba.njit(cache=True)
def _an_occurrence(inv: np.ndarray, k: int) -> np.ndarray:
    """For each of ``k`` distinct values, the index of one entry holding it."""
    out = np.empty(k, np.int64)
    for i in range(inv.shape[0]):
        out[inv[i]] = i
    return out


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(an entry of each distinct value, ascending; each entry's distinct value's index): what ``np.unique``
    with ``return_index`` and ``return_inverse`` gives, in a third of its memory (it sorts an index beside
    the values; here the values alone are sorted, then looked up, 4 bytes an entry when they fit)."""
    distinct = np.unique(values)
    inv = np.searchsorted(distinct, values)
    if distinct.size < 2**31:
        inv = inv.astype(np.int32)
    return _an_occurrence(inv, distinct.size), inv


def _by_distinct(probs: Numbers, rows: np.ndarray, n: int, num: np.ndarray, denom: int, off: np.ndarray):
    """:func:`exact_rows` for decimals held over one denominator (``off``: the rows not summing to exactly 1
    as written, every row near 1), each distinct decimal read back once and the rows summed as integers:
    the answer, False for none, or None when this way cannot tell (distinct decimals of one double, or
    denominators too large for 64-bit sums)."""
    first, inv = _distinct(probs.value)
    if (probs.length[first][inv] != probs.length).any():  # one double written two ways: not told apart here
        return None
    tokens = [probs.token(q) for q in first.tolist()]
    parsed = [_significant(t) for t in tokens]  # None: an integer or a fraction, exact as it stands
    if any(v is not None and v[0] > 15 for v in parsed):  # up to 15 digits, distinct decimals are distinct doubles
        return None
    precision = max((v[0] for v in parsed if v is not None), default=0)
    if precision < MIN_DIGITS:
        return False
    back = [Fraction(t) if v is None else simplest_between(v[1] - _half_unit(v[1], precision),
                                                           v[1] + _half_unit(v[1], precision))
            if v[1] > 0 else v[1] for t, v in zip(tokens, parsed, strict=True)]
    width = int(np.bincount(rows, minlength=n).max())
    big_b = 1
    for b in back:
        big_b = big_b * b.denominator // math.gcd(big_b, b.denominator)
        if big_b > 2 ** 62 // max(width, 1):
            return None
    bnum = np.array([b.numerator * (big_b // b.denominator) for b in back], np.int64)
    row_back = np.zeros(n, np.int64)
    np.add.at(row_back, rows, bnum[inv])
    backed = row_back == big_b
    over: dict[int, Fraction] = {}  # an entry read as 1 minus the others of its row
    fix = np.flatnonzero(~backed & off)
    if fix.size:
        order = np.argsort(rows, kind="stable")
        lo, hi = np.searchsorted(rows[order], fix), np.searchsorted(rows[order], fix, side="right")
        for r, a, b in zip(fix.tolist(), lo.tolist(), hi.tolist(), strict=True):
            at = order[a:b]
            top = int(at[np.argmax(probs.value[at])])
            rest = 1 - sum((back[int(inv[q])] for q in at.tolist() if q != top), Fraction(0))
            v = parsed[int(inv[top])]
            if v is not None and v[1] > 0 and abs(rest - v[1]) <= _half_unit(v[1], precision):
                over[top] = rest
                backed[r] = True
        if not backed[fix].all():  # a row off 1 and not read back
            return False
    as_back = backed[rows]
    written = np.asarray(num, np.int64)[~as_back]
    g = math.gcd(denom, int(np.gcd.reduce(written))) if written.size else denom
    common = denom // g
    for d in {back[u].denominator for u in np.unique(inv[as_back]).tolist()} | {f.denominator for f in over.values()}:
        common = common * d // math.gcd(common, d)
        if common > 2 ** 53:
            return False
    out = np.asarray(num, np.int64) // g * (common // (denom // g))
    scaled_back = np.array([b.numerator * (common // b.denominator) if common % b.denominator == 0 else 0
                            for b in back], np.int64)
    out[as_back] = scaled_back[inv[as_back]]
    for q, f in over.items():
        out[q] = f.numerator * (common // f.denominator)
    return out, common, int((backed & off).sum())


def _by_entry(probs: Numbers, rows: np.ndarray, n: int) -> tuple[np.ndarray, int, int] | None:
    """:func:`exact_rows` one entry at a time, in fractions (every row already near 1: :func:`_near_one`)."""
    texts = [probs.token(q) for q in range(rows.size)]
    parsed = {t: _significant(t) for t in set(texts)}
    precision = max((v[0] for v in parsed.values() if v is not None), default=0)
    if precision < MIN_DIGITS:
        return None
    written: dict[str, Fraction] = {}
    back: dict[str, Fraction] = {}
    for t, v in parsed.items():
        written[t] = Fraction(t) if v is None else v[1]
        if v is not None and v[1] > 0:
            u = _half_unit(v[1], precision)
            back[t] = simplest_between(v[1] - u, v[1] + u)
        else:
            back[t] = written[t]
    as_back = [Fraction(0)] * n
    as_written = [Fraction(0)] * n
    for r, t in zip(rows.tolist(), texts, strict=True):
        as_back[r] += back[t]
        as_written[r] += written[t]
    fr = [back[t] for t in texts]
    keep = np.array([b != 1 for b in as_back], bool)
    for r in np.flatnonzero(keep & np.array([w != 1 for w in as_written], bool)).tolist():
        # the largest entry as 1 minus the others read back, if that is within half a unit of its last digit:
        # near 1 a decimal has fewer digits to tell its fraction by (1 - 1/3**15 is 0.9999999303)
        q = np.flatnonzero(rows == r)
        big = int(q[np.argmax(probs.value[q])])
        rest = 1 - (as_back[r] - back[texts[big]])
        v = parsed[texts[big]]
        if v is not None and v[1] > 0 and abs(rest - v[1]) <= _half_unit(v[1], precision):
            fr[big], keep[r], as_back[r] = rest, False, Fraction(1)
    if any(as_written[r] != 1 for r in np.flatnonzero(keep).tolist()):  # rows kept as written must sum to 1 so
        return None
    kept = keep[rows]
    fr = [written[t] if k else f for t, f, k in zip(texts, fr, kept.tolist(), strict=True)]
    common = 1
    for d in {f.denominator for f in fr}:
        common = common * d // math.gcd(common, d)
        if common > 2 ** 53:
            return None
    out = np.array([f.numerator * (common // f.denominator) for f in fr], np.int64)
    changed = sum(1 for r in range(n) if not keep[r] and as_written[r] != 1)
    return out, common, changed


def decimal_chain(probs: Numbers, n: int, rows: np.ndarray, cols: np.ndarray, *, init: int, labels, rewards,
                  source: str, exact: bool):
    """The chain of a file's decimal probabilities held exactly (rounded rows read back), or None (see
    :func:`exact_rows`); a note says how many rows were read back. Read with ``exact`` it is a rational
    chain like any other; else :attr:`AnyChain.decimal` keeps floating point the default."""
    if probs.rational:
        return None
    held = exact_rows(probs, rows, n)
    if held is None:
        return None
    chain = from_scaled_triples(n, rows, cols, held[0], held[1], init=init, labels=labels, rewards=rewards,
                                source=source)
    if chain is not None and exact:
        chain.decimal = False
    if chain is not None and held[2]:
        chain.notes.append(f"{held[2]:,} rows of decimals rounded at the file's precision (off 1 by a rounding) "
                           "read as the simplest fractions within their last digit, each row then summing to "
                           "exactly 1")
    return chain


def _digit_count(text: str) -> int:
    """Significant digits of a decimal token (0 for a fraction or an integer)."""
    t = text.strip().lstrip("+-").lower()
    if "/" in t or ("." not in t and "e" not in t):
        return 0
    return len(t.partition("e")[0].replace(".", "").strip("0")) or 1


def precision_of(nums: Numbers, sample: int = 20_000) -> int:
    """The most significant digits a decimal among the first ``sample`` tokens has (0 without decimals)."""
    return max((_digit_count(t) for t in {nums.token(q) for q in range(min(len(nums.start), sample))}), default=0)


def read_back(nums: Numbers, values: list[Fraction], precision: int) -> list[Fraction]:
    """Values (rewards) with each decimal printed to ``precision`` digits read back as the simplest fraction
    within half a unit of its last digit when that fraction's denominator is small (below
    ``10**(precision // 2 - 1)``: ``0.1666666667`` is ``1/6``); no row sum certifies a reward, so a decimal
    without such a fraction near it stays as written."""
    if precision < MIN_DIGITS:
        return values
    small = 10 ** (precision // 2 - 1)
    out = list(values)
    seen: dict[str, Fraction | None] = {}
    for q in range(len(values)):
        t = nums.token(q)
        if t not in seen:
            v = _significant(t)
            seen[t] = None
            if v is not None and v[0] == precision and v[1] > 0:
                u = _half_unit(v[1], precision)
                f = simplest_between(v[1] - u, v[1] + u)
                seen[t] = f if f.denominator <= small else None
        if seen[t] is not None:
            out[q] = seen[t]
    return out
