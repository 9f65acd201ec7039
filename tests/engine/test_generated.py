"""Generated input (hypothesis): random boards, options, Ur positions and results files.

Each generated input either works, and then its answer holds the invariants (every row of
the chain sums to the dice's denominator exactly, outcomes plus deadlock sum to 1 within
1e-12, no NaN or negative chance; small boards agree with the simulator), or it is refused
with one ``RulesError`` line naming the file and the key. Never a traceback, never a hang:
every example has a deadline.

Profiles: ``ci`` (the default: derandomized, so CI sees the same examples every run, about
a minute in all) and ``long`` (``HYPOTHESIS_PROFILE=long``, thousands of fresh examples).
"""

from __future__ import annotations

import math
import os
import tempfile
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from markov_oca import api  # noqa: E402
from markov_oca.core.errors import MarkovOcaError, RulesError  # noqa: E402
from markov_oca.goose.model import goose_model  # noqa: E402

settings.register_profile("ci", max_examples=300, derandomize=True, deadline=timedelta(seconds=20),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=1500, deadline=timedelta(seconds=60),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)
SCALE = 1 if PROFILE == "ci" else 10

WORK = Path(tempfile.mkdtemp(prefix="markov_oca_gen_"))
MAX_STATES = 60_000  # a generated board bigger than this is not solved (the example is dropped)


def one_line_naming(exc: RulesError, path: Path | None = None) -> None:
    msg = str(exc)
    assert msg and "\n" not in msg, msg
    if path is not None:
        assert str(path) in msg, msg
    assert exc.key or exc.source or msg.startswith(("players", "position")), msg  # names what is at fault


# ----------------------------------------------------------------------------- goose boards

def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "nan"
    return str(value)


def _table(d: dict) -> str:
    return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in d.items()) + " }"


SQUARE_VALUES = {
    "jump": st.integers(-2, 30),
    "goose": st.sampled_from(["repeat", "next", "sideways"]),
    "again": st.one_of(st.booleans(), st.just("yes")),
    "miss": st.integers(-1, 22),
    "wait": st.booleans(),
    "stake": st.one_of(st.integers(0, 3), st.just(5000)),
    "name": st.text("abc ", max_size=4),
    "jumpp": st.integers(0, 5),  # a misspelt key
}
ENGINE = {
    "until": st.sampled_from(["first", "last", "never"]),
    "overshoot": st.sampled_from(["bounce", "stay", "finish", "wrap"]),
    "exact_finish": st.one_of(st.booleans(), st.just("maybe")),
    "occupancy": st.sampled_from(["none", "occupant-returns", "mover-returns", "both"]),
    "waiting": st.sampled_from(["until-replaced", "turns", "turns:1", "turns:3", "turns:0", "turns:x"]),
    "goose_after_bounce": st.sampled_from(["forward", "backward"]),
    "first_throw_effect": st.booleans(),
    "bumped_keeps_turns": st.booleans(),
}


ENGINE_OK = {k: v.filter(lambda x: x not in ("never", "wrap", "both", "maybe", "turns:0", "turns:x"))
             for k, v in ENGINE.items()}


@st.composite
def goose_boards(draw, *, valid_only: bool = False):
    """A goose rule file's text, the CLI options and the player count; two in three meant valid, one wild."""
    valid_only = valid_only or not draw(st.sampled_from([False, False, True]))
    engine = ENGINE_OK if valid_only else ENGINE
    goal = draw(st.integers(1 if not valid_only else 2, 24))
    faces = draw(st.integers(0 if not valid_only else 1, 6))
    count = draw(st.integers(1, 2))
    lo, hi = (1, goal - 1) if valid_only else (-1, goal + 1)
    squares = {}
    if hi >= lo:
        keys_ok = ["jump", "goose", "again", "miss", "wait", "stake"]
        for s in draw(st.lists(st.integers(lo, hi), max_size=min(6, goal), unique=True)):
            keys = draw(st.lists(st.sampled_from(keys_ok if valid_only else list(SQUARE_VALUES)),
                                 min_size=1, max_size=2, unique=True))
            eff = {k: draw(SQUARE_VALUES[k]) for k in keys}
            if valid_only:
                eff = {k: v for k, v in eff.items() if k != "goose" or v != "sideways"}
                if "jump" in eff:
                    eff["jump"] = draw(st.integers(0, goal).filter(lambda j, s=s: j != s))
                if "miss" in eff:
                    eff["miss"] = draw(st.integers(0, 3))
                if "stake" in eff:
                    eff["stake"] = draw(st.integers(0, 3))
                if "again" in eff:
                    eff["again"] = True
            squares[s] = eff
    rules = {}
    for k in draw(st.lists(st.sampled_from(sorted(ENGINE)), max_size=3, unique=True)):
        rules[k] = draw(engine[k])
    options = {}
    for k in draw(st.lists(st.sampled_from(sorted(ENGINE)), max_size=2, unique=True)):
        options[k] = str(draw(engine[k])).lower()
    if not valid_only and draw(st.integers(0, 9)) == 0:
        options["no_such_option"] = "1"
    players = draw(st.integers(0 if not valid_only else 1, 3 if goal <= 12 else 2))
    lines = ["[game]", 'name = "generated"', f"goal = {goal}", "players = 2",
             "[dice]", f"count = {count}", f"faces = {faces}"]
    if rules:
        lines += ["[rules]", *(f"{k} = {_toml(v)}" for k, v in rules.items())]
    lines += ["[squares]", *(f"{s} = {_table(e)}" for s, e in squares.items())]
    text = "\n".join(lines) + "\n"
    if not valid_only and draw(st.integers(0, 14)) == 0:
        text = text[: draw(st.integers(0, len(text)))]  # a truncated file
    return text, options, players


