"""DRN files as Storm writes QComp's benchmark models: quoted labels, decimals, rounded rows, named rewards.

The files under ``data/qvbs`` are QVBS models exported by Storm (attribution in ``data/qvbs/README.md``);
the reference values are the exact ones of QVBS's index. The smaller cases are written inline in the
form Storm gives them.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from markov_oca import analyse_file, read_chain

DATA = Path(__file__).parent / "data" / "qvbs"


def _drn(tmp_path: Path, body: str, rewards: str = "") -> Path:
    p = tmp_path / "m.drn"
    states = body.count("state ")
    p.write_text(f"// Exported by storm\n@type: DTMC\n@value_type: double\n@parameters\n\n@reward_models\n{rewards}\n"
                 f"@nr_states\n{states}\n@nr_choices\n{states}\n@model\n{body}")
    return p


def _within(value, bound, reference: Fraction) -> bool:
    return abs(Fraction(value) - reference) <= Fraction(bound)


# a retry chain like brp's: each of three sends fails with 0.02; P(all three fail) = 1/125000 exactly
_RETRIES = """state 0 init
\taction 0
\t\t1 : 0.02
\t\t4 : 0.98
state 1
\taction 0
\t\t2 : 0.02
\t\t4 : 0.98
state 2 "(s = 5)"
\taction 0
\t\t3 : 0.02
\t\t4 : 0.98
state 3 "(!((srep = 0)) & !(recv))" deadlock
\taction 0
\t\t3 : 1
state 4 ok
\taction 0
\t\t4 : 1
"""


def test_quoted_labels_are_one_label_each(tmp_path):
    chain = read_chain(_drn(tmp_path, _RETRIES))
    assert chain.labels["(s = 5)"].tolist() == [2]
    assert chain.labels["(!((srep = 0)) & !(recv))"].tolist() == [3]
    assert "(s" not in chain.labels and "&" not in chain.labels
    r = analyse_file(_drn(tmp_path, _RETRIES), exact=True, hit=["(s = 5)", "(!((srep = 0)) & !(recv))"])
    assert r.hitting == {"(s = 5)": Fraction(1, 2500), "(!((srep = 0)) & !(recv))": Fraction(1, 125000)}


def test_decimals_are_the_files_values_in_float_mode(tmp_path):
    """0.02 is 1/50: the float answer is certified for the file's chain, not for a rounding of it to 2**-53."""
    chain = read_chain(_drn(tmp_path, _RETRIES))
    assert chain.decimal and [Fraction(int(x), chain.denom) for x in chain.pnum[0]] == [Fraction(1, 50),
                                                                                         Fraction(49, 50)]
    r = analyse_file(_drn(tmp_path, _RETRIES), exact=False, hit=["(!((srep = 0)) & !(recv))"])
    assert not r.exact
    name = "(!((srep = 0)) & !(recv))"
    assert _within(r.hitting[name], r.bounds[f"hitting {name}"], Fraction(1, 125000))
    assert _within(r.classes[0].absorption, r.classes[0].bound, Fraction(1, 125000))


def test_rounded_rows_are_read_back_as_fractions():
    """Storm writes 1/27 as 0.03703703704: no row sums to 1, yet exact mode gives QVBS's 9/8 and float mode
    brackets it."""
    path = DATA / "leader_sync-3-3.drn"
    exact = analyse_file(path, exact=True, hit=["elected"])
    assert exact.rewards["num_rounds"]["total"] == Fraction(9, 8)
    assert exact.hitting["elected"] == 1
    assert any("read as the simplest fractions" in n for n in read_chain(path).notes)
    fl = analyse_file(path, exact=False)
    assert _within(fl.rewards["num_rounds"]["total"], fl.rewards["num_rounds"]["bound"], Fraction(9, 8))


