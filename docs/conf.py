"""Sphinx configuration for skalgos (builds offline; warnings are errors)."""

import os
import sys
from importlib.metadata import version as _version

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, os.path.abspath(".."))

project = "skalgos"
author = "The skalgos developers"
copyright = "2026, the skalgos developers"
release = _version("skalgos")
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxcontrib.bibtex",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_theme_options = {"navigation_with_keys": False}

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"

# No intersphinx: the docs must build offline.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    # Examples run as tests (tests/test_examples.py) in a fast mode, not here.
    "plot_gallery": "False",
    "doc_module": ("skalgos",),
    "backreferences_dir": None,
    "download_all_examples": False,
}
