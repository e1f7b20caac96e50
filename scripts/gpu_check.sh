#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (issue #19): run it there in
# one call, from the repository root, with the build folder carried:
#
#   scripts/gpu_check.sh --pack DIR      (here, before the call: DIR to carry)
#   scripts/gpu_check.sh [--dry-run] [--budget SECONDS] [--build DIR]
#
# --pack writes DIR/carried.tar.xz (default gpu-carry/; about 19 MB, under
# the 64 MiB a call carries): the stripped sexpgpu and ops test binary from
# build/, and in lib/ every shared library they load beside glibc and the C++
# runtime (a CUDA image has another distribution's libfmt, libicu, libgloo,
# OpenBLAS...); name DIR in the call's `carry` and pass `--build DIR` there,
# where the archive is unpacked into a temporary folder first.
#
# Stages, each under `timeout` and logged (into $OUT/gpu_check.log, one file,
# since only 8 files come back from the machine):
#   preflight   OS, glibc, the GPU (nvidia-smi), where the CUDA libraries are
#   binary      the carried sexpgpu tried first; if it does not start there
#               (glibc, libfmt), a cmake + ninja build there (build-gpu/)
#   doctor      sexpgpu doctor: the devices line
#   ceilings    the bf16 GEMM and device copy ceilings (PyTorch, same machine)
#   device      whether `run --device cuda` opens the real device; if it is
#               refused, every stage below that needs it says so and runs nothing
#   train       tiny and small runs, cuda against cpu (f32 1e-5 relative)
#   repeat      two cuda runs: the same loss, bit for bit, at every step
#   gpt2        GPT-2 small, bf16, tokens/s and MFU: sexpgpu
#   torch       the same with PyTorch eager (SDPA flash)
#   ops         every op on the real device against the reference (the ops
#               tests with SEXPGPU_CUDA_EMULATE=0: f32 1e-5, tf32 1e-3, bf16 1e-2)
#   torch-compile  torch.compile, if the time allows
#   table       every stage's outcome and the speed table, printed last
# The whole run ends within --budget seconds (default 360: under the 8
# minutes the issue allows, and short enough that a lease of 15 minutes holds
# the machine's start and a second try): each stage's timeout is cut to what
# is left.
# --dry-run (this machine, CI): checks the plan and the binaries and prints
# the stages it would run, running none of them.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dry=0 budget=360 build="$root/build" pack=""
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1 ;;
    --budget) budget=$2; shift ;;
    --build) build=$2; shift ;;
    --pack) pack=${2:-gpu-carry}; shift ;;
    -h|--help) sed -n "2,/^set -uo/p" "$0" | sed "\$d"; exit 0 ;;
    *) echo "gpu_check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$pack" ]; then
  [ -x "$build/sexpgpu" ] || { echo "gpu_check: no $build/sexpgpu to pack" >&2; exit 1; }
  staging="$(mktemp -d /tmp/gpu_pack.XXXXXX)" && mkdir -p "$staging/lib" "$pack" || exit 1
  for b in sexpgpu sx_backend_cpu_tests; do
    [ -x "$build/$b" ] || continue
    strip -o "$staging/$b" "$build/$b" || exit 1
    ldd "$build/$b" | awk '$3 ~ /^\// {print $3}' |
      grep -vE '/(ld-linux[^/]*|libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' |
      xargs -r cp -L -t "$staging/lib" || exit 1
  done
  tar -C "$staging" -cJf "$pack/carried.tar.xz" . || exit 1
  rm -rf "$staging"; ls -la "$pack/carried.tar.xz"; exit 0
fi
build="$(cd "$build" 2>/dev/null && pwd || echo "$build")"  # the stages run in other folders
case $budget in ''|*[!0-9]*) echo "gpu_check: --budget needs whole seconds, found '$budget'" >&2; exit 2 ;; esac

