"""The engine every game family plugs into.

:mod:`~markov_oca.engine.family` declares what a family is (its settings, its rules, its
chain, its results) and finds one by name; :mod:`~markov_oca.engine.race` fills the results
of a race between seats from any such chain; :mod:`~markov_oca.engine.page` is the kit the
report pages are laid out with (blocks, plots, HTML and Markdown); :mod:`~markov_oca.engine.text`
the number formats every family's text shares. Nothing here names a game.
"""
