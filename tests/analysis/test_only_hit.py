"""A hitting probability asked alone (``analyse(only="hit")``, ``analyse --only hit:LABEL``): the same figure and
bound as in the full analysis, nothing else computed; and the conditional figures read from ``v N`` agree with a
dense solve."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction as F

import numpy as np
import pytest

from markov_oca.analysis.build import ChainError, from_matrix
from markov_oca.analysis.general import analyse
from markov_oca.io.drn import write_drn


def _chain():
    """A walk on 0..6 (0 and 6 absorb) with a lazy middle state, labels on a transient and an absorbing set."""
    n = 7
    P = np.zeros((n, n), object)
    P[0, 0] = P[6, 6] = F(1)
    for i in range(1, 6):
        P[i, i - 1], P[i, i + 1] = F(2, 5), F(3, 5)
    P[3, 3], P[3, 2], P[3, 4] = F(1, 2), F(1, 5), F(3, 10)
    return from_matrix(P, init=2, labels={"top": [6], "middle": [4]})


def _dense(chain, target):
    """P(ever in target) from init by a dense solve, the chain stopped on the target."""
    P = chain.P.toarray()
    n = P.shape[0]
    stop = np.zeros(n, bool)
    stop[target] = True
    free = np.flatnonzero(~stop & (np.diag(P) < 1))
    h = np.linalg.solve(np.eye(free.size) - P[np.ix_(free, free)], P[np.ix_(free, np.flatnonzero(stop))].sum(axis=1))
    return float(h[list(free).index(chain.init)])


@pytest.mark.parametrize("label, states", [("top", [6]), ("middle", [4])])
def test_only_hit_is_the_full_figure(label, states):
    chain = _chain()
    alone = analyse(chain, hit=[label], only="hit", exact=False)
    full = analyse(chain, hit=[label], exact=False)
    assert alone.hitting[label] == pytest.approx(full.hitting[label], abs=1e-15)
    assert abs(alone.hitting[label] - _dense(chain, states)) <= alone.bounds[f"hitting {label}"]
    assert 0 < alone.bounds[f"hitting {label}"] < 1e-12
    assert alone.classes == [] and alone.steps is None and alone.length is None
    d = alone.to_dict()
    assert d["only"] == "hit" and d["expected"] == {} and d["visits"] is None and d["deadlock"] is None
    assert "expected steps" not in alone.text() and f"ever visits {label}" in alone.text()
    exact = analyse(chain, hit=[label], only="hit", exact=True)
    assert float(exact.hitting[label]) == pytest.approx(_dense(chain, states), abs=1e-14)


def test_only_needs_a_hitting_set():
    with pytest.raises(ChainError, match="only='hit', with the sets in hit"):
        analyse(_chain(), only="hit", exact=False)
    with pytest.raises(ChainError, match="only='steps'"):
        analyse(_chain(), hit=["top"], only="steps", exact=False)


def test_conditional_steps_from_v_n_agree_with_a_dense_solve():
    chain = _chain()
    r = analyse(chain, exact=False)
    P = chain.P.toarray()
    tr = np.arange(1, 6)
    N = np.linalg.inv(np.eye(5) - P[np.ix_(tr, tr)])
    for k in r.classes:
        h = N @ P[np.ix_(tr, k.states)].sum(axis=1)
        given = float((N[1] @ h) / (N[1] @ P[np.ix_(tr, k.states)].sum(axis=1)))
        assert abs(k.steps_given - given) <= k.steps_given_bound < 1e-9 * given


def test_cli_only_hit(tmp_path):
    path = write_drn(_chain(), tmp_path / "walk.drn")
    cmd = [sys.executable, "-m", "markov_oca.launch", "analyse", str(path), "--float"]
    got = subprocess.run([*cmd, "--only", "hit:top", "--format", "json"], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    d = json.loads(got.stdout)
    assert d["hitting"]["top"] == pytest.approx(_dense(_chain(), [6]), abs=1e-12) and d["classes"] == []
    bad = subprocess.run([*cmd, "--only", "top"], capture_output=True, text=True)
    assert bad.returncode == 2 and "the form is hit:LABEL" in bad.stderr and "Traceback" not in bad.stderr
