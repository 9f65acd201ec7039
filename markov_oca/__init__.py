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

import sys as _sys


def _cli_launch() -> bool:
    """Whether this process is the command line (``markov-oca ...`` or ``python -m markov_oca.cli``)."""
    argv = list(getattr(_sys, "orig_argv", []))
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1] in ("markov_oca.cli", "markov_oca"):
        return True
    name = _sys.argv[0].replace("\\", "/").rsplit("/", 1)[-1] if _sys.argv else ""
    return name in ("markov-oca", "markov-oca.exe", "markov-oca-script.py")


def _stop_while_loading(signum, frame) -> None:  # nothing is written yet: no temporaries to remove
    import os

    os.write(2, b"markov-oca: interrupted\n")
    os._exit(130)


# Exact fractions run to thousands of digits (two players of snakes and ladders: 4,453; two-piece
# Ur: 11,692), past the 4,300 that Python 3.11 lets an int print by default.
if 0 < getattr(_sys, "get_int_max_str_digits", lambda: 0)() < 1_000_000:
    _sys.set_int_max_str_digits(1_000_000)

if _cli_launch():
    # Ctrl-C while the modules below load (about 0.7 s) is the command line's one line and
    # exit 130, not a traceback; ``interrupt.run_cli`` puts its own handler in place after.
    # A library import leaves SIGINT alone.
    import signal as _signal

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _stop_while_loading)

from .api import build, explain, load, simulate, solve, variants  # noqa: E402
from .chain import Chain  # noqa: E402
from .crosscheck import CrosscheckResult, crosscheck  # noqa: E402
from .errors import MarkovOcaError, RulesError, SolverError, TooLargeError  # noqa: E402
from .exact import ExactChain  # noqa: E402
from .family import Family, Setting, register  # noqa: E402
from .results import SolveResults  # noqa: E402
from .ur.solve import solve_ur  # noqa: E402

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
