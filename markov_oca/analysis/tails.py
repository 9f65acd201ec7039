"""The distribution of the absorption time, pushed step by step, and its tail beyond the push.

The initial distribution is pushed through ``Q`` until less than ``tail`` is left (at most
``max_steps`` steps). Beyond that horizon ``H`` the tail decays geometrically at the rate of
``Q``'s dominant eigenvalue; its rate is bracketed by the Collatz-Wielandt bounds of the last
pushed vector ``w`` (``w Q >= lo w`` gives ``P(T > H + j) >= lo^j P(T > H)``, ``w Q <= hi w`` gives
``P(T > H + j) <= hi^j P(T > H)``; for a chain of period 2, whose ``w`` is not positive where
``w Q`` is, the same with ``Q^2``, at the price of one step each way). A quantile beyond the
horizon is then bracketed too; when no rate can be certified below 1 it is reported as "more than
H steps", never as infinite. Rounding is allowed for: each pushed step is off by at most a few
units of roundoff relative, so the pushed masses by ``H * gamma`` relative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from ..linalg.certify import gamma
from .results import number


@numba.njit(cache=True, nogil=True)
def _targets(nxt, transient):
    """``nxt`` with every step into a closed class sent to one extra slot ``n`` (-1 still pads a row)."""
    n, width = nxt.shape
    out = np.empty((n, width), np.int32)
    for s in range(n):
        for j in range(width):
            u = nxt[s, j]
            out[s, j] = -1 if u < 0 else (u if transient[u] else n)
    return out


@numba.njit(cache=True, nogil=True)
def _absorption_times(nxt, pnum, inv_denom, transient, init, tail, max_steps):
    """P(absorbed on step t) for t = 0, 1, ..., until less than ``tail`` is left; what is left; the last
    two pushed vectors (the distribution on the transient states at the horizon and one step before).

    What is absorbed in a step is gathered in one extra slot, summed in the order the states are
    pushed (as a running sum would), so that the push has no branch on where a step lands."""
    n = nxt.shape[0]
    pmf = np.zeros(1024)
    v = np.zeros(n + 1)
    w = np.zeros(n + 1)
    if not transient[init]:
        pmf[0] = 1.0
        return pmf[:1].copy(), 0.0, v[:n], w[:n]
    tgt = _targets(nxt, transient)
    v[init] = 1.0
    left = 1.0
    t = 0
    while t < max_steps and left >= tail:
        t += 1
        for s in range(n + 1):
            w[s] = 0.0
        for s in range(n):
            m = v[s]
            if m == 0.0:
                continue
            for j in range(tgt.shape[1]):
                u = tgt[s, j]
                if u < 0:
                    break
                w[u] += m * pnum[s, j] * inv_denom
        if t >= pmf.size:
            bigger = np.zeros(pmf.size * 2)
            bigger[:pmf.size] = pmf
            pmf = bigger
        pmf[t] = w[n]
        w[n] = 0.0
        left = 0.0
        for s in range(n):
            left += w[s]
        v, w = w, v
    return pmf[:t + 1].copy(), left, v[:n], w[:n]


@numba.njit(cache=True, nogil=True)
def _push_once(nxt, pnum, inv_denom, transient, v, out):
    for s in range(out.size):
        out[s] = 0.0
    for s in range(nxt.shape[0]):
        m = v[s]
        if m == 0.0:
            continue
        for j in range(nxt.shape[1]):
            u = nxt[s, j]
            if u >= 0 and transient[u]:
                out[u] += m * pnum[s, j] * inv_denom


def decay_rate(nxt, pnum, denom, transient, w: np.ndarray, steps: int = 1) -> tuple[float, float] | None:
    """Certified ``(lo, hi)`` with ``w Q^steps >= lo^steps w`` and ``w Q^steps <= hi^steps w``, or None
    (``w Q^steps`` leaves ``w``'s support)."""
    if not (w > 0).any():
        return None
    wq = w
    for _ in range(steps):
        out = np.empty_like(w)
        _push_once(nxt, pnum, 1.0 / denom, transient, wq, out)
        wq = out
    on = w > 0
    if (wq[~on] > 0).any():
        return None
    ratio = wq[on] / w[on]
    slack = steps * float(gamma(nxt.shape[1] + 4))
    return float(ratio.min() * (1 - slack)) ** (1 / steps) * (1 - slack), \
        float(ratio.max() * (1 + slack)) ** (1 / steps) * (1 + slack)


@dataclass
class AbsorptionTime:
    """The distribution of the number of steps until the chain enters a closed class."""

    pmf: list[float]
    mean: float | None  # of the distribution (from the solve), None when it could not be certified
    median: float | None
    p90: float | None
    p99: float | None
    tail_mass: float  # probability still transient when the computation stopped
    mean_bound: float | None = None
    variance: float | None = None
    variance_bound: float | None = None
    decay: tuple[float, float] | None = None  # certified bracket of the tail's geometric rate beyond the push
    brackets: dict | None = None  # quantile name -> (low, high) steps
    horizon: int = 0

    def to_dict(self, with_pmf: bool = True) -> dict:
        d = {"unit": "steps", "mean": self.mean, "median": _q(self.median), "p90": _q(self.p90),
             "p99": _q(self.p99), "tail_mass": self.tail_mass, "horizon": self.horizon,
             "quantile_bounds": {k: [_q(lo), _q(hi)] for k, (lo, hi) in (self.brackets or {}).items()}}
        if self.mean is None:
            del d["mean"]
        else:
            d["mean_bound"] = self.mean_bound
        if self.variance is not None:
            d.update(variance=self.variance, variance_bound=self.variance_bound)
        if self.decay is not None:
            d["decay_rate"] = list(self.decay)
        if with_pmf:
            d["pmf"] = self.pmf
        return d

    def markov_bound(self, mean_upper: float) -> None:
        """Bracket the quantiles left beyond the horizon by Markov's inequality, ``P(T > t) <= E[T] / t``."""
        if not np.isfinite(mean_upper):
            return
        for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99)):
            if getattr(self, name) is None:
                self.brackets[name] = (float(self.horizon + 1), float(math.ceil(mean_upper / (1 - q))))

    def text(self) -> str:
        """Median, p90 and p99 as the report prints them."""
        parts = []
        for k, x in (("median", self.median), ("p90", self.p90), ("p99", self.p99)):
            lo, hi = (self.brackets or {}).get(k, (x, None if x is None else x))
            if x is None:
                parts.append(f"more than {self.horizon:,}" + (f" (at most {hi:.4g})" if hi is not None else ""))
            elif lo != hi:
                parts.append(f"{x:.10g} [{lo:.10g}, {hi:.10g}]")
            else:
                parts.append(f"{x:g}")
        return ", ".join(parts) + " steps"


