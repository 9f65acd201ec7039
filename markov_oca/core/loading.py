"""Ctrl-C while the command line loads: one line and exit code 130, before numpy and numba are imported.

Loading numpy, numba and scipy takes a second or more. The console script
(:mod:`markov_oca.launch`) and ``python -m markov_oca.cli`` put this handler in place before
they import anything heavy; :func:`markov_oca.core.interrupt.run_cli` replaces it once the
command runs. Nothing is written before that, so there is nothing to remove. A library import
never calls it.
"""

from __future__ import annotations

import os
import signal


def _stop_while_loading(signum: int, frame: object) -> None:
    os.write(2, b"markov-oca: interrupted\n")
    os._exit(130)


def install_loading_handler() -> None:
    """Put the loading-time SIGINT handler in place, unless SIGINT is ignored or already handled."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop_while_loading)