def test_a_row_that_is_not_a_rounding_stays_refused(tmp_path):
    body = "state 0 init\n\taction 0\n\t\t0 : 0.3333333333\n\t\t1 : 0.3333333333\n\t\t2 : 0.3333333333\n" \
           "state 1\n\taction 0\n\t\t1 : 1\nstate 2\n\taction 0\n\t\t2 : 1\n"
    with pytest.raises(Exception, match="not 1"):  # 0.9999999999: rounded, but 1/3 + 1/3 + 1/3 asks three thirds
        read_chain(_drn(tmp_path, body.replace("0 : 0.3333333333", "0 : 0.3333333332")), exact=True)
    thirds = read_chain(_drn(tmp_path, body), exact=True)  # three 0.3333333333: 1/3 each
    assert thirds.pnum[0].tolist() == [1, 1, 1] and thirds.denom == 3


def test_short_decimals_are_never_guessed():
    import numpy as np

    from markov_oca.io.decimals import exact_rows, simplest_between
    from markov_oca.io.lex import numbers

    data = b"0.3 0.7 0.1666666667 0.8333333333"
    got = numbers(data, np.frombuffer(data, np.uint8), np.array([0, 4, 8, 21]), np.array([3, 3, 12, 12]), "x")
    num, den, back = exact_rows(got, np.array([0, 0, 1, 1]), 2)
    assert back == 0  # both rows sum to 1 as written: nothing is read back, 0.3 stays 3/10
    assert [Fraction(int(x), den) for x in num] == [Fraction(3, 10), Fraction(7, 10), Fraction(1666666667, 10 ** 10),
                                                    Fraction(8333333333, 10 ** 10)]
    assert simplest_between(Fraction(1666666666, 10 ** 10), Fraction(1666666667, 10 ** 10)) == Fraction(1, 6)


def test_rounded_rewards_are_read_back(tmp_path):
    """oscillators' time_to_synch earns 1/6 a step, written 0.1666666667."""
    body = "state 0 [0.1666666667] init\n\taction 0 [0]\n\t\t0 : 0.5\n\t\t1 : 0.5\n" \
           "state 1 [0] goal\n\taction 0 [0]\n\t\t1 : 1\n"
    p = _drn(tmp_path, body, "time ")
    assert analyse_file(p, exact=True).rewards["time"]["total"] == Fraction(1, 3)
    fl = analyse_file(p, exact=False)
    assert _within(fl.rewards["time"]["total"], fl.rewards["time"]["bound"], Fraction(1, 3))


def test_a_reward_called_steps_keeps_the_steps(tmp_path):
    """herman's reward model is called steps; here it earns 2 a step, so it is not the number of steps."""
    body = "state 0 [2] init\n\taction 0 [0]\n\t\t0 : 1/2\n\t\t1 : 1/2\nstate 1 [0] stable\n\taction 0 [0]\n\t\t1 : 1\n"
    r = analyse_file(_drn(tmp_path, body, "steps "), exact=True)
    assert r.steps == 2 and r.rewards["steps (reward)"]["total"] == 4
    d = r.to_dict()
    assert d["expected"]["steps"]["total"]["fraction"] == "2/1"
    assert d["expected"]["steps (reward)"]["total"]["fraction"] == "4/1"
    assert d["moments"]["steps"]["mean"]["fraction"] == "2/1"


def test_herman_steps_from_every_initial_state():
    res = analyse_file(DATA / "herman-3.drn", exact=True, hit=["stable"])
    worst = max(res[s].rewards["steps (reward)"]["total"] for s in res.states)
    assert worst == Fraction(4, 3)  # QVBS: filter(max, R=? [F "stable"], "init")



