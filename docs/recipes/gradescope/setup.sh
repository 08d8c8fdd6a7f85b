#!/usr/bin/env bash
# Gradescope autograder image setup: runs once when the image is built.
# Zip this folder's two scripts with your course's exercises/ folder as the autograder.
set -euo pipefail
apt-get update -q && apt-get install -y -q python3 python3-venv python3-pip
python3 -m venv /autograder/venv
# The CPU build of torch: Gradescope machines have no GPU.
/autograder/venv/bin/pip install -q torch==2.13.0
/autograder/venv/bin/pip install -q pytest-lessons
