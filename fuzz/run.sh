#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time over a seed corpus:
#   fuzz/run.sh BUILD_DIR [SECONDS_EACH] [TARGET...]
# BUILD_DIR was configured with -DSEXPGPU_FUZZ=ON (clang) and has the targets
# built (`--target fuzzers`); with no TARGET, every fuzz_* built there runs.
# Seeds: for fuzz_reader and fuzz_eval the .sx files of examples/, std/ and
# tests/golden/; for any target, fuzz/seeds/<target>/ when it exists. The growing corpus
# is kept in BUILD_DIR/fuzz-corpus/<target> (so later runs start further on);
# a crash, a sanitizer report, a timeout or an out-of-memory is written to
# BUILD_DIR/fuzz-findings/<target>-* and makes this script exit non-zero.
# Reproduce one: BUILD_DIR/fuzz/<target> BUILD_DIR/fuzz-findings/<file>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS_EACH] [TARGET...]}" && pwd)
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$build"/fuzz/fuzz_*; do
    [ -f "$f" ] && [ -x "$f" ] && targets+=("$(basename "$f")")
  done
fi
((${#targets[@]})) || { echo "fuzz/run.sh: no fuzz_* targets built in $build/fuzz" >&2; exit 1; }

seeds=$build/fuzz-seeds
rm -rf "$seeds" && mkdir -p "$seeds"
n=0
for f in "$root"/examples/*.sx "$root"/std/*.sx "$root"/tests/golden/*.sx "$root"/tests/golden/lib/*.sx; do
  [ -f "$f" ] || continue
  # Seeds over 8 KiB would be cut at -max_len anyway.
  n=$((n + 1))
  head -c 8192 "$f" >"$seeds/seed-$n.sx"
done

status=0
for t in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$t
  findings=$build/fuzz-findings
  work=$build/fuzz-work/$t   # an empty working directory: `require` finds nothing here
  mkdir -p "$corpus" "$findings" "$work"
  dirs=("$corpus")
  case $t in fuzz_reader|fuzz_eval) dirs+=("$seeds") ;; esac
  [ -d "$root/fuzz/seeds/$t" ] && dirs+=("$root/fuzz/seeds/$t")
  echo "== $t: ${seconds}s, corpus $(ls "$corpus" | wc -l), seed dirs ${#dirs[@]}"
  # Sources are kept for the life of the process (spans point into them), so
  # memory grows slowly with every input: a generous RSS limit.
  if ! (cd "$work" && ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$build/fuzz/$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=6144 \
        -max_len=8192 -dict="$root/fuzz/sx.dict" -print_final_stats=1 \
        -artifact_prefix="$findings/$t-" "${dirs[@]}" 2>"$build/fuzz-$t.log"); then
    echo "== $t: FINDING (log: $build/fuzz-$t.log; inputs: $findings/$t-*)"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$build/fuzz-$t.log" | head -20 || true
    status=1
  else
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)|Done [0-9]+ runs" "$build/fuzz-$t.log" || true
    echo "== $t: no findings"
  fi
done
exit $status
