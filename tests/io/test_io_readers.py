"""Chain files as Storm and PRISM write them: DRN, explicit and UMB, read to the right values or refused in one line."""

from __future__ import annotations

import gzip
import time
from fractions import Fraction as F

import numpy as np
import pytest

from markov_oca.analysis.build import ChainError, from_matrix
from markov_oca.analysis.general import analyse
from markov_oca.io.chains import analyse_file, read_chain
from markov_oca.io.drn import UNNAMED_REWARD
from markov_oca.io.umb import write_umb
from markov_oca.io.write import write_chain

# Storm's export of a PRISM model with one unnamed reward structure (a state and an action reward),
# a valuation comment under each state and __NOLABEL__ actions.
STORM_UNNAMED = """// Exported by storm
// Original model type: DTMC
@type: DTMC
@value_type: double
@parameters

@reward_models
{blank}
@nr_states
4
@nr_choices
4
@model
state 0 [1] init
//[s=0]
\taction __NOLABEL__ [0]
\t\t1 : 0.3333333333
\t\t2 : 0.6666666667
state 1 [1]
//[s=1]
\taction __NOLABEL__ [5]
\t\t0 : 0.3
\t\t3 : 0.7
state 2 [0]
//[s=2]
\taction __NOLABEL__ [0]
\t\t2 : 1
state 3 [0] goal
//[s=3]
\taction __NOLABEL__ [0]
\t\t3 : 1
""".format(blank=" ")  # Storm writes the unnamed name followed by a space


def _ruin(n: int, p: F) -> list[list[F]]:
    P = [[F(0)] * (n + 1) for _ in range(n + 1)]
    P[0][0] = P[n][n] = F(1)
    for i in range(1, n):
        P[i][i + 1], P[i][i - 1] = p, 1 - p
    return P


def test_unnamed_reward_model_read_with_its_rewards(tmp_path):
    p = tmp_path / "storm.drn"
    p.write_text(STORM_UNNAMED)
    chain = read_chain(p)
    assert list(chain.state_rewards) == [UNNAMED_REWARD]
    assert chain.state_rewards[UNNAMED_REWARD].tolist() == [1, 6, 0, 0]  # state plus action reward
    res = analyse(chain)
    # from 0: x0 = 1/3 x1, x1 = 0.3 x0 + 0.7 -> goal 7/27 (within the file's ten digits)
    assert abs(res.outcomes["goal"] - 7 / 27) < 1e-9
    exact = analyse_file(p, exact=True)
    # the decimals read exactly: 3333333333/10^10, 0.3 = 3/10...
    x1 = F(7, 10) / (1 - F(3, 10) * F(3333333333, 10 ** 10))
    assert exact.outcomes["goal"] == F(3333333333, 10 ** 10) * x1
    assert exact.rewards[UNNAMED_REWARD]["total"] > 0


def test_decimals_exact_and_bad_rows_named(tmp_path):
    p = tmp_path / "walk.drn"
    p.write_text("@type: DTMC\n@value_type: double\n@parameters\n\n@reward_models\n\n@nr_states\n3\n@model\n"
                 "state 0 init\n\taction 0\n\t\t1 : 0.7\n\t\t2 : 3e-1\nstate 1 a\n\taction 0\n\t\t1 : 1\n"
                 "state 2\n\taction 0\n\t\t2 : 1.0\n")
    chain = read_chain(p, exact=True)
    assert chain.exact and chain.denom == 10 and chain.pnum[0].tolist() == [7, 3]
    assert analyse(chain, exact=True).outcomes["a"] == F(7, 10)
    float_chain = read_chain(p)  # the file's decimals held exactly, answered in floating point by default
    assert float_chain.decimal and float_chain.pnum[0].tolist() == [7, 3] and not analyse(float_chain).exact
    bad = tmp_path / "bad.drn"
    bad.write_text(p.read_text().replace("2 : 3e-1", "2 : 0.30000001"))
    with pytest.raises(ChainError, match=r"bad.drn: state 0: probabilities sum to 100000001/100000000, not 1 "
                                         r"\(exactly\)"):
        read_chain(bad, exact=True)
    assert abs(read_chain(bad, tol=1e-6).pnum[0].sum() - read_chain(bad, tol=1e-6).denom) == 0  # float: tolerated
    tra = tmp_path / "w.tra"
    tra.write_text("dtmc\n0 1 0.7\n0 2 0.29\n1 1 1\n2 2 1\n")
    with pytest.raises(ChainError, match=r"w.tra: state 0: probabilities sum to 99/100, not 1 \(exactly\)"):
        read_chain(tra, exact=True)


