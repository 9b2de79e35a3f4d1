#!/usr/bin/env bash
# The models as a C++ library, checked the way a SystemC user takes them (the test job runs
# this before pytest; it needs the tools `bootstrap.sh setup` installs):
#   1. configure and build the library, its C++ unit tests and examples (build/cpp-check/);
#   2. ctest: the unit tests and the example's log against the one worked out by hand;
#   3. install into a fresh prefix (build/cpp-check/prefix); compile one file that includes every installed header;
#   4. build examples/ on its own against that prefix with find_package, run its ctest, and
#      check that nothing in it links Python;
#   5. the same against the library the Python package installed (cosim.cmake_prefix()), as a
#      user who did `pip install heteroreason-cosim` would.
# Any failure fails the job.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'cpp_check: %s\n' "$*" >&2; }

export PATH="$PWD/.venv/bin:$PATH"  # CMake and Ninja from the venv
build=build/cpp-check
# A fresh prefix each run, kept for the cppyy test (tests/test_cpp_library_cppyy.py).
prefix="$PWD/$build/prefix"
rm -rf "$prefix"

# The parameter lists the package's build generated moments ago, when they are current;
# otherwise CMake generates them with the venv's interpreter.
params=()
generated="$(ls -t build/*-*-*/generated/cosim_params.hpp 2>/dev/null | head -n 1 || true)"  # the package build's (build/<python>-<abi>-<platform>/)
current() {  # the generated header is newer than every declaration it comes from
  local source
  for source in scripts/gen_native_params.py cosim/schema/*.py; do
    [ "$1" -nt "$source" ] || return 1
  done
}
if [ -n "$generated" ] && current "$generated"; then
  params=(-DCOSIM_PARAMS_HEADER="$PWD/$generated")
elif [ -x .venv/bin/python ]; then
  params=(-DCOSIM_PARAMS_HEADER= -DPython_EXECUTABLE="$PWD/.venv/bin/python")
else
  params=(-DCOSIM_PARAMS_HEADER=)
fi

say "building the library, its tests and examples in $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" "${params[@]}" >/dev/null
cmake --build "$build" -j2
say "ctest"
(cd "$build" && ctest --output-on-failure -j2)

say "installing into $prefix"
cmake --install "$build" >/dev/null
# Every installed header's own includes resolve inside include/heteroreason/.
all="$build/all_headers.cpp"
for header in "$prefix"/include/heteroreason/*.hpp; do
  printf '#include <heteroreason/%s>\n' "$(basename "$header")"
done > "$all"
# shellcheck disable=SC2046
g++ -std=c++17 -fsyntax-only -I"$prefix/include" $(pkg-config --cflags systemc) "$all"

say "building examples/ against the installed package"
consumer="$build/consumer"
rm -rf "$consumer"
cmake -S examples -B "$consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$consumer" -j2
(cd "$consumer" && ctest --output-on-failure)
# ldd's output is taken whole first: `grep -q` stops reading at its first match, and under
# pipefail the writer's SIGPIPE would fail the test.
links="$(ldd "$consumer/heteroreason_node")"
if grep -qi python <<<"$links"; then
  say "error: the example links Python"; exit 1
fi

wheel_prefix="$(.venv/bin/python -c 'import cosim; print(cosim.cmake_prefix())')"
say "building examples/ against the package's library in $wheel_prefix"
consumer="$build/consumer-package"
rm -rf "$consumer"
cmake -S examples -B "$consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$wheel_prefix" >/dev/null
cmake --build "$consumer" -j2
(cd "$consumer" && ctest --output-on-failure)
links="$(ldd "$consumer/heteroreason_node")"
if ! grep -q "$wheel_prefix/lib/libheteroreason_models" <<<"$links"; then
  say "error: the example did not link the package's library"; exit 1
fi
say "ok"
