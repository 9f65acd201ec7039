"""The DRN reader's one pass over the file: arrays sized from the bytes, values, rewards and labels read
back exactly, rows in the file's order or not, and errors named by their line far into the model."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from markov_oca.analysis.build import ChainError, from_triples
from markov_oca.io.chains import read_chain
from markov_oca.io.drn import _capacity

HEADER = "// a comment, with [brackets], and commas\n@type: DTMC\n@value_type: double\n@parameters\n\n" \
         "@reward_models\ncost time \n@nr_states\n4\n@nr_choices\n4\n@model\n"
BODY = ("state 0 [1, 0.5] init start // the start, [noted], here\n"
        "\taction 0 [2, 0]\n"
        "\t\t1 : 0.25\n"
        "\t\t2 : 0.75\n"
        "   // an indented comment, 1, 2\n"
        "state 1 [0, 1.5]\n"
        "\taction 0 [0, 0]\n"
        "\t\t3 : 0.5\n"
        "\t\t0 : 0.125\n"
        "\t\t0 : 0.375\n"
        "state 2 [0, 0] goal\n"
        "\taction 0 [0, 0]\n"
        "\t\t2 : 1\n"
        "state 3 [0, 0] lost\n"
        "\taction 0 [0, 0]\n"
        "\t\t3 : 1\n")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_one_pass_reads_values_rewards_and_labels(tmp_path, newline):
    p = tmp_path / "m.drn"
    p.write_bytes((HEADER + BODY).replace("\n", newline).encode())
    c = read_chain(p)
    assert (c.n, c.init) == (4, 0)
    assert c.outcomes == {"goal": 2, "lost": 3}
    assert {k: v.tolist() for k, v in c.labels.items()} == {"init": [0], "start": [0], "goal": [2], "lost": [3]}
    P = c.P.toarray()
    # state 1 goes back to 0 twice: the two branches add up
    assert P[0].tolist() == [0, 0.25, 0.75, 0] and P[1].tolist() == [0.5, 0, 0, 0.5]
    # a step's reward is the state's plus the action's
    assert c.state_rewards["cost"].tolist() == [3, 0, 0, 0]
    assert c.state_rewards["time"].tolist() == [0.5, 1.5, 0, 0]
    exact = read_chain(p, exact=True)
    assert exact.exact and F(int(exact.pnum[1][exact.next[1] == 0].sum()), exact.denom) == F(1, 2)


def test_capacity_bounds_what_the_scan_stores():
    data = (HEADER + BODY).encode()
    pos = data.index(b"@model\n") + len(b"@model\n")
    states, trans, values = _capacity(np.frombuffer(data, np.uint8), pos)
    assert (states, trans) == (4, 7)  # lines starting with 's' and with a digit
    assert values >= 16  # 8 reward lists of two values (comments add commas and brackets, never fewer)


def test_rows_in_any_order_give_the_same_chain():
    rows, cols, vals = [0, 0, 1, 1, 2], [1, 2, 0, 2, 2], [0.25, 0.75, 0.5, 0.5, 1.0]
    canonical = from_triples(3, rows, cols, vals, init=0)
    order = [4, 1, 3, 0, 2]
    shuffled = from_triples(3, np.array(rows)[order], np.array(cols)[order], np.array(vals)[order], init=0)
    assert (canonical.P != shuffled.P).nnz == 0
    assert canonical.next.tolist() == shuffled.next.tolist() and canonical.pnum.tolist() == shuffled.pnum.tolist()
    # a zero entry takes the general route and is dropped there
    zero = from_triples(3, [*rows, 2], [*cols, 0], [*vals, 0.0], init=0)
    assert zero.next[2].tolist() == [2, -1]


@pytest.mark.parametrize("bad, message", [
    ("\t\t1 : 0.5 0.5\n", "a transition is 'target : value'"),
    ("state x\n", "a state line is 'state <number> [rewards] labels'"),
    ("sate 7\n", "not a DRN line"),
    ("state 9999 [1, 2\n", "a reward list is '[value, value, ...]'"),
])
def test_errors_far_into_the_model_name_their_line(tmp_path, bad, message):
    n = 3_000
    lines = [f"state {s}\n\taction 0\n\t\t{min(s + 1, n - 1)} : 1\n" for s in range(n)]
    text = "@type: DTMC\n@nr_states\n" + f"{n}\n@model\n" + "".join(lines[:2_000]) + bad + "".join(lines[2_000:])
    p = tmp_path / "bad.drn"
    p.write_text(text)
    with pytest.raises(ChainError) as e:
        read_chain(p)
    line = 4 + 3 * 2_000 + 1
    assert str(e.value).startswith(f"{p}: line {line}: ") and message in str(e.value)