out="${OUT:-$root/gpu_check_out}"
mkdir -p "$out"
work="$(mktemp -d /tmp/gpu_check.XXXXXX)"
trap 'rm -rf "$work"' EXIT
log="$out/gpu_check.log" results="$out/results.tsv" table="$out/table.txt"
: >"$log"; : >"$results"; : >"$table"
start=$(date +%s) deadline=$(( $(date +%s) + budget ))
reserve=10  # kept for the table
python=python3
[ -x /opt/torch/.venv/bin/python3 ] && python=/opt/torch/.venv/bin/python3
# A packed build: its binaries and the libraries the machine may lack.
if [ -f "$build/carried.tar.xz" ]; then
  mkdir -p "$work/carried" && tar -C "$work/carried" -xJf "$build/carried.tar.xz" && build="$work/carried"
fi
# Its libraries for its binaries alone (wrappers), not for PyTorch's python beside them.
if [ -d "$build/lib" ]; then
  mkdir -p "$work/wrapped"
  for b in sexpgpu sx_backend_cpu_tests; do
    [ -x "$build/$b" ] || continue
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s/%s" "$@"\n' \
      "$build" "$build" "$b" >"$work/wrapped/$b" && chmod +x "$work/wrapped/$b"
  done
  build="$work/wrapped"
fi
sexpgpu="$build/sexpgpu"
device_refusal=""  # why the real device cannot be used, once the device stage knows

say() { echo "$*" | tee -a "$log"; }
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$results"; say "== $1: $2${3:+ — $3}"; }

# stage NAME LIMIT_S COMMAND...: runs COMMAND under timeout (cut to the time
# left), its output appended to the log; records ok, failed (rc) or timeout.
stage() {
  local name=$1 limit=$2; shift 2
  local left=$(( deadline - $(date +%s) - reserve ))
  (( limit > left )) && limit=$left
  if (( dry )); then
    printf 'would run %-13s timeout %4ss: %s\n' "$name" "$limit" "$*" | tee -a "$log"
    return 0
  fi
  if (( limit < 5 )); then record "$name" skipped "no time left in the ${budget}s budget"; return 1; fi
  say "== $name (timeout ${limit}s): $*"
  local t0=$(date +%s) rc
  # The stages are functions of this script: exported, run by a child bash.
  timeout -k 5 "$limit" bash -c '"$@"' stage "$@" >"$work/$name.out" 2>&1
  rc=$?
  cat "$work/$name.out" >>"$log"
  local took=$(( $(date +%s) - t0 ))
  case $rc in
    0) record "$name" ok "${took}s" ;;
    124|137) record "$name" timeout "stopped after ${limit}s" ;;
    *) record "$name" failed "exit $rc after ${took}s; last line: $(tail -n 1 "$work/$name.out")" ;;
  esac
  return $rc
}

# A stage that needs the real device: runs only when the device stage opened it.
device_stage() {
  local name=$1
  if (( !dry )) && [ -n "$device_refusal" ]; then
    record "$name" "not run" "the real device is not available: $device_refusal"
    return 1
  fi
  stage "$@"
}

# ---- the experiments (written into $work; the data is generated, no download)
make_experiment() {  # dir vocab d layers heads seq batch steps precision
  local dir=$1 vocab=$2 d=$3 layers=$4 heads=$5 seq=$6 batch=$7 steps=$8 precision=$9
  mkdir -p "$dir"
  "$python" - "$dir/tokens.bin" "$vocab" <<'PY'
import random, struct, sys
r, v = random.Random(5), int(sys.argv[2])
toks = [r.randrange(v)]
for _ in range(600000):  # a noisy affine sequence: something to learn
    toks.append((toks[-1] * 5 + 3) % v if r.random() < 0.7 else r.randrange(v))
open(sys.argv[1], "wb").write(struct.pack("<%dH" % len(toks), *toks))
PY
  cat >"$dir/run.sx" <<SX
;; generated by scripts/gpu_check.sh
(require std/nn)
(defloader train :source "tokens.bin" :format tokens-u16 :vocab $vocab :seq-len $seq)
(defmodel m [tokens targets]
  (cross-entropy (gpt tokens :vocab (vocab train) :d-model $d :layers $layers :heads $heads :seq-len $seq)
                 targets))
(defrun check :model m :loader train :batch $batch :steps $steps
  :optimizer (adamw :lr 3e-4 :weight-decay 0.1) :precision $precision :seed 1)
SX
}

