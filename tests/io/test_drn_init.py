"""DRN as Storm writes a PRISM model: several initial states, an unnamed reward model, labels on any state,
comments, and decimals read exactly with ``exact=True``."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from markov_oca import read_chain
from markov_oca.analysis.build import ChainError
from markov_oca.analysis.general import analyse
from markov_oca.analysis.initial import InitialResults
from markov_oca.io.chains import analyse_file, read_distribution
from markov_oca.io.drn import UNNAMED_REWARD

UP = F(2, 5)


def _rich(i: int, n: int = 4) -> F:
    r = (1 - UP) / UP
    return (1 - r ** i) / (1 - r ** n)


def _steps(i: int, n: int = 4) -> F:
    q = 1 - UP
    return F(i) / (q - UP) - F(n) / (q - UP) * _rich(i, n)


def _ruin_drn(reward_line: str = " ") -> str:
    """Gambler's ruin on 0..4 (up 0.4), started from 1 or 2, as Storm writes it: x=1, x=2 first."""
    return (f"// Exported by storm\n// Original model type: DTMC\n@type: DTMC\n@value_type: double\n@parameters\n\n"
            f"@reward_models\n{reward_line}\n@nr_states\n5\n@nr_choices\n5\n@model\n"
            "state 0 [1] init\n\taction 0 [0]\n\t\t1 : 0.4\n\t\t2 : 0.6\n"
            "state 1 [1] init middle\n\taction 0 [0]\n\t\t0 : 0.6\n\t\t3 : 0.4\n"
            "state 2 [0] broke\n\taction 0 [0]\n\t\t2 : 1\n"
            "state 3 [1]\n\taction 0 [0]\n\t\t1 : 0.6\n\t\t4 : 0.4\n"
            "state 4 [0] rich\n\taction 0 [0]\n\t\t4 : 1\n")


@pytest.mark.parametrize("reward_line", [" ", ""])
def test_unnamed_reward_model_and_each_initial_state(tmp_path, reward_line):
    """Storm writes an unnamed reward structure as an empty name (a space); an empty line reads the same."""
    p = tmp_path / "ruin.drn"
    p.write_text(_ruin_drn(reward_line))
    chain = read_chain(p, exact=True)
    assert chain.exact and chain.labels["init"].tolist() == [0, 1]
    assert list(chain.state_rewards) == [UNNAMED_REWARD] and chain.state_rewards[UNNAMED_REWARD].tolist() == [
        1, 1, 0, 1, 0]
    res = analyse(chain)
    assert isinstance(res, InitialResults) and res.states == [0, 1]
    for state, x in ((0, 1), (1, 2)):
        assert res[state].outcomes == {"broke": 1 - _rich(x), "rich": _rich(x)}
        assert res[state].steps == _steps(x) == res[state].rewards[UNNAMED_REWARD]["total"]
    assert analyse_file(p, exact=True, init="middle").steps == _steps(2)  # a label on a transient state
    assert analyse(chain, init=0, hit=["middle"]).hitting["middle"] == F(2, 5)  # x=1 steps up first


@pytest.mark.parametrize(("header", "names"), [
    ("", [UNNAMED_REWARD, UNNAMED_REWARD + "'"]),  # no names: one unnamed model per value
    ("coins  ", ["coins", UNNAMED_REWARD]),  # Storm: each name followed by a space, the unnamed one empty
    (" coins ", [UNNAMED_REWARD, "coins"]),
])
def test_unnamed_among_reward_models(tmp_path, header, names):
    p = tmp_path / "two.drn"
    p.write_text(f"@type: DTMC\n@reward_models\n{header}\n@nr_states\n2\n@model\nstate 0 [1, 2] init\n"
                 "\taction 0 [0, 1]\n\t\t1 : 1\nstate 1 [0, 0] end\n\taction 0 [0, 0]\n\t\t1 : 1\n")
    chain = read_chain(p)
    assert {k: v.tolist() for k, v in chain.state_rewards.items()} == {names[0]: [1, 0], names[1]: [3, 0]}
    assert analyse(chain).rewards[names[1]]["total"] == 3


def test_comments_anywhere_and_decimals_read_exactly(tmp_path):
    p = tmp_path / "c.drn"
    body = ("// top\n@type: DTMC\n@value_type: double\n@parameters\n\n@reward_models\nr\n@nr_states\n2\n"
            "@nr_choices\n2\n@model\n// inside the model\nstate 0 [2] init start   // after a state\n"
            "\taction 0 [0] // after an action\n"
            "\t\t0 : 0.3 // after a transition\n\t\t// between transitions\n\t\t1 : {p}\nstate 1 [0] goal\n"
            "\taction 0 [0]\n\t\t1 : 1\n// the end\n")
    p.write_text(body.format(p="0.7"))
    chain = read_chain(p, exact=True)
    r = analyse(chain)
    assert r.exact and r.steps == F(10, 7) and r.rewards["r"]["total"] == F(20, 7)
    assert chain.labels["start"].tolist() == [0] and chain.outcomes == {"goal": 1}
    floats = read_chain(p)
    assert floats.decimal and not analyse(floats).exact and abs(analyse(floats).steps - 10 / 7) < 1e-12
    p.write_text(body.format(p="0.6999999999"))  # within the float tolerance, not exactly 1
    assert not read_chain(p).exact
    with pytest.raises(ChainError, match=r"c\.drn: state 0: probabilities sum to 9999999999/10000000000, not 1 "
                                         r"\(exactly\)$"):
        read_chain(p, exact=True)


