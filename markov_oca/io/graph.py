"""A chain leaves the library: as a NetworkX graph, GraphML, GEXF, DOT, JSON, or PRISM / Storm files.

:func:`to_networkx` turns a :class:`~markov_oca.chain.Chain` into a
``networkx.DiGraph``: one node per state (its decoded position flattened to
scalar attributes, so GraphML and GEXF can store them), one edge per pair of
states a step joins (branches to the same state merged: probabilities summed,
rewards averaged by probability), each with its float ``probability`` and its
exact fraction ``p``. Plain functions over that graph, in the NetworkX style,
answer the questions one asks of a drawing: :func:`absorbing_states`,
:func:`deadlock_classes`, :func:`most_likely_paths`.

:func:`write_chain` writes a chain in one of :data:`FORMATS`. The graph formats
carry what :func:`to_networkx` holds, written by NetworkX (DOT through pydot),
and are refused beyond :data:`GRAPH_LIMIT` states (NetworkX's writers take about
a millisecond per edge: a graph file is for looking at, the explicit files are
for tools). ``prism`` and ``storm`` write the explicit formats of the two model
checkers (transitions ``.tra``, labels ``.lab``, state rewards ``.srew``,
transition rewards ``.trew``), vectorised, so a chain of half a million states
and four million transitions takes seconds. The two tools read different
headers and label files (measured with stormpy 2.0: Storm refuses PRISM's
``.tra`` header and ``.lab`` file, PRISM expects its own), hence two formats
with the same file names; ``docs/export.md`` gives both and the commands that
reproduce our numbers. :func:`properties` lists those queries.

:func:`export` does the whole job for a rule set by name or path (any family),
for the command line.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.chain import Chain
from ..core.errors import TooLargeError
from .edges import _Edges, _merged_edges, _turn_rewards

if TYPE_CHECKING:  # networkx is imported where a graph is made or read (it takes a fifth of a second)
    import networkx as nx

#: Above this many states ``to_networkx`` refuses: a NetworkX graph needs about 1 KB an edge
#: (the graph files stop earlier, at :data:`FILE_LIMIT`; use ``prism`` or ``storm``).
GRAPH_LIMIT = 200_000

# ----------------------------------------------------------------------------- merged edges


# ----------------------------------------------------------------------------- names and labels


def _describer(chain: Chain, model: Any = None) -> Any:
    """What describes the chain's states in bulk: ``model``, or the object whose method the chain's
    ``describe_state`` is, when it has ``node_attributes(chain)`` (a goose model does)."""
    owner = model if model is not None else getattr(chain.describe_state, "__self__", None)
    return owner if hasattr(owner, "node_attributes") else None


# ----------------------------------------------------------------------------- node attributes


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "_"))
        elif isinstance(v, (list, tuple)):
            out[key] = ",".join(str(x) for x in v)
        elif isinstance(v, (bool, np.bool_)):
            out[key] = bool(v)
        elif isinstance(v, (int, np.integer)):
            out[key] = int(v)
        elif isinstance(v, (float, np.floating)):
            out[key] = float(v)
        else:
            out[key] = str(v)
    return out


def _described_attrs(chain: Chain) -> list[dict[str, Any]]:
    outcome_states = set(chain.outcomes.values())
    attrs: list[dict[str, Any]] = []
    for s in range(chain.n):
        if s in outcome_states:
            attrs.append({})
            continue
        a = _flatten(chain.describe(s))
        if "seat_to_move" not in a and chain.mover[s] >= 0:
            a["seat_to_move"] = int(chain.mover[s]) + 1
        attrs.append(a)
    return attrs


# ----------------------------------------------------------------------------- the graph


def to_networkx(chain: Chain, *, model: Any = None, rules: str | None = None,
                max_states: int | None = GRAPH_LIMIT) -> nx.DiGraph:
    """The chain as a directed graph: states as nodes, merged transitions as edges.

    Parameters
    ----------
    chain : Chain
        A compiled chain (:func:`markov_oca.build`, :func:`markov_oca.ur.chain.ur_chain`).
    model : optional
        What describes the chain's states in bulk: an object with
        ``node_attributes(chain)`` (and, for the edge attribute ``landings``,
        ``landing_events(chain, seat)``), as a goose model has. Taken from the chain
        itself when its states are described by such an object's method; a goose
        chain's nodes then get ``pK_square`` and ``pK_status``.
    rules : str, optional
        The rule set's name for the graph attribute ``rules`` (the model's by default).
    max_states : int or None
        Refuse chains with more states (:class:`~markov_oca.errors.TooLargeError`);
        ``None`` for no limit.

    Returns
    -------
    networkx.DiGraph
        Graph attributes ``rules``, ``players``, ``denominator``, ``init``.
        Node attributes, all scalars: ``init``, ``deadlock`` (in a closed class with
        no outcome), ``turn_start`` (a step from here begins a turn), ``outcome``
        (name, on absorbing outcome states only), and the decoded state: goose
        ``seat_to_move``, ``p1_square``, ``p1_status`` (``playing``, ``finished``,
        ``waiting``, ``misses 2``, ``throws again``) ...; Ur ``side_to_move``,
        ``throwing_again``, ``light_squares`` and ``dark_squares`` (comma-separated
        path squares, 0 in hand, 15 off). Edge attributes: ``probability`` (float),
        ``p`` (the exact probability, ``"num/den"`` reduced), each branch reward
        (``throws``, ``stakes``, ``place``: the expectation given the edge, an int
        when whole), and for goose chains ``landings``: the squares the throw lands on
        (``"6,12"``; merged branches that land differently are separated by ``|``).
        Absorbing states keep their self-loops.

    Raises
    ------
    TooLargeError
        A chain of more than ``max_states`` states.

    Examples
    --------
    >>> from markov_oca import build
    >>> G = to_networkx(build("oca-moderna", players=1))
    >>> G.graph["players"], G.nodes[0]["p1_square"], G.nodes[0]["init"]
    (1, 0, True)
    >>> sum(d["probability"] for _, _, d in G.out_edges(0, data=True))
    1.0
    """
    if max_states is not None and chain.n > max_states:
        raise TooLargeError(f"{chain.n:,} states: too many for a NetworkX graph (limit {max_states:,}); "
                            "use the prism or storm format")
    t = _tables(chain, model, rules)
    import networkx as nx

    G = nx.DiGraph()
    G.graph.update(t.graph)
    G.add_nodes_from(enumerate(t.nodes))
    names = list(t.edge_columns)
    cols = [t.edge_columns[k] for k in names]
    G.add_edges_from(
        (u, v, dict(zip(names, row, strict=True)))
        for u, v, *row in zip(t.src, t.dst, *cols, strict=True)
    )
    return G


@dataclass
class _Tables:
    """What a graph holds, as plain Python values: graph attributes, node attributes, edge columns."""

    graph: dict[str, Any]
    nodes: list[dict[str, Any]]
    src: list[int]
    dst: list[int]
    edge_columns: dict[str, list]


def _tables(chain: Chain, model: Any, rules: str | None) -> _Tables:
    model = _describer(chain, model)
    edges = _merged_edges(chain)
    outcome_of = {s: name for name, s in chain.outcomes.items()}
    graph = {
        "rules": rules if rules is not None else getattr(getattr(model, "rules", None), "name", ""),
        "players": int(chain.players),
        "denominator": int(chain.denom),
        "init": int(chain.init),
    }
    attrs = model.node_attributes(chain) if model is not None else _described_attrs(chain)
    deadlock = chain.structure.deadlock.tolist()
    turn = np.asarray(_turn_rewards(chain), bool).tolist()
    for s in range(chain.n):
        a = attrs[s]
        a["init"] = s == chain.init
        a["deadlock"] = deadlock[s]
        a["turn_start"] = turn[s]
        if s in outcome_of:
            a["outcome"] = outcome_of[s]

    g = np.gcd(edges.num, edges.denom)
    p_text = [f"{a}/{b}" for a, b in zip((edges.num // g).tolist(), (edges.denom // g).tolist(), strict=True)]
    columns: dict[str, list] = {"probability": (edges.num / edges.denom).tolist(), "p": p_text}
    for name in edges.reward_num:
        values = edges.reward(name)
        columns[name] = np.rint(values).astype(np.int64).tolist() if edges.reward_integral(name) else values.tolist()
    if model is not None and hasattr(model, "landing_events"):
        columns["landings"] = _landings(chain, model, edges)
    return _Tables(graph, attrs, edges.src.tolist(), edges.dst.tolist(), columns)


def _landings(chain: Chain, model: Any, edges: _Edges) -> list[str]:
    """The squares each edge's throw lands on, ``|`` between merged branches that differ."""
    key = np.full(chain.next.shape, -1, np.int64)
    table = None
    for seat in range(model.players):
        k, table = model.landing_events(chain, seat)
        key = np.where(k >= 0, k, key)
    assert table is not None
    text = [",".join(str(q) for q in np.flatnonzero(row)) for row in table]
    out: list[list[str]] = [[] for _ in range(edges.src.size)]
    be = edges.branch_edge
    rows, js = np.nonzero(be >= 0)
    for e, k in zip(be[rows, js].tolist(), key[rows, js].tolist(), strict=True):
        t = text[k] if k >= 0 else ""
        if t not in out[e]:
            out[e].append(t)
    return ["|".join(x) for x in out]


