"""The points game's numba kernel: a state's id, every branch of one step, the hash table, exploration.

A joint state is the phase of the turn, the seat to move and every player's local
state (status, aid used, balance in levels; :mod:`markov_oca.punti.model`), numbered
in mixed radix::

    id = phase + 3 * (seat + N * (l_1 + L * (l_2 + L * (...))))

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

import numba
import numpy as np

from .rules import COLLECT_BANK, COLLECT_EACH, PAY_BANK, PAY_EACH

MODE_DECIDE, MODE_NEVER, MODE_ALWAYS = 0, 1, 2
ACT_THROW, ACT_BET = 0, 1
_EMPTY = -1
#: The kernel's scalar parameters, in order (see :class:`~markov_oca.punti.model.PuntiModel`, ``params``).
_P_N, _P_G, _P_F, _P_L, _P_NL, _P_BET, _P_PRIZE, _P_AID, _P_AIDN, _P_AIDD, _P_USES, _P_FINISH, _P_D = range(13)


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
def _restore(N, total, st0, au0, bl0, st, au, bl):
    """Copy the decoded state into the work arrays; returns the bank's holding (total - balances)."""
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
def _bet_branches(m, nphase, prm, total, st0, au0, bl0, st, au, bl, out_next, out_p, out_act, out_bank, out_broke,
                  out_aid):
    """The two branches of mover ``m``'s bet (lost, won), into phase ``nphase``; returns 2."""
    N, F, bet, prize, D = prm[_P_N], prm[_P_F], prm[_P_BET], prm[_P_PRIZE], prm[_P_D]
    for win in range(2):
        bank = _restore(N, total, st0, au0, bl0, st, au, bl)
        bank0 = bank
        bl[m] -= bet
        bank += bet
        if win == 1:
            pay = prize if prize < bank else bank
            bl[m] += pay
            bank -= pay
        out_next[win] = _encode(nphase, m, prm, st, au, bl)
        out_p[win] = D // F if win == 1 else D // F * (F - 1)
        out_act[win] = 1
        out_bank[win] = bank - bank0
        out_broke[win] = 0
        out_aid[win] = 0
    return 2


@numba.njit(cache=True, inline="always")
def _target(square, d, G, finish):
    """Where a throw of ``d`` from ``square`` lands (bouncing back past the end square unless ``finish``)."""
    t = square + d
    if t > G:
        t = G if finish == 1 else 2 * G - t
    return t


@numba.njit(cache=True, inline="always")
def _charges(m, kind, a, N, st0, payer, amt, cred):
    """The charges landing on a square of ``kind`` and amount ``a`` makes, into the work arrays
    (payer, amount, creditor: -1 the bank, -2 every other player); returns how many."""
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
def _give_aid(who, N, aid, st, bl):
    """Mutual aid granted: every other player still in gives ``aid`` (or all they hold)."""
    for q in range(N):
        if q != who and st[q] != 0:
            give = aid if aid < bl[q] else bl[q]
            bl[q] -= give
            bl[who] += give


