"""A chain's edges merged per (state, next state), with their probabilities and rewards: what every writer writes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..analysis.chain import Chain


@dataclass(frozen=True)
class _Edges:
    """The transitions of a chain, parallel branches merged, in row-major order (sorted targets)."""

    src: np.ndarray  # int64
    dst: np.ndarray  # int64
    num: np.ndarray  # int64 probability numerators over denom (exact)
    denom: int
    reward_num: Mapping[str, np.ndarray]  # sum over merged branches of pnum * reward (int64)
    branch_edge: np.ndarray  # edge of each branch of the (n, J) table, -1 for padding

    def reward(self, name: str) -> np.ndarray:
        """The expected reward of each edge, given that the step takes it (float)."""
        return self.reward_num[name] / self.num

    def reward_integral(self, name: str) -> bool:
        """Whether every edge's reward is a whole number."""
        return bool(np.all(self.reward_num[name] % self.num == 0))


def check_rows(chain: Chain) -> None:
    """Refuse to write a chain whose rows do not sum to exactly one (their numerators to the denominator)."""
    rows = chain.row_sums()
    if not np.all(rows == chain.denom):
        bad = int(np.flatnonzero(rows != chain.denom)[0])
        raise ValueError(f"state {bad}: probabilities sum to {rows[bad]}/{chain.denom}, not 1")


def _merged_edges(chain: Chain) -> _Edges:
    # Rows are already in order: sort each row's branches by target and merge neighbours,
    # all in (n, J) arrays (a global sort of the branches is ten times slower).
    n, width = chain.next.shape
    target = np.where(chain.next >= 0, chain.next.astype(np.int64), n)
    order = np.argsort(target, axis=1, kind="stable")
    target = np.take_along_axis(target, order, axis=1)
    valid = target < n
    first = valid.copy()
    first[:, 1:] &= target[:, 1:] != target[:, :-1]
    edge = np.cumsum(first.ravel()) - 1
    m = int(edge[-1]) + 1 if edge.size else 0
    vflat = valid.ravel()
    branch_of = edge[vflat]
    pn = np.take_along_axis(chain.pnum, order, axis=1).ravel()[vflat].astype(np.int64)
    num = np.bincount(branch_of, weights=pn, minlength=m).astype(np.int64)
    rewards = {}
    for name, values in chain.branch_rewards.items():
        v = np.take_along_axis(np.asarray(values), order, axis=1).ravel()[vflat].astype(np.int64)
        rewards[name] = np.bincount(branch_of, weights=pn * v, minlength=m).astype(np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), width)[first.ravel()]
    dst = target.ravel()[first.ravel()]
    # The edge of each branch, in the chain's own (unsorted) branch order.
    sorted_edge = np.where(valid, edge.reshape(n, width), -1)
    branch_edge = np.empty_like(sorted_edge)
    np.put_along_axis(branch_edge, order, sorted_edge, axis=1)
    return _Edges(src, dst, num, int(chain.denom), rewards, branch_edge)


def _factorize(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of an int64 array, ascending, and the index of each element among them."""
    if keys.size == 0:
        return keys, np.zeros(0, np.int64)
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo > 4 * keys.size + 1_000_000:
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.ravel()
    present = np.zeros(hi - lo + 1, bool)
    present[keys - lo] = True
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present) + lo, rank[keys - lo]


def _identifier(name: str) -> str:
    s = re.sub(r"\W+", "_", name.strip()).strip("_") or "outcome"
    return f"o_{s}" if s[0].isdigit() else s


def label_names(chain: Chain) -> dict[str, str]:
    """The label of each outcome in the explicit files: its name as an identifier.

    Parameters
    ----------
    chain : Chain

    Returns
    -------
    dict
        Outcome name -> label (``"seat 1 wins"`` -> ``"seat_1_wins"``), never one of the
        fixed labels ``init``, ``done``, ``deadlock``.

    Examples
    --------
    >>> from markov_oca import build
    >>> label_names(build("oca-moderna", players=2))
    {'seat 1 wins': 'seat_1_wins', 'seat 2 wins': 'seat_2_wins'}
    """
    out: dict[str, str] = {}
    taken = {"init", "done", "deadlock"}
    for name in chain.outcomes:
        s = _identifier(name)
        while s in taken:
            s += "_outcome"
        taken.add(s)
        out[name] = s
    return out


def _turn_rewards(chain: Chain) -> np.ndarray:
    if "turns" in chain.state_rewards:
        return np.asarray(chain.state_rewards["turns"])
    if chain.turn_start is not None:
        return chain.turn_start
    return chain.mover >= 0
