"""Every file format in and out, side by side.

- :mod:`~markov_oca.io.explicit`: Storm's and PRISM's explicit files (``.tra``, ``.lab``,
  ``.srew``, ``.trew``), read and written;
- :mod:`~markov_oca.io.drn`: Storm's DRN, read and written;
- :mod:`~markov_oca.io.graph`: NetworkX graphs and the queries made on them;
- :mod:`~markov_oca.io.write`: one chain to any format (GraphML, GEXF, DOT, JSON, PRISM, Storm, DRN);
- :mod:`~markov_oca.io.properties`: the properties files that go with an exported chain;
- :mod:`~markov_oca.io.results`: results files of simulated games (CSV or JSON lines), read and written;
- :mod:`~markov_oca.io.chains`: any chain from a file, whatever its format.
"""