_counter = iter(range(10**9))


def write(text: str | bytes, suffix: str = ".toml") -> Path:
    p = WORK / f"gen{next(_counter)}{suffix}"
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def check_chain(chain) -> dict[str, float]:
    nxt, pnum = chain.next, chain.pnum
    live = nxt >= 0
    assert (pnum[live] > 0).all()  # no branch of zero or negative weight
    rows = np.where(live, pnum, 0).sum(axis=1, dtype=np.int64)
    assert (rows == chain.denom).all(), np.flatnonzero(rows != chain.denom)[:5]  # exact integers
    probs = chain.outcome_probabilities()
    values = np.array(list(probs.values()))
    assert np.isfinite(values).all() and (values >= -1e-15).all(), probs
    assert abs(values.sum() - 1.0) <= 1e-12, probs
    return probs


def load_or_refuse(text: str, options: dict, players: int):
    path = write(text)
    try:
        rules = api.load(path, options)
        m = goose_model(rules, players)
    except RulesError as exc:
        one_line_naming(exc, path if not str(exc).startswith("players") else None)
        event("refused")
        return None, None
    event("loaded")
    return rules, m


@given(goose_boards())
def test_random_goose_boards_load_and_solve_or_refuse(case):
    text, options, players = case
    rules, m = load_or_refuse(text, options, players)
    if rules is None:
        return
    assume(m.full_size <= MAX_STATES)
    try:
        chain = api.build(rules, players)
    except MarkovOcaError as exc:  # too large, or a solver that did not converge: one line
        assert "\n" not in str(exc)
        return
    event("solved")
    check_chain(chain)


@settings(max_examples=60 * SCALE)
@given(goose_boards(valid_only=True), st.integers(0, 2**31 - 1))
def test_small_random_boards_agree_with_the_simulator(case, seed):
    text, options, players = case
    rules, m = load_or_refuse(text, options, players)
    assume(rules is not None and m.full_size <= MAX_STATES)
    probs = check_chain(api.build(rules, players))
    n = 4000
    sim = api.simulate(rules.source, players, n, seed=seed, options=options)
    freq = dict(zip(sim.outcome_names, (int(k) for k in sim.outcomes), strict=True))
    freq["deadlock"] = sim.unfinished
    for name, p in probs.items():
        # 5.5 standard errors: over every outcome of every example, a false alarm is below 1e-5.
        se = math.sqrt(max(p * (1 - p), 1e-12) / n)
        assert abs(freq.get(name, 0) / n - p) <= 5.5 * se + 2 / n, (name, p, freq)


def test_generated_boards_cover_both_branches():
    # The strategy is worth running only if it reaches both refusals and solves.
    from hypothesis import find

    find(goose_boards(), lambda c: load_or_refuse(*c)[0] is None)
    find(goose_boards(), lambda c: load_or_refuse(*c)[0] is not None)


# ----------------------------------------------------------------------------- points boards

PUNTI_MONEY = {"pay_bank": st.integers(1, 30), "collect_bank": st.integers(1, 30),
               "collect_each": st.integers(1, 20), "pay_each": st.integers(1, 20)}
