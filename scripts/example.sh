#!/usr/bin/env bash
# Builds sexpgpu and runs the bundled example end to end:
#   scripts/example.sh [extra arguments for the example, e.g. --variant smoke]
# (For now the example is checked — read, evaluated, validated — with
# `sexpgpu check`; it becomes `sexpgpu run` once training is built.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/tmp/sexpgpu-configure.log 2>&1 \
  || { cat /tmp/sexpgpu-configure.log; exit 1; }
cmake --build build -j"${SEXPGPU_TEST_JOBS:-2}" --target sexpgpu
set -x
build/sexpgpu knobs examples/my-run.sx
build/sexpgpu check examples/my-run.sx "$@"
