#!/usr/bin/env bash
# Makes the Gradescope autograder zip: this folder's setup.sh and run_autograder, the course's
# exercises/ folder (the full one, with references and hidden cases: learners never see the
# autograder) and the pytest-lessons wheel, since pytest-lessons is not on PyPI.
# Usage, from a checkout of pytest-lessons:
#   bash docs/recipes/gradescope/make_autograder.sh PATH/TO/COURSE/exercises autograder.zip
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
project="$(cd "$here/../../.." && pwd)"
exercises="$(cd "$1" && pwd)"
zip_path="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
python="${PYTHON:-python3}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
"$python" -m pip wheel -q --no-deps --wheel-dir "$stage" "$project"
cp "$here/setup.sh" "$here/run_autograder" "$stage/"
cp -r "$exercises" "$stage/exercises"
find "$stage/exercises" -name __pycache__ -prune -exec rm -rf {} +
rm -f "$zip_path"
(cd "$stage" && "$python" -m zipfile -c "$zip_path" setup.sh run_autograder exercises pytest_lessons-*.whl)
echo "$zip_path"
