"""Sparse exact solves of ``A x = B`` for integer ``A = D (I - Q)``: the entry points.

Two solvers, each proving its whole answer exactly: :class:`DixonSolver` (p-adic
lifting over a sparse LU modulo a word prime, :mod:`~markov_oca.rational.dixon`) and
:class:`RefineSolver` (iterative refinement in floating point over one float LU, the
integer residual kept exactly, and ``A z = d B`` checked over the integers,
:mod:`~markov_oca.rational.refine` and :mod:`~markov_oca.rational.certify`). Their
pieces: :mod:`~markov_oca.rational.ordering` (fill-reducing orders with diagonal
pivots), :mod:`~markov_oca.rational.modular` (arithmetic modulo a word prime),
:mod:`~markov_oca.rational.refine_steps` (the refinement steps),
:mod:`~markov_oca.rational.reconstruct` (rational reconstruction),
:mod:`~markov_oca.rational.limbs` (big integers as limb rows) and
:mod:`~markov_oca.rational.coupling` (coupled columns). This module gathers their
public names.
"""

from __future__ import annotations

from .coupling import Coupling, LiftReport
from .dixon import SMOOTH, DixonSolver
from .limbs import _from_limbs, _limb_divide, _normalise, _to_limbs
from .modular import PRIMES, primes_below
from .reconstruct import _int_from_digits, approx_reconstruct, rational_reconstruct
from .refine import RefinementFailed, RefineSolver
from .refine_steps import _refine

__all__ = [
    "PRIMES", "SMOOTH", "Coupling", "DixonSolver", "LiftReport", "RefineSolver", "RefinementFailed",
    "_from_limbs", "_int_from_digits", "_limb_divide", "_normalise", "_refine", "_to_limbs", "approx_reconstruct",
    "primes_below", "rational_reconstruct",
]
