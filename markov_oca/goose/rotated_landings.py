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

The method: Gauss-Seidel sweeps over the solved states renumbered in race order (decreasing
sum of the players' squares, then, among equal sums, a state after those it leads to: see
:func:`race_order`), so a state's successors are mostly updated before it, with the squares
split over the cores (each core's squares are their own systems: no shared writes). The
changes then shrink by a steady factor per column (the long games: a player waiting in the
prison while another bounces about the end, dies and comes round again), and every
``period`` sweeps the rest of that geometric series is added where the last two factors
agree. The columns are solved in batches that fit :data:`MAX_BYTES`. A sweep's largest
change bounds its residual; the true residual ``|b + Q_E h - h|`` is computed at the end.

Measured (load average about 10, so slow): 2-player oca-moderna, 2,963 states, 30 columns:
77 sweeps, 0.8 s of CPU, within 1.8e-12 of the joint chain; 3 players, 156,631 states, 45
columns: 414 sweeps, 503 s of CPU, residual 8.2e-13. The sweeps grow with the players (the
long games get longer), and so does the cost of a sweep: at 4 players this is hours.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from ..errors import SolverError
from ..progress import progress_bar
from .rules import special_squares

THREADS_MAX = 2  # squares are split over this many cores
BYTES_PER_ENTRY = 12  # a float64 value and a float32 change per state and column
MAX_BYTES = 4 * 2**30  # the columns solved at once hold at most this much (more squares: batches)

# ----------------------------------------------------------------------------- kernels


@numba.njit(cache=True, inline="always")
def _row(s, nxt, pnum, shift, throw, mask, base, inv_denom, N, nq, q0, q1, h, acc):
    """``acc[k nq + i] = (b + Q_E h)`` of row ``s`` for the squares ``q0:q1`` (the rest of ``acc`` untouched).
    A branch into a row that is not solved points to the last row of ``h``, which stays zero."""
    for k in range(N):
        for i in range(q0, q1):
            acc[k * nq + i] = 0.0
    for j in range(nxt.shape[1]):
        t = nxt[s, j]
        if t < 0:
            break
        p = pnum[s, j] * inv_denom
        d = shift[s, j]
        for k in range(N):
            kk = k - d
            if kk < 0:
                kk += N
            for i in range(q0, q1):
                acc[k * nq + i] += p * h[t, kk * nq + i]
        if throw[s, j] and j < mask.shape[1]:
            bits = mask[base, j]
            if bits:
                # a throw of the mover that lands on square i: column (i, 0) takes p instead of p h[t, ...]
                kk = (N - d) % N
                for i in range(q0, q1):
                    if (bits >> np.uint64(i)) & np.uint64(1):
                        acc[i] += p - p * h[t, kk * nq + i]


@numba.njit(cache=True, parallel=True)
def _sweep(nxt, pnum, shift, throw, key_of, mask, inv_denom, N, nq, h, groups, delta, most):
    """One Gauss-Seidel sweep of ``h`` (``(rows + 1, N nq)``, column ``k nq + i``: square ``i``, the player
    ``k`` seats after the mover; rows in race order) on every core, a group of squares each (their own
    systems). The change of each entry goes to ``delta``, its largest per column to ``most``."""
    n_groups = groups.size - 1
    rows = nxt.shape[0]
    for g in numba.prange(n_groups):
        q0, q1 = groups[g], groups[g + 1]
        acc = np.empty(N * nq)
        for k in range(N):
            for i in range(q0, q1):
                most[k * nq + i] = 0.0
        for s in range(rows):
            _row(s, nxt, pnum, shift, throw, mask, key_of[s], inv_denom, N, nq, q0, q1, h, acc)
            for k in range(N):
                for i in range(q0, q1):
                    c = k * nq + i
                    ch = acc[c] - h[s, c]
                    h[s, c] = acc[c]
                    delta[s, c] = ch
                    ch = abs(ch)
                    if ch > most[c]:
                        most[c] = ch


@numba.njit(cache=True, parallel=True)
def _residual(nxt, pnum, shift, throw, key_of, mask, inv_denom, N, nq, h):
    """The largest ``|b + Q_E h - h|`` over the rows and every column."""
    rows = nxt.shape[0]
    n_chunks = 256
    chunk = (rows + n_chunks - 1) // n_chunks
    worst = np.zeros(n_chunks)
    for q in numba.prange(n_chunks):
        acc = np.empty(N * nq)
        big = 0.0
        for s in range(q * chunk, min(rows, (q + 1) * chunk)):
            _row(s, nxt, pnum, shift, throw, mask, key_of[s], inv_denom, N, nq, 0, nq, h, acc)
            for c in range(N * nq):
                r = abs(acc[c] - h[s, c])
                if r > big:
                    big = r
        worst[q] = big
    return worst.max()


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


def _solve_batch(rows, squares, tol, period, max_sweeps, bar, task, done):
    """The squares of one batch: sweeps with a geometric extrapolation every ``period`` sweeps."""
    from ..interrupt import check

    nxt, pnum, shift, throw, key_of, inv, N, model = rows
    nq = len(squares)
    mask = _masks(model, squares)
    n = nxt.shape[0]
    h = np.zeros((n + 1, N * nq))
    delta = np.zeros((n, N * nq), np.float32)
    n_groups = min(THREADS_MAX, nq)
    groups = np.linspace(0, nq, n_groups + 1).round().astype(np.int64)
    most = np.zeros(N * nq)
    before = np.zeros(N * nq)
    earlier = np.zeros(N * nq)
    sweeps = extrapolations = 0
    residual = np.inf
    while sweeps < max_sweeps:
        _sweep(nxt, pnum, shift, throw, key_of, mask, inv, N, nq, h, groups, delta, most)
        sweeps += 1
        bar.update(task, completed=done + sweeps)
        check()
        if most.max() <= tol:
            # a sweep's largest change bounds its residual from above; the true one is computed
            residual = float(_residual(nxt, pnum, shift, throw, key_of, mask, inv, N, nq, h))
            if residual <= tol:
                break
        elif sweeps % period == 0 and sweeps >= 2 * period:
            # the changes shrink by a steady factor per column: add the rest of the geometric series
            # (only where the last two ratios agree to 1%: an oscillating column is left to the sweeps)
            lam = np.where(before > 0, most / np.where(before > 0, before, 1.0), 0.0)
            lam0 = np.where(earlier > 0, before / np.where(earlier > 0, earlier, 1.0), 0.0)
            lam = np.where((lam > 0) & (lam < 0.99) & (np.abs(lam - lam0) <= 0.01 * lam), lam, 0.0)
            _extrapolate(h, delta, lam / (1.0 - lam))
            extrapolations += 1
        earlier[:] = before
        before[:] = most
    return h, sweeps, extrapolations, residual


def rows_bytes(J: int, n: int) -> int:
    """The renumbered branches (target int32, numerator, shift, throw) and per-row arrays of ``n`` rows."""
    return n * (J * 7 + 8 + 8 + 8)


def _batch(N: int, n: int, count: int, budget: int) -> tuple[int, int]:
    """The bytes of one square's ``N`` columns over ``n`` rows (and the zero row), and the squares solved at
    once: as many of the ``count`` as fit ``budget``, at least one, at most 64 (a row's bits of the mask)."""
    per_square = (n + 1) * N * BYTES_PER_ENTRY
    return per_square, int(max(1, min(64, count, budget // per_square)))


def landing_chances(rc, st, squares, *, tol: float = 1e-12, max_sweeps: int = 5_000, period: int = 8,
                    max_bytes: int | None = None, progress: bool = False):
    """``P(seat a ever lands on squares[i])`` as an ``(N, len(squares))`` array, and a report dict
    (sweeps, extrapolations, batches, the largest true residual, seconds, bytes)."""
    squares = list(squares)
    c = rc.chain
    N = rc.players
    t0 = time.perf_counter()
    order = race_order(rc)
    order = order[st.transient[order]]
    n = order.size
    # the solved rows renumbered in race order (sequential sweeps), every other target sent to a zero row
    pos = np.full(c.n, -1, np.int64)
    pos[order] = np.arange(n)
    nxt = np.empty((n, c.next.shape[1]), np.int32)
    _renumber(c.next, pos, order, n, nxt)
    pn = c.pnum.astype(np.uint8) if 0 <= int(c.pnum.min()) and int(c.pnum.max()) < 256 else c.pnum
    key_of = np.minimum(rc.square[order], rc.model.board.goal - 1).astype(np.int64)
    rows = (nxt, pn[order], rc.shift[order], c.branch_rewards["throws"][order], key_of, 1.0 / c.denom, N, rc.model)
    start = int(pos[c.init])
    per_square, size = _batch(N, n, len(squares), MAX_BYTES if max_bytes is None else max_bytes)
    batches = [squares[i:i + size] for i in range(0, len(squares), size)]
    out = np.zeros((N, len(squares)))
    sweeps = extrapolations = 0
    residual = 0.0
    with progress_bar(progress) as bar:
        task = bar.add_task(f"chance of ever landing: {len(squares)} squares x {N} seats, {n:,} states", total=None)
        col = 0
        for batch in batches:
            h, sw, ex, res = _solve_batch(rows, batch, tol, period, max_sweeps, bar, task, sweeps)
            if start >= 0:
                out[:, col:col + len(batch)] = h[start].reshape(N, len(batch))
            del h
            col += len(batch)
            sweeps += sw
            extrapolations += ex
            residual = max(residual, res)
    if not residual <= 1e-9:
        raise SolverError(f"chance of ever landing: residual {residual:.3g} after {sweeps} sweeps")
    return out, {"sweeps": sweeps, "extrapolations": extrapolations, "batches": len(batches),
                 "residual": residual, "seconds": time.perf_counter() - t0,
                 "bytes": per_square * size + rows_bytes(c.next.shape[1], n), "states": n,
                 "columns": N * len(squares)}


@numba.njit(cache=True)
def _levels(nxt, key, n_states, most):
    """Per state, the longest chain of branches within its own ``key`` (capped at ``most``, so cycles stop)."""
    lev = np.zeros(n_states, np.int32)
    for _ in range(most):
        changed = False
        for s in range(n_states):
            best = 0
            for j in range(nxt.shape[1]):
                t = nxt[s, j]
                if t < 0:
                    break
                if t < n_states and t != s and key[t] == key[s]:
                    x = lev[t] + 1
                    if x > best:
                        best = x
            if best > most:
                best = most
            if best != lev[s]:
                lev[s] = best
                changed = True
        if not changed:
            break
    return lev


def race_order(rc, most: int = 16) -> np.ndarray:
    """States in decreasing sum of every player's square, then, among equal sums, a state after those it
    leads to (longest chain within the sum, capped at ``most``), then by decreasing id."""
    m = rc.model
    ns, N, L = rc.n_states, rc.players, m.n_local
    ids = rc.chain.state_ids
    total = np.zeros(ns, np.int64)
    rest = ids.copy()
    for _ in range(N):
        total += m.local.square[rest % L]
        rest //= L
    lev = _levels(rc.chain.next, total, ns, most)
    return np.lexsort((-ids, lev, -total)).astype(np.int64)


# ----------------------------------------------------------------------------- what solve states

NS_PER_ENTRY = 3.6e-8  # CPU seconds a sweep spends per branch and column (4-player oca-moderna, load average 7-10)
SWEEPS_GUESS = 400  # sweeps to a residual of 1e-12 (77 at 2 players of oca-moderna, 414 at 3 players)


def landings_cost(rc, squares) -> tuple[int, float]:
    """The bytes and the estimated seconds (on two cores) of :func:`landing_chances` for ``squares``."""
    N, n, J = rc.players, rc.n_states, rc.chain.next.shape[1]
    per_square, size = _batch(N, n, len(squares), MAX_BYTES)
    branches = int((rc.chain.next[:n] >= 0).sum())
    seconds = SWEEPS_GUESS * branches * N * len(squares) * NS_PER_ENTRY / THREADS_MAX
    return per_square * size + rows_bytes(J, n), seconds


# Asked for explicitly, the chances of ever landing are refused up front (right after the build, before the
# pass) when their estimated time is above this: four-player oca-moderna would take about ten hours.
MAX_SECONDS = 3600.0


def check_landings_time(rc) -> None:
    """Refuse ``--landings`` in one line, with the estimate, when :func:`landings_cost` exceeds MAX_SECONDS."""
    from ..errors import TooLargeError
    from ..memory import gib

    squares = special_squares(rc.model.rules)
    need, secs = landings_cost(rc, squares)
    if secs > MAX_SECONDS:
        raise TooLargeError(
            f"--landings at {rc.players} players: the chance of ever landing is a backward solve of "
            f"{rc.players * len(squares)} columns over {rc.n_states:,} states, estimated at {secs / 3600:.1f} h and "
            f"{gib(need)} here (limit {MAX_SECONDS / 3600:.0f} h); drop --landings for every other figure, or "
            "estimate the chances with `markov-oca simulate`")


def ever_landing(rc, st, landing_list, *, compute: bool, progress: bool = False):
    """The hook of :func:`~markov_oca.goose.rotated.solve_rotated`: ``landing_list`` with the chance of
    ever landing on every special square when ``compute`` (other squares keep ``nan``), the note that says
    what it cost (or what it would cost and how to ask), and the solve's report (or None)."""
    from ..memory import gib
    from ..results import Landing
    from ..solve import SolveReport

    squares = special_squares(rc.model.rules)
    N, n = rc.players, rc.n_states
    if not compute:
        need, secs = landings_cost(rc, squares)
        return landing_list, (
            f"chance of ever landing not computed at {N} players: ask for it with --landings (a backward solve "
            f"of {N * len(squares)} columns, a square and seat each, over {n:,} states: about {gib(need)} and "
            f"{secs / 60:.0f} min here, estimated); the expected landings are computed from the visits"), None
    chances, rep = landing_chances(rc, st, squares, progress=progress)
    at = {q: i for i, q in enumerate(squares)}
    out = [Landing(x.seat, x.square, float(chances[x.seat - 1, at[x.square]]) if x.square in at else x.chance,
                   x.expected) for x in landing_list]
    note = (f"chance of ever landing computed for the {len(squares)} special squares only (the others: null): "
            f"Gauss-Seidel sweeps in race order with a geometric extrapolation, {rep['columns']} columns (square "
            f"x seat) over {rep['states']:,} states in {rep['batches']} batch(es), {gib(rep['bytes'])}, "
            f"{rep['sweeps']} sweeps, {rep['seconds']:.0f} s, true residual {rep['residual']:.1e}")
    report = SolveReport(f"Gauss-Seidel sweeps in race order, extrapolated, {rep['columns']} landing columns",
                         rep["residual"], rep["sweeps"])
    return out, note, report
