"""Any chain from a file, whatever its format: :func:`read_chain` picks the reader by the file's name
(DRN: :mod:`~markov_oca.io.drn`; UMB: :mod:`~markov_oca.io.umb`; Storm's and PRISM's explicit files:
:mod:`~markov_oca.io.explicit`), and :func:`analyse_file` reads and analyses in one call, as
``markov-oca analyse`` does.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..analysis.build import ROW_TOL, AnyChain
from ..analysis.general import AnyResults, analyse
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
        refuse, naming the state, a row that does not then sum to exactly 1. UMB doubles stay doubles.

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
    >>> c.n, c.outcomes, c.exact
    (2, {'state 1': 1}, False)
    >>> read_chain(p, exact=True).exact
    True
    """
    p = Path(path)
    if p.suffix.lower() == ".drn":
        return read_drn(p, tol=tol, exact=exact)
    if p.suffix.lower() == ".umb":
        return read_umb(p, tol=tol)
    return read_explicit(p, tol=tol, exact=exact)


def analyse_file(path: str | Path, *, tol: float = ROW_TOL, **options: Any) -> AnyResults:
    """Read a chain file and analyse it: what ``markov-oca analyse FILE`` does.

    Parameters
    ----------
    path : str or Path
        A DRN or UMB file, or Storm/PRISM explicit files (see :func:`read_chain`).
    tol : float
        As for :func:`read_chain`.
    **options
        Passed to :func:`~markov_oca.analysis.general.analyse`: ``exact`` (bool or None; True also reads
        decimals exactly), ``hit`` (label names, or name -> states), ``conditional`` (int), ``tail`` (float),
        ``max_steps`` (int), ``length`` (bool), ``rewards`` (name -> values).

    Returns
    -------
    AnyResults

    Raises
    ------
    ChainError
        As :func:`read_chain` and :func:`~markov_oca.analyse` raise it.

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
    res = analyse(chain, **options)
    res.timings = {"read": read, **res.timings}
    return res
