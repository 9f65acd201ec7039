"""The forward pass of the chain seen from the mover (one push a turn gives the length and the visits) against
the joint chain, figure by figure, to 1e-12 (1e-13 relative for totals of tens of turns)."""

from __future__ import annotations

import numpy as np
import pytest
from support import board, same_figures

from markov_oca.goose.model import goose_model
from markov_oca.goose.rotated import build_rotated, forward_pass, rotated_structure, turn_columns
from markov_oca.goose.rules import load_goose
from markov_oca.goose.solve import solve_goose

BOARDS = {
    # occupancy sends pieces back (seat-changing self-loops), a waiting square makes deadlock
    "occupant, waiting": board(9, {2: {"jump": 5}, 4: {"miss": 1}, 6: {"wait": True}, 7: {"jump": 1}}, faces=3,
                               occupancy="occupant-returns"),
    # another throw: mid-turn states, pushed on within the turn
    "stakes, another throw": board(10, {2: {"goose": "repeat"}, 4: {"stake": 1}, 7: {"miss": 1, "stake": 2},
                                        8: {"jump": 0}}, faces=3, occupancy="occupant-returns"),
}






@pytest.mark.parametrize("case", list(BOARDS))
@pytest.mark.parametrize("players", [2, 3])
def test_forward_pass_gives_the_joint_chains_figures_to_1e12(case, players):
    rules = BOARDS[case]
    joint = solve_goose(rules, players, landings=True, route="joint")
    rot = solve_goose(rules, players, landings=True, route="rotated")
    assert rot.solver[0]["method"].startswith("forward pass of")
    assert rot.solver[0]["residual"] < 1e-13
    same_figures(joint, rot, 1e-12)


def test_two_player_oca_moderna_with_its_deadlock_to_1e12():
    rules = load_goose("oca-moderna")
    joint = solve_goose(rules, 2, landings=False, route="joint")
    rot = solve_goose(rules, 2, landings=False, route="rotated")
    assert joint.deadlock == pytest.approx(0.16637830141790602, abs=1e-12)
    assert rot.solver[0]["method"].startswith("forward pass of")
    # the totals given the end divide by the chance of ending (a forward column each route solves its own way):
    # they agree to 1e-13 relative, well within both routes' certified bounds (about 1e-11 relative)
    same_figures(joint, rot, 1e-11)
    for s, bj, br in zip(rot.seats, joint.to_dict()["bounds"]["seats"], rot.to_dict()["bounds"]["seats"], strict=True):
        g = joint.seats[s.seat - 1].throws.given_end
        assert abs(s.throws.given_end - g) <= bj["throws"]["given_end"] + br["throws"]["given_end"] < 1e-10 * g


def test_the_length_to_a_coarser_tail_is_a_prefix_and_the_visits_do_not_change():
    rules = BOARDS["stakes, another throw"]
    fine = solve_goose(rules, 3, landings=True, route="rotated", tail=1e-10)
    coarse = solve_goose(rules, 3, landings=True, route="rotated", tail=1e-4)
    n = len(coarse.length.pmf)
    assert 10 < n < len(fine.length.pmf)
    assert coarse.length.pmf == fine.length.pmf[:n]  # the same turns, the same arithmetic
    assert 1e-5 < coarse.length.tail_mass < 1e-4
    assert fine.length.tail_mass < 1e-10
    # the visits go on past the length's tail until their residual is as small
    for a, b in zip(fine.seats, coarse.seats, strict=True):
        assert b.win == pytest.approx(a.win, abs=1e-13)
        assert b.turns.total == pytest.approx(a.turns.total, abs=1e-11)


def test_one_part_and_two_parts_agree():
    m = goose_model(BOARDS["occupant, waiting"], 3)
    rc = build_rotated(m)
    st = rotated_structure(rc)
    d1, v1, r1 = forward_pass(rc, st, 1e-10, parts=1)
    d2, v2, r2 = forward_pass(rc, st, 1e-10, parts=2)
    assert r1.iterations == r2.iterations
    assert np.abs(v1 - v2).max() < 1e-13
    assert np.abs(d1.pmf - d2.pmf).max() < 1e-16
    # column a holds the visits with seat a to move; the first turn is seat 0's
    assert v1[rc.chain.init, 0] >= 1.0 and v1.sum() == pytest.approx(v1.sum(axis=1).sum())


