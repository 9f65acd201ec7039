"""The second tries of the points game's independent and layered methods: a first solve whose bounds miss the
precision is followed further (independent paths) or swept tighter (layered), and the figures of the second
are certified and agree with the chain's; when the second cannot be had, one line refuses."""

from __future__ import annotations

import pytest
from support import CALM, TINY3, punti_within_bounds, write

import markov_oca.punti.layered as layered
import markov_oca.punti.solve as solve
from markov_oca.core.errors import SolverError
from markov_oca.punti import solve_punti


def test_independent_paths_followed_further_when_the_games_left_out_miss(tmp_path, monkeypatch):
    # The first try stops the single paths at a mass of 1e-3: the games it leaves out (up to C(N,2) m^2 of
    # the chance) miss 1e-9; the second follows them to 1e-38 and meets it.
    calls = []
    real = solve.solve_independent

    def first_short(m, mode, eps):
        calls.append(eps)
        return real(m, mode, eps=1e-3 if len(calls) == 1 else eps)

    monkeypatch.setattr(solve, "solve_independent", first_short)
    path = write(tmp_path, "calm", CALM)
    ind = solve_punti(path, 3, method="independent")
    assert calls == [1e-18, 1e-38]
    assert ind.precision == 1e-9 and "error bounds: certified, each figure within 1e-09" in ind.text()
    chain = solve_punti(path, 3, method="chain")
    assert punti_within_bounds(chain, ind) > 30


def test_independent_paths_refuse_when_the_rounding_is_what_misses(tmp_path, monkeypatch):
    # Following the paths further cannot bring the sums' rounding (about 1e-16 relative) under 1e-17: one try.
    calls = []
    real = solve.solve_independent
    monkeypatch.setattr(solve, "solve_independent", lambda m, mode, eps: calls.append(eps) or real(m, mode, eps=eps))
    path = write(tmp_path, "calm", CALM)
    with pytest.raises(SolverError, match=r"^independent paths: no bound under 1e-17 .*rounding up to") as exc:
        solve_punti(path, 2, method="independent", precision=1e-17)
    assert calls == [1e-18] and "\n" not in str(exc.value)


def _loose_first(calls, first_tol, second=None):
    real = layered.solve_layered

    def wrapped(m, mode, *, progress=False, tol=1e-15, max_sweeps=100_000):
        calls.append(tol)
        if len(calls) == 1:
            return real(m, mode, progress=progress, tol=first_tol, max_sweeps=max_sweeps)
        if second is not None:
            raise second
        return real(m, mode, progress=progress, tol=tol, max_sweeps=max_sweeps)

    return wrapped


def test_layered_cycles_swept_tighter_when_their_residual_misses(tmp_path, monkeypatch):
    # A first solve whose cycles stop at a change of 1e-5 leaves a residual far above 1e-9 of the figures,
    # most of it the sweeps': the cycles are swept again to 1e-17 and every figure is then certified.
    calls = []
    monkeypatch.setattr(layered, "solve_layered", _loose_first(calls, 1e-5))
    path = write(tmp_path, "tiny3", TINY3)
    lay = solve_punti(path, 2, bet="always", method="layered")
    assert calls == [1e-15, 1e-17]
    assert lay.solver[0]["residual_bound"] < 1e-11
    assert "error bounds: certified, each figure within 1e-09" in lay.text()
    chain = solve_punti(path, 2, bet="always", method="chain")
    assert punti_within_bounds(chain, lay) > 20


def test_layered_refuses_when_the_tighter_sweeps_fail(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(layered, "solve_layered",
                        _loose_first(calls, 1e-5, SolverError("layer 3: Gauss-Seidel did not reach 1e-17")))
    path = write(tmp_path, "tiny3", TINY3)
    with pytest.raises(SolverError, match=r"^layered solve: no bound under 1e-09 .*--method chain") as exc:
        solve_punti(path, 2, bet="always", method="layered")
    assert calls == [1e-15, 1e-17] and "\n" not in str(exc.value)
