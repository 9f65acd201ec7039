"""Bad rule input: one line naming the file and the key, exit code 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from markov_oca import RulesError, api

GOOD = """
[game]
name = "mine"
goal = 20
players = 2
[dice]
count = 1
faces = 6
[squares]
3 = { jump = 11 }
"""

CASES = [
    ("broken", "[game\nname = 'x'", "invalid TOML"),
    ("unknown_key", GOOD.replace("players = 2", "players = 2\ncolour = 'red'"), "game.colour"),
    ("unknown_square_key", GOOD.replace("jump = 11", "jump = 11, teleport = 4"), "squares.3.teleport"),
    ("jump_off_board", GOOD.replace("jump = 11", "jump = 99"), "squares.3.jump"),
    ("square_off_board", GOOD + "25 = { miss = 1 }\n", "squares.25"),
    ("loop", GOOD + "11 = { jump = 3 }\n", "loop"),
    ("bad_goose", GOOD + "5 = { goose = 'sideways' }\n", "squares.5.goose"),
    ("bad_rule_value", GOOD + "[rules]\noccupancy = 'sometimes'\n", "rules.occupancy"),
    ("bad_rule_key", GOOD + "[rules]\noccupy = 'none'\n", "rules.occupy"),
    ("bad_dice", GOOD.replace("faces = 6", "faces = 0"), "dice.faces"),
    ("first_throw_not_a_throw", GOOD + "[first_throw]\n\"7+3\" = 10\n", "first_throw"),
    ("tradition_not_words", GOOD.replace("players = 2", "players = 2\ntradition = 4"), "game.tradition"),
    ("tradition_and_seed", GOOD.replace("players = 2", "players = 2\ntradition = 'mine'\nseed = '001'"), "game.seed"),
]


@pytest.mark.parametrize("name,text,key", CASES, ids=[c[0] for c in CASES])
def test_bad_rule_file_names_file_and_key(tmp_path: Path, name: str, text: str, key: str):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    with pytest.raises(RulesError) as exc:
        api.load(path)
    msg = str(exc.value)
    assert str(path) in msg and key in msg and "\n" not in msg


@pytest.mark.parametrize("name,text,key", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_cli_bad_rule_file_exit_2(tmp_path: Path, name: str, text: str, key: str):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "markov_oca.cli", "solve", str(path)], capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and key in lines[0]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["solve", "oca-moderna", "--players", "0"], "players"),
    (["solve", "oca-moderna", "--option", "nonsense=1"], "nonsense"),
    (["solve", "oca-moderna", "--option", "until=sometimes"], "until"),
    (["solve", "oca-moderna", "--option", "waiting=turns:x"], "waiting"),
    (["solve", "oca-tradicional", "--option", "dice=3"], "dice"),
    (["solve", "no-such-game"], "no-such-game"),
    (["solve", "missing/file.toml"], "missing/file.toml"),
    (["solve", "oca-moderna", "--players", "8"], "GiB"),
])
def test_cli_bad_requests_exit_2(args, needle):
    r = subprocess.run([sys.executable, "-m", "markov_oca.cli", *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_patched_rules_keys_are_checked(tmp_path: Path):
    text = GOOD + "[options.fast]\ndefault = false\npatch.true.rules = { overshot = 'finish' }\n"
    path = tmp_path / "patch.toml"
    path.write_text(text)
    api.load(path)  # the default patches nothing
    with pytest.raises(RulesError, match="overshot"):
        api.load(path, fast="true")


def test_user_board_with_own_option(tmp_path: Path):
    text = GOOD + ("[options.short]\ndefault = false\ndoc = 'a ladder to the goal'\n"
                   "patch.true.squares.3 = { jump = 20 }\n")
    path = tmp_path / "mine.toml"
    path.write_text(text)
    assert api.load(path).square(3).jump == 11
    assert api.load(path, short=True).square(3).jump == 20


@pytest.mark.parametrize("family_head", ["", "family = 'ur'\npieces = 2\n[throw]\nkind = 'die'\nfaces = 4\n"])
def test_tradition_is_read_and_the_older_seed_key_still_is(tmp_path: Path, family_head: str):
    # Every family reads [game] tradition, in words; a file with the older key seed loads with that text.
    head = "[game]\nname = 'mine'\n"
    body = family_head or GOOD.split("name = \"mine\"\n", 1)[1]
    for key, value in (("tradition", "my family's own house rules"), ("seed", "001")):
        path = tmp_path / f"{key}.toml"
        path.write_text(head + f"{key} = {value!r}\n" + body)
        assert api.load(path).seed == value