def test_until_last_with_skipped_seats_keeps_the_shifted_solve():
    rules = board(8, {3: {"miss": 2}, 5: {"wait": True}, 6: {"jump": 2}}, faces=3, occupancy="mover-returns",
                  until="last")
    rc = build_rotated(goose_model(rules, 3))
    assert not turn_columns(rc)  # a finished seat is skipped: shift 2
    rot = solve_goose(rules, 3, landings=False, route="rotated")
    assert "BiCGSTAB" in rot.solver[0]["method"]
    assert turn_columns(build_rotated(goose_model(load_goose("oca-moderna"), 2)))



def test_a_big_chain_lets_go_of_tiny_rows_and_counts_them(monkeypatch):
    import markov_oca.goose.forward as R
    from markov_oca.linalg.solve import _shifted_adjoint_residual

    rc = build_rotated(goose_model(load_goose("oca-moderna"), 3))
    st = rotated_structure(rc)
    _, ref, ref_rep = forward_pass(rc, st, 1e-6)  # small: nothing let go
    assert ref_rep.residual < 1e-12 and "let go" not in ref_rep.method
    monkeypatch.setattr(R, "POLISH_STATES", 0)  # as a big chain: no solve for the rest, tiny rows let go
    monkeypatch.setattr(R, "DROP_FACTOR", 1e-6)  # rows under 1e-16 (1e-22 by default)
    dist, vis, rep = forward_pass(rc, st, 1e-6)
    let_go = float(rep.method.split("let go: ")[1].split(" ")[0])
    assert 1e-12 < let_go < 1e-10
    # what is let go stays in the tail: pmf + tail + never = 1
    assert dist.pmf.sum() + dist.tail + dist.never_ends == pytest.approx(1.0, abs=1e-13)
    assert dist.tail >= 1e-7
    # the residual reported is the visits system's own
    c = rc.chain
    b = np.zeros((c.n, rc.players))
    b[c.init, 0] = 1.0
    true = float(_shifted_adjoint_residual(c.next, c.pnum, rc.shift, 1.0 / c.denom, st.transient, b, vis))
    assert rep.residual == pytest.approx(true, rel=1e-6)
    # the visits lose at most what was let go (times the turns it would have gone on for), and only that
    diff = ref - vis
    assert diff.sum() > 0 and np.abs(diff).sum() < 1e3 * let_go


@pytest.mark.parametrize("scale", [1, 10])
def test_the_parts_codes_are_the_branches_merged_by_slot(scale):
    """Each part's row of codes holds, per slot (a state of its own, or its outcome slot), the summed numerators
    of the branches into it; the branches into the other part's rows are the pairs left out. Numerators summing
    past 8 bits (``scale`` 10, 360 a row) take the 8-byte codes. Two dice merge branches (6+3 and 5+4 from the
    start, bounces off the goal); occupancy sends pieces back into the other part's rows."""
    from markov_oca.goose.forward import _parts
    from markov_oca.goose.push_kernels import _split_parts

    rc = build_rotated(goose_model(load_goose("oca-moderna"), 2))
    c, ns = rc.chain, rc.n_states
    src, tgt = _parts(rc, 2)
    pnum = c.pnum.astype(np.int32) * scale
    code, end, mask, bits, e_src, e_j = _split_parts(c.next, pnum, ns, 2, src, tgt)
    assert code.dtype == (np.uint32 if scale == 1 else np.uint64)
    left_out = set(zip(e_src.tolist(), e_j.tolist(), strict=True))
    n, P = c.n, rc.players
    merged = 0
    for s in range(ns):
        want: dict[int, int] = {}
        for j in range(c.next.shape[1]):
            t = int(c.next[s, j])
            if t < 0:
                break
            if t >= ns:
                t = n + int(src[s]) * P + (t - ns)
            elif tgt[t] != src[s]:
                assert (s, j) in left_out
                continue
            merged += t in want
            want[t] = want.get(t, 0) + int(pnum[s, j])
        got = {int(x & mask): int(x >> bits) for x in code[s] if x != end}
        assert got == want and len(got) == int((code[s] != end).sum())
    assert merged > 0 and len(left_out) > 0  # both cases occur on this board
