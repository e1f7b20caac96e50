#!/usr/bin/env bash
# One command: sexpgpu vs PyTorch 1.13 on std/nn's gpt (biases, untied head,
# AdamW), measured side by side in one run on this machine.
#
#   bench/run.sh [build-dir]          (default build-bench; ROUNDS=, QUICK=1, NO_BUILD=1, CEILING_S=, OLD_PEER=0, BF16=0)
#
# 1. installs PyTorch for /usr/bin/python3 (Debian python3-torch) if missing;
# 2. installs the build's Debian packages (scripts/setup.sh) and builds Release
#    with -DSEXPGPU_BENCH=ON (sexpgpu, sexpgpu-sgemm-ceiling);
# 3. measures the sgemm ceiling: OpenBLAS and sexpgpu's own gemm, one thread
#    per core, all cores; OpenBLAS with the environment's OPENBLAS_CORETYPE,
#    with its own detection, and on an AVX-512 CPU with SkylakeX's kernels
#    (and Cooperlake's where the CPU has AVX512-BF16);
# 4. trains tiny/small/medium with the real binary (`sexpgpu run` on generated
#    .sx files, --metrics jsonl, median step_s after warm-up) and with
#    bench/torch_gpt.py, the stronger peer (one fused qkv linear, nanoGPT's
#    way; default threads, 2 threads, 2 threads with OMP_WAIT_POLICY=PASSIVE,
#    each with every OpenBLAS core type of step 3; the best is kept and
#    named), then ROUNDS-1 more rounds of
#    both, alternating; each side keeps its best. The older peer (separate
#    q, k, v linears, `--separate-qkv`) runs once a round in the setting
#    chosen, for a second column (OLD_PEER=0 leaves it out);
# 5. the medium config again with :precision bf16, against PyTorch's f32 at
#    its best and its bf16 autocast (BF16=0 leaves it out); on a CPU with
#    AMX-BF16, once more with SEXPGPU_CPU_BF16=amx (AMX's tiles, an opt-in
#    with the CPU's own bits: docs/performance.md);
# 6. prints the table, and the peak RSS of a medium run (/usr/bin/time -v)
#    against the plan's arena + params + AdamW state.
# Not a test: nothing here is timed in CI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath -m "${1:-$root/build-bench}")"
work="$(mktemp -d /tmp/sexpgpu-bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cores="$(nproc)"

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "== installing python3-torch (apt-get)"
  sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  sudo_ apt-get update -qq && sudo_ apt-get install -y -qq python3-torch >/dev/null
fi

