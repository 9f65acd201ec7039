"""The review of a played Ur game: values checked against the table by hand, illegal moves refused by number,
the JSON fields, the page, and the command's exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from markov_oca.cli import app as cli_app
from markov_oca.core.errors import RulesError
from markov_oca.ur.notation import parse_game
from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.review import game_values, legal_moves, review_file, review_game
from markov_oca.ur.reviewpage import review_text, write_review_page
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import UrSpace, encode
from markov_oca.ur.table import write_rgu, write_table

GAMES = Path(__file__).parent / "games"
SAMPLE_RGN = (GAMES / "sample.rgn").read_text()  # a two-piece game in RoyalUr's RGN
SAMPLE_PLAIN = (GAMES / "sample.txt").read_text()  # the same game as a plain list


@pytest.fixture(scope="module")
def two():
    r = load_ur("ur", {"pieces": 2})
    return r, solve_optimal(r).values


@pytest.fixture(scope="module")
def one():
    r = load_ur("ur", {"pieces": 1})
    return r, game_values(r)


def _value(values, pieces, mine, theirs):
    """The chance to win of the side to move (``mine``), read from the table by rank, apart from the engine's
    move lists: 1 or 0 when a side has all its pieces off."""
    if mine.count(15) == pieces or theirs.count(15) == pieces:
        return 1.0 if mine.count(15) == pieces else 0.0
    return float(values[UrSpace(pieces).rank(*encode(mine, theirs))])


def _after(mine, theirs, src, dst):
    """Both sides' squares after the mover takes a piece from ``src`` to ``dst`` (a capture on the lane)."""
    mine, theirs = list(mine), list(theirs)
    mine[mine.index(src)] = dst
    if 5 <= dst <= 12 and dst in theirs:
        theirs[theirs.index(dst)] = 0
    return mine, theirs


def _mover_value(values, pieces, mine, theirs, src, dst, rosettes=(4, 8, 14)):
    """The mover's chance after a move, by hand: the same side again on a rosette, else the other side to move."""
    m, t = _after(mine, theirs, src, dst)
    if m.count(15) == pieces:
        return 1.0
    if dst in rosettes:
        return _value(values, pieces, m, t)
    return 1.0 - _value(values, pieces, t, m)


def test_sample_game_values_agree_with_the_table_read_by_hand(two):
    r, v = two
    rev = review_game(parse_game(SAMPLE_RGN, "sample.rgn"), r, v)
    assert rev.over and rev.winner == "dark" and len(rev.moves) == 14
    light, dark = [0, 0], [0, 0]
    assert rev.light_start == pytest.approx(_value(v, 2, light, dark), abs=1e-15)
    for m in rev.moves:
        mine, theirs = (light, dark) if m.side == "light" else (dark, light)
        if m.source is None:
            played = 1.0 - _value(v, 2, theirs, mine)
        else:
            played = _mover_value(v, 2, mine, theirs, m.source, m.target)
        assert m.value_played == pytest.approx(played, abs=1e-12), m.number
        best = max(_mover_value(v, 2, mine, theirs, s, s + m.throw) for s in set(mine)
                   if 0 <= s < 15 and s + m.throw <= 15 and m.throw > 0 and (s + m.throw == 15 or s + m.throw
                                                                              not in mine)
                   and not (s + m.throw == 8 and 8 in theirs)) if m.legal else played
        assert m.value_best == pytest.approx(best, abs=1e-12), m.number
        assert m.lost == pytest.approx(best - played, abs=1e-12)
        if m.source is not None:
            new_mine, new_theirs = _after(mine, theirs, m.source, m.target)
            mine[:], theirs[:] = new_mine, new_theirs
    # move 13: light (9 and the hand) throws 3 with dark on 12 about to go off; 9-12 captures, hand-3 does not
    miss = rev.moves[12]
    assert (miss.side, miss.throw, miss.played, miss.best, miss.choice, miss.agrees) == \
        ("light", 3, "hand-3", "9-12", True, False)
    assert miss.lost > 0.3
    assert rev.moves[-1].events == ["piece off", "game over"] and rev.light_chance[-1] == 0.0


