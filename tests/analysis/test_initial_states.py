"""Several initial states and initial distributions: each start's figures against closed forms, a distribution's
against the weighted sums and against a chain that draws its start in one extra step."""

from __future__ import annotations

import json
from fractions import Fraction as F

import numpy as np
import pytest

from markov_oca import from_matrix
from markov_oca.analysis.build import ChainError
from markov_oca.analysis.general import analyse
from markov_oca.analysis.initial import InitialResults

UP, N = F(2, 5), 5


def _ruin(n: int = N, p: F = UP) -> list[list[F]]:
    P = [[F(0)] * (n + 1) for _ in range(n + 1)]
    P[0][0] = P[n][n] = F(1)
    for i in range(1, n):
        P[i][i + 1], P[i][i - 1] = p, 1 - p
    return P


def _rich(i: int, n: int = N, p: F = UP) -> F:
    r = (1 - p) / p
    return (1 - r ** i) / (1 - r ** n)


def _steps(i: int, n: int = N, p: F = UP) -> F:
    """Expected duration of gambler's ruin from ``i``: ``i / (q - p) - n / (q - p) * P(rich)``."""
    q = 1 - p
    return F(i) / (q - p) - F(n) / (q - p) * _rich(i, n, p)


def _given(r, name: str):
    return next(k.steps_given for k in r.classes if k.name == name)


def _chain(init_states=(1, 2, 4)):
    return from_matrix(_ruin(), init=init_states[0], labels={"broke": [0], "rich": [N], "init": list(init_states)},
                       rewards={"bet": [0, 1, 2, 3, 4, 0]})


def test_each_initial_state_against_the_closed_forms():
    res = analyse(_chain())
    assert isinstance(res, InitialResults) and res.states == [1, 2, 4]
    for i in (1, 2, 4):
        r = res[i]
        assert r.exact and r.init == i
        assert r.outcomes == {"broke": 1 - _rich(i), "rich": _rich(i)}
        assert r.steps == _steps(i)
    # the forward block (steps, the reward, both classes' columns) is solved once and reused by the later starts
    assert sum(bool(rep.get("reused")) for r in res for rep in r.solver) >= 2
    assert res[4].length.pmf[1] == pytest.approx(float(UP))  # one step up from 4 is rich


def test_float_mode_each_start_within_its_certified_bounds():
    res = analyse(_chain(), exact=False)
    for i in (1, 2, 4):
        r = res[i]
        assert abs(r.outcomes["rich"] - float(_rich(i))) <= r.outcome_bounds["rich"] + 1e-16
        assert abs(r.steps - float(_steps(i))) <= r.bounds["steps"] + 1e-16


def test_distribution_is_the_weighted_sum_exactly():
    chain = _chain()
    w = {1: F(1, 6), 2: F(1, 3), 4: F(1, 2)}
    each, mixed = analyse(chain), analyse(chain, init=w)
    assert mixed.init is None and mixed.distribution == w and mixed.exact
    for name in ("broke", "rich"):
        assert mixed.outcomes[name] == sum(p * each[s].outcomes[name] for s, p in w.items())
        num = sum(p * each[s].outcomes[name] * _given(each[s], name) for s, p in w.items())
        assert _given(mixed, name) == num / mixed.outcomes[name]
    assert mixed.steps == sum(p * _steps(s) for s, p in w.items())
    assert mixed.rewards["bet"]["total"] == sum(p * each[s].rewards["bet"]["total"] for s, p in w.items())
    second = sum(p * each[s].moments["steps"].second for s, p in w.items())
    assert mixed.moments["steps"].variance == second - mixed.steps ** 2
    assert mixed.visits_exact == [sum(p * each[s].visits_exact[t] for s, p in w.items()) for t in range(N + 1)]


def test_distribution_agrees_with_a_chain_that_draws_its_start():
    """An extra state that steps to each start with its weight: its figures, one step on, are the distribution's."""
    w = {1: F(1, 4), 3: F(3, 4)}
    P = [[*row, F(0)] for row in _ruin()] + [[w.get(s, F(0)) for s in range(N + 1)] + [F(0)]]
    draw = analyse(from_matrix(P, init=N + 1, labels={"broke": [0], "rich": [N]}), length=True)
    mixed = analyse(_chain(), init=w)
    assert mixed.outcomes == draw.outcomes
    assert mixed.steps == draw.steps - 1
    assert mixed.moments["steps"].variance == draw.moments["steps"].variance  # a constant step adds no variance
    assert _given(mixed, "rich") == _given(draw, "rich") - 1
    np.testing.assert_allclose(mixed.length.pmf[:40], draw.length.pmf[1:41], atol=1e-15)
    assert mixed.length.median == draw.length.median - 1 and mixed.length.p99 == draw.length.p99 - 1
    fl = analyse(_chain(), init=w, exact=False)
    assert abs(F(fl.steps) - mixed.steps) <= fl.bounds["steps"]  # exactly: float() of the fraction rounds
    assert abs(F(fl.outcomes["rich"]) - mixed.outcomes["rich"]) <= fl.outcome_bounds["rich"]
    given = next(c for c in fl.classes if c.name == "rich")
    assert abs(F(given.steps_given) - (_given(draw, "rich") - 1)) <= given.steps_given_bound < 1e-9


