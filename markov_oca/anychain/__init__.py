"""Any absorbing Markov chain in and out: a researcher's matrix, a graph, Storm's and PRISM's files.

:func:`from_matrix`, :func:`from_triples` and :func:`from_networkx` build a
:class:`~markov_oca.chain.Chain` (an :class:`AnyChain`, which keeps the labels
and names that came with it) on which every Chain analysis works;
:func:`read_chain` reads one from Storm/PRISM explicit files (``.tra``, ``.lab``,
``.srew``, ``.trew``) or DRN. :func:`analyse` answers the questions one asks of
an absorbing chain, each with its residual, and :func:`analyse_file` does both
for the command line. ``docs/any-chain.md`` has worked examples.
"""

from .analysis import AnyResults, analyse, hitting_probability
from .build import AnyChain, ChainError, from_matrix, from_networkx, from_triples
from .io import analyse_file, read_chain

__all__ = ["AnyChain", "AnyResults", "ChainError", "analyse", "analyse_file", "from_matrix", "from_networkx",
           "from_triples", "hitting_probability", "read_chain"]