@numba.njit(cache=True)
def _expand(state, mode, prm, total, board, work, out):
    """Every branch of one step from ``state`` into ``out``; returns how many.

    ``board`` is (kind, amount, Pulcinellas) by square; ``work`` and ``out`` come from
    :func:`_scratch`. ``out`` holds ids, or ``-mask`` (the leaders) when the game ends with
    the final balances (levels) in its last array; the points (levels) the bank gained; the
    bitmasks of the players who went bankrupt / asked for mutual aid (bit N + i: the aid of
    player i succeeded). The loop over a landing's charges stays in this body: split into
    called steps, passing the arrays on every branch costs more than the step itself.
    """
    sq_kind, sq_amt, sq_pulc = board
    st0, au0, bl0, st, au, bl, final, payer, amt, cred = work
    out_next, out_p, out_act, out_bank, out_broke, out_aid, out_final = out
    N, G, F, aid, aid_num, aid_den = prm[_P_N], prm[_P_G], prm[_P_F], prm[_P_AID], prm[_P_AIDN], prm[_P_AIDD]
    phase, m = _decode(state, prm, st0, au0, bl0)
    count = 0
    left = _bets_left(phase, st0[m], prm, sq_pulc)
    if left > 0 and bl0[m] >= prm[_P_BET] and mode != MODE_NEVER:
        count = _bet_branches(m, 1 if left > 1 else 2, prm, total, st0, au0, bl0, st, au, bl, out_next, out_p,
                              out_act, out_bank, out_broke, out_aid)
        if mode == MODE_ALWAYS:
            return count
    for d in range(1, F + 1):  # the throw
        t = _target(st0[m], d, G, prm[_P_FINISH])
        kind, a = sq_kind[t], sq_amt[t]
        nch = _charges(m, kind, a, N, st0, payer, amt, cred)
        for code in range(1 << nch):  # bit k: payer k's mutual aid succeeds (when asked for)
            bank = _restore(N, total, st0, au0, bl0, st, au, bl)
            bank0 = bank
            st[m] = t
            if kind == COLLECT_BANK:
                pay = a if a < bank else bank
                bl[m] += pay
                bank -= pay
            p, broke, aidm = 1, 0, 0
            for k in range(nch):
                who, need = payer[k], amt[k]
                if bl[who] < need and prm[_P_USES] > 0 and au[who] == 0:
                    au[who] = 1
                    aidm |= 1 << who
                    if (code >> k) & 1 == 1:
                        p *= aid_num
                        aidm |= 1 << (N + who)
                        _give_aid(who, N, aid, st, bl)
                    else:
                        p *= aid_den - aid_num
                elif (code >> k) & 1 == 1:
                    p = 0  # an aid not asked for cannot succeed
                    break
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
                else:  # bankrupt: the points go to the bank
                    broke |= 1 << who
                    bank += bl[who]
                    bl[who], st[who], au[who] = 0, 0, 0
            if p == 0:
                continue
            for _k in range(nch, N - 1):
                p *= aid_den
            for i in range(N):
                final[i] = 0
            out_next[count] = _after_step(m, prm, st, au, bl, final)
            out_p[count], out_act[count], out_bank[count] = p, 0, bank - bank0
            out_broke[count], out_aid[count] = broke, aidm
            for i in range(N):
                out_final[count, i] = final[i]
            count += 1
    return count


# ----------------------------------------------------------------------------- hash table


@numba.njit(cache=True)
def _slot(key, mask):
    h = np.uint64(key) * np.uint64(11400714819323198485)
    return np.int64((h >> np.uint64(20)) & np.uint64(mask))


@numba.njit(cache=True, inline="always")
def _probe(keys, key):
    """The slot holding ``key``, or the empty slot where it goes (linear probing)."""
    mask = keys.size - 1
    i = _slot(key, mask)
    while keys[i] != key and keys[i] != _EMPTY:
        i = (i + 1) & mask
    return i


@numba.njit(cache=True)
def _lookup(keys, vals, key):
    i = _probe(keys, key)
    return vals[i] if keys[i] == key else -1


@numba.njit(cache=True)
def _insert(keys, vals, key, value):
    """Insert ``key`` unless present; returns its value (the new one when inserted)."""
    i = _probe(keys, key)
    if keys[i] == _EMPTY:
        keys[i] = key
        vals[i] = value
        return value
    return vals[i]


@numba.njit(cache=True)
def _rehash(keys, vals, new_keys, new_vals):
    for i in range(keys.size):
        if keys[i] != _EMPTY:
            _insert(new_keys, new_vals, keys[i], vals[i])


def new_table(slots: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty hash table of ``slots`` slots (a power of two): int64 keys, int32 values."""
    return np.full(slots, _EMPTY, np.int64), np.full(slots, -1, np.int32)


def grow_table(keys: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same entries in a table twice the size."""
    new_keys, new_vals = new_table(keys.size * 2)
    _rehash(keys, vals, new_keys, new_vals)
    return new_keys, new_vals


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
