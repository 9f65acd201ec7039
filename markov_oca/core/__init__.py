"""What every layer above uses and that knows nothing of chains or games.

Errors (:mod:`~markov_oca.core.errors`), files written whole or not at all
(:mod:`~markov_oca.core.atomic`), interrupts (:mod:`~markov_oca.core.interrupt`), progress bars
(:mod:`~markov_oca.core.progress`), the memory budget (:mod:`~markov_oca.core.memory`), rule files
(:mod:`~markov_oca.core.rulefile`), dice (:mod:`~markov_oca.core.dice`) and numbers as text
(:mod:`~markov_oca.core.text`).
"""
