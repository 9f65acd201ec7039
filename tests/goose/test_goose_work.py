"""A setting that multiplies the work (waiting turns) is estimated before the solve, refused past the limit."""

import subprocess
import sys
import time

import pytest

from markov_oca import api
from markov_oca.core.errors import TooLargeError
from markov_oca.goose.model import goose_model
from markov_oca.goose.rules import load_goose
from markov_oca.goose.solve import WORK_LIMIT, length_work


def test_the_estimate_grows_with_the_waiting_turns():
    small = load_goose("oca-moderna", {"waiting": "turns:2"})
    big = load_goose("oca-moderna", {"waiting": "turns:2000"})
    a, b = (length_work(r, goose_model(r, 1).build()) for r in (small, big))
    assert 0 < a < b < WORK_LIMIT
    # measured: turns:2000 takes 0.32 s for the length pass, which the estimate must not undershoot much
    assert b > 0.5 * 0.32


def test_a_typo_of_waiting_turns_is_refused_at_once():
    t0 = time.perf_counter()
    with pytest.raises(TooLargeError, match=r"waiting=turns:100000 would take about \d+ min"):
        api.solve("oca-moderna", players=1, options={"waiting": "turns:100000"})
    assert time.perf_counter() - t0 < 30


def test_the_command_line_says_it_in_one_line():
    r = subprocess.run([sys.executable, "-m", "markov_oca.cli", "solve", "oca-moderna", "-n", "1", "--option",
                        "waiting=turns:100000"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "would take about" in r.stderr, r.stderr
