"""Concrete games of a points board, played from the rules (not the chain), with or without postcards.

The simulator is a second, plain-Python reading of the same rules as the kernel
(:mod:`markov_oca.punti.model`): the tests compare the two. It also plays what the
chain leaves out, the postcards of the rule text's sections 10-13, under these stated policies:

* **dealing**: the deck is shuffled and each player is dealt ``per_player`` cards
  (2 when more than five play), face up; the rest stay in the deck;
* **playing a card whenever it cancels a loss**: a player who lands on a square
  that costs them points (pay the bank, pay every other player) and holds that
  square's card plays it, or else a jolly: the move is undone (back to the square
  the throw started from, no effect, no Pulcinella bet). When a player lands on a
  square that collects from every other player, the first other player in seat
  order who holds that square's card plays it, or else the first holding a jolly:
  the move is undone the same way. A card is played once, then discarded;
* **never**: a card is not played against a gain that costs nobody (the bank
  pays), a jolly is not spent to cancel another card, and cards are never bought,
  sold, traded (section 12) or exchanged with the deck (section 13).

Why these are simulated and not in the exact chain: the postcards are decisions
between people (when to play, whom to sell to, at what price, whether to trade two
cards for an unseen one); the rule text gives no rule that makes them chance, so any
exact model would be one arbitrary policy among many, and the hands (which of 21
cards each player still holds) would multiply the state space by thousands.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.sampling import SimSummary
from .rules import PuntiRules


@dataclass
class SimResult:
    """Counts over ``games`` simulated games."""

    players: int
    bet: str
    postcards: bool
    games: int
    seed: int
    outcomes: dict[int, int] = field(default_factory=dict)  # mask of the leaders -> games
    win: list[int] = field(default_factory=list)  # games won alone, per seat
    tie: list[int] = field(default_factory=list)
    share: list[float] = field(default_factory=list)  # summed win shares
    bankrupt: list[int] = field(default_factory=list)
    points: list[float] = field(default_factory=list)  # summed final points
    points_sq: list[float] = field(default_factory=list)
    turns: int = 0
    turns_sq: int = 0
    cards_played: int = 0

    def mean(self, name: str) -> list[float]:
        return [x / self.games for x in getattr(self, name)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "players": self.players, "bet": self.bet, "postcards": self.postcards, "games": self.games,
            "seed": self.seed, "win": self.mean("win"), "tie": self.mean("tie"), "win_share": self.mean("share"),
            "bankrupt": self.mean("bankrupt"), "points": self.mean("points"), "turns": self.turns / self.games,
            "cards_played": self.cards_played / self.games,
        }


class _Game:
    """One game in play; the bank holds what the players do not."""

    def __init__(self, rules: PuntiRules, players: int, rng: np.random.Generator, bet: str,
                 policy: dict[int, bool] | None, postcards: bool, model: Any = None):
        self.r, self.N, self.rng, self.bet, self.policy, self.model = rules, players, rng, bet, policy, model
        self.G = rules.goal
        self.bal = list(rules.initial_balances(players))
        self.bank = rules.initial_bank(players)
        self.square = [1] * players  # 0 bankrupt, G arrived
        self.aid_used = [False] * players
        self.pending = [0] * players
        self.broke = [False] * players
        self.cards_played = 0
        self.hands: list[set[int]] = [set() for _ in range(players)]
        if postcards and rules.deck:
            deck = list(rules.deck)
            rng.shuffle(deck)
            per = rules.cards_per_player if players <= 5 else min(rules.cards_per_player, 2)
            for i in range(players):
                self.hands[i] = set(deck[i * per:(i + 1) * per])

    def die(self) -> int:
        return int(self.rng.integers(1, self.r.faces + 1))

    def in_game(self, i: int) -> bool:
        return self.square[i] != 0

    def racing(self) -> list[int]:
        return [i for i in range(self.N) if 1 <= self.square[i] < self.G]

    # ---------------------------------------------------------------- money

    def charge(self, p: int, amount: int, creditor: int | str) -> None:
        """``p`` owes ``amount`` to the bank, to every other player (``each``: per head) or to a seat."""
        r = self.r
        if self.bal[p] < amount and r.aid_uses > 0 and not self.aid_used[p]:
            self.aid_used[p] = True
            if any(self.die() == 1 for _ in range(r.aid_throws)):  # the declared number: any face will do
                for q in range(self.N):
                    if q != p and self.in_game(q):
                        give = min(r.aid, self.bal[q])
                        self.bal[q] -= give
                        self.bal[p] += give
        if self.bal[p] >= amount:
            self.bal[p] -= amount
            if creditor == "bank":
                self.bank += amount
            elif creditor == "each":
                per = amount // max(1, sum(1 for q in range(self.N) if q != p and self.in_game(q)))
                for q in range(self.N):
                    if q != p and self.in_game(q):
                        self.bal[q] += per
            else:
                self.bal[int(creditor)] += amount
        else:  # bankrupt: what is left goes to the bank, nothing to the creditor
            self.bank += self.bal[p]
            self.bal[p] = 0
            self.square[p] = 0
            self.broke[p] = True

    def from_bank(self, p: int, amount: int) -> None:
        pay = min(amount, self.bank)
        self.bank -= pay
        self.bal[p] += pay

    # ---------------------------------------------------------------- decisions

    def wants_bet(self, m: int, phase: int) -> bool:
        if self.bet == "never":
            return False
        if self.bet == "always":
            return True
        assert self.policy is not None and self.model is not None
        return self.policy.get(self._state_id(phase, m), False)

    def _state_id(self, phase: int, seat: int) -> int:
        m = self.model
        L1 = m.levels + 1
        code = 0
        for i in range(self.N - 1, -1, -1):
            code = code * m.n_local + (self.square[i] * 2 + int(self.aid_used[i])) * L1 + self.bal[i] // m.unit
        return phase + 3 * (seat + self.N * code)

    def cancels(self, m: int, t: int) -> bool:
        """Whether a postcard undoes ``m``'s landing on ``t`` (the policies of the module docstring)."""
        sq = self.r.square(t)
        if sq.kind in ("pay_bank", "pay_each"):
            holders = [m]
        elif sq.kind == "collect_each":
            holders = [(m + k) % self.N for k in range(1, self.N) if self.in_game((m + k) % self.N)]
        else:
            return False
        for q in holders:
            if t in self.hands[q]:
                self.hands[q].discard(t)
                self.cards_played += 1
                return True
        for q in holders:
            jolly = next((c for c in self.r.jolly if c in self.hands[q]), None)
            if jolly is not None:
                self.hands[q].discard(jolly)
                self.cards_played += 1
                return True
        return False

    # ---------------------------------------------------------------- play

    def play(self, turn_limit: int = 100_000) -> int:
        """Play to the end; returns the number of turns."""
        r, G = self.r, self.G
        seat, turns = 0, 0
        while turns < turn_limit:
            m = seat
            turns += 1
            left, phase = self.pending[m], 0
            self.pending[m] = 0
            while left > 0 and self.bal[m] >= r.bet_cost and self.wants_bet(m, phase):
                self.bal[m] -= r.bet_cost
                self.bank += r.bet_cost
                if self.die() == 1:  # the declared number
                    self.from_bank(m, r.bet_prize)
                left -= 1
                phase = 1 if left > 0 else 2
            origin = self.square[m]
            t = origin + self.die()
            if t > G:
                t = G if r.overshoot == "finish" else 2 * G - t
            if not (self.hands and any(self.hands) and self.cancels(m, t)):
                self.square[m] = t
                sq = r.square(t)
                if sq.kind == "pay_bank":
                    self.charge(m, sq.amount, "bank")
                elif sq.kind == "collect_bank":
                    self.from_bank(m, sq.amount)
                elif sq.kind == "pay_each":
                    others = sum(1 for q in range(self.N) if q != m and self.in_game(q))
                    if others:
                        self.charge(m, sq.amount * others, "each")
                elif sq.kind == "collect_each":
                    for k in range(1, self.N):
                        q = (m + k) % self.N
                        if self.in_game(q):
                            self.charge(q, sq.amount, m)
                if self.in_game(m) and self.square[m] < G:
                    self.pending[m] = sq.pulcinella
            racing = self.racing()
            if len(racing) <= 1:
                return turns
            seat = next(q for q in ((m + k) % self.N for k in range(1, self.N + 1)) if q in racing)
        return turns


