"""Every public function and class documents its parameters and shows an example (numpydoc).

The public API is every name of ``markov_oca.__all__`` and every function and class defined in
``markov_oca.api``. The examples themselves run as doctests (``--doctest-modules`` in the pytest
configuration), so here only their presence and the parameters' coverage are checked.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import pytest
from numpydoc.docscrape import NumpyDocString

import markov_oca
import markov_oca.api as api


def public_objects() -> dict[str, object]:
    names = {f"markov_oca.{n}": getattr(markov_oca, n) for n in markov_oca.__all__}
    top = {id(obj) for obj in names.values()}
    for n, obj in vars(api).items():
        if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) \
                and obj.__module__ == api.__name__ and id(obj) not in top:
            names[f"markov_oca.api.{n}"] = obj
    return names


PUBLIC = public_objects()


def parameters(obj) -> list[str]:
    """The names a caller passes: a function's parameters, a class's constructor's (public ones)."""
    if inspect.isclass(obj) and obj.__init__ is object.__init__:
        return []
    try:
        sig = inspect.signature(obj)
    except ValueError:  # an exception that takes the message only (Exception's own constructor)
        return []
    return [p for p in sig.parameters if p != "self" and not p.startswith("_")]


def documented(doc) -> set[str]:
    """The names a Parameters (or, for a dataclass, Attributes) section covers: ``a, b : int`` covers both."""
    names = set()
    for section in ("Parameters", "Other Parameters", "Attributes"):
        for p in doc[section]:
            names.update(n.strip().lstrip("*") for n in p.name.split(","))
    return names


def test_the_public_api_is_what_the_reference_lists():
    assert "markov_oca.solve" in PUBLIC and "markov_oca.api.exact_answer" in PUBLIC
    assert len(PUBLIC) == len(markov_oca.__all__) + 3  # api.family, api.exact_answer, api.Explained


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_docstring(name):
    obj = PUBLIC[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unknown section ("Example") is a numpydoc warning
        doc = NumpyDocString(inspect.getdoc(obj) or "")
    assert doc["Summary"], f"{name}: no summary line"
    params = parameters(obj)
    missing = [p for p in params if p not in documented(doc)]
    untyped = [p.name for p in doc["Parameters"] + doc["Attributes"]
               if not p.type and not p.name.startswith("*") and "," not in p.name and p.name in params]
    assert not untyped, f"{name}: parameters without a type: {untyped}"
    assert not missing, f"{name}: parameters not in its Parameters section: {missing}"
    if params and not (inspect.isclass(obj) and dataclasses.is_dataclass(obj)):
        assert doc["Parameters"], f"{name}: no Parameters section"
    if inspect.isfunction(obj) and inspect.signature(obj).return_annotation not in (None, "None"):
        assert doc["Returns"] or doc["Yields"], f"{name}: no Returns section"
    assert any(line.lstrip().startswith(">>>") for line in doc["Examples"]), f"{name}: no Examples"


def test_the_check_fails_on_a_bare_docstring():
    def f(a, b=1):
        """Add."""

    doc = NumpyDocString(inspect.getdoc(f))
    assert {"a", "b"} - documented(doc) == {"a", "b"} and not doc["Examples"]
