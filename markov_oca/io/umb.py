"""UMB, the binary exchange format of Storm 2.0 and PRISM 4.10, read and written (format version 1).

A UMB file is a tar archive (gzip-compressed or not) of ``index.json`` and little-endian binary arrays:

- ``index.json``: ``transition-system`` counts (``#states``, ``#choices``, ``#branches``,
  ``#initial-states``...), ``time`` (``discrete`` for a DTMC), ``branch-probability-type``
  (``{"type": "double", "size": 64}`` or ``{"type": "rational", "size": 128}``), and the
  ``annotations``: atomic propositions (``aps``) and ``rewards``, each under a key with its
  name as ``alias`` (Storm keys an unnamed reward model ``default``, without an alias);
- ``state-to-choices.bin``, ``choice-to-branches.bin``: CSR offsets (``uint64``, one more than
  the states or choices; absent: one each);
- ``branch-to-target.bin`` (``uint64``), ``branch-to-probability.bin`` (``double``, or a rational
  as an ``int64`` numerator and a ``uint64`` denominator);
- ``state-is-initial.bin`` and the propositions' ``annotations/aps/<key>/states/values.bin``:
  bit vectors, bit ``i`` of 64-bit word ``i // 64`` for state ``i``;
- ``annotations/rewards/<key>/{states,choices,branches}/values.bin``: one value each.

Only DTMCs (discrete time, one choice a state) are read. A state's reward and its choice's reward
add up to what a step from it earns, as in DRN.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
import zlib
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.build import ROW_TOL, AnyChain, ChainError, from_triples, reward_name
from ..analysis.chain import Chain
from ..core.atomic import atomic_files
from ..core.files import read_bytes
from .drn import UNNAMED_REWARD
from .edges import _identifier, _merged_edges, _turn_rewards, check_rows
from .explicit import _state_labels
from .properties import _reward_names
from .tokens import _branch_values, initial_state

#: The value types written: ``double`` (what Storm writes) or ``rational`` (exact, 128 bits each).
VALUE_TYPES = {"double": {"type": "double", "size": 64}, "rational": {"type": "rational", "size": 128}}


class _Archive:
    """The members of a UMB archive, read on demand, each checked against the size the index implies."""

    def __init__(self, path: str | Path):
        self.src = str(path)
        data = read_bytes(path, ChainError)
        try:
            self.tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
            self.members = {m.name.lstrip("./"): m for m in self.tar.getmembers() if m.isfile()}
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise ChainError(f"not a UMB archive (a tar file of index.json and arrays): {exc}",
                             source=self.src) from None
        try:
            self.index = json.loads(self.read("index.json", None).decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ChainError(f"index.json is not JSON: {exc}", source=self.src) from None
        if not isinstance(self.index, dict):
            raise ChainError("index.json is not a JSON object", source=self.src)

    def read(self, name: str, size: int | None) -> bytes:
        member = self.members.get(name)
        if member is None:
            raise ChainError(f"no {name} in the archive", source=self.src)
        if size is not None and member.size != size:
            raise ChainError(f"{name} has {member.size:,} bytes, the index implies {size:,}", source=self.src)
        try:
            return self.tar.extractfile(member).read()
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise ChainError(f"{name} cannot be read (is the archive cut short?): {exc}", source=self.src) from None

    def array(self, name: str, dtype: str, count: int) -> np.ndarray:
        return np.frombuffer(self.read(name, count * np.dtype(dtype).itemsize), dtype)

    def bits(self, name: str, count: int) -> np.ndarray:
        member = self.members.get(name)
        if member is None:
            raise ChainError(f"no {name} in the archive", source=self.src)
        if member.size not in (-(-count // 8), -(-count // 64) * 8):
            raise ChainError(f"{name} has {member.size:,} bytes for {count:,} bits", source=self.src)
        raw = np.frombuffer(self.read(name, None), np.uint8)
        return np.flatnonzero(np.unpackbits(raw, bitorder="little")[:count])

    def csr(self, name: str, rows: int, total: int) -> np.ndarray | None:
        if name not in self.members:
            return None
        offsets = self.array(name, "<u8", rows + 1).astype(np.int64)
        if offsets[0] != 0 or offsets[-1] != total or (np.diff(offsets) < 0).any():
            raise ChainError(f"{name} is not a CSR from 0 to {total:,}", source=self.src)
        return offsets

    def values(self, name: str, kind: dict, count: int) -> tuple[np.ndarray, list[Fraction] | None]:
        """Floats, and the exact values when the type is rational (or an integer)."""
        t, size = kind.get("type"), kind.get("size")
        if t == "double" and size == 64:
            return self.array(name, "<f8", count).copy(), None
        if t == "rational" and size == 128:
            pair = self.array(name, "<u8", 2 * count).reshape(-1, 2)
            num, den = pair[:, 0].view(np.int64).tolist(), pair[:, 1].tolist()
            if 0 in den:
                raise ChainError(f"{name} holds a rational with denominator 0", source=self.src)
            exact = [Fraction(a, b) for a, b in zip(num, den, strict=True)]
            return np.array([float(f) for f in exact]), exact
        if t in ("int", "uint") and size == 64:
            ints = self.array(name, "<i8" if t == "int" else "<u8", count)
            return ints.astype(np.float64), [Fraction(int(x)) for x in ints.tolist()]
        raise ChainError(f"{name}: values of type {t} ({size} bits) are not read (double or 128-bit rational)",
                         source=self.src)


def _count(ts: dict, key: str, src: str) -> int:
    value = ts.get(key, 0)
    if not isinstance(value, int) or value < 0:
        raise ChainError(f"index.json: {key} is {value!r}, not a count", source=src)
    return value


def read_umb(path: str | Path, *, tol: float = ROW_TOL) -> AnyChain:
    """A chain from a UMB file (Storm's ``export_to_umb``, PRISM's ``-exportmodel ....umb``, ours).

    Parameters
    ----------
    path : str or Path
    tol : float
        How far from 1 a row of double probabilities may sum.

    Returns
    -------
    AnyChain
        Exact when the probabilities are rationals. Labels from the atomic propositions (by their
        alias) and ``init`` from the initial states; one reward per reward annotation (state plus
        choice reward; a branch reward as a transition reward).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from markov_oca.analysis.build import from_matrix
    >>> from fractions import Fraction as F
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "walk.umb"
    >>> c = from_matrix([[0, F(7, 10), F(3, 10)], [0, 1, 0], [0, 0, 1]], init=0, labels={"goal": [1]})
    >>> back = read_umb(write_umb(c, p, value_type="rational"))
    >>> back.exact, back.outcomes, back.pnum[0].tolist(), back.denom
    (True, {'goal': 1, 'state_2': 2}, [7, 3], 10)
    """
    arc = _Archive(path)
    src = arc.src
    ts = arc.index.get("transition-system")
    if not isinstance(ts, dict):
        raise ChainError("index.json has no transition-system", source=src)
    if ts.get("time", "discrete") != "discrete":
        raise ChainError(f"a model of {ts.get('time')} time: only DTMCs are analysed", source=src)
    n, choices, branches = (_count(ts, k, src) for k in ("#states", "#choices", "#branches"))
    if n == 0:
        raise ChainError("a model of no states", source=src)
    per_state = arc.csr("state-to-choices.bin", n, choices)
    if choices != n or (per_state is not None and (np.diff(per_state) != 1).any()):
        raise ChainError(f"{choices:,} choices for {n:,} states: an MDP or a game, not a DTMC", source=src)
    offsets = arc.csr("choice-to-branches.bin", choices, branches)
    if offsets is None:
        if branches != choices:
            raise ChainError(f"no choice-to-branches.bin, and {branches:,} branches for {choices:,} choices",
                             source=src)
        offsets = np.arange(choices + 1, dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    cols = arc.array("branch-to-target.bin", "<u8", branches).astype(np.int64)
    if "branch-to-probability.bin" in arc.members:
        kind = ts.get("branch-probability-type", VALUE_TYPES["double"])
        floats, exact = arc.values("branch-to-probability.bin", kind, branches)
    else:
        floats, exact = np.ones(branches), [Fraction(1)] * branches
    labels = _aps(arc, n)
    initial = arc.bits("state-is-initial.bin", n) if "state-is-initial.bin" in arc.members else np.zeros(1, np.int64)
    labels["init"] = np.unique(np.concatenate([initial, labels.get("init", np.zeros(0, np.int64))]))
    init, notes = initial_state(labels)
    state_rew, branch_rew = _rewards(arc, n, branches)
    chain = from_triples(n, rows, cols, exact if exact is not None else floats, init=init, labels=labels,
                         rewards=state_rew, tol=tol, source=src)
    chain.notes.extend(notes)
    for name, v in branch_rew.items():
        chain.branch_rewards[reward_name(name)] = _branch_values(chain, rows, cols, v, name)
    return chain


def _annotations(arc: _Archive, group: str) -> dict[str, dict]:
    found = (arc.index.get("annotations") or {}).get(group) or {}
    if not isinstance(found, dict):
        raise ChainError(f"index.json: annotations/{group} is not an object", source=arc.src)
    return found


def _aps(arc: _Archive, n: int) -> dict[str, np.ndarray]:
    labels: dict[str, np.ndarray] = {}
    for key, ap in _annotations(arc, "aps").items():
        if "states" in ap.get("applies-to", ["states"]):
            name = ap.get("alias") or key
            labels[name] = arc.bits(f"annotations/aps/{key}/states/values.bin", n)
    return labels


def _rewards(arc: _Archive, n: int, branches: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Per-state rewards (state plus choice: one choice a state) and per-branch rewards, by name."""
    state: dict[str, Any] = {}
    branch: dict[str, np.ndarray] = {}
    for key, rew in _annotations(arc, "rewards").items():
        name = rew.get("alias") or (UNNAMED_REWARD if key == "default" else key)
        kind = rew.get("type", VALUE_TYPES["double"])
        applies = rew.get("applies-to", [])
        floats, exact = np.zeros(n), [Fraction(0)] * n
        for target in ("states", "choices"):
            if target in applies:
                f, x = arc.values(f"annotations/rewards/{key}/{target}/values.bin", kind, n)
                floats += f
                exact = [a + b for a, b in zip(exact, x, strict=True)] if x is not None and exact else None
        if "states" in applies or "choices" in applies:
            state[name] = exact if exact is not None else floats
        if "branches" in applies:
            branch[name] = arc.values(f"annotations/rewards/{key}/branches/values.bin", kind, branches)[0]
    return state, branch


