#!/usr/bin/env bash
# Sets everything up on a fresh Debian machine, then runs one job:
#   bash scripts/bootstrap.sh run    the main job on built-in defaults
#   bash scripts/bootstrap.sh test   the test suite
#   bash scripts/bootstrap.sh setup  set-up only
# Set-up installs libsystemc-dev (apt-get as root, or sudo) when it is missing,
# makes .venv, and builds and installs the package with its test extras. A second
# run skips what is already done and rebuilds only when C++ or build files changed.
set -euo pipefail
cd "$(dirname "$0")/.."
job="${1:-run}"
shift || true

say() { printf 'bootstrap: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo "$@"
  else return 1; fi
}

apt_install() {
  say "installing $* with apt-get"
  if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }; then
    say "error: cannot install $* (needs root or passwordless sudo)."
    say "install them yourself: sudo apt-get install $*"
    exit 1
  fi
}

ensure_system() {
  local missing=()
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  pkg-config --exists systemc 2>/dev/null || missing+=(libsystemc-dev)
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

build_stamp() {
  cat pyproject.toml CMakeLists.txt models/*.?pp models/*/*.?pp bindings/* scripts/gen_native_params.py cosim/config/_declarations.py | sha256sum | cut -d' ' -f1
}

ensure_venv() {
  if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    python3 -m venv .venv
  fi
  local stamp_file=.venv/.cosim-build-stamp
  local stamp
  stamp="$(build_stamp)"
  if [ ! -f "$stamp_file" ] || [ "$(cat "$stamp_file")" != "$stamp" ] || ! .venv/bin/python -c 'import cosim._native' 2>/dev/null; then
    say "installing build tools and the package (editable, with test extras)"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q "scikit-build-core>=0.10" "pybind11>=2.12" cmake ninja
    # The CPU build of torch that this workplace keeps on disk (a range would fetch a CUDA build).
    .venv/bin/python -m pip install -q "torch==2.13.0" || say "warning: torch 2.13.0 not installable here; trying any torch"
    .venv/bin/python -m pip install -q --no-build-isolation -e ".[test]"
    echo "$stamp" > "$stamp_file"
  fi
}

ensure_system
ensure_venv

case "$job" in
  setup) ;;
  run) exec .venv/bin/cosim report "$@" ;;
  test) exec .venv/bin/python -m pytest -q "$@" ;;
  *) say "unknown job '$job' (run, test or setup)"; exit 2 ;;
esac
