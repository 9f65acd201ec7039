"""The points game solved layer by layer: the chain is never held whole.

Three players on the shipped board reach hundreds of millions of states (every
triple of squares meets many triples of balances), too many to hold as a matrix.
But the race only moves forward, except for the bounces at the end, and that
orders the states in *layers*:

    layer = sum over players of w(status),  w = G for an arrived or bankrupt player,
            w = B = G + 1 - faces for a square in the bounce zone [B, G - 1],
            w = the square otherwise.

A bet keeps the squares; a throw moves the mover forward (w grows), or within the
bounce zone (w stays B, the only way back); bankruptcy and arrival raise w to G.
So every transition goes from a layer to the same layer or a later one, and the
cycles lie inside a layer. The expected visits ``x = e_start + Q^T x`` are then
solved one layer at a time, in increasing order:

1. the mass flowing in from earlier layers is gathered (a hash table numbers the
   layer's states as they come);
2. the states the layer reaches within itself are added (bets, bounces), with
   their in-layer transitions;
3. ``x = inflow + Q_in^T x`` is solved by Gauss-Seidel in the order of the race
   (exact in one sweep where the layer has no cycle; the bounce cycles converge
   geometrically, swept until every change is below 1e-15 of its value), and its
   true residual is bounded (:func:`layered_bounds`), as are the time-weighted
   visits ``z = x + Q^T z`` beside it;
4. every state is expanded once more: its visits flow into later layers (kept
   as pending (id, mass) pairs until their turn), into the end (outcome, final
   balances), and into every expected total (turns, throws, bets, bankruptcy,
   mutual aid) -- the same figures :func:`~markov_oca.punti.analysis.analyse`
   takes from the whole chain, each with a certified bound (:func:`layered_bounds`).

Memory is one layer and the pending inflows of the few layers after it.

The length distribution needs time, which visits do not keep. When no
bankruptcy is reachable (checked on every branch of every state), the race does
not depend on the balances, and the length distribution is that of the race
alone: the same board with its squares' effects and bets taken away, a chain of
the squares only (tens of thousands of states), solved by the generic
:meth:`~markov_oca.chain.Chain.length_distribution`. Its expected turns are
checked against the layered solve's. When bankruptcy is reachable the length
distribution is not computed (the report says so); the expected length is.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numba
import numpy as np

from ..analysis.bounds import clip_probability
from ..analysis.results import certify_length, summarise_length
from ..core.errors import SolverError, TooLargeError
from ..core.memory import available_memory, gib
from ..core.progress import progress_bar
from ..linalg.certify import SLACK, TINY, U, gamma
from .kernel import _P_G, _P_N, _P_NL, MODE_NEVER, _expand, _insert, _scratch, _split, _status, grow_table, new_table
from .model import PuntiModel
from .results import PuntiResults, PuntiSeat, game_fields, win_tie_share

# Columns of the per-seat totals.
_TURNS, _BETS, _BROKE, _AID, _AIDOK, _POINTS = range(6)
# Columns of the game totals.
_G_TURNS, _G_THROWS, _G_BETS, _G_TRANSITIONS = range(4)


@numba.njit(cache=True)
def _layer_key(state, prm, B):
    """(layer, order within the layer) of a state (see the module docstring)."""
    N, G, nl = prm[_P_N], prm[_P_G], prm[_P_NL]
    phase, _seat, rest = _split(state, N)
    layer = 0
    exact = 0
    for _i in range(N):
        s = _status(rest % nl, prm)
        rest //= nl
        if s == 0 or s == G:
            layer += G
            exact += G
        elif s >= B:
            layer += B
            exact += s
        else:
            layer += s
            exact += s
    return layer, exact * 3 + phase


@numba.njit(cache=True)
def _order_keys(ids, n, prm, B, out):
    for r in range(n):
        out[r] = _layer_key(ids[r], prm, B)[1]


@numba.njit(cache=True)
def _gather(keys, vals, in_ids, in_mass, in_cnt, in_z, ids, inflow, cnt, zin, n, k0):
    """Number the incoming states from entry k0 on (summing the mass of repeats, and in ``cnt`` the number
    of branch terms each sum holds); stops when the table or the arrays are about to fill. Returns
    (count, entries done)."""
    limit = min(keys.size // 2, ids.size)
    for k in range(k0, in_ids.size):
        if n + 1 >= limit:
            return n, k
        idx = _insert(keys, vals, in_ids[k], n)
        if idx == n:
            ids[n] = in_ids[k]
            inflow[n] = 0.0
            cnt[n] = 0.0
            zin[n] = 0.0
            n += 1
        inflow[idx] += in_mass[k]
        cnt[idx] += in_cnt[k]
        zin[idx] += in_z[k]
    return n, in_ids.size


@numba.njit(cache=True)
def _may_stay(state, mode, prm, B, sq_pulc):
    """Whether a step from ``state`` can stay in its layer: a bet (a Pulcinella at the turn's start,
    or a second bet; not when nobody bets), or a throw from the bounce zone. Any other throw moves
    the layer on."""
    nl = prm[_P_NL]
    phase, m, rest = _split(state, prm[_P_N])
    for _i in range(m):
        rest //= nl
    s = _status(rest % nl, prm)
    return s >= B or (mode != MODE_NEVER and (phase == 1 or (phase == 0 and sq_pulc[s] > 0)))


@numba.njit(cache=True)
def _close(mode, prm, total, board, B, S, keys, vals, ids, inflow, n, head, e_src, e_dst, e_p, ne, J):
    """Add the states the layer reaches within itself and its in-layer transitions.

    Stops early when an array is about to fill; returns (n, head, ne) to resume."""
    work, out = _scratch(prm[_P_N], J)
    out_next, out_p = out[0], out[1]
    limit = keys.size // 2
    while head < n:
        if n + J >= ids.size or n + J >= limit or ne + J >= e_src.size:
            break
        if not _may_stay(ids[head], mode, prm, B, board[2]):
            head += 1
            continue
        c = _expand(ids[head], mode, prm, total, board, work, out)
        for j in range(c):
            t = out_next[j]
            if t >= 0 and _layer_key(t, prm, B)[0] == S:
                idx = _insert(keys, vals, t, n)
                if idx == n:
                    ids[n] = t
                    inflow[n] = 0.0
                    n += 1
                e_src[ne] = head
                e_dst[ne] = idx
                e_p[ne] = out_p[j]
                ne += 1
        head += 1
    return n, head, ne


@numba.njit(cache=True, inline="always")
def _tarjan_visit(v, idx, sp, csp, index, low, onstack, stack, cs_node, cs_edge, indptr):
    """Number ``v``, put it on the component stack and the call stack; returns (idx, sp, csp) moved on."""
    index[v] = idx
    low[v] = idx
    stack[sp] = v
    onstack[v] = True
    cs_node[csp] = v
    cs_edge[csp] = indptr[v]
    return idx + 1, sp + 1, csp + 1


@numba.njit(cache=True)
def _tarjan(n, indptr, dst):
    """Strongly connected components of a graph (out-edges in CSR); labels in reverse topological
    order: an edge between two components goes from the higher label to the lower."""
    index = np.full(n, -1, np.int64)
    low = np.zeros(n, np.int64)
    onstack = np.zeros(n, np.bool_)
    comp = np.full(n, -1, np.int64)
    stack = np.empty(n, np.int64)
    cs_node = np.empty(n, np.int64)
    cs_edge = np.empty(n, np.int64)
    sp = 0
    idx = 0
    nc = 0
    for root in range(n):
        if index[root] != -1:
            continue
        idx, sp, csp = _tarjan_visit(root, idx, sp, 0, index, low, onstack, stack, cs_node, cs_edge, indptr)
        while csp > 0:
            v = cs_node[csp - 1]
            e = cs_edge[csp - 1]
            if e < indptr[v + 1]:
                cs_edge[csp - 1] = e + 1
                w = dst[e]
                if index[w] == -1:
                    idx, sp, csp = _tarjan_visit(w, idx, sp, csp, index, low, onstack, stack, cs_node, cs_edge,
                                                 indptr)
                elif onstack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                csp -= 1
                if csp > 0:
                    u = cs_node[csp - 1]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == index[v]:
                    while True:
                        sp -= 1
                        w = stack[sp]
                        onstack[w] = False
                        comp[w] = nc
                        if w == v:
                            break
                    nc += 1
    return comp


@numba.njit(cache=True)
def _gs_components(order, comp, indptr, src, p, diag, inflow, x, tol, max_sweeps):
    """Solve ``x = inflow + Q_in^T x`` component by component in topological ``order``: a state
    alone is computed once from its final predecessors; a cycle is swept (Gauss-Seidel) until every
    change is below ``tol`` of the new value (the relative bounds of :func:`layered_bounds` need every
    state's residual small beside its visits, not only the largest). Returns the most sweeps a component
    needed (-1: not converged)."""
    most = 0
    k = 0
    n = order.size
    while k < n:
        end = k + 1
        while end < n and comp[order[end]] == comp[order[k]]:
            end += 1
        sweeps = 0
        while True:
            worst = 0.0
            for q in range(k, end):
                t = order[q]
                acc = inflow[t]
                for e in range(indptr[t], indptr[t + 1]):
                    s = src[e]
                    if s != t:
                        acc += p[e] * x[s]
                new = acc / (1.0 - diag[t])
                d = abs(new - x[t]) / max(abs(new), 1e-300)
                if d > worst:
                    worst = d
                x[t] = new
            sweeps += 1
            if end - k == 1 and diag[order[k]] == 0.0:
                break
            if worst <= tol:
                break
            if sweeps >= max_sweeps:
                return -1
        if sweeps > most:
            most = sweeps
        k = end
    return most


@numba.njit(cache=True)
def _residual(n, indptr, src, pnum, inv_d, inflow, x, rel, scale):
    """The residual ``inflow + Q_in^T x - x`` of a layer's system with the exact probabilities ``pnum / denom``:
    (the largest computed one, the sum of the computed ones' sizes, the sum of their rounding allowances:
    three roundings a term, ``gamma_(2 (k + 4))`` of the magnitudes for ``k`` terms, as
    :func:`~markov_oca.linalg.certify.forward_residual`; the underflow allowances apart). ``rel[t]`` gets the
    bound at state ``t`` (underflow allowance included) over ``scale[t]`` (inf where that is 0 and the bound
    is not)."""
    worst = 0.0
    size = 0.0
    err = 0.0
    tiny = 0.0
    for t in range(n):
        acc = inflow[t] - x[t]
        mag = abs(inflow[t]) + abs(x[t])
        k = 2
        for e in range(indptr[t], indptr[t + 1]):
            q = pnum[e] * inv_d * x[src[e]]
            acc += q
            mag += abs(q)
            k += 1
        g = 2.0 * (k + 4.0) * 1.1102230246251565e-16
        d = abs(acc)
        worst = max(worst, d)
        size += d
        e = mag * (g / (1.0 - g))
        err += e
        tiny += (k + 4.0) * 9.332636185032189e-302
        b = (d + e + (k + 4.0) * 9.332636185032189e-302) * 1.000001
        rel[t] = b / scale[t] if scale[t] > 0 else (0.0 if b == 0.0 else np.inf)
    return worst, size, err, tiny


@numba.njit(inline="always")
def _add(a, c, h, z, i, x, xz):
    """Neumaier's compensated ``a[i] += x`` (the compensation in ``c[i]``), one more term counted in ``h[i]``;
    ``z[i] += xz`` plainly."""
    z[i] += xz
    t = a[i] + x
    if abs(a[i]) >= abs(x):
        c[i] += (a[i] - t) + x
    else:
        c[i] += (x - t) + a[i]
    a[i] = t
    h[i] += 1


@numba.njit(cache=True)
def _push(mode, prm, total, board, B, S, ids, x, z, lo, hi, J, inv_d, o_ids, o_mass, o_z, o_layer, sums, comp,
          hits, zsums, flags):
    """Send the visits of rows lo..hi on: to later layers (o_*), to the end, into the totals.

    The totals are compensated sums (:func:`_add`) in one flat array ``sums`` (:class:`_Totals` lays it
    out: the game's, the seats', the outcomes', the final points'), with ``comp`` and the count of
    branches that added to each (``hits``: a total no branch adds to is exactly 0); the same totals of the
    time-weighted visits ``z`` in ``zsums`` (and their flow on in ``o_z``). Stops early when the
    out buffer is about to fill; returns (row reached, entries written). ``flags[0]`` counts branches
    where someone goes bankrupt, ``flags[1]`` the branches followed."""
    N = prm[_P_N]
    work, out = _scratch(N, J)
    out_next, out_p, out_act, _bank, out_broke, out_aid, out_final = out
    seat0 = 4
    out0 = seat0 + 6 * N
    pmf0 = out0 + (1 << N)
    levels = (sums.size - pmf0) // N
    no = 0
    for r in range(lo, hi):
        if no + J > o_ids.size:
            return r, no
        s = ids[r]
        c = _expand(s, mode, prm, total, board, work, out)
        xr = x[r]
        zr = z[r]
        m = (s // 3) % N
        if s % 3 == 0:
            _add(sums, comp, hits, zsums, _G_TURNS, xr, zr)
            _add(sums, comp, hits, zsums, seat0 + 6 * m + _TURNS, xr, zr)
        for j in range(c):  # transitions as the chain counts them: distinct targets (an outcome is one)
            first = True
            for k in range(j):
                if out_next[k] == out_next[j]:
                    first = False
                    break
            if first:
                sums[_G_TRANSITIONS] += 1
        flags[1] += c
        for j in range(c):
            w = xr * out_p[j] * inv_d
            wz = zr * out_p[j] * inv_d
            if out_act[j] == 1:
                _add(sums, comp, hits, zsums, _G_BETS, w, wz)
                _add(sums, comp, hits, zsums, seat0 + 6 * m + _BETS, w, wz)
            else:
                _add(sums, comp, hits, zsums, _G_THROWS, w, wz)
            if out_broke[j] != 0:
                flags[0] += 1
            for i in range(N):
                if (out_broke[j] >> i) & 1:
                    _add(sums, comp, hits, zsums, seat0 + 6 * i + _BROKE, w, wz)
                if (out_aid[j] >> i) & 1:
                    _add(sums, comp, hits, zsums, seat0 + 6 * i + _AID, w, wz)
                if (out_aid[j] >> (N + i)) & 1:
                    _add(sums, comp, hits, zsums, seat0 + 6 * i + _AIDOK, w, wz)
            t = out_next[j]
            if t < 0:
                _add(sums, comp, hits, zsums, out0 - t, w, wz)
                for i in range(N):
                    _add(sums, comp, hits, zsums, pmf0 + levels * i + out_final[j, i], w, wz)
                    _add(sums, comp, hits, zsums, seat0 + 6 * i + _POINTS, w * out_final[j, i], wz * out_final[j, i])
            else:
                layer = _layer_key(t, prm, B)[0]
                if layer != S:
                    o_ids[no] = t
                    o_mass[no] = w
                    o_z[no] = wz
                    o_layer[no] = layer
                    no += 1
    return hi, no


def _grow(ids, inflow, keys, vals):
    """Twice the room for a layer's states and their hash table."""
    ids = np.concatenate([ids, np.empty(ids.size, np.int64)])
    inflow = np.concatenate([inflow, np.empty(inflow.size)])
    return (ids, inflow, *grow_table(keys, vals))


def _pow2(n: int) -> int:
    return 1 << max(16, int(n - 1).bit_length())


@dataclass
class LayeredSolve:
    """What the layered solve measured: the figures :func:`analyse` takes from a whole chain."""

    mode: int
    states: int
    transitions: int
    layers: int
    largest_layer: int
    outcome: np.ndarray  # by leaders' mask (index 1..2**N-1)
    points_pmf: np.ndarray  # (N, levels + 1): the chance of each final balance
    seat: np.ndarray  # (N, 6): turns, bets, bankrupt, aid, aid ok, final points (levels)
    game: dict[str, float]  # turns, throws, bets
    bankruptcy_reachable: bool
    residual: float  # the largest computed residual of a layer's system
    sweeps: int  # the most Gauss-Seidel sweeps a layer needed
    #: A certified bound on the 1-norm of the true residual of ``x = e_start + Q^T x`` over every state
    #: (:func:`solve_layered`), and its part from the sweeps' own residuals (the rest is rounding).
    residual_l1: float = 0.0
    residual_sweeps: float = 0.0
    #: Per figure (``points_pmf`` and ``seat`` shaped, ``outcome``), the branches that added to it (0: exactly 0).
    hits: dict[str, np.ndarray] = field(default_factory=dict)
    terms: int = 0  # the branch terms summed into the figures
    #: The residual state by state is at most ``relative`` times the visits there, plus underflow allowances
    #: (``residual_tiny`` in all); ``z`` the figures' totals over the time-weighted visits ``z = x + Q^T z``
    #: (as ``hits``, and ``game``), whose residual is at most ``relative_z`` times the visits ``x``.
    relative: float = float("inf")
    residual_tiny: float = 0.0
    relative_z: float = float("inf")
    z: dict[str, np.ndarray] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


class _Pending:
    """Mass waiting for later layers: chunks of (ids, mass, branch terms in the mass, time-weighted mass) per
    layer."""

    def __init__(self) -> None:
        self.chunks: dict[int, list[tuple[np.ndarray, ...]]] = {}
        self.entries = 0

    def add(self, ids: np.ndarray, mass: np.ndarray, layer: np.ndarray, zmass: np.ndarray) -> None:
        if ids.size == 0:
            return
        order = np.argsort(layer, kind="stable")
        ids, mass, layer, zmass = ids[order], mass[order], layer[order], zmass[order]
        cuts = np.flatnonzero(np.diff(layer)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, ids.size], strict=True):
            self.chunks.setdefault(int(layer[lo]), []).append((ids[lo:hi].copy(), mass[lo:hi].copy(),
                                                               np.ones(hi - lo), zmass[lo:hi].copy()))
        self.entries += ids.size

    def pop(self, layer: int) -> tuple[np.ndarray, ...] | None:
        chunks = self.chunks.pop(layer, None)
        if not chunks:
            return None
        got = tuple(np.concatenate([c[i] for c in chunks]) for i in range(4))
        self.entries -= got[0].size
        return got

    def compact(self) -> None:
        """Sum the mass (and the terms) of repeated ids in every pending layer (frees the duplicates)."""
        for layer, chunks in self.chunks.items():
            if len(chunks) < 2:
                continue
            ids, *rest = (np.concatenate([c[i] for c in chunks]) for i in range(4))
            uniq, inv = np.unique(ids, return_inverse=True)
            self.chunks[layer] = [(uniq, *(np.bincount(inv.ravel(), weights=a, minlength=uniq.size) for a in rest))]
        self.entries = sum(c[0].size for chunks in self.chunks.values() for c in chunks)


