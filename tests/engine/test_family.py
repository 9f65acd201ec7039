"""The family interface: a fourth family registered at test time goes through every command, with
answers derived by hand, and every family passes one conformance run from rules to report page."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from race_family import FAMILY as RACE
from race_family import RACE_TOML
from typer.testing import CliRunner

import markov_oca
from markov_oca import api
from markov_oca.analysis.exact import ExactChain
from markov_oca.core.errors import RulesError
from markov_oca.engine.family import all_families, family_named, prepare, register, unregister

POINTS_BOARD = """
[game]
name = "small"
family = "punti"
goal = 5
players = 2
[dice]
faces = 3
[economy]
dowry = 60
entry_tax = 10
head_fee = 5
bank_fund = 20
bet_cost = 10
bet_prize = 30
aid = 10
[squares]
2 = { pay_bank = 20, pulcinella = 1 }
3 = { collect_each = 15 }
4 = { pay_each = 10 }
"""


@pytest.fixture
def race(tmp_path):
    register(RACE)
    path = tmp_path / "race10.toml"
    path.write_text(RACE_TOML)
    yield path
    unregister("race")


def _cli(*args: str):
    from markov_oca.cli import app

    return CliRunner().invoke(app, list(args))


# ----------------------------------------------------------------------------- by hand


def _expected_throws_by_hand() -> Fraction:
    """One player, one d6, goal 10 (reached or passed), snake 8 -> 3: expected throws from 0.

    From squares 4..9 every value is a linear form in e3 (e9 = 1: any throw finishes;
    from 7, a 1 lands on the snake and a 2 on 9, 3..6 finish; and so on), and e3 is
    then fixed by its own equation; squares 0..2 follow from those above them.
    """
    f = Fraction
    forms = {9: (f(1), f(0))}  # e_s = a + b * e3

    def mean(targets):
        a = sum(forms[t][0] if t != 3 else f(0) for t in targets)
        b = sum(forms[t][1] if t != 3 else f(1) for t in targets)
        return f(1) + a / 6, b / 6

    snake = {8: 3}
    for s in (7, 6, 5, 4):
        forms[s] = mean([snake.get(s + k, s + k) for k in range(1, 7) if s + k < 10])
    a3, b3 = mean([snake.get(3 + k, 3 + k) for k in range(1, 7) if 3 + k < 10])
    e3 = a3 / (1 - b3)
    value = {s: a + b * e3 for s, (a, b) in forms.items()} | {3: e3}
    for s in (2, 1, 0):
        value[s] = 1 + sum(value[snake.get(s + k, s + k)] for k in range(1, 7) if s + k < 10) / 6
    return value[0]


def _single_player_pmf(turns: int = 400) -> np.ndarray:
    """P(one player finishes on throw t), by pushing the distribution over squares."""
    p = np.zeros(10)
    p[0] = 1.0
    out = np.zeros(turns + 1)
    for t in range(1, turns + 1):
        q = np.zeros(10)
        for s in range(10):
            for k in range(1, 7):
                to = s + k
                if to >= 10:
                    out[t] += p[s] / 6
                else:
                    q[3 if to == 8 else to] += p[s] / 6
        p = q
    return out


def test_race_answers_by_hand(race):
    e0 = _expected_throws_by_hand()
    assert e0 == Fraction(223447, 58050)
    one = api.solve(race, players=1)
    assert abs(one.outcomes["seat 1 wins"] - 1) < 1e-12
    assert abs(one.turns - float(e0)) < 1e-12
    assert abs(one.length.pmf[2] - 1 / 6) < 1e-15  # (4,6), (5,5), (5,6), (6,4), (6,5), (6,6)
    # Two players: seat 1 wins on its t-th throw when seat 2 has not finished in t - 1.
    pmf = _single_player_pmf()
    later = 1 - np.cumsum(pmf)  # P(T > t)
    first = float(sum(pmf[t] * later[t - 1] for t in range(1, pmf.size)))
    two = api.solve(race, players=2)
    assert abs(two.outcomes["seat 1 wins"] - first) < 1e-12 and abs(sum(two.outcomes.values()) - 1) < 1e-12
    exact = ExactChain(api.build(race, players=2)).outcome_probabilities()
    assert sum(exact.values()) == 1 and abs(float(exact["seat 1 wins"]) - first) < 1e-12


def test_race_is_found_by_its_file_and_refuses_other_settings(race):
    assert api.family(race) == "race" and isinstance(api.load(race), RACE.rules_type)
    for bad in ({"pieces": 2}, {"bet": "always"}, {"exact": True}):
        with pytest.raises(RulesError, match="not to the 'race' family"):
            api.solve(race, **bad)
    with pytest.raises(RulesError, match="1 to 3 players"):
        api.solve(race, players=4)


def test_race_through_every_command(race, tmp_path):
    r = _cli("solve", str(race), "-n", "2", "--format", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["schema"] == "markov_oca.chain-results/1" and abs(sum(d["outcomes"].values()) - 1) < 1e-12
    assert "seat 1 wins" in _cli("solve", str(race)).output
    assert "goal = 10" in _cli("explain", str(race)).output
    games = tmp_path / "games.csv"
    r = _cli("simulate", str(race), "--games", "20000", "--seed", "3", "--out", str(games))
    assert r.exit_code == 0, r.output
    rows = games.read_text().splitlines()
    assert rows[0] == "winner,turns,throws" and len(rows) == 20_001
    r = _cli("crosscheck", str(race), "--games", "50000", "--seed", "4")
    assert r.exit_code == 0, r.output
    assert "verdict: PASS" in r.output
    assert _cli("crosscheck", str(race), "--results", str(games)).exit_code == 0
    r = _cli("export", str(race), "--format", "storm", "--out", str(tmp_path / "race"))
    assert r.exit_code == 0, r.output
    tra = (tmp_path / "race.tra").read_text().splitlines()
    assert tra[0] == "dtmc" and len(tra) - 1 == api.build(race).n_transitions
    r = _cli("export", str(race), "--format", "graphml", "--out", str(tmp_path / "race.graphml"))
    assert r.exit_code == 0 and (tmp_path / "race.graphml").is_file()
    r = _cli("report", str(race), "--out", str(tmp_path / "page"))
    assert r.exit_code == 0, r.output
    page = (tmp_path / "page" / "index.html").read_text()
    seat1 = api.solve(race).outcomes["seat 1 wins"]
    assert f"{seat1:.6f}" in page and (tmp_path / "page" / "length.png").is_file()
    r = _cli("solve", str(race), "--pieces", "3")
    assert r.exit_code == 2 and re.search(r"--pieces applies to Ur rule sets .*not to the 'race' family", r.output)


# ----------------------------------------------------------------------------- every family


def _cases(tmp_path: Path, race: Path):
    points = tmp_path / "small.toml"
    points.write_text(POINTS_BOARD)
    return {
        "goose": ("oca-moderna", {}, {"players": 1}),
        "ur": ("ur", {"pieces": 1}, {"light": "random", "dark": "greedy"}),
        "punti": (points, {}, {"players": 2, "bet": "always"}),
        "race": (race, {}, {"players": 2}),
    }


@pytest.mark.parametrize("name", ["goose", "ur", "punti", "race"])
def test_every_family_conforms(name, race, tmp_path):
    """load -> chain -> solve -> text -> JSON -> simulate -> crosscheck -> page, for each family."""
    assert {"goose", "ur", "punti", "race"} <= {f.name for f in all_families()}
    rules, options, settings = _cases(tmp_path, race)[name]
    fam = family_named(name)
    loaded = markov_oca.load(rules, **options)
    assert isinstance(loaded, fam.rules_type) and api.family(loaded) == name
    chain = markov_oca.build(loaded, **settings)
    assert np.all(chain.row_sums() == chain.denom)
    outcomes = chain.outcome_probabilities()
    assert abs(sum(outcomes.values()) - 1) < 1e-12  # the outcomes and "deadlock"
    res = markov_oca.solve(rules, options=options, **settings)
    assert isinstance(res.text(), str) and res.text()
    d = json.loads(json.dumps(res.to_dict()))
    assert d["schema"] and loaded.name in json.dumps(d)
    sample = markov_oca.simulate(loaded, games=4000, seed=1, **settings)
    assert sample.games == 4000 and int(sample.outcomes.sum()) + sample.unfinished == 4000
    check = markov_oca.crosscheck(rules, games=20_000, seed=2, options=options, **settings)
    assert check.passed, check.text()
    play = prepare(loaded, "report", **settings)
    title, blocks = fam.page(play)
    assert title and blocks
    assert fam.explain_text(loaded) and json.dumps(fam.explain(loaded))


def test_family_record_as_class_keywords():
    """The record of a family given as class keywords sets the same attributes; an unknown key is refused."""
    from markov_oca.engine.family import Family

    class Coin(Family, name="coin", boards="coin boards", rules_type=int, sides=2):
        pass

    assert (Coin.name, Coin.boards, Coin.rules_type, Coin.sides) == ("coin", "coin boards", int, 2)
    with pytest.raises(TypeError, match="declares no 'colour'"):
        class Bad(Family, colour="red"):
            pass