def test_float_mode_from_an_ending_state_stays_in_floats():
    # every state initial, as Storm writes herman: from a stable (absorbing) start every total is 0 with bound 0,
    # which meets the relative precision; a bound above 0 on those zeros sent each such start to the exact route,
    # though floats were asked for (and the exact route is refused on a large chain)
    res = analyse_file(DATA / "herman-3.drn", exact=False)
    assert [r.route for r in res] == [None] * 8 and not any(r.exact for r in res)
    for r in res:
        if r.init != 0 and r.init != 7:  # the six stable states
            assert r.steps == 0.0 and r.bounds["steps"] == 0.0 and r.moments["steps"].variance_bound == 0.0
            assert r.rewards["steps (reward)"]["total"] == 0.0 and r.rewards["steps (reward)"]["bound"] == 0.0
            assert r.outcomes[f"state {r.init}"] == 1.0 and not r.misses(1e-9)
    assert abs(Fraction(res[0].steps) - Fraction(4, 3)) <= res[0].bounds["steps"] > 0

def test_label_formula_as_storm_writes_it(tmp_path):
    body = "state 0 init\n\taction 0\n\t\t1 : 1/4\n\t\t2 : 3/4\nstate 1 knowA\n\taction 0\n\t\t1 : 1\n" \
           "state 2 knowB\n\taction 0\n\t\t2 : 1\n"
    r = analyse_file(_drn(tmp_path, body), exact=True, hit=['((!"knowA") & "knowB")', "knowA | knowB"])
    assert r.hitting == {'((!"knowA") & "knowB")': Fraction(3, 4), "knowA | knowB": 1}
    with pytest.raises(Exception, match="no label 'knowC'"):
        analyse_file(_drn(tmp_path, body), exact=True, hit=["knowA & knowC"])


@pytest.mark.parametrize("exact", [True, False])
def test_haddad_monmege_adversarial_walk(exact):
    """QVBS haddad-monmege N=20, p=0.7: target 0.7, expected steps 1572862 (value iteration crawls here)."""
    r = analyse_file(DATA / "haddad-monmege-20.drn", exact=exact, hit=["Target"])
    if exact:
        assert r.hitting["Target"] == Fraction(7, 10) and r.steps == 1572862
    else:
        assert _within(r.hitting["Target"], r.bounds["hitting Target"], Fraction(7, 10))
        assert _within(r.steps, r.bounds["steps"], Fraction(1572862))


def test_only_expected_answers_every_initial_state_by_one_solve():
    """herman: every state is initial; the totals from all of them come from one forward solve, each within its
    bound of the exact figure from that state."""
    path = DATA / "herman-3.drn"
    fast = analyse_file(path, exact=False, only="expected")
    full = analyse_file(path, exact=True)
    assert fast.states == full.states
    assert sum(s["method"] != "none" for r in fast.results for s in r.solver if not s.get("reused")) == 1
    for s in full.states:
        one, ref = fast[s], full[s]
        assert one.only == "expected" and one.classes == [] and one.length is None
        assert _within(one.steps, one.bounds["steps"], ref.steps)
        got = one.rewards["steps (reward)"]
        assert _within(got["total"], got["bound"], ref.rewards["steps (reward)"]["total"])
    assert max(fast[s].steps for s in fast.states) == pytest.approx(4 / 3, rel=1e-12)
    d = fast.to_dict()
    assert d["initial"][0]["expected"]["steps"]["bound"] is not None and d["initial"][0]["only"] == "expected"
    with pytest.raises(Exception, match="floating point"):
        analyse_file(path, exact=True, only="expected")


