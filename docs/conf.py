"""Sphinx configuration of the pytest-lessons site: Markdown pages (MyST) in docs/, built by
docs/build.sh offline with warnings as errors."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The generated reference pages read the package's own tables; the package is imported from
# this checkout (the docs' venv does not need torch, which nothing here imports).
sys.path[:0] = [str(HERE.parent), str(HERE / "_ext")]

project = "pytest-lessons"
author = "the pytest-lessons authors"
copyright = "the pytest-lessons authors"

extensions = ["myst_parser", "lessons_tables"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# The recipes are files a page includes; the build's own output and caches are not pages.
exclude_patterns = ["_build", "recipes", "README.md", ".pytest_cache"]

# GitHub's anchors (`#the-sandbox`) for headings down to level 4, so that a link works alike on
# GitHub and in the site, and a broken one is a warning (an error in the build).
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

nitpicky = True
html_theme = "furo"
html_title = "pytest-lessons"
html_static_path: list[str] = []
# Nothing is fetched: no intersphinx, no remote images, no search index from elsewhere.
html_last_updated_fmt = None

# An example elided with "..." (an XML element's attributes in docs/ci-grading.md) is not valid
# in its language: Pygments then highlights it leniently, which is all a reader needs.
suppress_warnings = ["misc.highlighting_failure"]

# Option names in prose (--pdb, --lesson-check) stay as typed: no en dashes, no curly quotes.
smartquotes = False
