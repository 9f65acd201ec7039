"""The distribution of the absorption time, pushed step by step, and its tail beyond the push.

The initial distribution is pushed through ``Q``, one step at a time. After each step the last two
pushed vectors ``w`` and ``w Q`` bracket the rate at which the tail decays (the Collatz-Wielandt
bounds): ``w Q >= lo w`` gives ``w Q^j >= lo^j w``, and ``w Q <= hi w`` gives ``w Q^j <= hi^j w``, so
``P(T > t + j)`` lies between ``lo^j P(T > t)`` and ``hi^j P(T > t)``, and ``P(T = t + j)`` between
``lo^(j-1)`` and ``hi^(j-1)`` times ``P(T = t)``. On most chains the bracket closes to a few units of
roundoff after some tens of steps; once the pmf continued from there at the rate ``sqrt(lo hi)``
is within ``extend_error`` (relative) of the true one at every step still to go, the push stops
(``pushed``) and the pmf is continued geometrically until less than ``tail`` is left (at most
``max_steps`` steps in all, the ``horizon``). A chain whose bracket does not close (period 2, or a
slowly mixing one) is pushed all the way. Beyond the horizon the quantiles are bracketed from the
same decay (for a chain of period 2, whose ``w`` is not positive where ``w Q`` is, from ``Q^2``, at
the price of one step each way); when no rate can be certified below 1 a quantile is reported as
"more than H steps", never as infinite.

Rounding is allowed for: every pushed mass sums at most ``d`` terms (``d`` the largest number of
branches into one transient state), so each step moves it by at most ``gamma_d`` relative and the
masses after ``t`` steps by ``t gamma_d``; what is absorbed in a step and what is left are summed in
blocks of :data:`BLOCK` rows, each block's sum then added up (``gamma`` of the block's terms plus the
blocks). :attr:`AbsorptionTime.error` bounds the error of every value of the CDF.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from ..linalg.certify import SLACK, U, gamma
from ..linalg.rows import Rows, n_states, span
from .results import number

#: Rows whose absorbed and remaining masses are summed apart before they are added to the total.
BLOCK = 1024
#: Relative error allowed to the pmf continued geometrically beyond the push (see the module docstring).
EXTEND_ERROR = 1e-11
#: The push visits only the states holding mass while they are at most one in this many of all states.
FRONTIER = 2


@numba.njit(cache=True, nogil=True)
def _targets(lo, hi, nxt, pnum, transient):
    """The transient rows' branches packed row after row (``ptr``, ``tgt``, ``num``: no padding), every step
    into a closed class sent to one extra slot ``n``, the numerators as floats (exact: at most ``2**53``); the
    largest number of branches from transient states into one transient state, and into the extra slot from
    one block of :data:`BLOCK` rows or of :data:`BLOCK` rows of the push's frontier (at most ``BLOCK`` times
    the most from one row). The chain's branches come as :class:`~markov_oca.linalg.rows.Rows`."""
    n = n_states(lo, hi, nxt)
    ptr = np.zeros(n + 1, np.int64)
    for s in range(n):
        first, last = span(lo, hi, nxt, s)
        ptr[s + 1] = ptr[s] + (last - first if transient[s] else 0)
    tgt = np.empty(ptr[n], np.int32)
    num = np.empty(ptr[n], np.float64)
    into = np.zeros(n, np.int64)
    most = 0
    exits = 0
    row_most = 0
    for s in range(n):
        row = 0
        k = ptr[s]
        first = span(lo, hi, nxt, s)[0]
        for j in range(ptr[s + 1] - ptr[s]):
            u = nxt[first + j]
            num[k + j] = pnum[first + j]
            if transient[u]:
                tgt[k + j] = u
                into[u] += 1
            else:
                tgt[k + j] = n
                row += 1
        exits += row
        row_most = max(row_most, row)
        if (s % BLOCK) == BLOCK - 1 or s == n - 1:
            most = max(most, exits)
            exits = 0
    return ptr, tgt, num, into.max() if n else 0, max(most, BLOCK * row_most)


@numba.njit(cache=True, nogil=True)
def _blocked_sum(w, n):
    """``sum(w[:n])`` in blocks of :data:`BLOCK`."""
    total = 0.0
    part = 0.0
    for s in range(n):
        part += w[s]
        if (s % BLOCK) == BLOCK - 1:
            total += part
            part = 0.0
    return total + part