def _q(x: float | None):
    return None if x is None else number(x)


def _quantile(cdf: np.ndarray, q: float) -> int | None:
    idx = int(np.searchsorted(cdf, q - 1e-15))
    return idx if idx < cdf.size else None


def quantile_bracket(low: np.ndarray, high: np.ndarray, q: float) -> tuple[int | None, int | None]:
    """Where the ``q`` quantile of a distribution whose CDF lies between ``low`` and ``high`` can be.

    Returns ``(first index where high >= q, first index where low >= q)``: the quantile is one of
    those indices or between them; an end is None when the CDF's bound does not reach ``q`` within
    the indices computed (the quantile may then lie beyond them: "more than" the last).

    Examples
    --------
    >>> cdf = np.array([0.2, 0.5, 0.9, 1.0])
    >>> quantile_bracket(cdf - 1e-12, cdf + 1e-12, 0.8), quantile_bracket(cdf - 0.3, cdf + 0.3, 0.8)
    ((2, 2), (1, None))
    """
    return _quantile(high, q), _quantile(low, q)


def absorption_time(nxt, pnum, denom, transient, init, tail: float, max_steps: int) -> AbsorptionTime:
    """Push the distribution to the horizon, read its quantiles, and bracket those beyond it."""
    pmf, left, last, _ = _absorption_times(nxt, pnum, 1.0 / denom, transient, init, tail, max_steps)
    horizon = pmf.size - 1
    eps = horizon * float(gamma(nxt.shape[1] + 4))  # relative error of every pushed mass
    cdf = np.cumsum(pmf)
    res = AbsorptionTime(pmf.tolist(), None, None, None, None, float(left), horizon=horizon, brackets={})
    rate = decay_rate(nxt, pnum, denom, transient, last) if left > 0 else None
    mass = left
    periodic = False
    if left > 0 and rate is None:  # period 2: two steps at a time, at the price of one step each way
        rate = decay_rate(nxt, pnum, denom, transient, last, steps=2)
        periodic = rate is not None
        if periodic:
            mass = left / rate[1]
    res.decay = rate
    for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99)):
        lo_i, hi_i = quantile_bracket(cdf - eps, cdf + eps, q)
        if lo_i is not None and hi_i is not None:
            res.brackets[name] = (float(lo_i), float(hi_i))
            setattr(res, name, float(_quantile(cdf, q)))
            continue
        lo = float(lo_i if lo_i is not None else horizon + 1)
        hi = _beyond(rate, mass, left, q, horizon, eps) if rate is not None else None
        if hi is None:
            continue
        lo = max(lo, _beyond_low(rate, left, q, horizon, eps, periodic))
        res.brackets[name] = (lo, hi)
        setattr(res, name, float(round(math.sqrt(lo * hi))) if lo != hi else lo)
    return res


def _beyond(rate, mass, left, q, horizon, eps) -> float | None:
    """The first step by which the upper tail bound ``hi^j mass`` is at most ``1 - q``."""
    hi = rate[1]
    if not hi < 1:
        return None
    j = math.log((1 - q) / (mass * (1 + eps))) / math.log(hi)
    return float(horizon + max(0, math.ceil(j * (1 + 1e-12)) + 1))


def _beyond_low(rate, left, q, horizon, eps, periodic: bool) -> float:
    """A step before which the lower tail bound ``lo^j left`` stays above ``1 - q``."""
    lo = rate[0]
    if not lo > 0 or not lo < 1:
        return float(horizon + 1)
    base = left * (1 - eps) * (lo if periodic else 1)
    j = math.log((1 - q) / base) / math.log(lo)
    return float(horizon + max(1, math.floor(j * (1 - 1e-12)) - 1))
