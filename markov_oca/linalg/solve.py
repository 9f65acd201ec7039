"""Linear solves on chains in branch form, and the residual of every solve: the entry points.

A chain in branch form lists, for each state, its branches: next state and
probability numerator over a common denominator. The systems we solve are all
``x = b + Q x`` on a set of *active* (transient) states, where ``Q`` follows the
branches that stay active and are not *stopped* (a stopped branch is one that
reaches a target event, as when a seat lands on the square we ask about).

Small systems go to SciPy's direct sparse LU; large ones to BiCGSTAB on all
right-hand sides at once, preconditioned by a symmetric Gauss-Seidel sweep in the
given sweep order (:mod:`~markov_oca.linalg.bicgstab`). Plain Gauss-Seidel needs
600-900 sweeps on these chains, direct LU drowns in fill-in (see ``docs/design.md``).
The sweep order matters: successors first (the reverse of breadth-first discovery,
or better, see :func:`progress_order`, decreasing total progress in a race). Either
way the true residual ``||(I-Q)x - b||_inf`` is computed afterwards and returned.

The pieces live in modules of their own: :mod:`~markov_oca.linalg.split` (the system
built from branch form), :mod:`~markov_oca.linalg.sweeps` (the fused sweeps),
:mod:`~markov_oca.linalg.bicgstab` (the iteration), :mod:`~markov_oca.linalg.residual`,
:mod:`~markov_oca.linalg.system` (:class:`LinearSystem`), :mod:`~markov_oca.linalg.adjoint`
and :mod:`~markov_oca.linalg.shifted` (the seat-shifted block of a chain seen from the
player to move); this module gathers their public names.
"""

from __future__ import annotations

from .adjoint import adjoint_solve
from .bicgstab import GROUP, PARALLEL_MIN, THREADS, _bicgstab_sgs, _split_solve, block_bicgstab
from .report import DIRECT_LIMIT, SolveReport
from .residual import _adjoint_residual, _residual, _shifted_adjoint_residual
from .shifted import shifted_adjoint_solve
from .split import SplitMatrix, _split_transposed, _split_transposed_shifted, system_matrix
from .system import LinearSystem, progress_order

__all__ = [
    "DIRECT_LIMIT", "GROUP", "PARALLEL_MIN", "THREADS", "LinearSystem", "SolveReport", "SplitMatrix",
    "_adjoint_residual", "_bicgstab_sgs", "_residual", "_shifted_adjoint_residual", "_split_solve",
    "_split_transposed", "_split_transposed_shifted", "adjoint_solve", "block_bicgstab", "progress_order",
    "shifted_adjoint_solve", "system_matrix",
]