echo "== building $build (Release, SEXPGPU_BENCH=ON)"
[ "${NO_BUILD:-0}" = 1 ] || "$root/scripts/setup.sh"  # a fresh machine has no nlohmann-json, gloo, ...
[ "${NO_BUILD:-0}" = 1 ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEXPGPU_BENCH=ON >/dev/null
[ "${NO_BUILD:-0}" = 1 ] || cmake --build "$build" -j"$cores" --target sexpgpu sexpgpu-sgemm-ceiling >/dev/null
sexpgpu="$build/sexpgpu"


# OpenBLAS core types to try: the environment's (unset: OpenBLAS's own
# choice) and, where the CPU has AVX-512, SkylakeX's kernels.
# The environment's core type first (its figure is the table's "env" column),
# then OpenBLAS's own detection (unset), then the AVX-512 kernels: SkylakeX's
# and, where the CPU has AVX512-BF16, Cooperlake's; each once.
coretypes=("${OPENBLAS_CORETYPE:-}")
add_core() { local c; for c in "${coretypes[@]}"; do [ "$c" = "$1" ] && return; done; coretypes+=("$1"); }
add_core ""
if grep -qw avx512f /proc/cpuinfo; then add_core SkylakeX; fi
if grep -qw avx512_bf16 /proc/cpuinfo; then add_core Cooperlake; fi
with_core() { if [ -n "$1" ]; then OPENBLAS_CORETYPE="$1" "${@:2}"; else env -u OPENBLAS_CORETYPE "${@:2}"; fi; }
echo "== environment: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}; OpenBLAS core types tried: $(for c in "${coretypes[@]}"; do printf '%s ' "${c:-<detected>}"; done)"
echo "== sgemm ceiling ($cores workers)"
: >"$work/ceiling.jsonl"
for ct in "${coretypes[@]}"; do
  with_core "$ct" "$build/sexpgpu-sgemm-ceiling" "${CEILING_S:-1.5}" "$cores" | tee -a "$work/ceiling.jsonl"
done


source "$root/bench/gpt_case.sh"  # sx_run

# setting (threads,coretype) vocab d layers heads seq batch steps warmup [--separate-qkv] -> step_s;
# the parameter count goes to $work/torch_params.
torch_one() {
  local threads=${1%%,*} ct=${1#*,} out
  [ "$ct" = openblas-default ] && ct=""
  case $threads in
    default) out=$(with_core "$ct" /usr/bin/python3 "$root/bench/torch_gpt.py" "${@:2:8}" 0 "${@:10}") ;;
    2) out=$(with_core "$ct" /usr/bin/python3 "$root/bench/torch_gpt.py" "${@:2:8}" 2 "${@:10}") ;;
    2-passive) out=$(OMP_WAIT_POLICY=PASSIVE with_core "$ct" /usr/bin/python3 "$root/bench/torch_gpt.py" "${@:2:8}" 2 "${@:10}") ;;
  esac
  echo "   torch $1${10:+ ${10}}: $out" >&2
  echo "$out" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["params"])' >"$work/torch_params"
  echo "$out" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["step_s"])'
}

# -> "step_s setting env_step_s": the best over every setting, and the best
# with the environment's own core type (the first one tried).
torch_best() {  # vocab d layers heads seq batch steps warmup
  local best="" setting="" env_best="" t
  for ct in "${coretypes[@]}"; do
    for s in "default" "2" "2-passive"; do
      t=$(torch_one "$s,${ct:-openblas-default}" "$@")
      if [ -z "$best" ] || /usr/bin/python3 -c "import sys; sys.exit(0 if $t < $best else 1)"; then
        best=$t; setting="$s,${ct:-openblas-default}"
      fi
    done
    [ -n "$env_best" ] || env_best=$best
  done
  echo "$best $setting $env_best"
}

smaller() { /usr/bin/python3 -c "import sys; print(min(float(a) for a in sys.argv[1:]))" "$@"; }

# Each side's figure is the best of ROUNDS medians (default 5), the two
# sides alternating, so that a slow moment of this shared machine does not
# decide a ratio; PyTorch's setting is chosen in the first round.
rounds="${ROUNDS:-5}"
echo "== training (sexpgpu threads: ${SEXPGPU_THREADS:-all cores}; best of $rounds rounds each)"
: >"$work/rows"
for c in "${configs[@]}"; do
  set -- $c
  name=$1; shift
  sx=$(sx_run "$name" "$@")
  read -r tt setting tt_env < <(torch_best "$1" "$2" "$3" "$4" "$5" "$6" "$9" "${10}")
  torch_args=("$1" "$2" "$3" "$4" "$5" "$6" "$9" "${10}")
  tt_old=0
  [ "${OLD_PEER:-1}" = 0 ] || tt_old=$(torch_one "$setting" "${torch_args[@]}" --separate-qkv)
  for ((r = 2; r <= rounds; r++)); do
    sx=$(smaller "$sx" "$(sx_run "$name" "$@")")
    tt=$(smaller "$tt" "$(torch_one "$setting" "${torch_args[@]}")")
    [ "${OLD_PEER:-1}" = 0 ] || tt_old=$(smaller "$tt_old" "$(torch_one "$setting" "${torch_args[@]}" --separate-qkv)")
  done
  # The same model on both sides: sexpgpu's parameter count (explain) and PyTorch's.
  sx_params=$(cd "$work/$name" && "$sexpgpu" explain bench.sx 2>/dev/null | sed -n 's/.*parameters: \([0-9]*\).*/\1/p' | head -1)
  echo "   $name: sexpgpu ${sx}s/step, torch ${tt}s/step ($setting), separate-qkv torch ${tt_old}s/step;" \
    "parameters: sexpgpu ${sx_params:-?}, torch $(cat "$work/torch_params")" >&2
  echo "$name $* $sx $tt $setting $tt_env $tt_old ${sx_params:-0} $(cat "$work/torch_params")" >>"$work/rows"
