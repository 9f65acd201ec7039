"""A length distribution asked with a coarser tail is the finer one's pass stopped earlier."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from markov_oca.goose.model import goose_model
from markov_oca.goose.rules import load_goose

SNAKES = Path(__file__).resolve().parents[2] / "examples" / "snakes_and_ladders.toml"


@pytest.fixture(scope="module")
def chain():
    c = goose_model(load_goose(SNAKES), 2).build()
    assert not c.structure.deadlock.any()
    return c


def test_coarser_tail_cut_from_the_finer(chain):
    fine = chain.length_distribution(tail=1e-12)
    cut = chain.length_distribution(tail=1e-4)
    fresh = goose_model(load_goose(SNAKES), 2).build()._length_pass(1e-4, 1_000_000, visits=False)[0]
    assert cut.pmf.size == fresh.pmf.size < fine.pmf.size
    np.testing.assert_array_equal(cut.pmf, fresh.pmf)
    np.testing.assert_array_equal(cut.by_outcome, fresh.by_outcome)
    assert cut.tail == pytest.approx(fresh.tail, rel=1e-9, abs=1e-15)
    assert 0 < cut.tail < 1e-4 <= cut.tail + cut.pmf[-1]
    assert cut.pmf.sum() + cut.tail == pytest.approx(1.0, abs=1e-14)


def test_no_cut_when_the_game_may_deadlock():
    c = goose_model(load_goose("oca-moderna"), 2).build()
    assert c.structure.deadlock.any()
    d = c.length_distribution(tail=1e-10)
    assert d.truncated(1e-4) is None
    assert c.length_distribution(tail=1e-4).pmf.size < d.pmf.size
