"""DRN export: exact fractions, rewards and labels that Storm reads back to our numbers."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from markov_oca import api
from markov_oca.io.drn import write_drn
from markov_oca.io.write import write_chain


def _read_drn(text: str):
    """A small DRN reader of our own: per state its reward vectors, labels and exact branches."""
    states, cur = {}, None
    for line in text.splitlines():
        if m := re.fullmatch(r"state (\d+) \[([^\]]*)\](.*)", line):
            cur = int(m.group(1))
            states[cur] = {"rew": [Fraction(x) for x in m.group(2).split(", ")], "labels": m.group(3).split(),
                           "out": {}}
        elif m := re.fullmatch(r"\taction 0 \[([^\]]*)\]", line):
            states[cur]["action"] = [Fraction(x) for x in m.group(1).split(", ")]
        elif m := re.fullmatch(r"\t\t(\d+) : (\S+)", line):
            states[cur]["out"][int(m.group(1))] = Fraction(m.group(2))
    return states


def test_drn_is_exact_and_whole(tmp_path):
    chain = api.build("oca-moderna", players=2)
    (path,) = write_chain(chain, tmp_path / "oca2", "drn")
    assert path.name == "oca2.drn"
    text = path.read_text()
    assert "@reward_models\nthrows rounds turns\n" not in text  # turns come first
    assert re.search(r"@reward_models\nturns rounds throws\n@nr_states\n5932\n", text)
    states = _read_drn(text)
    assert len(states) == chain.n
    assert all(sum(s["out"].values()) == 1 for s in states.values())  # exactly, as fractions
    s0 = states[chain.init]
    assert "init" in s0["labels"] and s0["rew"][0] == 1  # a turn starts at the start
    row = {}
    for j, p in zip(chain.next[chain.init], chain.pnum[chain.init], strict=True):
        if j >= 0:
            row[int(j)] = row.get(int(j), 0) + Fraction(int(p), chain.denom)
    assert row == s0["out"]
    # the throws reward sits on the action: the chance that the step is a throw
    thrown = np.where(chain.next >= 0, chain.pnum, 0) * chain.branch_rewards["throws"]
    assert s0["action"][2] == Fraction(int(thrown[chain.init].sum()), chain.denom)
    for name, s in chain.outcomes.items():
        assert "done" in states[s]["labels"] and name.replace(" ", "_") in states[s]["labels"]
    assert not list(tmp_path.glob("*.part"))


def test_storm_reads_drn_to_our_numbers(tmp_path):
    stormpy = pytest.importorskip("stormpy")
    env = stormpy.environments.sound()
    native = env.solver().native()
    native.precision = stormpy.Rational("1/10000000000")
    native.relative_termination_criterion = False
    chain = api.build("oca-tradicional", players=2)
    res = api.solve("oca-tradicional", 2, landings=False)
    model = stormpy.build_model_from_drn(str(write_drn(chain, tmp_path / "t2.drn")))
    assert model.nr_states == chain.n and model.nr_transitions == chain.n_transitions

    def storm(formula: str) -> float:
        prop = stormpy.parse_properties(formula)[0]
        return stormpy.model_checking(model, prop, environment=env).get_value(model.initial_states[0])

    assert abs(storm('P=? [F "seat_1_wins"]') - float(res.seats[0].win)) < 1e-8
    assert abs(storm('P=? [F "deadlock"]') - float(res.deadlock)) < 1e-8
    given = 'R{"%s"}=? [F "done" || F "done"]'
    assert abs(storm(given % "throws") - float(res.expected["throws"].given_end)) < 1e-6
    assert abs(storm(given % "turns") - float(res.expected["turns"].given_end)) < 1e-6
