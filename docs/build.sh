#!/usr/bin/env bash
# Builds the documentation site offline, with warnings as errors (a broken internal link or
# anchor, a missing page, a bad table marker is one), then runs every code example of the docs
# and checks their links again without Sphinx (tests/test_docs.py).
#
#   bash docs/build.sh [VENV]
#
# VENV (default: a new one in a temporary folder) gets the `docs` extra of pyproject.toml and
# the project's dependencies but torch: the pages and examples are read and run from this
# checkout, and an example that needs torch is skipped here and run by the test suite, whose
# environment has it. The site is docs/_build/html/index.html.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${1:-$(mktemp -d)/docs}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" - > "$venv/docs-requirements.txt" <<'PY'
import tomllib

project = tomllib.load(open("pyproject.toml", "rb"))["project"]
wanted = project["dependencies"] + project["optional-dependencies"]["docs"]
print("\n".join(r for r in wanted if not r.startswith("torch")))
PY
"$venv/bin/python" -m pip install -q -r "$venv/docs-requirements.txt"

export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# -E: read every page again, so that a page whose include or generated table changed is rebuilt.
"$venv/bin/python" -m sphinx -W --keep-going -n -E -q -b html docs docs/_build/html
"$venv/bin/python" -m pytest tests/test_docs.py -p no:cacheprovider -q
