"""Any chain from a file, whatever its format: :func:`read_chain` picks the reader by the file's name
(DRN: :mod:`~markov_oca.io.drn`; UMB: :mod:`~markov_oca.io.umb`; Storm's and PRISM's explicit files:
:mod:`~markov_oca.io.explicit`), and :func:`analyse_file` reads and analyses in one call, as
``markov-oca analyse`` does.
"""

from __future__ import annotations

import re
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..analysis.build import ROW_TOL, AnyChain, ChainError
from ..analysis.general import AnyResults, InitialResults, analyse
from ..analysis.initial import distribution
from ..core.files import read_text_bytes
from .drn import read_drn
from .explicit import read_explicit
from .umb import read_umb


def read_chain(path: str | Path, *, tol: float = ROW_TOL, exact: bool = False) -> AnyChain:
    """A chain from a file: DRN (``.drn``), UMB (``.umb``) or Storm/PRISM explicit files (``.tra``, or their stem).

    Parameters
    ----------
    path : str or Path
    tol : float
        How far from 1 a row of decimal probabilities may sum.
    exact : bool
        Read decimal literals exactly too (``0.7`` is ``7/10``, whatever the file's value type says), and
        refuse, naming the state, a row that does not then sum to exactly 1 (nor reads back as a rounding:
        :mod:`markov_oca.io.decimals`). Without it, decimals are held exactly all the same when they can
        be (``chain.decimal``: floating point stays the default mode), else read as floats. UMB doubles
        stay doubles.

    Returns
    -------
    AnyChain

    Raises
    ------
    ChainError
        A file that cannot be read or is not a Markov chain (one line naming the file and the
        line, state or value at fault).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "coin.tra"
    >>> _ = p.write_text("dtmc\\n0 0 0.5\\n0 1 0.5\\n1 1 1\\n")
    >>> c = read_chain(p)
    >>> c.n, c.outcomes, c.exact, c.decimal  # the decimals held exactly; floating point by default
    (2, {'state 1': 1}, True, True)
    >>> read_chain(p, exact=True).decimal
    False
    """
    p = Path(path)
    if p.suffix.lower() == ".drn":
        return read_drn(p, tol=tol, exact=exact)
    if p.suffix.lower() == ".umb":
        return read_umb(p, tol=tol)
    return read_explicit(p, tol=tol, exact=exact)


def read_distribution(path: str | Path, chain: AnyChain, *, exact: bool = False) -> dict[int, Fraction]:
    """An initial distribution from a text file: a line ``STATE WEIGHT`` per state (``STATE: WEIGHT`` and
    ``STATE=WEIGHT`` too), weights as decimals or fractions (read exactly), ``#`` and ``//`` comments.

    Parameters
    ----------
    path : str or Path
    chain : AnyChain
        The chain the states are of.
    exact : bool
        Whether the weights must sum to exactly 1 (else to within 1e-9).

    Returns
    -------
    dict
        State -> weight (a fraction), the states of weight 0 left out.

    Raises
    ------
    ChainError
        One line naming the file and the line or state at fault: a line that is not ``STATE WEIGHT``, a
        state that is not one, a negative weight, weights that do not sum to 1.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from markov_oca import from_matrix
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "start.txt"
    >>> _ = p.write_text("# where it starts\\n0 0.25\\n1: 3/4\\n")
    >>> read_distribution(p, from_matrix([[1, 0], [0, 1]], init=0))
    {0: Fraction(1, 4), 1: Fraction(3, 4)}
    """
    src = str(path)
    text = read_text_bytes(path, ChainError).decode()
    weights: dict[int, Fraction] = {}
    for no, line in enumerate(text.splitlines(), 1):
        line = re.split(r"#|//", line, maxsplit=1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"(\d+)\s*[\s:=]\s*([-+]?[0-9.eE+/-]+)", line)
        try:
            state, weight = int(m.group(1)), Fraction(m.group(2))  # type: ignore[union-attr]
        except (AttributeError, ValueError, ZeroDivisionError):
            raise ChainError(f"line {no}: {line[:60]!r} is not 'STATE WEIGHT'", source=src) from None
        if state in weights:
            raise ChainError(f"line {no}: state {state} is given twice", source=src)
        weights[state] = weight
    if not weights:
        raise ChainError("no 'STATE WEIGHT' line: an empty distribution", source=src)
    start = distribution(chain, weights, exact, src)
    return {state: weights[state] for state in start.states}


def analyse_file(path: str | Path, *, tol: float = ROW_TOL, init_dist: str | Path | None = None,
                 **options: Any) -> AnyResults | InitialResults:
    """Read a chain file and analyse it: what ``markov-oca analyse FILE`` does.

    Parameters
    ----------
    path : str or Path
        A DRN or UMB file, or Storm/PRISM explicit files (see :func:`read_chain`).
    tol : float
        As for :func:`read_chain`.
    init_dist : str or Path, optional
        A file of the initial distribution (:func:`read_distribution`): the figures are then from it.
    **options
        Passed to :func:`~markov_oca.analysis.general.analyse`: ``init`` (a state, a label, ``"uniform"``;
        by default each initial state), ``exact`` (bool or None; True also reads
        decimals exactly), ``hit`` (label names, or name -> states), ``conditional`` (int), ``tail`` (float),
        ``max_steps`` (int), ``length`` (bool), ``rewards`` (name -> values).

    Returns
    -------
    AnyResults or InitialResults
        One per initial state when the chain has several (and neither ``init`` nor ``init_dist`` says
        where to start).

    Raises
    ------
    ChainError
        As :func:`read_chain`, :func:`read_distribution` and :func:`~markov_oca.analyse` raise it; ``init``
        and ``init_dist`` both given.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "coin.tra"
    >>> _ = p.write_text("dtmc\\n0 0 1/2\\n0 1 1/2\\n1 1 1\\n")
    >>> analyse_file(p).steps
    Fraction(2, 1)
    """
    t = time.perf_counter()
    chain = read_chain(path, tol=tol, exact=options.get("exact") is True)
    read = time.perf_counter() - t
    if init_dist is not None:
        if options.get("init") is not None:
            raise ChainError("give --init or --init-dist, not both", source=str(path), key="init")
        options["init"] = read_distribution(init_dist, chain, exact=options.get("exact") is True)
    res = analyse(chain, **options)
    for r in res if isinstance(res, InitialResults) else [res]:
        r.timings = {"read": read, **r.timings}
    return res
