#!/usr/bin/env bash
# Builds sexpgpu and runs the bundled example end to end:
#   scripts/example.sh [extra arguments for the example, e.g. --variant smoke]
# It checks the example (read, evaluated, traced, planned), then trains it on
# the CPU: 20 steps, passes at steps 0, 10 and 20, the timing and done blocks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/tmp/sexpgpu-configure.log 2>&1 \
  || { cat /tmp/sexpgpu-configure.log; exit 1; }
cmake --build build -j"${SEXPGPU_TEST_JOBS:-2}" --target sexpgpu
set -x
build/sexpgpu knobs examples/my-run.sx
build/sexpgpu check examples/my-run.sx "$@"
build/sexpgpu run examples/my-run.sx "$@"
