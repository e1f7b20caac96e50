#!/usr/bin/env bash
# The data loader's figures (docs/performance.md, "Data"): BPE tokenizing MB/s
# per thread, open times of a 4 GB sparse token file and a 100 MB jsonl file,
# BPE text with the token cache cold and warm.
#
#   bench/data.sh [build-dir]          (default build-bench; NO_BUILD=1 to skip the build,
#                                       BPE_ONLY=1 for the BPE tokenizing figures alone)
#
# Not a test: nothing here is timed in CI. Needs ~4 GB of sparse file space
# and ~120 MB of real space in $TMPDIR (default /tmp).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath -m "${1:-$root/build-bench}")"
if [ -z "${NO_BUILD:-}" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEXPGPU_BENCH=ON -DSEXPGPU_TESTS=OFF >/dev/null
  cmake --build "$build" --target sexpgpu-data-bench
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/sexpgpu-data-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "CPU: $(/usr/bin/python3 "$root/bench/cpu_name.py")"
"$build/sexpgpu-data-bench" "$root" "$work" ${BPE_ONLY:+bpe}
