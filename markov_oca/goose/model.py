"""The joint state space of a goose race and its kernel, compiled to a Chain.

A player's *local state* is one of a short list of (square, turns to miss,
waiting, throwing again) combinations that the board makes possible; with
``until = "last"`` the last local state of each square list is "finished".
A joint state is the seat to move and every player's local state, numbered in
mixed radix::

    id = seat + N * (l_1 + L * (l_2 + L * (...)))

so the full space has ``N * L**N`` ids, known before anything is built, and
decoding is arithmetic. The kernel (numba) plays one throw (or one missed
turn) from a joint state with every interaction of RULES.md: occupancy,
release from a waiting square, missed turns, another throw, the first-throw
rule, bounce, finishing. A breadth-first pass from the start finds the
reachable states; a second pass writes their branches. Game-over transitions
go to one absorbing state per outcome.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..analysis.chain import Chain
from ..core.errors import RulesError, TooLargeError
from ..core.memory import BASE_BYTES, available_memory, gib
from ..core.progress import progress_bar
from ..linalg.solve import progress_order
from .board import CompiledBoard, compile_board
from .rules import GooseRules

UNTIL_FIRST, UNTIL_LAST = 0, 1
OCC_NONE, OCC_OCCUPANT, OCC_MOVER = 0, 1, 2
_OCCUPANCY = {"none": OCC_NONE, "occupant-returns": OCC_OCCUPANT, "mover-returns": OCC_MOVER}


@dataclass(frozen=True)
class LocalStates:
    """The per-player local states of a board, as parallel arrays."""

    square: np.ndarray  # int32
    skip: np.ndarray  # int32
    wait: np.ndarray  # bool
    again: np.ndarray  # bool
    finished: np.ndarray  # bool
    plain: np.ndarray  # plain[square] -> local (square, 0, no wait, no again)
    after_skip: np.ndarray  # local with one turn fewer to miss
    throw_local: np.ndarray  # [square, branch] -> the mover's new local state
    bumped: np.ndarray  # [square, turns to miss] -> local of a piece sent back there

    @property
    def size(self) -> int:
        return int(self.square.size)

    def describe(self, l: int) -> str:
        if self.finished[l]:
            return "finished"
        s = str(int(self.square[l]))
        if self.skip[l]:
            s += f" (misses {int(self.skip[l])})"
        if self.wait[l]:
            s += " (waiting)"
        if self.again[l]:
            s += " (throws again)"
        return s


def local_states(board: CompiledBoard) -> LocalStates:
    goal = board.goal
    keys: list[tuple[int, int, bool, bool]] = [(s, 0, False, False) for s in range(goal + 1)]
    index = {k: i for i, k in enumerate(keys)}

    def add(k: tuple[int, int, bool, bool]) -> int:
        if k not in index:
            index[k] = len(keys)
            keys.append(k)
        return index[k]

    throw_local = np.zeros(board.final.shape, np.int32)
    for s in range(goal):
        for j in range(len(board.throws[s])):
            t = board.throws[s][j]
            k = (goal, 0, False, False) if t.finished else (t.final, t.skip, t.wait, t.again)
            throw_local[s, j] = add(k)
    # A piece sent back loses its turns to miss, unless the rules keep them.
    max_skip = max(k for _, k, _, _ in keys)
    keeps = board.rules.options.get("bumped_keeps_turns", False) and board.rules.occupancy != "none"
    bumped = np.tile(np.arange(goal + 1, dtype=np.int32)[:, None], (1, max_skip + 1))
    if keeps:
        for s in range(goal):
            for k in range(1, max_skip + 1):
                bumped[s, k] = add((s, k, False, False))
    # turns to miss count down one by one
    for s, k, w, a in list(keys):
        for m in range(k - 1, 0, -1):
            add((s, m, w, a))
    keys_arr = np.array([(s, k, w, a) for s, k, w, a in keys], dtype=np.int64).reshape(-1, 4)
    after = np.arange(len(keys), dtype=np.int32)
    for i, (s, k, w, a) in enumerate(keys):
        if k > 0:
            after[i] = index[(s, k - 1, w, a)]
    square = keys_arr[:, 0].astype(np.int32)
    return LocalStates(
        square=square,
        skip=keys_arr[:, 1].astype(np.int32),
        wait=keys_arr[:, 2].astype(bool),
        again=keys_arr[:, 3].astype(bool),
        finished=square == goal,
        plain=np.arange(goal + 1, dtype=np.int32),
        after_skip=after,
        throw_local=throw_local,
        bumped=bumped,
    )


# ----------------------------------------------------------------------------- kernel


@numba.njit(cache=True)
def _decode(state, n_players, n_local, locs):
    seat = state % n_players
    rest = state // n_players
    for i in range(n_players):
        locs[i] = rest % n_local
        rest //= n_local
    return seat


@numba.njit(cache=True)
def _encode(seat, n_players, n_local, locs):
    code = 0
    for i in range(n_players - 1, -1, -1):
        code = code * n_local + locs[i]
    return seat + n_players * code


@numba.njit(cache=True)
def _next_seat(seat, n_players, l_fin, locs):
    for step in range(1, n_players + 1):
        k = (seat + step) % n_players
        if not l_fin[locs[k]]:
            return k
    return seat


@numba.njit(cache=True)
def _expand(state, P, L, goal, until, occupancy, n_full,
            l_sq, l_skip, l_wait, l_again, l_fin, after_skip, throw_local, bumped,
            t_prob, t_final, t_moved, t_stake, t_finished,
            locs, work, out_next, out_p, out_throw, out_stake, out_place):
    """Every branch of one step from ``state``; returns how many.

    out_next holds full ids; an outcome is ``n_full + k``: seat k won
    (until first), or seat k was left last (until last).
    """
    seat = _decode(state, P, L, locs)
    m = locs[seat]
    denom_all = 0
    for j in range(t_prob.shape[1]):
        denom_all += t_prob[0, j]
    if l_wait[m] or l_skip[m] > 0:
        for i in range(P):
            work[i] = locs[i]
        if l_skip[m] > 0:
            work[seat] = after_skip[m]
        out_next[0] = _encode(_next_seat(seat, P, l_fin, work), P, L, work)
        out_p[0] = denom_all
        out_throw[0] = False
        out_stake[0] = 0
        out_place[0] = 0
        return 1
    sq = l_sq[m]
    count = 0
    for j in range(t_prob.shape[1]):
        p = t_prob[sq, j]
        if p == 0:
            continue
        for i in range(P):
            work[i] = locs[i]
        out_p[count] = p
        out_throw[count] = True
        out_stake[count] = t_stake[sq, j]
        out_place[count] = 0
        if t_finished[sq, j]:
            if until == UNTIL_FIRST:
                out_next[count] = n_full + seat
                count += 1
                continue
            done = 0
            for i in range(P):
                if l_fin[work[i]]:
                    done += 1
            out_place[count] = done + 1
            work[seat] = throw_local[sq, j]
            left = -1
            n_left = 0
            for i in range(P):
                if not l_fin[work[i]]:
                    left = i
                    n_left += 1
            if n_left <= 1:
                out_next[count] = n_full + (left if left >= 0 else seat)
            else:
                out_next[count] = _encode(_next_seat(seat, P, l_fin, work), P, L, work)
            count += 1
            continue
        new = throw_local[sq, j]
        work[seat] = new
        f = t_final[sq, j]
        if t_moved[sq, j] and f != 0 and f != goal:
            for k in range(P):
                if k == seat or l_fin[work[k]] or l_sq[work[k]] != f:
                    continue
                if occupancy == OCC_OCCUPANT:
                    work[k] = bumped[sq, l_skip[work[k]]]  # to the mover's origin square
                elif occupancy == OCC_MOVER:
                    work[seat] = sq
                    new = sq
                    break
                elif l_wait[work[k]]:
                    work[k] = f  # released, stays on the square
        nseat = seat if l_again[new] else _next_seat(seat, P, l_fin, work)
        out_next[count] = _encode(nseat, P, L, work)
        count += 1
    return count


@numba.njit(cache=True)
def _explore(start, max_states, P, L, goal, until, occupancy, n_full,
             l_sq, l_skip, l_wait, l_again, l_fin, after_skip, throw_local, bumped,
             t_prob, t_final, t_moved, t_stake, t_finished, seen, queue, head, tail, budget):
    J = t_prob.shape[1] + 1
    locs = np.empty(P, np.int64)
    work = np.empty(P, np.int64)
    out_next = np.empty(J, np.int64)
    out_p = np.empty(J, np.int64)
    out_throw = np.empty(J, np.bool_)
    out_stake = np.empty(J, np.int32)
    out_place = np.empty(J, np.int8)
    if tail == 0:
        seen[start] = True
        queue[0] = start
        tail = 1
    done = 0
    while head < tail and done < budget:
        s = queue[head]
        head += 1
        done += 1
        c = _expand(s, P, L, goal, until, occupancy, n_full, l_sq, l_skip, l_wait, l_again, l_fin,
                    after_skip, throw_local, bumped, t_prob, t_final, t_moved, t_stake, t_finished,
                    locs, work, out_next, out_p, out_throw, out_stake, out_place)
        for j in range(c):
            t = out_next[j]
            if t < n_full and not seen[t]:
                seen[t] = True
                queue[tail] = t
                tail += 1
    return head, tail


@numba.njit(cache=True)
def _write_branches(ids, index, outcome_base, P, L, goal, until, occupancy, n_full,
                    l_sq, l_skip, l_wait, l_again, l_fin, after_skip, throw_local, bumped,
                    t_prob, t_final, t_moved, t_stake, t_finished,
                    nxt, pnum, throw, stake, place, mover, turn_start, round_start, lo, hi):
    J = t_prob.shape[1] + 1
    locs = np.empty(P, np.int64)
    work = np.empty(P, np.int64)
    out_next = np.empty(J, np.int64)
    out_p = np.empty(J, np.int64)
    out_throw = np.empty(J, np.bool_)
    out_stake = np.empty(J, np.int32)
    out_place = np.empty(J, np.int8)
    for r in range(lo, hi):
        s = ids[r]
        c = _expand(s, P, L, goal, until, occupancy, n_full, l_sq, l_skip, l_wait, l_again, l_fin,
                    after_skip, throw_local, bumped, t_prob, t_final, t_moved, t_stake, t_finished,
                    locs, work, out_next, out_p, out_throw, out_stake, out_place)
        seat = _decode(s, P, L, locs)
        mover[r] = seat
        turn_start[r] = not l_again[locs[seat]]
        first = 0
        while l_fin[locs[first]]:
            first += 1
        round_start[r] = turn_start[r] and seat == first
        for j in range(c):
            t = out_next[j]
            nxt[r, j] = index[t] if t < n_full else outcome_base + (t - n_full)
            pnum[r, j] = out_p[j]
            throw[r, j] = out_throw[j]
            stake[r, j] = out_stake[j]
            if place.shape[0] > 1:  # kept only when places are counted (until = "last")
                place[r, j] = out_place[j]


# ----------------------------------------------------------------------------- building


@dataclass
class GooseModel:
    """A goose rule set for a number of players, with its state space."""

    rules: GooseRules
    players: int
    board: CompiledBoard
    local: LocalStates

    @property
    def n_local(self) -> int:
        return self.local.size

    @property
    def full_size(self) -> int:
        """Ids in the mixed-radix space, before reachability."""
        return self.players * self.n_local**self.players

    def estimated_bytes(self, states: int | None = None, transitions: int | None = None) -> int:
        """The peak memory of a build, solve and length distribution, in bytes (interpreter included).

        The largest of :meth:`estimated_phases`, plus the interpreter's own.
        """
        return BASE_BYTES + max(self.estimated_phases(states, transitions).values())

    def estimated_phases(self, states: int | None = None, transitions: int | None = None) -> dict[str, int]:
        """The bytes each phase holds at its peak: ``explore``, ``build`` and ``solve``.

        Without ``states`` every mixed-radix id is taken as reachable (an upper
        bound); after the exploration the count is known and the estimate is
        close (``benchmarks/goose_scale.py`` prints it beside the measured peak).
        The parts, measured on 3-player ``oca-moderna``:

        * exploring: a seen flag, a queue entry and later an index per id;
        * per state: its branches (next, numerator, throw, stake, place), its id,
          the sweep order, and during the solve about 15 work vectors and the
          length pass's 3;
        * per transition: 12 bytes, the transition matrix for the class structure
          and then the solver's split matrix (never both at once).
        """
        full = self.full_size
        J = self.board.branches + 1
        if states is None:
            states = full
        if transitions is None:
            transitions = states * J
        queue = 8 if full >= 2**31 else 4
        explore = full * (1 + queue) + states * 8
        narrow = self.board.denominator < 2**15
        branches = J * (4 + (2 if narrow else 4) + 1 + 2 + (1 if self.rules.until == "last" else 0)) + 3
        build = full * 4 + states * (branches + 8 + 8 * (self.players + 4))
        solve = states * (branches + 8 + 8 + 15 * 8 + 3 * 8 + 16) + transitions * 12
        return {"explore": explore, "build": build, "solve": solve}

    def outcome_names(self) -> list[str]:
        if self.rules.until == "first" or self.players == 1:
            return [f"seat {k + 1} wins" for k in range(self.players)]
        return [f"seat {k + 1} last" for k in range(self.players)]

    def decode(self, full_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Seat to move (0-based) and the local state of every player, vectorised."""
        full_ids = np.asarray(full_ids, np.int64)
        seat = full_ids % self.players
        rest = full_ids // self.players
        locs = np.empty((full_ids.size, self.players), np.int64)
        for i in range(self.players):
            locs[:, i] = rest % self.n_local
            rest //= self.n_local
        return seat, locs

    def encode(self, seat: int, locals_: list[int]) -> int:
        code = 0
        for l in reversed(locals_):
            code = code * self.n_local + l
        return seat + self.players * code

    def start_state(self) -> int:
        return self.encode(0, [int(self.local.plain[0])] * self.players)

    def _kernel_args(self) -> tuple:
        lc, b = self.local, self.board
        until = UNTIL_FIRST if self.rules.until == "first" else UNTIL_LAST
        return (self.players, self.n_local, self.board.goal, until, _OCCUPANCY[self.rules.occupancy],
                self.full_size, lc.square, lc.skip, lc.wait, lc.again, lc.finished, lc.after_skip,
                lc.throw_local, lc.bumped, b.prob_num, b.final, b.moved, b.stake, b.finished)

    def build(self, progress: bool = False) -> Chain:
        """Explore the reachable states and compile the chain (refused up front when it would not fit)."""
        sure = self.check_memory()
        full = self.full_size
        args = self._kernel_args()
        seen = np.zeros(full, np.bool_)
        queue = np.empty(full, np.int64 if full >= 2**31 else np.int32)
        head = tail = 0
        with progress_bar(progress, "exploring states") as bar:
            task = bar.add_task("exploring states", total=None)
            while True:
                head, tail = _explore(self.start_state(), full, *args, seen, queue, head, tail, 200_000)
                bar.update(task, completed=head, total=tail)
                if head >= tail:
                    break
        ids = queue[:tail].astype(np.int64)
        del seen, queue
        if not sure:
            self.check_memory(states=int(ids.size))
        n_states = ids.size
        n_out = self.players
        n = n_states + n_out
        index = np.full(full, -1, np.int32)
        index[ids] = np.arange(n_states, dtype=np.int32)
        J = self.board.branches + 1
        nxt = np.full((n, J), -1, np.int32)
        # The narrowest integers that hold the numerators and the stakes (bytes per state matter here).
        pnum = np.zeros((n, J), np.int16 if self.board.denominator < 2**15 else np.int32)
        throw = np.zeros((n, J), np.bool_)
        stake = np.zeros((n, J), np.int16 if int(self.board.stake.max(initial=0)) * 2 < 2**15 else np.int32)
        place = np.zeros((n, J) if self.rules.until == "last" else (1, J), np.int8)
        mover = np.full(n, -1, np.int8)
        turn_start = np.zeros(n, np.bool_)
        round_start = np.zeros(n, np.bool_)
        block = 100_000
        with progress_bar(progress, "writing transitions") as bar:
            task = bar.add_task("writing transitions", total=n_states)
            for lo in range(0, n_states, block):
                hi = min(n_states, lo + block)
                _write_branches(ids, index, n_states, *args, nxt, pnum, throw, stake, place, mover,
                                turn_start, round_start, lo, hi)
                bar.update(task, completed=hi)
        del index
        for k in range(n_out):
            nxt[n_states + k, 0] = n_states + k
            pnum[n_states + k, 0] = self.board.denominator
        branch_rewards = {"throws": throw}
        if stake.any():
            branch_rewards["stakes"] = stake
        if self.rules.until == "last" and self.players > 1:
            branch_rewards["place"] = place
        names = self.outcome_names()
        # Sweep the race backwards: total progress in buckets of 6 squares, then seat.
        seats, locs = self.decode(ids)
        key = np.full(n, -1, np.int64)
        key[:n_states] = (self.local.square[locs].sum(axis=1) // 6) * self.players + seats
        return Chain(
            next=nxt,
            pnum=pnum,
            denom=self.board.denominator,
            init=0,
            outcomes={names[k]: n_states + k for k in range(n_out)},
            players=self.players,
            mover=mover,
            state_rewards={"turns": turn_start, "rounds": round_start},
            branch_rewards=branch_rewards,
            turn_start=turn_start,
            state_ids=ids,
            describe_state=self.describe_state,
            sweep_order=progress_order(key),
        )

    def check_memory(self, avail: int | None = None, states: int | None = None) -> bool:
        """Refuse, in one line with the estimate, a chain that would not fit; True when it surely fits.

        Without ``states`` (before the exploration) the whole mixed-radix space is
        taken as reachable: when even that fits, True. Otherwise the exploration
        alone must fit (its ids are counted before anything else is allocated) and
        False says that the count is to be checked again once known.
        """
        avail = available_memory() if avail is None else avail
        if states is not None:
            need = self.estimated_bytes(states)
            if need > avail:
                self._refuse(f"{states:,} reachable states, about {gib(need)} to build and solve", avail)
            return True
        if self.estimated_bytes() <= avail:
            return True
        explore = BASE_BYTES + self.full_size * 9
        if explore > avail:
            # Not even the exploration fits: say what the chain would need with every id reachable.
            self._refuse(f"{self.full_size:,} ids in the mixed-radix space, about {gib(explore)} just to explore "
                         f"and up to {gib(self.estimated_bytes())} to build and solve", avail)
        return False

    def _refuse(self, what: str, avail: int) -> None:
        raise TooLargeError(f"{self.rules.name} with {self.players} players: {what}; {gib(avail)} available; "
                            "beyond exact reach here: use simulate, or crosscheck against a simulation")

    def describe_state(self, full_id: int) -> dict:
        seat, locs = self.decode(np.array([full_id]))
        return {
            "seat_to_move": int(seat[0]) + 1,
            "players": [self.local.describe(int(l)) for l in locs[0]],
        }

    def landing_events(self, chain: Chain, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """The landings of ``seat`` as events: ``(key, table)``.

        ``key[s, j]`` (-1 for none) names the throw of branch ``j`` from state ``s``
        when ``seat`` throws there, and ``table[key, q]`` says whether that throw
        lands on square ``q``. A landing is every square whose effect a throw
        applies (RULES.md, "What is counted"); a piece sent back by another, or
        released from a waiting square, does not land.
        """
        goal, width = self.board.goal, self.board.branches
        table = np.zeros((goal * width, goal + 1), bool)
        for s, throws in enumerate(self.board.throws):
            for j, t in enumerate(throws):
                table[s * width + j, list(t.landings)] = True
        n_states = chain.state_ids.size
        seats, locs = self.decode(chain.state_ids)
        mover_square = np.minimum(self.local.square[locs[np.arange(n_states), seats]], goal - 1)
        mine = (seats == seat)[:, None] & chain.branch_rewards["throws"][:n_states, :width]
        key = np.full(chain.next.shape, -1, np.int32)
        key[:n_states, :width] = np.where(mine, mover_square[:, None] * width + np.arange(width), -1)
        return key, table

    def node_attributes(self, chain: Chain) -> list[dict]:
        """Per state of a chain this model built: ``seat_to_move`` and every seat's ``pK_square`` and
        ``pK_status`` (the graph exports' node attributes; outcome states get none)."""
        if chain.state_ids is None:
            raise ValueError("a goose model can describe only a chain it built (the chain has no state ids)")
        if self.players != chain.players:
            raise ValueError(f"the model is for {self.players} players, the chain for {chain.players}")
        n_states = chain.state_ids.size
        seats, locs = self.decode(chain.state_ids)
        local = self.local
        squares = local.square[locs].tolist()
        status_of = [_status(local, l) for l in range(local.size)]
        statuses = [[status_of[l] for l in row] for row in locs.tolist()]
        attrs: list[dict] = []
        for r in range(n_states):
            a: dict = {"seat_to_move": int(seats[r]) + 1}
            for k in range(self.players):
                a[f"p{k + 1}_square"] = squares[r][k]
                a[f"p{k + 1}_status"] = statuses[r][k]
            attrs.append(a)
        attrs += [{} for _ in range(chain.n - n_states)]
        return attrs


def _status(local: LocalStates, l: int) -> str:
    """A local state in words, for node attributes: finished, misses K, waiting, throws again, playing."""
    if local.finished[l]:
        return "finished"
    parts = []
    if local.skip[l]:
        parts.append(f"misses {int(local.skip[l])}")
    if local.wait[l]:
        parts.append("waiting")
    if local.again[l]:
        parts.append("throws again")
    return ", ".join(parts) or "playing"


def goose_model(rules: GooseRules, players: int) -> GooseModel:
    """The model of ``rules`` for ``players`` players (validated)."""
    if isinstance(players, bool) or not isinstance(players, int) or players < 1:
        raise RulesError(f"players must be a whole number of at least 1, got {players!r}")
    if players > 8:
        raise RulesError(f"players must be at most 8, got {players}")
    board = compile_board(rules)
    return GooseModel(rules, players, board, local_states(board))