def absorbing_states(G: nx.DiGraph) -> list[int]:
    """The states a chain never leaves: every transition out of them is a self-loop.

    Parameters
    ----------
    G : networkx.DiGraph
        A chain graph (:func:`to_networkx`); a node without out-edges counts as absorbing.

    Returns
    -------
    list of int
        The absorbing states, ascending: the outcome states, and any deadlocked state
        that only loops on itself (a piece waiting forever in a one-player game).

    Examples
    --------
    >>> from markov_oca import build
    >>> G = to_networkx(build("examples/snakes_and_ladders.toml", players=1))
    >>> [G.nodes[s]["outcome"] for s in absorbing_states(G)]
    ['seat 1 wins']
    """
    return sorted(s for s in G.nodes if all(t == s for t in G.successors(s)))


def deadlock_classes(G: nx.DiGraph) -> list[set[int]]:
    """The closed classes with no outcome: once there, the game never ends.

    Parameters
    ----------
    G : networkx.DiGraph
        A chain graph (:func:`to_networkx`); outcome states carry an ``outcome`` attribute.

    Returns
    -------
    list of set
        Each deadlocked class (a closed class without an outcome state, as the chain marks its
        states ``deadlock``), ordered by its smallest state.

    Examples
    --------
    >>> from markov_oca import build
    >>> G = to_networkx(build("oca-moderna", players=2))
    >>> [len(c) > 0 for c in deadlock_classes(G)]
    [True, True]
    """
    # The chain marked its deadlocked states (Chain.structure); no edge joins two closed classes, so each
    # class is one weakly connected piece of the graph those states span.
    dead = [s for s, a in G.nodes(data=True) if a.get("deadlock")]
    import networkx as nx

    return sorted((set(c) for c in nx.weakly_connected_components(G.subgraph(dead))), key=min)


