"""Storm's DRN format, read and written.

DRN is Storm's explicit format (``@type``, ``@parameters``, ``@reward_models``,
``@nr_states``, ``@model``, then ``state``/``action`` lines with their targets). Only DTMCs
(one action a state) without parameters are read. A reward model's state reward and action
reward add up to what one step from the state earns, which is how Storm accumulates them.
Probabilities written as integers or fractions (``1/6``) are read exactly; decimals as floats.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.build import ROW_TOL, AnyChain, ChainError, from_triples
from ..analysis.chain import Chain
from ..core.atomic import atomic_files
from .edges import _identifier, _merged_edges, _turn_rewards
from .explicit import _state_labels
from .properties import _reward_names
from .tokens import _init_from, _is_exact, _numbers


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


_STATE = re.compile(r"state (\d+)((?:\s+!\S+)?)(?:\s*\[([^\]]*)\])?(.*)")


_ACTION = re.compile(r"action\s+(\S+)(?:\s*\[([^\]]*)\])?\s*")


_BRANCH = re.compile(r"(\d+)\s*:\s*(\S+)")