def simulate_punti(rules: PuntiRules, players: int | None = None, *, bet: str = "never", games: int = 10_000,
                   seed: int = 1, postcards: bool = False, policy: dict[int, bool] | None = None,
                   on_game: Callable[[int, int], None] | None = None) -> SimResult:
    """Play ``games`` games of ``rules`` (see the module docstring for the postcard policies).

    ``on_game(leaders, turns)``, when given, is told each game's result as it ends: the
    bit mask of the seats with the most points and the game's length in turns (the
    cross-check's sample).

    ``bet`` is ``never``, ``always`` or ``optimal`` (then ``policy`` maps the chain's state ids of
    the deciding states to whether they bet; states it does not know, such as those only the
    postcards make, do not bet).
    """
    from .model import punti_model

    N = rules.default_players if players is None else players
    model = punti_model(rules, N) if bet == "optimal" else None
    rng = np.random.default_rng(seed)
    res = SimResult(N, bet, postcards, 0, seed, win=[0] * N, tie=[0] * N, share=[0.0] * N, bankrupt=[0] * N,
                    points=[0.0] * N, points_sq=[0.0] * N)
    for _ in range(games):
        g = _Game(rules, N, rng, bet, policy, postcards, model)
        turns = g.play()
        alive = [i for i in range(N) if not g.broke[i]]
        best = max(g.bal[i] for i in alive)
        leaders = [i for i in alive if g.bal[i] == best]
        mask = sum(1 << i for i in leaders)
        res.outcomes[mask] = res.outcomes.get(mask, 0) + 1
        if on_game is not None:
            on_game(mask, turns)
        for i in leaders:
            res.share[i] += 1.0 / len(leaders)
            if len(leaders) == 1:
                res.win[i] += 1
            else:
                res.tie[i] += 1
        for i in range(N):
            res.bankrupt[i] += g.broke[i]
            res.points[i] += g.bal[i]
            res.points_sq[i] += g.bal[i] ** 2
        res.turns += turns
        res.turns_sq += turns * turns
        res.cards_played += g.cards_played
        res.games += 1
        assert sum(g.bal) + g.bank == rules.total_points(N), "points are conserved"
    return res


