"""Every input file's bytes, checked once: a missing file, a byte-order mark, a binary file or bytes that are
not UTF-8 become one line naming the file (a :class:`~markov_oca.core.errors.RulesError`, or the subclass
the caller names, which the CLI prints and exits 2 on), never a traceback. Rule files and chain files all come
through here.
"""

from __future__ import annotations

from pathlib import Path

from .errors import RulesError

#: Byte-order marks, longest first (UTF-32's starts with UTF-16's).
_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xef\xbb\xbf", "UTF-8"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def read_bytes(path: str | Path, error: type[RulesError] = RulesError) -> bytes:
    """The bytes of a file, or one line naming it (missing, a directory, unreadable).

    Parameters
    ----------
    path : str or Path
    error : type
        The error raised (a :class:`RulesError` subclass).

    Returns
    -------
    bytes

    Examples
    --------
    >>> read_bytes("/no/such/file.drn")
    Traceback (most recent call last):
    ...
    markov_oca.core.errors.RulesError: /no/such/file.drn: no such file
    """
    p = Path(path)
    src = str(p)
    if not p.exists():
        raise error("no such file", source=src)
    if p.is_dir():
        raise error("a directory, not a file", source=src)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", source=src) from None


def check_text(data: bytes, source: str, error: type[RulesError] = RulesError) -> None:
    """Refuse, in one line naming ``source``, text that starts with a byte-order mark, holds NUL bytes (a binary
    file) or is not UTF-8.

    Parameters
    ----------
    data : bytes
    source : str
        The file's name, for the message.
    error : type
        The error raised (a :class:`RulesError` subclass).

    Examples
    --------
    >>> check_text(b"\\xef\\xbb\\xbfdtmc", "m.tra")
    Traceback (most recent call last):
    ...
    markov_oca.core.errors.RulesError: m.tra: starts with a UTF-8 byte-order mark: save it as UTF-8 without one
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise error(f"starts with a {name} byte-order mark: save it as UTF-8 without one", source=source)
    zero = data.find(b"\0")
    if zero >= 0:
        raise error(f"a binary file, not text (a NUL byte at {_where(data, zero)})", source=source)
    if data.isascii():
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"byte 0x{data[exc.start]:02x} at {_where(data, exc.start)} is not UTF-8 text",
                         source=source) from None


def read_text_bytes(path: str | Path, error: type[RulesError] = RulesError) -> bytes:
    """:func:`read_bytes` then :func:`check_text`: the bytes of a text file that is sure to decode."""
    data = read_bytes(path, error)
    check_text(data, str(path), error)
    return data


def line_of(data: bytes | memoryview, offset: int) -> int:
    """The 1-based line number of byte ``offset``."""
    return bytes(data[:offset]).count(b"\n") + 1


def _where(data: bytes, offset: int) -> str:
    line = line_of(data, offset)
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"
