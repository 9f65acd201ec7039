"""The numba goose simulator against the exact chains, and against its plain-Python twin.

The simulator plays the rules move by move (``markov_oca.goose.simulate``),
never the compiled board, so agreement checks the chain compiler. Every
frequency is compared with the exact chance by a z-test at 4.5 standard
errors of the sample (a false alarm has odds of about 1 in 150,000 per
comparison); the standard errors come from the exact distribution and the
number of games (for the mean number of throws, from the sample's variance),
never from tuning. Games cut by the turn limit are accounted
for exactly with the chain's length distribution beyond that limit.
"""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import numba
import numpy as np
import pytest
from support import board

from markov_oca import api
from markov_oca.goose.model import goose_model
from markov_oca.goose.rules import build_goose
from markov_oca.goose.simulate import (
    DEFAULT_TURN_LIMIT,
    flatten_goose,
    game_stream,
    outcome_names,
    play_goose_python,
    simulate_goose,
)

Z = 4.5
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHIPPED = sorted(v["name"] for v in api.variants() if v["family"] == "goose")
FLOAT_SLACK = 1e-9  # rounding in the float chain's sums, far below any standard error used here


def z_ok(count: float, n: int, p: float) -> bool:
    """``count`` successes in ``n`` trials agree with chance ``p`` within Z standard errors."""
    se = math.sqrt(max(p * (1.0 - p), 0.0) / n)
    return abs(count / n - p) <= Z * se + FLOAT_SLACK


