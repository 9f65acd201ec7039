"""What the text chain files share: the stem of explicit files, the initial state, transition rewards."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..analysis.build import AnyChain, ChainError


def _stem(path: Path) -> Path:
    return path.with_suffix("") if path.suffix == ".tra" else path


def initial_state(labels: dict[str, np.ndarray]) -> tuple[int, list[str]]:
    """The initial state (the first labelled ``init``, else state 0), and a note when several states are.

    Every initial state stays in ``labels["init"]``: :func:`~markov_oca.analysis.general.analyse` reports
    from each of them.

    Examples
    --------
    >>> initial_state({"init": np.array([2, 5])})
    (2, ['2 initial states (2, 5), all labelled init: by default each is analysed'])
    """
    init = labels.get("init")
    if init is None or init.size == 0:
        return 0, []
    if init.size == 1:
        return int(init[0]), []
    shown = ", ".join(map(str, init[:5].tolist())) + (", ..." if init.size > 5 else "")
    return int(init[0]), [f"{init.size} initial states ({shown}), all labelled init: by default each is analysed"]


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