def test_optimal_play_loses_nothing_and_accuracy_counts_only_choices(two):
    r, v = two
    throws = [4, 2, 3, 1, 2, 2, 3, 0, 2, 1, 4, 2, 2, 3, 1, 2, 3, 2, 1, 2, 2, 3, 2, 4, 1, 2, 3, 2, 2, 1, 3, 2] * 4
    light, dark, side, lines = [0, 0], [0, 0], "light", []
    for t in throws:
        _, rows = legal_moves(r, v, light, dark, side)
        best = next(m for m in rows if m.throw == t and m.best)
        lines.append(f"{side} {t} {'pass' if best.source < 0 else best.source}")
        mine, theirs = (light, dark) if side == "light" else (dark, light)
        if best.source >= 0:
            mine[:], theirs[:] = _after(mine, theirs, best.source, best.target)
        if "game over" in best.events:
            break
        if "throws again" not in best.events:
            side = "dark" if side == "light" else "light"
    rev = review_game(parse_game("\n".join(lines)), r, v)
    assert rev.over
    choices = sum(p.choices for p in rev.players.values())
    assert choices >= 5
    for p in rev.players.values():
        assert p.agreed == p.choices and p.lost_total == 0.0
        assert p.accuracy == (1.0 if p.choices else None)
        assert p.decisions == sum(m.side == p.side for m in rev.moves)
    assert all(m.lost == 0.0 and m.agrees for m in rev.moves)
    # forced moves and passes are no choices
    assert sum(m.choice for m in rev.moves) == choices
    assert all(m.legal >= 2 for m in rev.moves if m.choice) and all(m.legal <= 1 for m in rev.moves if not m.choice)


def test_chance_through_the_game_chains(two):
    r, v = two
    rev = review_game(parse_game(SAMPLE_PLAIN, "sample.txt"), r, v)
    assert len(rev.light_chance) == len(rev.moves) + 1
    for a, b in zip(rev.moves, rev.moves[1:], strict=False):
        assert b.light_before == pytest.approx(a.light_after, abs=1e-12)
    light = rev.players["light"]
    assert light.choices == 2 and light.agreed == 0 and light.accuracy == 0.0
    assert light.lost_total == pytest.approx(sum(m.lost for m in rev.moves if m.side == "light"), abs=1e-15)
    assert light.lost_mean == pytest.approx(light.lost_total / 2)


# (game, pieces, the start of the message after "move N (...)")
ILLEGAL = [
    ("light 2 5", 2, "move 1 (line 1, 'light 2 5'): illegal move 5-7 on a throw of 2: no light piece on square 5"),
    ("light 4 hand\nlight 4 hand", 2, "move 2 (line 2, 'light 4 hand'): illegal move hand-4 on a throw of 4: "
     "blocked by light's own piece on square 4"),
    ("light 4 hand\nlight 1 4-5\ndark 4 hand\ndark 4 4-8\ndark 0 pass\nlight 3 5-8", 2,
     "move 6 (line 6, 'light 3 5-8'): illegal move 5-8 on a throw of 3: the rosette on square 8 is held by dark"),
    ("light 5 hand", 2, "move 1 (line 1, 'light 5 hand'): wrong throw: 5 is not a throw of 4 coins"),
    ("light 4 hand\nlight 4 4-8\nlight 4 8-12\ndark 0 pass\nlight 1 12-13\ndark 0 pass\nlight 4 13", 1,
     "move 7 (line 7, 'light 4 13'): illegal move 13-17 on a throw of 4: overshoots"),
    ("light 0 hand", 2, "move 1 (line 1, 'light 0 hand'): illegal move hand-0 on a throw of 0: a throw of 0 moves "
     "no piece"),
    ("light 2 pass\ndark 1 hand", 2, "move 1 (line 1, 'light 2 pass'): passes on a throw of 2, but light has a "
     "legal move (hand-2)"),
    ("dark 2 hand", 2, "move 1 (line 1, 'dark 2 hand'): it is light's turn, not dark's"),
    ("light 2 hand\nlight 2 hand", 2, "move 2 (line 2, 'light 2 hand'): it is dark's turn, not light's"),
    ("light 4 hand\nlight 4 4-8\nlight 4 8-12\ndark 0 pass\nlight 3 12-off\ndark 1 hand", 1,
     "move 6 (line 6, 'dark 1 hand'): the game is already over (light won)"),
    ("1. A@A2x", 2, "move 1 (turn 1, line 1, light: 'A@A2x'): marked 'x' but the move is no capture"),
    ("1. A@A2 *", 2, "marked '*' but the move is no rosette"),
    ("1. A@A2#", 2, "move 1 (turn 1, line 1, light: 'A@A2#'): marked '#' (the game ends) but the game goes on"),
]