# ----------------------------------------------------------------------------- writing


def _encode(num: np.ndarray, den: np.ndarray | int, value_type: str) -> bytes:
    """Values ``num / den`` as doubles, or as (int64 numerator, uint64 denominator) pairs in lowest terms."""
    num = np.asarray(num, np.int64)
    den = np.broadcast_to(np.asarray(den, np.int64), num.shape)
    if value_type == "double":
        return (num / den).astype("<f8").tobytes()
    g = np.gcd(num, den)
    g[g == 0] = 1
    pair = np.empty((num.size, 2), "<i8")
    pair[:, 0], pair[:, 1] = num // g, den // g
    return pair.tobytes()


def _bits(states: np.ndarray, n: int) -> bytes:
    mask = np.zeros(-(-n // 64) * 64, np.uint8)
    mask[np.asarray(states, np.int64)] = 1
    return np.packbits(mask, bitorder="little").tobytes()


def _reward_arrays(chain: Chain, edges: Any, value_type: str) -> tuple[dict, dict[str, bytes]]:
    """The rewards' index entries and files: a state reward per state, a branch reward as its choice's expectation."""
    entries: dict[str, dict] = {}
    files: dict[str, bytes] = {}
    for name in _reward_names(chain):
        key = _identifier(name)
        if name in chain.state_rewards or name == "turns":
            values = np.asarray(_turn_rewards(chain) if name == "turns" else chain.state_rewards[name])
            whole = values.dtype.kind in "biu" or bool(np.all(values == np.rint(values)))
            kind = value_type if whole else "double"
            data = _encode(np.rint(values).astype(np.int64), 1, kind) if whole else values.astype("<f8").tobytes()
        else:
            kind = value_type
            per_state = np.bincount(edges.src, weights=edges.reward_num[name], minlength=chain.n).astype(np.int64)
            data = _encode(per_state, edges.denom, kind)
        entries[key] = {"alias": name, "applies-to": ["states"], "type": VALUE_TYPES[kind]}
        files[f"annotations/rewards/{key}/states/values.bin"] = data
    return entries, files


def write_umb(chain: Chain, path: str | Path, *, value_type: str = "double") -> Path:
    """Write the chain as a UMB file (a gzip-compressed tar), which Storm 2.0 and PRISM 4.10 read.

    Parameters
    ----------
    chain : Chain
    path : str or Path
    value_type : str
        ``"double"`` (the default, what Storm writes) or ``"rational"``: each probability and reward an exact
        fraction (an ``int64`` numerator and a ``uint64`` denominator).

    Returns
    -------
    Path
        Labels as in :func:`~markov_oca.io.explicit.write_explicit` (``init`` as the initial state), one
        reward annotation per reward of the chain (``turns`` first), as in
        :func:`~markov_oca.io.drn.write_drn`.

    Examples
    --------
    >>> import tempfile, pathlib, tarfile
    >>> from markov_oca import build
    >>> p = write_umb(build("examples/snakes_and_ladders.toml", players=1), pathlib.Path(tempfile.mkdtemp()) / "sl.umb")
    >>> tarfile.open(p).getnames()[:4]
    ['index.json', 'state-is-initial.bin', 'choice-to-branches.bin', 'branch-to-target.bin']
    """
    if value_type not in VALUE_TYPES:
        raise ChainError(f"unknown UMB value type {value_type!r} (double or rational)")
    path = Path(path)
    check_rows(chain)
    n = chain.n
    edges = _merged_edges(chain)
    offsets = np.searchsorted(edges.src, np.arange(n + 1)).astype("<u8")
    order, per_state = _state_labels(chain)
    aps: dict[str, dict] = {}
    files: dict[str, bytes] = {
        "state-is-initial.bin": _bits(np.array([chain.init]), n),
        "choice-to-branches.bin": offsets.tobytes(),
        "branch-to-target.bin": edges.dst.astype("<u8").tobytes(),
        "branch-to-probability.bin": _encode(edges.num, edges.denom, value_type),
    }
    for label in order[1:]:
        states = np.array(sorted(s for s, labs in per_state.items() if label in labs), np.int64)
        key = _identifier(label)
        aps[key] = {"alias": label, "applies-to": ["states"], "type": {"type": "bool", "size": 1}}
        files[f"annotations/aps/{key}/states/values.bin"] = _bits(states, n)
    rewards, reward_files = _reward_arrays(chain, edges, value_type)
    files.update(reward_files)
    index = {"format-version": 1, "format-revision": 0,
             "file-data": {"tool": "markov_oca", "creation-date": int(time.time())},
             "transition-system": {"time": "discrete", "#players": 0, "#states": n, "#initial-states": 1,
                                   "#choices": n, "#choice-actions": 0, "#branches": int(edges.dst.size),
                                   "#branch-actions": 0, "#observations": 0,
                                   "branch-probability-type": VALUE_TYPES[value_type]},
             "annotations": {"aps": aps, "rewards": rewards}}
    with atomic_files([path]) as (tmp,), tarfile.open(tmp, "w:gz") as tar:
        for name, data in {"index.json": json.dumps(index, indent=1).encode(), **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return path
