"""The console script ``markov-oca``: a Ctrl-C handler first, then the command line.

Loading numpy, numba and scipy takes a second or more. This module imports nothing heavy, so
its handler is in place before they load: a Ctrl-C then ends the command with the same one
line and exit code 130 as later on, when :func:`markov_oca.core.interrupt.run_cli` has put
its own handler in place. Nothing is written before that, so there is nothing to remove.
"""

from __future__ import annotations

import os
import signal


def _stop_while_loading(signum: int, frame: object) -> None:
    os.write(2, b"markov-oca: interrupted\n")
    os._exit(130)


def main() -> None:
    """Install the loading-time handler, then run :func:`markov_oca.cli.main`."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop_while_loading)
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
