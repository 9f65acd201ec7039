"""Nonnegative intervals: a figure computed from inputs known only within bounds, bracketed.

An :class:`Interval` holds arrays ``lo <= x <= hi`` of nonnegative reals. Its products, sums,
integer powers, dot products and ``1 - x`` (for ``x`` in [0, 1]) give intervals that contain the
exact result of the exact inputs: each operation is done on the ends in floating point and then
widened outward for its own rounding (the standard model ``fl(a op b) = (a op b)(1 + e)``,
``|e| <= u``; a sum of ``k`` nonnegative terms in any order is off by ``gamma_(k-1)`` of itself,
Higham ch. 3-4), and by :data:`~markov_oca.linalg.certify.TINY` for underflow; a product with a
factor 0 or 1, and ``1 - x`` that Fast2Sum finds exact, are not widened (an exact 0 stays 0). The operations are
monotone on nonnegative numbers, so the ends of the inputs give the ends of the result. A formula
written with ``*``, ``+``, ``**``, ``@``, ``.sum`` and ``1 - x`` runs unchanged on plain arrays (its
value) and on intervals (a bracket of the exact value).

Examples
--------
>>> x = Interval.around(np.array([0.5, 0.25]), 1e-12)
>>> y = (1 - x) * x ** 2
>>> bool((y.lo <= np.array([0.125, 0.046875])).all() and (np.array([0.125, 0.046875]) <= y.hi).all())
True
>>> float(y.bound(np.array([0.125, 0.046875])).max()) < 1e-11
True
"""

from __future__ import annotations

import numpy as np

from .certify import TINY, U, gamma

UP = 1.0 + 4 * U  # x * UP rounded is above x / (1 - u): one rounding's worth upward, itself rounded
DOWN = 1.0 - 4 * U


class Interval:
    """Arrays ``lo <= x <= hi`` of nonnegative reals (see the module docstring)."""

    __array_ufunc__ = None  # an ndarray on the left defers to the interval's own operators

    def __init__(self, lo, hi) -> None:
        self.lo = np.asarray(lo, np.float64)
        self.hi = np.asarray(hi, np.float64)

    @classmethod
    def around(cls, x, rel: float, absolute: float = 0.0, top: float = np.inf) -> Interval:
        """The nonnegative values within ``rel`` of ``x`` relative plus ``absolute``, at most ``top``."""
        x = np.asarray(x, np.float64)
        lo = np.maximum(x * (1.0 - rel) * DOWN - absolute, 0.0)
        hi = np.minimum(x * (1.0 + rel) * UP + absolute, top)
        return cls(lo, hi)

    @staticmethod
    def of(x) -> Interval:
        return x if isinstance(x, Interval) else Interval(x, x)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.lo.shape

    def __getitem__(self, index) -> Interval:
        return Interval(self.lo[index], self.hi[index])

    def __mul__(self, other) -> Interval:
        o = Interval.of(other)
        return Interval(_product(self.lo, o.lo, DOWN, -TINY), _product(self.hi, o.hi, UP, TINY))

    __rmul__ = __mul__

    def __add__(self, other) -> Interval:
        o = Interval.of(other)  # a sum of nonnegative numbers: no underflow, one rounding
        return Interval((self.lo + o.lo) * DOWN, (self.hi + o.hi) * UP)

    __radd__ = __add__

    def __pow__(self, a: int) -> Interval:
        out = Interval(np.ones_like(self.lo), np.ones_like(self.hi))
        for _ in range(int(a)):
            out = out * self
        return out

    def __rsub__(self, one) -> Interval:
        """``1 - x`` for ``x`` in [0, 1] (only ``1 - interval``)."""
        if one != 1:
            raise TypeError("an interval is only subtracted from 1")
        lo, lo_err = _one_minus(self.hi)
        hi, hi_err = _one_minus(self.lo)
        return Interval(np.maximum(np.where(lo_err >= 0, lo, lo * DOWN), 0.0),
                        np.minimum(np.where(hi_err <= 0, hi, hi * UP), 1.0))

    def sum(self, axis=None) -> Interval:
        k = self.lo.size if axis is None else self.lo.shape[axis]
        g = float(gamma(k))
        return Interval(self.lo.sum(axis=axis) * (1.0 - g) * DOWN, self.hi.sum(axis=axis) * (1.0 + g) * UP)

    def __matmul__(self, other) -> Interval:
        o = Interval.of(other)
        k = self.lo.shape[-1]
        g = float(gamma(k + 1))  # k products and a sum of k terms (fused or not)
        nonzero = (self.hi > 0).astype(np.float64) @ (o.hi > 0).astype(np.float64) > 0
        return Interval(np.maximum((self.lo @ o.lo) * (1.0 - g) * DOWN - k * TINY, 0.0),
                        np.where(nonzero, (self.hi @ o.hi) * (1.0 + g) * UP + k * TINY, 0.0))

    def __rmatmul__(self, other) -> Interval:
        return Interval.of(other) @ self

    def bound(self, value) -> np.ndarray:
        """``max |x - value|`` over the interval: a bound on the error of ``value`` as the exact figure."""
        v = np.asarray(value, np.float64)
        d = np.maximum(np.abs(self.hi - v), np.abs(v - self.lo))
        return np.where(d == 0, 0.0, d * UP + TINY)  # d = 0: lo = value = hi, the figure is exact


def _product(a: np.ndarray, b: np.ndarray, widen: float, tiny: float) -> np.ndarray:
    """``a * b`` moved outward for its rounding (``widen``) and underflow (``tiny``), except where it is exact:
    a factor 0 or 1."""
    ab = a * b
    exact = (a == 0) | (b == 0) | (a == 1) | (b == 1)
    return np.where(exact, ab, np.maximum(ab * widen + tiny, 0.0))


def _one_minus(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``1 - x`` rounded and its exact error (Fast2Sum, ``|1| >= |x|``): ``1 - x = s + t``."""
    s = 1.0 - x
    t = -x - (s - 1.0)
    return s, t


def stack(rows: list) -> np.ndarray | Interval:
    """``np.stack`` of arrays, or of intervals (an interval of the stacked ends)."""
    if rows and isinstance(rows[0], Interval):
        return Interval(np.stack([r.lo for r in rows]), np.stack([r.hi for r in rows]))
    return np.stack(rows)
