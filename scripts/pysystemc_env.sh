#!/usr/bin/env bash
# Makes the environment in which pysystemc drives the models: a Debian testing root (made
# with debootstrap from this machine's own apt sources) holding Python 3.14, a venv with
# pysystemc and the cppyy it brings, g++-14 (cppyy 3.5's interpreter cannot parse the
# headers of Debian testing's newer default g++) and the tools that build the C++ library.
#   bash scripts/pysystemc_env.sh [ROOT]     (default ROOT: build/pysystemc/root)
# It is cached: a second run with the same recipe does nothing; a changed recipe (this file)
# builds the root again. Each step that fails says which. Needs root (debootstrap, chroot).
# Nothing of the main package needs it: the package runs on Python 3.10 and newer.
set -euo pipefail
cd "$(dirname "$0")/.."

# The recipe: what the root holds.
SUITE=testing
PACKAGES=python3.14,python3.14-venv,python3.14-dev,g++-14,ca-certificates,cmake,ninja-build,pkg-config
PYSYSTEMC=pysystemc==0.16.0

root="$(realpath -m "${1:-build/pysystemc/root}")"
stamp_file="$root.stamp"
say() { printf 'pysystemc_env: %s\n' "$*" >&2; }
fail() { say "error: $*"; exit 1; }

stamp="$(sha256sum "$0" | cut -d' ' -f1)"
if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] && [ -f "$root/opt/venv/pyvenv.cfg" ] && [ -x "$root/usr/bin/python3.14" ]; then
  exit 0
fi
[ "$(id -u)" = 0 ] || fail "making the root needs root (debootstrap and chroot)"

# Debian's mirror as this machine's apt sources name it (deb822 .sources or one-line lists);
# no mirror is written here.
mirror() {
  local uri
  uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {for (i = 2; i <= NF; i++) print $i}' |
         grep -E '/debian/?$' | head -n1 || true)"
  if [ -z "$uri" ]; then
    uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
           awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) {print $i; break}}' |
           grep -E '/debian/?$' | head -n1 || true)"
  fi
  [ -n "$uri" ] || fail "step mirror: no Debian mirror in /etc/apt/sources.list*"
  echo "$uri"
}

in_root() { bash scripts/pysystemc_run.sh "$root" -- "$@"; }

if ! command -v debootstrap >/dev/null 2>&1; then
  say "installing debootstrap with apt-get"
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; } ||
    fail "step debootstrap: cannot install it with apt-get"
fi

rm -rf "$root" "$stamp_file"
mkdir -p "$(dirname "$root")"
log="$root.log"
say "making a Debian $SUITE root in $root (about 2 minutes; log: $log)"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$(mirror)" >"$log" 2>&1 ||
  fail "step debootstrap: see $log"
# The network as this machine reaches it: its resolver, its CA bundle and its pip settings.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$root/etc/pip.conf"; fi
# cppyy finds its compiler as c++ on PATH: g++-14, not the suite's default.
mkdir -p "$root/opt/gcc14"
for tool in c++:g++-14 g++:g++-14 cc:gcc-14 gcc:gcc-14; do
  ln -sf "/usr/bin/${tool#*:}" "$root/opt/gcc14/${tool%%:*}"
done
say "installing $PYSYSTEMC and cppyy on Python 3.14 (about 2.5 minutes)"
in_root /usr/bin/python3.14 -m venv /opt/venv >>"$log" 2>&1 || fail "step venv: see $log"
in_root /opt/venv/bin/python -m pip install -q "$PYSYSTEMC" >>"$log" 2>&1 || fail "step pip ($PYSYSTEMC): see $log"
in_root /opt/venv/bin/python -c 'import amal.eda.systemc' >>"$log" 2>&1 || fail "step import (pysystemc): see $log"
echo "$stamp" > "$stamp_file"
say "ready: $root"