PUNTI_ECONOMY = {
    "dowry": st.integers(60, 100), "entry_tax": st.integers(0, 15), "head_fee": st.integers(0, 5),
    "head_fee_to": st.sampled_from(["seat-1", "bank"]), "bank_fund": st.integers(0, 40),
    "bet_cost": st.integers(1, 10), "bet_prize": st.integers(0, 30), "aid": st.integers(0, 10),
    "aid_throws": st.integers(1, 2), "aid_uses": st.integers(0, 1),
}
PUNTI_WILD = [  # one bad value or key, for the wild third: (section, line)
    ("squares", "{ pay_bank = -5 }"), ("squares", "{ teleport = 1 }"), ("squares", "{ pulcinella = 'two' }"),
    ("squares", "{ pay_bank = 5, collect_each = 5 }"), ("economy", "dowry = -1"), ("economy", "head_fee_to = 'me'"),
    ("economy", "aid_uses = 3"), ("economy", "interest = 2"), ("dice", "faces = 0"), ("dice", "count = 2"),
]


@st.composite
def punti_boards(draw):
    """A points board's text, the bet mode and the player count; two in three meant valid."""
    goal = draw(st.integers(2, 8))
    faces = draw(st.integers(2, min(4, goal)))
    econ = {k: draw(v) for k, v in PUNTI_ECONOMY.items() if draw(st.booleans())}
    squares = {}
    for sq in draw(st.lists(st.integers(2, goal), max_size=3, unique=True)):
        eff = {}
        money = draw(st.sampled_from([None, *sorted(PUNTI_MONEY)]))
        if money:
            eff[money] = draw(PUNTI_MONEY[money])
        if sq < goal and (not money or draw(st.booleans())):  # the end square holds no Pulcinella
            eff["pulcinella"] = draw(st.integers(1, 2))
        if not eff:
            eff["pay_bank"] = 1
        squares[sq] = eff
    lines = ["[game]", 'name = "generated points"', 'family = "punti"', f"goal = {goal}", "players = 2",
             "[dice]", f"faces = {faces}", "[economy]", *(f"{k} = {_toml(v)}" for k, v in econ.items()),
             "[squares]", *(f"{q} = {_table(e)}" for q, e in squares.items())]
    if draw(st.sampled_from([False, False, True])):  # wild
        where, bad = draw(st.sampled_from(PUNTI_WILD))
        if where == "squares":
            lines = [ln for ln in lines if not ln.startswith(f"{goal} = ")] + [f"{goal} = {bad}"]
        else:
            key = bad.split("=")[0].strip()
            lines = [ln for ln in lines if not ln.startswith(f"{key} = ")]
            lines.insert(lines.index(f"[{where}]") + 1, bad)
    players = draw(st.integers(2, 3 if goal <= 4 else 2))
    return "\n".join(lines) + "\n", draw(st.sampled_from(["never", "always"])), players


@settings(max_examples=40 * SCALE)
@given(punti_boards())
def test_random_points_boards_solve_or_refuse(case):
    from markov_oca.punti import solve_punti
    from markov_oca.punti.model import MODE_ALWAYS, MODE_NEVER, punti_model
    from markov_oca.punti.rules import load_punti

    text, bet, players = case
    path = write(text)
    try:
        rules = load_punti(path)
        m = punti_model(rules, players)
    except RulesError as exc:
        one_line_naming(exc, path)
        event("refused")
        return
    try:
        pc = m.build(MODE_ALWAYS if bet == "always" else MODE_NEVER)
    except MarkovOcaError as exc:
        assert "\n" not in str(exc)
        return
    assume(pc.n_states <= MAX_STATES)
    event("solved")
    check_chain(pc.chain)
    r = solve_punti(rules, players, bet=bet, method="chain")
    assert abs(sum(r.outcomes.values()) - 1.0) <= 1e-12 and min(r.outcomes.values()) >= 0
    assert abs(sum(s.win_share for s in r.seats) - 1.0) <= 1e-12
    for s in r.seats:
        assert abs(sum(s.points_pmf.values()) - 1.0) <= 1e-12 and min(s.points_pmf.values()) >= 0
        assert all(math.isfinite(v) for v in (s.win, s.tie, s.bankrupt, s.points))


# ----------------------------------------------------------------------------- Ur positions

side = st.lists(st.integers(-2, 17), min_size=0, max_size=8)


@st.composite
def position_strings(draw):
    if draw(st.booleans()):
        return draw(st.text(st.sampled_from("lightdark:,; 0123456789-x\t"), max_size=40))
    a, b = draw(side), draw(side)
    sep = draw(st.sampled_from([" ", ";", "  ", "\t"]))
    return f"{draw(st.sampled_from(['light', 'LIGHT', 'lite']))}:{','.join(map(str, a))}{sep}" \
           f"{draw(st.sampled_from(['dark', 'Dark']))}:{','.join(map(str, b))}"