def test_only_expected_refines_a_solve_that_lost_digits(monkeypatch):
    """A forward solve that comes back with a relative error of 1e-6 (an iterative solve stopped early, herman 15's
    32,768 initial states) cannot certify 1e-9; rounds of iterative refinement, kept for every initial state, do;
    one that never gets better is refused in one line."""
    from markov_oca.linalg.system import LinearSystem

    path = DATA / "herman-3.drn"
    full = analyse_file(path, exact=True)
    solve = LinearSystem.solve

    def sloppy(self, b, tol=1e-12):
        x, rep = solve(self, b, tol)
        return x * (1 + 1e-6), rep

    monkeypatch.setattr(LinearSystem, "solve", sloppy)
    monkeypatch.setattr("markov_oca.analysis.moments.forward_system", lambda chain: None)  # the iterative route
    fast = analyse_file(path, exact=False, only="expected")
    solves = [x for r in fast.results for x in r.solver if not x.get("reused")]
    assert len(solves) == 1 and solves[0]["refined"] == 3 and "refinement" in solves[0]["method"]
    for s in full.states:
        assert _within(fast[s].steps, fast[s].bounds["steps"], full[s].steps)
        assert fast[s].bounds["steps"] <= 1e-9 * fast[s].steps
    monkeypatch.setattr(LinearSystem, "solve", lambda self, b, tol=1e-12: (solve(self, b, tol)[0] + 1e-3,
                                                                           solve(self, b, tol)[1]))
    with pytest.raises(Exception, match=r"no bound under 1e-09 .* one forward solve, 3 rounds of refinement and a "):
        analyse_file(path, exact=False, only="expected")


def test_tiny_and_near_one_decimals_are_read_back(tmp_path):
    """A chance of 1/3**15 needs a denominator beyond 2**53 as the decimal 6.969171938e-08, and its complement
    0.9999999303 has too few digits to tell its fraction by: it is read as 1 minus the other."""
    body = ("state 0 init\n\taction 0\n\t\t1 : 6.969171938e-08\n\t\t2 : 0.9999999303\n"
            "state 1 a\n\taction 0\n\t\t1 : 1\nstate 2 b\n\taction 0\n\t\t2 : 1\n")
    r = analyse_file(_drn(tmp_path, body), exact=True)
    assert r.outcomes == {"a": Fraction(1, 3 ** 15), "b": 1 - Fraction(1, 3 ** 15)}
    fl = analyse_file(_drn(tmp_path, body), exact=False)
    assert _within(fl.outcomes["a"], fl.classes[0].bound, Fraction(1, 3 ** 15))


def test_a_figure_given_a_rare_class_is_certified_relative_to_it(monkeypatch):
    """nand 20-2..4: the steps given each of a few rare deadlocks were not certified in floating point (an
    absolute bound) and the chain is too large for the exact route; the analysis used to refuse, --hit's answer
    with it. Their bounds are now relative to the class. Here a ring of 40 states (the exact route held to
    smaller components) leaves to a rare state with 1e-9 a step."""
    import numpy as np

    import markov_oca.analysis.general as general
    from markov_oca import analyse, from_triples

    monkeypatch.setattr(general, "BLOCK_LIMIT", 10)
    m = 40
    rows = [*np.repeat(np.arange(m), 4).tolist(), m, m + 1]
    cols = [*(x for i in range(m) for x in ((i + 1) % m, (i - 1) % m, m + 1, m)), m, m + 1]
    tiny = Fraction(1, 10 ** 9)
    vals = [x for _ in range(m) for x in (Fraction(9, 20), Fraction(9, 20), Fraction(1, 10) - tiny, tiny)] + [1, 1]
    chain = from_triples(m + 2, np.array(rows), np.array(cols), vals, init=0, labels={"rare": [m], "out": [m + 1]})
    r = analyse(chain, exact=False, hit=["rare"])
    rare, out = r.classes
    assert _within(rare.absorption, rare.bound, Fraction(1, 10 ** 8))  # 1e-9 / 0.1 a step
    assert _within(r.hitting["rare"], r.bounds["hitting rare"], Fraction(1, 10 ** 8))
    assert _within(rare.steps_given, rare.steps_given_bound, Fraction(10))  # the same geometric time
    assert rare.steps_given_bound <= 1e-9 * 10 and not r.notes and not r.route and not r.looser
    assert _within(out.steps_given, out.steps_given_bound, Fraction(10))  # a geometric time of mean 10
    assert _within(r.steps, r.bounds["steps"], Fraction(10))


