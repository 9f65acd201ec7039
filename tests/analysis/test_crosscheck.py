"""Cross-checks: the statistics, someone else's results files, and the verdicts.

The external-results tests play snakes and ladders with a plain-Python
simulator written here from the board's rules alone (one die, ladders and
chutes, exact finish on 100, an overshoot stays), once with a fair die and
once with a loaded one, and hand the games to the cross-check as a CSV file,
as a user with a simulator of their own would.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from markov_oca import api
from markov_oca.analysis.chain import LengthDistribution
from markov_oca.analysis.crosscheck import ExactAnswer, compare, holm
from markov_oca.analysis.sampling import SimSummary
from markov_oca.api import crosscheck, exact_answer
from markov_oca.core.errors import RulesError
from markov_oca.io.results import read_results

ROOT = Path(__file__).resolve().parents[2]
SNAKES = str(ROOT / "examples" / "snakes_and_ladders.toml")
JUMPS = {1: 38, 4: 14, 9: 31, 21: 42, 28: 84, 36: 44, 51: 67, 71: 91, 80: 100,
         16: 6, 47: 26, 49: 11, 56: 53, 62: 19, 64: 60, 87: 24, 93: 73, 95: 75, 98: 78}


def play_snakes(rng: random.Random, loaded: bool = False) -> int:
    """Turns to reach 100 exactly; a loaded die shows 6 half the time."""
    square, turns = 0, 0
    while square != 100:
        turns += 1
        roll = 6 if loaded and rng.random() < 0.5 else rng.randint(1, 6 if not loaded else 5)
        if square + roll <= 100:
            square = JUMPS.get(square + roll, square + roll)
    return turns


def write_csv(path: Path, games: list[int]) -> Path:
    path.write_text("winner,turns\n" + "".join(f"1,{t}\n" for t in games))
    return path


@pytest.fixture(scope="module")
def snakes_exact() -> ExactAnswer:
    return exact_answer(api.load(SNAKES), 1)


def test_board_of_this_file_is_the_shipped_one():
    rules = api.load(SNAKES)
    assert {s: sq.jump for s, sq in rules.squares.items()} == JUMPS


def test_holm_adjusts_as_by_hand():
    # sorted 0.01, 0.02, 0.04, 0.5 -> 4*0.01, 3*0.02, max(0.06, 2*0.04), max(0.08, 0.5)
    assert holm([0.04, 0.5, 0.01, 0.02]) == pytest.approx([0.08, 0.5, 0.04, 0.06])
    assert holm([0.9, 0.9]) == [1.0, 1.0]


def test_fair_die_csv_passes_and_loaded_die_fails(tmp_path, snakes_exact):
    rng = random.Random(2026)
    fair = write_csv(tmp_path / "fair.csv", [play_snakes(rng) for _ in range(20_000)])
    loaded = write_csv(tmp_path / "loaded.csv", [play_snakes(rng, loaded=True) for _ in range(20_000)])
    ok = compare(snakes_exact, read_results(fair, snakes_exact))
    assert ok.passed, [c for c in ok.checks if not c.passed]
    assert ok.games == 20_000
    mean = next(c for c in ok.checks if c.quantity.startswith("mean length"))
    assert mean.exact == pytest.approx(39.2251223082, abs=1e-6)
    bad = compare(snakes_exact, read_results(loaded, snakes_exact))
    assert not bad.passed
    assert bad.chi_square["p_value"] < 1e-6


def test_sample_drawn_from_the_exact_distribution_passes_and_a_shifted_one_fails():
    # Games drawn from the exact joint law of (outcome, length) of 2-player oca-moderna,
    # deadlocks included: the test statistics themselves must accept them.
    exact = exact_answer(api.load("oca-moderna"), 2, landings=False)
    T = exact.horizon
    joint = exact.length.by_outcome[: T + 1]
    p = np.append(joint.ravel(), max(0.0, 1 - joint.sum()))
    rng = np.random.default_rng(7)
    draws = rng.choice(p.size, size=200_000, p=p / p.sum())
    k = joint.shape[1]
    unfinished = draws == p.size - 1
    winner = np.where(unfinished, -1, draws % k)
    turns = np.where(unfinished, T, draws // k)
    s = SimSummary("oca-moderna", exact.seats, exact.outcome_names, T, 7)
    s.add_batch(winner, turns, np.zeros_like(turns))
    res = compare(exact, s)
    assert res.passed, [c for c in res.checks if not c.passed]
    dead = next(c for c in res.checks if c.quantity.startswith("not over"))
    assert dead.exact == pytest.approx(0.166378301, abs=1e-6)
    # One turn more per game: the length tests must see it.
    s2 = SimSummary("oca-moderna", exact.seats, exact.outcome_names, T, 7)
    s2.add_batch(winner, np.where(unfinished, T, turns + 1), np.zeros_like(turns))
    assert not compare(exact, s2).passed


def test_results_file_formats(tmp_path, snakes_exact):
    jl = tmp_path / "games.jsonl"
    jl.write_text("\n".join(json.dumps({"winner": "seat 1", "turns": t, "throws": t}) for t in (10, 20, 30)))
    s = read_results(jl, snakes_exact)
    assert s.games == 3 and s.outcomes.tolist() == [3] and s.throws_sum == 60
    csv = tmp_path / "cut.csv"
    csv.write_text("Winner,Turns\n1,12\n,500\nnone,500\n")
    s = read_results(csv, snakes_exact)
    assert s.unfinished == 2 and s.turn_limit == 500 and s.length[12] == 1


@pytest.mark.parametrize(("text", "where", "what"), [
    ("winner,turns\n1,12\n3,40\n", "row 3", "winner '3'"),
    ("winner,turns\n1,12\n1,many\n", "row 3", "turns must be a whole number"),
    ("winner,turns\n1,-4\n", "row 2", "must not be negative"),
    ("winner,length\n1,12\n", "row 1", "missing: turns"),
    ("winner,turns\n1,12,5\n", "row 2", "more fields"),
    ("", "row 1", "missing"),
])
def test_malformed_csv_is_one_line_naming_the_row(tmp_path, snakes_exact, text, where, what):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(RulesError) as err:
        read_results(f, snakes_exact)
    msg = str(err.value)
    assert "\n" not in msg and str(f) in msg and where in msg and what in msg


def test_malformed_jsonl_names_the_line(tmp_path, snakes_exact):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"winner": 1, "turns": 3}\n{"winner": 1, turns: 3}\n')
    with pytest.raises(RulesError, match=r"bad.jsonl: line 2: not JSON"):
        read_results(f, snakes_exact)


def test_finished_game_beyond_the_stated_limit_is_refused(tmp_path, snakes_exact):
    f = write_csv(tmp_path / "g.csv", [10, 300])
    with pytest.raises(RulesError, match="row 3"):
        read_results(f, snakes_exact, turn_limit=200)


def test_crosscheck_with_a_results_file_end_to_end(tmp_path):
    rng = random.Random(5)
    f = write_csv(tmp_path / "fair.csv", [play_snakes(rng) for _ in range(5_000)])
    r = crosscheck(SNAKES, results=f)
    assert r.passed and r.source == str(f)
    d = r.to_dict()
    assert d["schema"] == "markov_oca.crosscheck/1" and d["correction"] == "holm"
    assert {"quantity", "exact", "simulated", "low", "high", "p_value", "adjusted", "passed"} <= set(d["checks"][0])


# ----------------------------------------------------------------------------- our simulators, end to end

SHIPPED = [
    ("oca-moderna", {"players": 2}),
    ("oca-tradicional", {"players": 1}),
    ("jeu-de-l-oie", {"players": 2}),
    ("ur", {"pieces": 2, "light": "greedy", "dark": "random"}),
    ("ur-simplificado", {"pieces": 1, "light": "optimal", "dark": "random"}),
    ("ur-7-rescatados", {"pieces": 2}),
    ("ur-blitz", {"pieces": 2}),
    ("ur-masters", {"pieces": 2}),
    ("ur-aseb", {"pieces": 1}),
    ("gioco-oca-punti", {"players": 2, "games": 4_000}),
]


def test_every_shipped_rule_set_is_listed_here():
    assert {v["name"] for v in api.variants()} == {name for name, _ in SHIPPED}


@pytest.mark.parametrize(("name", "kw"), SHIPPED, ids=[n for n, _ in SHIPPED])
def test_crosscheck_passes_on_every_shipped_rule_set(name, kw):
    kw = {"games": 100_000, "seed": 11, **kw}
    r = crosscheck(name, **kw)
    assert r.passed, [c for c in r.checks if not c.passed]
    assert r.games == kw["games"] and len(r.checks) >= 8


@pytest.mark.parametrize(("name", "kw", "changed"), [
    ("oca-moderna", {"players": 1}, {"overshoot": "stay"}),
    ("jeu-de-l-oie", {"players": 2}, {"waiting": "turns:2"}),
    ("ur", {"pieces": 1}, {"throw": "die"}),
])
def test_crosscheck_fails_when_the_simulated_rules_differ(name, kw, changed):
    r = crosscheck(name, games=100_000, seed=11, simulate_options=changed, **kw)
    assert not r.passed
    assert r.simulated_options == changed


@pytest.mark.parametrize(("name", "kw", "suffix"), [
    ("oca-moderna", {"players": 2, "games": 20_000}, ".csv"),
    ("ur", {"pieces": 1, "games": 20_000}, ".jsonl"),
    ("gioco-oca-punti", {"players": 2, "games": 2_000}, ".csv"),
])
def test_simulated_games_written_to_a_file_read_back_and_pass(tmp_path, name, kw, suffix):
    out = tmp_path / f"games{suffix}"
    s = api.simulate(name, seed=4, out=out, **kw)
    lines = [l for l in out.read_text().splitlines() if l.strip()]
    assert len(lines) == s.games + (suffix == ".csv")
    r = crosscheck(name, results=out, **{k: v for k, v in kw.items() if k != "games"})
    assert r.passed, [c for c in r.checks if not c.passed]
    assert r.games == s.games and int(sum(c for c in s.outcomes)) + s.unfinished == s.games


def test_reader_takes_a_byte_order_mark_and_counts_file_lines(tmp_path, snakes_exact):
    f = tmp_path / "excel.csv"
    f.write_bytes("\ufeffwinner,turns\r\n1,30\r\n1,41\r\n".encode())
    assert read_results(f, snakes_exact).games == 2
    f.write_text("winner,turns\n1,30\n\n   \n1,oops\n")
    with pytest.raises(RulesError, match=r"row 5: turns"):
        read_results(f, snakes_exact)


def test_seat_numbers_name_the_seat_outcome_not_the_nth_outcome(tmp_path):
    # Three seats of the points game: the fourth outcome is seat 3's win, after the 1-2 tie.
    names = ["seat 1 wins", "seat 2 wins", "seats 1 and 2 tie", "seat 3 wins", "seats 1 and 3 tie",
             "seats 2 and 3 tie", "seats 1, 2 and 3 tie"]
    by = np.zeros((50, len(names)))
    by[10] = 1 / len(names)
    exact = ExactAnswer("p3", ["seat 1", "seat 2", "seat 3"], names,
                        LengthDistribution(by.sum(axis=1), 0.0, 0.0, by_outcome=by))
    f = tmp_path / "p3.csv"
    f.write_text('winner,turns\n3,10\n"seats 1, 2 and 3 tie",10\nseat 2,10\n')
    s = read_results(f, exact)
    assert s.outcomes.tolist() == [0, 1, 0, 1, 0, 0, 1]


def test_a_turn_limit_below_the_horizon_leaves_whole_game_figures_out():
    # Cut at 30 turns, most games are unfinished; outcomes and lengths within the limit are
    # still exact, but throws and landings are over whole games and must not be tested.
    r = crosscheck("oca-moderna", players=2, games=50_000, seed=2, turn_limit=30)
    assert r.passed, [c for c in r.checks if not c.passed]
    assert not any("throws" in c.quantity or "lands" in c.quantity for c in r.checks)
    assert any("landing chances not tested" in n for n in r.notes)
    unfinished = next(c for c in r.checks if c.quantity.startswith("not over"))
    assert unfinished.exact > 0.4