@numba.njit(cache=True, nogil=True)
def _ratios(v, w, n):
    """``(min, max)`` of ``w / v`` where ``v > 0``, and False when ``w`` is positive where ``v`` is not."""
    lo = np.inf
    hi = 0.0
    for s in range(n):
        if v[s] > 0.0:
            r = w[s] / v[s]
            if r < lo:
                lo = r
            if r > hi:
                hi = r
        elif w[s] > 0.0:
            return 0.0, np.inf, False
    return lo, hi, True


@numba.njit(cache=True, nogil=True)
def _ratios_on(v, w, fv, nv, fw, nw):
    """:func:`_ratios` where ``v`` is nonzero only on ``fv[:nv]`` and ``w`` only on ``fw[:nw]``."""
    lo = np.inf
    hi = 0.0
    for i in range(nw):
        s = fw[i]
        if w[s] > 0.0 and not v[s] > 0.0:
            return 0.0, np.inf, False
    for i in range(nv):
        s = fv[i]
        if v[s] > 0.0:
            r = w[s] / v[s]
            if r < lo:
                lo = r
            if r > hi:
                hi = r
    return lo, hi, True


@numba.njit(cache=True, nogil=True)
def _absorption_times(ptr, tgt, num, inv_denom, init, tail, max_steps, g, extend, limit):
    """P(absorbed on step t) for t = 0, 1, ..., until less than ``tail`` is left, or until the decay's
    bracket makes the rest a geometric continuation within ``extend`` (relative); what is left; the
    last two pushed vectors; the bracket ``(lo, hi)`` the push stopped on (``hi = 0`` when it did not
    stop early).

    ``ptr``, ``tgt``, ``num`` are :func:`_targets`' packed rows: what is absorbed in a step is gathered in
    the extra slot ``n`` (emptied into a running total every :data:`BLOCK` rows), so that the push has no
    branch on where a step lands. ``g`` bounds the relative rounding of one pushed mass in one step.

    While the states holding mass are few (at most ``limit`` of them), only those are visited, kept in a
    list (the frontier): a layered chain, whose mass moves from one layer to the next, is
    pushed in one pass over its transitions in all, however many steps it takes. The frontier's rows
    are summed in blocks of :data:`BLOCK` entries, as the rows are."""
    n = ptr.size - 1
    width = 1
    for s in range(n):
        width = max(width, ptr[s + 1] - ptr[s])
    pmf = np.zeros(1024)
    v = np.zeros(n + 1)
    w = np.zeros(n + 1)
    lo_c = 0.0
    hi_c = 0.0
    if init < 0:
        pmf[0] = 1.0
        return pmf[:1].copy(), 0.0, v[:n], w[:n], lo_c, hi_c
    v[init] = 1.0
    fv = np.empty(limit + width + 1, np.int32)
    fw = np.empty(limit + width + 1, np.int32)
    mark = np.zeros(n, np.bool_)
    fv[0] = init
    nv = 1
    nw = 0
    sparse = True
    left = 1.0
    t = 0
    while t < max_steps and left >= tail:
        t += 1
        absorbed = 0.0
        if sparse:
            nw = 0
            for i in range(nv):
                s = fv[i]
                m = v[s]
                if m != 0.0 and nw <= limit:
                    for k in range(ptr[s], ptr[s + 1]):
                        u = tgt[k]
                        if u < n and not mark[u]:
                            mark[u] = True
                            fw[nw] = u
                            nw += 1
                        w[u] += m * num[k] * inv_denom
                elif m != 0.0:  # the frontier outgrew its list: the rest of this step row by row
                    for k in range(ptr[s], ptr[s + 1]):
                        u = tgt[k]
                        w[u] += m * num[k] * inv_denom
                if (i % BLOCK) == BLOCK - 1:
                    absorbed += w[n]
                    w[n] = 0.0
            absorbed += w[n]
            w[n] = 0.0
            if nw > limit:  # from now on every row, every step
                sparse = False
                for i in range(nw):
                    mark[fw[i]] = False
                left = _blocked_sum(w, n)
            else:
                left = 0.0
                part = 0.0
                for i in range(nw):
                    part += w[fw[i]]
                    mark[fw[i]] = False
                    if (i % BLOCK) == BLOCK - 1:
                        left += part
                        part = 0.0
                left += part
        else:
            for s in range(n + 1):
                w[s] = 0.0
            for s in range(n):
                m = v[s]
                if m != 0.0:
                    for k in range(ptr[s], ptr[s + 1]):
                        w[tgt[k]] += m * num[k] * inv_denom
                if (s % BLOCK) == BLOCK - 1:
                    absorbed += w[n]
                    w[n] = 0.0
            absorbed += w[n]
            w[n] = 0.0
            left = _blocked_sum(w, n)
        if t >= pmf.size:
            bigger = np.zeros(pmf.size * 2)
            bigger[:pmf.size] = pmf
            pmf = bigger
        pmf[t] = absorbed
        if extend > 0.0 and left >= tail and t < max_steps:
            if sparse:
                lo, hi, ok = _ratios_on(v, w, fv, nv, fw, nw)
            else:
                lo, hi, ok = _ratios(v, w, n)
            if ok and lo > 0.0:
                lo = lo * (1.0 - 2.0 * g)
                hi = hi * (1.0 + 2.0 * g)
                if hi < 1.0:
                    to_go = math.log(tail / left) / math.log(hi) + 2.0
                    if to_go * math.log(hi / lo) <= extend:
                        lo_c, hi_c = lo, hi
                        break
        if sparse:  # v becomes the next step's w: emptied where it held mass
            for i in range(nv):
                v[fv[i]] = 0.0
            fv, fw = fw, fv
            nv = nw
        v, w = w, v
    if hi_c > 0.0:
        return pmf[:t + 1].copy(), left, w[:n], v[:n], lo_c, hi_c
    return pmf[:t + 1].copy(), left, v[:n], w[:n], lo_c, hi_c


