"""Storm's and PRISM's explicit files (``.tra``, ``.lab``, ``.srew``, ``.trew``), read and written.

The two tools' flavours are told apart by the first line of ``.tra``: Storm writes ``dtmc``,
PRISM ``<states> <transitions>`` (and then headers on its label and reward files too). Reward
files beside the transitions are found by name: ``stem.srew`` is the reward ``srew``,
``stem.NAME.srew`` the reward ``NAME`` (and the same for ``.trew``), as :func:`write_explicit`
names them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numba
import numpy as np

from ..analysis.build import ROW_TOL, AnyChain, ChainError, from_triples, reward_name
from ..analysis.chain import Chain
from ..core.atomic import atomic_files
from ..core.errors import RulesError
from ..core.files import read_text_bytes
from .decimals import decimal_chain
from .edges import _factorize, _merged_edges, _turn_rewards, check_rows, label_names
from .lex import numbers, scan_rows
from .properties import _props_text, _reward_names, _reward_suffix
from .tokens import _branch_values, _stem, initial_state


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

    Examples
    --------
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
    check_rows(chain)

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
            _write_reward(chain, edges, name, p, prism)
        props.write_text(_props_text(chain, stem.name, prism, int(edges.src.size)))
    return finals


def _write_reward(chain: Chain, edges: Any, name: str, path: Path, prism: bool) -> None:
    """One reward file: a state reward (``.srew``, turns included) or a branch reward (``.trew``)."""
    n = chain.n
    with open(path, "wb") as fh:
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


def _head(data: bytes) -> tuple[list[bytes], int]:
    """The first line that is not a ``#`` comment, split, and where the line after it starts."""
    pos = 0
    while True:
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end]
        if not line.lstrip().startswith(b"#"):
            return line.split(), min(end + 1, len(data))
        pos = end + 1


def _read_tra(path: Path) -> tuple[bytes, bool, int | None, np.ndarray, np.ndarray, np.ndarray]:
    """(the file's bytes, prism flavour, declared states, sources, targets, the probabilities' token spans)."""
    src = str(path)
    data = read_text_bytes(path, ChainError)
    head, body = _head(data)
    declared = None
    if head == [b"dtmc"]:
        prism = False
    elif len(head) == 2 and all(t.isdigit() for t in head):
        prism, declared, transitions = True, int(head[0]), int(head[1])
    elif head and head[0].decode(errors="replace").lower() in ("mdp", "ctmc", "ma", "pomdp", "smg"):
        raise ChainError(f"a {head[0].decode(errors='replace')} model: only DTMCs are analysed", source=src)
    else:
        prism, body = False, 0  # no header: Storm's transitions from the first line
    ints, start, length = scan_rows(data, body, 2, src, "transitions (4 columns: an MDP)")
    if prism and start.size != transitions:
        raise ChainError(f"the header declares {transitions:,} transitions but the file lists {start.size:,}"
                         + (" (is it cut short?)" if start.size < transitions else ""), source=src)
    return data, prism, declared, ints[0], ints[1], np.stack([start, length])


def _read_lab(path: Path, prism: bool, n: int) -> dict[str, np.ndarray]:
    src = str(path)
    lines = read_text_bytes(path, ChainError).decode().splitlines()
    per: dict[str, list[int]] = {}
    if prism:
        names = dict(re.findall(r'(\d+)="([^"]*)"', lines[0] if lines else ""))
        per = {v: [] for v in names.values()}
        for no, line in enumerate(lines[1:], start=2):
            s, colon, labs = line.partition(":")
            if not line.strip():
                continue
            if not colon or not s.strip().isdigit():
                raise ChainError(f"line {no}: {line[:60]!r} is not 'state: label numbers'", source=src)
            for i in labs.split():
                if i not in names:
                    raise ChainError(f"line {no}: label number {i} is not declared", source=src)
                per[names[i]].append(int(s))
    else:
        try:
            start, end = lines.index("#DECLARATION"), lines.index("#END")
        except ValueError:
            raise ChainError("a Storm label file starts with #DECLARATION ... #END", source=src) from None
        declared = " ".join(lines[start + 1:end]).split()
        per = {k: [] for k in declared}
        for no, line in enumerate(lines[end + 1:], start=end + 2):
            parts = line.split()
            if not parts:
                continue
            if not parts[0].isdigit():
                raise ChainError(f"line {no}: {line[:60]!r} is not 'state label ...'", source=src)
            for lab in parts[1:]:
                if lab not in per:
                    raise ChainError(f"line {no}: label {lab!r} is not declared", source=src)
                per[lab].append(int(parts[0]))
    out = {k: np.unique(np.array(v, np.int64)) for k, v in per.items()}
    for k, v in out.items():
        if v.size and v[-1] >= n:
            raise ChainError(f"label {k!r} names state {int(v[-1])}, beyond the {n} states", source=src)
    return out


