"""One chain to any of the export formats: the NetworkX graph files, PRISM, Storm, DRN and UMB."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.chain import Chain
from ..core.atomic import atomic_files
from ..core.errors import RulesError, TooLargeError
from .drn import write_drn
from .explicit import write_explicit
from .graph import to_networkx
from .umb import write_umb

if TYPE_CHECKING:  # imported where a graph is written (it takes a fifth of a second)
    import networkx as nx

#: Suffixes of the explicit files, dropped from ``out`` to get the stem.
_EXPLICIT_SUFFIXES = {".tra", ".lab", ".srew", ".trew", ".props"}
#: Every format :func:`write_chain` writes.
FORMATS = ("graphml", "gexf", "dot", "json", "prism", "storm", "drn", "umb")
#: The graph formats and their file suffixes.
GRAPH_SUFFIX = {"graphml": ".graphml", "gexf": ".gexf", "dot": ".dot", "json": ".json"}
#: States above which the graph file formats are refused (NetworkX writes about 1,000 edges a second).
FILE_LIMIT = 50_000


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
        ``prism`` (PRISM's explicit files), ``storm`` (Storm's), ``drn`` (Storm's DRN), ``umb`` (the
        binary exchange format of Storm and PRISM, probabilities as doubles).
    model, rules :
        As for :func:`to_networkx`.
    max_states : int or None
        The size above which the graph formats are refused (:class:`TooLargeError`).

    Returns
    -------
    list of Path
        The files written.

    Examples
    --------
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
    if fmt in ("drn", "umb"):
        suffix = f".{fmt}"
        target = path if path.suffix == suffix else path.with_name(path.name + suffix)
        return [write_drn(chain, target) if fmt == "drn" else write_umb(chain, target)]
    if fmt not in GRAPH_SUFFIX:
        raise RulesError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")
    if max_states is not None and chain.n > max_states:
        raise TooLargeError(f"{chain.n:,} states: too many for {fmt} (limit {max_states:,} states); "
                            "use --format prism or storm")
    if not path.suffix:
        path = path.with_suffix(GRAPH_SUFFIX[fmt])
    import networkx as nx

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
    import networkx as nx

    nx.drawing.nx_pydot.write_dot(H, path)