done

# bf16 (issue #21): the medium config with :precision bf16, against PyTorch's
# f32 at its best (the row above) and PyTorch's own bf16 autocast in the same
# setting, best of the same rounds.
: >"$work/bf16"
if [ "${BF16:-1}" = 1 ]; then
  for c in "${configs[@]}"; do
    set -- $c
    [ "$1" = medium ] || continue
    shift
    tt32=$(awk '$1 == "medium" {print $13}' "$work/rows")
    setting=$(awk '$1 == "medium" {print $14}' "$work/rows")
    torch_args=("$1" "$2" "$3" "$4" "$5" "$6" "$9" "${10}")
    sx16="" tt16="" amx=""
    for ((r = 1; r <= rounds; r++)); do
      t=$(sx_run medium-bf16 "$@"); sx16=$(smaller ${sx16:-$t} "$t")
      # Autocast on a CPU without bf16 units runs bf16 in software (22 s a
      # step on a Zen 3, 35x its f32): one round says so; five took 15 minutes.
      if [ "$r" = 1 ] || awk -v a="$tt16" -v b="$tt32" 'BEGIN {exit !(a < 4 * b)}'; then
        t=$(torch_one "$setting" "${torch_args[@]}" --autocast-bf16); tt16=$(smaller ${tt16:-$t} "$t")
      fi
      if grep -qw amx_bf16 /proc/cpuinfo && grep -qw amx_tile /proc/cpuinfo; then
        t=$(SEXPGPU_CPU_BF16=amx sx_run medium-amx-bf16 "$@"); amx=$(smaller ${amx:-$t} "$t")
      fi
    done
    echo "   medium bf16: sexpgpu ${sx16}s/step (on AMX's tiles: ${amx:-no AMX}), torch autocast bf16 ${tt16}s/step" \
      "($setting), torch f32 ${tt32}s/step" >&2
    echo "medium $* $sx16 $tt16 $tt32 $setting ${amx:-0}" >"$work/bf16"
  done
fi

echo "== peak memory of a medium run"
mdir="$work/medium"
(cd "$mdir" && /usr/bin/time -v "$sexpgpu" run bench.sx --steps 3 --metrics "jsonl:$mdir/mem.jsonl" \
  >"$mdir/mem.txt" 2>&1) || cat "$mdir/mem.txt"
rss_kb=$(grep "Maximum resident set size" "$mdir/mem.txt" | awk '{print $NF}')
(cd "$mdir" && "$sexpgpu" explain bench.sx >"$mdir/explain.txt" 2>&1) || true

/usr/bin/python3 - "$work" "$rss_kb" "$root" <<'PY'
import json, re, sys
work, rss_kb, root = sys.argv[1], int(sys.argv[2] or 0), sys.argv[3]
runs = [json.loads(l) for l in open(f"{work}/ceiling.jsonl") if l.strip()]
# The ceiling is the best product measured on this machine, whichever did it;
# the OpenBLAS one (the environment's core type, as the issue first defined
# the ceiling) is shown beside it.
ceil = {"ceiling": max(r["ceiling"] for r in runs), "workers": runs[0]["workers"],
        "one_worker": max(r["one_worker"] for r in runs)}
env_openblas = runs[0]["openblas"]
def flops(vocab, d, layers, heads, seq, batch):
    # 6 * (matmul params) per token + causal-free attention (QK^T, PV: 2*2*T*d per token per layer, x3)
    n = layers * (4 * d * d + 8 * d * d) + d * vocab
    return batch * seq * (6 * n + 12 * layers * seq * d)
