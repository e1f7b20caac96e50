#!/usr/bin/env bash
# THE test command: builds sexpgpu and runs every test.
#
#   scripts/test.sh           everything (25-40 minutes from scratch on 2 cores)
#   scripts/test.sh --quick   only the main build and its tests
#
# Phases, in order (each timed; the table is printed before the last phase):
#   setup   scripts/setup.sh: the Debian packages (idempotent)
#   build   build/: RelWithDebInfo, Ninja
#   asan    build-asan/: -DSEXPGPU_SANITIZE=ON (AddressSanitizer + UBSan), and its ctest
#   fuzz    build-fuzz/: every libFuzzer target (clang), each run for $SEXPGPU_FUZZ_SECONDS (60) seconds
#   test    ctest on build/ — last, so its summary is the last thing printed
# Exits non-zero when any phase fails. SEXPGPU_TEST_JOBS (2) sets the
# parallelism of builds and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${SEXPGPU_TEST_JOBS:-2}
fuzz_seconds=${SEXPGPU_FUZZ_SECONDS:-60}
quick=0
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "scripts/test.sh: unknown argument $a (try --help)" >&2; exit 2 ;;
  esac
done

phases=()
phase_start=0
begin() { phase_start=$(date +%s); echo; echo "==== $1"; }
end() { phases+=("$(printf '%-8s %5ds' "$1" $(( $(date +%s) - phase_start )))"); }
fail() { echo; echo "scripts/test.sh: FAILED in phase $1"; exit 1; }

configure() {  # configure DIR [cmake args...]
  local dir=$1; shift
  mkdir -p "$root/$dir"
  cmake -S "$root" -B "$root/$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$root/$dir/configure.log" 2>&1 \
    || { cat "$root/$dir/configure.log"; return 1; }
}

begin setup
bash scripts/setup.sh || fail setup
end setup

begin build
configure build -DSEXPGPU_SANITIZE=OFF -DSEXPGPU_FUZZ=OFF -DSEXPGPU_TESTS=ON || fail build
cmake --build build -j"$jobs" || fail build
end build

if ((!quick)); then
  begin asan
  # -O1 -g1: quicker to build, line numbers enough for the reports.
  configure build-asan -DSEXPGPU_SANITIZE=ON -DSEXPGPU_FUZZ=OFF -DSEXPGPU_TESTS=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" || fail asan
  cmake --build build-asan -j"$jobs" || fail asan
  # ASan frames are several times larger: tests that recurse on the main thread
  # get a 256 MiB stack. Leak checking is on, with no suppressions: any leak
  # fails the run. Special.Recursion is left out (the golden recursion
  # tests are disabled in tests/CMakeLists.txt for the same reason): unwinding
  # more than 64 MB of stack with an exception is beyond ASan and reports a
  # false stack-buffer-overflow (google/sanitizers#189).
  (ulimit -s 262144 2>/dev/null || true
   ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --test-dir build-asan --output-on-failure --no-label-summary -j"$jobs" -E '^Special\.Recursion$') || fail asan
  end asan

  begin fuzz
  configure build-fuzz -DSEXPGPU_FUZZ=ON -DSEXPGPU_TESTS=OFF -DSEXPGPU_SANITIZE=OFF \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" || fail fuzz
  cmake --build build-fuzz -j"$jobs" --target fuzzers || fail fuzz
  bash fuzz/run.sh build-fuzz "$fuzz_seconds" || fail fuzz
  end fuzz
fi

echo
echo "==== times so far"
printf '  %s\n' "${phases[@]}"

begin test
ctest --test-dir build --output-on-failure --no-label-summary -j"$jobs"
