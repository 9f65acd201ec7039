"""Played Ur games read from RoyalUr's RGN, the plain list and JSON: the same game three ways, and bad text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from markov_oca.core.errors import RulesError
from markov_oca.ur.notation import format_move, parse_game, rules_choice

GAMES = Path(__file__).parent / "games"
# games/sample.rgn: a two-piece game written as RoyalUr's RGN writer writes it (RoyalUr-Java's notation.RGN):
# "N." opens light's turn, "/" dark's; a move names its tiles (A@ from light's hand, C+ off dark's end), " *" a
# rosette, "x" a capture, "#" the end; a throw without a move is "0 --". Light's path A4 A3 A2 A1 B1..B8 A8 A7,
# dark's the same with C. games/sample.txt: the same game as a plain list.
SAMPLE_RGN = (GAMES / "sample.rgn").read_text()
SAMPLE_PLAIN = (GAMES / "sample.txt").read_text()

# (side, throw, from, to) of the sample, from the hand (0) to off (15)
SAMPLE = [("light", 0, None, None), ("dark", 4, 0, 4), ("dark", 4, 4, 8), ("dark", 4, 8, 12),
          ("light", 0, None, None), ("dark", 3, 12, 15), ("light", 4, 0, 4), ("light", 4, 4, 8),
          ("light", 1, 8, 9), ("dark", 4, 0, 4), ("dark", 4, 4, 8), ("dark", 4, 8, 12), ("light", 3, 0, 3),
          ("dark", 3, 12, 15)]


def _moves(rec):
    return [(a.side, a.throw, a.source, a.target) for a in rec.actions]


def test_rgn_sample_reads_as_royalur_writes_it():
    rec = parse_game(SAMPLE_RGN, "sample.rgn")
    assert rec.form == "rgn"
    assert rec.tags == {"Rules": "Finkel", "Pieces": "2", "Light": "Ann", "Dark": "Bob"}
    assert _moves(rec) == SAMPLE
    assert [a.number for a in rec.actions] == list(range(1, 15))
    assert [a.turn for a in rec.actions] == [1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4]
    assert [a.line for a in rec.actions][:5] == [6, 6, 6, 6, 6] and rec.actions[-1].line == 7
    assert [a.rosette for a in rec.actions[:4]] == [None, True, True, None]
    assert rec.actions[2].text == "C1B4 *"
    assert rec.actions[-1].ends and not any(a.ends for a in rec.actions[:-1])
    assert rules_choice(rec) == ("ur", 2)


def test_plain_and_json_forms_read_the_same_game():
    plain = parse_game(SAMPLE_PLAIN, "sample.txt")
    assert plain.form == "plain" and plain.result == "0-1"
    assert _moves(plain) == SAMPLE
    assert plain.actions[12].line == 16  # lines count from the top of the file, tags included
    doc = {"rules": "ur", "pieces": 2, "tags": {"Light": "Ann"},
           "moves": [{"side": s, "throw": t, "from": f} | ({"to": to} if to is not None else {})
                     for s, t, f, to in SAMPLE]}
    js = parse_game(json.dumps(doc), "sample.json")
    assert js.form == "json"
    assert _moves(js) == SAMPLE
    assert js.tags == {"Light": "Ann", "Rules": "ur", "Pieces": "2"}


def test_comments_whitespace_case_and_results():
    text = ("[Rules Finkel]\n\n{ a comment\n over two lines } 1. a@a1   *  a1b2 ; to the end of the line\n"
            "/ c@c2\n{x} 2. 0 --  1-0\n")
    rec = parse_game(text)
    assert _moves(rec) == [("light", 4, 0, 4), ("light", 2, 4, 6), ("dark", 3, 0, 3), ("light", 0, None, None)]
    assert rec.actions[0].rosette is True and rec.result == "1-0"
    captured = parse_game("1. A@A1 * A1B1 / C@C4 C4B1x")
    assert [a.capture for a in captured.actions] == [None, None, None, True]
    assert parse_game('[Result "*"]\n1. A@A3').result == "*"


@pytest.mark.parametrize(("text", "message"), [
    ("[Rules Finkel\n1. A@A1", "line 1: a tag is"),
    ('[Rules "Finkel"]\n1. A@A1 B1?', "move 2 (line 2, 'B1?'): not RGN move text"),
    ("1. C@C2", "move 1 (line 1, 'C@C2'): 'C@' is not on light's path"),
    ("1. A@A3 / A@A2", "'A@' is not on dark's path"),
    ("1. A@A3 / C@C3 3. A3A1", "light's turn 2 comes next, not 3"),
    ("A@A3", "the move text starts with a turn mark"),
    ("1. -- ", "'--' follows the throw it passes on"),
    ("1. 2 A@A2", "a throw without a move is written '2 --'"),
    ("1. A2A@", "move 1 (line 1, 'A2A@'): not RGN move text"),
    ("1. A@A3 / C@C2 2. A3A4", "a piece moves forward along its path (2-1)"),
    ("1. A@A3 {open", "a '{' comment is never closed"),
    ("1. A@A3 1-0 / C@C2", "an action after the result '1-0'"),
    ("light 3\n", "move 1 (line 1, 'light 3'): a line is 'SIDE THROW MOVE'"),
    ("light 3 hand\nlight x 3", "move 2 (line 2, 'light x 3'): the throw is a whole number"),
    ("light 3 hand\nlight 2 3-6", "wrong throw at move 2 (line 2, 'light 2 3-6'): 3-6 walks 3 squares, the throw is 2"),
    ("light 3 16", "a piece moves from hand (0) or 1..14, not '16'"),
    ("light 3 pass-3", "move 1 (line 1, 'light 3 pass-3'): a pass has no target"),
    ('{"moves": [{"side": "light", "throw": 2}], "bad": 1}', "unknown key 'bad'"),
    ('{"moves": [{"side": "blue", "throw": 2, "from": 0}]}', "move 1 (moves[0]): the side is light or dark"),
    ('{"moves": [{"side": "light", "throw": 2, "from": 0, "to": 3}]}', "wrong throw at move 1"),
    ('{"moves": [', "line 1: not valid JSON"),
])
def test_malformed_text_is_one_line_naming_the_place(text, message):
    with pytest.raises(RulesError) as exc:
        parse_game(text, "g.rgn")
    msg = str(exc.value)
    assert msg.startswith("g.rgn: ") and message in msg and "\n" not in msg


def test_rules_from_tags_and_options():
    assert rules_choice(parse_game('[Rules "Finkel with Two Pieces"]\n1. A@A1')) == ("ur", 2)
    assert rules_choice(parse_game('[Rules "Finkel"]\n1. A@A1')) == ("ur", 7)
    assert rules_choice(parse_game('[Rules "ur-simplificado"]\n[Pieces 3]\n1. A@A1')) == ("ur-simplificado", 3)
    assert rules_choice(parse_game("light 2 hand"), "ur", 4) == ("ur", 4)
    assert rules_choice(parse_game("light 2 hand")) == ("ur", None)
    with pytest.raises(RulesError, match=r"line 2: \[Pieces\] is a whole number, not 'two'"):
        rules_choice(parse_game('[Rules "Finkel"]\n[Pieces two]\n1. A@A1', "g.rgn"))


def test_format_move():
    assert [format_move(0, 3), format_move(5, 9), format_move(12, 15), format_move(None, None)] == \
        ["hand-3", "5-9", "12-off", "pass"]