_UR: dict[int, tuple] = {}


def ur_values(pieces: int):
    if pieces not in _UR:
        from markov_oca.ur.optimal import solve_optimal
        from markov_oca.ur.rules import load_ur

        rules = load_ur("ur", {"pieces": pieces})
        _UR[pieces] = (rules, solve_optimal(rules).values)
    return _UR[pieces]


@settings(max_examples=200 * SCALE)
@given(position_strings(), st.sampled_from(["light", "dark"]))
def test_random_ur_positions_answer_or_refuse(text, to_move):
    from markov_oca.ur.bestmove import best_moves, parse_position

    try:
        light, dark = parse_position(text)
        assume(len(light) <= 2)
        rules, values = ur_values(len(light))
        value, moves = best_moves(rules, light, dark, to_move, values=values)
    except RulesError as exc:
        one_line_naming(exc)
        return
    assert 0.0 <= value <= 1.0 and math.isfinite(value)
    for mv in moves:
        assert 0.0 <= mv.value <= 1.0 and 0 < mv.probability <= 1
    by_throw: dict[int, list] = {}
    for mv in moves:
        by_throw.setdefault(mv.throw, []).append(mv)
    for rows in by_throw.values():
        assert sum(r.best for r in rows) == 1  # one best move per throw that has moves


# ----------------------------------------------------------------------------- results files

_EXACT: list = []


def exact_one_player():
    if not _EXACT:
        from markov_oca.api import exact_answer

        _EXACT.append(exact_answer(api.load("oca-moderna"), 1))
    return _EXACT[0]


cell = st.one_of(st.integers(-3, 400).map(str), st.sampled_from(["", "1", "seat 1", "none", " 7 ", "x", "1.5"]),
                 st.text(max_size=3))


@st.composite
def results_texts(draw):
    header = draw(st.sampled_from(["winner,turns", "winner,turns,throws", "Winner , Turns", "turns", "winner",
                                   "\ufeffwinner,turns", "", "winner;turns"]))
    rows = draw(st.lists(st.lists(cell, min_size=1, max_size=4), max_size=12))
    text = header + "\n" + "\n".join(",".join(r) for r in rows) + draw(st.sampled_from(["", "\n", "\n\n"]))
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]  # truncated anywhere
    return text


@st.composite
def jsonl_texts(draw):
    import json

    obj = st.fixed_dictionaries({}, optional={
        "winner": st.one_of(st.none(), st.integers(-2, 3), st.sampled_from(["1", "seat 1", "bob"])),
        "turns": st.one_of(st.integers(-2, 400), st.floats(allow_nan=True), st.text(max_size=3)),
        "throws": st.integers(0, 400),
    })
    lines = [json.dumps(o) for o in draw(st.lists(obj, max_size=10))]
    lines += draw(st.lists(st.sampled_from(["", "[1, 2]", "{", "null", '"x"']), max_size=2))
    return "\n".join(lines)


def read_or_refuse(path: Path):
    from markov_oca.io.results import read_results

    try:
        s = read_results(path, exact_one_player())
    except RulesError as exc:
        one_line_naming(exc, path)
        return None
    assert s.games > 0 and s.games == int(s.outcomes.sum()) + s.unfinished
    return s


@settings(max_examples=300 * SCALE)
@given(st.one_of(results_texts().map(lambda t: (t, ".csv")), jsonl_texts().map(lambda t: (t, ".jsonl"))))
def test_random_results_files_read_or_refuse(case):
    text, suffix = case
    read_or_refuse(write(text, suffix))


@settings(max_examples=40 * SCALE)
@given(st.binary(max_size=200), st.sampled_from([".csv", ".jsonl"]))
def test_corrupted_results_bytes_read_or_refuse(data, suffix):
    read_or_refuse(write(b"winner,turns\n1,20\n" + data, suffix))


@pytest.mark.parametrize(("data", "suffix"), [
    (b"winner,turns\n1,\xff\xfe20\n", ".csv"),  # not UTF-8
    (b"winner,turns\n1,99999999999999999999999\n", ".csv"),  # beyond int64
    (b"winner,turns\n1,9223372036854775807\n", ".csv"),  # a histogram that long
    (b"[" * 100_000 + b"\n", ".jsonl"),  # nesting deeper than the JSON decoder's recursion
    (b'{"winner": 1, "turns": ' + b"9" * 5000 + b"}\n", ".jsonl"),  # beyond int-from-string's digits
], ids=["utf8", "int64", "maxint", "deep-json", "5000-digits"])
def test_known_corrupted_results_files(data, suffix):
    read_or_refuse(write(data, suffix))
