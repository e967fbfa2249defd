"""Sphinx configuration for skalgos (builds offline; warnings are errors)."""

import os
import sys
from importlib.metadata import version as _version

os.environ.setdefault("MPLBACKEND", "Agg")
# The gallery executes every example in its fast mode (as tests/test_examples.py)
os.environ.setdefault("SKALGOS_EXAMPLES_QUICK", "1")
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
html_title = "skalgos"  # a short navbar title: the long default ran into the links
html_theme_options = {"navigation_with_keys": False, "logo": {"text": "skalgos"}}

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"


def _importable(name):
    try:
        __import__(name)
    except ImportError:
        return False
    return True


# The docs extra alone builds the site. Flower is mocked when absent (the API
# page of skalgos.federated.flower imports it). torch cannot be mocked (scipy
# and scikit-learn inspect a `torch` module when one is imported), so without
# the torch extra its two API pages are left out (and its examples shown, not run).
autodoc_mock_imports = [m for m in ("flwr",) if not _importable(m)]
HAVE_TORCH = _importable("torch")
if not HAVE_TORCH:
    exclude_patterns += [
        "api/torch.rst",
        "api/torch_second_order.rst",
        "generated/skalgos.torch.*",
    ]
    suppress_warnings = ["toc.excluded"]


# No intersphinx: the docs must build offline.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # executed: every plot_* example; without the torch extra the torch
    # examples are shown, not run
    # (SKALGOS_GALLERY_PATTERN overrides it: CI's every-extra build passes "^$",
    # none, since its docs-extra-alone build executes the gallery and its test
    # suite runs every example, the torch ones included)
    "filename_pattern": os.environ.get(
        "SKALGOS_GALLERY_PATTERN",
        r"/plot_" if HAVE_TORCH else r"^(?!.*/torch/).*/plot_",
    ),
    # Executed, so every page shows its figures; an example error fails the build.
    "plot_gallery": "True",
    "abort_on_example_error": True,
    # two examples at a time (joblib; CI has two cores); each example runs
    # in its own process, so its Numba and BLAS threads are its own
    "parallel": 2,
    "only_warn_on_example_error": False,
    "doc_module": ("skalgos",),
    "backreferences_dir": None,
    "download_all_examples": False,
}