def _reward_files(stem: Path) -> list[tuple[str, Path]]:
    out = []
    for kind in ("srew", "trew"):
        plain = stem.parent / f"{stem.name}.{kind}"
        if plain.exists():
            out.append((kind, plain))
        for p in sorted(stem.parent.glob(f"{stem.name}.*.{kind}")):
            out.append((p.name[len(stem.name) + 1:-len(kind) - 1], p))
    return out


def _read_rewards(p: Path, prism: bool, n: int, exact: bool) -> Any:
    """A ``.srew`` as one value a state, or a ``.trew`` as (sources, targets, values)."""
    src = str(p)
    data = read_text_bytes(p, ChainError)
    head, after = _head(data)
    body = after if prism and len(head) == 2 and all(t.isdigit() for t in head) else 0
    nint = 1 if p.suffix == ".srew" else 2
    what = "state rewards" if nint == 1 else "transition rewards"
    ints, start, length = scan_rows(data, body, nint, src, what)
    if ints.size and ints.max() >= n:
        raise ChainError(f"a reward for state {int(ints.max())}, beyond the {n:,} states", source=src)
    got = numbers(data, np.frombuffer(data, np.uint8), start, length, src, exact)
    if nint == 2:
        return ints[0], ints[1], got.value
    if exact or got.rational:
        values = got.fractions()
        if all(f.denominator == 1 for f in values):
            out = np.zeros(n, np.int64)
            out[ints[0]] = [f.numerator for f in values]
            return out
        full = [Fraction(0)] * n
        for s, f in zip(ints[0].tolist(), values, strict=True):
            full[s] = f
        return full
    out = np.zeros(n)
    out[ints[0]] = got.value
    return out


def read_explicit(path: str | Path, *, tol: float = ROW_TOL, exact: bool = False) -> AnyChain:
    """A chain from Storm's or PRISM's explicit files (``.tra`` and, beside it, ``.lab``, ``.srew``, ``.trew``).

    Parameters
    ----------
    path : str or Path
        The ``.tra`` file, or the stem the files share.
    tol : float
        How far from 1 a row of decimal probabilities may sum.
    exact : bool
        Read decimals exactly too (``0.7`` is ``7/10``); then every row must sum to exactly 1.

    Returns
    -------
    AnyChain
        ``init`` is the first state labelled ``init`` (state 0 when no label says; all of them stay
        in ``labels["init"]``); every reward file becomes a reward of that name (per state:
        ``state_rewards``; per transition: ``branch_rewards``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "w.tra").write_text("3 4\\n0 1 0.7\\n0 2 0.3\\n1 1 1\\n2 2 1\\n")
    >>> c = read_explicit(d / "w.tra", exact=True)
    >>> c.exact, c.pnum[0].tolist(), c.denom
    (True, [7, 3], 10)
    """
    tra = Path(path)
    if tra.suffix != ".tra":
        tra = tra.parent / (tra.name + ".tra")
    stem = _stem(tra)
    data, prism, n_decl, rows, cols, spans = _read_tra(tra)
    n = n_decl if n_decl is not None else int(max(rows.max(initial=-1), cols.max(initial=-1))) + 1
    probs = numbers(data, np.frombuffer(data, np.uint8), spans[0], spans[1], str(tra), exact)
    lab = stem.parent / (stem.name + ".lab")
    labels = _read_lab(lab, prism, n) if lab.exists() else {}
    init, notes = initial_state(labels)
    state_rewards: dict[str, Any] = {}
    trans_rewards: dict[str, tuple] = {}
    for name, p in _reward_files(stem):
        got = _read_rewards(p, prism, n, exact or not probs.rational)
        (trans_rewards if p.suffix == ".trew" else state_rewards)[name] = got
    chain = decimal_chain(probs, n, rows, cols, init=init, labels=labels, rewards=state_rewards, source=str(tra),
                          exact=exact)
    if chain is None:
        if not exact and not probs.rational:
            state_rewards = {name: _read_rewards(p, prism, n, False) for name, p in _reward_files(stem)
                             if p.suffix != ".trew"}
        chain = from_triples(n, rows, cols, probs.fractions() if exact or probs.rational else probs.value,
                             init=init, labels=labels, rewards=state_rewards, tol=tol, source=str(tra))
    chain.notes.extend(notes)
    for name, (s, t, v) in trans_rewards.items():
        chain.branch_rewards[reward_name(name)] = _branch_values(chain, s, t, v, name)
    return chain
