#!/usr/bin/env bash
# Runs one golden test: tests/golden_run.sh SEXPGPU GOLDEN_DIR NAME WORK_DIR
#
# A golden test is NAME.sx (or NAME.gen, a bash script whose standard output
# becomes NAME.sx, generated into WORK_DIR at test time, run from tests/golden/)
# in tests/golden/,
# with:
#   NAME.expected  line 1 `exit: N`, then the exact standard error
#   NAME.stdout    the exact standard output; absent means it must be empty
#   NAME.args      optional: more arguments, split on whitespace, after the file
#   NAME.cmd       optional: the arguments replacing `check NAME.sx`
#                  (e.g. `frobnicate NAME.sx`, `knobs NAME.sx`)
#   NAME.env       optional: VAR=value lines; the run gets only these, PATH,
#                  HOME and *SAN_OPTIONS (no SEXPGPU_* from the caller leaks in);
#                  @TMP@ in a value is a folder made empty for each run
#                  (XDG_CACHE_HOME=@TMP@: a cold kernel cache); @BIN@ is
#                  the folder of the binary under test (the build folder:
#                  LD_LIBRARY_PATH=@BIN@/fake-driver loads the fake libcuda)
# It runs `sexpgpu check NAME.sx ARGS` from the directory holding NAME.sx, so
# paths in messages are short and stable.
#
# UPDATE_GOLDEN=1 writes NAME.expected and NAME.stdout from the actual run
# instead of comparing (review every change by hand: git diff tests/golden).
set -uo pipefail

sexpgpu=$1 golden=$2 name=$3 work=$4
mkdir -p "$work"
work=$(cd "$work" && pwd)
golden=$(cd "$golden" && pwd)
case $sexpgpu in /*) ;; *) sexpgpu=$(pwd)/$sexpgpu ;; esac

rundir=$golden
if [ -f "$golden/$name.gen" ]; then
  # Generated input: written into the work dir, run from there.
  rundir=$work/gen/$name
  rm -rf "$rundir" && mkdir -p "$rundir"
  if ! (cd "$golden" && bash "$name.gen") >"$rundir/$name.sx"; then
    echo "golden $name: generator $name.gen failed" >&2
    exit 1
  fi
fi

args=(check "$name.sx")
if [ -f "$golden/$name.cmd" ]; then
  read -r -d '' -a args <"$golden/$name.cmd" || true
fi
if [ -f "$golden/$name.args" ]; then
  read -r -d '' -a extra <"$golden/$name.args" || true
  args+=("${extra[@]}")
fi
envs=(PATH="$PATH" HOME="${HOME:-/root}")
# Sanitizer settings pass through (the ASan build runs these tests too).
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
  [ -n "${!v:-}" ] && envs+=("$v=${!v}")
done
tmp=$work/tmp/$name
rm -rf "$tmp" && mkdir -p "$tmp"
if [ -f "$golden/$name.env" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in ''|'#'*) continue ;; esac
    line=${line//@TMP@/$tmp}
    envs+=("${line//@BIN@/$(dirname "$sexpgpu")}")
  done <"$golden/$name.env"
fi

out=$work/out/$name
mkdir -p "$out"
# (120 s: a cold kernel cache makes `explain --device cuda` compile with NVRTC, slow on a loaded machine)
(cd "$rundir" && env -i "${envs[@]}" timeout 120 "$sexpgpu" "${args[@]}") >"$out/stdout" 2>"$out/stderr"
rc=$?
{ echo "exit: $rc"; cat "$out/stderr"; } >"$out/expected"

if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$out/expected" "$golden/$name.expected"
  if [ -s "$out/stdout" ]; then cp "$out/stdout" "$golden/$name.stdout"; else rm -f "$golden/$name.stdout"; fi
  echo "golden $name: updated (exit $rc)"
  exit 0
fi

status=0
if [ ! -f "$golden/$name.expected" ]; then
  echo "golden $name: no $name.expected; the run gave:" >&2
  cat "$out/expected" >&2
  echo "(UPDATE_GOLDEN=1 ctest -R golden/$name writes it; review it by hand)" >&2
  exit 1
fi
if ! diff -u --label "$name.expected" --label "actual" "$golden/$name.expected" "$out/expected"; then
  status=1
fi
# The graph's node count and the plan's bytes change whenever the compiler gets
# better; the slug, the parameter count and everything else must not.
plan_numbers() { sed -E 's/\b[0-9]+ nodes, plan [0-9]+\b/N nodes, plan B/g' "$1"; }
if [ -f "$golden/$name.stdout" ]; then
  diff -u --label "$name.stdout" --label "actual stdout" <(plan_numbers "$golden/$name.stdout") \
    <(plan_numbers "$out/stdout") || status=1
elif [ -s "$out/stdout" ]; then
  echo "golden $name: expected no standard output, found:"
  cat "$out/stdout"
  status=1
fi
if [ $status != 0 ]; then
  echo "golden $name: differs (command: sexpgpu ${args[*]}; UPDATE_GOLDEN=1 rewrites the expected files)"
fi
exit $status