def bounce_start(model: PuntiModel) -> int:
    """The first square of the bounce zone (G + 1 when a throw past the end never bounces)."""
    r = model.rules
    return r.goal + 1 - r.faces if r.overshoot == "bounce" else r.goal + 1


# hash slots, id, inflow, visits, order, edges; the bounds' terms, time-weighted inflow and visits, and their ratios
_BYTES_PER_LAYER_STATE = 2 * 12 + 8 + 8 + 8 + 8 + 16 + 7 * 8
_BYTES_PER_PENDING = 32  # id, mass, terms, time-weighted mass


def solve_layered(model: PuntiModel, mode: int = MODE_NEVER, *, progress: bool = False, tol: float = 1e-15,
                  max_sweeps: int = 100_000) -> LayeredSolve:
    """Expected visits of every state, layer by layer, and every figure they give (module docstring)."""
    m = model
    N, G = m.players, m.rules.goal
    B = bounce_start(m)
    start = m.start_state()
    S0 = int(_layer_key(start, m.params, B)[0])
    last = N * G
    pending = _Pending()
    pending.add(np.array([start], np.int64), np.array([1.0]), np.array([S0], np.int64), np.array([0.0]))
    acc = _Totals(N, m.levels)
    t0 = time.perf_counter()
    with progress_bar(progress, "solving layer by layer") as bar:
        task = bar.add_task("solving layer by layer", total=last - S0 + 1)
        for S in range(S0, last + 1):
            got = pending.pop(S)
            if got is not None:
                _solve_one_layer(m, mode, B, S, got, pending, acc, tol, max_sweeps)
                bar.update(task, completed=S - S0 + 1, description=f"solving layer by layer: {acc.states:,} states")
            else:
                bar.update(task, completed=S - S0 + 1)
    if pending.entries:
        raise SolverError(f"layered solve: {pending.entries} inflows left beyond the last layer")
    total = acc.sums + acc.comp  # the compensated sums
    game, seat, outcome, pmf = acc.parts(total)
    _g, seat_hits, outcome_hits, pmf_hits = acc.parts(acc.hits)
    return LayeredSolve(
        mode=mode, states=acc.states, transitions=int(acc.sums[_G_TRANSITIONS]), layers=acc.layers,
        largest_layer=acc.largest, outcome=outcome, points_pmf=pmf, seat=seat,
        game={k: float(game[i]) for k, i in (("turns", _G_TURNS), ("throws", _G_THROWS), ("bets", _G_BETS))},
        bankruptcy_reachable=bool(acc.flags[0] > 0), residual=acc.residual, sweeps=acc.sweeps,
        residual_l1=(acc.r_sweeps + acc.r_rounding + acc.r_tiny) * SLACK, residual_sweeps=acc.r_sweeps * SLACK,
        hits={"seat": seat_hits, "outcome": outcome_hits, "points_pmf": pmf_hits}, terms=int(acc.flags[1]),
        relative=acc.eps, residual_tiny=acc.r_tiny * SLACK, relative_z=acc.kappa,
        z=dict(zip(("game", "seat", "outcome", "points_pmf"), acc.parts(acc.zsums), strict=True)),
        timings={"layers": time.perf_counter() - t0},
    )


