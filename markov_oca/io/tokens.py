"""The tokens of text chain files: numbers (exact or float), state numbers, labels and rewards."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.build import AnyChain, ChainError


def _numbers(tokens: list[bytes], exact: bool, source: str) -> Any:
    if exact:
        try:
            return [Fraction(t.decode()) for t in tokens]
        except (ValueError, ZeroDivisionError):
            bad = next(t for t in tokens if not re.fullmatch(rb"-?\d+(/\d+)?", t))
            raise ChainError(f"{bad.decode(errors='replace')!r} is not a number", source=source) from None
    try:
        return np.array(tokens).astype(np.float64)
    except ValueError:
        for t in tokens:
            try:
                float(t)
            except ValueError:
                raise ChainError(f"{t.decode(errors='replace')!r} is not a number", source=source) from None
        raise


def _is_exact(tokens: list[bytes]) -> bool:
    return all(re.fullmatch(rb"\d+(/\d+)?", t) for t in tokens)


def _ints(tokens: list[bytes], what: str, source: str) -> np.ndarray:
    try:
        return np.array(tokens).astype(np.int64)
    except ValueError:
        bad = next(t for t in tokens if not t.isdigit())
        raise ChainError(f"{what} {bad.decode(errors='replace')!r} is not a state number", source=source) from None


def _stem(path: Path) -> Path:
    return path.with_suffix("") if path.suffix == ".tra" else path


def _init_from(labels: dict[str, np.ndarray], source: str) -> int:
    init = labels.get("init")
    if init is None or init.size == 0:
        return 0
    if init.size > 1:
        raise ChainError(f"{init.size} states carry the label init: analyses start from one", source=source)
    return int(init[0])


def _branch_values(chain: AnyChain, s: np.ndarray, t: np.ndarray, v: np.ndarray, name: str) -> np.ndarray:
    """A transition reward per (source, target) as a branch reward ``(n, J)``."""
    out = np.zeros(chain.next.shape)
    hit = chain.next[s] == t[:, None]
    ok = hit.any(axis=1)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise ChainError(f"reward {name!r} on {int(s[i])} -> {int(t[i])}, which is not a transition",
                         source=chain.source)
    out[s, hit.argmax(axis=1)] = v
    return out
