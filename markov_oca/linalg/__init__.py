"""Floating-point linear algebra on chains in branch form.

:mod:`~markov_oca.linalg.solve` solves ``(I - Q) x = b`` and its adjoint (Gauss-Seidel sweeps in
the chain's own order, BiCGSTAB preconditioned by them, a direct solve for small chains), each
with its true residual; :mod:`~markov_oca.linalg.hitting` gives hitting probabilities of many
targets at once.
"""
