"""Sphinx configuration: the user guide (markdown, MyST) and the API reference (the docstrings, numpydoc).

Build: ``sphinx-build -W --keep-going -q -b html docs docs/_build/html`` (warnings are errors; no network:
intersphinx is not used, so a type or a name outside the project is shown as written, not linked).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package of this tree, not an installed copy

import markov_oca  # noqa: E402

project = "markov_oca"
release = version = markov_oca.__version__
copyright = "markov_oca authors, MIT licence"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# The guide: headings get anchors so that links such as rules.md#the-goose resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The reference: one page per public name, written at build time from the docstrings.
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc Parameters section gives the types, in words
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # the class template lists the members (autodoc :members:)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"markov_oca {release}"


def _public_signature(app, what, name, obj, options, signature, return_annotation):
    """Leave a dataclass's private fields (``_lengths=<factory>``) out of its signature on the page."""
    if what == "class" and signature:
        params = [p for p in signature.strip("()").split(", ") if p and not p.startswith("_")]
        signature = "(" + ", ".join(params) + ")"
    return signature, return_annotation


def setup(app):
    app.connect("autodoc-process-signature", _public_signature)
