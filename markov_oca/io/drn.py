"""Storm's DRN format, read and written.

DRN is Storm's explicit format (``@type``, ``@value_type``, ``@parameters``, ``@reward_models``,
``@nr_states``, ``@nr_choices``, ``@model``, then ``state``/``action`` lines with their targets, and
``//`` comments anywhere). Only DTMCs (one action a state) without parameters are read. A reward
model's state reward and action reward add up to what one step from the state earns, which is how
Storm accumulates them; Storm writes an unnamed reward model as an empty name, read as
:data:`UNNAMED_REWARD`. Probabilities written as integers or fractions (``1/6``) are read exactly,
decimals as floats, or exactly too with ``exact=True``. The file is read as one buffer: a numba
kernel walks its lines once (:func:`_scan_model`) into arrays sized from the bytes beforehand
(:func:`_capacity`, bounded by the file's size, never by what its header declares), the numbers
are converted at once (:mod:`.lex`), and rows written in order become the matrix as they stand. A
large file is scanned and converted in pieces on several threads, each piece starting at a state line.
"""

from __future__ import annotations

import re
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

import numba
import numpy as np

from ..analysis.build import ROW_TOL, AnyChain, ChainError, from_triples
from ..analysis.chain import Chain
from ..core.atomic import atomic_files
from ..core.files import line_of, read_text_bytes
from ..core.interrupt import THREADS, in_threads
from .decimals import decimal_chain, precision_of, read_back
from .edges import _identifier, _merged_edges, _turn_rewards, check_rows
from .explicit import _state_labels
from .lex import _digits, _is_space, _skip_to_line_end, numbers
from .properties import _reward_names
from .tokens import initial_state


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

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from markov_oca import build
    >>> p = write_drn(build("examples/snakes_and_ladders.toml", players=1), pathlib.Path(tempfile.mkdtemp()) / "sl.drn")
    >>> p.read_text().splitlines()[2:4]
    ['@type: DTMC', '@parameters']
    """
    path = Path(path)
    check_rows(chain)
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


# ----------------------------------------------------------------------------- reading

#: The name given to a reward model Storm writes without one (an empty name under ``@reward_models``).
UNNAMED_REWARD = "default"
_HEADER_WITH_VALUE = ("@parameters", "@placeholders", "@reward_models", "@nr_states", "@nr_choices")
_STATE_KW = np.frombuffer(b"state", np.uint8)
_ACTION_KW = np.frombuffer(b"action", np.uint8)
#: Kernel errors, by code.
_ERRORS = {1: "a transition before any state", 2: "not a DRN line", 3: "a second action: an MDP, not a DTMC",
           4: "rewards for {extra} reward model(s), the header names {nrew}", 5: "a transition is 'target : value'",
           6: "a state line is 'state <number> [rewards] labels'", 7: "an action before any state",
           8: "a reward list is '[value, value, ...]'", 9: "state {extra} has no action (is the file cut short?)",
           10: "state {extra} has no transitions (is the file cut short?)"}


@numba.njit(cache=True, inline="always")
def _keyword(buf, i, kw):
    n = buf.size
    if i + kw.size > n:
        return False
    for q in range(kw.size):
        if buf[i + q] != kw[q]:
            return False
    j = i + kw.size
    return j == n or _is_space(buf[j]) or buf[j] == 10


@numba.njit(cache=True)
def _bracket(buf, i, state, nr, rw_state, rw_model, rw_start, rw_len):
    """The reward list at ``buf[i] == '['``: (next index, values read, rewards so far, ok)."""
    n = buf.size
    k = 0
    i += 1
    while True:
        while i < n and _is_space(buf[i]):
            i += 1
        if i < n and buf[i] == 93 and k == 0:
            return i + 1, 0, nr, True
        s = i
        while i < n and not _is_space(buf[i]) and buf[i] != 44 and buf[i] != 93 and buf[i] != 10:
            i += 1
        if i == s:
            return i, k, nr, False
        rw_state[nr] = state
        rw_model[nr] = k
        rw_start[nr] = s
        rw_len[nr] = i - s
        nr += 1
        k += 1
        while i < n and _is_space(buf[i]):
            i += 1
        if i < n and buf[i] == 44:
            i += 1
        elif i < n and buf[i] == 93:
            return i + 1, k, nr, True
        else:
            return i, k, nr, False


@numba.njit(cache=True, inline="always")
def _rewards_at(buf, i, state, nr, nrew, rw_state, rw_model, rw_start, rw_len):
    """An optional reward list at ``i``: (next index, rewards so far, reward models, error, values read)."""
    if i >= buf.size or buf[i] != 91:
        return i, nr, nrew, 0, 0
    i, k, nr, ok = _bracket(buf, i, state, nr, rw_state, rw_model, rw_start, rw_len)
    if not ok:
        return i, nr, nrew, 8, k
    if nrew < 0:
        nrew = k
    if k != nrew and k != 0:
        return i, nr, nrew, 4, k
    return i, nr, nrew, 0, k


@numba.njit(cache=True, inline="always")
def _transition(buf, i, cur, nt, tr_src, tr_dst, tr_start, tr_len):
    """A ``target : value`` line at ``i``: (index after the line, or -1 when malformed)."""
    n = buf.size
    d, k, big, i = _digits(buf, i, n)
    i = _skip_spaces(buf, i)
    if big or i >= n or buf[i] != 58:
        return -1
    s = _skip_spaces(buf, i + 1)
    i = _token_end(buf, s)
    if i == s:
        return -1
    tr_src[nt] = cur
    tr_dst[nt] = d
    tr_start[nt] = s
    tr_len[nt] = i - s
    return _skip_to_line_end(buf, i)


@numba.njit(cache=True, inline="always")
def _label_span(buf, i):
    """The labels after a state's number and rewards: (start, end, index of the line's end)."""
    n = buf.size
    i = _skip_spaces(buf, i)
    s = e = i
    while i < n and buf[i] != 10 and not (buf[i] == 47 and i + 1 < n and buf[i + 1] == 47):
        if not _is_space(buf[i]):
            e = i + 1
        i += 1
    while i < n and buf[i] != 10:
        i += 1
    return s, e, i


@numba.njit(cache=True, inline="always")
def _skip_spaces(buf, i):
    while i < buf.size and _is_space(buf[i]):
        i += 1
    return i


@numba.njit(cache=True, inline="always")
def _token_end(buf, i):
    while i < buf.size and not _is_space(buf[i]) and buf[i] != 10:
        i += 1
    return i


@numba.njit(cache=True, inline="always")
def _until_bracket(buf, i):
    """Skip an action's name: to its ``[``, a ``//`` comment or the line's end."""
    n = buf.size
    while i < n and buf[i] != 10 and buf[i] != 91 and not (buf[i] == 47 and i + 1 < n and buf[i + 1] == 47):
        i += 1
    return i


@numba.njit(cache=True, nogil=True)
def _scan_model(buf, pos, nrew, st_id, tr_src, tr_dst, tr_start, tr_len, rw_state, rw_model, rw_start,
                rw_len, lb_state, lb_start, lb_end):
    """The ``@model`` section, line by line in one pass, into arrays large enough (:func:`_capacity`).

    Returns (error, offset, extra, reward models, states, transitions, rewards, label spans, actions).
    """
    n = buf.size
    ns = nt = nr = nl = na = acts = trans = cur_line = 0
    cur = -1
    i = pos
    while True:
        line = i
        while i < n and _is_space(buf[i]):
            i += 1
        at_state = i < n and _keyword(buf, i, _STATE_KW)
        if (i >= n or at_state) and cur >= 0 and (acts == 0 or trans == 0):  # the previous state is incomplete
            return 9 if acts == 0 else 10, cur_line, cur, nrew, ns, nt, nr, nl, na
        if i >= n:
            break
        c = buf[i]
        err = extra = 0
        if c == 10:
            i += 1
        elif c == 47 and i + 1 < n and buf[i + 1] == 47:
            while i < n and buf[i] != 10:
                i += 1
        elif 48 <= c <= 57:
            if cur < 0:
                return 1, line, 0, nrew, ns, nt, nr, nl, na
            i = _transition(buf, i, cur, nt, tr_src, tr_dst, tr_start, tr_len)
            err = 5 if i < 0 else 0
            nt += 1
            trans += 1
            acts = max(acts, 1)
        elif at_state:
            d, k, big, i = _digits(buf, _skip_spaces(buf, i + 5), n)
            if k == 0 or big:
                return 6, line, 0, nrew, ns, nt, nr, nl, na
            cur, cur_line, acts, trans = d, line, 0, 0
            st_id[ns] = d
            ns += 1
            i = _skip_spaces(buf, i)
            if i < n and buf[i] == 33:  # a CTMC's exit rate: skipped (the header is a DTMC's)
                i = _skip_spaces(buf, _token_end(buf, i))
            i, nr, nrew, err, extra = _rewards_at(buf, i, cur, nr, nrew, rw_state, rw_model, rw_start, rw_len)
            s, e, i = _label_span(buf, i)
            if e > s and not err:
                lb_state[nl], lb_start[nl], lb_end[nl] = cur, s, e
                nl += 1
        elif _keyword(buf, i, _ACTION_KW):
            if cur < 0:
                return 7, line, 0, nrew, ns, nt, nr, nl, na
            acts += 1
            na += 1
            if acts > 1:
                return 3, line, 0, nrew, ns, nt, nr, nl, na
            i, nr, nrew, err, extra = _rewards_at(buf, _until_bracket(buf, i), cur, nr, nrew, rw_state,
                                                  rw_model, rw_start, rw_len)
            if not err:
                i = _skip_to_line_end(buf, i)
                err = 8 if i < 0 else 0
        else:
            err = 2
        if err:
            return err, line, extra, nrew, ns, nt, nr, nl, na
    return 0, 0, 0, nrew, ns, nt, nr, nl, na


class _Model:
    """The arrays of a DRN ``@model`` section (see :func:`_scan`)."""

    def __init__(self, counts: tuple[int, ...]):
        nrew, ns, nt, nr, nl, na = counts
        self.nrew, self.actions = nrew, na
        self.state = np.empty(ns, np.int64)
        self.src, self.dst = np.empty(nt, np.int64), np.empty(nt, np.int64)
        self.tstart, self.tlen = np.empty(nt, np.int64), np.empty(nt, np.int64)
        self.rstate, self.rmodel = np.empty(nr, np.int64), np.empty(nr, np.int64)
        self.rstart, self.rlen = np.empty(nr, np.int64), np.empty(nr, np.int64)
        self.lstate, self.lstart, self.lend = np.empty(nl, np.int64), np.empty(nl, np.int64), np.empty(nl, np.int64)

    def trim(self, counts: tuple[int, ...]) -> None:
        """Keep the first entries of each array, as many as the scan stored."""
        nrew, ns, nt, nr, nl, na = counts
        self.nrew, self.actions = nrew, na
        self.state = self.state[:ns]
        self.src, self.dst, self.tstart, self.tlen = self.src[:nt], self.dst[:nt], self.tstart[:nt], self.tlen[:nt]
        self.rstate, self.rmodel, self.rstart, self.rlen = (self.rstate[:nr], self.rmodel[:nr], self.rstart[:nr],
                                                            self.rlen[:nr])
        self.lstate, self.lstart, self.lend = self.lstate[:nl], self.lstart[:nl], self.lend[:nl]

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.state, self.src, self.dst, self.tstart, self.tlen, self.rstate, self.rmodel, self.rstart,
                self.rlen, self.lstate, self.lstart, self.lend)


@numba.njit(cache=True, nogil=True)
def _capacity(buf, pos):
    """Upper bounds on what :func:`_scan_model` can store, from the bytes alone: (state lines, transition
    lines, reward values) = lines starting with ``s``, lines starting with a digit, ``[`` and ``,`` bytes."""
    n = buf.size
    states = trans = values = 0
    start = True
    for i in range(pos, n):
        c = buf[i]
        if c == 10:
            start = True
            continue
        if c == 91 or c == 44:
            values += 1
        if start and not _is_space(c):
            start = False
            if c == 115:
                states += 1
            elif 48 <= c <= 57:
                trans += 1
    return states, trans, values


#: Model sections from this many bytes are scanned in pieces on :data:`~markov_oca.core.interrupt.THREADS` threads.
PARALLEL_BYTES = 1 << 23
#: What each of :meth:`_Model.arrays` holds one entry of: 0 a state, 1 a transition, 2 a reward value, 3 a
#: state's labels (the order of the counts :func:`_scan_model` returns).
_KINDS = (0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3)


def _pieces(data: bytes, pos: int, parts: int) -> list[tuple[int, int]]:
    """The model section ``data[pos:]`` in up to ``parts`` consecutive (start, end) pieces, each after the first
    starting at a line that begins with ``state`` and a blank: a piece is a model section of its own."""
    n = len(data)
    cuts = [pos]
    for k in range(1, parts):
        at = data.find(b"\nstate", max(cuts[-1], pos + k * (n - pos) // parts))
        while at >= 0 and data[at + 6:at + 7] not in (b" ", b"\t"):
            at = data.find(b"\nstate", at + 1)
        if at < 0:
            break
        cuts.append(at + 1)
    cuts.append(n)
    return [(a, b) for a, b in pairwise(cuts) if b > a]


def _scan(data: bytes, buf: np.ndarray, pos: int, nrew: int, n_declared: int, src: str,
          threads: int | None = None) -> _Model:
    """One pass into arrays sized by :func:`_capacity` (bounded by the file's size, never by ``@nr_states``),
    then the count checked against ``@nr_states``.

    A large section is scanned in pieces (:func:`_pieces`) on ``threads`` threads (by default
    :data:`~markov_oca.core.interrupt.THREADS`), each piece into its own part of the arrays (its capacity
    counted on its own), the parts then closed up. Should a piece find an error, or two pieces disagree on
    the number of reward models, the section is scanned again in one piece, so that what is reported is
    what a single pass finds first."""
    parts = _pieces(data, pos, threads or THREADS) if len(data) - pos >= PARALLEL_BYTES else [(pos, len(data))]
    caps = in_threads(lambda p: _capacity(buf[:p[1]], p[0]), parts)
    cap = np.array([(c[0], c[1], c[2], c[0]) for c in caps], np.int64).reshape(-1, 4)
    start = np.vstack([np.zeros((1, 4), np.int64), np.cumsum(cap, axis=0)])
    model = _Model((nrew, *start[-1].tolist(), 0))
    arrays = model.arrays()

    def piece(k: int) -> tuple:
        views = [arr[start[k, kind]:start[k + 1, kind]] for arr, kind in zip(arrays, _KINDS, strict=True)]
        return _scan_model(buf[:parts[k][1]], parts[k][0], nrew, *views)

    got = in_threads(piece, range(len(parts)))
    if len(parts) > 1 and (any(g[0] for g in got) or len({g[3] for g in got} - {-1}) > 1):
        return _scan(data, buf, pos, nrew, n_declared, src, threads=1)
    _kernel_error(data, got[0], src)
    used = np.array([g[4:8] for g in got], np.int64)  # states, transitions, reward values, labelled states
    for arr, kind in zip(arrays, _KINDS, strict=True):  # close up the parts (nothing moves when each is full)
        dest = 0
        for k in range(len(parts)):
            off, m = int(start[k, kind]), int(used[k, kind])
            if off != dest:
                arr[dest:dest + m] = arr[off:off + m]
            dest += m
    ns = int(used[:, 0].sum())
    if ns != n_declared:
        raise ChainError(f"@nr_states declares {n_declared:,} states but the model lists {ns:,}"
                         + (" (is the file cut short?)" if ns < n_declared else ""), source=src)
    model.trim((max(g[3] for g in got), *used.sum(axis=0).tolist(), sum(g[8] for g in got)))
    return model


def _kernel_error(data: bytes, got: tuple, src: str) -> None:
    err, at, extra, nrew = got[:4]
    if err:
        text = data[at:data.find(b"\n", at) if data.find(b"\n", at) >= 0 else len(data)]
        text = text.decode(errors="replace").strip()
        why = _ERRORS[err].format(extra=extra, nrew=nrew)
        raise ChainError(f"line {line_of(data, at)}: {text[:60]!r}: {why}", source=src)


def _header(data: bytes, src: str) -> tuple[dict[str, str], int]:
    """The header's entries (``type``, ``value_type``, ``reward_models`` as written...) and where the model starts."""
    at = data.find(b"@model")
    while at > 0 and data[at - 1:at] != b"\n":
        at = data.find(b"@model", at + 1)
    if at < 0:
        raise ChainError("no @model line: not a DRN file, or cut short", source=src)
    lines = data[:at].decode().split("\n")
    header: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r")
        i += 1
        if line.startswith("@type:") or line.startswith("@value_type:"):
            key, _, value = line[1:].partition(":")
            header[key] = value.strip()
        elif line.strip() in _HEADER_WITH_VALUE:
            value = lines[i].rstrip("\r") if i < len(lines) and not lines[i].startswith("@") else ""
            header[line.strip()[1:]] = value
            i += value != "" or (i < len(lines) and not lines[i].startswith("@"))
    end = data.find(b"\n", at)
    return header, len(data) if end < 0 else end + 1


def _model_names(written: str) -> list[str]:
    """Reward model names as Storm writes them: each followed by a space, so ``" "`` is one unnamed model."""
    names = written[:-1].split(" ") if written.endswith(" ") else written.split()
    out: list[str] = []
    for name in names:
        name = name or UNNAMED_REWARD
        while name in out:
            name += "'"
        out.append(name)
    return out


def read_drn(path: str | Path, *, tol: float = ROW_TOL, exact: bool = False) -> AnyChain:
    """A chain from a DRN file (Storm's explicit format; ours from ``export --format drn``).

    Parameters
    ----------
    path : str or Path
    tol : float
        How far from 1 a row of decimal probabilities may sum.
    exact : bool
        Read decimals exactly too (``0.7`` is ``7/10``, whatever ``@value_type`` says); then every row must
        sum to exactly 1, or read back as a rounding (:mod:`.decimals`). Otherwise a file of integers and
        fractions is exact, one with decimals is held exactly where it can be (``chain.decimal``, answered
        in floating point by default), else floats.

    Returns
    -------
    AnyChain
        Labels as in the file; ``init`` the first state labelled ``init`` (all of them stay in
        ``labels["init"]``, and a note says so when there are several); one reward per reward model
        (state plus action reward: what a step from the state earns), an unnamed one called
        :data:`UNNAMED_REWARD`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "walk.drn"
    >>> _ = p.write_text("@type: DTMC\\n@value_type: double\\n@reward_models\\n \\n@nr_states\\n2\\n@model\\n"
    ...                  "state 0 [1] init\\n\\taction 0 [0]\\n\\t\\t0 : 0.3\\n\\t\\t1 : 0.7\\n"
    ...                  "state 1 [0] goal\\n\\taction 0 [0]\\n\\t\\t1 : 1\\n")
    >>> c = read_drn(p, exact=True)
    >>> c.exact, c.outcomes, c.state_rewards["default"].tolist()
    (True, {'goal': 1}, [1, 0])
    """
    src = str(path)
    data = read_text_bytes(path, ChainError)
    header, pos = _header(data, src)
    kind = header.get("type", "")
    if kind.upper() != "DTMC":
        raise ChainError(f"a DRN model of type {kind or 'unknown'}: only DTMCs are analysed", source=src,
                         key="@type")
    if header.get("parameters", "").strip():
        raise ChainError(f"a parametric model (parameters {header['parameters'].strip()}): give values first",
                         source=src, key="@parameters")
    try:
        n = int(header["nr_states"])
    except (KeyError, ValueError):
        raise ChainError("no @nr_states, or not a number", source=src) from None
    names = _model_names(header.get("reward_models", ""))
    blank = not header.get("reward_models", "").strip()
    buf = np.frombuffer(data, np.uint8)
    model = _scan(data, buf, pos, -1 if blank else len(names), n, src)
    if blank:
        names = _model_names(" " * model.nrew)
    _check_states(model, n, header, src)
    probs = numbers(data, buf, model.tstart, model.tlen, src, True)  # exact values too: held where they can be
    labels = _labels(data, model)
    init, notes = initial_state(labels)
    rewards = _rewards(data, buf, model, names, n, src, exact or not probs.rational,
                       0 if probs.rational or not (names and model.rstart.size) else precision_of(probs))
    chain = decimal_chain(probs, n, model.src, model.dst, init=init, labels=labels, rewards=rewards, source=src,
                          exact=exact)
    if chain is None:
        if not exact and not probs.rational:
            rewards = _rewards(data, buf, model, names, n, src, False)
        vals = probs.fractions() if exact or probs.rational else probs.value
        chain = from_triples(n, model.src, model.dst, vals, init=init, labels=labels, rewards=rewards, tol=tol,
                             source=src)
    chain.notes.extend(notes)
    return chain


def _check_states(model: _Model, n: int, header: dict[str, str], src: str) -> None:
    ids = model.state
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        bad = int(ids[(ids < 0) | (ids >= n)][0])
        raise ChainError(f"state {bad} is beyond @nr_states {n:,}", source=src)
    seen = np.bincount(ids, minlength=n)
    if (seen > 1).any():
        raise ChainError(f"state {int(np.flatnonzero(seen > 1)[0])} is listed twice", source=src)
    if model.dst.size and model.dst.max() >= n:
        raise ChainError(f"a transition to state {int(model.dst.max())}, beyond @nr_states {n:,}", source=src)
    choices = header.get("nr_choices", "").strip()
    if choices.isdigit() and int(choices) != model.actions and model.actions:
        raise ChainError(f"@nr_choices declares {int(choices):,} choices but the model lists {model.actions:,}",
                         source=src)


#: A label on a state line: quoted (Storm quotes a label with spaces or operators, such as the
#: ``"(s = 5)"`` it builds for an expression in a property) or a word.
_LABEL = re.compile(r'"([^"]*)"|([^\s"]+)')


def _labels(data: bytes, model: _Model) -> dict[str, np.ndarray]:
    per: dict[str, list[int]] = {}
    for s, a, b in zip(model.lstate.tolist(), model.lstart.tolist(), model.lend.tolist(), strict=True):
        for quoted, word in _LABEL.findall(data[a:b].decode()):
            per.setdefault(quoted or word, []).append(s)
    return {k: np.unique(np.array(v, np.int64)) for k, v in per.items()}


def _rewards(data: bytes, buf: np.ndarray, model: _Model, names: list[str], n: int, src: str,
             exact: bool, precision: int = 0) -> dict[str, Any]:
    """Each model's reward a state: its state reward plus its action reward (read exactly: a decimal rounded at
    the file's ``precision`` read back as a fraction, see :func:`.decimals.read_back`)."""
    if not names or model.rstart.size == 0:
        return {name: np.zeros(n, np.int64) for name in names}
    got = numbers(data, buf, model.rstart, model.rlen, src, exact)
    if not (exact or got.rational):
        flat = np.bincount(model.rmodel * n + model.rstate, weights=got.value, minlength=n * len(names))
        return {name: flat[k * n:(k + 1) * n] for k, name in enumerate(names)}
    fractions = got.fractions()
    if not got.rational:
        fractions = read_back(got, fractions, max(precision, precision_of(got)))
    if all(f.denominator == 1 for f in fractions):
        whole = np.array([f.numerator for f in fractions], np.int64)
        flat = np.zeros(n * len(names), np.int64)
        np.add.at(flat, model.rmodel * n + model.rstate, whole)
        return {name: flat[k * n:(k + 1) * n] for k, name in enumerate(names)}
    out = {name: [Fraction(0)] * n for name in names}
    for k, s, f in zip(model.rmodel.tolist(), model.rstate.tolist(), fractions, strict=True):
        out[names[k]][s] += f
    return out
