"""The console script ``markov-oca``: the loading-time Ctrl-C handler first, then the command line."""

from __future__ import annotations

from .core.loading import install_loading_handler


def main() -> None:
    """Install the loading-time handler (:mod:`markov_oca.core.loading`), then run :func:`markov_oca.cli.main`."""
    install_loading_handler()
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