def test_size_mismatch_refused_at_once(tmp_path):
    p = tmp_path / "huge.drn"
    p.write_text("@type: DTMC\n@parameters\n\n@reward_models\n\n@nr_states\n1000000000\n@nr_choices\n1000000000\n"
                 "@model\nstate 0 init\n\taction 0\n\t\t0 : 1\n")
    t = time.perf_counter()
    with pytest.raises(ChainError) as e:
        read_chain(p)
    assert time.perf_counter() - t < 1.0
    assert str(e.value) == (f"{p}: @nr_states declares 1,000,000,000 states but the model lists 1 "
                            "(is the file cut short?)")
    cut = tmp_path / "cut.drn"
    cut.write_text(STORM_UNNAMED[:STORM_UNNAMED.index("\t\t3 : 0.7")])
    with pytest.raises(ChainError, match=r"cut.drn: @nr_states declares 4 states but the model lists 2 \(is the file"):
        read_chain(cut)
    cut.write_text(STORM_UNNAMED[:STORM_UNNAMED.index("\t\t0 : 0.3")])
    with pytest.raises(ChainError, match=r"cut.drn: line 19: 'state 1 \[1\]': state 1 has no transitions"):
        read_chain(cut)
    tra = tmp_path / "cut.tra"
    tra.write_text("3 5\n0 1 0.5\n0 2 0.5\n1 1 1\n")
    with pytest.raises(ChainError, match=r"cut.tra: the header declares 5 transitions but the file lists 3"):
        read_chain(tra)


@pytest.mark.parametrize("content, message", [
    (b"\xef\xbb\xbf@type: DTMC\n", "starts with a UTF-8 byte-order mark: save it as UTF-8 without one"),
    (b"\xff\xfe@\x00t\x00", "starts with a UTF-16 byte-order mark: save it as UTF-8 without one"),
    (b"\x00\x01\x02\xff\xfe", "a binary file, not text (a NUL byte at line 1, column 1)"),
    (b"@type: DTMC\n\xff\xfe\n", "byte 0xff at line 2, column 1 is not UTF-8 text"),
    (gzip.compress(b"@type: DTMC\n", mtime=0), "a binary file, not text"),
])
@pytest.mark.parametrize("suffix", [".drn", ".tra"])
def test_bytes_and_bom_one_line(tmp_path, content, message, suffix):
    p = tmp_path / f"x{suffix}"
    p.write_bytes(content)
    with pytest.raises(ChainError) as e:
        read_chain(p)
    text = str(e.value)
    if "gzip" not in message and content[:2] != b"\x1f\x8b":
        assert text == f"{p}: {message}"
    assert text.startswith(f"{p}: ") and "\n" not in text


