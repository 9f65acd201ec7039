"""The points game as a Markov chain: balances in the state, a numba kernel, a hash-indexed space.

A player's *local state* is a status (0 bankrupt, 1..G-1 the square of a player
still racing, G arrived), whether mutual aid is used up, and the balance in
*levels* of the points unit (the gcd of every amount and starting balance,
:meth:`PuntiRules.unit`). The points in play are constant (every balance plus
the bank), so a balance is at most that total and the bank's holding is the
total minus the balances. A joint state is the phase of the turn, the seat to
move and every player's local state, numbered in mixed radix::

    id = phase + 3 * (seat + N * (l_1 + L * (l_2 + L * (...))))

That space is far too large to index directly (10**13 ids for three players),
so the reachable states are found breadth-first from the start and numbered
through an open-addressing hash table; the number of states is only known once
they are found, and the exploration stops with :class:`TooLargeError` as soon as
it passes what the memory at hand can hold.

The step of a state (bets, the throw, mutual aid, bankruptcy) is the numba kernel of
:mod:`markov_oca.punti.kernel`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.chain import Chain
from ..core.errors import RulesError, TooLargeError
from ..core.memory import available_memory, gib
from ..core.progress import progress_bar
from ..linalg.solve import progress_order
from .kernel import (
    ACT_BET,
    ACT_THROW,
    MODE_ALWAYS,
    MODE_DECIDE,
    MODE_NEVER,
    _decode_many,
    _details,
    _encode,
    _explore,
    _insert,
    _write,
    grow_table,
    new_table,
)
from .rules import MAX_PLAYERS, PuntiRules

__all__ = ["ACT_BET", "ACT_THROW", "BETS", "MODES", "MODE_ALWAYS", "MODE_DECIDE", "MODE_NEVER", "Decoded", "PuntiChain",
           "PuntiModel", "check_bet", "punti_model"]

MODES = {"never": MODE_NEVER, "always": MODE_ALWAYS}
#: The bet policies: the two kernel modes, and the bet as a decision (:mod:`markov_oca.punti.optimal`).
BETS = ("never", "always", "optimal")


def check_bet(bet: str) -> None:
    """Refuse a bet policy other than :data:`BETS` (:class:`~markov_oca.errors.RulesError`)."""
    if bet not in BETS:
        raise RulesError(f"--bet is one of {', '.join(BETS)}, not {bet!r}")


# ----------------------------------------------------------------------------- the model


@dataclass
class Decoded:
    """Decoded states: phase, seat to move, and per player status, aid used, balance (points)."""

    phase: np.ndarray
    seat: np.ndarray
    status: np.ndarray  # (n, N): 0 bankrupt, 1..G-1 square, G arrived
    aid_used: np.ndarray
    points: np.ndarray


@dataclass
class PuntiChain:
    """A chain of the points game with what the analyses and tests need beside it."""

    chain: Chain
    model: PuntiModel
    mode: int
    act: np.ndarray  # (n, J) int8: 0 a throw's branch, 1 a bet's
    broke: np.ndarray  # (n, J) int8: bitmask of the players who went bankrupt
    masks: list[int]  # outcome k is won by the seats of masks[k] (several: a tie)
    branch_col: np.ndarray | None = None  # (n, J): the kernel's branch of each column; None: the same

    @property
    def n_states(self) -> int:
        return int(self.chain.state_ids.size)


class PuntiModel:
    """A points board for a number of players: encoding, kernel parameters, building."""

    def __init__(self, rules: PuntiRules, players: int):
        if isinstance(players, bool) or not isinstance(players, int) or players < 2:
            raise RulesError(f"players must be a whole number of at least 2, got {players!r}")
        if players > MAX_PLAYERS:
            raise RulesError(f"players must be at most {MAX_PLAYERS}, got {players}")
        self.rules = rules
        self.players = players
        self.unit = rules.unit(players)
        self.total = rules.total_points(players) // self.unit  # levels in play
        self.levels = self.total  # the highest balance, in levels
        G = rules.goal
        self.kind = np.zeros(G + 1, np.int64)
        self.amount = np.zeros(G + 1, np.int64)
        self.pulc = np.zeros(G + 1, np.int64)
        for s, sq in rules.squares.items():
            self.kind[s] = sq.code
            self.amount[s] = sq.amount // self.unit
            self.pulc[s] = sq.pulcinella
        aid_num, aid_den = rules.aid_chance
        self.aid_num, self.aid_den = aid_num, aid_den
        self.denominator = rules.faces * aid_den ** (players - 1)
        n_local = (G + 1) * 2 * (self.levels + 1)
        self.n_local = n_local
        self.params = np.array([
            players, G, rules.faces, self.levels, n_local, rules.bet_cost // self.unit,
            rules.bet_prize // self.unit, rules.aid // self.unit, aid_num, aid_den, rules.aid_uses,
            1 if rules.overshoot == "finish" else 0, self.denominator,
        ], np.int64)
        self.width = 2 + rules.faces * 2 ** (players - 1)  # branches a state can have

    # -------------------------------------------------------------- states

    def check_ids(self) -> None:
        """Refuse a joint state space whose mixed-radix ids overflow 64 bits (the independent-paths
        solve numbers no joint state, so only the chain and the layered solve ask)."""
        if 3 * self.players * float(self.n_local) ** self.players >= 2.0**62:
            raise TooLargeError(f"{self.rules.name} with {self.players} players: state ids overflow 64 bits "
                                f"({self.levels + 1} balance levels; raise the points unit)")

    def start_state(self) -> int:
        self.check_ids()
        N = self.players
        st = np.ones(N, np.int64)
        au = np.zeros(N, np.int64)
        bl = np.array([b // self.unit for b in self.rules.initial_balances(N)], np.int64)
        return int(_encode(0, 0, self.params, st, au, bl))

    def decode(self, ids: np.ndarray) -> Decoded:
        ids = np.asarray(ids, np.int64)
        n, N = ids.size, self.players
        phase = np.empty(n, np.int64)
        seat = np.empty(n, np.int64)
        st = np.empty((n, N), np.int64)
        au = np.empty((n, N), np.int64)
        bl = np.empty((n, N), np.int64)
        _decode_many(ids, self.params, phase, seat, st, au, bl)
        return Decoded(phase, seat, st, au.astype(bool), bl * self.unit)

    def describe_state(self, state_id: int) -> dict:
        d = self.decode(np.array([state_id]))
        G = self.rules.goal
        players = []
        for i in range(self.players):
            s = int(d.status[0, i])
            where = "bankrupt" if s == 0 else ("arrived" if s == G else f"square {s}")
            players.append({"seat": i + 1, "where": where, "points": int(d.points[0, i]),
                            "aid_used": bool(d.aid_used[0, i])})
        phase = ("turn start", "may bet again", "throws")[int(d.phase[0])]
        return {"seat_to_move": int(d.seat[0]) + 1, "phase": phase, "players": players,
                "bank": int(self.total * self.unit - d.points[0].sum())}

    def outcome_masks(self) -> list[int]:
        return list(range(1, 2**self.players))

    def outcome_name(self, mask: int) -> str:
        seats = [str(i + 1) for i in range(self.players) if mask >> i & 1]
        if len(seats) == 1:
            return f"seat {seats[0]} wins"
        return "seats " + ", ".join(seats[:-1]) + " and " + seats[-1] + " tie"

    # -------------------------------------------------------------- memory

    def bytes_per_state(self) -> int:
        """Memory a reachable state costs at the peak of a build and solve, interpreter excluded.

        Exploring: two hash slots (int64 key, int32 value) and a queue entry; the branches: next and
        numerator (int32), action and bankruptcies (int8); the state id, the sweep order, mover and
        turn flag; the forward sweeps' split transpose (12 bytes an entry, taken as half the width,
        as measured: 5.6 and 4.6 transitions a state on the shipped board's 14 columns) and six
        vectors. Measured (benchmarks/chain_bytes.py): the estimate is 0.9-1.1 times the peak.
        """
        return 2 * 12 + 8 + self.width * (4 + 4 + 1 + 1) + 8 + 8 + 2 + 12 * (self.width // 2) + 6 * 8

    def state_budget(self) -> int:
        return int(available_memory() * 0.8) // self.bytes_per_state()

    def estimate_states(self) -> int:
        """A rough count of the reachable states, to refuse hopeless builds before exploring.

        Each player is taken to spread over its squares times at most ``4 (G - 1)`` balance
        levels, and each extra player to add only a twentieth of that spread. Measured on the
        shipped board (G = 37, 121 levels): 345,889 states for two players never betting and
        3,858,403 always betting, against 5.7 million estimated; more than 100 million for three
        players (exploration stopped), against 1.9 billion estimated. The exploration itself
        stops at the memory budget whatever this says.
        """
        G = self.rules.goal
        per_player = (G - 1) * min(self.levels + 1, 4 * (G - 1))
        return int(3 * self.players * per_player ** self.players * 0.05 ** (self.players - 1))

    def fits_chain(self) -> bool:
        """Whether the whole chain may fit in memory, by :meth:`estimate_states` (rough, generous)."""
        return self.estimate_states() <= 20 * self.state_budget()

    def check_memory(self) -> None:
        if not self.fits_chain():
            est = self.estimate_states()
            raise TooLargeError(
                f"{self.rules.name} with {self.players} players: about {est:,} states (a rough estimate), "
                f"{gib(est * self.bytes_per_state())}; "
                f"{gib(available_memory())} available")

    # -------------------------------------------------------------- building

    def kernel_args(self) -> tuple:
        """The kernel's model arguments: (parameters, levels in play, (kind, amount, Pulcinellas) by square)."""
        return (self.params, self.total, (self.kind, self.amount, self.pulc))

    def explore(self, mode: int, progress: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reachable state ids in discovery order, and the hash table that numbers them."""
        budget = self.state_budget()
        cap = 1 << 16
        keys, vals = new_table(2 * cap)
        queue = np.empty(cap, np.int64)
        start = self.start_state()
        _insert(keys, vals, start, 0)
        queue[0] = start
        head, tail = 0, 1
        with progress_bar(progress, "exploring states") as bar:
            task = bar.add_task("exploring states", total=None)
            while head < tail:
                head, tail = _explore(mode, *self.kernel_args(), keys, vals, queue, head, tail, 500_000, self.width)
                bar.update(task, completed=head, total=tail)
                if tail > budget:
                    raise TooLargeError(
                        f"{self.rules.name} with {self.players} players: more than {tail:,} states "
                        f"(about {gib(tail * self.bytes_per_state())} and growing); "
                        f"{gib(available_memory())} available")
                if head < tail and (tail + self.width >= queue.size or tail + self.width >= keys.size // 2):
                    queue = np.concatenate([queue, np.empty(queue.size, np.int64)])
                    keys, vals = grow_table(keys, vals)
        return queue[:tail].copy(), keys, vals

    def build(self, mode: int, progress: bool = False) -> PuntiChain:
        """Explore and compile: a chain for ``mode`` never/always, the decision process for 0."""
        self.check_memory()
        ids, keys, vals = self.explore(mode, progress)
        n_states = ids.size
        masks = self.outcome_masks()
        n = n_states + len(masks)
        J = self.width
        nxt = np.full((n, J), -1, np.int32)
        pnum = np.zeros((n, J), np.int32)
        act = np.zeros((n, J), np.int8)
        broke = np.zeros((n, J), np.int8)
        block = 200_000
        with progress_bar(progress, "writing transitions") as bar:
            task = bar.add_task("writing transitions", total=n_states)
            for lo in range(0, n_states, block):
                hi = min(n_states, lo + block)
                _write(ids, keys, vals, n_states, mode, *self.kernel_args(), nxt, pnum, act, broke, lo, hi)
                bar.update(task, completed=hi)
        del keys, vals
        for k in range(len(masks)):
            nxt[n_states + k, 0] = n_states + k
            pnum[n_states + k, 0] = self.denominator
        # Trim the unused branch columns.
        used = int((nxt >= 0).sum(axis=1).max())
        nxt, pnum, act, broke = (a[:, :used].copy() for a in (nxt, pnum, act, broke))
        return self._chain(ids, nxt, pnum, act, broke, mode)

    def _chain(self, ids: np.ndarray, nxt: np.ndarray, pnum: np.ndarray, act: np.ndarray, broke: np.ndarray,
               mode: int) -> PuntiChain:
        n_states = ids.size
        masks = self.outcome_masks()
        n = n_states + len(masks)
        d = self.decode(ids)
        mover = np.full(n, -1, np.int8)
        mover[:n_states] = d.seat
        turn_start = np.zeros(n, bool)
        turn_start[:n_states] = d.phase == 0
        valid = nxt >= 0
        throws = valid & (act == ACT_THROW)
        throws[n_states:] = False
        chain = Chain(
            next=nxt,
            pnum=pnum,
            denom=self.denominator,
            init=0,
            outcomes={self.outcome_name(m): n_states + k for k, m in enumerate(masks)},
            players=self.players,
            mover=mover,
            state_rewards={"turns": turn_start},
            branch_rewards={"throws": throws},
            turn_start=turn_start,
            state_ids=ids,
            describe_state=self.describe_state,
            sweep_order=progress_order(self.progress_key(ids, n)),
        )
        return PuntiChain(chain, self, mode, act, broke, masks)

    def progress_key(self, ids: np.ndarray, n: int) -> np.ndarray:
        """Grows along the game: every player's square (arrived and bankrupt count as the end), then phase."""
        d = self.decode(ids)
        G = self.rules.goal
        where = np.where((d.status == 0) | (d.status == G), G, d.status).sum(axis=1)
        key = np.full(n, np.iinfo(np.int64).max // 4, np.int64)
        key[:ids.size] = where * 3 + d.phase
        return key

    def details(self, pc: PuntiChain, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Recompute, for the branches of ``rows`` (default all states): the bank's gain in points,
        the mutual-aid masks, and the final balances in points (-1 where the game goes on).

        The kernel is deterministic, so branch ``j`` here is branch ``j`` of the chain (for a chain
        selected from the decision process, pass the decision process's mode and map the columns).
        """
        ids = pc.chain.state_ids
        rows = np.arange(ids.size) if rows is None else np.asarray(rows, np.int64)
        J = self.width
        bank = np.zeros((rows.size, J), np.int64)
        aid = np.zeros((rows.size, J), np.int8)
        final = np.full((rows.size, J, self.players), -1, np.int64)
        _details(ids, rows, pc.mode, *self.kernel_args(), J, bank, aid, final)
        final = np.where(final >= 0, final * self.unit, -1)
        width = pc.chain.next.shape[1]
        if pc.branch_col is None:
            return bank[:, :width] * self.unit, aid[:, :width], final[:, :width]
        cols = np.maximum(pc.branch_col[rows], 0).astype(np.int64)
        r = np.arange(rows.size)[:, None]
        return bank[r, cols] * self.unit, aid[r, cols], final[r, cols]


def punti_model(rules: PuntiRules, players: int | None = None) -> PuntiModel:
    """The model of ``rules`` for ``players`` players (the board's default when None)."""
    return PuntiModel(rules, rules.default_players if players is None else players)
