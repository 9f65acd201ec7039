"""The report page: files written, HTML that parses and stands alone, the numbers of the solve.

Each report is written once per module; a real browser (headless chromium) renders one goose, one Ur
and one points page when it is installed.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from markov_oca import api
from markov_oca.api import write_report
from markov_oca.core.errors import RulesError
from markov_oca.engine.text import fmt
from markov_oca.ur.solve import solve_ur

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
VOID = {"meta", "img", "br", "hr", "link", "input", "source", "col", "area", "base", "wbr"}
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Page(HTMLParser):
    """The parts of a page the tests look at; also checks that every element is closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.doctype = ""
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []  # rows of cell texts, the header row first
        self._cell: list[str] | None = None

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "title":
            self.title += data
        if self._cell is not None:
            self._cell.append(data)
        if "style" not in self.stack:
            self.text.append(data)

    def table(self, *header: str) -> list[list[str]]:
        """The body rows of the first table whose header starts with ``header``."""
        for t in self.tables:
            if t and tuple(t[0][: len(header)]) == header:
                return t[1:]
        raise AssertionError(f"no table with header {header}")


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def check_page(out: Path, paths: list[Path], pictures: tuple[str, ...] = ("length.png", "board.png")
               ) -> tuple[Page, str]:
    """Everything every report must satisfy; returns the parsed page and the markdown."""
    assert [p.name for p in paths] == ["index.html", "report.md", *pictures]
    for p in paths:
        assert p.is_file() and p.stat().st_size > 0 and p.parent == out
    page = parse(out / "index.html")
    assert page.doctype.lower() == "doctype html"
    assert not page.problems and not page.stack, (page.problems, page.stack)
    tags = [t for t, _ in page.tags]
    assert tags[:2] == ["html", "head"] and "body" in tags
    assert ("meta", {"charset": "utf-8"}) in page.tags
    assert page.title.strip()
    assert "style" in tags and "script" not in tags and "link" not in tags
    assert page.tables and all(t[0] and tags.count("th") for t in page.tables)
    for tag, attrs in page.tags:
        for key in ("src", "href"):
            url = (attrs.get(key) or "").strip().lower()
            assert not url.startswith(("http:", "https:", "//", "ftp:", "file:")), (tag, url)
    images = [a for t, a in page.tags if t == "img"]
    assert len(images) == len(pictures)
    for a in images:
        assert a.get("alt", "").strip()
        src = a["src"]
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert png[:8] == PNG_MAGIC and len(png) > 10_000
        assert int(a["width"]) == int.from_bytes(png[16:20], "big") > 300
    md = (out / "report.md").read_text(encoding="utf-8")
    refs = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", md)
    assert refs == list(pictures)
    for ref in refs:
        data = (out / ref).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 10_000
    return page, md


def md_row(md: str, first: str) -> list[str]:
    """The cells of the markdown table row whose first cell is ``first``."""
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first:
            return cells
    raise AssertionError(f"no markdown row {first!r}")


def check_seats(page: Page, md: str, res) -> None:
    """The winning chances, deadlock and expected turns, as printed, are those of the solve."""
    rows = page.table("Seat", "Chance to win")
    assert [r[0] for r in rows] == [f"seat {s.seat}" for s in res.seats]
    for row, s in zip(rows, res.seats, strict=True):
        assert row[1] == fmt(s.win)
        assert float(row[1]) == pytest.approx(float(s.win), abs=5e-7)
        assert md_row(md, f"seat {s.seat}")[1] == fmt(s.win)
    text = "".join(page.text)
    assert f"Chance of deadlock (the game never ends): {fmt(res.deadlock)}" in text
    assert f"Chance of deadlock (the game never ends): {fmt(res.deadlock)}" in md
    turns = page.table("Expected", "Whole game")[0]
    assert turns == ["turns", fmt(res.expected["turns"].total), fmt(res.expected["turns"].given_end)]
    assert md_row(md, "turns") == turns


# ----------------------------------------------------------------------------- reports, written once


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("reports")


@pytest.fixture(scope="module")
def oca1(out_dir):
    out = out_dir / "oca1"
    return out, write_report("oca-moderna", out, players=1)


@pytest.fixture(scope="module")
def oca2(out_dir):
    out = out_dir / "oca2"
    return out, write_report("oca-moderna", out, players=2)


