#!/usr/bin/env bash
# Runs a command in the pysystemc root (scripts/pysystemc_env.sh) with /dev, /proc and any
# --bind folders mounted in a mount namespace of its own: the mounts end with the command,
# so nothing is left mounted in the root, and the root's g++-14 and venv come first on PATH.
#   bash scripts/pysystemc_run.sh ROOT [--bind HOST:INSIDE[:ro]]... -- COMMAND...
set -euo pipefail
root="$1"; shift
binds=()
while [ "$1" = --bind ]; do binds+=("$2"); shift 2; done
[ "$1" = -- ] || { echo "pysystemc_run: usage: ROOT [--bind HOST:INSIDE[:ro]]... -- COMMAND..." >&2; exit 2; }
shift
exec unshare --mount --propagation private bash -c '
  root="$1" count="$2"; shift 2
  mount --bind /dev "$root/dev" && mount -t proc proc "$root/proc" || exit 1
  for ((i = 0; i < count; i++)); do
    IFS=: read -r host inside mode <<< "$1"; shift
    mkdir -p "$root$inside" && mount --bind "$host" "$root$inside" || exit 1
    if [ "$mode" = ro ]; then mount -o remount,bind,ro "$root$inside" || exit 1; fi
  done
  exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/opt/gcc14:/opt/venv/bin:/usr/bin:/bin \
    CC=gcc-14 CXX=g++-14 "$@"' pysystemc_run "$root" "${#binds[@]}" "${binds[@]}" "$@"