def test_a_tiny_chance_keeps_its_looser_bound_on_a_chain_too_large_for_the_exact_route(monkeypatch):
    """crowds 5-10, 4-15, 6-10 (QVBS): the chances of ending in a few rare absorbing states cannot be certified to
    1e-9 relative and the chain is too large for the exact route; the analysis, --hit's answer with it, used
    to refuse. Here a path of four chances of 1e-6 to a rare state beside a ring of 40 states."""
    import numpy as np

    import markov_oca.analysis.general as general
    from markov_oca import analyse, from_triples

    monkeypatch.setattr(general, "BLOCK_LIMIT", 10)
    m, e = 40, Fraction(1, 10 ** 6)
    init, rare, out = m, m + 5, m + 6
    rows = [*(i for i in range(m) for _ in range(3)), *(x for k in range(4) for x in (m + k, m + k)), m + 4, rare, out]
    cols = [*(x for i in range(m) for x in ((i + 1) % m, (i - 1) % m, out)),
            *(x for k in range(4) for x in (m + k + 1, 0)), rare, rare, out]
    vals = [*(x for _ in range(m) for x in (Fraction(9, 20), Fraction(9, 20), Fraction(1, 10))),
            *(x for _ in range(4) for x in (e, 1 - e)), 1, 1, 1]
    chain = from_triples(m + 7, np.array(rows), np.array(cols), vals, init=init, labels={"rare": [rare], "out": [out]})
    r = analyse(chain, exact=False, hit=["out"])
    by = {k.name: k for k in r.classes}
    assert _within(by["rare"].absorption, by["rare"].bound, e ** 4)
    assert by["rare"].bound > 1e-9 * 1e-24  # looser than asked: kept for the caller, left out of what is printed
    assert any("left out P(rare)" in n for n in r.notes)
    assert r.looser == ["P(rare)", "steps given rare"]  # the time given the rare end: left out too
    d = r.to_dict()
    assert d["looser"] == r.looser and d["outcomes"]["rare"] is None
    assert [(k["absorption"], k["steps_given"]) for k in d["classes"] if k["name"] == "rare"] == [(None, None)]
    assert list(d["expected"]["steps"]["given"]) == ["out"] or d["expected"]["steps"]["given"]["rare"] is None
    assert d["outcomes"]["out"] is not None and d["expected"]["steps"]["total"] is not None
    text = r.text()
    assert "left out, certified only more loosely: P(rare)" in text
    line = text.split("ends in rare")[1].splitlines()[0]
    assert "left out: certified within" in line and "--precision 0.01 gives it" in line and "given it" not in line
    assert "e-24" not in text and str(float(by["rare"].absorption))[:6] not in text  # no digit of it printed
    assert _within(r.hitting["out"], r.bounds["hitting out"], 1 - e ** 4)
    with pytest.raises(Exception, match="no bound under 1e-09"):  # asked for, it must meet the precision
        analyse(chain, exact=False, hit=["rare"])


def test_rows_read_back_by_distinct_decimals_as_entry_by_entry(monkeypatch):
    """The fast reading (each distinct decimal read back once, rows summed as integers) gives the same numerators,
    denominator and rows read back as the reading one entry at a time in fractions."""
    import numpy as np

    import markov_oca.io.decimals as dec
    from markov_oca.io.chains import read_chain

    seen = []
    real = dec.exact_rows
    monkeypatch.setattr(dec, "exact_rows", lambda p, r, n: seen.append((p, r, n)) or real(p, r, n))
    read_chain(DATA / "leader_sync-3-3.drn")  # 1/27 written 0.03703703704: rows off 1, read back
    probs, rows, n = seen[-1]
    rows = np.asarray(rows, np.int64)
    fast, slow = dec.exact_rows(probs, rows, n), dec._by_entry(probs, rows, n)
    assert slow is not None and slow[2] > 0 and fast[1:] == slow[1:] and (fast[0] == slow[0]).all()
    num, denom = probs.scaled()
    off = np.bincount(rows, weights=num, minlength=n) != denom
    assert dec._by_distinct(probs, rows, n, num, denom, off) not in (None, False)  # the fast way took them
