"""Every example under examples/ runs, and prints what the library computes.

Each script runs in a subprocess with this test's Python and small arguments; the values it
prints are compared with :func:`markov_oca.api.solve` (or with an independent evaluation), so
an example that drifts from the library fails here. The notebook is executed top to bottom
with nbclient in a kernel started from this same Python; a cell that raises fails the test.
"""

from __future__ import annotations

import ast
import json
import re
import runpy
import subprocess
import sys
from fractions import Fraction
from functools import cache

import pytest
import sympy
from support import EXAMPLES

from markov_oca import api

SCRIPTS = ["players.py", "research.py", "simulator_check.py", "oca_simulator.py"]


def run(script: str, *args: str, timeout: float = 300) -> str:
    """Run an example as a user would, with this test's Python; its standard output."""
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=EXAMPLES.parent)
    assert done.returncode == 0, f"{script} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@cache
def solved(rules: str, players: int, **options: str):
    return api.solve(rules, players=players, options=options or None, landings=False)


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_example_says_who_it_is_for_and_how_to_run_it(script):
    doc = ast.get_docstring(ast.parse((EXAMPLES / script).read_text(encoding="utf-8")))
    assert doc and "Who it is for" in doc and "Run::" in doc, script


def test_players_prints_each_seats_chance_and_the_length_as_solve_computes_them(tmp_path):
    out = run("players.py", "--games", "oca-moderna", "snakes-and-ladders", "--players", "2",
              "--ur-pieces", "1", "--out", str(tmp_path))
    snakes = str(EXAMPLES / "snakes_and_ladders.toml")
    for name, rules in (("oca-moderna", "oca-moderna"), ("snakes-and-ladders", snakes)):
        row = re.search(rf"^{name}\s+2\s+(.*)$", out, re.M)
        assert row, (name, out)
        seat1, seat2, deadlock, turns, median, p90 = (float(x) for x in row.group(1).split())
        r = solved(rules, 2)
        assert (seat1, seat2) == pytest.approx([float(s.win) for s in r.seats], abs=5e-5)
        assert deadlock == pytest.approx(float(r.deadlock), abs=5e-5)
        assert turns == pytest.approx(float(r.expected["turns"].given_end), abs=0.05)
        assert (median, p90) == (r.length.given_end["median"], r.length.given_end["p90"])
    # the first player's edge at oca-moderna is small but there: 0.4207 against 0.4129
    assert re.search(r"^oca-moderna\s+2\s+0\.4207\s+0\.4129\s+0\.1664", out, re.M), out
    ur = re.search(r"^\s+1\s+(0\.\d+)\s+(0\.\d+)", out.split("Royal Game of Ur")[1], re.M)
    u = api.solve("ur", pieces=1)
    assert (float(ur.group(1)), float(ur.group(2))) == pytest.approx([u.wins["light"], u.wins["dark"]], abs=5e-7)
    assert float(ur.group(1)) > 0.5  # moving first is an advantage
    for picture in ("advantage.png", "length.png", "ur.png"):
        assert (tmp_path / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", picture


def test_research_prints_exact_fractions_and_the_variants_differences(tmp_path):
    out = run("research.py", "--dir", str(tmp_path))
    # 1. the little board: the expected throws and the chance to meet the snake, against sympy's own solve
    P, throws = runpy.run_path(str(EXAMPLES / "research.py"), run_name="research_example")["little_board"]()
    Q = sympy.Matrix(8, 8, lambda i, j: sympy.Rational(P[i, j].numerator, P[i, j].denominator))
    visits = (sympy.eye(8) - Q).T.solve(sympy.Matrix([1] + [0] * 7))  # expected visits from square 0
    expected = sum(visits[s] * throws[s] for s in range(8))
    assert f"expected coin throws:          {expected}  =" in out, out
    Q_snake = Q.copy()
    Q_snake[5, :] = sympy.zeros(1, 8)  # the first visit to 5 is where the count stops
    hit = (sympy.eye(8) - Q_snake).solve(sympy.Matrix([0] * 5 + [1] + [0] * 2))[0]
    assert f"chance to meet the snake:      {hit}" in out
    # 2. Knuth and Yao's die: each face 1/6, 11/3 flips
    assert "each face: face1 1/6, face2 1/6, face3 1/6, face4 1/6, face5 1/6, face6 1/6" in out
    assert "expected flips: 11/3" in out
    assert (tmp_path / "knuth_yao.drn").is_file()
    # 3. snakes and ladders, one player: the fraction printed is the exact expected length
    num, den = re.search(r"expected turns: (\d+)/(\d+)", out).groups()
    assert float(Fraction(int(num), int(den))) == pytest.approx(39.225122308234958, rel=1e-15)
    # 4. oca-moderna with waiting=turns:2: the figures printed are those of the two solves
    a, b = solved("oca-moderna", 2), solved("oca-moderna", 2, waiting="turns:2")
    for k in (1, 2):
        row = re.search(rf"seat {k} wins\s+(\S+)\s+(\S+)\s+(\S+)", out)
        shipped, variant, diff = (float(x) for x in row.groups())
        assert shipped == pytest.approx(float(a.seats[k - 1].win), rel=1e-5)
        assert variant == pytest.approx(float(b.seats[k - 1].win), rel=1e-5)
        assert diff == pytest.approx(variant - shipped, abs=2e-6)
    row = re.search(r"never ends \(deadlock\)\s+(\S+)\s+(\S+)", out)
    assert float(row.group(1)) == pytest.approx(float(a.deadlock), rel=1e-5) and float(row.group(2)) == 0


def test_simulator_check_passes_the_simulator_and_catches_the_planted_bug(tmp_path):
    out = run("simulator_check.py", "--games", "5000", "--dir", str(tmp_path))
    assert "verdict, simulator as written: PASS" in out, out
    assert "verdict, prison on 56: FAIL" in out, out
    assert "$ markov-oca crosscheck oca-moderna --players 2 --results" in out
    # the simulator stands for another language's program: it imports nothing of markov_oca
    tree = ast.parse((EXAMPLES / "oca_simulator.py").read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    # its file is one a results reader takes: winner (1, 2 or empty), turns, throws; every game there
    rows = (tmp_path / "games.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "winner,turns,throws" and len(rows) == 5001
    winners = [r.split(",")[0] for r in rows[1:]]
    assert set(winners) == {"1", "2", ""}
    # the deadlocks (every piece held) are about the chain's share, 0.1664 (4.5 standard errors)
    share = winners.count("") / 5000
    assert abs(share - float(solved("oca-moderna", 2).deadlock)) < 4.5 * (0.1664 * 0.8336 / 5000) ** 0.5


def test_the_notebook_runs_top_to_bottom_in_this_python(tmp_path, monkeypatch):
    # the test extra's nbclient, nbformat, ipykernel and pandas: missing, the test fails (never skipped)
    import nbclient
    import nbformat
    path = EXAMPLES / "tour.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "stored with outputs"
    # a kernel spec of this very Python, so that the notebook runs where the test runs
    spec = tmp_path / "kernels" / "markov-oca-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "markov_oca test", "language": "python"}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    nbclient.NotebookClient(nb, timeout=600, kernel_name="markov-oca-test",
                            resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    assert nb.cells[-1].outputs[0]["text"].strip() == sys.executable

    def shown(tag: str, kind: str) -> str:
        cell = next(c for c in nb.cells if tag in c.metadata.get("tags", []))
        return "".join(o["data"][kind] if "data" in o else o.get("text", "") for o in cell.outputs
                       if kind in o.get("data", {}) or (kind == "text" and o.get("name") == "stdout"))

    r = solved("oca-moderna", 2)
    html = shown("html-view", "text/html")
    assert "seat 1 wins" in html and f"{float(r.seats[0].win):.6f}"[:6] in html, html
    assert "<table" in shown("seats-frame", "text/html")
    assert "39.225122308234958" in shown("exact", "text")
    assert "broke" in shown("any-chain", "text/html") and "9/13" in shown("any-chain", "text/html")
    assert "light" in shown("ur", "text/html")
    value = float(re.search(r"wins with (0\.\d+)", shown("best-move", "text")).group(1))
    assert 0.5 < value < 0.55
