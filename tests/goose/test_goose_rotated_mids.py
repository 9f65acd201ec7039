"""The forward pass's mid-turn sweeps (another throw) on two parts: a throw again that lands behind (another
sweep), one that sends another piece back (a skipped branch, pushed after the sweeps), against one part and
the joint chain."""

from __future__ import annotations

import numpy as np
import pytest
from support import board, same_figures

from markov_oca.goose.forward import _parts
from markov_oca.goose.model import goose_model
from markov_oca.goose.push_kernels import _split_parts
from markov_oca.goose.rotated import build_rotated, forward_pass, rotated_structure
from markov_oca.goose.solve import solve_goose

# 2, 5 and 8 throw again; 9 sends the mover back to 2 (another throw, behind where it was); occupancy sends
# a piece back, also on a throw again
RULES = board(10, {2: {"again": True}, 5: {"again": True}, 8: {"again": True}, 9: {"jump": 2}}, faces=3,
              occupancy="occupant-returns")


def _mid_cases(rc) -> tuple[int, int]:
    """Branches from rows that throw again: into such a row at or before them; skipped by two parts."""
    c, ns = rc.chain, rc.n_states
    st = rotated_structure(rc)
    is_mid = st.transient[:ns] & ~c.turn_start[:ns]
    src, tgt = _parts(rc, 2)
    owner = np.where(is_mid, src, tgt).astype(np.int8)
    *_, e_src, _ = _split_parts(c.next, c.pnum, ns, 2, src, owner)
    back = 0
    for s in np.flatnonzero(is_mid):
        t = c.next[s][(c.next[s] >= 0) & (c.next[s] < ns)]
        back += int((is_mid[t] & (t <= s)).sum())
    return back, int(is_mid[e_src].sum())


def test_the_board_has_both_cases():
    back, skipped = _mid_cases(build_rotated(goose_model(RULES, 3)))
    assert back > 0 and skipped > 0


def test_two_parts_sweep_the_mid_turn_rows_as_one_part_does():
    rc = build_rotated(goose_model(RULES, 3))
    st = rotated_structure(rc)
    d1, v1, r1 = forward_pass(rc, st, 1e-10, parts=1)
    d2, v2, r2 = forward_pass(rc, st, 1e-10, parts=2)
    assert r1.iterations == r2.iterations
    assert np.abs(v1 - v2).max() < 1e-13
    assert np.abs(d1.pmf - d2.pmf).max() < 1e-15
    mid = ~rc.chain.turn_start[:rc.n_states] & st.transient[:rc.n_states]
    assert v1[:rc.n_states][mid].sum() > 0.1  # the rows that throw again are visited


@pytest.mark.parametrize("players", [2, 3])
def test_mid_turn_sweeps_give_the_joint_chains_figures_to_1e12(players):
    joint = solve_goose(RULES, players, landings=True, route="joint")
    rot = solve_goose(RULES, players, landings=True, route="rotated")
    assert rot.solver[0]["method"].startswith("forward pass of")
    same_figures(joint, rot, 1e-12)
