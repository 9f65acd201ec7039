"""Chains read from files: Storm's and PRISM's explicit files, and DRN (Storm's, and ours).

Explicit files (``.tra`` transitions, ``.lab`` labels, ``.srew`` state rewards,
``.trew`` transition rewards) come in two flavours, told apart by the first
line of ``.tra``: Storm writes ``dtmc``, PRISM ``<states> <transitions>`` (and
then headers on its label and reward files too). Reward files beside the
transitions are found by name: ``stem.srew`` is the reward ``srew``,
``stem.NAME.srew`` the reward ``NAME`` (and the same for ``.trew``), as
:func:`markov_oca.export.write_explicit` names them.

DRN is Storm's explicit format (``@type``, ``@parameters``, ``@reward_models``,
``@nr_states``, ``@model``, then ``state``/``action`` lines with their
targets). Only DTMCs (one action a state) without parameters are read. A
reward model's state reward and action reward add up to what one step from
the state earns, which is how Storm accumulates them. Probabilities written as
integers or fractions (``1/6``) are read exactly; decimals as floats.

UMB, the unified binary format of Storm and PRISM, is not read: see
``docs/any-chain.md`` for why the ``umbi`` package was not taken on.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import AnyResults, analyse
from .build import ROW_TOL, AnyChain, ChainError, from_triples


def _numbers(tokens: list[bytes], exact: bool, source: str) -> Any:
    if exact:
        try:
            return [Fraction(t.decode()) for t in tokens]
        except (ValueError, ZeroDivisionError):
            bad = next(t for t in tokens if not re.fullmatch(rb"-?\d+(/\d+)?", t))
            raise ChainError(f"{bad.decode(errors='replace')!r} is not a number", source=source) from None
    try:
        return np.array(tokens).astype(np.float64)
    except ValueError:
        for t in tokens:
            try:
                float(t)
            except ValueError:
                raise ChainError(f"{t.decode(errors='replace')!r} is not a number", source=source) from None
        raise


def _is_exact(tokens: list[bytes]) -> bool:
    return all(re.fullmatch(rb"\d+(/\d+)?", t) for t in tokens)


def _ints(tokens: list[bytes], what: str, source: str) -> np.ndarray:
    try:
        return np.array(tokens).astype(np.int64)
    except ValueError:
        bad = next(t for t in tokens if not t.isdigit())
        raise ChainError(f"{what} {bad.decode(errors='replace')!r} is not a state number", source=source) from None


def _stem(path: Path) -> Path:
    return path.with_suffix("") if path.suffix == ".tra" else path


def _read_tra(path: Path) -> tuple[bool, int | None, np.ndarray, np.ndarray, list[bytes]]:
    """(prism flavour, declared states, sources, targets, probability tokens)."""
    src = str(path)
    lines = path.read_bytes().split(b"\n", 1)
    head = lines[0].split()
    body = lines[1] if len(lines) > 1 else b""
    if head == [b"dtmc"]:
        prism, n = False, None
    elif len(head) == 2 and all(t.isdigit() for t in head):
        prism, n = True, int(head[0])
    elif head and head[0].decode(errors="replace").lower() in ("mdp", "ctmc", "ma", "pomdp"):
        raise ChainError(f"a {head[0].decode()} model: only DTMCs are analysed", source=src)
    else:
        prism, n = False, None  # no header: Storm's transitions from the first line
        body = path.read_bytes()
    tok = body.split()
    if len(tok) % 3:
        raise ChainError(f"{len(tok)} fields: transitions are 'source target probability' lines "
                         "(a 4-column file is an MDP)", source=src)
    return prism, n, _ints(tok[0::3], "source", src), _ints(tok[1::3], "target", src), tok[2::3]


def _read_lab(path: Path, prism: bool, n: int) -> dict[str, np.ndarray]:
    src = str(path)
    text = path.read_text()
    lines = text.splitlines()
    per: dict[str, list[int]] = {}
    if prism:
        names = dict(re.findall(r'(\d+)="([^"]*)"', lines[0] if lines else ""))
        for line in lines[1:]:
            if not line.strip():
                continue
            s, _, labs = line.partition(":")
            for i in labs.split():
                if i not in names:
                    raise ChainError(f"label number {i} is not declared", source=src)
                per.setdefault(names[i], []).append(int(s))
    else:
        try:
            start, end = lines.index("#DECLARATION"), lines.index("#END")
        except ValueError:
            raise ChainError("a Storm label file starts with #DECLARATION ... #END", source=src) from None
        declared = " ".join(lines[start + 1:end]).split()
        per = {k: [] for k in declared}
        for line in lines[end + 1:]:
            parts = line.split()
            if not parts:
                continue
            for lab in parts[1:]:
                if lab not in per:
                    raise ChainError(f"label {lab!r} is not declared", source=src)
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


def read_explicit(path: str | Path, *, tol: float = ROW_TOL) -> AnyChain:
    """A chain from Storm's or PRISM's explicit files (``.tra`` and, beside it, ``.lab``, ``.srew``, ``.trew``).

    Parameters
    ----------
    path : str or Path
        The ``.tra`` file, or the stem the files share.
    tol : float
        How far from 1 a row of decimal probabilities may sum.

    Returns
    -------
    AnyChain
        ``init`` is the state labelled ``init`` (state 0 when no label says); every
        reward file becomes a reward of that name (per state: ``state_rewards``; per
        transition: ``branch_rewards``).
    """
    tra = Path(path)
    if tra.suffix != ".tra":
        tra = tra.parent / (tra.name + ".tra")
    if not tra.exists():
        raise ChainError("no such file", source=str(tra))
    stem = _stem(tra)
    prism, n_decl, rows, cols, vals = _read_tra(tra)
    n = n_decl if n_decl is not None else int(max(rows.max(initial=-1), cols.max(initial=-1))) + 1
    exact = _is_exact(vals)
    probs = _numbers(vals, exact, str(tra))
    lab = stem.parent / (stem.name + ".lab")
    labels = _read_lab(lab, prism, n) if lab.exists() else {}
    init = _init_from(labels, str(lab))
    state_rewards: dict[str, Any] = {}
    trans_rewards: dict[str, tuple] = {}
    for name, p in _reward_files(stem):
        tok = p.read_bytes().split()
        if prism and tok:
            tok = tok[2:]  # "states nonzeros" (srew) or "states transitions" (trew)
        if p.suffix == ".srew":
            if len(tok) % 2:
                raise ChainError("state rewards are 'state value' lines", source=str(p))
            v = np.zeros(n)
            v[_ints(tok[0::2], "state", str(p))] = _numbers(tok[1::2], False, str(p))
            state_rewards[name] = v
        else:
            if len(tok) % 3:
                raise ChainError("transition rewards are 'source target value' lines", source=str(p))
            trans_rewards[name] = (_ints(tok[0::3], "source", str(p)), _ints(tok[1::3], "target", str(p)),
                                   _numbers(tok[2::3], False, str(p)))
    chain = from_triples(n, rows, cols, probs, init=init, labels=labels, rewards=state_rewards, tol=tol,
                         source=str(tra))
    for name, (s, t, v) in trans_rewards.items():
        chain.branch_rewards[name] = _branch_values(chain, s, t, v, name)
    return chain


def _init_from(labels: dict[str, np.ndarray], source: str) -> int:
    init = labels.get("init")
    if init is None or init.size == 0:
        return 0
    if init.size > 1:
        raise ChainError(f"{init.size} states carry the label init: analyses start from one", source=source)
    return int(init[0])


def _branch_values(chain: AnyChain, s: np.ndarray, t: np.ndarray, v: np.ndarray, name: str) -> np.ndarray:
    """A transition reward per (source, target) as a branch reward ``(n, J)``."""
    out = np.zeros(chain.next.shape)
    hit = chain.next[s] == t[:, None]
    ok = hit.any(axis=1)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise ChainError(f"reward {name!r} on {int(s[i])} -> {int(t[i])}, which is not a transition",
                         source=chain.source)
    out[s, hit.argmax(axis=1)] = v
    return out


_STATE = re.compile(r"state (\d+)((?:\s+!\S+)?)(?:\s*\[([^\]]*)\])?(.*)")
_ACTION = re.compile(r"action\s+(\S+)(?:\s*\[([^\]]*)\])?\s*")
_BRANCH = re.compile(r"(\d+)\s*:\s*(\S+)")


def read_drn(path: str | Path, *, tol: float = ROW_TOL) -> AnyChain:
    """A chain from a DRN file (Storm's explicit format; ours from ``export --format drn``).

    Parameters
    ----------
    path : str or Path
    tol : float
        How far from 1 a row of decimal probabilities may sum.

    Returns
    -------
    AnyChain
        Labels as in the file, ``init`` the state labelled ``init``, one reward per
        reward model (state plus action reward: what a step from the state earns).
    """
    path = Path(path)
    src = str(path)
    if not path.exists():
        raise ChainError("no such file", source=src)
    lines = path.read_text().splitlines()
    header: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if line.startswith("@type:"):
            header["type"] = line.split(":", 1)[1].strip()
        elif line in ("@parameters", "@reward_models", "@nr_states", "@nr_choices", "@placeholders"):
            header[line[1:]] = lines[i].strip() if i < len(lines) and not lines[i].startswith("@") else ""
            if header[line[1:]] or (i < len(lines) and not lines[i].startswith("@")):
                i += 1
        elif line == "@model":
            break
    kind = header.get("type", "")
    if kind.upper() != "DTMC":
        raise ChainError(f"a DRN model of type {kind or 'unknown'}: only DTMCs are analysed", source=src,
                         key="@type")
    if header.get("parameters"):
        raise ChainError(f"a parametric model (parameters {header['parameters']}): give values first", source=src,
                         key="@parameters")
    reward_names = header.get("reward_models", "").split()
    try:
        n = int(header["nr_states"])
    except (KeyError, ValueError):
        raise ChainError("no @nr_states", source=src) from None
    rows: list[int] = []
    cols: list[int] = []
    vals: list[str] = []
    labels: dict[str, list[int]] = {}
    rew = np.zeros((len(reward_names), n))
    exact_rew: list[list[Fraction]] = [[Fraction(0)] * n for _ in reward_names]
    cur = -1
    actions = 0
    for lineno, raw in enumerate(lines[i:], start=i + 1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        if m := _BRANCH.fullmatch(line):
            if cur < 0:
                raise ChainError(f"line {lineno}: a transition before any state", source=src)
            rows.append(cur)
            cols.append(int(m.group(1)))
            vals.append(m.group(2))
        elif line.startswith("state "):
            m = _STATE.fullmatch(line)
            if not m:
                raise ChainError(f"line {lineno}: {line!r} is not a state line", source=src)
            cur = int(m.group(1))
            actions = 0
            if cur >= n:
                raise ChainError(f"line {lineno}: state {cur} beyond @nr_states {n}", source=src)
            _add_rewards(m.group(3), rew, exact_rew, cur, reward_names, lineno, src)
            for lab in m.group(4).split():
                labels.setdefault(lab.strip('"'), []).append(cur)
        elif line.startswith("action"):
            m = _ACTION.fullmatch(line)
            actions += 1
            if not m or actions > 1:
                raise ChainError(f"line {lineno}: state {cur} has more than one action: an MDP, not a DTMC",
                                 source=src)
            _add_rewards(m.group(2), rew, exact_rew, cur, reward_names, lineno, src)
        else:
            raise ChainError(f"line {lineno}: {line!r} is not a DRN line", source=src)
    tokens = [v.encode() for v in vals]
    probs = _numbers(tokens, _is_exact(tokens), src)
    label_sets = {k: np.array(v, np.int64) for k, v in labels.items()}
    init = _init_from({k: np.unique(v) for k, v in label_sets.items()}, src)
    exact_ok = all(all(isinstance(x, Fraction) for x in col) for col in exact_rew)
    rewards: dict[str, Any] = {name: (exact_rew[k] if exact_ok else rew[k]) for k, name in enumerate(reward_names)}
    return from_triples(n, np.array(rows, np.int64), np.array(cols, np.int64), probs, init=init, labels=label_sets,
                        rewards=rewards, tol=tol, source=src)


def _add_rewards(text: str | None, rew: np.ndarray, exact_rew: list, s: int, names: list[str], lineno: int,
                 src: str) -> None:
    if not text:
        return
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(names):
        raise ChainError(f"line {lineno}: {len(parts)} rewards for {len(names)} reward models", source=src)
    for k, p in enumerate(parts):
        try:
            if re.fullmatch(r"-?\d+(/\d+)?", p):
                f = Fraction(p)
                if isinstance(exact_rew[k][s], Fraction):
                    exact_rew[k][s] += f
                rew[k, s] += float(f)
            else:
                rew[k, s] += float(p)
                exact_rew[k][s] = None  # a decimal: this reward is a float
        except ValueError:
            raise ChainError(f"line {lineno}: reward {p!r} is not a number", source=src) from None


def read_chain(path: str | Path, *, tol: float = ROW_TOL) -> AnyChain:
    """A chain from a file: DRN (``.drn``) or Storm/PRISM explicit files (``.tra``, or their stem).

    Parameters
    ----------
    path : str or Path
    tol : float
        How far from 1 a row of decimal probabilities may sum.

    Returns
    -------
    AnyChain

    Example
    -------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "coin.tra"
    >>> _ = p.write_text("dtmc\\n0 0 0.5\\n0 1 0.5\\n1 1 1\\n")
    >>> c = read_chain(p)
    >>> c.n, c.outcomes, c.exact
    (2, {'state 1': 1}, False)
    """
    p = Path(path)
    if p.suffix.lower() == ".drn":
        return read_drn(p, tol=tol)
    if p.suffix == ".umb":
        raise ChainError("UMB files are not read (see docs/any-chain.md); export DRN from Storm or PRISM instead",
                         source=str(p))
    return read_explicit(p, tol=tol)


def analyse_file(path: str | Path, *, tol: float = ROW_TOL, **options: Any) -> AnyResults:
    """Read a chain file and analyse it: what ``markov-oca analyse FILE`` does.

    Parameters
    ----------
    path : str or Path
        A DRN file, or Storm/PRISM explicit files (see :func:`read_chain`).
    tol : float
        As for :func:`read_chain`.
    **options
        Passed to :func:`~markov_oca.anychain.analyse`: ``exact`` (bool or None), ``hit``
        (label names, or name -> states), ``conditional`` (int), ``tail`` (float),
        ``max_steps`` (int), ``length`` (bool), ``rewards`` (name -> values).

    Returns
    -------
    AnyResults

    Example
    -------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "coin.tra"
    >>> _ = p.write_text("dtmc\\n0 0 1/2\\n0 1 1/2\\n1 1 1\\n")
    >>> analyse_file(p).steps
    Fraction(2, 1)
    """
    return analyse(read_chain(path, tol=tol), **options)
