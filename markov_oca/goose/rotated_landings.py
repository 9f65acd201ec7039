"""The chance that each seat ever lands on a square, on the chain seen from the mover.

For a square ``q`` and a rotated state ``x``, let ``h[x, q, k]`` be the chance that the
player ``k`` seats after the mover in ``x`` ever lands on ``q`` from there. A throw of the
mover that lands on ``q`` gives 1 to ``k = 0`` (it stops that column); every other branch
``x -> t`` with seat shift ``d`` carries ``h[t, q, (k - d) mod N]`` (the player ``k`` seats
after this mover is ``k - d`` seats after the next one); an outcome, a deadlocked state and
a state that cannot end give 0, as the joint chain's event solve does
(:mod:`markov_oca.hitting`). The wanted chance of seat ``a`` is ``h[start, q, a]`` (seat 1
moves first). Squares are independent systems of ``N`` columns; all of them are solved
together, a block of ``N`` columns per square, contiguous per state.

The method: Gauss-Seidel sweeps over the solved states in the chain's sweep order (decreasing
progress in buckets of 6 squares, then decreasing id: see :func:`~markov_oca.goose.rotated.build_rotated`),
so a state's successors are mostly updated before it, and the states sharing the players after
the mover, whose successors are the same few rows, come one after another (each row a sweep reads is
then mostly read from cache). The squares go in blocks of :data:`NQ`, a block a core (its own system:
no shared writes), and each state prefetches the rows :data:`AHEAD` states on
(:mod:`markov_oca.prefetch`). The changes shrink by a steady factor per column (the long games: a
player waiting in the prison while another bounces about the end, dies and comes round again), and
every ``period`` sweeps the rest of that geometric series is added where the last two factors agree.
The columns are solved in batches that fit :data:`MAX_BYTES`. A sweep's largest change bounds its
residual; the true residual ``|b + Q_E h - h|`` is computed at the end.

Measured on oca-moderna (15 special squares), quiet unless said: 2 players, 2,965 states: 77 sweeps;
3 players, 156,631 states, 45 columns: 264 sweeps, 7.7 s (the race order, exact among equal sums:
177 sweeps but 2.1 times slower each, as its reads jump about); 4 players, 8,105,953 states, 60
columns, 2 blocks of 8 squares: 266 sweeps, 2.1-2.4 s each (14.2 s each in the race order without
prefetching: about ten hours in all), 566 s, 6.7 GiB with the renumbered rows (docs/scale.md).
"""

from __future__ import annotations

import time

import numba
import numpy as np

from ..core.errors import SolverError
from ..core.prefetch import prefetch
from ..core.progress import progress_bar
from .rules import special_squares

THREADS_MAX = 2  # blocks of squares are split over this many cores
NQ = 8  # squares per block: a state's row of a block is N * NQ float64 (256 bytes at four players)
BYTES_PER_ENTRY = 12  # a float64 value and a float32 change per state and column
MAX_BYTES = 8 * 2**30  # the columns solved at once hold at most this much (more squares: batches)
AHEAD = 16  # the sweep prefetches the target rows of the state this many rows ahead

# ----------------------------------------------------------------------------- kernels