@pytest.mark.parametrize(("text", "pieces", "message"), ILLEGAL)
def test_illegal_moves_are_refused_with_their_number(text, pieces, message, one, two):
    r, v = one if pieces == 1 else two
    with pytest.raises(RulesError) as exc:
        review_game(parse_game(text, "g.txt"), r, v)
    assert str(exc.value).startswith("g.txt: ") and message in str(exc.value)


def test_a_last_throw_without_its_move_is_left_out_and_a_wrong_result_refused(one, two):
    r, v = two
    rev = review_game(parse_game("light 4 hand\nlight 2 pass"), r, v)
    assert len(rev.moves) == 1 and rev.notes == ["the last throw (2, light) has no move yet: left out"]
    r1, v1 = one
    game = "light 4 hand\nlight 4 4-8\nlight 4 8-12\ndark 0 pass\nlight 3 12-off\n0-1"
    with pytest.raises(RulesError, match=r"g\.txt: the result '0-1' says dark won, but light won on the board"):
        review_game(parse_game(game, "g.txt"), r1, v1)


def test_text_and_page(two, tmp_path):
    r, v = two
    rev = review_game(parse_game(SAMPLE_RGN, "sample.rgn"), r, v)
    text = review_text(rev)
    assert "Ann vs Bob: 14 moves, dark won" in text
    assert "hand-3" in text and "31.69%" in text
    files = write_review_page(rev, tmp_path / "page")
    assert sorted(p.name for p in files) == ["chance.png", "index.html", "report.md"]
    html = (tmp_path / "page" / "index.html").read_text()
    assert "data:image/png;base64," in html and "The moves that lost the most" in html


# ----------------------------------------------------------------------------- the command


def _run(*args: str, tables: Path):
    """``markov-oca ur review ARGS`` in this process, the saved tables looked for in ``tables``."""
    r = CliRunner().invoke(cli_app, ["ur", "review", *args], env={"MARKOV_OCA_TABLES": str(tables)})
    return SimpleNamespace(returncode=r.exit_code, stdout=r.stdout, stderr=r.stderr)


