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

A turn: at phase 0 a player standing on a Pulcinella square (with the stake in
hand) may bet; a bet is a step of its own (the bank's die: a right call with
chance 1/faces), after which the player may bet again on a square with two
Pulcinellas (phase 1) or throws (phase 2). A throw moves the piece (bouncing back
past the end square) and applies the landing square's money effect. A loss the
player cannot cover calls for mutual aid (once per player; a chance branch):
on success every other player gives the aid (or all they hold), then the loss is
paid if it can be; otherwise the player is bankrupt: their points go to the bank
and they leave. The game ends when at most one player is still racing.

The kernel's ``mode``: 0 keeps both choices at a decision state (the decision
process, branches tagged with the action), 1 never bets, 2 always bets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..chain import Chain
from ..errors import RulesError, TooLargeError
from ..memory import available_memory, gib
from ..progress import progress_bar
from ..solve import progress_order
from .rules import COLLECT_BANK, COLLECT_EACH, MAX_PLAYERS, PAY_BANK, PAY_EACH, PuntiRules

MODE_DECIDE, MODE_NEVER, MODE_ALWAYS = 0, 1, 2
MODES = {"never": MODE_NEVER, "always": MODE_ALWAYS}
#: The bet policies: the two kernel modes, and the bet as a decision (:mod:`markov_oca.punti.optimal`).
BETS = ("never", "always", "optimal")
ACT_THROW, ACT_BET = 0, 1
_EMPTY = -1
#: The kernel's scalar parameters, in order (see :meth:`PuntiModel.params`).
_P_N, _P_G, _P_F, _P_L, _P_NL, _P_BET, _P_PRIZE, _P_AID, _P_AIDN, _P_AIDD, _P_USES, _P_FINISH, _P_D = range(13)


def check_bet(bet: str) -> None:
    """Refuse a bet policy other than :data:`BETS` (:class:`~markov_oca.errors.RulesError`)."""
    if bet not in BETS:
        raise RulesError(f"--bet is one of {', '.join(BETS)}, not {bet!r}")


# ----------------------------------------------------------------------------- encoding


@numba.njit(cache=True, inline="always")
def _split(state, N):
    """(phase, seat to move, every player's local state packed in mixed radix) of a state id."""
    rest = state // 3
    return state % 3, rest % N, rest // N


@numba.njit(cache=True, inline="always")
def _status(loc, prm):
    """A player's status (0 bankrupt, 1..G-1 a square, G arrived) from their local state."""
    return loc // (prm[_P_L] + 1) // 2


