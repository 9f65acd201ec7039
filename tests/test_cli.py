"""The command line as a user runs it: variants, explain, solve in text and JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "markov_oca.cli", *args], capture_output=True, text=True,
                          timeout=300)


def test_variants_lists_every_shipped_rule_set_with_seed():
    r = run("variants")
    assert r.returncode == 0
    for name, seed in [("oca-tradicional", "000"), ("oca-moderna", "001"), ("jeu-de-l-oie", "004")]:
        line = next(l for l in r.stdout.splitlines() if l.startswith(name))
        assert seed in line


def test_explain_shows_squares_and_options():
    r = run("explain", "oca-tradicional", "--option", "second_bridge=true")
    assert r.returncode == 0
    assert "second_bridge = true" in r.stdout
    assert "6 (bridge): go to 12, pay 1" in r.stdout


@pytest.mark.parametrize("players", [1, 2])
def test_solve_json_schema_and_invariants(players):
    r = run("solve", "jeu-de-l-oie", "--players", str(players), "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == "markov_oca.solve/1"
    assert d["game"]["players"] == players
    wins = [s["win"] for s in d["seats"]]
    assert sum(wins) + d["deadlock"] == pytest.approx(1.0, abs=1e-10)
    assert sum(d["length"]["pmf"]) + d["length"]["never_ends"] + d["length"]["tail_mass"] == pytest.approx(1.0, abs=1e-9)
    assert d["expected"]["turns"]["total"] == "inf"  # a deadlock has positive chance
    assert d["expected"]["turns"]["given_end"] > 0
    squares = {l["square"] for l in d["landings"]}
    assert squares == set(range(64))
    assert all(s["residual"] < 1e-9 for s in d["solver"])


def test_solve_text_until_last_places():
    r = run("solve", "oca-moderna", "--players", "3", "--option", "until=last", "--option", "waiting=turns:2",
            "--no-landings", "--tail", "1e-6")
    assert r.returncode == 0, r.stderr
    assert "finishing places" in r.stdout


def test_solve_exact_prints_fractions():
    r = run("solve", "examples/snakes_and_ladders.toml", "--exact", "--no-landings")
    assert r.returncode == 0, r.stderr
    turns = next(l for l in r.stdout.splitlines() if l.strip().startswith("turns"))
    assert "39.225122" in turns and "/" in turns