def test_explicit_files_with_several_initial_states(tmp_path):
    (tmp_path / "w.tra").write_text("4 6\n0 1 1/2\n0 2 1/2\n1 2 1/4\n1 3 3/4\n2 2 1\n3 3 1\n")
    (tmp_path / "w.lab").write_text('0="init" 1="lost" 2="won"\n0: 0\n1: 0\n2: 2\n3: 1\n')
    res = analyse_file(tmp_path / "w.tra")
    assert res.states == [0, 1]
    assert res[0].outcomes == {"won": F(1, 2) + F(1, 8), "lost": F(3, 8)} and res[1].outcomes["won"] == F(1, 4)
    mixed = analyse_file(tmp_path / "w.tra", init="uniform")
    assert mixed.outcomes["won"] == (F(5, 8) + F(1, 4)) / 2 and mixed.steps == (F(3, 2) + 1) / 2


def test_distribution_file(tmp_path):
    p = tmp_path / "ruin.drn"
    p.write_text(_ruin_drn())
    chain = read_chain(p, exact=True)
    d = tmp_path / "start.txt"
    d.write_text("# weights\n0 0.25 // x = 1\n1: 3/4\n3=0\n")
    assert read_distribution(d, chain, exact=True) == {0: F(1, 4), 1: F(3, 4)}
    r = analyse_file(p, exact=True, init_dist=d)
    assert r.steps == F(1, 4) * _steps(1) + F(3, 4) * _steps(2)
    for text, message in (("0 1/2\n1 0.4\n", "the weights sum to 0.9, not 1"), ("0 2\n1 -1\n", "negative weight"),
                          ("0 1\n0 0\n", "line 2: state 0 is given twice"), ("zero 1\n", "line 1: 'zero 1' is not"),
                          ("9 1\n", "initial state 9 is not a state (0..4)"), ("# nothing\n", "an empty distribution")):
        d.write_text(text)
        with pytest.raises(ChainError) as e:
            analyse_file(p, exact=True, init_dist=d)
        assert str(e.value).startswith(f"{d}: ") and message in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ChainError, match="give --init or --init-dist, not both"):
        analyse_file(p, init=0, init_dist=d)


PRISM = """dtmc
module ruin
  x : [0..4];
  [] x>0 & x<4 -> 0.4 : (x'=x+1) + 0.6 : (x'=x-1);
  [] x=0 | x=4 -> 1 : (x'=x);
endmodule
init x=1 | x=2 endinit
rewards
  x>0 & x<4 : 1;
endrewards
label "broke" = x=0;
label "rich" = x=4;
label "middle" = x=2;
"""


def test_storm_writes_named_and_unnamed_rewards(tmp_path):
    stormpy = pytest.importorskip("stormpy")
    sio = pytest.importorskip("stormpy.io")
    (tmp_path / "m.pm").write_text('dtmc\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> 0.5 : (x\'=1) + 0.5 : (x\'=0);\n'
                                   '  [] x=1 -> 1 : (x\'=1);\nendmodule\nrewards\n  x=0 : 1;\nendrewards\n'
                                   'rewards "coins"\n  x=0 : 3;\nendrewards\nlabel "done" = x=1;\n')
    model = stormpy.build_model(stormpy.parse_prism_program(str(tmp_path / "m.pm")))
    sio.export_to_drn(model, str(tmp_path / "m.drn"))
    r = analyse_file(tmp_path / "m.drn", exact=True)
    assert r.rewards["coins"]["total"] == 6 and r.rewards[UNNAMED_REWARD]["total"] == 2 == r.steps


def test_storm_writes_a_prism_model_we_read_back(tmp_path):
    """Storm builds a PRISM model with two initial states and an unnamed rewards block, writes DRN; we read it and
    agree with Storm's value at each initial state and with the closed forms."""
    stormpy = pytest.importorskip("stormpy")
    sio = pytest.importorskip("stormpy.io")
    (tmp_path / "ruin.pm").write_text(PRISM)
    prog = stormpy.parse_prism_program(str(tmp_path / "ruin.pm"))
    model = stormpy.build_model(prog)
    assert list(model.reward_models) == [""] and len(model.initial_states) == 2
    sio.export_to_drn(model, str(tmp_path / "ruin.drn"))
    text = (tmp_path / "ruin.drn").read_text()
    assert "@reward_models\n \n" in text  # the unnamed reward model, as Storm writes it
    res = analyse_file(tmp_path / "ruin.drn", exact=True)
    chain = read_chain(tmp_path / "ruin.drn", exact=True)
    middle = int(chain.labels["middle"][0])
    assert res.states == sorted(model.initial_states) and middle in res.states

    def storm(formula: str) -> dict[int, float]:
        r = stormpy.model_checking(model, stormpy.parse_properties(formula, prog)[0])
        return {s: r.get_value(s) for s in model.initial_states}

    rich, steps = storm('P=? [F "rich"]'), storm('R=? [F "broke" | "rich"]')
    for s in res.states:
        x = 2 if s == middle else 1
        assert res[s].outcomes["rich"] == _rich(x) and res[s].rewards[UNNAMED_REWARD]["total"] == _steps(x)
        assert abs(rich[s] - float(_rich(x))) < 1e-5 and abs(steps[s] - float(_steps(x))) < 1e-5
    sio.export_to_umb(model, str(tmp_path / "ruin.umb"))  # the same model as UMB: doubles, the same starts
    umb = analyse_file(tmp_path / "ruin.umb")
    assert umb.states == res.states and not umb.exact
    for s in umb.states:
        x = 2 if s == middle else 1
        assert abs(umb[s].outcomes["rich"] - float(_rich(x))) <= umb[s].outcome_bounds["rich"] + 1e-14
        assert abs(umb[s].rewards[UNNAMED_REWARD]["total"] - float(_steps(x))) < 1e-12
