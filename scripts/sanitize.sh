#!/usr/bin/env bash
# Builds the extension with AddressSanitizer and UBSan into its own venv
# (.venv-asan, build dir build/asan) and runs the test suite under them.
#   bash scripts/sanitize.sh [pytest args]
# Leak detection is off: CPython keeps allocations alive on purpose. Left out:
# the Ray test (Ray's own binaries would inherit the sanitizer runtime) and the
# tests marked coroutine_unwind: Debian's SystemC switches thread stacks with
# QuickThreads, which ASan is not told about, so an exception thrown inside a
# SystemC process trips ASan's own stack bookkeeping (a false report in
# __interceptor_sigaltstack). Those paths still run in the normal suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh setup >/dev/null
if [ ! -x .venv-asan/bin/python ]; then python3 -m venv .venv-asan; fi
.venv-asan/bin/python -m pip install -q --upgrade pip
.venv-asan/bin/python -m pip install -q "scikit-build-core>=0.10" "pybind11>=2.12" cmake ninja
.venv-asan/bin/python -m pip install -q --no-build-isolation \
  -Ccmake.define.COSIM_SANITIZE=ON -Cbuild-dir=build/asan -Ccmake.build-type=RelWithDebInfo ".[test]"
runtime="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Run from outside the source tree so that the sanitized install is what gets imported.
tests="$PWD/tests"
cd "$(mktemp -d)"
LD_PRELOAD="$runtime" "$OLDPWD/.venv-asan/bin/pytest" -q -p no:cacheprovider \
  -c "$OLDPWD/pyproject.toml" --rootdir "$OLDPWD" -k "not ray" -m "not coroutine_unwind" "$tests" "$@"