class _Totals:
    """What the layers add up as they are solved, and the out buffer of :func:`_push`."""

    def __init__(self, N: int, levels: int) -> None:
        self.budget = int(available_memory() * 0.8)  # bytes
        # the game's totals (4), the seats' (N x 6), the outcomes' (2**N), the final points' (N x (levels + 1))
        self.N, self.levels = N, levels
        size = 4 + 6 * N + 2**N + N * (levels + 1)
        self.sums, self.comp, self.hits = np.zeros(size), np.zeros(size), np.zeros(size, np.int64)
        self.zsums = np.zeros(size)
        self.flags = np.zeros(2, np.int64)
        self.states = self.largest = self.layers = self.sweeps = 0
        self.residual = self.r_sweeps = self.r_rounding = self.r_tiny = self.kappa = self.eps = 0.0
        cap = 1 << 22
        self.o_ids = np.empty(cap, np.int64)
        self.o_mass = np.empty(cap)
        self.o_z = np.empty(cap)
        self.o_layer = np.empty(cap, np.int64)

    def parts(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A flat array of totals (``sums``, ``hits``) as (game, seat (N, 6), outcome, points (N, levels + 1))."""
        N = self.N
        o0, p0 = 4 + 6 * N, 4 + 6 * N + 2**N
        return flat[:4], flat[4:o0].reshape(N, 6), flat[o0:p0], flat[p0:].reshape(N, self.levels + 1)


def _gather_layer(in_ids: np.ndarray, in_mass: np.ndarray, in_cnt: np.ndarray, in_z: np.ndarray, J: int):
    """Number a layer's incoming states (their inflow summed): (ids, inflow, branch terms in each inflow,
    time-weighted inflow, keys, vals, n)."""
    # A state gets its inflow from several states before it: size for a quarter of the entries.
    cap = _pow2(in_ids.size // 4 + J + 1024)
    keys, vals = new_table(2 * cap)
    ids = np.empty(cap, np.int64)
    inflow = np.empty(cap)
    cnt = np.empty(cap)
    zin = np.empty(cap)
    n = k = 0
    while True:
        n, k = _gather(keys, vals, in_ids, in_mass, in_cnt, in_z, ids, inflow, cnt, zin, n, k)
        if k >= in_ids.size:
            return ids, inflow, cnt[:n], zin[:n], keys, vals, n
        cnt = np.concatenate([cnt, np.empty(cnt.size)])
        zin = np.concatenate([zin, np.empty(zin.size)])
        ids, inflow, keys, vals = _grow(ids, inflow, keys, vals)


def _close_layer(m: PuntiModel, mode: int, B: int, S: int, ids, inflow, keys, vals, n: int):
    """Add the states layer S reaches within itself: (ids, inflow, n, in-layer edges src, dst, numerator)."""
    J = m.width
    e_src = np.empty(1 << 12, np.int32)
    e_dst = np.empty(1 << 12, np.int32)
    e_p = np.empty(1 << 12, np.int64)
    head = ne = 0
    while True:
        n, head, ne = _close(mode, *m.kernel_args(), B, S, keys, vals, ids, inflow, n, head, e_src, e_dst, e_p, ne,
                             J)
        if head >= n:
            return ids, inflow, n, e_src[:ne], e_dst[:ne], e_p[:ne]
        if n + J >= ids.size or n + J >= keys.size // 2:
            ids, inflow, keys, vals = _grow(ids, inflow, keys, vals)
        if ne + J >= e_src.size:
            e_src, e_dst, e_p = (np.concatenate([a, np.empty(a.size, a.dtype)]) for a in (e_src, e_dst, e_p))


def _solve_one_layer(m: PuntiModel, mode: int, B: int, S: int, got, pending: _Pending, acc: _Totals, tol: float,
                     max_sweeps: int) -> None:
    """Gather, close, solve and push on layer S (steps 1 to 4 of the module docstring), with the bounds of
    :func:`layered_bounds`: the visits' residual, absolute and relative to the visits, and the time-weighted
    visits ``z = x + Q^T z`` solved beside them."""
    budget = acc.budget
    in_ids, in_mass, in_cnt, in_z = got
    ids, inflow, cnt, zin, keys, vals, n0 = _gather_layer(in_ids, in_mass, in_cnt, in_z, m.width)
    del in_ids, in_mass, in_cnt, in_z, got
    ids, inflow, n, e_src, e_dst, e_p = _close_layer(m, mode, B, S, ids, inflow, keys, vals, n0)
    del keys, vals
    used = n * _BYTES_PER_LAYER_STATE + pending.entries * _BYTES_PER_PENDING
    if used > budget:
        raise TooLargeError(
            f"{m.rules.name} with {m.players} players: layer {S} holds {n:,} states besides "
            f"{pending.entries:,} pending inflows (about {gib(used)}); "
            f"{gib(available_memory())} available")
    # Each gathered inflow is a sum of ``cnt`` branch terms of three roundings each (visits times pnum times
    # 1 / denom): off by gamma_(2 (cnt + 4)) of itself from the exact inflow of the visits before, and by
    # an underflow allowance a term. The states the layer adds within itself have no inflow.
    g_in = np.zeros(n)
    g_in[:n0] = gamma(cnt) * inflow[:n0] * SLACK
    z_in = np.zeros(n)
    z_in[:n0] = zin
    inv_d = 1.0 / m.denominator
    x, z, xr, zr, sweeps = _solve_layer(ids, inflow, z_in, n, e_src, e_dst, e_p, inv_d, m.params, B, tol,
                                        max_sweeps, S)
    del e_src, e_dst, e_p, inflow
    worst, size, err, tiny, rel = xr
    acc.residual = max(acc.residual, worst)
    acc.r_sweeps += size
    acc.r_rounding += err + float(g_in.sum()) * SLACK
    acc.r_tiny += tiny + float(cnt.sum()) * TINY
    # relative to the visits: the in-layer residual's and the inflow's rounding at every state
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(g_in > 0, g_in / x, 0.0)  # inf where the visits are 0 (underflow) and the bound is not
    acc.eps = max(acc.eps, float((rel + ratio).max(initial=0.0)) * SLACK)
    # z's residual over x: its in-layer system's, its inflow's rounding, and the rounding of x + its inflow
    g_z = np.zeros(n)
    g_z[:n0] = gamma(cnt) * zin
    with np.errstate(divide="ignore", invalid="ignore"):
        zb = g_z + 2 * U * (x + z_in)
        ratio = np.where(zb > 0, zb / x, 0.0)
    acc.kappa = max(acc.kappa, float((zr + ratio).max(initial=0.0)) * SLACK)
    acc.sweeps = max(acc.sweeps, sweeps)
    lo = 0
    while lo < n:
        lo, no = _push(mode, *m.kernel_args(), B, S, ids, x, z, lo, n, m.width, inv_d, acc.o_ids, acc.o_mass,
                       acc.o_z, acc.o_layer, acc.sums, acc.comp, acc.hits, acc.zsums, acc.flags)
        pending.add(acc.o_ids[:no], acc.o_mass[:no], acc.o_layer[:no], acc.o_z[:no])
    if pending.entries * _BYTES_PER_PENDING > budget // 2:
        pending.compact()
    acc.states += n
    acc.largest = max(acc.largest, n)
    acc.layers += 1


def _solve_layer(ids, inflow, zin, n, e_src, e_dst, e_p, inv_d, prm, B, tol, max_sweeps, S):
    """The visits ``x`` of one layer's states and the time-weighted visits ``z = (x + zin) + Q_in^T z``: (x, z,
    x's residual as :func:`_residual` gives it with its bound per state over ``x``, z's bound per state over
    ``x``, most sweeps of a component)."""
    if e_src.size == 0:
        x = inflow[:n].copy()
        return x, x + zin, (0.0, 0.0, 0.0, 0.0, np.zeros(n)), np.zeros(n), 1
    # Only the states an in-layer transition touches need solving; the others keep their inflow.
    mark = np.zeros(n, bool)
    mark[e_src] = True
    mark[e_dst] = True
    touched = np.flatnonzero(mark)
    local = np.full(n, -1, np.int64)
    local[touched] = np.arange(touched.size)
    k = touched.size
    src = local[e_src]
    dst = local[e_dst]
    p = e_p * inv_d
    by_src = np.argsort(src, kind="stable")
    out_ptr = np.zeros(k + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=k), out=out_ptr[1:])
    comp = _tarjan(k, out_ptr, dst[by_src])
    okeys = np.empty(k, np.int64)
    _order_keys(ids[touched], k, prm, B, okeys)
    order = np.lexsort((okeys, -comp)).astype(np.int64)
    by = np.argsort(dst, kind="stable")
    src, dst, p, pnum = src[by], dst[by], p[by], e_p[by]
    indptr = np.zeros(k + 1, np.int64)
    np.cumsum(np.bincount(dst, minlength=k), out=indptr[1:])
    diag = np.zeros(k)
    loop = src == dst
    np.add.at(diag, dst[loop], p[loop])
    x = inflow[:n].copy()
    bx = x[touched]
    xk = np.zeros(k)
    sweeps = _gs_components(order, comp, indptr, src, p, diag, bx, xk, tol, max_sweeps)
    if sweeps < 0:
        raise SolverError(f"layer {S}: Gauss-Seidel did not reach {tol} in {max_sweeps} sweeps of a cycle")
    x[touched] = xk
    relk = np.zeros(k)
    x_res = _residual(k, indptr, src, pnum, inv_d, bx, xk, relk, xk)
    rel = np.zeros(n)
    rel[touched] = relk
    z = x + zin  # z's source is x
    bz = z[touched]
    zk = np.zeros(k)
    # z only bounds the error: a loose solve does (its residual enters as 1 / (1 - kappa))
    z_sweeps = _gs_components(order, comp, indptr, src, p, diag, bz, zk, max(tol, 1e-9), max_sweeps)
    if z_sweeps < 0:
        raise SolverError(f"layer {S}: Gauss-Seidel did not reach {tol} in {max_sweeps} sweeps of a cycle")
    z[touched] = zk
    zrel = np.zeros(k)
    _residual(k, indptr, src, pnum, inv_d, bz, zk, zrel, xk)
    rel_z = np.zeros(n)
    rel_z[touched] = zrel
    return x, z, (*x_res, rel), rel_z, max(sweeps, z_sweeps)


def race_chain(model: PuntiModel):
    """The race alone: the same board and players with no money effects and no bets (squares only).

    Its states are the squares of the players and the seat to move; when no bankruptcy is
    reachable its length distribution is the points game's (the balances never change a move).
    """
    rules = dataclasses.replace(model.rules, squares={})
    return PuntiModel(rules, model.players).build(MODE_NEVER).chain


def layered_results(model: PuntiModel, ls: LayeredSolve, *, bet: str, tail: float = 1e-10,
                    timer: dict[str, float] | None = None, policy: dict | None = None,
                    precision: float | None = None):
    """:class:`~markov_oca.punti.results.PuntiResults` from a layered solve, with the certified bounds of
    :func:`layered_bounds` (checked against ``precision`` by the caller)."""
    timer = {} if timer is None else timer
    timer.update(ls.timings)
    m = model
    rules, N = m.rules, m.players
    masks = m.outcome_masks()
    starts = rules.initial_balances(N)
    seats = []
    for i in range(N):
        win, tie, share = win_tie_share(masks, ls.outcome[masks], i)
        pmf = {int(v) * m.unit: float(q) for v, q in enumerate(ls.points_pmf[i]) if q > 0}
        s = ls.seat[i]
        seats.append(PuntiSeat(
            seat=i + 1, start_points=starts[i], win=win, tie=tie, win_share=share, bankrupt=float(s[_BROKE]),
            points=float(s[_POINTS]) * m.unit, points_pmf=pmf, bets=float(s[_BETS]), aid=float(s[_AID]),
            aid_success=float(s[_AIDOK]), turns=float(s[_TURNS]),
        ))
    solver = [{"method": f"layered forward Gauss-Seidel ({ls.layers} layers, largest {ls.largest_layer:,} states; "
                         f"cycles swept at most {ls.sweeps} times)",
               "residual": ls.residual, "iterations": ls.sweeps, "residual_bound": ls.residual_l1}]
    notes = [f"solved layer by layer (the race's progress); the chain ({ls.states:,} states) is never held whole"]
    res = PuntiResults(
        **game_fields(m, bet), states=ls.states + len(masks), transitions=ls.transitions + len(masks),
        outcomes={m.outcome_name(k): float(ls.outcome[k]) for k in masks}, seats=seats,
        expected=dict(ls.game), length=None, policy=policy, solver=solver, timings=timer,
        method="layered", notes=notes, precision=precision,
    )
    res.bounds = layered_bounds(m, ls, res)
    if ls.bankruptcy_reachable:
        notes.append("length distribution not computed: bankruptcy is reachable, so the length depends on the "
                     "balances, and a layered solve keeps visits, not time (the expected length is given)")
    else:
        t2 = time.perf_counter()
        race = race_chain(m)
        race_turns = race.expected({"turns": race.state_rewards["turns"]})["turns"][0]
        if not abs(race_turns - ls.game["turns"]) <= 1e-8 * max(1.0, race_turns):
            raise SolverError(f"the race alone gives {race_turns!r} expected turns, the layered solve "
                              f"{ls.game['turns']!r}: they should agree when nobody can go bankrupt")
        dist = race.length_distribution(tail=tail)
        res.length = summarise_length(dist, ls.game["turns"])
        certify_length(res.length, dist, res.bounds["expected"]["turns"], (0.0, 0.0))
        res.bounds["length"] = res.length.bounds
        timer["length"] = time.perf_counter() - t2
        notes.append(f"length distribution from the race alone ({race.n:,} states): no bankruptcy is "
                     "reachable, so the balances never change a move")
    return res


def layered_bounds(m: PuntiModel, ls: LayeredSolve, res: PuntiResults) -> dict:
    """The certified bounds of a layered solve's figures in their tree (``PuntiResults.to_dict``); the chances
    are moved into [0, 1] within their bounds.

    The visits ``x`` solved layer by layer have a true residual ``r = e_start + Q^T x - x`` whose 1-norm
    :func:`solve_layered` bounds (``ls.residual_l1``: each layer's system's residual with its rounding, and
    the rounding of each gathered inflow), and a figure ``x . g`` is off by ``sum |r_s| (N g)_s``, ``N g``
    what is still to come of it from state ``s``. That is at most 1 for a chance (an outcome, a final
    balance, a bankruptcy, mutual aid asked or got: each happens once at most); at most ``G`` (the end
    square) for a seat's turns, since a seat's throws to come are at most its throws to arrive, fewer than
    the bounce zone's first square ``B`` to reach it and ``faces`` expected in it (every throw from it
    arrives with chance ``1 / faces``), and a turn holds one throw; ``2 G`` for its bets (two at most a
    turn); ``N`` times those for the game; the points in play for the final points. Each figure is also
    off by the rounding of its compensated sum (Neumaier: ``2 u`` of it and ``(2 u + 4 n u^2)`` of its
    terms' magnitudes, nonnegative, each off by a few roundings). A figure no branch adds to is 0 exactly:
    every branch of every reachable state is followed, whatever its mass.

    That bound does not shrink with a figure, and a rare bankruptcy has a chance below 1e-10. So each
    figure also gets a bound relative to it, and keeps the smaller: the residual is at most ``eps`` times
    the visits state by state (``ls.relative``: the layers' systems are swept until every change is below
    1e-15 of the value, and the inflows' rounding is relative), plus underflow allowances ``a``; so
    ``x . g`` is off by at most ``eps x^T N g + |a| (N g) = eps z . g + ...``, with ``z = N^T x`` the
    time-weighted visits (each visit counted once for every step still to come), solved beside ``x`` in
    the same layers. The computed ``z'`` has a residual at most ``kappa`` times ``x`` state by state
    (``ls.relative_z``), so ``z' / (1 - kappa)`` is a supersolution, ``(I - Q^T) z' / (1 - kappa) >= x``,
    and bounds ``z = N^T x`` from above (``N`` is nonnegative); ``z . g`` is then at most the computed
    sum (plain, ``gamma_n`` of it) over ``1 - kappa``. ``z . g / x . g`` is the expected number of steps
    before what ``g`` counts, so this bound is a few hundred roundings of the figure.
    """
    N, G = m.players, m.rules.goal
    R = ls.residual_l1
    n = ls.terms + ls.states
    rel = (4 * U + 4 * n * U * U + float(gamma(1))) * SLACK

    eps, kappa, zrel = ls.relative, ls.relative_z, 1.0 + float(gamma(n))

    def bound(x: float, hits: int, to_come: float, z: float) -> float:
        if not hits:
            if x != 0.0:
                raise SolverError(f"layered solve: a figure no branch adds to is {x!r}, not 0")
            return 0.0
        solve = R * to_come
        if np.isfinite(eps) and kappa < 0.5:
            solve = min(solve, (eps * z * zrel / (1.0 - kappa) + ls.residual_tiny * to_come) * SLACK)
        return float((solve + rel * abs(x) + n * TINY) * SLACK)

    masks = m.outcome_masks()
    oh, zs = ls.hits["outcome"], ls.z
    ob = np.zeros(2**N)
    for k in masks:
        ob[k] = bound(float(ls.outcome[k]), int(oh[k]), 1.0, float(zs["outcome"][k]))
    sh, zseat = ls.hits["seat"], ls.z["seat"]
    bets_hit = int(sh[:, _BETS].sum())
    out: dict = {"outcomes": {m.outcome_name(k): float(ob[k]) for k in masks},
                 "expected": {"turns": bound(res.expected["turns"], 1, N * G, zs["game"][_G_TURNS]),
                              "throws": bound(res.expected["throws"], 1, N * G, zs["game"][_G_THROWS]),
                              "bets": bound(res.expected["bets"], bets_hit, 2 * N * G, zs["game"][_G_BETS])},
                 "seats": [], "length": None}
    sums = float(gamma(2**N))
    for i, s in enumerate(res.seats):
        win_b, tie_b, share_b = win_tie_share(masks, ob[masks], i)
        sb = {"win": (win_b + sums * s.win) * SLACK, "tie": (tie_b + sums * s.tie) * SLACK,
              "win_share": (share_b + sums * s.win_share) * SLACK,
              "bankrupt": bound(s.bankrupt, int(sh[i, _BROKE]), 1.0, zseat[i, _BROKE]),
              "points": bound(s.points, int(sh[i, _POINTS]), res.total_points, zseat[i, _POINTS] * m.unit),
              "points_pmf": {str(v): bound(q, int(ls.hits["points_pmf"][i, v // m.unit]), 1.0,
                                           zs["points_pmf"][i, v // m.unit]) for v, q in sorted(s.points_pmf.items())},
              "bets": bound(s.bets, int(sh[i, _BETS]), 2 * G, zseat[i, _BETS]),
              "aid": bound(s.aid, int(sh[i, _AID]), 1.0, zseat[i, _AID]),
              "aid_success": bound(s.aid_success, int(sh[i, _AIDOK]), 1.0, zseat[i, _AIDOK]),
              "turns": bound(s.turns, int(sh[i, _TURNS]), G, zseat[i, _TURNS])}
        out["seats"].append(sb)
        for k in ("win", "tie", "win_share", "bankrupt", "aid", "aid_success"):
            setattr(s, k, clip_probability(getattr(s, k), sb[k]))
    return out
