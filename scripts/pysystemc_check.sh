#!/usr/bin/env bash
# The models driven from Python 3.14 through pysystemc: makes (or reuses) the environment
# (scripts/pysystemc_env.sh), then, in it, builds the C++ library against pysystemc's own
# SystemC and runs examples/pysystemc_models.py, which prints the Python and pysystemc
# versions and "identical" when the models' times match the hand-worked ones, then
# examples/pysystemc_node.py, the example node with its top in Python, which prints
# "identical" when its log is the C++ example's and its VCD agrees with the log, then
# examples/pysystemc_replay.py, a generated trace through the same Python top, which
# prints "identical" when every problem's start and end are the package's own.
#   bash scripts/pysystemc_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pysystemc_env.sh
root="$(realpath build/pysystemc/root)"
work="$(realpath -m build/pysystemc/work)"
mkdir -p "$work"
# The replay's inputs, from the package on this machine's Python: a scenario, a trace and
# the package's own times for it (examples/pysystemc_replay.py compares with them).
mkdir -p "$work/replay"
.venv/bin/python scripts/pysystemc_replay_inputs.py "$work/replay/inputs.json" ||
  { echo "pysystemc_check: error: step replay inputs" >&2; exit 1; }
exec bash scripts/pysystemc_run.sh "$root" --bind "$(pwd):/src:ro" --bind "$work:/work" -- \
  bash /src/scripts/pysystemc_inside.sh
