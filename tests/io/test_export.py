"""Export: the NetworkX graph and its helpers, the graph file formats, and PRISM / Storm files checked in Storm."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction as F
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from support import board

from markov_oca import api
from markov_oca.api import export
from markov_oca.core.errors import TooLargeError
from markov_oca.io.edges import label_names
from markov_oca.io.graph import absorbing_states, deadlock_classes, most_likely_paths, to_networkx
from markov_oca.io.properties import properties
from markov_oca.io.write import write_chain
from markov_oca.ur.chain import ur_chain
from markov_oca.ur.rules import load_ur
from markov_oca.ur.solve import solve_ur

SNAKES = Path(__file__).resolve().parents[2] / "examples" / "snakes_and_ladders.toml"


@pytest.fixture(scope="module")
def oca1():
    return api.build("oca-moderna", players=1)


@pytest.fixture(scope="module")
def oca2():
    return api.build("oca-moderna", players=2)


@pytest.fixture(scope="module")
def graph2(oca2):
    return to_networkx(oca2)


@pytest.fixture(scope="module")
def ur1():
    return ur_chain(load_ur("ur", {"pieces": 1}), "random", "random")


def jump_board(players: int):
    # Squares 0..3, a coin (1 or 2), square 1 jumps to 2, bounce at the goal:
    # from 0 every throw ends on 2 (one merged edge, probability 1); from 2 a 1 finishes
    # and a 2 bounces back to 2.
    return api.build(board(3, {1: {"jump": 2}}), players=players)


def matrix(G: nx.DiGraph, n: int):
    return nx.to_scipy_sparse_array(G, nodelist=range(n), weight="probability", format="csr")


def check_graph(chain, G):
    assert G.number_of_nodes() == chain.n
    for s in G.nodes:
        out = G.out_edges(s, data=True)
        assert sum(d["probability"] for _, _, d in out) == pytest.approx(1.0, abs=1e-12)
        assert sum(F(d["p"]) for _, _, d in out) == 1
    assert abs(matrix(G, chain.n) - chain.P).max() < 1e-15
    outcomes = set(chain.outcomes.values())
    absorbing = set(absorbing_states(G))
    assert outcomes <= absorbing
    # Anything else absorbing is a deadlocked state looping on itself.
    assert all(G.nodes[s]["deadlock"] for s in absorbing - outcomes)
    assert {s for s, o in G.nodes(data="outcome") if o} == outcomes
    assert [s for s, i in G.nodes(data="init") if i] == [chain.init]


# ----------------------------------------------------------------------------- the graph


@pytest.mark.parametrize("which", ["oca1", "oca2", "jump1", "jump2"])
def test_graph_is_the_chain(which, request):
    chain = jump_board(int(which[-1])) if which.startswith("jump") else request.getfixturevalue(which)
    G = request.getfixturevalue("graph2") if which == "oca2" else to_networkx(chain)
    check_graph(chain, G)
    assert G.graph["players"] == chain.players
    assert G.graph["denominator"] == chain.denom
    if which.startswith("jump"):
        assert set(absorbing_states(G)) == set(chain.outcomes.values())


def test_graph_attributes_oca2(oca2, graph2):
    G = graph2
    assert G.graph["rules"] == "oca-moderna"
    start = G.nodes[oca2.init]
    assert start["seat_to_move"] == 1
    assert (start["p1_square"], start["p2_square"]) == (0, 0)
    assert (start["p1_status"], start["p2_status"]) == ("playing", "playing")
    assert G.nodes[oca2.outcomes["seat 2 wins"]]["outcome"] == "seat 2 wins"
    # Every throw lands somewhere; a missed turn (or an outcome's self-loop) lands nowhere and is no throw.
    for _, _, d in G.edges(data=True):
        assert d["throws"] in (0, 1)
        assert (d["landings"] != "") == (d["throws"] == 1)
    # Landing on 6 (the bridge) takes the piece to 12, as does landing on 12 directly: one merged edge.
    assert any(d["landings"] == "6,12|12" for _, _, d in G.edges(data=True))
    statuses = {a for s in G.nodes for k, a in G.nodes[s].items() if k.endswith("_status")}
    assert {"playing", "waiting", "finished"} & statuses >= {"playing", "waiting"}


def test_merged_branches_and_landings():
    chain = jump_board(1)
    G = to_networkx(chain)
    # Throw 1 lands on 1 and jumps to 2, throw 2 lands on 2: one edge of probability 1.
    assert dict(G.edges[0, 1]) == {"probability": 1.0, "p": "1/1", "throws": 1, "landings": "1,2|2"}
    assert G.edges[1, 1]["p"] == "1/2" and G.edges[1, 1]["landings"] == "2"
    assert G.edges[1, 2]["landings"] == "3"


def test_most_likely_paths_by_hand():
    G = to_networkx(jump_board(1))
    assert most_likely_paths(G) == {"seat 1 wins": (F(1, 2), [0, 1, 2])}
    chain = jump_board(2)
    G = to_networkx(chain)
    paths = most_likely_paths(G)
    # Seat 1 wins: both reach 2 (certain), seat 1 throws a 1. Seat 2 wins: seat 1 bounces, seat 2 throws a 1.
    p1, path1 = paths["seat 1 wins"]
    p2, path2 = paths["seat 2 wins"]
    assert (p1, len(path1) - 1) == (F(1, 2), 3)
    assert (p2, len(path2) - 1) == (F(1, 4), 4)
    assert path1[-1] == chain.outcomes["seat 1 wins"] and path2[-1] == chain.outcomes["seat 2 wins"]
    squares = [(G.nodes[s]["p1_square"], G.nodes[s]["p2_square"]) for s in path2[:-1]]
    assert squares == [(0, 0), (2, 0), (2, 2), (2, 2)]
    assert float(p1) == pytest.approx(math.prod(G.edges[e]["probability"] for e in itertools.pairwise(path1)))


def test_deadlock_classes_oca2(oca2, graph2):
    assert oca2.deadlock_probability > 0
    G = graph2
    classes = deadlock_classes(G)
    assert len(classes) == oca2.structure.deadlock_classes == 2
    assert set().union(*classes) == set(np.flatnonzero(oca2.structure.deadlock).tolist())
    for c in classes:
        # Both pieces wait (well and prison) and neither can ever be released.
        assert all(G.nodes[s]["p1_status"] == G.nodes[s]["p2_status"] == "waiting" for s in c)
        assert all(set(G.successors(s)) <= c for s in c)
    assert deadlock_classes(to_networkx(jump_board(2))) == []


def test_ur_graph(ur1):
    G = to_networkx(ur1, rules="ur")
    check_graph(ur1, G)
    start = G.nodes[ur1.init]
    assert (start["side_to_move"], start["light_squares"], start["dark_squares"]) == ("light", "0", "0")
    assert start["throwing_again"] is False
    assert label_names(ur1) == {"light wins": "light_wins", "dark wins": "dark_wins"}


# ----------------------------------------------------------------------------- graph files


@pytest.mark.parametrize("which", ["oca1", "jump2", "ur1"])
def test_graphml_round_trip(which, request, tmp_path):
    # Our own streaming writer, read back by networkx's reader.
    chain = jump_board(2) if which == "jump2" else request.getfixturevalue(which)
    G = to_networkx(chain)
    [path] = write_chain(chain, tmp_path / which, "graphml")
    assert path.name == f"{which}.graphml"
    H = nx.read_graphml(path, node_type=int)
    assert abs(matrix(H, chain.n) - matrix(G, chain.n)).max() == 0  # floats written exactly
    assert abs(matrix(H, chain.n) - chain.P).max() < 1e-15
    assert dict(H.nodes(data=True)) == dict(G.nodes(data=True))
    assert {(u, v): d for u, v, d in H.edges(data=True)} == {(u, v): d for u, v, d in G.edges(data=True)}
    assert {k: v for k, v in H.graph.items() if not k.endswith("_default")} == G.graph


def test_gexf_and_json_round_trip(oca1, oca2, graph2, tmp_path):
    G = to_networkx(oca1)
    [gexf] = write_chain(oca1, tmp_path / "oca1.gexf", "gexf")
    H = nx.read_gexf(gexf, node_type=int)
    assert abs(matrix(H, oca1.n) - matrix(G, oca1.n)).max() == 0
    assert abs(matrix(H, oca1.n) - oca1.P).max() < 1e-15
    for s, a in G.nodes(data=True):
        assert {k: v for k, v in H.nodes[s].items() if k != "label"} == a
    assert all(H.edges[u, v]["p"] == d["p"] for u, v, d in G.edges(data=True))

    G = graph2
    [js] = write_chain(oca2, tmp_path / "oca2", "json")
    data = json.loads(js.read_text())
    assert set(data) >= {"directed", "graph", "nodes", "edges"}
    J = nx.node_link_graph(data, edges="edges")
    assert J.is_directed()
    assert dict(J.nodes(data=True)) == dict(G.nodes(data=True))
    assert {(u, v): d for u, v, d in J.edges(data=True)} == {(u, v): d for u, v, d in G.edges(data=True)}


def test_dot(tmp_path):
    chain = jump_board(2)
    [dot] = write_chain(chain, tmp_path / "jump", "dot")
    # Read back through NetworkX (pydot): the same transitions, labels for Graphviz.
    D = nx.drawing.nx_pydot.read_dot(dot)
    P = chain.P.tocoo()
    want = {(int(u), int(v)): p for u, v, p in zip(P.row, P.col, P.data, strict=True)}
    got = {(int(u), int(v)): float(a["probability"]) for u, v, a in D.edges(data=True)}
    assert got.keys() == want.keys()
    assert all(abs(got[k] - want[k]) < 1e-15 for k in want)
    labels = {a.get("label", "").strip('"') for _, a in D.nodes(data=True)}
    assert {"seat 1 wins", "seat 2 wins"} <= labels


def test_graph_formats_refuse_large_chains(oca2, tmp_path):
    with pytest.raises(TooLargeError, match=r"^5,932 states: too many for graphml \(limit 1,000 states\)"):
        write_chain(oca2, tmp_path / "x.graphml", "graphml", max_states=1000)
    with pytest.raises(TooLargeError, match="5,932 states"):
        to_networkx(oca2, max_states=1000)
    assert not (tmp_path / "x.graphml").exists()


# ----------------------------------------------------------------------------- PRISM and Storm files


def test_prism_and_storm_files_agree(oca2, tmp_path):
    storm = write_chain(oca2, tmp_path / "s", "storm")
    prism = write_chain(oca2, tmp_path / "p.tra", "prism")
    assert [p.name for p in prism] == ["p.tra", "p.lab", "p.srew", "p.rounds.srew", "p.throws.trew", "p.props"]
    s_tra = storm[0].read_text().splitlines()
    p_tra = prism[0].read_text().splitlines()
    assert s_tra[0] == "dtmc"
    assert p_tra[0] == f"{oca2.n} {oca2.P.nnz}"
    assert s_tra[1:] == p_tra[1:]
    rows = np.loadtxt(p_tra[1:], dtype=np.float64)
    assert rows[:, 0].astype(int).tolist() == np.repeat(np.arange(oca2.n), np.diff(oca2.P.indptr)).tolist()
    assert rows[:, 1].astype(int).tolist() == oca2.P.indices.tolist()
    # Each probability is the double nearest to its exact value (merged numerators over denom).
    valid = oca2.next >= 0
    exact = sp.coo_array((oca2.pnum[valid].astype(np.int64), (np.nonzero(valid)[0], oca2.next[valid])),
                         shape=(oca2.n, oca2.n)).tocsr()
    exact.sum_duplicates()
    exact.sort_indices()
    assert np.array_equal(rows[:, 2], exact.data / oca2.denom)
    # Reward files: the same lines, PRISM with a "states nonzeros" header.
    for s, p in zip(storm[2:5], prism[2:5], strict=True):
        s_lines, p_lines = s.read_text().splitlines(), p.read_text().splitlines()
        assert p_lines[1:] == s_lines
        assert p_lines[0] == f"{oca2.n} {len(s_lines)}"
    turns = np.loadtxt(storm[2], dtype=np.int64)
    assert turns[:, 0].tolist() == np.flatnonzero(oca2.turn_start).tolist() and set(turns[:, 1]) == {1}
    # Labels: the same sets of states, declared differently.
    s_lab = storm[1].read_text().splitlines()
    assert s_lab[:3] == ["#DECLARATION", "init seat_1_wins seat_2_wins done deadlock", "#END"]
    p_lab = prism[1].read_text().splitlines()
    assert p_lab[0] == '0="init" 1="seat_1_wins" 2="seat_2_wins" 3="done" 4="deadlock"'
    names = ["init", "seat_1_wins", "seat_2_wins", "done", "deadlock"]
    storm_labels = {int(line.split()[0]): line.split()[1:] for line in s_lab[3:]}
    prism_labels = {int(line.split(":")[0]): [names[int(i)] for i in line.split(":")[1].split()] for line in p_lab[1:]}
    assert storm_labels == prism_labels
    assert storm_labels[oca2.init] == ["init"]
    assert storm_labels[oca2.outcomes["seat 1 wins"]] == ["seat_1_wins", "done"]
    dead = sorted(s for s, v in storm_labels.items() if "deadlock" in v)
    assert dead == np.flatnonzero(oca2.structure.deadlock).tolist()
    assert 'P=? [G !"done"]' in prism[-1].read_text()
    assert "||" not in prism[-1].read_text()


@pytest.fixture(scope="module")
def storm_env():
    stormpy = pytest.importorskip("stormpy")
    env = stormpy.environments.sound()
    native = env.solver().native()
    native.precision = stormpy.Rational("1/10000000000")  # a string: Rational(1e-10) is the binary float
    native.relative_termination_criterion = False
    return stormpy, env


def storm_values(storm_env, chain, stem: Path):
    """Every query of :func:`properties` answered by Storm on the exported files, by our name."""
    stormpy, env = storm_env
    out = {}
    for q in properties(chain, stem.name):
        rewards = {}
        if q.reward_file:
            f = stem.parent / q.reward_file
            rewards = {"state_rewards": f} if f.suffix == ".srew" else {"transition_rewards": f}
        model = stormpy.build_model_from_explicit(stem.with_suffix(".tra"), stem.with_suffix(".lab"), **rewards)
        assert list(model.initial_states) == [chain.init]
        assert model.nr_states == chain.n and model.nr_transitions == chain.P.nnz
        result = stormpy.model_checking(model, stormpy.parse_properties(q.formula)[0], environment=env)
        out[q.name] = (result.get_value(chain.init), q)
    return out


def check_in_storm(storm_env, chain, stem: Path, expected_turns=None):
    write_chain(chain, stem, "storm")
    got = storm_values(storm_env, chain, stem)
    ours = chain.outcome_probabilities()
    for name, p in ours.items():
        assert got[name][0] == pytest.approx(p, abs=1e-8), name
    rewards = {**chain.state_rewards, **chain.branch_rewards}
    expected = chain.expected(rewards)
    for name, (value, q) in got.items():
        if q.reward is None:
            continue
        total, given_end = expected[q.reward]
        if q.storm_only:
            assert value == pytest.approx(given_end, rel=1e-8), name
        elif q.finite:
            assert value == pytest.approx(total, rel=1e-8), name
        else:
            assert math.isinf(value), name
    if expected_turns is not None:
        turns = got["turns given end" if "turns given end" in got else "turns"][0]
        assert turns == pytest.approx(expected_turns, rel=1e-8)
    return got


def test_storm_snakes_and_ladders(storm_env, tmp_path):
    chain = api.build(SNAKES, players=1)
    turns = api.solve(SNAKES, landings=False).expected["turns"].total
    got = check_in_storm(storm_env, chain, tmp_path / "sl", turns)
    assert got["turns"][0] == pytest.approx(39.2251223082, abs=1e-9)
    assert got["throws"][0] == pytest.approx(39.2251223082, abs=1e-9)


def test_storm_oca_moderna_two_players(storm_env, oca2, tmp_path):
    solved = api.solve("oca-moderna", players=2, landings=False)
    assert math.isinf(solved.expected["turns"].total)
    got = check_in_storm(storm_env, oca2, tmp_path / "oca2", solved.expected["turns"].given_end)
    assert got["seat 1 wins"][0] == pytest.approx(float(solved.outcomes["seat 1 wins"]), abs=1e-8)
    assert got["deadlock"][0] == pytest.approx(float(solved.deadlock), abs=1e-8)
    assert math.isinf(got["turns"][0])


def test_storm_ur(storm_env, ur1, tmp_path):
    got = check_in_storm(storm_env, ur1, tmp_path / "ur1")
    assert got["light wins"][0] + got["dark wins"][0] == pytest.approx(1, abs=1e-9)
    assert got["turns"][0] == pytest.approx(ur1.expected({"turns": ur1.state_rewards["turns"]})["turns"][0], rel=1e-8)


# ----------------------------------------------------------------------------- the whole job


def test_export_by_name(tmp_path, storm_env):
    files = export("ur", None, "storm", tmp_path / "ur1", options={"pieces": 1}, light="random", dark="random")
    assert [f.name for f in files] == ["ur1.tra", "ur1.lab", "ur1.srew", "ur1.throws.srew", "ur1.props"]
    stormpy, env = storm_env
    model = stormpy.build_model_from_explicit(files[0], files[1], state_rewards=files[2])
    results = {p.get_name(): stormpy.model_checking(model, p, environment=env).get_value(model.initial_states[0])
               for p in stormpy.parse_properties(str(files[-1]))}
    solved = solve_ur("ur", "random", "random", options={"pieces": 1})
    assert results["P_light_wins"] == pytest.approx(float(solved.wins["light"]), abs=1e-8)
    assert results["R_turns"] == pytest.approx(float(solved.expected["turns"].total), rel=1e-8)

    [g] = export("oca-moderna", 1, "graphml", tmp_path / "oca1")
    H = nx.read_graphml(g, node_type=int)
    assert H.graph["rules"] == "oca-moderna" and H.number_of_nodes() == api.build("oca-moderna", 1).n
    with pytest.raises(Exception, match="unknown export format 'svg'"):
        export("oca-moderna", 1, "svg", tmp_path / "x")