@numba.njit(cache=True, nogil=True)
def _push_once(lo, hi, nxt, pnum, inv_denom, transient, v, out):
    for s in range(out.size):
        out[s] = 0.0
    for s in range(n_states(lo, hi, nxt)):
        m = v[s]
        if m == 0.0:
            continue
        first, last = span(lo, hi, nxt, s)
        for j in range(first, last):
            u = nxt[j]
            if transient[u]:
                out[u] += m * pnum[j] * inv_denom


def decay_rate(rows: Rows, denom, transient, w: np.ndarray, steps: int = 1,
               g: float | None = None) -> tuple[float, float] | None:
    """Certified ``(lo, hi)`` with ``w Q^steps >= lo^steps w`` and ``w Q^steps <= hi^steps w``, or None
    (``w Q^steps`` leaves ``w``'s support). ``g`` bounds the relative rounding of one pushed mass in one
    step (by default from the most branches into one state)."""
    if not (w > 0).any():
        return None
    wq = w
    for _ in range(steps):
        out = np.empty_like(w)
        _push_once(*rows, 1.0 / denom, transient, wq, out)
        wq = out
    on = w > 0
    if (wq[~on] > 0).any():
        return None
    ratio = wq[on] / w[on]
    fan_in = int(np.bincount(rows.nxt[rows.nxt >= 0], minlength=1).max()) if g is None else 0
    slack = steps * float(gamma(fan_in + 4) if g is None else 2 * g)
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
    tail_mass: float  # probability still transient at the horizon
    mean_bound: float | None = None
    variance: float | None = None
    variance_bound: float | None = None
    decay: tuple[float, float] | None = None  # certified bracket of the tail's geometric rate beyond the push
    brackets: dict | None = None  # quantile name -> (low, high) steps
    horizon: int = 0  # the last step of the pmf
    pushed: int | None = None  # the last step pushed (the pmf beyond is the certified geometric continuation)
    error: float = 0.0  # a bound on the error of every value of the CDF (the cumulative sum of the pmf)

    def to_dict(self, with_pmf: bool = True) -> dict:
        d = {"unit": "steps", "mean": self.mean, "median": _q(self.median), "p90": _q(self.p90),
             "p99": _q(self.p99), "tail_mass": self.tail_mass, "horizon": self.horizon,
             "pushed": self.horizon if self.pushed is None else self.pushed, "cdf_bound": self.error,
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


def absorption_time(rows: Rows, denom, transient, init, tail: float, max_steps: int,
                    extend_error: float = EXTEND_ERROR, frontier: int = FRONTIER) -> AbsorptionTime:
    """Push the distribution (see the module docstring), continue it geometrically once its decay is certified,
    read its quantiles, and bracket those beyond the horizon. ``extend_error`` 0 pushes all the way; the push
    visits only the states holding mass while they are at most one in ``frontier`` of all states."""
    ptr, tgt, num, into, most = _targets(*rows, transient)
    n = transient.size
    g = float(gamma(max(int(into), 1)))  # one pushed mass, one step
    blocks = -(-n // BLOCK)
    g_sum = float(gamma(max(int(most), BLOCK) + blocks))  # a block-wise sum of what is absorbed or left
    start = int(init) if transient[init] else -1
    pmf, left, last, _, lo_c, hi_c = _absorption_times(ptr, tgt, num, 1.0 / denom, start, tail, max_steps, g,
                                                       extend_error, max(n // frontier, 16))
    del ptr, tgt, num
    pushed = pmf.size - 1
    eps = _push_error(pushed, g) + g_sum  # relative error of every pushed mass, absorbed or left
    rate = (lo_c, hi_c) if hi_c > 0 else None
    left_lo, left_hi = left * (1 - eps), left * (1 + eps)  # P(T > pushed)
    extra = 0.0
    if rate is not None:  # the certified geometric continuation
        pmf, left, left_lo, left_hi, extra = _continue(pmf, left, rate, eps, tail, max_steps)
    horizon = pmf.size - 1
    error = (eps + extra + float(gamma(horizon + 1))) * SLACK  # the pushed masses, the continuation, the cumsum
    cdf = np.cumsum(pmf)
    res = AbsorptionTime(pmf.tolist(), None, None, None, None, float(left), horizon=horizon, brackets={},
                         pushed=pushed, error=error)
    if rate is None and left > 0:
        rate = decay_rate(rows, denom, transient, last, g=g)
    periodic = False
    if left > 0 and rate is None:  # period 2: two steps at a time, at the price of one step each way
        rate = decay_rate(rows, denom, transient, last, steps=2, g=g)
        periodic = rate is not None
        if periodic:
            left_hi = left_hi / rate[1]
    res.decay = rate
    for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99)):
        lo_i, hi_i = quantile_bracket(cdf - error, cdf + error, q)
        if lo_i is not None and hi_i is not None:
            res.brackets[name] = (float(lo_i), float(hi_i))
            setattr(res, name, float(_quantile(cdf, q)))
            continue
        lo = float(lo_i if lo_i is not None else horizon + 1)
        hi = _beyond(rate, left_hi, q, horizon) if rate is not None else None
        if hi is None:
            continue
        lo = max(lo, _beyond_low(rate, left_lo, q, horizon, periodic))
        res.brackets[name] = (lo, hi)
        setattr(res, name, float(round(math.sqrt(lo * hi))) if lo != hi else lo)
    return res


def _push_error(t: int, g: float) -> float:
    """``(1 + g)^t - 1``, bounded above: the relative error of a mass pushed ``t`` steps."""
    x = t * g
    return x / (1 - x) if x < 1 else math.inf


def _continue(pmf: np.ndarray, left: float, rate: tuple[float, float], eps: float, tail: float,
              max_steps: int) -> tuple[np.ndarray, float, float, float, float]:
    """The pmf continued at the rate ``m = sqrt(lo hi)`` from its last pushed value until the tail's upper
    bound is below ``tail``: ``(pmf, the tail at its end, its lower and upper bounds, the continuation's
    error bound on the CDF)``.

    ``P(T = t + j)`` is within ``[lo^j, hi^j]`` of ``P(T = t)`` (``t`` the last pushed step), so the value
    ``P(T = t) m^j`` is off by at most ``(hi / lo)^(j / 2) - 1`` of itself plus the error ``eps`` of
    ``P(T = t)``; summed over the continuation, at most that relative error times the mass it holds."""
    lo, hi = rate
    t = pmf.size - 1
    m = math.sqrt(lo * hi)
    left_hi = left * (1 + eps)
    room = max_steps - t
    k = min(room, max(1, math.ceil(math.log(tail / left_hi) / math.log(hi)))) if left_hi >= tail else 0
    j = np.arange(1, k + 1, dtype=np.float64)
    ext = pmf[t] * np.exp(j * math.log(m))
    rel = math.expm1(k * 0.5 * math.log(hi / lo)) + eps + 4 * U * (k + 4)  # the powers' rounding too
    extra = rel * left_hi * (1 + rel) * SLACK
    out = np.concatenate([pmf, ext])
    return out, left * m ** k, left * (1 - eps) * lo ** k * (1 - 4 * U * (k + 4)), \
        left_hi * hi ** k * (1 + 4 * U * (k + 4)), extra


def _beyond(rate, upper, q, horizon) -> float | None:
    """The first step by which the upper tail bound ``hi^j upper`` is at most ``1 - q``."""
    hi = rate[1]
    if not hi < 1:
        return None
    j = math.log((1 - q) / upper) / math.log(hi)
    return float(horizon + max(0, math.ceil(j * (1 + 1e-12)) + 1))


def _beyond_low(rate, lower, q, horizon, periodic: bool) -> float:
    """A step before which the lower tail bound ``lo^j lower`` stays above ``1 - q``."""
    lo = rate[0]
    if not lo > 0 or not lo < 1:
        return float(horizon + 1)
    base = lower * (lo if periodic else 1)
    j = math.log((1 - q) / base) / math.log(lo)
    return float(horizon + max(1, math.floor(j * (1 - 1e-12)) - 1))
