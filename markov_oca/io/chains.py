"""Any chain from a file, whatever its format: :func:`read_chain` picks the reader by the file's name
(DRN: :mod:`~markov_oca.io.drn`; Storm's and PRISM's explicit files: :mod:`~markov_oca.io.explicit`),
and :func:`analyse_file` reads and analyses in one call, as ``markov-oca analyse`` does.

UMB, the unified binary format of Storm and PRISM, is not read yet: export DRN from Storm or PRISM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analysis.build import ROW_TOL, AnyChain, ChainError
from ..analysis.general import AnyResults, analyse
from .drn import read_drn
from .explicit import read_explicit


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
