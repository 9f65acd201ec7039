"""Sets of states named by labels: a label, or a Boolean combination of labels as a model checker writes one.

``--hit`` takes a label's name; where no label has that name, a formula over labels: ``!`` (not), ``&``
(and), ``|`` (or), parentheses, ``true``/``false``, and each label by its name or in double quotes (Storm
writes a property's target as ``((!"knowA") & "knowB")``). A label whose own name contains these
characters (Storm's ``(s = 5)``) is always found by its name first.
"""

from __future__ import annotations

import re

import numpy as np

from .build import ChainError

_TOKEN = re.compile(r'\s*(?:(?P<op>[!&|()])|"(?P<quoted>[^"]*)"|(?P<word>[A-Za-z_][\w.\-]*))')


def label_states(labels: dict[str, np.ndarray], text: str, n: int) -> np.ndarray:
    """The states (sorted) of the label ``text``, or of the formula ``text`` over the labels.

    Examples
    --------
    >>> labs = {"knowA": np.array([1, 2]), "knowB": np.array([2, 3]), "(s = 5)": np.array([0])}
    >>> label_states(labs, '((!"knowA") & "knowB")', 4).tolist()
    [3]
    >>> label_states(labs, "knowA | (s = 5)", 4)
    Traceback (most recent call last):
    ...
    markov_oca.analysis.build.ChainError: hit: no label 'knowA | (s = 5)' (labels: knowA, knowB, (s = 5))
    >>> label_states(labs, '"(s = 5)" | knowB', 4).tolist()
    [0, 2, 3]
    """
    if text in labels:
        return labels[text]
    tokens = _tokens(text, labels)
    pos = 0

    def fail(why: str):
        raise ChainError(f"no label {text!r} and not a formula over the labels: {why} "
                         f"(labels: {', '.join(labels) or 'none'})", key="hit")

    def member(name: str) -> np.ndarray:
        if name in ("true", "false") and name not in labels:
            return np.full(n, name == "true")
        if name not in labels:
            raise ChainError(f"no label {name!r} (labels: {', '.join(labels) or 'none'})", key="hit")
        out = np.zeros(n, bool)
        out[labels[name]] = True
        return out

    def atom() -> np.ndarray:
        nonlocal pos
        if pos >= len(tokens):
            fail("it ends too soon")
        kind, val = tokens[pos]
        pos += 1
        if kind == "op" and val == "!":
            return ~atom()
        if kind == "op" and val == "(":
            got = either()
            if pos >= len(tokens) or tokens[pos] != ("op", ")"):
                fail("a '(' is not closed")
            pos += 1
            return got
        if kind == "name":
            return member(val)
        fail(f"{val!r} where a label was expected")
        raise AssertionError  # unreachable: fail raises

    def both() -> np.ndarray:
        nonlocal pos
        got = atom()
        while pos < len(tokens) and tokens[pos] == ("op", "&"):
            pos += 1
            got = got & atom()
        return got

    def either() -> np.ndarray:
        nonlocal pos
        got = both()
        while pos < len(tokens) and tokens[pos] == ("op", "|"):
            pos += 1
            got = got | both()
        return got

    got = either()
    if pos != len(tokens):
        fail(f"{tokens[pos][1]!r} is left over")
    return np.flatnonzero(got).astype(np.int64)


def _tokens(text: str, labels: dict[str, np.ndarray]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        m = _TOKEN.match(text, i)
        if not m or m.end() == i:
            raise ChainError(f"no label {text!r} (labels: {', '.join(labels) or 'none'})", key="hit")
        if m["op"]:
            out.append(("op", m["op"]))
        else:
            out.append(("name", m["quoted"] if m["quoted"] is not None else m["word"]))
        i = m.end()
    return out
