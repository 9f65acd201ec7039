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
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import networkx as nx
import numba
import numpy as np

from .atomic import atomic_files
from .chain import Chain
from .errors import RulesError, TooLargeError

__all__ = [
    "FILE_LIMIT",
    "FORMATS",
    "GRAPH_LIMIT",
    "Property",
    "absorbing_states",
    "deadlock_classes",
    "export",
    "label_names",
    "most_likely_paths",
    "properties",
    "to_networkx",
    "write_chain",
    "write_explicit",
]

#: Every format :func:`write_chain` writes.
FORMATS = ("graphml", "gexf", "dot", "json", "prism", "storm", "drn")
#: The graph formats and their file suffixes.
GRAPH_SUFFIX = {"graphml": ".graphml", "gexf": ".gexf", "dot": ".dot", "json": ".json"}
#: Above this many states ``to_networkx`` refuses: a NetworkX graph needs about 1 KB an edge
#: (the graph files stop earlier, at :data:`FILE_LIMIT`; use ``prism`` or ``storm``).
GRAPH_LIMIT = 200_000
#: States above which the graph file formats are refused (NetworkX writes about 1,000 edges a second).
FILE_LIMIT = 50_000
#: Suffixes of the explicit files, dropped from ``out`` to get the stem.
_EXPLICIT_SUFFIXES = {".tra", ".lab", ".srew", ".trew", ".props"}


# ----------------------------------------------------------------------------- merged edges


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


# ----------------------------------------------------------------------------- names and labels


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

    Example
    -------
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


def _describer(chain: Chain, model: Any = None) -> Any:
    """What describes the chain's states in bulk: ``model``, or the object whose method the chain's
    ``describe_state`` is, when it has ``node_attributes(chain)`` (a goose model does)."""
    owner = model if model is not None else getattr(chain.describe_state, "__self__", None)
    return owner if hasattr(owner, "node_attributes") else None


