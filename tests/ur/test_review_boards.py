"""The review of games played on RoyalUr's other boards (Blitz and Masters on Masters' path, Aseb's board):
short games written by hand in RoyalUr's RGN, each replayed position checked, values read from the table by
rank, and illegal moves refused with their number and the reason."""

from __future__ import annotations

import pytest

from markov_oca.core.errors import RulesError
from markov_oca.ur.notation import board_tiles, game_tags, parse_game, rules_choice
from markov_oca.ur.optimal import solve_optimal
from markov_oca.ur.review import review_file
from markov_oca.ur.rules import load_ur
from markov_oca.ur.state import encode, space_of

# RoyalUr's RGN (RoyalUr-Java's notation.RGN): a tile is its column letter and row along the side's path; a piece
# enters with A@ / C@ and leaves with A+ / C+ on every board. Masters' path, light: A4..A1 (squares 1-4), B1..B7
# (5-11), C7 C8 B8 A8 A7 (12-16); dark: C4..C1, B1..B7, A7 A8 B8 C8 C7. Aseb's board: A4..A1, then B1..B12 (5-16).
# Off is square 17 on these 16-square paths.
MASTERS = """[Rules "Masters"]
[Pieces "2"]

1. A@A4 / C@C1 * C1B4 * B4A7 * A7C7 * C@C4 2. A4A1 * A1B4 * B4C7x * A@A4 / C@C3 3. C7A7 * A7A+
"""
# light's B4C7 is its square 8 to 12; dark's piece on C7 is on its square 16: the capture sends it home
MASTERS_AFTER = [([0, 1], [0, 0]), ([0, 1], [0, 4]), ([0, 1], [0, 8]), ([0, 1], [0, 12]), ([0, 1], [0, 16]),
                 ([0, 1], [1, 16]), ([0, 4], [1, 16]), ([0, 8], [1, 16]), ([0, 12], [0, 1]), ([1, 12], [0, 1]),
                 ([1, 12], [1, 2]), ([1, 16], [1, 2]), ([1, 17], [1, 2])]

BLITZ = """[Rules "Blitz"]
[Pieces "2"]

1. A@A1 * A1B2 / C@C1 * C1B2x 0 -- 2. A@A4 / B2B5 3. A4B1 / B5B7 4. A@A3 / B7A7 * A7C7 * C7C+
"""
# dark's capture on B2 throws again (Blitz), and its throw of 0 is a pass; B7A7 is dark's 11 to 12 (a rosette)
BLITZ_AFTER = [([0, 4], [0, 0]), ([0, 6], [0, 0]), ([0, 6], [0, 4]), ([0, 0], [0, 6]), ([0, 0], [0, 6]),
               ([0, 1], [0, 6]), ([0, 1], [0, 9]), ([0, 5], [0, 9]), ([0, 5], [0, 11]), ([2, 5], [0, 11]),
               ([2, 5], [0, 12]), ([2, 5], [0, 16]), ([2, 5], [0, 17])]

ASEB = """[Rules "Aseb"]
[Pieces "2"]

1. A@A1 * A1B4 * 0 -- / C@C2 2. B4B8 * A@A3 / C2B1 3. B8B11 / B1B5 4. B11A+ / B5B8 * B8B9
"""
ASEB_AFTER = [([0, 4], [0, 0]), ([0, 8], [0, 0]), ([0, 8], [0, 0]), ([0, 8], [0, 3]), ([0, 12], [0, 3]),
              ([2, 12], [0, 3]), ([2, 12], [0, 5]), ([2, 15], [0, 5]), ([2, 15], [0, 9]), ([2, 17], [0, 9]),
              ([2, 17], [0, 12]), ([2, 17], [0, 13])]

GAMES = {"ur-masters": (MASTERS, MASTERS_AFTER), "ur-blitz": (BLITZ, BLITZ_AFTER), "ur-aseb": (ASEB, ASEB_AFTER)}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """The two-piece tables of the three rule sets, saved where ``review`` looks for them."""
    from markov_oca.ur.table import table_path, write_table

    where = tmp_path_factory.mktemp("tables")
    values = {}
    for name in GAMES:
        r = load_ur(name, {"pieces": 2})
        values[name] = solve_optimal(r).values
        write_table(r, values[name], table_path(r, where))
    return where, values