# sx_run DIR DEVICE TAG [ARGS...]: one run, its metrics in DIR/TAG.jsonl.
sx_run() {
  local dir=$1 device=$2 tag=$3; shift 3
  (cd "$dir" && "$sexpgpu" run run.sx --device "$device" --metrics "jsonl:$dir/$tag.jsonl" "$@")
}

# compare_losses A.jsonl B.jsonl TOLERANCE: every step's loss, relative.
compare_losses() {
  "$python" - "$@" <<'PY'
import json, sys
def losses(p):
    return [r["train/loss"] for r in map(json.loads, open(p)) if r.get("kind") == "step"]
a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if not a or len(a) != len(b):
    sys.exit(f"steps differ: {len(a)} against {len(b)}")
print(f"{'step':>5} {'first':>14} {'second':>14} {'relative':>10}")  # side by side: cpu, then cuda
for i, (x, y) in enumerate(zip(a, b)):
    if i < 5 or i == len(a) - 1:
        print(f"{i + 1:>5} {x:>14.8g} {y:>14.8g} {abs(x - y) / max(abs(x), 1e-30):>10.3g}")
worst = max(abs(x - y) / max(abs(x), 1e-30) for x, y in zip(a, b))
print(f"{len(a)} steps, worst relative difference {worst:.3g} (tolerance {tol:g})")
sys.exit(0 if worst <= tol else 1)
PY
}

# ---- stages
preflight() {
  uname -a; cat /etc/os-release 2>/dev/null | head -n 2; ldd --version 2>&1 | head -n 1
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv 2>&1
  echo "-- the loader's CUDA libraries"; ldconfig -p | grep -E 'libcuda\.so|libcublasLt\.so|libnvrtc\.so|libnccl\.so' || true
  echo "-- in the toolkits and venvs"
  ls -d /usr/local/cuda*/lib64/lib{cublasLt,nvrtc}.so.* /usr/local/nvidia/lib64/libcuda.so* 2>/dev/null || true
  ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib/lib{cublasLt,nvrtc}.so.* 2>/dev/null || true
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
  command -v cmake ninja nvcc
}

binary() {
  if "$sexpgpu" help >/dev/null 2>&1; then
    echo "the carried $sexpgpu starts here"; return 0
  fi
  echo "the carried $sexpgpu does not start here:"; "$sexpgpu" help 2>&1 | head -n 3
  echo "-- building there (build-gpu/)"
  cmake -S "$root" -B "$root/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEXPGPU_TESTS=ON \
    -DSEXPGPU_SANITIZE=OFF -DSEXPGPU_FUZZ=OFF && ninja -C "$root/build-gpu" sexpgpu sx_backend_cpu_tests
}

device_probe() {
  make_experiment "$work/probe" 64 32 1 2 16 2 1 f32
  sx_run "$work/probe" cuda probe --steps 1
}

ops() {
  local t="$build/sx_backend_cpu_tests"
  [ -x "$t" ] || { echo "no ops test binary at $t (build with -DSEXPGPU_TESTS=ON)"; return 1; }
  # SEXPGPU_CUDA_EMULATE=0: the tests' cuda device is the real GPU (test_util.h), each op against the
  # reference: f32 1e-5 (the reference's bits on the emulated device), tf32 1e-3, bf16 1e-2.
  SEXPGPU_CUDA_EMULATE=0 "$t" --gtest_filter='CpuOps.*:EveryOp/OpGrads.*:Devices/EveryDevice.*' --gtest_brief=1
}

train_against_cpu() {
  local size rc=0
  make_experiment "$work/tiny" 64 32 1 2 16 4 20 f32
  make_experiment "$work/small" 512 128 2 4 64 8 20 f32
  for size in tiny small; do
    echo "-- $size: --device cpu against --device cuda (the kernels compiled with NVRTC, cuBLASLt's products)"
    sx_run "$work/$size" cpu cpu && sx_run "$work/$size" cuda cuda 2>"$work/$size/cuda.err" &&
      compare_losses "$work/$size/cpu.jsonl" "$work/$size/cuda.jsonl" 1e-5 || rc=1
    grep -E '^(lowering|timing kernels|memory: peak)' "$work/$size/cuda.err" || cat "$work/$size/cuda.err"
  done
  return $rc
}