def _turn_rewards(chain: Chain) -> np.ndarray:
    if "turns" in chain.state_rewards:
        return np.asarray(chain.state_rewards["turns"])
    if chain.turn_start is not None:
        return chain.turn_start
    return chain.mover >= 0


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

    Example
    -------
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

    Example
    -------
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
        Each deadlocked class (an attracting component of the graph without an outcome
        state), ordered by its smallest state.

    Example
    -------
    >>> from markov_oca import build
    >>> G = to_networkx(build("oca-moderna", players=2))
    >>> [sorted(c) == sorted(s for s in c if G.nodes[s]["deadlock"]) for c in deadlock_classes(G)]
    [True, True]
    """
    classes = [c for c in nx.attracting_components(G) if not any("outcome" in G.nodes[s] for s in c)]
    return sorted(classes, key=min)


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

    Example
    -------
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


@dataclass(frozen=True)
class Property:
    """A query that reproduces one of our numbers in PRISM or Storm.

    ``name`` is our name for the number (an outcome's name, ``"deadlock"``, a reward's
    name, or ``"<reward> given end"``); ``key`` the same as an identifier (the property's
    name in the ``.props`` file). A reward query needs its reward file loaded
    (``reward_file``; one reward file per load: Storm adds the state and transition
    rewards it is given into one reward model). ``finite`` is False where PRISM and
    Storm answer infinity (a deadlock is possible, so the game may never reach
    ``done``). ``storm_only`` marks Storm's conditional reward operator ``||``, which
    PRISM lacks.
    """

    name: str
    key: str
    formula: str
    reward: str | None = None
    reward_file: str | None = None
    finite: bool = True
    storm_only: bool = False


def _reward_suffix(chain: Chain, name: str) -> str:
    if name == "turns":
        return ".srew"
    return f".{name}.srew" if name in chain.state_rewards else f".{name}.trew"


def _reward_names(chain: Chain) -> list[str]:
    names = ["turns"]
    names += [k for k in chain.state_rewards if k != "turns"]
    names += [k for k in chain.branch_rewards if k not in names]
    return names


def properties(chain: Chain, stem: str = "chain", flavour: str = "storm") -> list[Property]:
    """The PCTL queries whose answers are our numbers, with the reward file each needs.

    Parameters
    ----------
    chain : Chain
    stem : str
        The stem the explicit files were written with (for ``reward_file``).
    flavour : str
        ``"storm"`` or ``"prism"``: PRISM has no conditional rewards, and its built-in
        label ``"deadlock"`` (states without transitions) would shadow ours, so its
        deadlock query is ``P=? [G !"done"]``.

    Returns
    -------
    list of Property
        ``P=? [F "<outcome>"]`` for each outcome (:meth:`Chain.outcome_probabilities`),
        ``P=? [F "deadlock"]``, then for each reward (turns first) ``R=? [F "done"]``, the
        expected total, and, when a deadlock is possible (the total is then infinite),
        Storm's ``R=? [F "done" || F "done"]``: the expected total given that the game
        ends (our ``given_end``).

    Example
    -------
    >>> from markov_oca import build
    >>> [p.formula for p in properties(build("examples/snakes_and_ladders.toml", players=1))][:3]
    ['P=? [F "seat_1_wins"]', 'P=? [F "deadlock"]', 'R=? [F "done"]']
    """
    prism = flavour == "prism"
    labels = label_names(chain)
    out = [Property(name, f"P_{lab}", f'P=? [F "{lab}"]') for name, lab in labels.items()]
    out.append(Property("deadlock", "P_deadlock", 'P=? [G !"done"]' if prism else 'P=? [F "deadlock"]'))
    finite = not bool(chain.structure.deadlock.any())
    for r in _reward_names(chain):
        file = stem + _reward_suffix(chain, r)
        key = f"R_{_identifier(r)}"
        out.append(Property(r, key, 'R=? [F "done"]', r, file, finite=finite))
        if not finite and not prism:
            out.append(Property(f"{r} given end", f"{key}_given_end", 'R=? [F "done" || F "done"]', r, file,
                                storm_only=True))
    return out


def _props_text(chain: Chain, stem: str, prism: bool, transitions: int) -> str:
    """The ``.props`` file: the queries on the turns (``<stem>.srew``), the others as comments."""
    end = "" if prism else ";"
    lines = [f"// {stem}: {chain.n} states, {transitions} transitions (markov_oca export, "
             f"{'prism' if prism else 'storm'} files).",
             "// The R queries are the expected turns, with the state rewards of " + stem + ".srew."]
    others = []
    for q in properties(chain, stem, "prism" if prism else "storm"):
        what = q.name + ("" if q.finite else " (infinite: a deadlock is possible)")
        if q.reward in (None, "turns"):
            lines += [f"// {what}", f'"{q.key}": {q.formula}{end}']
        else:
            others.append(f"//   {what}: {q.formula}  with {q.reward_file}")
    if others:
        lines.append("// Other rewards: load that reward file instead of " + stem + ".srew and ask")
        lines += others
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- writing


def write_chain(chain: Chain, path: str | Path, fmt: str, *, model: Any = None,
                rules: str | None = None, max_states: int | None = FILE_LIMIT) -> list[Path]:
    """Write a chain to a file (or, for ``prism`` and ``storm``, a set of files).

    Parameters
    ----------
    chain : Chain
    path : str or Path
        The file to write. A graph format adds its suffix when ``path`` has none.
        ``prism`` and ``storm`` take ``path`` as the stem (a ``.tra`` suffix is dropped)
        and write ``<stem>.tra``, ``<stem>.lab``, ``<stem>.srew`` (turns), a file per
        other reward (``<stem>.rounds.srew``, ``<stem>.throws.trew``, ...) and
        ``<stem>.props`` (the queries of :func:`properties`).
    fmt : str
        One of :data:`FORMATS`: ``graphml``, ``gexf``, ``dot``, ``json`` (NetworkX
        node-link data, ``{"directed", "multigraph", "graph", "nodes", "edges"}``),
        ``prism`` (PRISM's explicit files), ``storm`` (Storm's).
    model, rules :
        As for :func:`to_networkx`.
    max_states : int or None
        The size above which the graph formats are refused (:class:`TooLargeError`).

    Returns
    -------
    list of Path
        The files written.

    Example
    -------
    >>> import tempfile, pathlib
    >>> from markov_oca import build
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in write_chain(build("examples/snakes_and_ladders.toml", players=1), d / "sl", "storm")]
    ['sl.tra', 'sl.lab', 'sl.srew', 'sl.rounds.srew', 'sl.throws.trew', 'sl.props']
    """
    path = Path(path)
    if fmt in ("prism", "storm"):
        stem = path.with_suffix("") if path.suffix in _EXPLICIT_SUFFIXES else path
        return write_explicit(chain, stem, flavour=fmt)
    if fmt == "drn":
        return [write_drn(chain, path if path.suffix == ".drn" else path.with_name(path.name + ".drn"))]
    if fmt not in GRAPH_SUFFIX:
        raise RulesError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")
    if max_states is not None and chain.n > max_states:
        raise TooLargeError(f"{chain.n:,} states: too many for {fmt} (limit {max_states:,} states); "
                            "use --format prism or storm")
    if not path.suffix:
        path = path.with_suffix(GRAPH_SUFFIX[fmt])
    G = to_networkx(chain, model=model, rules=rules, max_states=max_states)
    with atomic_files([path]) as (tmp,):
        if fmt == "graphml":
            nx.write_graphml(G, tmp)
        elif fmt == "gexf":
            nx.write_gexf(G, tmp)
        elif fmt == "json":
            with open(tmp, "w") as fh:
                json.dump(nx.node_link_data(G, edges="edges"), fh)
        else:
            _write_dot(G, tmp)
    return [path]


def _node_label(a: Mapping[str, Any]) -> str:
    if "outcome" in a:
        return str(a["outcome"])
    shown = [f"{k}={v}" for k, v in a.items() if k not in ("init", "deadlock", "turn_start")]
    return "\n".join(shown)


def _write_dot(G: nx.DiGraph, path: Path) -> None:
    # NetworkX writes DOT through pydot; labels make the drawing readable in Graphviz.
    H = G.copy()
    for _, a in H.nodes(data=True):
        a["label"] = _node_label(a)
        a["shape"] = "box"
    for _, _, a in H.edges(data=True):
        a["label"] = a["p"]
    nx.drawing.nx_pydot.write_dot(H, path)


# ----------------------------------------------------------------------------- explicit files


@numba.njit(cache=True)
def _put_int(x, out, pos):
    if x == 0:
        out[pos] = 48
        return pos + 1
    k = 0
    y = x
    while y > 0:
        k += 1
        y //= 10
    for i in range(k - 1, -1, -1):
        out[pos + i] = 48 + x % 10
        x //= 10
    return pos + k


@numba.njit(cache=True)
def _format_lines(a, b, two, tok, table, tlen, out):
    """Lines ``a[i] [b[i]]<token tok[i]>\\n`` into ``out``; returns the bytes written."""
    pos = 0
    for i in range(a.size):
        pos = _put_int(a[i], out, pos)
        if two:
            out[pos] = 32
            pos = _put_int(b[i], out, pos + 1)
        k = tok[i]
        for q in range(tlen[k]):
            out[pos + q] = table[k, q]
        pos += tlen[k]
        out[pos] = 10
        pos += 1
    return pos


def _write_lines(fh: Any, a: np.ndarray, b: np.ndarray | None, tokens: Sequence[str], tok: np.ndarray,
                 chunk: int = 1 << 20) -> None:
    """Write ``a b token`` lines in bulk (numba), chunk by chunk."""
    enc = [t.encode("ascii") for t in tokens]
    width = max((len(t) for t in enc), default=0)
    table = np.zeros((max(len(enc), 1), max(width, 1)), np.uint8)
    tlen = np.zeros(max(len(enc), 1), np.int64)
    for i, t in enumerate(enc):
        table[i, :len(t)] = np.frombuffer(t, np.uint8)
        tlen[i] = len(t)
    a = np.asarray(a, np.int64)
    two = b is not None
    b = np.asarray(b, np.int64) if two else np.zeros(0, np.int64)
    tok = np.asarray(tok, np.int64)
    digits = len(str(int(a.max()))) + (len(str(int(b.max()))) + 1 if two and b.size else 0) if a.size else 0
    for lo in range(0, a.size, chunk):
        hi = min(a.size, lo + chunk)
        out = np.empty((hi - lo) * (digits + width + 1), np.uint8)
        used = _format_lines(a[lo:hi], b[lo:hi] if two else b, two, tok[lo:hi], table, tlen, out)
        fh.write(out[:used].tobytes())


def _value_tokens(num: np.ndarray, den: np.ndarray | int) -> tuple[list[str], np.ndarray]:
    """Each distinct ``num/den`` as text (a whole number, or the float's shortest repr), and the index of each.

    Tokens start with the field separator (a space).
    """
    num = np.asarray(num, np.int64)
    if np.ndim(den) == 0:
        uniq, inv = _factorize(num)
        d = int(den)
        return [" " + (str(x // d) if x % d == 0 else repr(x / d)) for x in uniq.tolist()], inv
    den = np.asarray(den, np.int64)
    whole = num % den == 0
    if whole.all():
        return _value_tokens(num // den, 1)
    values = num / den
    uniq, inv = np.unique(values, return_inverse=True)
    return [" " + (str(int(v)) if v.is_integer() else repr(v)) for v in uniq.tolist()], inv.ravel()


def write_explicit(chain: Chain, stem: str | Path, flavour: str = "storm") -> list[Path]:
    """Write the explicit files of PRISM (``flavour="prism"``) or Storm (``"storm"``).

    Parameters
    ----------
    chain : Chain
    stem : str or Path
        Files are ``<stem>.tra``, ``<stem>.lab``, ``<stem>.srew`` and so on.
    flavour : str
        ``"storm"``: ``.tra`` starts with ``dtmc``; ``.lab`` is ``#DECLARATION`` /
        names / ``#END`` then ``state label ...`` lines; reward files have no header.
        ``"prism"``: ``.tra`` starts with ``states transitions``; ``.lab`` starts with
        ``0="init" 1="done" ...`` then ``state: i j ...`` lines; ``.srew`` starts with
        ``states nonzeros``, ``.trew`` with ``states nonzeros``.

    Returns
    -------
    list of Path
        ``.tra``, ``.lab``, ``.srew`` (turns: 1 where a step begins a turn), one
        ``.<name>.srew`` per other state reward, one ``.<name>.trew`` per branch reward
        (the reward of a merged transition is its expectation given that transition),
        and ``.props`` (the queries of :func:`properties`, one a line, ``//`` comments).
        Labels: ``init``, one per outcome (:func:`label_names`), ``done`` (any outcome),
        ``deadlock`` (states in a closed class without an outcome). Absorbing states
        keep their self-loops.

    Example
    -------
    >>> import tempfile, pathlib
    >>> from markov_oca import build
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> files = write_explicit(build("examples/snakes_and_ladders.toml", players=1), d / "sl", "prism")
    >>> files[0].read_text().splitlines()[:2]
    ['82 476', '0 1 0.16666666666666666']
    """
    if flavour not in ("prism", "storm"):
        raise RulesError(f"unknown explicit flavour {flavour!r} (prism or storm)")
    prism = flavour == "prism"
    stem = Path(stem)
    n = chain.n
    edges = _merged_edges(chain)
    rows = chain.row_sums()
    if not np.all(rows == chain.denom):
        bad = int(np.flatnonzero(rows != chain.denom)[0])
        raise ValueError(f"state {bad}: probabilities sum to {rows[bad]}/{chain.denom}, not 1")

    def path_for(suffix: str) -> Path:
        return stem.parent / (stem.name + suffix)

    names = _reward_names(chain)
    finals = [path_for(".tra"), path_for(".lab"), *(path_for(_reward_suffix(chain, r)) for r in names),
              path_for(".props")]
    # Written under temporary names and renamed together: the set appears whole or not at all.
    with atomic_files(finals) as temps:
        tra, lab, *reward_files, props = temps
        with open(tra, "wb") as fh:
            fh.write((f"{n} {edges.src.size}\n" if prism else "dtmc\n").encode())
            tokens, inv = _value_tokens(edges.num, edges.denom)
            _write_lines(fh, edges.src, edges.dst, tokens, inv)
        _write_labels(chain, lab, prism)
        for name, p in zip(names, reward_files, strict=True):
            with open(p, "wb") as fh:
                if name in chain.state_rewards or name == "turns":
                    values = np.asarray(_turn_rewards(chain) if name == "turns" else chain.state_rewards[name])
                    values = np.rint(values).astype(np.int64) if values.dtype.kind in "biu" else values
                    nz = np.flatnonzero(values)
                    if prism:
                        fh.write(f"{n} {nz.size}\n".encode())
                    if values.dtype.kind == "f":
                        tokens = [" " + repr(float(v)) for v in values[nz]]
                        inv = np.arange(nz.size)
                    else:
                        tokens, inv = _value_tokens(values[nz].astype(np.int64), 1)
                    _write_lines(fh, nz, None, tokens, inv)
                else:
                    nz = np.flatnonzero(edges.reward_num[name])
                    if prism:
                        fh.write(f"{n} {nz.size}\n".encode())
                    tokens, inv = _value_tokens(edges.reward_num[name][nz], edges.num[nz])
                    _write_lines(fh, edges.src[nz], edges.dst[nz], tokens, inv)
        props.write_text(_props_text(chain, stem.name, prism, int(edges.src.size)))
    return finals


def _state_labels(chain: Chain) -> tuple[list[str], dict[int, list[str]]]:
    """Every label name (``init``, the outcomes, ``done``, ``deadlock``) and the labels of each labelled state."""
    names = label_names(chain)
    order = ["init", *names.values(), "done", "deadlock"]
    per_state: dict[int, list[str]] = {chain.init: ["init"]}
    for outcome, s in chain.outcomes.items():
        per_state.setdefault(s, []).extend([names[outcome], "done"])
    for s in np.flatnonzero(chain.structure.deadlock).tolist():
        per_state.setdefault(s, []).append("deadlock")
    return order, per_state


def _write_labels(chain: Chain, path: Path, prism: bool) -> None:
    order, per_state = _state_labels(chain)
    index = {lab: i for i, lab in enumerate(order)}
    states = np.array(sorted(per_state), np.int64)
    combos: dict[str, int] = {}
    tok = np.empty(states.size, np.int64)
    for i, s in enumerate(states.tolist()):
        labs = per_state[s]
        text = (":" + "".join(f" {index[x]}" for x in labs)) if prism else "".join(f" {x}" for x in labs)
        tok[i] = combos.setdefault(text, len(combos))
    with open(path, "wb") as fh:
        if prism:
            fh.write((" ".join(f'{i}="{lab}"' for i, lab in enumerate(order)) + "\n").encode())
        else:
            fh.write(("#DECLARATION\n" + " ".join(order) + "\n#END\n").encode())
        _write_lines(fh, states, None, list(combos), tok)


def _fraction_text(num: np.ndarray, den: np.ndarray | int) -> list[str]:
    """Each ``num/den`` in lowest terms as DRN writes a rational: ``1/6``, ``2``, ``0``."""
    num = np.asarray(num, np.int64)
    den = np.broadcast_to(np.asarray(den, np.int64), num.shape)
    g = np.gcd(num, den)
    g[g == 0] = 1
    a, b = (num // g).tolist(), (den // g).tolist()
    return [str(x) if y == 1 else f"{x}/{y}" for x, y in zip(a, b, strict=True)]


def write_drn(chain: Chain, path: str | Path) -> Path:
    """Write the chain in Storm's DRN format, every probability and reward an exact fraction.

    One reward model per reward of the chain (``turns`` first): a per-state reward
    is the state's reward, a per-branch reward (a throw, a landing) is the action's
    expected reward, so expected totals are the same as with the explicit files.
    Labels as in :func:`write_explicit`. Storm reads it with
    ``stormpy.build_model_from_drn`` (and PRISM 4.9 or later with ``-importmodel``).

    Example
    -------
    >>> import tempfile, pathlib
    >>> from markov_oca import build
    >>> p = write_drn(build("examples/snakes_and_ladders.toml", players=1), pathlib.Path(tempfile.mkdtemp()) / "sl.drn")
    >>> p.read_text().splitlines()[2:4]
    ['@type: DTMC', '@parameters']
    """
    path = Path(path)
    rows = chain.row_sums()
    if not np.all(rows == chain.denom):
        bad = int(np.flatnonzero(rows != chain.denom)[0])
        raise ValueError(f"state {bad}: probabilities sum to {rows[bad]}/{chain.denom}, not 1")
    n = chain.n
    edges = _merged_edges(chain)
    names = _reward_names(chain)
    state_rew, action_rew = [], []
    for name in names:
        if name in chain.state_rewards or name == "turns":
            values = np.asarray(_turn_rewards(chain) if name == "turns" else chain.state_rewards[name])
            state_rew.append(_fraction_text(np.rint(values).astype(np.int64), 1) if values.dtype.kind in "biuf"
                             and np.all(values == np.rint(values)) else [repr(float(v)) for v in values])
            action_rew.append(["0"] * n)
        else:
            per_state = np.bincount(edges.src, weights=edges.reward_num[name], minlength=n).astype(np.int64)
            state_rew.append(["0"] * n)
            action_rew.append(_fraction_text(per_state, edges.denom))
    order, labels = _state_labels(chain)
    probs = _fraction_text(edges.num, edges.denom)
    dst = edges.dst.tolist()
    starts = np.searchsorted(edges.src, np.arange(n + 1)).tolist()
    lines = ["// Exported by markov_oca", f"// {n} states, {edges.src.size} transitions", "@type: DTMC",
             "@parameters", "", "@reward_models", " ".join(_identifier(r) for r in names), "@nr_states", str(n),
             "@nr_choices", str(n), "@model"]
    for s in range(n):
        srew = ", ".join(col[s] for col in state_rew)
        arew = ", ".join(col[s] for col in action_rew)
        lab = "".join(f" {x}" for x in labels.get(s, ()))
        lines.append(f"state {s} [{srew}]{lab}")
        lines.append(f"\taction 0 [{arew}]")
        lines += [f"\t\t{dst[e]} : {probs[e]}" for e in range(starts[s], starts[s + 1])]
    with atomic_files([path]) as (tmp,):
        tmp.write_text("\n".join(lines) + "\n")
    return path


# ----------------------------------------------------------------------------- the whole job


def export(rules: Any, players: int | None, fmt: str, out: str | Path, *,
           options: Mapping[str, Any] | None = None, max_states: int | None = FILE_LIMIT,
           progress: bool = False, **settings: Any) -> list[Path]:
    """Build a rule set's chain and write it: the command line's ``export``.

    Parameters
    ----------
    rules : str, Path or loaded rules
        A shipped rule set's name or a TOML file, of any family.
    players : int or None
        The number of players, for families that take it (the rule set's default when None).
    fmt : str
        One of :data:`FORMATS`.
    out : str or Path
        The file, or for ``prism`` and ``storm`` the stem (see :func:`write_chain`).
    options : mapping, optional
        Rule options (Ur: ``pieces``, ``throw``, ``end``, ``total``).
    max_states : int or None
        As for :func:`write_chain`.
    progress : bool
        Show progress bars while building.
    **settings
        The family's settings for ``export`` (Ur: ``pieces``, ``light``, ``dark``, whose
        policies default to ``optimal``; points: ``bet``).

    Returns
    -------
    list of Path
        The files written.

    Example
    -------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in export("ur-simplificado", None, "graphml", d / "ur1", options={"pieces": 1},
    ...                         light="random", dark="random")]
    ['ur1.graphml']
    """
    from .family import prepare

    if fmt not in FORMATS:
        raise RulesError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")
    play = prepare(rules, "export", options, players=players, **settings)
    chain = play.family.chain(play, progress=progress)
    return write_chain(chain, out, fmt, rules=play.rules.name, max_states=max_states)
