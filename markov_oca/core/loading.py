"""Ctrl-C, SIGTERM or SIGHUP while the command line loads: one line and the conventional status (130, 143, 129).

Loading numpy, numba and scipy takes a second or more. The console script
(:mod:`markov_oca.launch`) and ``python -m markov_oca.cli`` put this handler in place before
they import anything heavy; :func:`markov_oca.core.interrupt.run_cli` replaces it once the
command runs. Nothing is written before that, so there is nothing to remove. A library import
never calls it.
"""

from __future__ import annotations

import os
import signal

#: Each signal handled while loading: its line and its conventional status.
_ENDINGS = {signal.SIGINT: (b"interrupted", 130), signal.SIGTERM: (b"terminated", 143),
            signal.SIGHUP: (b"terminated", 129)}


def _stop_while_loading(signum: int, frame: object) -> None:
    line, status = _ENDINGS[signum]
    os.write(2, b"markov-oca: " + line + b"\n")
    os._exit(status)


def install_loading_handler() -> None:
    """Put the loading-time handlers of SIGINT, SIGTERM and SIGHUP in place, unless ignored or already handled."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop_while_loading)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _stop_while_loading)
