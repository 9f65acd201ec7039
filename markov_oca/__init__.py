"""markov_oca: race board games solved exactly as Markov chains.

A rule set (TOML data) is loaded into validated rules, compiled into a model
(state space and kernel), built into a sparse :class:`Chain`, and analysed:
each seat's chance to win, the chance of deadlock, expected turns, throws and
rounds, the distribution of the game's length, landing chances per square.
Every game family (goose boards, the Royal Game of Ur, the points game, one of
your own: :class:`Family`) goes through the same few functions.

>>> import markov_oca
>>> r = markov_oca.solve("oca-moderna", players=1, landings=False)
>>> round(float(r.seats[0].win), 4)
0.4918
"""

from .api import build, explain, load, simulate, solve, variants
from .chain import Chain
from .crosscheck import CrosscheckResult, crosscheck
from .errors import MarkovOcaError, RulesError, SolverError, TooLargeError
from .exact import ExactChain
from .family import Family, Setting, register
from .results import SolveResults
from .ur.solve import solve_ur

__version__ = "0.1.0"

# Imported on first use: networkx adds half a second to every command's start. (``crosscheck``
# is imported here, not lazily: importing the module of the same name would otherwise replace
# the function with the module as the package's attribute.)
_LAZY = {"to_networkx": ("export", "to_networkx"), "from_matrix": ("anychain", "from_matrix"),
         "from_networkx": ("anychain", "from_networkx"), "read_chain": ("anychain", "read_chain"),
         "analyse_file": ("anychain", "analyse_file")}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{module}", __name__), attr)
    raise AttributeError(f"module 'markov_oca' has no attribute {name!r}")


__all__ = [
    "Chain",
    "CrosscheckResult",
    "ExactChain",
    "Family",
    "MarkovOcaError",
    "RulesError",
    "Setting",
    "SolveResults",
    "SolverError",
    "TooLargeError",
    "build",
    "crosscheck",
    "explain",
    "from_matrix",
    "from_networkx",
    "load",
    "read_chain",
    "register",
    "simulate",
    "solve",
    "solve_ur",
    "to_networkx",
    "variants",
]
