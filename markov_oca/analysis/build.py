"""A :class:`~markov_oca.chain.Chain` from anyone's transition matrix or weighted digraph.

A :class:`Chain` keeps its probabilities as integer numerators over one
denominator, and every analysis of ``chain.py``, ``solve.py``, ``hitting.py``
and ``exact.py`` reads them that way. A matrix of exact rationals
(:class:`fractions.Fraction` or integer entries) fits exactly: the numerators
over the least common multiple of the denominators, as long as that stays at
most ``2**53`` (so that every float the kernels compute from it, and the
exporters' sums, are exact too). A float matrix is put over the denominator
:data:`FLOAT_DENOM` ``= 2**53``: each entry rounded to a multiple of
``2**-53`` (below a double's own spacing near 1), a positive entry never
rounded to zero (so the structure, which states reach which, is the user's),
and each row's rounding error given to its largest entry, so that every row
sums to exactly one. Such a chain is analysed in floating point only
(``exact`` is False): its fractions would be those of the rounding, not the
user's.

Absorbing states (a self-loop of probability one) become the chain's outcomes,
named by a label that holds that state alone, else ``"state <i>"``; a state
labelled ``deadlock`` (as our exports label the states of a game's deadlock)
stays a closed class, not an outcome.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp

from ..core.errors import RulesError, TooLargeError
from ..core.interrupt import THREADS, in_threads, spans
from ..core.memory import check_fits
from ..linalg.rows import packed_rows
from .chain import Chain

#: The denominator of a float matrix's probabilities (see the module docstring).
FLOAT_DENOM = 2 ** 53
#: A float entry held on the 2**-53 grid further than this from itself (relative) is named in a note.
GRID_NOTE = 1e-11
#: Largest common denominator kept exact: beyond it a float's 53 bits no longer hold every numerator.
EXACT_DENOM_LIMIT = 2 ** 53
#: Default tolerance on a float row's sum.
ROW_TOL = 1e-9


class ChainError(RulesError):
    """A matrix, graph or chain file that is not a Markov chain.

    The message is one line naming the source, the state and the value at fault (the command
    line exits with code 2).

    Parameters
    ----------
    message, source, key
        As for :class:`RulesError`.

    Examples
    --------
    >>> from_matrix([[1, 0], [0.5, 0.4]], init=1)
    Traceback (most recent call last):
    ...
    markov_oca.analysis.build.ChainError: matrix: state 1: probabilities sum to 0.9, not 1 ...
    """


@dataclass
class AnyChain(Chain):
    """A :class:`Chain` built from a user's matrix, graph or file: the chain plus what came with it.

    ``labels`` maps each label to the sorted states that carry it; ``exact`` says whether
    ``pnum / denom`` are the given probabilities exactly (rational entries); ``decimal`` that they
    are a file's decimals held exactly (over a power of ten: ``0.98`` is ``98/100``), which the
    analyses answer in floating point unless exact mode is asked for; ``names`` are
    the states' own names (a graph's nodes), or None; ``exact_rewards`` keeps rewards given as
    fractions; ``source`` names where the chain came from.
    """

    labels: dict[str, np.ndarray] = field(default_factory=dict)
    exact: bool = False
    decimal: bool = False
    names: list | None = None
    exact_rewards: dict[str, list[Fraction]] = field(default_factory=dict)
    source: str = "matrix"
    notes: list[str] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        # A chain held packed builds its padded table the first time an analysis asks for it (refused up front,
        # with its size, when that does not fit).
        packed = self.__dict__.get("_packed")
        if name in ("next", "pnum") and packed is not None:
            indptr, indices, num = packed
            try:
                table = _branch_form(indptr, indices, num, indptr.size - 1, self.source)
            except TooLargeError as exc:
                raise TooLargeError(f"{exc}; the floating-point analysis (without --exact) is answered from the "
                                    "rows as held") from None
            self.__dict__["next"], self.__dict__["pnum"] = table
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _hold_packed(self, indptr: np.ndarray, indices: np.ndarray, num: np.ndarray) -> None:
        """Keep the branches as CSR alone (see :attr:`~markov_oca.analysis.chain.Chain.packed`)."""
        self.__dict__["_packed"] = (indptr, indices, num)
        self.__dict__["rows"] = packed_rows(indptr, indices, num)
        self.__dict__["n_transitions"] = int(indices.size)
        del self.__dict__["next"], self.__dict__["pnum"]

    def describe(self, state: int) -> dict:
        """The state's number, its name when it has one, and its labels."""
        d: dict[str, Any] = {"state": int(state)}
        if self.names is not None:
            d["name"] = self.names[state]
        labs = [k for k, v in self.labels.items() if _contains(v, state)]
        if labs:
            d["labels"] = labs
        for name, idx in self.outcomes.items():
            if idx == state:
                d["outcome"] = name
        return d


