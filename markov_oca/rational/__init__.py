"""Exact rational linear algebra: the solvers behind every ``--exact`` answer.

:mod:`markov_oca.rational.sparse` gathers the solvers of ``(I - Q) x = b`` over the rationals for chains too large
for a dense exact solve: Dixon's p-adic lifting, iterative refinement in floating point with an
exact certificate, and rational reconstruction of the answer. Nothing here knows a game.
"""