# same_bits A.jsonl B.jsonl: every step's loss and every eval, as written (shortest round trip: the bits).
same_bits() {
  "$python" - "$@" <<'PY'
import json, sys
def numbers(p):
    recs = [r for r in map(json.loads, open(p)) if r.get("kind") in ("step", "eval")]
    return [json.dumps({k: v for k, v in r.items() if "loss" in k or k.startswith("eval/")}) for r in recs]
a, b = numbers(sys.argv[1]), numbers(sys.argv[2])
print(f"the same bits at all {len(a)} records" if a == b and a else f"differ: {a[:3]} against {b[:3]}")
sys.exit(0 if a == b and a else 1)
PY
}

repeat_bits() {
  local d="$work/small"
  [ -f "$d/run.sx" ] || make_experiment "$d" 512 128 2 4 64 8 20 f32
  sx_run "$d" cuda again1 && sx_run "$d" cuda again2 && same_bits "$d/again1.jsonl" "$d/again2.jsonl"
}

gpt2_batch=16 gpt2_steps=10 gpt2_warmup=3
gpt2_sexpgpu() {
  make_experiment "$work/gpt2" 50257 768 12 12 1024 "$gpt2_batch" $((gpt2_steps + gpt2_warmup)) bf16
  sx_run "$work/gpt2" cuda gpt2 || return 1
  "$python" - "$work/gpt2/gpt2.jsonl" "$gpt2_warmup" "$gpt2_batch" "$(ceiling)" \
    "$("$python" "$root/bench/torch_gpt2.py" flops)" >"$work/gpt2.json" <<'PY'
import json, statistics, sys
s = [r["step_s"] for r in map(json.loads, open(sys.argv[1])) if r.get("kind") == "step"][int(sys.argv[2]):]
tok_s = int(sys.argv[3]) * 1024 / statistics.median(s)
peak, fpt = float(sys.argv[4]), float(sys.argv[5])
print(json.dumps({"system": "sexpgpu", "tok_s": round(tok_s), "mfu": round(tok_s * fpt / (peak * 1e12), 4) if peak else None}))
PY
  cat "$work/gpt2.json"
}

measure_ceilings() {
  set -o pipefail
  "$python" "$root/bench/torch_gpt2.py" ceilings | tee "$work/ceilings.json"
}

