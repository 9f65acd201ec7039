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
   geometrically), and its true residual is measured;
4. every state is expanded once more: its visits flow into later layers (kept
   as pending (id, mass) pairs until their turn), into the end (outcome, final
   balances), and into every expected total (turns, throws, bets, bankruptcy,
   mutual aid) -- the same figures :func:`~markov_oca.punti.analysis.analyse`
   takes from the whole chain.

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

from ..analysis.results import length_summary
from ..core.errors import SolverError, TooLargeError
from ..core.memory import available_memory, gib
from ..core.progress import progress_bar
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
def _gather(keys, vals, in_ids, in_mass, ids, inflow, n, k0):
    """Number the incoming states from entry k0 on (summing the mass of repeats); stops when the
    table or the arrays are about to fill. Returns (count, entries done)."""
    limit = min(keys.size // 2, ids.size)
    for k in range(k0, in_ids.size):
        if n + 1 >= limit:
            return n, k
        idx = _insert(keys, vals, in_ids[k], n)
        if idx == n:
            ids[n] = in_ids[k]
            inflow[n] = 0.0
            n += 1
        inflow[idx] += in_mass[k]
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
    alone is computed once from its final predecessors; a cycle is swept (Gauss-Seidel) until its
    largest change is below ``tol``. Returns the most sweeps a component needed (-1: not converged)."""
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
                d = abs(new - x[t])
                if d > worst:
                    worst = d
                x[t] = new
            sweeps += 1
            if end - k == 1 and diag[order[k]] == 0.0:
                break
            if worst <= tol * max(1.0, x[order[k]]):
                break
            if sweeps >= max_sweeps:
                return -1
        if sweeps > most:
            most = sweeps
        k = end
    return most


@numba.njit(cache=True)
def _residual(n, indptr, src, p, inflow, x):
    worst = 0.0
    for t in range(n):
        acc = inflow[t]
        for e in range(indptr[t], indptr[t + 1]):
            acc += p[e] * x[src[e]]
        d = abs(acc - x[t])
        if d > worst:
            worst = d
    return worst


@numba.njit(cache=True)
def _push(mode, prm, total, board, B, S, ids, x, lo, hi, J, inv_d, o_ids, o_mass, o_layer, game, seat, outcome, pmf,
          flags):
    """Send the visits of rows lo..hi on: to later layers (o_*), to the end, into the totals.

    Stops early when the out buffer is about to fill; returns (row reached, entries written).
    ``flags[0]`` counts branches where someone goes bankrupt."""
    N = prm[_P_N]
    work, out = _scratch(N, J)
    out_next, out_p, out_act, _bank, out_broke, out_aid, out_final = out
    no = 0
    for r in range(lo, hi):
        if no + J > o_ids.size:
            return r, no
        s = ids[r]
        c = _expand(s, mode, prm, total, board, work, out)
        xr = x[r]
        m = (s // 3) % N
        if s % 3 == 0:
            game[_G_TURNS] += xr
            seat[m, _TURNS] += xr
        for j in range(c):  # transitions as the chain counts them: distinct targets (an outcome is one)
            first = True
            for k in range(j):
                if out_next[k] == out_next[j]:
                    first = False
                    break
            if first:
                game[_G_TRANSITIONS] += 1
        for j in range(c):
            w = xr * out_p[j] * inv_d
            if out_act[j] == 1:
                game[_G_BETS] += w
                seat[m, _BETS] += w
            else:
                game[_G_THROWS] += w
            if out_broke[j] != 0:
                flags[0] += 1
            for i in range(N):
                if (out_broke[j] >> i) & 1:
                    seat[i, _BROKE] += w
                if (out_aid[j] >> i) & 1:
                    seat[i, _AID] += w
                if (out_aid[j] >> (N + i)) & 1:
                    seat[i, _AIDOK] += w
            t = out_next[j]
            if t < 0:
                outcome[-t] += w
                for i in range(N):
                    pmf[i, out_final[j, i]] += w
                    seat[i, _POINTS] += w * out_final[j, i]
            else:
                layer = _layer_key(t, prm, B)[0]
                if layer != S:
                    o_ids[no] = t
                    o_mass[no] = w
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
    residual: float  # the largest true residual of a layer's system
    sweeps: int  # the most Gauss-Seidel sweeps a layer needed
    timings: dict[str, float] = field(default_factory=dict)


class _Pending:
    """Mass waiting for later layers: chunks of (ids, mass) per layer."""

    def __init__(self) -> None:
        self.chunks: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.entries = 0

    def add(self, ids: np.ndarray, mass: np.ndarray, layer: np.ndarray) -> None:
        if ids.size == 0:
            return
        order = np.argsort(layer, kind="stable")
        ids, mass, layer = ids[order], mass[order], layer[order]
        cuts = np.flatnonzero(np.diff(layer)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, ids.size], strict=True):
            self.chunks.setdefault(int(layer[lo]), []).append((ids[lo:hi].copy(), mass[lo:hi].copy()))
        self.entries += ids.size

    def pop(self, layer: int) -> tuple[np.ndarray, np.ndarray] | None:
        chunks = self.chunks.pop(layer, None)
        if not chunks:
            return None
        ids = np.concatenate([c[0] for c in chunks])
        mass = np.concatenate([c[1] for c in chunks])
        self.entries -= ids.size
        return ids, mass

    def compact(self) -> None:
        """Sum the mass of repeated ids in every pending layer (frees the duplicates)."""
        for layer, chunks in self.chunks.items():
            if len(chunks) < 2:
                continue
            ids = np.concatenate([c[0] for c in chunks])
            mass = np.concatenate([c[1] for c in chunks])
            uniq, inv = np.unique(ids, return_inverse=True)
            self.chunks[layer] = [(uniq, np.bincount(inv.ravel(), weights=mass, minlength=uniq.size))]
        self.entries = sum(c[0].size for chunks in self.chunks.values() for c in chunks)


def bounce_start(model: PuntiModel) -> int:
    """The first square of the bounce zone (G + 1 when a throw past the end never bounces)."""
    r = model.rules
    return r.goal + 1 - r.faces if r.overshoot == "bounce" else r.goal + 1


_BYTES_PER_LAYER_STATE = 2 * 12 + 8 + 8 + 8 + 8 + 16  # hash slots, id, inflow, visits, order, edges
_BYTES_PER_PENDING = 16


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
    pending.add(np.array([start], np.int64), np.array([1.0]), np.array([S0], np.int64))
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
    return LayeredSolve(
        mode=mode, states=acc.states, transitions=int(acc.game[_G_TRANSITIONS]), layers=acc.layers,
        largest_layer=acc.largest, outcome=acc.outcome, points_pmf=acc.pmf, seat=acc.seat,
        game={k: float(acc.game[i]) for k, i in (("turns", _G_TURNS), ("throws", _G_THROWS), ("bets", _G_BETS))},
        bankruptcy_reachable=bool(acc.flags[0] > 0), residual=acc.residual, sweeps=acc.sweeps,
        timings={"layers": time.perf_counter() - t0},
    )


class _Totals:
    """What the layers add up as they are solved, and the out buffer of :func:`_push`."""

    def __init__(self, N: int, levels: int) -> None:
        self.budget = int(available_memory() * 0.8)  # bytes
        self.game = np.zeros(4)
        self.seat = np.zeros((N, 6))
        self.outcome = np.zeros(2**N)
        self.pmf = np.zeros((N, levels + 1))
        self.flags = np.zeros(1, np.int64)
        self.states = self.largest = self.layers = self.sweeps = 0
        self.residual = 0.0
        cap = 1 << 22
        self.o_ids = np.empty(cap, np.int64)
        self.o_mass = np.empty(cap)
        self.o_layer = np.empty(cap, np.int64)


def _gather_layer(in_ids: np.ndarray, in_mass: np.ndarray, J: int):
    """Number a layer's incoming states (their inflow summed): (ids, inflow, keys, vals, n)."""
    # A state gets its inflow from several states before it: size for a quarter of the entries.
    cap = _pow2(in_ids.size // 4 + J + 1024)
    keys, vals = new_table(2 * cap)
    ids = np.empty(cap, np.int64)
    inflow = np.empty(cap)
    n = k = 0
    while True:
        n, k = _gather(keys, vals, in_ids, in_mass, ids, inflow, n, k)
        if k >= in_ids.size:
            return ids, inflow, keys, vals, n
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
    """Gather, close, solve and push on layer S (steps 1 to 4 of the module docstring)."""
    budget = acc.budget
    in_ids, in_mass = got
    ids, inflow, keys, vals, n = _gather_layer(in_ids, in_mass, m.width)
    del in_ids, in_mass, got
    ids, inflow, n, e_src, e_dst, e_p = _close_layer(m, mode, B, S, ids, inflow, keys, vals, n)
    del keys, vals
    used = n * _BYTES_PER_LAYER_STATE + pending.entries * _BYTES_PER_PENDING
    if used > budget:
        raise TooLargeError(
            f"{m.rules.name} with {m.players} players: layer {S} holds {n:,} states besides "
            f"{pending.entries:,} pending inflows (about {gib(used)}); "
            f"{gib(available_memory())} available")
    inv_d = 1.0 / m.denominator
    x, res, sweeps = _solve_layer(ids, inflow, n, e_src, e_dst, e_p, inv_d, m.params, B, tol, max_sweeps, S)
    del e_src, e_dst, e_p, inflow
    acc.residual = max(acc.residual, res)
    acc.sweeps = max(acc.sweeps, sweeps)
    lo = 0
    while lo < n:
        lo, no = _push(mode, *m.kernel_args(), B, S, ids, x, lo, n, m.width, inv_d, acc.o_ids, acc.o_mass,
                       acc.o_layer, acc.game, acc.seat, acc.outcome, acc.pmf, acc.flags)
        pending.add(acc.o_ids[:no], acc.o_mass[:no], acc.o_layer[:no])
    if pending.entries * _BYTES_PER_PENDING > budget // 2:
        pending.compact()
    acc.states += n
    acc.largest = max(acc.largest, n)
    acc.layers += 1


def _solve_layer(ids, inflow, n, e_src, e_dst, e_p, inv_d, prm, B, tol, max_sweeps, S):
    """The visits of one layer's states: (x, true residual, most sweeps of a component)."""
    if e_src.size == 0:
        return inflow[:n].copy(), 0.0, 1
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
    src, dst, p = src[by], dst[by], p[by]
    indptr = np.zeros(k + 1, np.int64)
    np.cumsum(np.bincount(dst, minlength=k), out=indptr[1:])
    diag = np.zeros(k)
    loop = src == dst
    np.add.at(diag, dst[loop], p[loop])
    b = inflow[touched]
    xk = np.zeros(k)
    sweeps = _gs_components(order, comp, indptr, src, p, diag, b, xk, tol, max_sweeps)
    if sweeps < 0:
        raise SolverError(f"layer {S}: Gauss-Seidel did not reach {tol} in {max_sweeps} sweeps of a cycle")
    x = inflow[:n].copy()
    x[touched] = xk
    return x, float(_residual(k, indptr, src, p, b, xk)), sweeps


def race_chain(model: PuntiModel):
    """The race alone: the same board and players with no money effects and no bets (squares only).

    Its states are the squares of the players and the seat to move; when no bankruptcy is
    reachable its length distribution is the points game's (the balances never change a move).
    """
    rules = dataclasses.replace(model.rules, squares={})
    return PuntiModel(rules, model.players).build(MODE_NEVER).chain


def layered_results(model: PuntiModel, ls: LayeredSolve, *, bet: str, tail: float = 1e-10,
                    timer: dict[str, float] | None = None, policy: dict | None = None):
    """:class:`~markov_oca.punti.results.PuntiResults` from a layered solve."""
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
               "residual": ls.residual, "iterations": ls.sweeps}]
    length = None
    notes = [f"solved layer by layer (the race's progress); the chain ({ls.states:,} states) is never held whole"]
    if ls.bankruptcy_reachable:
        notes.append("length distribution not computed: bankruptcy is reachable, so the length depends on the "
                     "balances, and a layered solve keeps visits, not time (the expected length is exact)")
    else:
        t2 = time.perf_counter()
        race = race_chain(m)
        race_turns = race.expected({"turns": race.state_rewards["turns"]})["turns"][0]
        if not abs(race_turns - ls.game["turns"]) <= 1e-8 * max(1.0, race_turns):
            raise SolverError(f"the race alone gives {race_turns!r} expected turns, the layered solve "
                              f"{ls.game['turns']!r}: they should agree when nobody can go bankrupt")
        length = length_summary(race, ls.game["turns"], tail)
        timer["length"] = time.perf_counter() - t2
        notes.append(f"length distribution from the race alone ({race.n:,} states): no bankruptcy is "
                     "reachable, so the balances never change a move")
    lost = 1.0 - float(ls.outcome.sum())
    return PuntiResults(
        **game_fields(m, bet), states=ls.states + len(masks), transitions=ls.transitions + len(masks),
        outcomes={m.outcome_name(k): float(ls.outcome[k]) for k in masks}, seats=seats,
        expected=dict(ls.game), length=length, policy=policy, solver=solver, timings=timer,
        method="layered", notes=[*notes, f"probability not accounted for: {lost:.1e}"],
    )
