#!/usr/bin/env bash
# Two builds of sexpgpu side by side on bench/run.sh's gpt configs: is a
# change free? Alternates A and B ROUNDS times per config (default 5; the
# order swapped every round), keeps each side's best median step_s, and
# prints A/B per config and the peak RSS of a 3-step medium run of each
# (/usr/bin/time -v).
#
#   bench/ab.sh A-BINARY B-BINARY        (ROUNDS=, QUICK=1, CONFIGS="small medium", BF16=1)
# BF16=1 trains the configs with :precision bf16 (their names get -bf16).
# Not a test: nothing here is timed in CI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
a_bin="$(realpath "$1")" b_bin="$(realpath "$2")"
work="$(mktemp -d /tmp/sexpgpu-ab.XXXXXX)"
trap 'rm -rf "$work"' EXIT
source "$root/bench/gpt_case.sh"  # configs, sx_run
rounds="${ROUNDS:-5}"
want="${CONFIGS:-tiny small medium}"
best() { /usr/bin/python3 -c "import sys; print(min(float(a) for a in sys.argv[1:] if a))" "$@"; }
echo "== $(/usr/bin/python3 "$root/bench/cpu_name.py"); A=$a_bin B=$b_bin; best of $rounds alternating rounds"
echo "| config | A s/step | B s/step | A/B |"
echo "| --- | --- | --- | --- |"
for c in "${configs[@]}"; do
  set -- $c
  [[ " $want " == *" $1 "* ]] || continue
  [ "${BF16:-0}" = 1 ] && set -- "$1-bf16" "${@:2}"
  a="" b=""
  # A then B, then B then A: the side that ran second in a round had come
  # out 2-5% slower when both sides were the same binary (A/A, this VM).
  for ((r = 1; r <= rounds; r++)); do
    for side in $([ $((r % 2)) = 1 ] && echo "A B" || echo "B A"); do
      if [ $side = A ]; then sexpgpu=$a_bin; a=$(best $a "$(sx_run "$@")"); else sexpgpu=$b_bin; b=$(best $b "$(sx_run "$@")"); fi
    done
  done
  echo "| $1 | $a | $b | $(/usr/bin/python3 -c "print(f'{$a/$b:.3f}')") |"
done
[ -d "$work/medium" ] || { sexpgpu=$a_bin; sx_run medium 512 256 6 8 128 16 1 0 >/dev/null; }
for side in A B; do
  bin=$a_bin; [ $side = B ] && bin=$b_bin
  (cd "$work/medium" && /usr/bin/time -v "$bin" run bench.sx --steps 3 --metrics "jsonl:$work/mem$side.jsonl" \
    >"$work/mem$side.txt" 2>&1) || cat "$work/mem$side.txt"
  echo "medium peak RSS $side: $(grep "Maximum resident set size" "$work/mem$side.txt" | awk '{printf "%.1f MiB", $NF/1024}')"
done
