"""Memory at hand, and the up-front refusal of work that would not fit, for every family.

Each model estimates the bytes its chain or solve needs before anything is built;
:func:`check_fits` compares that estimate with :func:`available_memory` and raises a
one-line :class:`~markov_oca.errors.TooLargeError` with both figures.
"""

from __future__ import annotations

import os

from .errors import TooLargeError


def available_memory() -> int:
    """Bytes that can still be allocated here (``MemAvailable`` of ``/proc/meminfo``)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def gib(n: float) -> str:
    """``n`` bytes in GiB, one decimal: ``'3.2 GiB'``."""
    return f"{n / 2**30:.1f} GiB"


def check_fits(what: str, need: int, avail: int | None = None) -> None:
    """Refuse ``what`` (e.g. ``"oca-moderna with 4 players: 85,500,000 states"``) if ``need`` bytes do not fit."""
    avail = available_memory() if avail is None else avail
    if need > avail:
        raise TooLargeError(f"{what}, about {gib(need)} to build; {gib(avail)} available")


__all__ = ["available_memory", "check_fits", "gib"]
