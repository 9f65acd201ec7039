"""Shared helpers: crafting small rule sets inline, as a user's TOML file would."""

from __future__ import annotations

from typing import Any

import pytest

from markov_oca.goose.rules import build_goose


def board(goal: int, squares: dict[int, dict] | None = None, *, faces: int = 2, count: int = 1,
          players: int = 1, **rules: Any):
    """A tiny goose board: one ``faces``-sided die unless told, squares by number."""
    raw = {
        "game": {"name": "tiny", "goal": goal, "players": players},
        "dice": {"count": count, "faces": faces},
        "rules": rules,
        "squares": {str(k): v for k, v in (squares or {}).items()},
    }
    return build_goose(raw, "tiny.toml", {})


@pytest.fixture
def tiny():
    return board
