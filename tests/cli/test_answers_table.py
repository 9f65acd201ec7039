"""The README's table of answers is what ``benchmarks/answers.py`` computes now: regenerated rows must
equal the README's, so the table cannot drift from the code."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _answers():
    spec = importlib.util.spec_from_file_location("answers", ROOT / "benchmarks" / "answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


answers = _answers()
answers.goose_row = functools.cache(answers.goose_row)  # each row solved once in this file


def readme_rows() -> list[str]:
    _, block, _ = answers.split(README.read_text(encoding="utf-8"), "README.md")
    return answers.table_rows(block)


def test_readme_table_has_every_row():
    keys = {tuple(c.strip() for c in r.strip("|").split("|")[:2]) for r in readme_rows()}
    for game in answers.GOOSE:
        for n in answers.PLAYERS:
            assert (game, str(n)) in keys
    for game, pieces in answers.UR_PIECES:
        assert (game, str(pieces)) in keys


def test_two_player_rows_equal_the_readme():
    rows = readme_rows()
    for game in answers.GOOSE:
        line = answers.markdown(answers.GOOSE_HEAD, [answers.goose_row(game, 2)])[-1]
        assert line in rows, line


def test_readme_rows_add_up():
    # Every game ends with one winner or deadlocks: the seats' chances and the deadlock's sum to 1
    # (each rounded to 4 decimals); the French board's default reading is the modern Spanish chain.
    split = ([c.strip() for c in r.strip("|").split("|")] for r in readme_rows())
    cells = {tuple(row[:2]): row for row in split if row[0] != "game" and not row[0].startswith("-")}
    for game in answers.GOOSE:
        for n in answers.PLAYERS:
            row = cells[(game, str(n))]
            seats, deadlock = row[2:2 + n], row[2 + answers.MAX_SEATS]
            assert all(row[2 + k] == "" for k in range(n, answers.MAX_SEATS))
            assert abs(sum(map(float, seats)) + float(deadlock) - 1) <= 0.5e-4 * (n + 1)
            assert cells[("jeu-de-l-oie", str(n))][2:] == cells[("oca-moderna", str(n))][2:]
    for game, pieces in answers.UR_PIECES:
        light, dark = map(float, cells[(game, str(pieces))][2:4])
        assert abs(light + dark - 1) <= 1e-4 and light > 0.5


def test_check_finds_a_changed_row(tmp_path):
    # --check fails when a row differs: alter one 2-player figure of a copy of the README.
    rows = readme_rows()
    target = next(r for r in rows if "| oca-moderna | 2 |" in r)
    changed = target.replace("| oca-moderna | 2 | 0.", "| oca-moderna | 2 | 9.", 1)
    assert changed != target
    copy = tmp_path / "README.md"
    copy.write_text(README.read_text(encoding="utf-8").replace(target, changed), encoding="utf-8")
    assert answers.main(["--check", str(copy), "--players", "2", "--no-ur"]) == 1
    assert answers.main(["--check", str(README), "--players", "2", "--no-ur"]) == 0


@pytest.mark.slow
def test_whole_table_equals_the_readme():
    # Three- and four-player goose games (four players: about 2.5 GB each) and the Ur rows.
    assert answers.main(["--check", str(README)]) == 0
