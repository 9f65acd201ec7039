"""Memory at hand, and the up-front refusal of work that would not fit, for every family.

Each model estimates the bytes its chain or solve needs before anything is built;
:func:`check_fits` compares that estimate with :func:`memory_budget` and raises a
one-line :class:`~markov_oca.errors.TooLargeError` with both figures.

What is at hand is the smaller of the kernel's ``MemAvailable`` and what the
process's control group still allows (its limit less its usage, at every level
up the hierarchy: cgroup v2 ``memory.max``/``memory.current``, v1
``memory.limit_in_bytes``/``memory.usage_in_bytes``). Inside a container with a
memory limit ``/proc/meminfo`` shows the host's memory, and only the cgroup
says what the container may still take. The budget is 80% of that, unless the
user set one (``--max-memory``, :func:`set_max_memory`), which then stands as
given.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import RulesError, TooLargeError

# Where /proc and /sys are looked for; tests point this at a fake tree.
_ROOT = Path("/")
_DEFAULT_SHARE = 0.8
_max_memory: int | None = None
# A cgroup v1 "no limit" is a page-rounded 2**63 - 1; anything this large is no limit.
_NO_LIMIT = 2**60
#: The interpreter with numpy, scipy and the solves' compiled kernels loaded, which every estimate adds:
#: 126 MiB after the imports, 217 MiB once a two-player goose chain has gone through the iterative
#: route's kernels (measured, numba 0.68), and the command line's own imports on top.
BASE_BYTES = 224 * 2**20


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def meminfo_available(root: Path | None = None) -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (None if unreadable)."""
    text = _read((root or _ROOT) / "proc/meminfo")
    for line in (text or "").splitlines():
        if line.startswith("MemAvailable:"):
            try:
                return int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _int_file(path: Path) -> int | None:
    text = _read(path)
    if text is None:
        return None
    text = text.strip()
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= _NO_LIMIT else value


def _mounts(root: Path) -> list[tuple[str, str, str, str]]:
    """``(mount root, mount point, fs type, super options)`` of every cgroup mount in mountinfo."""
    out = []
    for line in (_read(root / "proc/self/mountinfo") or "").splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] in ("cgroup", "cgroup2"):
            out.append((fields[3], fields[4], tail[0], tail[2]))
    return out


def _cgroup_dirs(root: Path) -> list[tuple[Path, Path, str]]:
    """``(directory of this process's memory cgroup, mount point, version)`` for v2 and v1."""
    found = []
    mounts = _mounts(root)
    for line in (_read(root / "proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            version = "cgroup2"
        elif "memory" in controllers.split(","):
            version = "cgroup"
        else:
            continue
        for mroot, mpoint, fstype, opts in mounts:
            if fstype != version or (version == "cgroup" and "memory" not in opts.split(",")):
                continue
            # The process's path is relative to the hierarchy's root; the mount shows the part below mroot.
            if mroot != "/" and not (path == mroot or path.startswith(mroot.rstrip("/") + "/")):
                continue
            rel = path[len(mroot.rstrip("/")):] if mroot != "/" else path
            base = root / mpoint.lstrip("/")
            found.append((base / rel.lstrip("/"), base, "v2" if version == "cgroup2" else "v1"))
            break
    return found


def cgroup_headroom(root: Path | None = None) -> int | None:
    """Bytes the process's memory cgroups still allow (limit less usage, tightest level), None if unlimited."""
    root = root or _ROOT
    best: int | None = None
    for d, top, version in _cgroup_dirs(root):
        limit_name, usage_name = (("memory.max", "memory.current") if version == "v2"
                                  else ("memory.limit_in_bytes", "memory.usage_in_bytes"))
        level = d
        while True:
            limit = _int_file(level / limit_name)
            if limit is not None:
                usage = _int_file(level / usage_name) or 0
                room = max(0, limit - usage)
                best = room if best is None else min(best, room)
            if level == top or top not in level.parents:
                break
            level = level.parent
    return best


def available_memory() -> int:
    """Bytes that can still be allocated here: the smaller of ``MemAvailable`` and the cgroup's headroom.

    With a budget set by :func:`set_max_memory` this is that budget, so that
    every estimate compared with it honours ``--max-memory``.
    """
    if _max_memory is not None:
        return _max_memory
    return system_available()


def system_available() -> int:
    """The smaller of ``MemAvailable`` and the cgroup headroom, whatever budget is set."""
    avail = meminfo_available()
    if avail is None:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError):
            avail = 2**62
    room = cgroup_headroom()
    return avail if room is None else min(avail, room)


def memory_budget() -> int:
    """Bytes a command may plan to use: the ``--max-memory`` budget if set, else 80% of what is at hand."""
    if _max_memory is not None:
        return _max_memory
    return int(system_available() * _DEFAULT_SHARE)


def set_max_memory(limit: int | str | None) -> None:
    """Set the process-wide budget (bytes, or a string for :func:`parse_memory`); None restores the default."""
    global _max_memory
    _max_memory = parse_memory(limit) if isinstance(limit, str) else limit


def budget_set() -> int | None:
    """The ``--max-memory`` budget set by :func:`set_max_memory`, or None when there is none."""
    return _max_memory


_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_memory(text: str, *, key: str = "--max-memory") -> int:
    """Bytes from ``"8G"``, ``"500M"``, ``"1.5GiB"``, ``"123456"`` or ``"80%"`` (of what is at hand).

    Units are binary (K = 1024). A bad value is a one-line :class:`RulesError` naming ``key``.

    >>> parse_memory("500M"), parse_memory("2G"), parse_memory("1.5k")
    (524288000, 2147483648, 1536)
    """
    s = str(text).strip()
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*(%|[KMGT]?(?:I?B)?)", s, re.IGNORECASE)
    if not m:
        raise RulesError(f"expected a size such as 8G, 500M or 80%, got {text!r}", key=key)
    value, unit = float(m.group(1)), m.group(2).upper()
    if unit == "%":
        if not 0 < value <= 100:
            raise RulesError(f"a share of memory must be above 0% and at most 100%, got {text!r}", key=key)
        return int(system_available() * value / 100)
    unit = unit.removesuffix("B").removesuffix("I")
    n = int(value * _UNITS[unit])
    if n <= 0:
        raise RulesError(f"must be more than zero bytes, got {text!r}", key=key)
    return n


def gib(n: float) -> str:
    """``n`` bytes in GiB, one decimal (MiB below a tenth of a GiB): ``'3.2 GiB'``, ``'10 MiB'``."""
    if n < 0.1 * 2**30:
        return f"{n / 2**20:.0f} MiB"
    return f"{n / 2**30:.1f} GiB"


def check_fits(what: str, need: int, avail: int | None = None) -> None:
    """Refuse ``what`` (e.g. ``"oca-moderna with 4 players: 85,500,000 states"``) if ``need`` bytes do not fit.

    ``avail`` defaults to :func:`memory_budget`.
    """
    avail = memory_budget() if avail is None else avail
    if need > avail:
        source = "budget (--max-memory)" if _max_memory is not None else "available"
        raise TooLargeError(f"{what}, about {gib(need)} to build; {gib(avail)} {source}")


__all__ = ["available_memory", "budget_set", "cgroup_headroom", "check_fits", "gib", "memory_budget", "parse_memory",
           "set_max_memory", "system_available"]