def simulate_summary(rules: PuntiRules, players: int | None = None, games: int = 10_000, *, bet: str = "never",
                     policy: dict[int, bool] | None = None, seed: int = 0, turn_limit: int = 10_000,
                     on_batch: Callable | None = None, progress: bool = False) -> SimSummary:
    """Games streamed into a :class:`~markov_oca.analysis.sampling.SimSummary` (for ``simulate`` and ``crosscheck``).

    Outcomes are named as the chain names them (``seat k wins``, ``seats 1 and 2 tie``); a
    game longer than ``turn_limit`` turns counts as unfinished. ``bet = "optimal"`` needs the
    policy of :func:`~markov_oca.punti.optimal.optimal_chain`; it is computed when not given.
    """
    import time

    from ..core.progress import progress_bar
    from .model import check_bet, punti_model

    check_bet(bet)
    model = punti_model(rules, players)
    N = model.players
    if bet == "optimal" and policy is None:
        from .optimal import optimal_chain

        policy = optimal_chain(model, progress=progress)[2]
    masks = model.outcome_masks()
    index = {m: k for k, m in enumerate(masks)}
    s = SimSummary(rules.name, [f"seat {k + 1}" for k in range(N)], [model.outcome_name(m) for m in masks],
                   turn_limit, seed)
    rows: list[tuple[int, int]] = []

    def record(mask: int, turns: int) -> None:
        rows.append((index[mask], turns))

    t0 = time.perf_counter()
    with progress_bar(progress) as bar:
        task = bar.add_task(f"simulating {games:,} games", total=games)
        done = 0
        while done < games:
            n = min(10_000, games - done)
            rows.clear()
            simulate_punti(rules, N, bet=bet, games=n, seed=seed * 1_000_003 + done, policy=policy, on_game=record)
            w, t = (np.array(x, np.int64) for x in zip(*rows, strict=True))
            over = t > turn_limit
            w[over], t[over] = -1, turn_limit
            s.add_batch(w, t, np.zeros_like(t))
            if on_batch is not None:
                on_batch(w, t, np.zeros_like(t))
            done += n
            bar.update(task, completed=done)
    s.elapsed = time.perf_counter() - t0
    return s


def postcard_effect(rules: PuntiRules, players: int, bet: str, games: int, seed: int = 1,
                    policy: dict[int, bool] | None = None) -> dict[str, Any]:
    """Simulated win shares with and without the postcards (same seed), for the report."""
    without = simulate_punti(rules, players, bet=bet, games=games, seed=seed, policy=policy)
    with_ = simulate_punti(rules, players, bet=bet, games=games, seed=seed, postcards=True, policy=policy)
    return {
        "games": games, "seed": seed,
        "policy": "play a card whenever it cancels a loss (own landing on a paying square, or another's "
                  "landing on a square that collects from everyone); jolly when the card is missing; never trade",
        "without": without.to_dict(), "with": with_.to_dict(),
        "stderr": 0.5 / math.sqrt(games),
    }
