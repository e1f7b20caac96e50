#!/usr/bin/env bash
# How compile and data-open times grow with the input: both must be linear.
#
#   bench/scaling.sh [sexpgpu]        (default build/sexpgpu; ROUNDS= best of, default 3)
#
# 1. `sexpgpu check` of std/nn's gpt at 128, 256, 512 and 1024 layers (d-model
#    16, so the time is the compiler's: evaluator, tracer, autodiff, planner,
#    hashing): seconds each, and the ratio 1024/128 (linear: ~8);
# 2. `sexpgpu run` of a tiny model for one step over a jsonl source of 50,000,
#    100,000 and 200,000 lines: seconds each, and the ratio 200k/50k (linear: ~4).
# Not a test: nothing here is timed in CI (the unit tests Pack.* and
# Jsonl.LargeJsonlOpensInLinearTime guard the same things with generous bounds).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sexpgpu="$(realpath "${1:-$root/build/sexpgpu}")"
rounds="${ROUNDS:-3}"
work="$(mktemp -d /tmp/sexpgpu-scaling.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$root/examples/data/train.txt" "$work/train.txt"

best_of() {  # command... -> the smallest wall time in seconds over $rounds runs
  /usr/bin/python3 - "$rounds" "$@" <<'PY'
import subprocess, sys, time
best = None
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    subprocess.run(sys.argv[2:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = time.perf_counter() - t
    best = t if best is None else min(best, t)
print(f"{best:.3f}")
PY
}

echo "== compile: sexpgpu check of a gpt (d-model 16), best of $rounds"
declare -A compile_s
for layers in 128 256 512 1024; do
  cat >"$work/gpt$layers.sx" <<SX
(require std/nn)
(defloader train :source "train.txt" :tokenizer (chars "abcdefghijklmnopqrstuvwxyz .,;\n!") :seq-len 16)
(defmodel m [tokens targets]
  (cross-entropy (gpt tokens :vocab (vocab train) :d-model 16 :layers $layers :heads 2 :seq-len 16) targets))
(defrun r :model m :loader train :batch 2 :steps 1 :optimizer (adamw :lr 0.001) :seed 1)
SX
  compile_s[$layers]=$(cd "$work" && best_of "$sexpgpu" check "gpt$layers.sx")
  echo "   layers $layers: ${compile_s[$layers]} s"
done
echo "   ratio 1024/128: $(/usr/bin/python3 -c "print(f'{${compile_s[1024]} / ${compile_s[128]}:.1f}')") (linear: 8)"

echo "== data: sexpgpu run over a jsonl source (one step of a tiny model), best of $rounds"
declare -A open_s
for lines in 50000 100000 200000; do
  /usr/bin/python3 -c "
import sys
with open('$work/d$lines.jsonl', 'w') as f:
    for i in range($lines): f.write('{\"text\": \"the quick brown fox jumps over the lazy dog %d\"}\n' % (i % 10))"
  cat >"$work/jsonl$lines.sx" <<SX
(defloader train :source "d$lines.jsonl" :format jsonl :tokenizer bytes :seq-len 8)
(defmodel m [tokens targets] (cross-entropy (matmul (embed tokens (param "e" [256 8])) (param "h" [8 256])) targets))
(defrun r :model m :loader train :batch 2 :steps 1 :optimizer (sgd :lr 0.1))
SX
  open_s[$lines]=$(cd "$work" && best_of "$sexpgpu" run "jsonl$lines.sx")
  echo "   lines $lines: ${open_s[$lines]} s"
done
echo "   ratio 200k/50k: $(/usr/bin/python3 -c "print(f'{${open_s[200000]} / ${open_s[50000]}:.1f}')") (linear: 4)"
