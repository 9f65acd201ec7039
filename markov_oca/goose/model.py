"""The joint state space of a goose race and its kernel, compiled to a Chain.

A player's *local state* is one of a short list of (square, turns to miss,
waiting, throwing again) combinations that the board makes possible; with
``until = "last"`` the last local state of each square list is "finished".
A joint state is the seat to move and every player's local state, numbered in
mixed radix::

    id = seat + N * (l_1 + L * (l_2 + L * (...)))

so the full space has ``N * L**N`` ids, known before anything is built, and
decoding is arithmetic. The kernel (numba) plays one throw (or one missed
turn) from a joint state with every interaction of the goose rules: occupancy,
release from a waiting square, missed turns, another throw, the first-throw
rule, bounce, finishing. A breadth-first pass from the start finds the
reachable states; a second pass writes their branches. Game-over transitions
go to one absorbing state per outcome.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.chain import Chain
from ..core.errors import RulesError, TooLargeError
from ..core.memory import BASE_BYTES, available_memory, gib
from ..linalg.solve import progress_order
from .board import CompiledBoard, compile_board
from .explore import branch_arrays, explore, write_branches
from .kernel import OCC_MOVER, OCC_NONE, OCC_OCCUPANT, UNTIL_FIRST, UNTIL_LAST, Tables
from .rules import GooseRules

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

    def tables(self) -> Tables:
        """The tables the step kernel reads (:mod:`~markov_oca.goose.kernel`), as one bundle."""
        lc, b = self.local, self.board
        until = UNTIL_FIRST if self.rules.until == "first" else UNTIL_LAST
        return Tables(self.players, self.n_local, self.board.goal, until, _OCCUPANCY[self.rules.occupancy],
                      self.full_size, lc.square, lc.skip, lc.wait, lc.again, lc.finished, lc.after_skip,
                      lc.throw_local, lc.bumped, b.prob_num, b.final, b.moved, b.stake, b.finished)

    def build(self, progress: bool = False) -> Chain:
        """Explore the reachable states and compile the chain (refused up front when it would not fit)."""
        sure = self.check_memory()
        full = self.full_size
        tb = self.tables()
        ids = explore(tb, self.start_state(), full, False, progress, "exploring states")
        if not sure:
            self.check_memory(states=int(ids.size))
        n_states = ids.size
        n_out = self.players
        n = n_states + n_out
        index = np.full(full, -1, np.int32)
        index[ids] = np.arange(n_states, dtype=np.int32)
        br = branch_arrays(self, n, rotated=False)
        write_branches(ids, index, tb, False, br, self.board.denominator, 100_000, progress)
        del index
        branch_rewards = {"throws": br.throw}
        if br.stake.any():
            branch_rewards["stakes"] = br.stake
        if self.rules.until == "last" and self.players > 1:
            branch_rewards["place"] = br.place
        names = self.outcome_names()
        # Sweep the race backwards: total progress in buckets of 6 squares, then seat.
        seats, locs = self.decode(ids)
        key = np.full(n, -1, np.int64)
        key[:n_states] = (self.local.square[locs].sum(axis=1) // 6) * self.players + seats
        return Chain(
            next=br.nxt,
            pnum=br.pnum,
            denom=self.board.denominator,
            init=0,
            outcomes={names[k]: n_states + k for k in range(n_out)},
            players=self.players,
            mover=br.mover,
            state_rewards={"turns": br.turn_start, "rounds": br.round_start},
            branch_rewards=branch_rewards,
            turn_start=br.turn_start,
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
        applies, the square it comes to rest on and every square of a chain of effects on
        the way (a goose, a bridge, the maze, death); a piece sent back by another, or
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