def most_likely_paths(G: nx.DiGraph, source: int | None = None) -> dict[str, tuple[Fraction, list[int]]]:
    """The most probable single path from the start to each outcome.

    Dijkstra's algorithm on the weights ``-log p`` of the edges; when paths tie, one of
    them.

    Parameters
    ----------
    G : networkx.DiGraph
        A chain graph (:func:`to_networkx`).
    source : int, optional
        The state to start from (the graph's ``init`` by default).

    Returns
    -------
    dict
        Outcome name -> (the exact probability of that one path, its states from
        ``source`` to the outcome state). Outcomes that cannot be reached are left out.

    Examples
    --------
    >>> from markov_oca import build
    >>> G = to_networkx(build("examples/snakes_and_ladders.toml", players=1))
    >>> p, path = most_likely_paths(G)["seat 1 wins"]
    >>> len(path) - 1, p  # seven throws of 1/6: 0 -> 1 (ladder to 38), ..., 74 -> 80 (ladder to 100)
    (7, Fraction(1, 279936))
    """
    if source is None:
        source = G.graph.get("init")
        if source is None:
            source = next(s for s, init in G.nodes(data="init") if init)
    import networkx as nx

    dist, paths = nx.single_source_dijkstra(G, source, weight=lambda u, v, d: -math.log(d["probability"]))
    out: dict[str, tuple[Fraction, list[int]]] = {}
    for s, name in G.nodes(data="outcome"):
        if name is None or s not in paths:
            continue
        path = paths[s]
        p = Fraction(1)
        for u, v in itertools.pairwise(path):
            p *= Fraction(G.edges[u, v]["p"])
        out[name] = (p, path)
    return out


# ----------------------------------------------------------------------------- properties


# ----------------------------------------------------------------------------- writing


# ----------------------------------------------------------------------------- explicit files


# ----------------------------------------------------------------------------- the whole job