def test_init_by_state_label_and_uniform():
    chain = from_matrix(_ruin(), init=1, labels={"broke": [0], "rich": [N], "init": [1, 3], "odd": [1, 3]})
    assert analyse(chain, init=3).steps == _steps(3)
    assert analyse(chain, init="3").steps == _steps(3)
    assert analyse(chain, init="odd").states == [1, 3]
    u = analyse(chain, init="uniform")
    assert u.distribution == {1: F(1, 2), 3: F(1, 2)} and u.steps == (_steps(1) + _steps(3)) / 2
    assert analyse(from_matrix(_ruin(), init=2), init="uniform").steps == _steps(2)  # one initial state
    single = analyse(from_matrix(_ruin(), init=2))
    assert not isinstance(single, InitialResults) and single.init == 2


def test_starting_in_a_closed_class():
    res = analyse(_chain((1, 0)))
    assert res[0].outcomes == {"broke": 1, "rich": 0} and res[0].steps == 0
    mixed = analyse(_chain((1, 0)), init={0: F(1, 2), 1: F(1, 2)})
    assert mixed.outcomes["rich"] == _rich(1) / 2 and mixed.steps == _steps(1) / 2


@pytest.mark.parametrize(("init", "message"), [
    (9, "initial state 9 is not a state (0..5)"),
    ("nowhere", "initial state 'nowhere' is neither a state number (0..5) nor a label"),
    ({1: F(1, 2), 2: F(1, 3)}, "the weights sum to 0.833333333333, not 1"),
    ({1: F(3, 2), 2: F(-1, 2)}, "state 2 has a negative weight"),
    ({1: "half", 2: F(1, 2)}, "state 1 has weight 'half', not a number"),
    ({7: 1}, "initial state 7 is not a state"),
    ({1: 0.3333333333, 2: 0.6666666667}, "not 1 (exactly, in exact mode)"),
    (True, "a state number, a label, 'uniform' or a mapping"),
])
def test_bad_initial_states_one_line(init, message):
    with pytest.raises(ChainError) as e:
        analyse(_chain(), init=init, exact=True)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_near_one_weights_pass_in_float_mode():
    r = analyse(_chain(), init={1: 0.3333333333, 2: 0.6666666667}, exact=False)
    want = 0.3333333333 * float(_steps(1)) + 0.6666666667 * float(_steps(2))
    assert abs(r.steps - want) < 1e-12


def test_json_and_text_of_several_starts():
    res = analyse(_chain())
    d = json.loads(json.dumps(res.to_dict(with_pmf=False)))
    assert d["schema"] == "markov_oca.analyse/1" and d["chain"]["init"] == [1, 2, 4]
    assert [x["chain"]["init"] for x in d["initial"]] == [1, 2, 4]
    assert d["initial"][1]["outcomes"]["rich"]["fraction"] == f"{_rich(2).numerator}/{_rich(2).denominator}"
    assert set(d["initial"][0]) == set(res[1].to_dict())
    text = res.text()
    assert text.count("from state ") == 3 and "3 initial states (1, 2, 4)" in text.splitlines()[0]
    mixed = analyse(_chain(), init={1: F(1, 2), 4: F(1, 2)}).to_dict()
    assert mixed["chain"]["init"] is None
    assert [x["state"] for x in mixed["chain"]["initial_distribution"]] == [1, 4]
    assert mixed["chain"]["initial_distribution"][0]["weight"]["fraction"] == "1/2"


def test_several_starts_refused_up_front_beyond_the_memory_budget():
    from markov_oca.core.errors import TooLargeError
    from markov_oca.core.memory import set_max_memory

    chain = _chain()
    set_max_memory(3 * (N + 1) * 8 - 1)  # the float visits of 3 starts do not fit
    try:
        with pytest.raises(TooLargeError, match=r"the expected visits from 3 initial states to 6 states each"):
            analyse(chain, exact=False)
        assert analyse(chain, exact=False, init="uniform").steps == pytest.approx(
            float(sum(_steps(i) for i in (1, 2, 4)) / 3), rel=1e-12)  # a distribution holds one start at a time
    finally:
        set_max_memory(None)


def test_many_initial_states_get_what_is_solved_from_every_state_at_once():
    from markov_oca.analysis.general import EVERY_STATE_LIMIT

    n = EVERY_STATE_LIMIT + 16  # a fair ruin with every state initial: P(rich from i) = i / n, steps i (n - i)
    chain = from_matrix(_ruin(n, F(1, 2)), init=0, labels={"broke": [0], "rich": [n], "init": list(range(n + 1))})
    res = analyse(chain, exact=False)
    assert isinstance(res, InitialResults) and res.states == list(range(n + 1))
    for i in range(n + 1):
        r = res[i]
        assert r.only == "expected" and not r.exact and r.length is None
        assert abs(F(r.outcomes["rich"]) - F(i, n)) <= F(r.outcome_bounds["rich"])
        assert abs(F(r.outcomes["broke"]) - F(n - i, n)) <= F(r.outcome_bounds["broke"])
        assert abs(F(r.steps) - i * (n - i)) <= F(r.bounds["steps"])
        assert 0 <= r.outcomes["rich"] <= 1 and r.bounds["steps"] <= 1e-9 * max(r.steps, 1e-300) + (i in (0, n))
    assert res[0].outcomes == {"broke": 1.0, "rich": 0.0} and res[0].outcome_bounds == {"broke": 0.0, "rich": 0.0}
    assert any("solved from every state at once" in x for x in res[3].notes)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["initial"][3]["outcomes"]["rich"] == pytest.approx(3 / n, rel=1e-12)
    # asking for the label by name analyses each state in full, as below the limit
    full = analyse(chain, exact=False, init="init")
    assert full[3].only is None and full[3].length is not None
    assert abs(full[3].outcomes["rich"] - res[3].outcomes["rich"]) <= \
        full[3].outcome_bounds["rich"] + res[3].outcome_bounds["rich"]
