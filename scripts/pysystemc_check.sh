#!/usr/bin/env bash
# The models driven from Python 3.14 through pysystemc: makes (or reuses) the environment
# (scripts/pysystemc_env.sh), then, in it, builds the C++ library against pysystemc's own
# SystemC and runs examples/pysystemc_models.py, which prints the Python and pysystemc
# versions and "identical" when the models' times match the hand-worked ones.
#   bash scripts/pysystemc_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pysystemc_env.sh
root="$(realpath build/pysystemc/root)"
work="$(realpath -m build/pysystemc/work)"
mkdir -p "$work" "$root/src" "$root/work"
# Mounts in a namespace of this command's own: they end with it.
exec unshare --mount --propagation private bash -c '
  root="$1" repo="$2" work="$3"
  mount --bind /dev "$root/dev" && mount -t proc proc "$root/proc" &&
  mount --bind "$repo" "$root/src" && mount -o remount,bind,ro "$root/src" &&
  mount --bind "$work" "$root/work" &&
  exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/opt/gcc14:/opt/venv/bin:/usr/bin:/bin \
    CC=gcc-14 CXX=g++-14 bash /src/scripts/pysystemc_inside.sh' check "$root" "$(pwd)" "$work"
