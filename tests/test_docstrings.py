"""Every Example in the public modules' docstrings runs and gives what it shows (NetworkX's habit)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = ["markov_oca", "markov_oca.api", "markov_oca.family", "markov_oca.atomic", "markov_oca.crosscheck",
           "markov_oca.export", "markov_oca.report_page", "markov_oca.ur.solve", "markov_oca.goose.rules",
           "markov_oca.punti", "markov_oca.chain", "markov_oca.exact", "markov_oca.memory", "markov_oca.rulefile",
           "markov_oca.anychain.build", "markov_oca.anychain.analysis", "markov_oca.anychain.io"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name, monkeypatch):
    monkeypatch.chdir(Path(__file__).parents[1])  # examples name files as in a clone: examples/...
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