@pytest.mark.parametrize("content, message", [
    ("@type: DTMC\n@nr_states\n1\n@model\n\t\t0 : 1\n", "line 5: '0 : 1': a transition before any state"),
    ("@type: DTMC\n@nr_states\n1\n@model\nstate 0\n\taction 0\n\t\t0 : 1\n\taction 1\n\t\t0 : 1\n",
     "line 8: 'action 1': a second action: an MDP, not a DTMC"),
    ("@type: DTMC\n@reward_models\nr \n@nr_states\n1\n@model\nstate 0 [1, 2]\n\taction 0\n\t\t0 : 1\n",
     "line 7: 'state 0 [1, 2]': rewards for 2 reward model(s), the header names 1"),
    ("@type: DTMC\n@nr_states\n1\n@model\nstate 0\n\taction 0\n\t\t0 : x\n", "line 7: 'x' is not a number"),
    ("@type: DTMC\n@nr_states\n1\n@model\nstate 0\n\taction 0\n\t\t0 = 1\n", "a transition is 'target : value'"),
    ("@type: DTMC\n@nr_states\n2\n@model\nstate 0\n\taction 0\n\t\t5 : 1\nstate 1\n\taction 0\n\t\t1 : 1\n",
     "a transition to state 5, beyond @nr_states 2"),
    ("@type: DTMC\n@nr_states\n1\n", "no @model line"),
])
def test_bad_drn_lines_named(tmp_path, content, message):
    p = tmp_path / "b.drn"
    p.write_text(content)
    with pytest.raises(ChainError) as e:
        read_chain(p)
    assert message in str(e.value) and str(e.value).startswith(f"{p}: ") and "\n" not in str(e.value)


def test_several_initial_states_kept_and_labels_anywhere(tmp_path):
    p = tmp_path / "two.drn"
    p.write_text("@type: DTMC\n@nr_states\n3\n@model\n// a comment\nstate 0 init start // here too\n\taction 0\n"
                 "\t\t1 : 1/2\n\t\t2 : 1/2\nstate 1 init odd\n\taction 0\n\t\t1 : 1\nstate 2 \"even\"\n\taction 0\n"
                 "\t\t2 : 1\n")
    chain = read_chain(p)
    assert chain.init == 0 and chain.labels["init"].tolist() == [0, 1]
    assert chain.labels["start"].tolist() == [0] and chain.labels["even"].tolist() == [2]
    assert any("2 initial states (0, 1)" in note for note in chain.notes)
    assert chain.outcomes == {"odd": 1, "even": 2}


def test_explicit_prism_and_storm_flavours(tmp_path):
    chain = from_matrix(_ruin(5, F(2, 5)), init=2, labels={"broke": [0], "rich": [5]},
                        rewards={"bet": [0, 1, 2, 3, 4, 0]})
    want = analyse(chain)
    for flavour in ("prism", "storm"):
        files = write_chain(chain, tmp_path / flavour, flavour)
        got = analyse(read_chain(files[0], exact=True))
        assert got.outcomes["rich"] == want.outcomes["rich"]
    # PRISM's reward files with comment headers
    (tmp_path / "p.tra").write_text("2 2\n0 1 1\n1 1 1\n")
    (tmp_path / "p.srew").write_text('# Reward structure "r"\n# State rewards\n2 1\n0 2.5\n')
    assert read_chain(tmp_path / "p.tra").state_rewards["srew"].tolist() == [2.5, 0.0]
    (tmp_path / "m.tra").write_text("dtmc\n0 0 1 0.5\n")
    with pytest.raises(ChainError, match=r"m.tra: line 2: '0 0 1 0.5' has too many fields"):
        read_chain(tmp_path / "m.tra")


def test_umb_round_trip_ours(tmp_path):
    chain = from_matrix(_ruin(6, F(2, 5)), init=2, labels={"broke": [0], "rich": [6]},
                        rewards={"bet": [0, 1, 2, 3, 4, 5, 0]})
    want = analyse(chain)
    exact = analyse(read_chain(write_umb(chain, tmp_path / "r.umb", value_type="rational")))
    assert exact.outcomes == want.outcomes and exact.steps == want.steps
    assert exact.rewards["bet"]["total"] == want.rewards["bet"]["total"]
    (path,) = write_chain(chain, tmp_path / "d", "umb")
    assert path.name == "d.umb"
    got = analyse(read_chain(path))
    assert abs(got.outcomes["rich"] - float(want.outcomes["rich"])) < 1e-14
    (tmp_path / "junk.umb").write_bytes(b"\x00\x01not a tar")
    with pytest.raises(ChainError, match=r"junk.umb: not a UMB archive"):
        read_chain(tmp_path / "junk.umb")
    cut = tmp_path / "cut.umb"
    cut.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ChainError) as e:
        read_chain(cut)
    assert str(e.value).startswith(f"{cut}: ") and "\n" not in str(e.value)


