"""Numbers and option values as text: exact numbers of any length, without touching Python's digit limit.

Python 3.11 refuses to turn an integer of more than 4,300 digits into text (``sys.int_info``,
``sys.set_int_max_str_digits``), and exact answers run longer: two players of snakes and
ladders have 4,453 digits, two-piece Ur 11,692. Raising the limit would change the process
of whoever imports the library; FLINT's integers print at any length instead.

Examples
--------
>>> from fractions import Fraction
>>> fraction_text(Fraction(7, 10))
'7/10'
>>> len(int_text(3 ** 20000))
9543
"""

from __future__ import annotations

from fractions import Fraction

#: Integers below this many bits print through Python itself (well under 4,300 digits).
_PLAIN_BITS = 12_000


def int_text(n: int) -> str:
    """The decimal digits of ``n``, however many.

    Parameters
    ----------
    n : int
        Any integer.

    Returns
    -------
    str
        Its decimal text, with a leading ``-`` when negative.

    Examples
    --------
    >>> int_text(-12)
    '-12'
    """
    n = int(n)
    if n.bit_length() < _PLAIN_BITS:
        return str(n)
    import flint

    return flint.fmpz(n).str()


def fraction_text(x: Fraction | int) -> str:
    """``p/q`` for a fraction (``p`` alone when ``q`` is 1), digits of any length.

    Parameters
    ----------
    x : Fraction or int
        An exact number.

    Returns
    -------
    str
        ``"numerator/denominator"``, or the integer when the denominator is 1.

    Examples
    --------
    >>> fraction_text(Fraction(6, 3))
    '2'
    """
    x = Fraction(x)
    if x.denominator == 1:
        return int_text(x.numerator)
    return f"{int_text(x.numerator)}/{int_text(x.denominator)}"


def option_text(v: object) -> str:
    """A rule option's value as a rule file writes it (``true``, not ``True``).

    Examples
    --------
    >>> option_text(True), option_text(3)
    ('true', '3')
    """
    return str(v).lower() if isinstance(v, bool) else str(v)
