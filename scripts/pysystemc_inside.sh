#!/usr/bin/env bash
# Runs inside the pysystemc root (scripts/pysystemc_check.sh mounts the repository read-only
# at /src and a work folder at /work): builds the C++ library against the SystemC that
# pysystemc ships, so one kernel is in the process, then runs the pysystemc examples on it:
# the models' times, the example node with its top written in Python (its log and VCD),
# and a trace replayed through that same top (its times against the package's).
set -euo pipefail
say() { printf 'pysystemc_check: %s\n' "$*" >&2; }
native="$(/opt/venv/bin/python -c 'import importlib.util, pathlib
spec = importlib.util.find_spec("amal.eda.systemc")
print(pathlib.Path(spec.origin).parent / "_native")')"
# pkg-config's view of pysystemc's SystemC: its headers and its libsystemc.so.
mkdir -p /work/pkgconfig
cat > /work/pkgconfig/systemc.pc <<PC
Name: SystemC
Description: the SystemC kernel pysystemc ships
Version: 2.3.4
Cflags: -I$native/include
Libs: -L$native/lib -Wl,-rpath,$native/lib -lsystemc
PC
export PKG_CONFIG_PATH=/work/pkgconfig
say "building the C++ library against $native (g++-14)"
cmake -S /src -B /work/lib -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++-14 \
  -DCOSIM_CPP_TESTS=OFF -DCOSIM_RTL_KVMU=OFF -DCMAKE_INSTALL_PREFIX=/work/prefix >/work/cmake.log 2>&1 ||
  { tail -20 /work/cmake.log >&2; say "error: step configure (log: /work/cmake.log)"; exit 1; }
cmake --build /work/lib >>/work/cmake.log 2>&1 ||
  { tail -20 /work/cmake.log >&2; say "error: step build (log: /work/cmake.log)"; exit 1; }
cmake --install /work/lib >>/work/cmake.log 2>&1 || { say "error: step install"; exit 1; }
/opt/venv/bin/python /src/examples/pysystemc_models.py /work/prefix
say "the HeteroReason node with its top in Python, against examples/heteroreason_node.expected"
/opt/venv/bin/python /src/examples/pysystemc_node.py /work/prefix /work/node /src/examples/heteroreason_node.expected
say "a generated trace through the same Python top, against the package's times for it"
exec /opt/venv/bin/python /src/examples/pysystemc_replay.py /work/prefix /work/replay/inputs.json