def _contains(sorted_states: np.ndarray, s: int) -> bool:
    i = np.searchsorted(sorted_states, s)
    return bool(i < sorted_states.size and sorted_states[i] == s)


def _is_rational(x: Any) -> bool:
    return isinstance(x, (Fraction, int, np.integer)) and not isinstance(x, bool)


def _as_csr(P: Any, source: str) -> tuple[sp.csr_array | None, np.ndarray | None]:
    """(float CSR, None) or (None, dense object array of exact entries)."""
    if sp.issparse(P):
        m = sp.csr_array(P)
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
            raise ChainError(f"the matrix has shape {m.shape}: a chain needs a square matrix with rows", source=source)
        if m.dtype.kind in "iub":
            return None, m.toarray().astype(object)
        if m.dtype.kind != "f":
            raise ChainError(f"sparse entries of type {m.dtype} (use float, or a dense array of Fractions)",
                             source=source)
        return m.astype(np.float64), None
    arr = np.asarray(P, dtype=object if _has_fraction(P) else None)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ChainError(f"the matrix has shape {arr.shape}: a chain needs a square matrix with rows", source=source)
    if arr.dtype == object:
        flat = arr.ravel()
        if all(_is_rational(x) for x in flat):
            return None, arr
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            bad = next(i for i, x in enumerate(flat) if not isinstance(x, (int, float, Fraction, np.number)))
            raise ChainError(f"entry ({bad // arr.shape[1]}, {bad % arr.shape[1]}) is {flat[bad]!r}, not a number",
                             source=source) from None
    if arr.dtype.kind in "iub":
        return None, arr.astype(object)
    if arr.dtype.kind != "f":
        raise ChainError(f"entries of type {arr.dtype} are not probabilities", source=source)
    return sp.csr_array(arr.astype(np.float64)), None


def _has_fraction(P: Any) -> bool:
    if isinstance(P, np.ndarray):
        return P.dtype == object
    try:
        return any(isinstance(x, Fraction) for row in P for x in row)
    except TypeError:
        return False


def _check_float(m: sp.csr_array, source: str, tol: float) -> None:
    data = m.data
    bad = ~np.isfinite(data)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(m.indptr, i, side="right") - 1)
        raise ChainError(f"state {row}: entry to state {int(m.indices[i])} is {float(data[i])} (not a probability)",
                         source=source)
    neg = data < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        row = int(np.searchsorted(m.indptr, i, side="right") - 1)
        raise ChainError(f"state {row}: entry to state {int(m.indices[i])} is negative ({float(data[i])!r})",
                         source=source)
    sums = np.asarray(m.sum(axis=1)).ravel()
    off = np.abs(sums - 1.0) > tol
    if off.any():
        row = int(np.flatnonzero(off)[0])
        hint = " (give an absorbing state a self-loop of 1)" if sums[row] == 0 else ""
        raise ChainError(f"state {row}: probabilities sum to {float(sums[row])!r}, not 1 (tolerance {tol:g}){hint}; "
                         f"{int(off.sum())} such row(s)", source=source)


