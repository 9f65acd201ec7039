"""Shared fixtures; the helpers they hand out live in ``support.py``."""

from __future__ import annotations

import pytest
from support import board


@pytest.fixture
def tiny():
    return board
