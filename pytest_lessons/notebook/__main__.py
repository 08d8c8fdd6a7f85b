"""``python -m pytest_lessons.notebook NOTEBOOK FOLDER``: a learner's notebook as their folder of
submissions (see :func:`pytest_lessons.notebook.main`)."""

from __future__ import annotations

import sys

from pytest_lessons.notebook.submission import main

if __name__ == "__main__":
    sys.exit(main())