# The measured bf16 GEMM ceiling in TFLOP/s (0 when it was not measured).
ceiling() { "$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["gemm_bf16_tflops"])' \
  "$work/ceilings.json" 2>/dev/null || echo 0; }

torch_side() {  # eager|compile
  set -o pipefail
  local flag=""; [ "$1" = compile ] && flag=--compile
  "$python" "$root/bench/torch_gpt2.py" train $flag --batch "$gpt2_batch" --steps "$gpt2_steps" \
    --warmup "$gpt2_warmup" --peak-tflops "$(ceiling)" | tee "$work/torch-$1.json"
}

print_table() {
  {
    echo "gpu_check: $(date -u +%FT%TZ), $(( $(date +%s) - start ))s of ${budget}s"
    printf '%-10s %-8s %s\n' stage outcome detail
    while IFS=$'\t' read -r name outcome detail; do printf '%-10s %-8s %s\n' "$name" "$outcome" "$detail"; done <"$results"
    [ -s "$work/ceilings.json" ] && echo "ceilings: $(cat "$work/ceilings.json")"
    echo
    echo "GPT-2 small (124M shapes, d 768, 12 layers, 12 heads, vocab 50257, T 1024), bf16, AdamW, batch $gpt2_batch"
    printf '| %-24s | %12s | %6s |\n' system tokens/s MFU
    printf '| %-24s | %12s | %6s |\n' --- --- ---
    printf '| %-24s | %12s | %6s |\n' "llm.c (H100, notes)" 468000 "~38%"
    local f
    for f in "$work/gpt2.json" "$work/torch-eager.json" "$work/torch-compile.json"; do
      [ -s "$f" ] || continue
      "$python" - "$f" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
mfu = f"{100 * r['mfu']:.1f}%" if r.get("mfu") else "-"
print(f"| {r['system']:<24} | {r['tok_s']:>12} | {mfu:>6} |")
PY
    done
  } >"$table"
  cat "$table" | tee -a "$log"
}

# ---- the plan
export -f make_experiment sx_run compare_losses same_bits preflight binary device_probe ops train_against_cpu repeat_bits \
  gpt2_sexpgpu measure_ceilings ceiling torch_side
export root build sexpgpu python work gpt2_batch gpt2_steps gpt2_warmup
if (( dry )); then
  say "gpu_check --dry-run: root $root, build $build, OUT $out, budget ${budget}s, python $python"
  problems=0
  for f in "$root/bench/torch_gpt2.py" "$root/bench/torch_gpt.py"; do
    [ -f "$f" ] || { say "missing $f"; problems=1; }
  done
  if [ -x "$sexpgpu" ]; then
    "$sexpgpu" help >/dev/null 2>&1 && say "binary: $sexpgpu starts here" || { say "binary: $sexpgpu does not start"; problems=1; }
  else
    say "binary: no $sexpgpu (the GPU machine would build one with cmake + ninja)"
  fi
  [ -x "$build/sx_backend_cpu_tests" ] || say "ops: no $build/sx_backend_cpu_tests (the ops stage would say so)"
  make_experiment "$work/dry" 64 32 1 2 16 2 3 f32
  make_experiment "$work/dry-gpt2" 50257 768 12 12 1024 "$gpt2_batch" 13 bf16
  if [ -x "$sexpgpu" ]; then
    for d in dry dry-gpt2; do
      if (cd "$work/$d" && "$sexpgpu" check run.sx >"$work/$d.out" 2>&1); then
        say "experiment $d: the generated run.sx checks"
      else
        say "experiment $d: the generated run.sx does not check: $(head -n 3 "$work/$d.out")"; problems=1
      fi
    done
    # The comparisons read what a run writes: two cpu runs of the small experiment go through both.
    if sx_run "$work/dry" cpu a >"$work/dry-a.out" 2>&1 && sx_run "$work/dry" cpu b >"$work/dry-b.out" 2>&1 &&
      compare_losses "$work/dry/a.jsonl" "$work/dry/b.jsonl" 1e-5 >>"$log" && same_bits "$work/dry/a.jsonl" "$work/dry/b.jsonl" >>"$log"; then
      say "comparisons: two cpu runs of experiment dry agree (compare_losses, same_bits)"
    else
      say "comparisons: failed on two cpu runs of experiment dry: $(tail -n 2 "$work/dry-a.out" "$work/dry-b.out")"; problems=1
    fi
  fi
  "$python" "$root/bench/torch_gpt2.py" flops >/dev/null || { say "torch_gpt2.py flops failed"; problems=1; }
fi

stage preflight 20 preflight
stage binary 200 binary || true
if (( !dry )) && ! "$sexpgpu" help >/dev/null 2>&1; then
  sexpgpu="$root/build-gpu/sexpgpu" build="$root/build-gpu"
fi
stage doctor 20 "$sexpgpu" doctor
stage ceilings 40 measure_ceilings
if ! stage device 30 device_probe && (( !dry )); then
  device_refusal="$(grep -m1 -E '^error\[' "$work/device.out" || tail -n 1 "$work/device.out")"
fi
# The headline figures first; the ops (NVRTC compiles each case's kernels) with what is left.
device_stage train 60 train_against_cpu
device_stage repeat 40 repeat_bits
device_stage gpt2 70 gpt2_sexpgpu
stage torch 70 torch_side eager
device_stage ops 90 ops
if (( dry )) || (( deadline - $(date +%s) > 150 )); then
  stage torch-compile 140 torch_side compile
else
  record torch-compile skipped "under 150s left: torch.compile costs minutes the first time"
fi

if (( dry )); then
  say "gpu_check --dry-run: the plan is $(grep -c '^would run' "$log") stages; ${problems} problem(s)"
  exit $problems
fi
print_table
! grep -qP '\t(failed|timeout)\t' "$results"
