#!/usr/bin/env bash
# Gradescope autograder image setup: runs once when the image is built, with the autograder
# zip (made by make_autograder.sh) unpacked in /autograder/source.
# AUTOGRADER_ROOT exists only so the recipe can be tried outside Gradescope.
set -euo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
venv="$root/venv"
if [ ! -x "$venv/bin/python" ]; then
  apt-get update -q && apt-get install -y -q python3 python3-venv python3-pip
  python3 -m venv "$venv"
fi
# PyTorch's CPU build, from PyTorch's own index: Gradescope machines have no GPU, and the
# torch on PyPI for Linux is the CUDA build (gigabytes). The image is built once, so there is
# no download to cache between submissions.
"$venv/bin/python" -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
# pytest-lessons is not on PyPI: its wheel ships inside the autograder zip.
"$venv/bin/python" -m pip install "$root"/source/pytest_lessons-*.whl
