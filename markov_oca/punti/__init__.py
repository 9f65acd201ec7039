"""The Italian goose game played for points: rules, exact chains, optimal bets, simulation.

Modules: ``rules`` (the TOML loader, :class:`PuntiRules`), ``model`` (balances in
the state, the numba kernel, the hash-indexed state space, chains), ``solve``
(:func:`solve_punti`: the whole chain, independent paths or layer by layer),
``optimal`` (the bet as a decision: value iteration), ``results``
(:class:`PuntiResults`), ``analysis`` (wins, ties, bankruptcy, final points,
length from one chain), ``report`` (:func:`punti_text`) and ``simulate``
(plain-Python games, with the postcards under stated policies).

Nothing here is imported back by the modules of the package: this file only
gathers their public names.

>>> r = solve_punti("gioco-oca-punti", 2, bet="never")
>>> round(sum(s.win_share for s in r.seats), 9)
1.0
"""

from __future__ import annotations

from .model import BETS, PuntiChain, PuntiModel, punti_model
from .report import punti_text
from .results import PuntiResults, PuntiSeat
from .rules import PUNTI_OPTIONS, PuntiRules, build_punti, load_punti
from .solve import METHODS, build_punti_chain, solve_punti

__all__ = [
    "BETS",
    "METHODS",
    "PUNTI_OPTIONS",
    "PuntiChain",
    "PuntiModel",
    "PuntiResults",
    "PuntiRules",
    "PuntiSeat",
    "build_punti",
    "build_punti_chain",
    "load_punti",
    "punti_model",
    "punti_text",
    "solve_punti",
]