@pytest.fixture(scope="module")
def snakes(out_dir):
    out = out_dir / "snakes"
    return out, write_report(EXAMPLES / "snakes_and_ladders.toml", out)


@pytest.fixture(scope="module")
def ur2(out_dir):
    out = out_dir / "ur2"
    return out, write_report("ur", out, options={"pieces": 2})


@pytest.fixture(scope="module")
def punti2(out_dir):
    out = out_dir / "punti2"
    return out, write_report("gioco-oca-punti", out, players=2, bet="never")


@pytest.fixture(scope="module")
def punti2_res():
    from markov_oca.punti import solve_punti

    return solve_punti("gioco-oca-punti", 2, bet="never")


# ----------------------------------------------------------------------------- goose


def test_oca_one_player(oca1):
    out, paths = oca1
    page, md = check_page(out, paths)
    res = api.solve("oca-moderna", 1, landings=False)
    check_seats(page, md, res)
    assert float(res.deadlock) > 0.5  # alone in the well or the prison for ever
    assert fmt(res.expected["turns"].total) == "infinite"
    assert page.title == f"{res.title} with 1 player · markov_oca"
    # every special square is listed with its effect, and the options with their docs
    squares = {r[0]: r for r in page.table("Square", "Name", "Effect")}
    assert squares["6"][1:] == ["bridge", "go to 12"]
    assert squares["31"][1:] == ["well", "wait until another piece comes to rest here"]
    assert squares["63"][1] == "goal"
    options = {r[0]: r for r in page.table("Option", "Value")}
    assert options["occupancy"][1] == "occupant-returns"
    assert options["until"][3].startswith("first: the first to finish wins")
    first = page.table("Throw", "Goes to square")
    assert first == [["6+3", "26"], ["5+4", "53"]]


def test_oca_two_players(oca2):
    out, paths = oca2
    page, md = check_page(out, paths)
    res = api.solve("oca-moderna", 2, landings=False)
    check_seats(page, md, res)
    # landings on special squares, per seat: the seat's chance of reaching the goal is its win
    rows = {r[0]: r for r in page.table("Square", "Name", "Seat 1: chance")}
    assert rows["63"][2] == f"{float(res.seats[0].win):.4f}"
    assert rows["63"][4] == f"{float(res.seats[1].win):.4f}"
    assert "spiral" in md


def test_snakes_and_ladders(snakes):
    out, paths = snakes
    page, md = check_page(out, paths)
    res = api.solve(EXAMPLES / "snakes_and_ladders.toml", landings=False)
    check_seats(page, md, res)
    assert fmt(res.deadlock) == "0.000000"
    assert md_row(md, "turns")[1] == fmt(res.expected["turns"].total)
    assert "rows of ten" in md


def test_escaping_and_a_small_board(tmp_path):
    rule = tmp_path / "tricky.toml"
    rule.write_text(
        '[game]\nname = "tricky"\ntitle = "Tom & Jerry <b>race</b>"\nsummary = "a <i>tiny</i> | board"\n'
        "goal = 9\nplayers = 1\n[dice]\ncount = 1\nfaces = 3\n"
        '[squares]\n4 = { name = "<script>alert(1)</script>", jump = 0 }\n7 = { name = "ladder", jump = 8 }\n',
        encoding="utf-8")
    paths = write_report(rule, tmp_path / "out")
    page, md = check_page(tmp_path / "out", paths)
    raw = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "<b>" not in raw and "<i>" not in raw and "<script" not in raw
    assert "&lt;script&gt;" in raw and "Tom &amp; Jerry &lt;b&gt;race&lt;/b&gt;" in raw
    assert page.title.startswith("Tom & Jerry <b>race</b>")  # the parser gives the text back
    assert "\\<script\\>" in md and "Tom & Jerry \\<b\\>race\\</b\\>" in md and "\\| board" in md
    res = api.solve(rule, landings=False)
    check_seats(page, md, res)


def test_bad_requests(tmp_path):
    with pytest.raises(RulesError):
        write_report("oca-moderna", tmp_path, pieces=2)
    with pytest.raises(RulesError):
        write_report("ur", tmp_path, players=3)
    # bet is for points boards; other families take only the default
    for rules in ("oca-moderna", "ur"):
        with pytest.raises(RulesError, match="bet applies to points boards"):
            write_report(rules, tmp_path, bet="always")
    with pytest.raises(RulesError):
        write_report("gioco-oca-punti", tmp_path, pieces=2)
    assert not any(tmp_path.iterdir())  # refused before anything is solved or written