@numba.njit(cache=True, nogil=True)
def _sweep(nxt, pnum, shift, throw, key_of, mask, inv_denom, N, q0, h, delta, most, update):
    """One Gauss-Seidel sweep over the rows in order of one block: the squares ``q0 : q0 + NQ`` of the batch
    (``h``: ``(rows + 1, N NQ)``, column ``k NQ + i`` for square ``q0 + i`` and the player ``k`` seats after the
    mover; the last row, where every branch into a row not solved points, stays zero). The change of each
    entry goes to ``delta``, its largest per column to ``most``. With ``update`` false, ``h`` is left as it is
    and ``most`` gets the true residual ``|b + Q_E h - h|`` per column instead.

    A branch ``x -> t`` with seat shift ``d`` adds ``p h[t, (k - d) mod N]`` to column ``k`` of ``x``; a throw of
    the mover landing on square ``i`` puts ``p`` instead of ``p h[t, ...]`` into column ``(i, 0)``."""
    n = nxt.shape[0]
    C = N * NQ
    J = nxt.shape[1]
    W = mask.shape[1]
    acc = np.empty(C)
    for c in range(C):
        most[c] = 0.0
    for s in range(n):
        if s + AHEAD < n:
            # the rows this sweep will read AHEAD states on: their lines arrive while this state is summed
            for j in range(J):
                t = nxt[s + AHEAD, j]
                if t < 0:
                    break
                for b in range(0, C, 8):
                    prefetch(h, np.uint64(t) * np.uint64(C) + np.uint64(b))
        for c in range(C):
            acc[c] = 0.0
        for j in range(J):
            t = nxt[s, j]
            if t < 0:
                break
            p = pnum[s, j] * inv_denom
            d = shift[s, j]
            row = h[t]
            k0 = N - d  # the column of the next mover's row that is column 0 here
            if k0 >= N:
                k0 -= N
            kk = k0
            for k in range(N):
                o = k * NQ
                oo = kk * NQ
                for i in range(NQ):
                    acc[o + i] += p * row[oo + i]
                kk += 1
                if kk == N:
                    kk = 0
            if throw[s, j] and j < W:
                bits = mask[key_of[s], j] >> np.uint64(q0)
                if bits:
                    oo = k0 * NQ
                    for i in range(NQ):
                        if (bits >> np.uint64(i)) & np.uint64(1):
                            acc[i] += p - p * row[oo + i]
        hs = h[s]
        if update:
            ds = delta[s]
            for c in range(C):
                ch = acc[c] - hs[c]
                hs[c] = acc[c]
                ds[c] = ch
                ch = abs(ch)
                if ch > most[c]:
                    most[c] = ch
        else:
            for c in range(C):
                ch = abs(acc[c] - hs[c])
                if ch > most[c]:
                    most[c] = ch


@numba.njit(cache=True, parallel=True)
def _extrapolate(h, delta, factor):
    """``h += factor * delta`` per column."""
    for s in numba.prange(delta.shape[0]):
        for c in range(h.shape[1]):
            h[s, c] += factor[c] * delta[s, c]


@numba.njit(cache=True, parallel=True)
def _renumber(nxt, pos, order, zero, out):
    """The branches of the rows ``order``, their targets renumbered by ``pos`` (-1 there: the zero row)."""
    for r in numba.prange(order.size):
        s = order[r]
        for j in range(nxt.shape[1]):
            t = nxt[s, j]
            if t < 0:
                out[r, j] = -1
            else:
                x = pos[t]
                out[r, j] = x if x >= 0 else zero


# ----------------------------------------------------------------------------- driver


def _masks(model, squares) -> np.ndarray:
    """``mask[square, branch]``: the bits of the ``squares`` (by position) that the throw lands on."""
    goal, width = model.board.goal, model.board.branches
    mask = np.zeros((goal, width), np.uint64)
    pos = {q: i for i, q in enumerate(squares)}
    for s, throws_at in enumerate(model.board.throws):
        for j, t in enumerate(throws_at):
            bits = 0
            for q in t.landings:
                if q in pos:
                    bits |= 1 << pos[q]
            mask[s, j] = bits
    return mask


def _lambda(most: np.ndarray, before: np.ndarray, earlier: np.ndarray) -> np.ndarray:
    """The steady factor by which each column's largest change shrinks, where the last two agree to 1%
    (else 0: an oscillating column is left to the sweeps)."""
    lam = np.where(before > 0, most / np.where(before > 0, before, 1.0), 0.0)
    lam0 = np.where(earlier > 0, before / np.where(earlier > 0, earlier, 1.0), 0.0)
    return np.where((lam > 0) & (lam < 0.99) & (np.abs(lam - lam0) <= 0.01 * lam), lam, 0.0)


