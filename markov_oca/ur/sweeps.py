"""A pair of Ur policies solved by sweeps over the ranked positions, without a chain.

The work is split by idea: :mod:`.evaluate` (each position's chance to win, throws and turns to come, layer
by layer), :mod:`.push` (the length distribution, a forward push of the mass turn by turn, in the order of
:mod:`.pushorder` over the moves of :mod:`.pushmoves`), :mod:`.bound` (an upper bound on the throws to come),
all on the policies of :mod:`.policy` and the move stores of :mod:`.storage`. This module gathers their public
names, and the memory a pair's sweeps need.
"""

from __future__ import annotations

from ..core.errors import TooLargeError
from ..core.memory import available_memory, gib
from .bound import ThrowsBound, throws_bound
from .evaluate import PolicyEvaluation, evaluate_bytes, evaluate_policies
from .policy import POLICY_CODES
from .push import PushResult, length_distribution, push_bytes, push_lengths
from .pushorder import push_placement
from .rules import UrRules

__all__ = ["POLICY_CODES", "PolicyEvaluation", "PushResult", "ThrowsBound", "check_sweeps_memory", "evaluate_bytes",
           "evaluate_policies", "length_distribution", "push_bytes", "push_lengths", "push_placement",
           "sweeps_bytes", "throws_bound"]


def sweeps_bytes(rules: UrRules, sides: int, light: str = "random", dark: str = "random",
                 evaluate: bool = True, sums: int = 0) -> int:
    """Peak memory of :func:`evaluate_policies` (when ``evaluate``) and :func:`push_lengths` (with ``sums``
    arrays a side swept first; the larger)."""
    push = push_bytes(rules, light, dark, sums)
    return max(evaluate_bytes(rules, sides), push) if evaluate else push


def check_sweeps_memory(rules: UrRules, sides: int, light: str = "random", dark: str = "random",
                        evaluate: bool = True, sums: int = 0) -> None:
    """Refuse (:class:`~markov_oca.errors.TooLargeError`) sweeps that :func:`sweeps_bytes` says cannot fit."""
    need, avail = sweeps_bytes(rules, sides, light, dark, evaluate, sums), available_memory()
    if need > avail:
        raise TooLargeError(f"{rules.name} with {rules.pieces} pieces, {light} against {dark}: the policy sweeps "
                            f"need about {gib(need)}; {gib(avail)} available")
