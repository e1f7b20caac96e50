#!/usr/bin/env bash
# A change to the CPU product against the product as it is, in one process
# (bench/gemm_ab.cpp): on a VM whose speed drifts from one minute to the
# next, two binaries timed one after the other disagree by more than a
# change of a few percent; two copies of the product alternating in one
# process do not (an unchanged copy reads 0.97-1.01).
#
#   bench/gemm_ab.sh VARIANT-DIR [build-dir]     (ROUNDS=, SHAPES="M,N,K,TA ...", THREADS=, BF16=1, EXTRAS=, COLD=1)
#
# TA: 0 A [m, k] and B [k, n], 1 op(A) transposed (A [k, m]), 2 op(B)
# transposed (B [n, k]), 3 both.
#
# VARIANT-DIR holds changed copies of files of src/ at their paths (e.g.
# VARIANT-DIR/backend/cpu/gemm_driver.inc); they are found before src/'s.
# The variant is src/backend/cpu's gemm and what it calls, built at
# -O3 with the namespace sx renamed to sxB; the other side is the build's
# library (default build-bench, built Release if missing). THREADS=1 (the
# default) times the one-thread product, gemm(g, scratch); more, the pooled
# one that a step's large products take, each side on its own pool. BF16=1
# times the bf16 product (`:precision bf16`'s) instead. EXTRAS=1 gives the
# product a bias (and a bf16 product its output's round), EXTRAS=2 that and
# a gelu of C (a linear's, the MLP's first linear's). COLD=1 writes 64 MiB
# over the caches before each call (the operands then come from memory, as
# a step's activations do) and times calls one at a time. Prints, per
# shape, best / median GFLOP/s of each, the variant's speed relative to
# the build's (> 1: the variant is faster) and whether both gave the same
# bits (a shape where not fails the script). Not a test of speed: CI runs it
# once with no change, for the tool and the bits, and times nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
variant="$(realpath "$1")"
build="$(realpath -m "${2:-$root/build-bench}")"
work="$(mktemp -d /tmp/sexpgpu-gemm-ab.XXXXXX)"
trap 'rm -rf "$work"' EXIT
if [ ! -f "$build/libsx_backend_cpu.a" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEXPGPU_BENCH=ON >/dev/null
fi
cmake --build "$build" --target sx_backend_cpu sx_util >/dev/null
flags=(-O3 -DNDEBUG -std=c++20)
# A sanitized build's library calls the sanitizers' runtime: both sides and
# the link take the same options (CI runs this on build-asan too).
if grep -q '^SEXPGPU_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  flags+=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
fi
pids=()
for f in src/backend/cpu/{gemm,gemm_blocking,isa,cache_info,thread_pool,bf16_units,amx} bench/gemm_ab_variant; do
  src="$root/$f.cpp"
  [ -f "$variant/${f#src/}.cpp" ] && src="$variant/${f#src/}.cpp"  # a changed .cpp too
  g++ "${flags[@]}" -Dsx=sxB -I"$variant" -I"$root/src" -c "$src" -o "$work/$(basename "$f").o" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done  # a failed compile stops the script (set -e)
g++ "${flags[@]}" -I"$root/src" "$root/bench/gemm_ab.cpp" "$work"/*.o "$build/libsx_backend_cpu.a" "$build/libsx_util.a" -lpthread \
  -o "$work/gemm-ab"
echo "== $(/usr/bin/python3 "$root/bench/cpu_name.py"); ${THREADS:-1} thread(s); $([ "${BF16:-0}" = 1 ] && echo bf16 || echo f32); variant $variant; ${ROUNDS:-20} rounds"
echo "| shape (m x n x k) | build best / median GFLOP/s | variant best / median | variant speed, best / median | same bits |"
echo "| --- | --- | --- | --- | --- |"
for s in ${SHAPES:-1024,1024,1024,0 2048,1024,256,0 2048,256,1024,0 256,256,2048,1}; do
  IFS=, read -r m n k ta <<<"$s"
  "$work/gemm-ab" "$m" "$n" "$k" "$ta" "${ROUNDS:-20}" "${THREADS:-1}" "${BF16:-0}" "${EXTRAS:-0}" "${COLD:-0}" || status=1
done
exit "${status:-0}"
