#!/usr/bin/env bash
# Whether two builds of sexpgpu train bench/run.sh's gpt configs to the same
# bits: a change that is meant to be faster only (a loop order, packing, a
# fusion) must leave every step's loss as it was. Runs each config STEPS
# steps with A, then with B, and compares every step record but its times
# (the keys ending in _s), and the summary's loss. Prints one line a config;
# exits 1 where a config differs, with the first step that does.
#
#   bench/same_bits.sh A-BINARY B-BINARY        (CONFIGS="tiny small medium medium-bf16", STEPS=12)
# A name ending in -bf16 trains with :precision bf16. Not a test of speed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
a_bin="$(realpath "$1")" b_bin="$(realpath "$2")"
top="$(mktemp -d /tmp/sexpgpu-same-bits.XXXXXX)"
trap 'rm -rf "$top"' EXIT
source "$root/bench/gpt_case.sh"  # configs, sx_run
want="${CONFIGS:-tiny small medium medium-bf16}"
status=0
for c in "${configs[@]}"; do
  set -- $c
  for name in "$1" "$1-bf16"; do
    [[ " $want " == *" $name "* ]] || continue
    for side in a b; do
      work="$top/$side" sexpgpu="$a_bin"
      [ "$side" = b ] && sexpgpu="$b_bin"
      sx_run "$name" "${@:2:6}" "${STEPS:-12}" 0 >/dev/null
    done
    /usr/bin/python3 - "$name" "$top/a/$name/m.jsonl" "$top/b/$name/m.jsonl" <<'PY' || status=1
import json, sys
def records(path):
    steps, loss = [], None
    for r in map(json.loads, open(path)):
        if r.get("kind") == "step":
            steps.append({k: v for k, v in r.items() if not k.endswith("_s")})
        elif r.get("kind") == "summary":
            loss = r.get("train_loss")
    return steps, loss
(a, la), (b, lb) = records(sys.argv[2]), records(sys.argv[3])
if a == b and la == lb and a:
    print(f"{sys.argv[1]}: same bits ({len(a)} steps, last loss {la!r})")
    sys.exit(0)
first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
print(f"{sys.argv[1]}: DIFFERENT at step record {first + 1}: "
      f"A {a[first] if first < len(a) else None} B {b[first] if first < len(b) else None}")
sys.exit(1)
PY
  done
done
exit "$status"
