"""``markov-oca analyse`` on a chain with several initial states: each reported, ``--init``, ``--init-dist``."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction as F

import pytest

DRN = ("@type: DTMC\n@value_type: double\n@parameters\n\n@reward_models\n \n@nr_states\n4\n@model\n"
       "state 0 [0] broke\n\taction 0 [0]\n\t\t0 : 1\n"
       "state 1 [1] init\n\taction 0 [0]\n\t\t0 : 0.5\n\t\t2 : 0.5\n"
       "state 2 [1] init top\n\taction 0 [0]\n\t\t1 : 0.5\n\t\t3 : 0.5\n"
       "state 3 [0] rich\n\taction 0 [0]\n\t\t3 : 1\n")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "markov_oca.cli", "analyse", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def drn(tmp_path):
    p = tmp_path / "fair.drn"
    p.write_text(DRN)
    return p


def _fraction(x) -> F:
    return F(x["fraction"])


def test_each_initial_state_in_json_and_text(drn):
    """Fair gambler's ruin on 0..3: from 1, rich 1/3 after 2 steps on average; from 2, rich 2/3, also 2 steps."""
    r = run(str(drn), "--exact", "--format", "json", "--no-pmf")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["chain"]["init"] == [1, 2] and len(d["initial"]) == 2
    for x, start in zip(d["initial"], (1, 2), strict=True):
        assert x["chain"]["init"] == start and _fraction(x["outcomes"]["rich"]) == F(start, 3)
        assert _fraction(x["expected"]["steps"]["total"]) == F(start * (3 - start))
        assert "pmf" not in x["length"]
    text = run(str(drn)).stdout
    assert "2 initial states (1, 2)" in text and "from state 1:" in text and "from state 2:" in text


def test_one_initial_state_keeps_the_single_schema(drn):
    d = json.loads(run(str(drn), "--exact", "--init", "top", "--format", "json").stdout)
    assert d["chain"]["init"] == 2 and "initial" not in d and _fraction(d["outcomes"]["rich"]) == F(2, 3)
    assert json.loads(run(str(drn), "--init", "1", "--format", "json").stdout)["chain"]["init"] == 1


def test_distribution_from_a_file_and_uniform(drn, tmp_path):
    dist = tmp_path / "w.txt"
    dist.write_text("1 1/4\n2 0.75\n")
    d = json.loads(run(str(drn), "--exact", "--init-dist", str(dist), "--format", "json").stdout)
    assert d["chain"]["init"] is None and _fraction(d["outcomes"]["rich"]) == F(1, 4) * F(1, 3) + F(3, 4) * F(2, 3)
    u = json.loads(run(str(drn), "--exact", "--init", "uniform", "--format", "json").stdout)
    assert _fraction(u["outcomes"]["rich"]) == F(1, 2) and _fraction(u["expected"]["steps"]["total"]) == 2
    assert "initial distribution  " in run(str(drn), "--init", "uniform").stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--init", "7"), "initial state 7 is not a state (0..3)"),
    (("--init", "nowhere"), "initial state 'nowhere' is neither a state number"),
    (("--init-dist", "{dist}"), "the weights sum to 0.9, not 1"),
    (("--init", "1", "--init-dist", "{dist}"), "give --init or --init-dist, not both"),
])
def test_bad_initial_states_exit_2_in_one_line(drn, tmp_path, args, message):
    dist = tmp_path / "w.txt"
    dist.write_text("1 0.4\n2 0.5\n")
    r = run(str(drn), *(a.format(dist=dist) for a in args))
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1 and not r.stdout


def test_only_expected_and_a_label_formula(drn):
    """``--only expected``: the expected steps and rewards from each initial state, certified, nothing else;
    ``--hit`` with a formula over labels as Storm prints one."""
    got = run(str(drn), "--only", "expected", "--format", "json")
    assert got.returncode == 0, got.stderr
    each = {r["chain"]["init"]: r for r in json.loads(got.stdout)["initial"]}
    # fair game from 1 and 2 between 0 and 3: 2 steps from either; the reward (1 a step) the same
    for s in (1, 2):
        e = each[s]["expected"]
        assert abs(e["steps"]["total"] - 2) <= e["steps"]["bound"] < 1e-9
        assert abs(e["default"]["total"] - 2) <= e["default"]["bound"]
        assert each[s]["only"] == "expected" and each[s]["classes"] == [] and each[s]["length"] is None
    bad = run(str(drn), "--only", "expected", "--hit", "top")
    assert bad.returncode == 2 and "no --hit beside it" in bad.stderr
    formula = run(str(drn), "--exact", "--init", "1", "--hit", '"top" & !broke', "--format", "json")
    assert formula.returncode == 0, formula.stderr
    assert F(json.loads(formula.stdout)["hitting"]['"top" & !broke']["fraction"]) == F(1, 2)


def test_given_names_how_many_classes_get_figures_given_them(drn):
    # from 1: broke 2/3 after 5/3 steps on average given it, rich 1/3 after 8/3 (fair ruin on 0..3: i(2N - i)/3
    # and (N^2 - i^2)/3); --given 1 gives the first only and a note says so; an exact fraction carries no bound
    one = json.loads(run(str(drn), "--exact", "--init", "1", "--given", "1", "--format", "json", "--no-pmf").stdout)
    broke, rich = one["classes"]
    assert _fraction(broke["steps_given"]) == F(5, 3) and rich["steps_given"] is None
    assert "absorption_bound" not in broke and "steps_given_bound" not in broke
    assert any("the 1 most likely of the 2 classes" in n for n in one["notes"])
    both = json.loads(run(str(drn), "--float", "--init", "1", "--format", "json", "--no-pmf").stdout)
    broke, rich = both["classes"]
    assert abs(F(rich["steps_given"]) - F(8, 3)) <= rich["steps_given_bound"] < 1e-9
    assert not any("most likely" in n for n in both["notes"])
    bad = run(str(drn), "--given", "-1")
    assert bad.returncode == 2 and "--given" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
