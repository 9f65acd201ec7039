"""The chain and every analysis of it, in floating point and in exact rationals.

:class:`~markov_oca.analysis.chain.Chain` is a chain in branch form (next state, probability
numerator over one denominator) with its float analyses; :class:`~markov_oca.analysis.exact.ExactChain`
gives the same answers as fractions. :mod:`~markov_oca.analysis.build` makes a chain from a
matrix, triples or a graph; :mod:`~markov_oca.analysis.general` answers the questions one asks of
any absorbing chain; :mod:`~markov_oca.analysis.crosscheck` tests sampled games against the exact
answer; :mod:`~markov_oca.analysis.results` holds the result types the families share.
"""
