"""The command line as a user runs it: variants, explain, solve in text and JSON."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "markov_oca.cli", *args], capture_output=True, text=True,
                          timeout=300)


def test_variants_lists_every_shipped_rule_set_with_its_tradition():
    r = run("variants")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    for name, family, words in [("oca-tradicional", "goose", "traditional Spanish Juego de la Oca"),
                                ("oca-moderna", "goose", "present-day Spanish guides"),
                                ("jeu-de-l-oie", "goose", "French jeu de l'oie"),
                                ("gioco-oca-punti", "punti", "Italian printed regulation"),
                                ("ur-simplificado", "ur", "juego simplificado")]:
        at = next(i for i, l in enumerate(lines) if l.startswith(name))
        assert lines[at].split()[1] == family
        assert lines[at + 1].split()[0] == "follows" and words in lines[at + 1]
    assert not re.search(r"\bgoose[s]\b", r.stdout) and "geese repeat the throw" in r.stdout
    assert not re.search(r"seed|\b00[0-9]\b", r.stdout)
    rows = json.loads(run("variants", "--format", "json").stdout)
    assert len(rows) == sum(1 for l in lines if not l.startswith(" "))
    assert all(set(r) == {"name", "family", "seed", "title", "summary", "default_players"} for r in rows)
    assert all(len(r["seed"]) > 40 for r in rows)  # a sentence in words, not a number


def _commands(group, path=()):
    """Every command and group of the command line, as (path, click object)."""
    yield path, group
    for name, sub in getattr(group, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_every_help_screen_reads_as_click_writes_it():
    # Arguments in upper case in the usage line (FILE, never {file}), option values named as click
    # names them (INTEGER, FLOAT, TEXT, PATH, [text|json]), flags with no type, and no <type> column.
    import typer.main
    from typer.testing import CliRunner

    from markov_oca.cli import app

    runner = CliRunner()
    screens = {}
    for path, _ in _commands(typer.main.get_command(app)):
        out = runner.invoke(app, [*path, "--help"], terminal_width=100).output
        assert "Usage:" in out, path
        screens[" ".join(path)] = out
    assert {"", "analyse", "ur", "ur export-table", "ur best-move", "solve", "variants"} <= set(screens)
    for name, out in screens.items():
        assert not re.search(r"[{}]", out.split("Usage:", 1)[1].splitlines()[0]), name
        assert not re.search(r"<(bool|int|str|float|list\[\w+\]|text\|json)>", out), name
    assert re.search(r"Usage: .* analyse \[OPTIONS\] FILE\s*$", screens["analyse"], re.M)
    assert re.search(r"Usage: .* ur export-table \[OPTIONS\] OUT\s*$", screens["ur export-table"], re.M)
    assert re.search(r"--games\s+INTEGER", screens["simulate"])
    assert re.search(r"--tail\s+FLOAT", screens["analyse"])
    assert re.search(r"--format\s+\[text\|json\]", screens["solve"])
    assert re.search(r"--out\s+PATH", screens["simulate"])
    assert re.search(r"--pmf\s+--no-pmf\s+include", screens["solve"])  # a flag: no type between
    assert re.search(r"--help\s+Show this message", screens[""])


def test_a_missing_argument_is_named_as_the_usage_line_names_it():
    r = run("analyse")
    assert r.returncode == 2 and r.stderr.strip() == "markov-oca: error: Missing argument 'FILE'."


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
    # never_ends is the chance that the game never ends: part of the tail mass still in play deadlocks later
    ended = sum(d["length"]["pmf"]) + d["length"]["never_ends"]
    assert 1.0 - d["length"]["tail_mass"] - 1e-12 <= ended <= 1.0 + 1e-12
    assert d["length"]["never_ends"] == d["deadlock"]
    assert d["expected"]["turns"]["total"] == "inf"  # a deadlock has positive chance
    assert d["expected"]["turns"]["given_end"] > 0
    squares = {l["square"] for l in d["landings"]}
    assert squares == set(range(64))
    assert all(s["residual"] < 1e-9 for s in d["solver"])


def test_solve_until_last_places(tmp_path):
    # Three players on a short board with one player per square: places per seat form a
    # doubly stochastic matrix (each seat takes one place, each place goes to one seat).
    board = tmp_path / "short.toml"
    board.write_text("[game]\nname='short'\ngoal=12\n[dice]\ncount=1\nfaces=6\n"
                     "[rules]\nuntil='last'\noccupancy='occupant-returns'\n[squares]\n5={jump=1}\n")
    r = run("solve", str(board), "--players", "3", "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    places = [[p for p in s["places"]] for s in d["seats"]]
    for row in places:
        assert sum(row) == pytest.approx(1.0, abs=1e-10)
    for k in range(3):
        assert sum(row[k] for row in places) == pytest.approx(1.0, abs=1e-10)
    assert [s["win"] for s in d["seats"]] == [row[0] for row in places]
    text = run("solve", str(board), "--players", "3", "--no-landings")
    assert "finishing places" in text.stdout


def test_solve_exact_prints_fractions():
    r = run("solve", SNAKES, "--exact", "--no-landings")
    assert r.returncode == 0, r.stderr
    turns = next(l for l in r.stdout.splitlines() if l.strip().startswith("turns"))
    assert "39.225122" in turns and "/" in turns


def test_solve_ur_policies_json():
    r = run("solve", "ur", "--pieces", "2", "--light", "optimal", "--dark", "random", "--format", "json", "--no-pmf")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["policies"] == {"light": "optimal", "dark": "random"}
    assert d["wins"]["light"] + d["wins"]["dark"] == pytest.approx(1.0, abs=1e-12)
    assert d["wins"]["light"] > d["optimal_value"] > 0.5
    bad = run("solve", "ur", "--pieces", "2", "--light", "clever")
    assert bad.returncode == 2 and "clever" in bad.stderr and "Traceback" not in bad.stderr


def test_ur_best_move_last_squares():
    # Both sides on their last square: light wins with 4/7 and only a 1 bears off.
    r = run("ur", "best-move", "light:14 dark:14", "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["value"] == pytest.approx(4 / 7, abs=1e-10)
    best = [m for m in d["moves"] if m["best"] and m["throw"] == 1]
    assert best and best[0]["source"] == 14 and best[0]["target"] == 15 and best[0]["value"] == 1.0
    bad = run("ur", "best-move", "light:14 dark:1,2")
    assert bad.returncode == 2 and "same number of pieces" in bad.stderr


def test_explain_json_matches_the_rules_as_read():
    r = run("explain", "oca-moderna", "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == "markov_oca.explain/1" and d["goal"] == 63
    squares = {s["square"]: s for s in d["squares"]}
    assert squares[6]["jump"] == 12 and squares[9]["goose"] == "repeat"
    # From every square the branches' probabilities add up to one.
    from fractions import Fraction
    for row in d["throws"]:
        assert sum(Fraction(t["probability"]) for t in row) == 1


SNAKES = str(Path(__file__).resolve().parents[2] / "examples" / "snakes_and_ladders.toml")


def test_crosscheck_results_file_exit_codes(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("winner,turns\n" + "1,30\n1,41\n1,25\n1,60\n1,33\n")
    r = run("crosscheck", SNAKES, "--results", str(good))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: PASS" in r.stdout
    short = tmp_path / "short.csv"
    short.write_text("winner,turns\n" + "1,7\n" * 200)  # 200 games of 7 turns: impossible often
    r = run("crosscheck", SNAKES, "--results", str(short), "--format", "json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["passed"] is False
    bad = tmp_path / "bad.csv"
    bad.write_text("winner,turns\n1,30\nfirst,12\n")
    r = run("crosscheck", SNAKES, "--results", str(bad))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "bad.csv: row 3: winner 'first'" in r.stderr


def test_export_writes_files_and_refuses_bad_requests(tmp_path):
    r = run("export", SNAKES, "--format", "storm", "--out", str(tmp_path / "sl"))
    assert r.returncode == 0, r.stderr
    names = [Path(p).name for p in r.stdout.split()]
    assert names[:3] == ["sl.tra", "sl.lab", "sl.srew"]
    assert (tmp_path / "sl.tra").read_text().splitlines()[0] == "dtmc"
    r = run("export", SNAKES, "--format", "xml", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "unknown export format 'xml'" in r.stderr


def test_report_command_writes_the_page(tmp_path):
    r = run("report", SNAKES, "--out", str(tmp_path / "rep"), "--format", "json")
    assert r.returncode == 0, r.stderr
    files = [Path(p).name for p in json.loads(r.stdout)["files"]]
    assert "index.html" in files and "report.md" in files
    assert "39.225122" in (tmp_path / "rep" / "index.html").read_text()


def test_points_game_solve_explain_and_bad_bet():
    r = run("solve", "gioco-oca-punti", "--players", "2", "--format", "json", "--no-pmf")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert sum(d["outcomes"].values()) == pytest.approx(1.0, abs=1e-9)
    assert sum(s["win_share"] for s in d["seats"]) == pytest.approx(1.0, abs=1e-9)
    r = run("explain", "gioco-oca-punti")
    assert r.returncode == 0 and "13 (bank pays (example amount)): collect 20 from the bank" in r.stdout
    r = run("solve", "gioco-oca-punti", "--bet", "sometimes")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--bet" in r.stderr


@pytest.mark.parametrize("args", [
    ["solve", "oca-moderna", "--bet", "always"],
    ["simulate", "oca-moderna", "--light", "greedy"],
    ["crosscheck", "gioco-oca-punti", "--pieces", "2"],
    ["export", "oca-moderna", "--out", "x", "--dark", "random"],
])
def test_options_of_another_game_are_refused(args):
    r = run(*args)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "apply to" in r.stderr or "applies to" in r.stderr


def test_seven_piece_ur_chain_is_refused_up_front():
    # The default Ur game, optimal against optimal: without a saved table it is refused at once,
    # before any value iteration, naming the command that solves the whole game.
    r = run("solve", "ur")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "run `markov-oca ur solve --pieces 7 --rules ur` first" in r.stderr


def test_explain_covers_every_family():
    r = run("explain", "ur-simplificado")
    assert r.returncode == 0, r.stderr
    assert "a 4-sided die (1..4): 1 with 1/4, 2 with 1/4, 3 with 1/4, 4 with 1/4" in r.stdout
    d = json.loads(run("explain", "ur", "--format", "json").stdout)
    assert d["schema"] == "markov_oca.explain-ur/1" and d["rosettes"] == [4, 8, 14]
    from fractions import Fraction
    assert [Fraction(t["probability"]) for t in d["throws"]] == [Fraction(k, 16) for k in (1, 4, 6, 4, 1)]
    d = json.loads(run("explain", "gioco-oca-punti", "--format", "json").stdout)
    assert d["schema"] == "markov_oca.explain-punti/1" and d["goal"] == 37