def test_punti_bad_bet(tmp_path):
    with pytest.raises(RulesError) as err:
        write_report("gioco-oca-punti", tmp_path / "out", bet="sometimes")
    msg = str(err.value)
    assert "\n" not in msg and "sometimes" in msg and "never, always, optimal" in msg
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- Ur


def test_ur_two_pieces(ur2):
    out, paths = ur2
    page, md = check_page(out, paths)
    res = solve_ur("ur", options={"pieces": 2})
    rows = page.table("Side", "Plays", "Chance to win")
    assert rows == [["light (moves first)", "optimal", fmt(res.wins["light"])],
                    ["dark", "optimal", fmt(res.wins["dark"])]]
    assert float(rows[0][2]) == pytest.approx(float(res.wins["light"]), abs=5e-7)
    assert md_row(md, "light (moves first)")[2] == fmt(res.wins["light"])
    assert md_row(md, "dark")[2] == fmt(res.wins["dark"])
    assert page.table("Expected", "Whole game")[0][:2] == ["turns", fmt(res.expected["turns"].total, 4)]
    text = "".join(page.text)
    assert "Chance of deadlock (the game never ends): 0.000000" in text
    # The move tables: the opening with each throw, then positions in the middle of the game.
    tables = [t for t in page.tables if t[0][:3] == ["Throw", "Chance of the throw", "Best move"]]
    assert len(tables) == 4
    opening = tables[0][1:]
    assert [r[0] for r in opening] == ["0", "1", "2", "3", "4"]
    assert [r[2] for r in opening[1:]] == ["hand → 1", "hand → 2", "hand → 3", "hand → 4 (throws again, rosette)"]
    assert f"light:0,0 dark:0,0: light to move wins with {res.optimal_value:.6f}" in text
    capture = tables[1][1:]
    assert capture[2][2] == "4 → 6 (capture)" and "hand → 2" in capture[2][4]


def test_ur_occupancy_counts_every_piece():
    from markov_oca.ur.chain import ur_chain
    from markov_oca.ur.optimal import solve_optimal
    from markov_oca.ur.page import _ur_occupancy
    from markov_oca.ur.rules import load_ur

    r = load_ur("ur", {"pieces": 1})
    occ = _ur_occupancy(ur_chain(r, "optimal", "random", solve_optimal(r).values), r.pieces)
    # at the start of every turn each side's one piece is in hand, on a square or off
    np.testing.assert_allclose(occ.sum(axis=1), [1.0, 1.0], atol=1e-9)
    assert (occ >= 0).all() and occ[:, 1:15].max() < 1


# ----------------------------------------------------------------------------- points (punti)


def test_punti_two_players(punti2, punti2_res):
    out, paths = punti2
    page, md = check_page(out, paths, ("points.png", "length.png", "board.png"))
    res = punti2_res
    assert page.title == f"{res.title} with 2 players · markov_oca"
    rows = page.table("Seat", "Starts with", "Chance to win")
    assert [r[0] for r in rows] == ["seat 1", "seat 2"]
    for row, s in zip(rows, res.seats, strict=True):
        # the win share (a tie of k seats counts 1/k), then alone, ties, bankrupt, expected points
        assert row[1:7] == [str(s.start_points), fmt(s.win_share), fmt(s.win), fmt(s.tie), fmt(s.bankrupt),
                            fmt(s.points, 4)]
        assert float(row[2]) == pytest.approx(s.win_share, abs=5e-7)
        assert md_row(md, f"seat {s.seat}")[2] == fmt(s.win_share)
    assert sum(float(r[2]) for r in rows) == pytest.approx(1.0, abs=2e-6)
    assert rows[0][1:3] == ["155", "0.624173"]  # docs/punti.md, the shipped board
    text = "".join(page.text)
    assert "a tie of k seats as 1/k of a win" in text and "a tie of k seats as 1/k of a win" in md
    outcomes = dict(page.table("Outcome", "Chance"))
    assert outcomes == {k: fmt(v) for k, v in res.outcomes.items()}
    assert page.table("Expected", "Whole game")[0] == ["turns", fmt(res.expected["turns"], 4)]
    assert f"median {int(res.length.median)}, 90th percentile {int(res.length.p90)}" in text
    # the rules as read: every square with its effect, the economy options with their docs, the bet policy
    squares = {r[0]: r for r in page.table("Square", "Name", "Effect")}
    assert squares["2"][1:] == ["tax (example amount)", "pay 10 to the bank"]
    assert squares["35"][2] == "2 Pulcinella bets at the next turn"
    assert squares["37"][2].startswith("collect 20 from the bank")
    options = {r[0]: r for r in page.table("Option", "Value")}
    assert options["dowry"][1] == "200" and options["dowry"][3].startswith("points each player is given")
    assert options["head_fee_to"][2] == "seat-1, bank"
    assert "Example amounts: the rule file says so" in text
    assert "nobody ever bets on Pulcinella" in text
    assert "seat 1 starts with 155 points, seat 2 with 145" in text
    alts = [a["alt"] for t, a in page.tags if t == "img"]
    assert "final points" in alts[0] and "kind of effect" in alts[2]


