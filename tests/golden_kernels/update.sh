#!/usr/bin/env bash
# Rewrites the golden generated sources (tests/golden_kernels/*.cu) from the
# current printer; review the change with `git diff tests/golden_kernels`.
#   tests/golden_kernels/update.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
cmake --build "$build" --target sx_codegen_tests
SEXPGPU_UPDATE_GOLDEN_KERNELS=1 "$build/tests/simt/sx_codegen_tests" --gtest_filter='*GoldenKernels*'
"$build/tests/simt/sx_codegen_tests" --gtest_filter='*GoldenKernels*'
git -C "$root" diff --stat -- tests/golden_kernels
