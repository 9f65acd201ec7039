"""Results in a notebook: an HTML table for Jupyter, and pandas DataFrames when pandas is installed."""

from __future__ import annotations

import pytest
from support import TWO_SQUARES

from markov_oca import api
from markov_oca.punti import solve_punti
from markov_oca.ur.solve import solve_ur


@pytest.fixture(scope="module")
def goose():
    return api.solve("examples/snakes_and_ladders.toml", 1, landings=True)


def test_goose_results_as_html_and_frames(goose, request):
    html = goose._repr_html_()
    assert html.startswith("<table><caption>") and "seat 1 wins</th><td>1</td>" in html
    pd = pytest.importorskip("pandas")
    seats = goose.to_frame()
    assert list(seats.index) == [1] and seats.loc[1, "win"] == goose.seats[0].win
    assert seats.loc[1, "turns"] == goose.seats[0].turns.total
    land = goose.to_frame("landings")
    assert len(land) == len(goose.landings) and land.index.names == ["seat", "square"]
    first = goose.landings[5]
    assert land.loc[(first.seat, first.square), "chance"] == first.chance
    length = goose.to_frame("length")
    assert length["pmf"].sum() == pytest.approx(1 - goose.length.tail_mass - goose.length.never_ends, abs=1e-12)
    assert isinstance(length, pd.DataFrame) and length.index.name == "turn"
    with pytest.raises(ValueError, match="'seats', 'landings' or 'length'"):
        goose.to_frame("squares")


def test_ur_and_points_results(tmp_path):
    ur = solve_ur("ur", "random", "random", options={"pieces": 1})
    assert "light wins</th>" in ur._repr_html_()
    path = tmp_path / "two.toml"
    path.write_text(TWO_SQUARES)
    pts = solve_punti(path, 2)
    assert "seat 1 wins (share)" in pts._repr_html_()
    pytest.importorskip("pandas")
    sides = ur.to_frame()
    assert sides["win"].sum() == pytest.approx(1.0)
    frame = pts.to_frame()
    assert list(frame.index) == [1, 2] and frame.loc[1, "win_share"] == pts.seats[0].win_share
    points = pts.to_frame("points")
    assert points.loc[1, "chance"].sum() == pytest.approx(1 - pts.seats[0].bankrupt)


def test_without_pandas_a_clear_error(goose, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="optional extra: pip install pandas"):
        goose.to_frame()