def check_against_chain(rules, players: int, games: int, seed: int, turn_limit: int | None = None):
    """Win shares, unfinished share, mean turns, the length CDF and mean throws against the chain."""
    model = goose_model(rules, players)
    chain = model.build()
    assert model.outcome_names() == outcome_names(rules, players)
    sim = simulate_goose(rules, players, games, seed=seed, turn_limit=turn_limit)
    limit = sim.turn_limit
    assert sim.games == games

    probs = chain.outcome_probabilities()
    ld = chain.length_distribution()
    pmf = np.zeros(max(ld.pmf.size, limit + 1))
    pmf[:ld.pmf.size] = ld.pmf
    ended_by_limit = float(pmf[:limit + 1].sum())
    # A game still running after the limit (not deadlocked) is unfinished in the simulation:
    # its chance bounds how far each outcome's share may fall below the chain's.
    cut = max(0.0, 1.0 - ld.never_ends - ended_by_limit)

    assert z_ok(sim.unfinished, games, 1.0 - ended_by_limit), (sim.unfinished / games, 1.0 - ended_by_limit)
    for k, name in enumerate(sim.outcome_names):
        p = probs[name]
        freq = sim.outcomes[k] / games
        assert p - cut - Z * math.sqrt(p * (1 - p) / games) - FLOAT_SLACK <= freq, (name, freq, p)
        assert freq <= p + Z * math.sqrt(p * (1 - p) / games) + FLOAT_SLACK, (name, freq, p)

    # The length in turns of the games that ended by the limit: mean and CDF.
    t = np.arange(limit + 1)
    if ended_by_limit > 0:
        cond = pmf[:limit + 1] / ended_by_limit
        mean = float((t * cond).sum())
        sd = math.sqrt(max(float((t * t * cond).sum()) - mean * mean, 0.0))
        sim_mean = float((t * sim.length).sum() / sim.finished)
        assert abs(sim_mean - mean) <= Z * sd / math.sqrt(sim.finished) + FLOAT_SLACK, (sim_mean, mean)
        cdf = np.cumsum(pmf[:limit + 1])
        sim_cdf = np.cumsum(sim.length)
        for q in (0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
            at = int(np.searchsorted(cdf, q * ended_by_limit))
            at = min(at, limit)
            assert z_ok(sim_cdf[at], games, float(cdf[at])), (q, at, sim_cdf[at] / games, cdf[at])

    # Throws per game that ends; the chain's figure ignores the limit, so only when the cut is nil.
    if cut < 1e-12 and sim.finished:
        throws_given_end = chain.expected({"throws": chain.branch_rewards["throws"]})["throws"][1]
        sim_mean = sim.throws_sum / sim.finished
        var = sim.throws_sumsq / sim.finished - sim_mean**2
        assert abs(sim_mean - throws_given_end) <= Z * math.sqrt(var / sim.finished) + FLOAT_SLACK, \
            (sim_mean, throws_given_end)
    return sim, chain


# ----------------------------------------------------------------------------- shipped rule sets


@pytest.mark.parametrize("players", [1, 2])
@pytest.mark.parametrize("name", [*SHIPPED, "snakes_and_ladders"])
def test_shipped_rules_match_chain(name, players):
    rules = api.load(EXAMPLES / "snakes_and_ladders.toml" if name == "snakes_and_ladders" else name)
    check_against_chain(rules, players, 300_000 if players == 1 else 150_000, seed=11 * players + len(name))


def test_shipped_list_is_the_goose_family():
    assert {"oca-moderna", "oca-tradicional", "jeu-de-l-oie"} <= set(SHIPPED)


@pytest.mark.parametrize("options", [{"waiting": "turns:2"}, {"until": "last"}, {"exact_finish": False},
                                     {"goose_after_bounce": "backward"}, {"first_throw_effect": True}])
def test_jeu_de_l_oie_options_match_chain(options):
    check_against_chain(api.load("jeu-de-l-oie", options), 2, 100_000, seed=5)


def test_oca_tradicional_one_die_option_matches_chain():
    check_against_chain(api.load("oca-tradicional", {"dice": 1, "second_bridge": True}), 2, 100_000, seed=6)


def test_turn_limit_cuts_games_as_the_chain_says():
    # Snakes and ladders alone lasts 39 turns on average; a limit of 20 leaves most games
    # unfinished, which must be exactly P(T > 20) from the chain.
    rules = api.load(EXAMPLES / "snakes_and_ladders.toml")
    sim, _ = check_against_chain(rules, 1, 200_000, seed=3, turn_limit=20)
    assert 0.5 < sim.unfinished / sim.games < 0.95
    assert sim.length[21:].sum() == 0 and sim.length.size == 21


# ----------------------------------------------------------------------------- tiny boards, one option each


def raw_board(goal: int, squares: dict[int, dict], *, first_throw: dict[str, int] | None = None,
              from_square: list[dict] | None = None, count: int = 2, faces: int = 3, **rules):
    """Like conftest's ``board``, with a first-throw table and changes of dice."""
    raw = {
        "game": {"name": "tiny", "goal": goal, "players": 2},
        "dice": {"count": count, "faces": faces, "from_square": from_square or []},
        "rules": rules,
        "first_throw": first_throw or {},
        "squares": {str(k): v for k, v in squares.items()},
    }
    return build_goose(raw, "tiny.toml", {})


TINY = {
    "occupant-returns": (lambda: board(10, {3: {"jump": 6}, 5: {"miss": 1}}, faces=3,
                                       occupancy="occupant-returns"), 2),
    "mover-returns": (lambda: board(10, {2: {"jump": 6, "again": True}, 3: {"jump": 6}, 5: {"miss": 1},
                                         7: {"goose": "repeat"}}, faces=3, occupancy="mover-returns"), 2),
    "bumped-keeps-turns": (lambda: board(9, {4: {"miss": 2}, 6: {"miss": 1}}, faces=3,
                                         occupancy="occupant-returns", bumped_keeps_turns=True), 2),
    "miss-then-wait-keeps-turns": (lambda: board(8, {2: {"jump": 4, "miss": 2}, 4: {"wait": True}}, faces=3,
                                                 occupancy="occupant-returns", bumped_keeps_turns=True), 2),
    "wells-released-in-place": (lambda: board(8, {3: {"wait": True}, 5: {"wait": True}}, faces=3), 2),
    "wells-with-occupancy": (lambda: board(8, {3: {"wait": True}, 5: {"wait": True}}, faces=3,
                                           occupancy="occupant-returns"), 2),
    "wells-as-missed-turns": (lambda: board(8, {3: {"wait": True}, 5: {"wait": True}}, faces=3,
                                            waiting="turns:3"), 2),
    "overshoot-stay": (lambda: board(7, {5: {"goose": "repeat"}, 4: {"jump": 1}}, faces=4,
                                     overshoot="stay"), 2),
    "overshoot-finish": (lambda: board(7, {2: {"goose": "repeat"}, 4: {"jump": 1}}, faces=4,
                                       exact_finish=False), 2),
    "bounce-goose-forward": (lambda: board(10, {3: {"goose": "repeat"}, 7: {"goose": "repeat"}}, faces=4), 2),
    "bounce-goose-backward": (lambda: board(10, {3: {"goose": "repeat"}, 7: {"goose": "repeat"}}, faces=4,
                                            goose_after_bounce="backward"), 2),
    "goose-next-again": (lambda: board(12, {2: {"goose": "next", "again": True},
                                            5: {"goose": "next", "miss": 1},
                                            9: {"goose": "next", "again": True}, 7: {"jump": 0}},
                                       faces=3), 2),
    "misses-add-up-on-a-chain": (lambda: board(9, {2: {"jump": 5, "miss": 1}, 5: {"miss": 1},
                                                   6: {"again": True}}, faces=3), 2),
    "until-last-three": (lambda: board(6, {2: {"jump": 4}, 3: {"miss": 1}}, faces=3, until="last",
                                       occupancy="occupant-returns"), 3),
    "until-last-deadlock": (lambda: board(8, {3: {"wait": True}, 5: {"wait": True}}, faces=3,
                                          until="last"), 3),
    "first-throw-no-effect": (lambda: raw_board(12, {7: {"jump": 1}, 4: {"goose": "repeat"}},
                                                first_throw={"3+2": 7}), 2),
    "first-throw-effect-and-dice-change": (lambda: raw_board(
        12, {7: {"goose": "repeat"}, 4: {"miss": 1}, 10: {"jump": 2}}, first_throw={"3+2": 7, "1+1": 12},
        from_square=[{"square": 8, "count": 1, "faces": 3}], first_throw_effect=True), 2),
}


@pytest.mark.parametrize("case", sorted(TINY))
def test_tiny_board_matches_chain(case):
    make, players = TINY[case]
    check_against_chain(make(), players, 100_000, seed=sum(map(ord, case)))


# ----------------------------------------------------------------------------- landings


def test_landings_match_exact_chances():
    rules = api.load("oca-moderna")
    model = goose_model(rules, 1)
    chain = model.build()
    key, table = model.landing_events(chain, 0)
    chances = chain.hitting_probabilities(key, table)
    games = 200_000
    sim = simulate_goose(rules, 1, games, seed=21)
    assert sim.landings.shape == (1, rules.goal + 1)
    for q in range(rules.goal + 1):
        assert z_ok(sim.landings[0, q], games, float(chances[q])), (q, sim.landings[0, q] / games, chances[q])
    # Squares no throw can end on or pass through: the start, and the squares before the
    # first throw's reach that nothing jumps to (1 cannot be thrown with two dice).
    assert sim.landings[0, 1] == 0
    # Chain squares count: the bridge 6 and its target 12, the maze 42 and 30, death 58 and 0.
    assert sim.landings[0, 6] > 0 and sim.landings[0, 0] > 0


# ----------------------------------------------------------------------------- reproducibility


def _key(s):
    return (s.outcomes.tolist(), s.unfinished, s.length.tolist(), s.throws_sum, s.throws_sumsq, s.landings.tolist())


def test_same_seed_same_summary_whatever_the_batch_and_threads():
    rules = api.load("oca-tradicional")
    a = simulate_goose(rules, 2, 30_000, seed=42)
    b = simulate_goose(rules, 2, 30_000, seed=42)
    c = simulate_goose(rules, 2, 30_000, seed=42, batch=7_001)
    d = simulate_goose(rules, 2, 30_000, seed=43)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        e = simulate_goose(rules, 2, 30_000, seed=42)
    finally:
        numba.set_num_threads(threads)
    assert _key(a) == _key(b) == _key(c) == _key(e)
    assert _key(a) != _key(d)
    assert a.seed == 42 and a.turn_limit == DEFAULT_TURN_LIMIT and a.elapsed > 0


def test_on_batch_sees_every_game():
    rows = []
    s = simulate_goose(api.load("oca-moderna"), 2, 2_500, seed=1, batch=1_000,
                       on_batch=lambda w, t, th: rows.append((w.copy(), t.copy(), th.copy())))
    assert [r[0].size for r in rows] == [1_000, 1_000, 500]
    winners = np.concatenate([r[0] for r in rows])
    assert np.bincount(winners[winners >= 0], minlength=2).tolist() == s.outcomes.tolist()
    assert int((winners < 0).sum()) == s.unfinished


def test_bad_requests_are_rules_errors():
    from markov_oca.core.errors import RulesError

    rules = api.load("oca-moderna")
    for kw in ({"players": 0, "games": 10}, {"players": 9, "games": 10}, {"players": 2, "games": -1}):
        with pytest.raises(RulesError):
            simulate_goose(rules, **kw)
    with pytest.raises(RulesError):
        simulate_goose(rules, 2, 10, turn_limit=0)
    assert simulate_goose(rules, 2, 0).games == 0


def test_a_loop_the_loader_would_refuse_is_an_error_not_a_hang():
    from markov_oca.core.errors import RulesError
    from markov_oca.goose.rules import Square

    rules = api.load("oca-moderna")
    looping = dataclasses.replace(rules, squares={5: Square(jump=7), 7: Square(jump=5)})
    with pytest.raises(RulesError, match="loops"):
        simulate_goose(looping, 1, 1_000)
    with pytest.raises(RulesError, match="loops"):
        for i in range(1_000):
            play_goose_python(looping, 1, game_stream(0, i))


# ----------------------------------------------------------------------------- the plain-Python twin


@pytest.mark.parametrize("name, players, options", [
    ("oca-moderna", 2, {}),
    ("oca-tradicional", 2, {}),
    ("oca-moderna", 3, {"until": "last"}),
    ("jeu-de-l-oie", 2, {"occupancy": "mover-returns", "waiting": "turns:2", "first_throw_effect": True}),
    ("oca-moderna", 2, {"bumped_keeps_turns": True, "goose_after_bounce": "backward"}),
])
def test_python_twin_plays_the_same_games(name, players, options):
    # Fed the kernel's own dice stream, the plain-Python loop must replay each game exactly.
    rules = api.load(name, options)
    games = 1_500
    rows = []
    sim = simulate_goose(rules, players, games, seed=9, on_batch=lambda w, t, th: rows.append((w, t, th)))
    w, t, th = (np.concatenate(x) for x in zip(*rows, strict=True))
    flat = flatten_goose(rules)
    landed = np.zeros_like(sim.landings)
    for i in range(games):
        g = play_goose_python(flat, players, game_stream(9, i))
        # A deadlocked game stops early; the rows report it as running at the turn limit.
        turns = g.turns if g.outcome >= 0 else sim.turn_limit
        assert (g.outcome, turns, g.throws) == (w[i], t[i], th[i]), i
        for seat, squares in enumerate(g.landed):
            landed[seat, sorted(squares)] += 1
    assert (landed == sim.landings).all()


def test_python_twin_with_random_matches_chain():
    rules = api.load("oca-tradicional")
    n = 8_000
    rng = random.Random(2026)
    flat = flatten_goose(rules)
    games = [play_goose_python(flat, 2, rng) for _ in range(n)]
    probs = api.build(rules, 2).outcome_probabilities()
    for k in range(2):
        assert z_ok(sum(g.outcome == k for g in games), n, probs[f"seat {k + 1} wins"]), k
    assert z_ok(sum(g.outcome == -1 for g in games), n, probs["deadlock"])


def test_python_twin_stakes_match_chain():
    # Alone on the traditional board every mishap pays 1; the chain's stakes reward is exact.
    rules = api.load("oca-tradicional")
    chain = api.build(rules, 1)
    exact = chain.expected({"stakes": chain.branch_rewards["stakes"]}, given_end=False)["stakes"][0]
    n = 6_000
    rng = random.Random(7)
    flat = flatten_goose(rules)
    stakes = np.array([play_goose_python(flat, 1, rng).stakes[0] for _ in range(n)], float)
    assert abs(stakes.mean() - exact) <= Z * stakes.std(ddof=1) / math.sqrt(n)