def _review(tmp_path, monkeypatch, tables, text, *args, **kw):
    monkeypatch.setenv("MARKOV_OCA_TABLES", str(tables[0]))
    game = tmp_path / "game.rgn"
    game.write_text(text)
    return review_file(game, *args, **kw)


def _value(name, values, mine, theirs):
    """The mover's chance from the table, by rank (1 or 0 once a side has both pieces off)."""
    r = load_ur(name, {"pieces": 2})
    off = r.off_square
    if mine.count(off) == 2 or theirs.count(off) == 2:
        return 1.0 if mine.count(off) == 2 else 0.0
    return float(values[space_of(2, r.code).rank(*encode(mine, theirs, r.code))])


def test_tiles_as_royalur_names_them():
    assert board_tiles(load_ur("ur-masters").board) == {
        "light": ("A4", "A3", "A2", "A1", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "C7", "C8", "B8", "A8", "A7"),
        "dark": ("C4", "C3", "C2", "C1", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "A7", "A8", "B8", "C8", "C7")}
    assert board_tiles(load_ur("ur-aseb").board)["dark"] == ("C4", "C3", "C2", "C1", *(f"B{i}" for i in range(1, 13)))
    assert board_tiles()["light"][-2:] == ("A8", "A7")  # Bell's path


@pytest.mark.parametrize("tag,name,pieces", [("Blitz", "ur-blitz", 5), ("Masters", "ur-masters", 7),
                                             ("aseb", "ur-aseb", 5), ("ur-masters", "ur-masters", None)])
def test_rules_tag_names_the_rule_set(tag, name, pieces):
    assert rules_choice(game_tags(f'[Rules "{tag}"]\n1. A@A4')) == (name, pieces)
    assert rules_choice(game_tags(f'[Rules "{tag}"]\n[Pieces 2]\n1. A@A4')) == (name, 2)
    assert rules_choice(game_tags(f'[Rules "{tag}"]'), "ur-aseb", 1) == ("ur-aseb", 1)  # the options win


@pytest.mark.parametrize("name", list(GAMES))
def test_game_replayed_position_by_position(tmp_path, monkeypatch, tables, name):
    text, after = GAMES[name]
    rev = _review(tmp_path, monkeypatch, tables, text)
    values = tables[1][name]
    own = load_ur(name).pieces
    assert (rev.rules, rev.pieces) == (name, 2)
    assert rev.notes == [f"{name} is played with {own} pieces a side; this game has 2"]
    assert [(m.after["light"], m.after["dark"]) for m in rev.moves] == after
    assert not rev.over and rev.winner is None
    # light's chance at the start and after each action, from the table by rank: the side to move after an
    # action is the one that acts next (the same side after a rosette, a Blitz capture, or at the end)
    assert rev.light_start == pytest.approx(_value(name, values, [0, 0], [0, 0]), abs=1e-12)
    for k, m in enumerate(rev.moves):
        nxt = rev.moves[k + 1].side if k + 1 < len(rev.moves) else ("light" if m.side == "dark" else "dark")
        light, dark = m.after["light"], m.after["dark"]
        v = _value(name, values, light, dark) if nxt == "light" else 1.0 - _value(name, values, dark, light)
        assert m.light_after == pytest.approx(v, abs=1e-12), m.text


def test_masters_capture_on_the_other_sides_square(tmp_path, monkeypatch, tables):
    rev = _review(tmp_path, monkeypatch, tables, MASTERS)
    cap = rev.moves[8]
    assert (cap.text, cap.played, cap.source, cap.target) == ("B4C7x *", "8-12", 8, 12)
    assert "capture" in cap.events and "rosette" in cap.events and "throws again" in cap.events
    assert rev.moves[-1].played == "16-off" and rev.moves[-1].target == 17


