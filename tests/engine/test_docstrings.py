"""Every Example in the public modules' docstrings runs and gives what it shows (NetworkX's habit)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = ["markov_oca", "markov_oca.api", "markov_oca.engine.family", "markov_oca.engine.page",
           "markov_oca.core.atomic", "markov_oca.core.memory", "markov_oca.core.rulefile", "markov_oca.core.text",
           "markov_oca.analysis.chain", "markov_oca.analysis.exact", "markov_oca.analysis.build",
           "markov_oca.analysis.general", "markov_oca.analysis.crosscheck",
           "markov_oca.io.chains", "markov_oca.io.graph", "markov_oca.io.write", "markov_oca.io.explicit",
           "markov_oca.io.drn", "markov_oca.io.properties", "markov_oca.io.edges",
           "markov_oca.ur.solve", "markov_oca.goose.rules", "markov_oca.punti"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name, monkeypatch):
    monkeypatch.chdir(Path(__file__).parents[2])  # examples name files as in a clone: examples/...
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
