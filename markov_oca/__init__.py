"""markov_oca: race board games solved exactly as Markov chains.

A rule set (TOML data) is loaded into validated rules, compiled into a model
(state space and kernel), built into a sparse :class:`Chain`, and analysed:
each seat's chance to win, the chance of deadlock, expected turns, throws and
rounds, the distribution of the game's length, landing chances per square.
Every game family (goose boards, the Royal Game of Ur, the points game, one of
your own: :class:`Family`) goes through the same few functions.

Importing the package loads nothing else and changes nothing in the process
(signal handlers, Python's integer-to-text digit limit): each public name
below is imported on first use.

Examples
--------
>>> import markov_oca
>>> r = markov_oca.solve("oca-moderna", players=1, landings=False)
>>> round(float(r.seats[0].win), 4)
0.4918
"""

__version__ = "0.1.0"

#: Each public name and the module it lives in, imported on first use.
_PUBLIC = {
    "Chain": "analysis.chain",
    "ExactChain": "analysis.exact",
    "CrosscheckResult": "analysis.crosscheck",
    "SolveResults": "engine.race",
    "Family": "engine.family",
    "Setting": "engine.family",
    "register": "engine.family",
    "MarkovOcaError": "core.errors",
    "RulesError": "core.errors",
    "SolverError": "core.errors",
    "TooLargeError": "core.errors",
    "build": "api",
    "crosscheck": "api",
    "explain": "api",
    "export": "api",
    "load": "api",
    "simulate": "api",
    "solve": "api",
    "variants": "api",
    "write_report": "api",
    "solve_ur": "ur.solve",
    "ur_stats": "ur.stats",
    "to_networkx": "io.graph",
    "from_matrix": "analysis.build",
    "from_networkx": "analysis.build",
    "from_triples": "analysis.build",
    "ChainError": "analysis.build",
    "hitting_probability": "analysis.general",
    "analyse": "analysis.general",
    "read_chain": "io.chains",
    "analyse_file": "io.chains",
}


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'markov_oca' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_PUBLIC))


__all__ = sorted(_PUBLIC)
