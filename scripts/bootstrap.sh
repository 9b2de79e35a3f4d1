#!/usr/bin/env bash
# Sets everything up on a fresh Debian machine, then runs one job:
#   bash scripts/bootstrap.sh run    the main job on built-in defaults (`cosim report`)
#   bash scripts/bootstrap.sh test   the whole test suite, the recorder's and Ray's tests included,
#                                    after the C++ library's build, ctest and install (cpp_check.sh);
#                                    it installs GTKWave, Xvfb and cppyy so that no test skips;
#                                    then the models in pysystemc on Python 3.14
#                                    (scripts/pysystemc_check.sh, its environment cached in build/)
#   bash scripts/bootstrap.sh setup  set-up only (the package and its core test tools)
# Set-up installs libsystemc-dev (apt-get as root, or sudo) when it is missing, and the
# KVMU's RTL tools (verilator, iverilog, yosys) when it can, makes
# .venv, and builds and installs the package. `test` adds the [record] and [ray] extras,
# torch as its CPU build: from PyTorch's CPU wheel index when it is reachable, else from the
# configured index (COSIM_TORCH, default torch==2.13.0, names what to ask it for). Nothing
# installs a GPU build. A second run skips what is done and rebuilds only when C++ or build
# files changed.
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

# The KVMU's RTL tools: Verilator (the Verilated KVMU, fpga.kvmu: rtl), Icarus Verilog (its
# cocotb tests) and Yosys (its synthesis test). Wanted, not required: without them the build
# has the behavioural KVMU only and those tests skip, saying why.
ensure_rtl_tools() {
  local missing=()
  command -v verilator >/dev/null 2>&1 || missing+=(verilator)
  command -v iverilog >/dev/null 2>&1 || missing+=(iverilog)
  command -v yosys >/dev/null 2>&1 || missing+=(yosys)
  if [ ${#missing[@]} -eq 0 ]; then return; fi
  say "installing ${missing[*]} with apt-get (the KVMU's RTL)"
  if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    say "note: could not install ${missing[*]}: fpga.kvmu: rtl and the RTL tests need them"
  fi
}

build_stamp() {
  # Verilator's presence is part of it: installed later, it brings the KVMU's RTL in.
  { cat pyproject.toml CMakeLists.txt models/*.?pp models/*/*.?pp bindings/* scripts/gen_native_params.py \
      cosim/schema/*.py rtl/kvmu.v; command -v verilator || true; } | sha256sum | cut -d' ' -f1
}

pip() { .venv/bin/python -m pip "$@"; }

ensure_torch_cpu() {
  if .venv/bin/python -c 'import torch' 2>/dev/null; then return; fi
  say "installing torch (CPU build)"
  if ! pip install -q --retries 0 --timeout 20 --index-url https://download.pytorch.org/whl/cpu "torch>=2.1" 2>/dev/null; then
    say "PyTorch's CPU index is out of reach; asking the configured index for ${COSIM_TORCH:-torch==2.13.0}"
    pip install -q "${COSIM_TORCH:-torch==2.13.0}"
  fi
}

# Installs the package (editable) with the extras in $1, building it when C++ or build files
# changed since the last build or the extras differ.
ensure_venv() {
  local extras="$1"
  if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    python3 -m venv .venv
  fi
  local stamp_file=.venv/.cosim-build-stamp
  local built="" have="" stamp
  stamp="$(build_stamp)"
  if [ -f "$stamp_file" ]; then read -r built have < "$stamp_file" || true; fi
  local missing=0 extra
  for extra in ${extras//,/ }; do
    case ",$have," in *",$extra,"*) ;; *) missing=1 ;; esac
  done
  if [ "$built" != "$stamp" ] || [ "$missing" = 1 ] || ! .venv/bin/python -c 'import cosim._native' 2>/dev/null; then
    # Keep what an earlier set-up installed (a later `run` after `test` drops no extra).
    for extra in ${have//,/ }; do
      case ",$extras," in *",$extra,"*) ;; *) extras="$extras,$extra" ;; esac
    done
    say "installing build tools and the package (editable, extras: $extras)"
    pip install -q --upgrade pip
    pip install -q "scikit-build-core>=0.10" "pybind11>=2.12" cmake ninja
    # torch first, as a CPU build: asked for by [record], a resolver would take a GPU build.
    case "$extras" in *record*) ensure_torch_cpu ;; esac
    pip install -q --no-build-isolation -e ".[$extras]"
    echo "$stamp $extras" > "$stamp_file"
  fi
}

# What the whole suite needs beyond the package, so that no test skips on a fresh machine:
# GTKWave (vcd2fst, and gtkwave itself under Xvfb, for the waveform save file's tests) and
# cppyy (the installed C++ library loaded into Python, as pysystemc loads it).
ensure_test_tools() {
  local missing=()
  command -v vcd2fst >/dev/null 2>&1 || missing+=(gtkwave)
  command -v xvfb-run >/dev/null 2>&1 || missing+=(xvfb xauth)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
  if ! .venv/bin/python -c 'import cppyy' 2>/dev/null; then
    say "installing cppyy (the C++ library's Python test)"
    pip install -q "cppyy>=3.5"
  fi
}

ensure_system
ensure_rtl_tools
case "$job" in
  test) ensure_venv "test,record,ray"; ensure_test_tools ;;
  *) ensure_venv "test" ;;
esac

case "$job" in
  setup) ;;
  run) exec .venv/bin/cosim report "$@" ;;
  test) bash scripts/cpp_check.sh; bash scripts/pysystemc_check.sh; exec .venv/bin/python -m pytest -q "$@" ;;
  *) say "unknown job '$job' (run, test or setup)"; exit 2 ;;
esac