@numba.njit(cache=True)
def _decode(state, prm, st, au, bl):
    N, nl, L1 = prm[_P_N], prm[_P_NL], prm[_P_L] + 1
    phase, seat, rest = _split(state, N)
    for i in range(N):
        loc = rest % nl
        rest //= nl
        bl[i] = loc % L1
        au[i] = (loc // L1) % 2
        st[i] = _status(loc, prm)
    return phase, seat


@numba.njit(cache=True)
def _encode(phase, seat, prm, st, au, bl):
    N, nl, L1 = prm[_P_N], prm[_P_NL], prm[_P_L] + 1
    code = 0
    for i in range(N - 1, -1, -1):
        code = code * nl + (st[i] * 2 + au[i]) * L1 + bl[i]
    return phase + 3 * (seat + N * code)


# ----------------------------------------------------------------------------- kernel
#
# The kernel's work arrays (see :func:`_scratch`): ``work`` holds, each of N entries, the state
# decoded (st0, au0, bl0: status, aid used, balance), the same changed by a branch (st, au, bl),
# the final balances of a branch that ends the game, and a landing's charges (payer, amount,
# creditor); ``out`` holds one entry per branch: next id, numerator, action, the bank's gain,
# the bankrupt and aid masks, and (J x N) the final balances.


@numba.njit(cache=True)
def _after_step(mover, prm, st, au, bl, final):
    """The next state's id after a throw, or ``-mask`` of the leaders when the game is over."""
    N, G = prm[_P_N], prm[_P_G]
    racing = 0
    for i in range(N):
        if 1 <= st[i] < G:
            racing += 1
    if racing <= 1:
        best = -1
        for i in range(N):
            if st[i] != 0 and bl[i] > best:
                best = bl[i]
        mask = 0
        for i in range(N):
            final[i] = bl[i]
            if st[i] != 0 and bl[i] == best:
                mask |= 1 << i
        return -mask
    for step in range(1, N + 1):
        k = (mover + step) % N
        if 1 <= st[k] < G:
            return _encode(0, k, prm, st, au, bl)
    return -1  # unreachable: at least two are racing


@numba.njit(cache=True, inline="always")
def _restore(N, total, work):
    """Copy the decoded state into the work arrays; returns the bank's holding (total - balances)."""
    st0, au0, bl0, st, au, bl = work[0], work[1], work[2], work[3], work[4], work[5]
    bank = total
    for i in range(N):
        st[i] = st0[i]
        au[i] = au0[i]
        bl[i] = bl0[i]
        bank -= bl0[i]
    return bank


@numba.njit(cache=True)
def _bets_left(phase, square, prm, sq_pulc):
    if phase == 0:
        return sq_pulc[square]
    if phase == 1:
        return 1
    return 0


@numba.njit(cache=True, inline="always")
def _emit(out, j, nxt, p, act, gain, broke, aidm):
    """Write branch ``j``: next id (or ``-mask``), numerator, action, the bank's gain, the masks."""
    out_next, out_p, out_act, out_bank, out_broke, out_aid = out[0], out[1], out[2], out[3], out[4], out[5]
    out_next[j] = nxt
    out_p[j] = p
    out_act[j] = act
    out_bank[j] = gain
    out_broke[j] = broke
    out_aid[j] = aidm


@numba.njit(cache=True, inline="always")
def _bet_branches(m, nphase, prm, total, work, out):
    """The two branches of mover ``m``'s bet (lost, won), into phase ``nphase``; returns 2."""
    N, F, bet, prize, D = prm[_P_N], prm[_P_F], prm[_P_BET], prm[_P_PRIZE], prm[_P_D]
    st, au, bl = work[3], work[4], work[5]
    for win in range(2):
        bank = _restore(N, total, work)
        bank0 = bank
        bl[m] -= bet
        bank += bet
        if win == 1:
            pay = prize if prize < bank else bank
            bl[m] += pay
            bank -= pay
        _emit(out, win, _encode(nphase, m, prm, st, au, bl), D // F if win == 1 else D // F * (F - 1), 1,
              bank - bank0, 0, 0)
    return 2


@numba.njit(cache=True, inline="always")
def _charges(m, kind, a, N, work):
    """The charges landing on a square of ``kind`` and amount ``a`` makes, into the work arrays
    (payer, amount, creditor: -1 the bank, -2 every other player); returns how many."""
    st0, payer, amt, cred = work[0], work[7], work[8], work[9]
    nch = 0
    if kind == PAY_BANK:
        payer[0], amt[0], cred[0] = m, a, -1
        nch = 1
    elif kind == PAY_EACH:
        others = 0
        for i in range(N):
            if i != m and st0[i] != 0:
                others += 1
        if others > 0:
            payer[0], amt[0], cred[0] = m, a * others, -2
            nch = 1
    elif kind == COLLECT_EACH:
        for step in range(1, N):
            q = (m + step) % N
            if st0[q] != 0:
                payer[nch], amt[nch], cred[nch] = q, a, m
                nch += 1
    return nch


@numba.njit(cache=True, inline="always")
def _settle(code, nch, a, prm, work, bank):
    """Pay the ``nch`` charges, bit k of ``code`` telling whether payer k's mutual aid succeeds
    (when they ask for it). Returns (numerator, bank, bankrupt mask, aid mask); numerator 0: a
    draw that cannot happen (an aid that is not asked for cannot succeed)."""
    N, aid, aid_num, aid_den, uses = prm[_P_N], prm[_P_AID], prm[_P_AIDN], prm[_P_AIDD], prm[_P_USES]
    st, au, bl, payer, amt, cred = work[3], work[4], work[5], work[7], work[8], work[9]
    p = 1
    broke = 0
    aidm = 0
    for k in range(nch):
        bit = (code >> k) & 1
        who = payer[k]
        need = amt[k]
        if bl[who] < need and uses > 0 and au[who] == 0:
            au[who] = 1
            aidm |= 1 << who
            if bit == 1:
                p *= aid_num
                aidm |= 1 << (N + who)
                for q in range(N):
                    if q != who and st[q] != 0:
                        give = aid if aid < bl[q] else bl[q]
                        bl[q] -= give
                        bl[who] += give
            else:
                p *= aid_den - aid_num
        elif bit == 1:
            return 0, bank, broke, aidm
        else:
            p *= aid_den
        if bl[who] >= need:
            bl[who] -= need
            if cred[k] == -1:
                bank += need
            elif cred[k] == -2:
                for q in range(N):
                    if q != who and st[q] != 0:
                        bl[q] += a
            else:
                bl[cred[k]] += need
        else:
            broke |= 1 << who
            bank += bl[who]
            bl[who] = 0
            st[who] = 0
            au[who] = 0
    return p, bank, broke, aidm


@numba.njit(cache=True, inline="always")
def _throw_branches(m, d, prm, total, board, work, out, count):
    """The branches of mover ``m`` throwing ``d`` (one per draw of the mutual-aid chances that can
    happen), written from entry ``count`` on; returns the new count."""
    N, G, finish, aid_den = prm[_P_N], prm[_P_G], prm[_P_FINISH], prm[_P_AIDD]
    st0, st, au, bl, final = work[0], work[3], work[4], work[5], work[6]
    out_final = out[6]
    t = st0[m] + d
    if t > G:
        t = G if finish == 1 else 2 * G - t
    kind = board[0][t]
    a = board[1][t]
    nch = _charges(m, kind, a, N, work)
    for code in range(1 << nch):
        bank = _restore(N, total, work)
        bank0 = bank
        st[m] = t
        if kind == COLLECT_BANK:
            pay = a if a < bank else bank
            bl[m] += pay
            bank -= pay
        p, bank, broke, aidm = _settle(code, nch, a, prm, work, bank)
        if p == 0:
            continue
        for _k in range(nch, N - 1):
            p *= aid_den
        for i in range(N):
            final[i] = 0
        _emit(out, count, _after_step(m, prm, st, au, bl, final), p, 0, bank - bank0, broke, aidm)
        for i in range(N):
            out_final[count, i] = final[i]
        count += 1
    return count


@numba.njit(cache=True)
def _expand(state, mode, prm, total, board, work, out):
    """Every branch of one step from ``state`` into ``out``; returns how many.

    ``board`` is (kind, amount, Pulcinellas) by square; ``work`` and ``out`` come from
    :func:`_scratch`. ``out`` holds ids, or ``-mask`` (the leaders) when the game ends with
    the final balances (levels) in its last array; the points (levels) the bank gained; the
    bitmasks of the players who went bankrupt / asked for mutual aid (bit N + i: the aid of
    player i succeeded).
    """
    st0, bl0 = work[0], work[2]
    phase, m = _decode(state, prm, st0, work[1], bl0)
    count = 0
    left = _bets_left(phase, st0[m], prm, board[2])
    if left > 0 and bl0[m] >= prm[_P_BET] and mode != MODE_NEVER:
        count = _bet_branches(m, 1 if left > 1 else 2, prm, total, work, out)
        if mode == MODE_ALWAYS:
            return count
    for d in range(1, prm[_P_F] + 1):
        count = _throw_branches(m, d, prm, total, board, work, out, count)
    return count


# ----------------------------------------------------------------------------- hash table


@numba.njit(cache=True)
def _slot(key, mask):
    h = np.uint64(key) * np.uint64(11400714819323198485)
    return np.int64((h >> np.uint64(20)) & np.uint64(mask))


@numba.njit(cache=True)
def _lookup(keys, vals, key):
    mask = keys.size - 1
    i = _slot(key, mask)
    while True:
        k = keys[i]
        if k == key:
            return vals[i]
        if k == _EMPTY:
            return -1
        i = (i + 1) & mask


@numba.njit(cache=True)
def _insert(keys, vals, key, value):
    """Insert ``key`` unless present; returns its value (the new one when inserted)."""
    mask = keys.size - 1
    i = _slot(key, mask)
    while True:
        k = keys[i]
        if k == key:
            return vals[i]
        if k == _EMPTY:
            keys[i] = key
            vals[i] = value
            return value
        i = (i + 1) & mask


@numba.njit(cache=True)
def _rehash(keys, vals, new_keys, new_vals):
    for i in range(keys.size):
        if keys[i] != _EMPTY:
            _insert(new_keys, new_vals, keys[i], vals[i])


# ----------------------------------------------------------------------------- exploration


@numba.njit(cache=True)
def _scratch(N, J):
    """The work arrays of :func:`_expand` for N players and J branches: ``work`` (ten of N entries:
    the state decoded and changed, final balances, a landing's charges) and ``out`` (one entry per
    branch: next id, numerator, action, the bank's gain, bankrupt and aid masks; final balances)."""
    work = (np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
            np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
            np.empty(N, np.int64), np.empty(N, np.int64))
    out = (np.empty(J, np.int64), np.empty(J, np.int64), np.empty(J, np.int8), np.empty(J, np.int64),
           np.empty(J, np.int8), np.empty(J, np.int8), np.empty((J, N), np.int64))
    return work, out


@numba.njit(cache=True)
def _explore(mode, prm, total, board, keys, vals, queue, head, tail, budget, J):
    work, out = _scratch(prm[_P_N], J)
    out_next = out[0]
    limit = keys.size // 2
    done = 0
    while head < tail and done < budget:
        if tail + J >= queue.size or tail + J >= limit:
            break
        s = queue[head]
        head += 1
        done += 1
        c = _expand(s, mode, prm, total, board, work, out)
        for j in range(c):
            t = out_next[j]
            if t >= 0 and _insert(keys, vals, t, tail) == tail:
                queue[tail] = t
                tail += 1
    return head, tail


@numba.njit(cache=True)
def _write(ids, keys, vals, n_states, mode, prm, total, board, nxt, pnum, act, broke, lo, hi):
    work, out = _scratch(prm[_P_N], nxt.shape[1])
    out_next, out_p, out_act, out_broke = out[0], out[1], out[2], out[4]
    for r in range(lo, hi):
        c = _expand(ids[r], mode, prm, total, board, work, out)
        for j in range(c):
            t = out_next[j]
            nxt[r, j] = _lookup(keys, vals, t) if t >= 0 else n_states + (-t) - 1
            pnum[r, j] = out_p[j]
            act[r, j] = out_act[j]
            broke[r, j] = out_broke[j]


@numba.njit(cache=True)
def _details(ids, rows, mode, prm, total, board, J, bank_out, aid_out, final_out):
    """Per branch of the given states: the bank's gain, the aid mask and the final balances (levels)."""
    N = prm[_P_N]
    work, out = _scratch(N, J)
    out_next, out_bank, out_aid, out_final = out[0], out[3], out[5], out[6]
    for k in range(rows.size):
        c = _expand(ids[rows[k]], mode, prm, total, board, work, out)
        for j in range(c):
            bank_out[k, j] = out_bank[j]
            aid_out[k, j] = out_aid[j]
            for i in range(N):
                final_out[k, j, i] = out_final[j, i] if out_next[j] < 0 else -1


@numba.njit(cache=True)
def _decode_many(ids, prm, phase, seat, st, au, bl):
    N = prm[_P_N]
    s1 = np.empty(N, np.int64)
    a1 = np.empty(N, np.int64)
    b1 = np.empty(N, np.int64)
    for r in range(ids.size):
        ph, se = _decode(ids[r], prm, s1, a1, b1)
        phase[r] = ph
        seat[r] = se
        for i in range(N):
            st[r, i] = s1[i]
            au[r, i] = a1[i]
            bl[r, i] = b1[i]


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
        assert PAY_BANK == 1 and COLLECT_BANK == 2 and COLLECT_EACH == 3 and PAY_EACH == 4

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
        keys = np.full(2 * cap, _EMPTY, np.int64)
        vals = np.full(2 * cap, -1, np.int32)
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
                    new_keys = np.full(keys.size * 2, _EMPTY, np.int64)
                    new_vals = np.full(keys.size * 2, -1, np.int32)
                    _rehash(keys, vals, new_keys, new_vals)
                    keys, vals = new_keys, new_vals
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