def test_plain_list_on_masters_path(tmp_path, monkeypatch, tables):
    text = "light 4 hand\nlight 4 4-8\nlight 4 8\nlight 4 12-16\nlight 1 16-off\ndark 3 hand\n"
    rev = _review(tmp_path, monkeypatch, tables, text, "ur-masters", 2)
    assert [m.played for m in rev.moves] == ["hand-4", "4-8", "8-12", "12-16", "16-off", "hand-3"]
    assert rev.moves[-1].after == {"light": [0, 17], "dark": [0, 3]}


@pytest.mark.parametrize("name,text,message", [
    # Aseb's rosettes are safe: dark holds B4 (square 8 of both paths)
    ("Aseb", "1. A@A4 / C@C1 * C1B4 * C@C4 2. A4B1 / C4C3 3. B1B4",
     "move 7 (turn 3, line 4, light: 'B1B4'): illegal move 5-8 on a throw of 3: the rosette on square 8 is held by "
     "dark (a piece on it is safe)"),
    ("Masters", "1. A@A4x", "move 1 (turn 1, line 4, light: 'A@A4x'): marked 'x' but the move is no capture"),
    ("Masters", "1. A@A4 / C@C4 2. A@A4",
     "move 3 (turn 2, line 4, light: 'A@A4'): illegal move hand-1 on a throw of 1: blocked by light's own piece on "
     "square 1"),
    ("Blitz", "1. A@A1 * A1B1 / C@C4 2. B1C9", "'C9' is not on light's path"),
    ("Blitz", "1. A@A1 * A1C7", "move 2 (turn 1, line 4, light: 'A1C7'): wrong throw: 8 is not a throw of"),
])
def test_illegal_moves_refused(tmp_path, monkeypatch, tables, name, text, message):
    with pytest.raises(RulesError) as err:
        _review(tmp_path, monkeypatch, tables, f'[Rules "{name}"]\n[Pieces "2"]\n\n{text}\n')
    assert message in str(err.value) and str(err.value).startswith(str(tmp_path / "game.rgn"))
    assert "\n" not in str(err.value)


def test_bell_tiles_are_not_masters_tiles():
    # A8 is light's square 13 on Bell's path, 15 on Masters'; A+ is off: 15 on Bell's path, 17 on Masters'
    text = "1. A@A1 * A1B4 * B4A8 A8A+"
    bell = parse_game(text, "g")
    masters = parse_game(text, "g", load_ur("ur-masters").board)
    assert [(a.source, a.target, a.throw) for a in bell.actions] == [(0, 4, 4), (4, 8, 4), (8, 13, 5), (13, 15, 2)]
    assert [(a.source, a.target, a.throw) for a in masters.actions] == [(0, 4, 4), (4, 8, 4), (8, 15, 7),
                                                                         (15, 17, 2)]


@pytest.mark.parametrize("name", list(GAMES))
def test_review_from_an_rgu_table(tmp_path, monkeypatch, tables, name):
    # the RoyalUr table `ur export-table` writes for the board gives the same chances, to a percent16 step
    from markov_oca.ur.table import write_rgu

    text = GAMES[name][0]
    exact = _review(tmp_path, monkeypatch, tables, text)
    rgu = tmp_path / "t.rgu"
    write_rgu(load_ur(name, {"pieces": 2}), tables[1][name], rgu)
    rev = _review(tmp_path, monkeypatch, tables, text, table=rgu)
    assert [m.played for m in rev.moves] == [m.played for m in exact.moves]
    assert max(abs(a - b) for a, b in zip(rev.light_chance, exact.light_chance, strict=True)) <= 0.5 / 65535 + 1e-12


def test_an_rgu_table_of_another_board_is_refused(tmp_path, monkeypatch, tables):
    from markov_oca.ur.table import write_rgu

    rgu = tmp_path / "aseb.rgu"
    write_rgu(load_ur("ur-aseb", {"pieces": 2}), tables[1]["ur-aseb"], rgu)
    with pytest.raises(RulesError) as err:
        _review(tmp_path, monkeypatch, tables, MASTERS, table=rgu)
    assert str(err.value) == (f"{rgu}: a table of the board shape 'aseb', the game (ur-masters) is played on "
                              "'standard'")