def _storm_reach(stormpy, model, label: str) -> float:
    prop = stormpy.parse_properties(f'P=? [F "{label}"]')[0]
    env = stormpy.environments.sound()
    env.solver().native().precision = stormpy.Rational("1/10000000000")
    value = stormpy.model_checking(model, prop, environment=env).get_value(model.initial_states[0])
    return float(F(str(value))) if not isinstance(value, float) else value


def test_umb_ours_read_by_storm(tmp_path):
    stormpy = pytest.importorskip("stormpy")
    chain = from_matrix(_ruin(8, F(2, 5)), init=3, labels={"broke": [0], "rich": [8]})
    want = float(analyse(chain).outcomes["rich"])
    for value_type in ("double", "rational"):
        model = stormpy.build_model_from_umb(str(write_umb(chain, tmp_path / f"{value_type}.umb",
                                                           value_type=value_type)))
        assert model.nr_states == chain.n and list(model.initial_states) == [3]
        assert abs(_storm_reach(stormpy, model, "rich") - want) < 1e-9


def test_umb_and_drn_storms_read_by_us(tmp_path):
    stormpy = pytest.importorskip("stormpy")
    from stormpy.core._io import export_to_drn, export_to_umb
    from stormpy.examples.files import prism_dtmc_die

    prism = tmp_path / "m.prism"
    prism.write_text("dtmc\nmodule m\n s : [0..3] init 0;\n [] s=0 -> 1/3 : (s'=1) + 2/3 : (s'=2);\n"
                     " [] s=1 -> 0.7 : (s'=3) + 0.3 : (s'=0);\n [] s=2 -> 1 : (s'=2);\n [] s=3 -> 1 : (s'=3);\n"
                     "endmodule\nrewards\n s<2 : 1;\n [] s=1 : 5;\nendrewards\nlabel \"goal\" = s=3;\n")
    for source in (str(prism), prism_dtmc_die):
        model = stormpy.build_model(stormpy.parse_prism_program(source),
                                    options=stormpy.BuilderOptions(build_full=True))
        label = "goal" if source == str(prism) else "six"
        storm = _storm_reach(stormpy, model, label)
        export_to_umb(model, str(tmp_path / "s.umb"))
        export_to_drn(model, str(tmp_path / "s.drn"))
        for name in ("s.umb", "s.drn"):
            res = analyse(read_chain(tmp_path / name))
            assert res.states == model.nr_states
            assert abs(res.outcomes[label] - storm) < 1e-9
            if source == str(prism):
                # goal 7/27; expected reward: 1 + 6 from state 1, visits 27/20 and 9/20... as Storm gives
                assert abs(res.outcomes[label] - 7 / 27) < 1e-9
                assert UNNAMED_REWARD in res.rewards


def test_drn_reads_large_file_by_arrays(tmp_path):
    """A 200,000-state DRN (ten transitions a state) in well under the time a line-by-line reader takes."""
    rng = np.random.default_rng(1)
    n, k = 200_000, 10
    targets = rng.integers(0, n, size=(n, k))
    targets[:, 0] = n - 1
    lines = ["@type: DTMC", "@value_type: double", "@parameters", "", "@reward_models", "", "@nr_states",
             str(n), "@model"]
    body = []
    for s in range(n - 1):
        body.append(f"state {s}" + (" init" if s == 0 else "") + "\n\taction 0\n"
                    + "".join(f"\t\t{t} : 0.1\n" for t in targets[s].tolist()))
    body.append(f"state {n - 1} goal\n\taction 0\n\t\t{n - 1} : 1\n")
    p = tmp_path / "big.drn"
    p.write_text("\n".join(lines) + "\n" + "".join(body))
    t = time.perf_counter()
    chain = read_chain(p)
    took = time.perf_counter() - t
    assert chain.n == n and chain.outcomes == {"goal": n - 1}
    assert took < 10, took