def _solve_batch(rows, squares, tol, period, max_sweeps, pool, bar, task, done):
    """The squares of one batch, a block of NQ each on its own core: sweeps with a geometric extrapolation
    every ``period`` sweeps, until a sweep changes no entry by more than ``tol`` and the true residual is
    under it too. Returns the blocks' values, the sweeps, the extrapolations and the true residual."""
    from ..core.interrupt import check

    nxt, pnum, shift, throw, key_of, inv, N, model = rows
    mask = _masks(model, squares)
    n = nxt.shape[0]
    C = N * NQ
    blocks = [NQ * b for b in range((len(squares) + NQ - 1) // NQ)]
    h = [np.zeros((n + 1, C)) for _ in blocks]
    delta = [np.zeros((n, C), np.float32) for _ in blocks]
    most = [np.zeros(C) for _ in blocks]
    before = [np.zeros(C) for _ in blocks]
    earlier = [np.zeros(C) for _ in blocks]

    def sweep(update: bool) -> float:
        jobs = [(nxt, pnum, shift, throw, key_of, mask, inv, N, q0, h[b], delta[b], most[b], update)
                for b, q0 in enumerate(blocks)]
        list(pool.map(lambda a: _sweep(*a), jobs))
        return max(float(m.max()) for m in most)

    sweeps = extrapolations = 0
    residual = np.inf
    while sweeps < max_sweeps:
        change = sweep(True)
        sweeps += 1
        bar.update(task, completed=done + sweeps)
        check()
        if not np.isfinite(change):
            raise SolverError(f"chance of ever landing: the sweeps diverged (a change of {change} at sweep {sweeps})")
        if change <= tol:
            # a sweep's largest change bounds its residual from above; the true one is computed
            residual = sweep(False)
            if not np.isfinite(residual):
                raise SolverError(f"chance of ever landing: residual {residual} after {sweeps} sweeps")
            if residual <= tol:
                break
        elif sweeps % period == 0 and sweeps >= 2 * period:
            # the changes shrink by a steady factor per column: add the rest of the geometric series
            for b in range(len(blocks)):
                lam = _lambda(most[b], before[b], earlier[b])
                if lam.any():
                    _extrapolate(h[b], delta[b], lam / (1.0 - lam))
            extrapolations += 1
        for b in range(len(blocks)):
            earlier[b][:] = before[b]
            before[b][:] = most[b]
    return h, sweeps, extrapolations, residual


def rows_bytes(J: int, n: int) -> int:
    """The renumbered branches (target int32, numerator, shift, throw) and per-row arrays of ``n`` rows."""
    return n * (J * 7 + 8 + 8 + 8)


def _batch(N: int, n: int, count: int, budget: int) -> tuple[int, int]:
    """The bytes of one block's ``N NQ`` columns over ``n`` rows (and the zero row), and the squares solved at
    once: whole blocks of NQ, as many of the ``count`` as fit ``budget``, at least one block, at most 64 (a
    row's bits of the mask)."""
    per_block = (n + 1) * N * NQ * BYTES_PER_ENTRY
    blocks = max(1, min(64 // NQ, -(-count // NQ), budget // per_block))
    return per_block, int(min(count, blocks * NQ))


def landing_chances(rc, st, squares, *, tol: float = 1e-12, max_sweeps: int = 5_000, period: int = 8,
                    max_bytes: int | None = None, progress: bool = False):
    """``P(seat a ever lands on squares[i])`` as an ``(N, len(squares))`` array, and a report dict
    (sweeps, extrapolations, batches, the largest true residual, seconds, bytes)."""
    from concurrent.futures import ThreadPoolExecutor

    squares = list(squares)
    c = rc.chain
    N = rc.players
    t0 = time.perf_counter()
    order = c.order()
    order = order[st.transient[order]]
    n = order.size
    # the solved rows renumbered in sweep order, every other target sent to a zero row
    pos = np.full(c.n, -1, np.int64)
    pos[order] = np.arange(n)
    nxt = np.empty((n, c.next.shape[1]), np.int32)
    _renumber(c.next, pos, order, n, nxt)
    pn = c.pnum.astype(np.uint8) if 0 <= int(c.pnum.min()) and int(c.pnum.max()) < 256 else c.pnum
    key_of = np.minimum(rc.square[order], rc.model.board.goal - 1).astype(np.int64)
    rows = (nxt, pn[order], rc.shift[order], c.branch_rewards["throws"][order], key_of, 1.0 / c.denom, N, rc.model)
    start = int(pos[c.init])
    per_block, size = _batch(N, n, len(squares), MAX_BYTES if max_bytes is None else max_bytes)
    batches = [squares[i:i + size] for i in range(0, len(squares), size)]
    out = np.zeros((N, len(squares)))
    sweeps = extrapolations = 0
    residual = 0.0
    pool = ThreadPoolExecutor(THREADS_MAX)
    try:
        with progress_bar(progress) as bar:
            task = bar.add_task(f"chance of ever landing: {len(squares)} squares x {N} seats, {n:,} states",
                                total=None)
            col = 0
            for batch in batches:
                h, sw, ex, res = _solve_batch(rows, batch, tol, period, max_sweeps, pool, bar, task, sweeps)
                if start >= 0:
                    got = np.concatenate([x[start].reshape(N, NQ) for x in h], axis=1)
                    out[:, col:col + len(batch)] = got[:, :len(batch)]
                del h
                col += len(batch)
                sweeps += sw
                extrapolations += ex
                residual = max(residual, res)
    finally:
        pool.shutdown()
    if not residual <= 1e-9:
        raise SolverError(f"chance of ever landing: residual {residual:.3g} after {sweeps} sweeps")
    blocks = -(-size // NQ)
    return out, {"sweeps": sweeps, "extrapolations": extrapolations, "batches": len(batches),
                 "residual": residual, "seconds": time.perf_counter() - t0,
                 "bytes": per_block * blocks + rows_bytes(c.next.shape[1], n), "states": n,
                 "columns": N * len(squares)}


# ----------------------------------------------------------------------------- what solve states

NS_PER_ENTRY = 1.0e-9  # seconds a core's sweep spends per branch and column (4-player oca-moderna, quiet: 0.93)
SWEEPS_GUESS = 300  # sweeps to a residual of 1e-12 (77 at 2 players of oca-moderna, 264 at 3, SWEEPS_4 at 4)


def _rounds(count: int, size: int) -> int:
    """The sweeps' rounds on THREADS_MAX cores for ``count`` squares in batches of ``size``: a block a core."""
    def rounds(squares: int) -> int:
        blocks = -(-squares // NQ)
        return -(-blocks // THREADS_MAX)

    full, last = divmod(count, size)
    return full * rounds(size) + (rounds(last) if last else 0)


def landings_cost(rc, squares) -> tuple[int, float]:
    """The bytes and the estimated seconds (on two cores) of :func:`landing_chances` for ``squares``."""
    N, n, J = rc.players, rc.n_states, rc.chain.next.shape[1]
    per_block, size = _batch(N, n, len(squares), MAX_BYTES)
    branches = int((rc.chain.next[:n] >= 0).sum())
    seconds = SWEEPS_GUESS * branches * N * NQ * NS_PER_ENTRY * _rounds(len(squares), size)
    return per_block * -(-size // NQ) + rows_bytes(J, n), seconds


# Asked for explicitly, the chances of ever landing are refused up front (right after the build, before the
# pass) when their estimated time is above this: four-player oca-moderna would take about ten hours.
MAX_SECONDS = 3600.0


def check_landings_cost(rc, max_memory: int | None = None) -> None:
    """Refuse ``--landings`` in one line, with the estimate, when :func:`landings_cost` exceeds MAX_SECONDS or
    the memory at hand: what the budget (``max_memory``, else ``--max-memory``) leaves once the chain built is
    counted in it, else :func:`~markov_oca.memory.memory_budget` now that the chain is built."""
    from ..core.errors import TooLargeError
    from ..core.memory import budget_set, gib, memory_budget

    squares = special_squares(rc.model.rules)
    need, secs = landings_cost(rc, squares)
    what = (f"--landings at {rc.players} players: the chance of ever landing is a backward solve of "
            f"{rc.players * len(squares)} columns over {rc.n_states:,} states, estimated at ")
    if secs > MAX_SECONDS:
        raise TooLargeError(
            f"{what}{secs / 3600:.1f} h and {gib(need)} here (limit {MAX_SECONDS / 3600:.0f} h); drop --landings "
            "for every other figure, or estimate the chances with `markov-oca simulate`")
    budget = max_memory if max_memory is not None else budget_set()
    if budget is not None:
        held = sum(a.nbytes for a in (rc.chain.next, rc.chain.pnum, rc.shift, rc.stake, rc.place, rc.lead, rc.square,
                                      rc.chain.branch_rewards["throws"], rc.chain.state_ids))
        avail, source = budget - held, "left of the budget (--max-memory) once the chain is built"
    else:
        avail, source = memory_budget(), "available once the chain is built"
    if need > avail:
        raise TooLargeError(f"{what}{gib(need)} and {secs / 60:.0f} min; {gib(max(avail, 0))} {source}; drop "
                            "--landings for every other figure, or estimate the chances with `markov-oca simulate`")


def ever_landing(rc, st, landing_list, *, compute: bool, progress: bool = False):
    """The hook of :func:`~markov_oca.goose.rotated.solve_rotated`: ``landing_list`` with the chance of
    ever landing on every special square when ``compute`` (other squares keep ``nan``), the note that says
    what it cost (or what it would cost and how to ask), and the solve's report (or None)."""
    from ..core.memory import gib
    from ..engine.race import Landing
    from ..linalg.solve import SolveReport

    squares = special_squares(rc.model.rules)
    N, n = rc.players, rc.n_states
    if not compute:
        need, secs = landings_cost(rc, squares)
        what = (f"a backward solve of {N * len(squares)} columns, a square and seat each, over {n:,} states: about "
                f"{gib(need)} and {secs / 60:.0f} min here, estimated")
        how = (f"ask for it with --landings ({what})" if secs <= MAX_SECONDS else
               f"--landings would be refused ({what}, over the limit of {MAX_SECONDS / 3600:.0f} h): estimate the "
               "chances with `markov-oca simulate`")
        return landing_list, (f"chance of ever landing not computed at {N} players: {how}; the expected landings "
                              "are computed from the visits"), None
    chances, rep = landing_chances(rc, st, squares, progress=progress)
    at = {q: i for i, q in enumerate(squares)}
    out = [Landing(x.seat, x.square, float(chances[x.seat - 1, at[x.square]]) if x.square in at else x.chance,
                   x.expected) for x in landing_list]
    note = (f"chance of ever landing computed for the {len(squares)} special squares only (the others: null): "
            f"Gauss-Seidel sweeps in progress order with a geometric extrapolation, {rep['columns']} columns (square "
            f"x seat) over {rep['states']:,} states in {rep['batches']} batch(es), {gib(rep['bytes'])}, "
            f"{rep['sweeps']} sweeps, {rep['seconds']:.0f} s, true residual {rep['residual']:.1e}")
    report = SolveReport(f"Gauss-Seidel sweeps in progress order, extrapolated, {rep['columns']} landing columns",
                         rep["residual"], rep["sweeps"])
    return out, note, report