# ----------------------------------------------------------------------------- a real browser

CHROMIUM = shutil.which("chromium")


def chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", *args, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
@pytest.mark.parametrize("report", ["oca2", "ur2", "punti2"])
def test_in_a_browser(report, request, tmp_path):
    from PIL import Image

    out, _paths = request.getfixturevalue(report)
    html_file = out / "index.html"
    dom = chromium(tmp_path, html_file, "--dump-dom").stdout
    page = Page()
    page.feed(dom)
    if report == "oca2":
        numbers = [r[1] for r in page.table("Seat", "Chance to win")]
        res = api.solve("oca-moderna", 2, landings=False)
        assert numbers == [fmt(s.win) for s in res.seats]
    elif report == "punti2":
        numbers = [r[2] for r in page.table("Seat", "Starts with", "Chance to win")]
        res = request.getfixturevalue("punti2_res")
        assert numbers == [fmt(s.win_share) for s in res.seats]
    else:
        numbers = [r[2] for r in page.table("Side", "Plays", "Chance to win")]
        res = solve_ur("ur", options={"pieces": 2})
        assert numbers == [fmt(res.wins["light"]), fmt(res.wins["dark"])]
    shot = tmp_path / "shot.png"
    chromium(tmp_path, html_file, f"--screenshot={shot}", "--window-size=1200,2000", "--hide-scrollbars")
    assert shot.is_file() and shot.stat().st_size > 20_000
    with Image.open(shot) as im:
        assert im.size == (1200, 2000)
        pixels = np.asarray(im.convert("RGB")).reshape(-1, 3)
    colours = np.unique(pixels[::7], axis=0)
    assert len(colours) > 100  # text, tables and plots, not a blank page
    assert (pixels != pixels[0]).any(axis=1).mean() > 0.05


def test_expected_landings_when_no_chances(tmp_path):
    # The chain seen from the mover gives the expected landings but not the chance of ever landing: the page
    # colours the board by seat 1's expected landings, shows those columns only, and says why (no "nan").
    from markov_oca.engine.page import write_page
    from markov_oca.goose.page import goose_page
    from markov_oca.goose.rules import load_goose
    from markov_oca.goose.solve import solve_goose

    rules = load_goose("oca-moderna")
    res = solve_goose(rules, 2, route="rotated")
    assert res.landings and all(np.isnan(float(x.chance)) for x in res.landings)
    paths = write_page(tmp_path, *goose_page(rules, res))
    page, md = check_page(tmp_path, paths)
    assert not re.search(r"\bnan\b", " ".join(page.text), re.I) and not re.search(r"\bnan\b", md, re.I)
    assert "coloured by the expected number of times seat 1 lands" in md
    rows = {r[0]: r for r in page.table("Square", "Name", "Seat 1: expected landings")}
    landed = {(x.seat, x.square): float(x.expected) for x in res.landings}
    assert rows["63"][2] == f"{landed[(1, 63)]:.4f}" == f"{float(res.seats[0].win):.4f}"
    assert rows["58"][3] == f"{landed[(2, 58)]:.4f}"
    assert not any("Seat 1: chance" in t[0] for t in page.tables if t)
    assert res.landings_note.split(" (")[0].capitalize() in md