def test_cli_json_fields(tmp_path):
    game = tmp_path / "g.rgn"
    game.write_text(SAMPLE_RGN)
    p = _run(str(game), "--format", "json", tables=tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["schema"] == "markov_oca.ur-review/1"
    assert {"rules", "title", "pieces", "source", "form", "tags", "result", "moves", "players", "light_start",
            "light_chance", "over", "winner", "notes"} <= set(d)
    assert (d["rules"], d["pieces"], d["form"], d["winner"]) == ("ur", 2, "rgn", "dark")
    assert set(d["players"]["light"]) == {"side", "decisions", "choices", "agreed", "accuracy", "lost_total",
                                          "lost_mean"}
    m = d["moves"][12]
    assert {k: m[k] for k in ("number", "side", "throw", "played", "source", "target", "best", "best_source",
                              "best_target", "choice", "agrees")} == \
        {"number": 13, "side": "light", "throw": 3, "played": "hand-3", "source": 0, "target": 3, "best": "9-12",
         "best_source": 9, "best_target": 12, "choice": True, "agrees": False}
    assert m["lost"] == pytest.approx(m["value_best"] - m["value_played"])
    assert len(d["light_chance"]) == 15 and d["light_chance"][0] == d["light_start"]


def test_cli_reads_a_saved_table(tmp_path, two):
    r, v = two
    game = tmp_path / "g.txt"
    game.write_text(SAMPLE_PLAIN)
    bare = tmp_path / "bare.npy"
    np.save(bare, v)  # a table without its .json
    named = write_table(r, v, tmp_path / "named.npy")
    for t in (bare, named):
        p = _run(str(game), "--table", str(t), "--format", "json", tables=tmp_path / "none")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["moves"][12]["lost"] > 0.3
    exact = json.loads(_run(str(game), "--table", str(named), "--format", "json", tables=tmp_path).stdout)
    for kind, tol in (("float64", 1e-12), ("percent16", 0.5 / 65535)):  # percent16: steps of 1/65535
        rgu = tmp_path / f"{kind}.rgu"
        write_rgu(r, v, rgu, kind)  # as `ur export-table` writes it
        p = _run(str(game), "--table", str(rgu), "--format", "json", tables=tmp_path / "none")
        assert p.returncode == 0, p.stderr
        d = json.loads(p.stdout)
        assert [m["best"] for m in d["moves"]] == [m["best"] for m in exact["moves"]]
        assert d["light_chance"] == pytest.approx(exact["light_chance"], abs=tol)
        assert [m["lost"] for m in d["moves"]] == pytest.approx([m["lost"] for m in exact["moves"]], abs=2 * tol)
    write_rgu(load_ur("ur", {"pieces": 1}), game_values(load_ur("ur", {"pieces": 1})), tmp_path / "one.rgu")
    p = _run(str(game), "--table", str(tmp_path / "one.rgu"), tables=tmp_path)
    assert p.returncode == 2 and "one.rgu: a table of 1 pieces, the game has 2" in p.stderr
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, v[:100])
    p = _run(str(game), "--table", str(wrong), tables=tmp_path)
    assert p.returncode == 2 and "not one per position of 2 pieces" in p.stderr


@pytest.mark.parametrize(("text", "args", "message"), [
    (None, (), "no such game file"),
    ('[Rules "Masters with Four Dice"]\n1. A@A2', (),
     "line 1: unknown rule set 'Masters with Four Dice' in the [Rules] tag"),
    ("1. A@A2 / C@C9", ("--pieces", "2"), "'C9' is not on dark's path"),
    ("light 2 5", ("--pieces", "2"), "move 1 (line 1, 'light 2 5'): illegal move 5-7"),
    ("light 2 hand", ("--pieces", "2", "--table", "missing.npy"), "missing.npy: no such table file"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, text, args, message):
    game = tmp_path / "g.txt"
    if text is not None:
        game.write_text(text)
    p = _run(str(game), *args, tables=tmp_path)
    assert p.returncode == 2
    assert message in p.stderr and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def test_a_rule_set_of_this_package_named_in_the_tags(tmp_path, monkeypatch):
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tmp_path))  # no saved table: a solve of two pieces
    game = tmp_path / "d4.txt"
    game.write_text('[Rules "ur-simplificado"]\n[Pieces 2]\nlight 4 hand\nlight 1 4-5\ndark 2 hand\n')
    rev = review_file(game)
    assert (rev.rules, rev.pieces, len(rev.moves)) == ("ur-simplificado", 2, 3)
    assert rev.moves[1].events == [] and rev.moves[1].legal == 2  # 4-5 or hand-1
    game.write_text('[Rules "ur-simplificado"]\n[Pieces 2]\nlight 0 pass\n')
    with pytest.raises(RulesError, match=r"move 1 \(line 3, 'light 0 pass'\): wrong throw: 0 is not a throw of "
                                         r"a 4-sided die \(1\.\.4\)"):
        review_file(game)
