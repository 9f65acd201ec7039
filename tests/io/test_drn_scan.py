"""The DRN reader's one pass over the file: arrays sized from the bytes, values, rewards and labels read
back exactly, rows in the file's order or not, and errors named by their line far into the model."""

from __future__ import annotations

from fractions import Fraction as F
from itertools import pairwise

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


def _many_states(n: int, bad: str = "", at: int = 0, rewards=lambda s: f" [{s % 3}, 0.5]") -> str:
    lines = [f"state {s}{rewards(s)}{' init' if s == 0 else ''}{' goal' if s == n - 1 else ''}"
             f"{' odd' if s % 2 else ''} // state {s}\n\taction 0\n\t\t{min(s + 1, n - 1)} : 0.75\n"
             f"\t\t{max(s - 1, 0)} : 0.25\n" for s in range(n)]
    return ("@type: DTMC\n@value_type: double\n@reward_models\ncost time \n@nr_states\n"
            f"{n}\n@model\n" + "".join(lines[:at]) + bad + "".join(lines[at:]))


@pytest.fixture
def in_pieces(monkeypatch):
    """The reader's scan and number conversion split into pieces on threads, whatever the file's size."""
    import markov_oca.io.drn as drn
    import markov_oca.io.lex as lex

    monkeypatch.setattr(drn, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(drn, "THREADS", 3)
    monkeypatch.setattr(lex, "PARALLEL_TOKENS", 1)
    monkeypatch.setattr(lex, "THREADS", 3)


def test_pieces_start_at_state_lines():
    from markov_oca.io.drn import _pieces

    data = _many_states(50).encode()
    pos = data.index(b"@model\n") + 7
    parts = _pieces(data, pos, 4)
    assert len(parts) == 4 and parts[0][0] == pos and parts[-1][1] == len(data)
    assert all(b == a for (_, b), (a, _) in pairwise(parts))  # they tile the section
    assert all(data[a:a + 6] == b"state " for a, _ in parts[1:])


def test_a_file_read_in_pieces_is_the_file_read_whole(tmp_path, monkeypatch):
    p = tmp_path / "m.drn"
    p.write_text(_many_states(2_001))
    whole = read_chain(p)
    exact_whole = read_chain(p, exact=True)
    import markov_oca.io.drn as drn
    import markov_oca.io.lex as lex

    seen = []
    scan = drn._scan_model
    monkeypatch.setattr(drn, "_scan_model", lambda buf, pos, *a: seen.append((pos, buf.size)) or scan(buf, pos, *a))
    for mod, key, value in ((drn, "PARALLEL_BYTES", 0), (drn, "THREADS", 3), (lex, "PARALLEL_TOKENS", 1),
                            (lex, "THREADS", 3)):
        monkeypatch.setattr(mod, key, value)
    pieces = read_chain(p)
    assert len(seen) == 3  # three pieces, each scanned once
    assert (pieces.P != whole.P).nnz == 0 and pieces.init == whole.init == 0
    assert {k: v.tolist() for k, v in pieces.labels.items()} == {k: v.tolist() for k, v in whole.labels.items()}
    assert pieces.labels["odd"].size == 1_000
    for name in ("cost", "time"):
        assert pieces.state_rewards[name].tolist() == whole.state_rewards[name].tolist()
    exact = read_chain(p, exact=True)
    assert exact.exact and exact.denom == exact_whole.denom
    assert exact.pnum.tolist() == exact_whole.pnum.tolist() and exact.next.tolist() == exact_whole.next.tolist()


@pytest.mark.parametrize("bad, at, message", [
    ("sate 7\n", 1_500, "not a DRN line"),
    ("state 9999 [1, 2\n", 1_500, "a reward list is '[value, value, ...]'"),
    ("\t\t1 : 0.5\n", 0, "a transition before any state"),
])
def test_an_error_in_a_later_piece_is_named_as_a_whole_read_names_it(tmp_path, in_pieces, bad, at, message):
    p = tmp_path / "bad.drn"
    p.write_text(_many_states(2_000, bad, at))
    with pytest.raises(ChainError) as e:
        read_chain(p)
    line = 7 + 4 * at + 1  # seven header lines, four a state
    assert str(e.value).startswith(f"{p}: line {line}: ") and message in str(e.value)


def test_pieces_that_disagree_on_the_reward_models_are_refused_as_one_pass_refuses(tmp_path, in_pieces):
    # no names declared: the first reward list sets how many models there are. The lists are padded to one
    # length, so the pieces fall on the same bytes whatever they hold: from the second piece on they give
    # one value a state, the first piece two; each piece alone is consistent
    from markov_oca.io.drn import _pieces

    def text(change: int) -> str:
        return _many_states(2_000, rewards=lambda s: " [1, 2]" if s < change else " [1]   ").replace(
            "@reward_models\ncost time \n", "")

    data = text(2_000).encode()
    second = _pieces(data, data.index(b"@model\n") + 7, 3)[1][0]
    k = int(data[second:data.index(b" ", second + 6)].split()[1])
    p = tmp_path / "m.drn"
    p.write_text(text(k))
    with pytest.raises(ChainError, match=rf"line {5 + 4 * k + 1}: .*rewards for 1 reward model\(s\), the header "
                                         "names 2"):
        read_chain(p)


def test_numbers_over_one_denominator_keep_their_exact_values():
    from markov_oca.io.lex import numbers

    data = b"0.25 0.5 0.125 1 1/3 0.75"
    buf = np.frombuffer(data, np.uint8)
    starts = np.array([0, 5, 9, 15, 17, 21])
    lengths = np.array([4, 3, 5, 1, 3, 4])
    got = numbers(data, buf, starts[[0, 1, 2, 3, 5]], lengths[[0, 1, 2, 3, 5]], "x", True)
    before = got.fractions()
    num, denom = got.scaled()
    assert denom == 1000 and num.tolist() == [250, 500, 125, 1000, 750]
    assert got.fractions() == before and got.scaled()[0].tolist() == num.tolist()  # scaled again: the same
    # a third does not divide the largest denominator: the common multiple, the values untouched
    mixed = numbers(data, buf, starts, lengths, "x", True)
    before = mixed.fractions()
    num, denom = mixed.scaled()
    assert denom == 3000 and num.tolist() == [750, 1500, 375, 3000, 1000, 2250] and mixed.fractions() == before
    # beyond 1, or an exact value not at hand: none
    assert numbers(b"1.5", np.frombuffer(b"1.5", np.uint8), np.array([0]), np.array([3]), "x", True).scaled() is None
