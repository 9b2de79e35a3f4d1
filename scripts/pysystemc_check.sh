#!/usr/bin/env bash
# The models driven from Python 3.14 through pysystemc: makes (or reuses) the environment
# (scripts/pysystemc_env.sh), then, in it, builds the C++ library against pysystemc's own
# SystemC and runs examples/pysystemc_models.py, which prints the Python and pysystemc
# versions and "identical" when the models' times match the hand-worked ones, then
# examples/pysystemc_node.py, the example node with its top in Python, which prints
# "identical" when its log is the C++ example's and its VCD agrees with the log.
#   bash scripts/pysystemc_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pysystemc_env.sh
root="$(realpath build/pysystemc/root)"
work="$(realpath -m build/pysystemc/work)"
mkdir -p "$work"
exec bash scripts/pysystemc_run.sh "$root" --bind "$(pwd):/src:ro" --bind "$work:/work" -- \
  bash /src/scripts/pysystemc_inside.sh