def _float_numerators(m: sp.csr_array) -> np.ndarray:
    """Numerators over FLOAT_DENOM of each stored entry, every row summing to FLOAT_DENOM exactly."""
    return _numerators(m.indptr.astype(np.int64), m.data, np.int64(FLOAT_DENOM))


@numba.njit(cache=True)
def _numerators(indptr, data, denom):
    num = np.empty(data.size, np.int64)
    for i in range(indptr.size - 1):
        total = 0
        big = indptr[i]
        for k in range(indptr[i], indptr[i + 1]):
            x = np.int64(np.rint(data[k] * denom))
            if x == 0 and data[k] > 0:
                x = 1  # a positive chance stays positive: the chain's structure is the user's
            num[k] = x
            total += x
            if x > num[big]:
                big = k
        num[big] -= total - denom  # the largest entry takes its row's rounding
    return num


def _exact_triples(n: int, rows: np.ndarray, cols: np.ndarray, vals: list[Fraction],
                   source: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """Check exact rows and put them over one denominator: (indptr, indices, numerators, denominator),
    duplicates summed; None when the common denominator exceeds :data:`EXACT_DENOM_LIMIT`."""
    sums = [Fraction(0)] * n
    for i, j, v in zip(rows.tolist(), cols.tolist(), vals, strict=True):
        if v < 0:
            raise ChainError(f"state {i}: entry to state {j} is negative ({v})", source=source)
        sums[i] += v
    for i, s in enumerate(sums):
        if s != 1:
            hint = " (give an absorbing state a self-loop of 1)" if s == 0 else ""
            raise ChainError(f"state {i}: probabilities sum to {s}, not 1 (exactly){hint}", source=source)
    denom = 1
    for d in {v.denominator for v in vals}:
        denom = denom * d // math.gcd(denom, d)
        if denom > EXACT_DENOM_LIMIT:
            return None
    num = np.array([v.numerator * (denom // v.denominator) for v in vals], np.int64)
    m = sp.csr_array((num, (rows, cols)), shape=(n, n))  # int64: duplicates summed exactly
    m.eliminate_zeros()
    m.sort_indices()
    return m.indptr, m.indices, m.data.astype(np.int64, copy=False), denom


def _dense_triples(dense: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[Fraction]]:
    rows, cols = np.nonzero(dense != 0)
    return rows, cols, [Fraction(x) for x in dense[rows, cols].tolist()]


#: A chain's rows are held packed (CSR) when padding them to the widest would take more than PACK_RATIO times the
#: bytes of the packed rows and more than PACK_BYTES: one state with a successor for every state makes the padded
#: table n**2 entries. The floating-point analysis reads packed rows and runs at the packed size; the exact route
#: (and a transition reward read after the chain is built) builds the padded table when it first needs it.
PACK_RATIO = 4
PACK_BYTES = 256 * 2**20


def _branch_form(indptr: np.ndarray, indices: np.ndarray, num: np.ndarray, n: int,
                 source: str = "matrix") -> tuple[np.ndarray, np.ndarray]:
    """Each state's next states and numerators, every row padded to the widest (refused up front, with its size,
    when that does not fit in memory: one state with very many successors pads every other row to as many)."""
    lengths = np.diff(indptr)
    width = max(1, int(lengths.max()) if lengths.size else 1)
    check_fits(f"{source}: {n:,} states whose widest row has {width:,} transitions ({int(lengths.sum()):,} in all), "
               f"held as rows padded to the widest", n * width * (4 + 8))
    nxt = np.empty((n, width), np.int32)
    pnum = np.empty((n, width), np.int64)
    indices, num = np.asarray(indices), np.asarray(num, np.int64)
    in_threads(lambda s: _fill_branches(indptr, indices, num, nxt, pnum, s[0], s[1]),
               spans(n, THREADS if n * width >= FILL_PARALLEL else 1))
    return nxt, pnum


#: Padded tables from this many entries are filled on :data:`~markov_oca.core.interrupt.THREADS` threads, a
#: range of rows each.
FILL_PARALLEL = 1 << 22


@numba.njit(cache=True, nogil=True)
def _fill_branches(indptr, indices, num, nxt, pnum, lo, hi):
    """Rows ``lo`` to ``hi`` of ``nxt``, ``pnum``: each row's branches, then -1 and 0 to the width (each entry
    written once)."""
    for s in range(lo, hi):
        w = indptr[s + 1] - indptr[s]
        for j in range(w):
            nxt[s, j] = indices[indptr[s] + j]
            pnum[s, j] = num[indptr[s] + j]
        for j in range(w, nxt.shape[1]):
            nxt[s, j] = -1
            pnum[s, j] = 0


def _label_sets(labels: Mapping[str, Any] | None, n: int, source: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for name, states in (labels or {}).items():
        a = np.asarray(states)
        if a.dtype == bool:
            if a.shape != (n,):
                raise ChainError(f"label {name!r}: a mask of shape {a.shape}, not ({n},)", source=source)
            a = np.flatnonzero(a)
        a = np.unique(a.astype(np.int64).ravel())
        if a.size and (a[0] < 0 or a[-1] >= n):
            raise ChainError(f"label {name!r}: state {int(a[0] if a[0] < 0 else a[-1])} is not in 0..{n - 1}",
                             source=source)
        out[str(name)] = a
    return out


def _outcome_names(absorbing: np.ndarray, labels: Mapping[str, np.ndarray], names: list | None) -> dict[str, int]:
    own = {int(v[0]): k for k, v in labels.items() if v.size == 1 and k not in ("init", "done", "deadlock")}
    out: dict[str, int] = {}
    for s in absorbing.tolist():
        name = own.get(s) or (str(names[s]) if names is not None else f"state {s}")
        while name in out:
            name += f" (state {s})"
        out[name] = s
    return out


#: The name under which a reward called ``steps`` is reported: ``steps`` is the expected number of steps
#: itself in every result (``expected["steps"]``, ``moments["steps"]``), which such a reward (Storm's
#: herman model has one) would otherwise overwrite.
STEPS_REWARD = "steps (reward)"


def reward_name(name: str) -> str:
    """The name a chain keeps for a reward given as ``name``: :data:`STEPS_REWARD` for ``steps``.

    >>> reward_name("steps"), reward_name("cost")
    ('steps (reward)', 'cost')
    """
    return STEPS_REWARD if name == "steps" else name


def _rewards(rewards: Mapping[str, Any] | None, n: int, source: str) -> tuple[dict, dict]:
    state_rewards: dict[str, np.ndarray] = {}
    exact: dict[str, list[Fraction]] = {}
    for name, values in (rewards or {}).items():
        name = reward_name(name)
        vals = list(values) if not isinstance(values, np.ndarray) else values
        if len(vals) != n:
            raise ChainError(f"reward {name!r} has {len(vals)} values for {n} states", source=source)
        if isinstance(vals, np.ndarray) and vals.dtype.kind in "iub":
            state_rewards[name] = vals.astype(np.int64)
            continue
        if all(_is_rational(x) for x in vals):
            exact[name] = [Fraction(x) for x in vals]
        arr = np.array([float(x) for x in vals], np.float64)
        if not np.isfinite(arr).all():
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ChainError(f"reward {name!r}: state {i} has {arr[i]} (not a number)", source=source)
        state_rewards[name] = arr
    return state_rewards, exact


def from_matrix(P: Any, *, init: int, labels: Mapping[str, Any] | None = None,
                rewards: Mapping[str, Any] | None = None, names: list | None = None,
                tol: float = ROW_TOL, source: str = "matrix") -> AnyChain:
    """A chain from a transition matrix: every :class:`~markov_oca.chain.Chain` analysis then works on it.

    Parameters
    ----------
    P : scipy sparse matrix or array, numpy array, or list of rows
        ``P[i, j]`` the chance of a step from ``i`` to ``j``. Floats, or exact
        rationals (:class:`fractions.Fraction` or int entries, in a numpy object array
        or lists), which the exact analyses then answer in fractions.
    init : int
        The initial state.
    labels : mapping, optional
        Label name -> the states that carry it (ids or a boolean mask). A label held
        by one absorbing state alone names that outcome.
    rewards : mapping, optional
        Reward name -> one value per state, earned at each step taken from that state
        (floats, ints or Fractions).
    names : list, optional
        A name for each state (kept for :meth:`AnyChain.describe`).
    tol : float
        How far from 1 a float row may sum (the rounding of the user's numbers);
        rational rows must sum to exactly 1.
    source : str
        What to call the matrix in error messages.

    Returns
    -------
    AnyChain
        A :class:`~markov_oca.chain.Chain` whose outcomes are the absorbing states.

    Raises
    ------
    ChainError
        A bad shape, a NaN or infinite entry, a negative entry, a row not summing to 1,
        an ``init`` outside the states.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> P = [[1, 0, 0], [F(1, 3), 0, F(2, 3)], [0, 0, 1]]
    >>> c = from_matrix(P, init=1, labels={"lost": [0], "won": [2]})
    >>> c.outcomes, c.exact, c.denom
    ({'lost': 0, 'won': 2}, True, 3)
    >>> c.outcome_probabilities()
    {'lost': 0.3333333333333333, 'won': 0.6666666666666666, 'deadlock': 0.0}
    """
    m, dense = _as_csr(P, source)
    n = (m if m is not None else dense).shape[0]
    if isinstance(init, bool) or not isinstance(init, (int, np.integer)) or not 0 <= int(init) < n:
        raise ChainError(f"init {init!r} is not a state (0..{n - 1})", source=source, key="init")
    if dense is not None:
        return from_triples(n, *_dense_triples(dense), init=int(init), labels=labels, rewards=rewards,
                            names=names, tol=tol, source=source)
    return _float_chain(m, int(init), labels, rewards, names, tol, source, [])


def _float_chain(m: sp.csr_array, init: int, labels, rewards, names, tol: float, source: str,
                 notes: list[str], branch_rewards=None) -> AnyChain:
    m.sum_duplicates()
    m.eliminate_zeros()
    m.sort_indices()
    _check_float(m, source, tol)
    num = _float_numerators(m)
    if m.data.size:
        # Each entry is held to within half a step of the grid: for a tiny one that is a large part of it, and the
        # bounds, certified for the chain as held, do not cover the difference from the entries as given.
        small = float(m.data.min())
        off = 0.5 / FLOAT_DENOM / small
        if off > GRID_NOTE:
            notes = [*notes, f"the probabilities are held as multiples of 2**-53: the smallest, {small:.4g}, to "
                             f"within {off:.1g} of itself; every bound is that of the chain so held (exact "
                             "fractions, or decimals over a small denominator, are held exactly)"]
    return _assemble(m.shape[0], m.indptr, m.indices, num, FLOAT_DENOM, init, labels, rewards,
                     names, False, source, notes, branch_rewards)


def from_triples(n: int, rows: np.ndarray, cols: np.ndarray, vals: Any, *, init: int,
                 labels: Mapping[str, Any] | None = None, rewards: Mapping[str, Any] | None = None,
                 names: list | None = None, tol: float = ROW_TOL, source: str = "matrix") -> AnyChain:
    """A chain from its transitions as three columns (source, target, probability), duplicates summed.

    Parameters
    ----------
    n : int
        The number of states.
    rows, cols : array of int
        Each transition's source and target state.
    vals : array of float, or list of Fraction or int
        Each transition's probability. Exact rationals make an exact chain when their common
        denominator is at most ``2**53``.
    init, labels, rewards, names, tol, source
        As for :func:`from_matrix`, which calls this function.

    Returns
    -------
    AnyChain
        Exact (fractions) when ``vals`` are rationals of a small enough common denominator.

    Raises
    ------
    ChainError
        A state outside ``0 .. n - 1``, an ``init`` that is not a state, or a row that does not
        sum to 1.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> c = from_triples(3, [0, 1, 1, 2], [0, 0, 2, 2], [1, F(1, 3), F(2, 3), 1], init=1,
    ...                  labels={"lost": [0], "won": [2]})
    >>> c.exact, c.n_transitions
    (True, 4)
    >>> from markov_oca import analyse
    >>> analyse(c).outcomes
    {'lost': Fraction(1, 3), 'won': Fraction(2, 3)}
    """
    rows = np.asarray(rows, np.int64)
    cols = np.asarray(cols, np.int64)
    if rows.size and (min(rows.min(), cols.min()) < 0 or max(rows.max(), cols.max()) >= n):
        raise ChainError(f"a transition names a state outside 0..{n - 1}", source=source)
    if isinstance(init, bool) or not isinstance(init, (int, np.integer)) or not 0 <= int(init) < n:
        raise ChainError(f"init {init!r} is not a state (0..{n - 1})", source=source, key="init")
    if not isinstance(vals, np.ndarray) and all(_is_rational(x) for x in vals):
        vals = [Fraction(x) for x in vals]
        got = _exact_triples(n, rows, cols, vals, source)
        if got is not None:
            indptr, indices, num, denom = got
            return _assemble(n, indptr, indices, num, denom, int(init), labels, rewards, names, True, source, [])
        notes = ["the common denominator of the probabilities exceeds 2**53: analysed in floating point"]
        vals = np.array([float(v) for v in vals])
    else:
        notes = []
    vals = np.asarray(vals, np.float64)
    if _canonical(rows, cols, vals):  # rows in order, columns increasing, entries positive: CSR as it stands
        m = sp.csr_array((vals, cols, np.searchsorted(rows, np.arange(n + 1))), shape=(n, n))
        m.has_canonical_format = True
    else:
        m = sp.csr_array((vals, (rows, cols)), shape=(n, n))
    return _float_chain(m, int(init), labels, rewards, names, tol, source, notes)


def from_scaled_triples(n: int, rows: np.ndarray, cols: np.ndarray, num: np.ndarray, denom: int, *, init: int,
                        labels: Mapping[str, Any] | None = None, rewards: Mapping[str, Any] | None = None,
                        source: str = "matrix") -> AnyChain | None:
    """A chain whose probabilities are ``num / denom`` exactly (a file's decimals over a power of ten), marked
    :attr:`AnyChain.decimal`; None when some row does not sum to exactly ``denom`` or an entry is not in
    ``(0, denom]`` (the caller then reads the values as floats, which :func:`from_triples` checks).

    Decimals such as ``0.98`` and ``0.02`` are not floats' values: held as floats (over ``2**53``) the chain
    would be another chain, a rounding of the file's, and a figure certified for it could miss the file's
    own by more than its bound. Held exactly, every figure and its bound are the file's.

    Examples
    --------
    >>> c = from_scaled_triples(2, np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([98, 2, 100]), 100, init=0)
    >>> c.exact, c.decimal, c.denom, c.pnum[0].tolist()
    (True, True, 100, [98, 2])
    >>> from_scaled_triples(2, np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([33, 66, 100]), 100, init=0)
    """
    rows = np.asarray(rows, np.int64)
    cols = np.asarray(cols, np.int64)
    num = np.asarray(num, np.int64)
    if not 0 < denom <= EXACT_DENOM_LIMIT or not _scaled_ok(rows, cols, num, n, denom):
        return None
    if isinstance(init, bool) or not isinstance(init, (int, np.integer)) or not 0 <= int(init) < n:
        return None
    if _canonical(rows, cols, num):  # a file written row by row: CSR as it stands
        m = sp.csr_array((num, cols, np.searchsorted(rows, np.arange(n + 1))), shape=(n, n))
    else:
        m = sp.csr_array((num, (rows, cols)), shape=(n, n))  # int64: duplicates summed exactly
        m.sort_indices()
    chain = _assemble(n, m.indptr, m.indices, m.data.astype(np.int64, copy=False), int(denom), int(init), labels,
                      rewards, None, True, source, [])
    chain.decimal = True
    return chain


@numba.njit(cache=True, nogil=True)
def row_sums(rows, num, n):
    """Each row's sum of ``num`` in floating point, added in the entries' order (``np.bincount`` with weights,
    without the weights' copy): exact while the sums stay below ``2**53``."""
    out = np.zeros(n)
    for k in range(rows.size):
        out[rows[k]] += num[k]
    return out


@numba.njit(cache=True, nogil=True)
def _scaled_ok(rows, cols, num, n, denom):
    """Whether every entry ``num`` is in ``(0, denom]``, every row and column in ``0..n-1``, and every row sums
    to exactly ``denom`` (integers at most ``2**53``, added in floating point: exact)."""
    for k in range(rows.size):
        if not (0 < num[k] <= denom and 0 <= rows[k] < n and 0 <= cols[k] < n):
            return False
    sums = row_sums(rows, num, n)
    for s in range(n):
        if sums[s] != denom:
            return False
    return True


@numba.njit(cache=True)
def _canonical(rows, cols, vals):
    """Whether the triples are a CSR matrix in canonical form already (a file written row by row)."""
    for k in range(1, rows.size):
        if rows[k] < rows[k - 1] or (rows[k] == rows[k - 1] and cols[k] <= cols[k - 1]):
            return False
    for k in range(vals.size):
        if not vals[k] > 0.0:
            return False
    return True


def _assemble(n: int, indptr: np.ndarray, indices: np.ndarray, num: np.ndarray, denom: int, init: int,
              labels: Mapping[str, Any] | None, rewards: Mapping[str, Any] | None, names: list | None,
              exact: bool, source: str, notes: list[str],
              branch_rewards: Mapping[str, np.ndarray] | None = None) -> AnyChain:
    indptr = np.asarray(indptr, np.int64)
    lengths = np.diff(indptr)
    width = max(1, int(lengths.max()) if lengths.size else 1)
    packed = not branch_rewards and n * width * 12 > max(PACK_BYTES, PACK_RATIO * (indptr.size * 8 + indices.size * 12))
    if packed:
        nxt, pnum = None, None
        indices, num = np.asarray(indices, np.int32), np.asarray(num, np.int64)
        first, first_num = np.full(n, -1, np.int64), np.zeros(n, np.int64)
        has = lengths > 0
        first[has], first_num[has] = indices[indptr[:-1][has]], num[indptr[:-1][has]]
    else:
        nxt, pnum = _branch_form(indptr, np.asarray(indices, np.int64), num, n, source)
        first, first_num = nxt[:, 0], pnum[:, 0]
    label_sets = _label_sets(labels, n, source)
    absorbing = (lengths == 1) & (first == np.arange(n)) & (first_num == denom)
    if "deadlock" in label_sets:  # our own files mark the deadlocked states: they are not outcomes
        absorbing[label_sets["deadlock"]] = False
    absorbing = np.flatnonzero(absorbing)
    if names is not None and len(names) != n:
        raise ChainError(f"{len(names)} names for {n} states", source=source)
    state_rewards, exact_rewards = _rewards(rewards, n, source)
    mover = np.zeros(n, np.int8)
    mover[absorbing] = -1
    chain = AnyChain(
        next=nxt, pnum=pnum, denom=int(denom), init=init,
        outcomes=_outcome_names(absorbing, label_sets, names), players=1, mover=mover,
        state_rewards=state_rewards, branch_rewards=dict(branch_rewards or {}),
        state_ids=np.arange(n, dtype=np.int64),
        labels=label_sets, exact=exact, names=names, exact_rewards=exact_rewards, source=source, notes=notes,
    )
    if packed:
        chain._hold_packed(indptr, indices, num)
    return chain


def from_networkx(G: Any, *, init: Hashable | None = None, weight: str | None = None,
                  rewards: Iterable[str] = (), tol: float = ROW_TOL) -> AnyChain:
    """A chain from a weighted directed graph: nodes are states, edge weights probabilities.

    Parameters
    ----------
    G : networkx.DiGraph
        Each edge's probability in the attribute ``weight``; by default ``p`` when the
        edges have it (an exact ``"num/den"`` string or Fraction, as
        :func:`markov_oca.to_networkx` writes), else ``probability``, else ``weight``.
    init : node, optional
        The initial node; by default the graph attribute ``init`` (a node), else the
        node whose attribute ``init`` is true, else the first node.
    weight : str, optional
        The edge attribute holding the probability.
    rewards : iterable of str
        Node attributes to take as per-state rewards (missing values are 0).
    tol : float
        As for :func:`from_matrix`.

    Returns
    -------
    AnyChain
        States numbered in the order of ``G.nodes``; ``names`` are the nodes; each
        boolean node attribute that is true somewhere becomes a label.

    Raises
    ------
    ChainError
        An undirected or empty graph, or a node whose edges' weights do not sum to 1.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph()
    >>> G.add_weighted_edges_from([("start", "start", 0.5), ("start", "end", 0.5), ("end", "end", 1.0)])
    >>> c = from_networkx(G)
    >>> c.outcomes, float(c.expected({"steps": c.mover >= 0})["steps"][0])
    ({'end': 1}, 2.0)
    """
    source = "graph"
    if not G.is_directed():
        raise ChainError("the graph is undirected: a chain needs a directed graph", source=source)
    nodes = list(G.nodes)
    if not nodes:
        raise ChainError("the graph has no nodes", source=source)
    index = {v: i for i, v in enumerate(nodes)}
    edges = list(G.edges(data=True))
    if weight is None:
        attrs = set().union(*(d.keys() for _, _, d in edges)) if edges else set()
        weight = next((w for w in ("p", "probability", "weight") if w in attrs), "weight")
    rows = np.array([index[u] for u, _, _ in edges], np.int64)
    cols = np.array([index[v] for _, v, _ in edges], np.int64)
    vals = []
    for u, v, d in edges:
        if weight not in d:
            raise ChainError(f"edge {u!r} -> {v!r} has no {weight!r}", source=source, key=weight)
        x = d[weight]
        if isinstance(x, str):
            try:
                x = Fraction(x) if all(c.isdigit() or c in "/ " for c in x) else float(x)
            except (ValueError, ZeroDivisionError):
                raise ChainError(f"edge {u!r} -> {v!r}: {weight} {x!r} is not a number", source=source) from None
        vals.append(x)
    n = len(nodes)
    if init is None:
        init = G.graph.get("init")
        if init not in index:
            init = next((v for v, d in G.nodes(data=True) if d.get("init") is True), nodes[0])
    if init not in index:
        raise ChainError(f"init {init!r} is not a node", source=source, key="init")
    labels = {}
    for v, d in G.nodes(data=True):
        for k, x in d.items():
            if isinstance(x, (bool, np.bool_)) and x:
                labels.setdefault(k, []).append(index[v])
    node_rewards = {r: [G.nodes[v].get(r, 0) for v in nodes] for r in rewards}
    if not all(_is_rational(x) for x in vals):
        try:
            vals = np.array(vals, np.float64)
        except (TypeError, ValueError):
            raise ChainError(f"edge weights {weight!r} are not all numbers", source=source, key=weight) from None
    return from_triples(n, rows, cols, vals, init=index[init], labels=labels, rewards=node_rewards, names=nodes,
                        tol=tol, source=source)