print()
sys.path.insert(0, f"{root}/bench")
from cpu_name import describe
print("CPU: " + describe(open("/proc/cpuinfo").read()))
# "ratio" is against the fused-qkv peer; the column after it against
# whichever peer had PyTorch's fastest step (on a 2-core Zen 3 the
# separate-qkv one often did, against the issue's measurements).
print("| config (vocab, d, layers, heads, seq, batch) | sexpgpu tok/s | PyTorch tok/s, fused qkv (setting) | ratio | ratio to PyTorch's fastest step, either peer | ratio to PyTorch with the environment's core type (first round) | ratio to the separate-qkv peer | sexpgpu GFLOP/s | % of sgemm ceiling | % of OpenBLAS (env) | PyTorch GFLOP/s |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for line in open(f"{work}/rows"):
    f = line.split()
    name, cfg = f[0], [int(x) for x in f[1:7]]
    sx, tt, setting, tt_env, tt_old = float(f[11]), float(f[12]), f[13], float(f[14]), float(f[15])
    sx_params, torch_params = int(f[16]), int(f[17])
    if sx_params != torch_params:
        print(f"WARNING: {name}: sexpgpu has {sx_params} parameters, PyTorch {torch_params}: not the same model")
    tok = cfg[4] * cfg[5]
    gf = flops(*cfg) / sx / 1e9
    old = f"{tt_old/sx:.2f}x" if tt_old > 0 else "-"
    fastest = min(tt, tt_old) if tt_old > 0 else tt
    print(f"| {name} ({', '.join(map(str, cfg))}) | {tok/sx:,.0f} | {tok/tt:,.0f} ({setting}) | {tt/sx:.2f}x | {fastest/sx:.2f}x | {tt_env/sx:.2f}x | {old} | {gf:.1f} | {100*gf/ceil['ceiling']:.0f}% | {100*gf/env_openblas:.0f}% | {flops(*cfg)/tt/1e9:.1f} |")
for line in open(f"{work}/bf16"):
    f = line.split()
    cfg = [int(x) for x in f[1:7]]
    sx16, tt16, tt32, setting = float(f[11]), float(f[12]), float(f[13]), f[14]
    tok = cfg[4] * cfg[5]
    print(f"\nbf16, medium ({', '.join(map(str, cfg))}): sexpgpu :precision bf16 {tok/sx16:,.0f} tok/s = "
          f"{tt32/sx16:.2f}x PyTorch f32 at its best ({tok/tt32:,.0f}); PyTorch bf16 autocast ({setting}) "
          f"{tok/tt16:,.0f} tok/s ({tt16/sx16:.2f}x of it)")
    amx = float(f[15])
    if amx > 0:
        print(f"  with SEXPGPU_CPU_BF16=amx (AMX's tiles, the CPU's own bits): {tok/amx:,.0f} tok/s = "
              f"{tt32/amx:.2f}x PyTorch f32 at its best (the target on a CPU with AMX: >= 3x)")
print(f"\nsgemm ceiling: {ceil['ceiling']:.1f} GFLOP/s on {ceil['workers']} workers ({ceil['one_worker']:.1f} on one)")
for r in runs:
    print(f"  OpenBLAS ({r['openblas_core']} kernels) {r['openblas']:.1f}, sexpgpu gemm {r['sexpgpu']:.1f} GFLOP/s on {r['workers']} workers")
ex = open(f"{work}/medium/explain.txt").read()
plan = re.search(r"plan ([\d.]+) MiB", ex)
params = re.search(r"parameters: (\d+)", ex)
print(f"medium peak RSS: {rss_kb/1024:.1f} MiB")
if plan and params:
    p_mib = int(params.group(1)) * 4 / 2**20
    # One microbatch: the optimizer reads the gradients in the plan's arena
    # (no accumulated copy), so params, AdamW m and v are the only extra state.
    expect = float(plan.group(1)) + 3 * p_mib
    print(f"  expected: plan {float(plan.group(1)):.1f} MiB + params, AdamW m and v "
          f"3 x {p_mib:.1f} MiB = {expect:.1f} MiB; the rest ({rss_kb/1024 - expect:.1f} MiB) is the binary, "
          f"libraries, the pass executor and the data")
PY
