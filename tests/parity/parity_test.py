#!/usr/bin/env python3
"""PyTorch parity: sexpgpu's run of tests/parity/<cfg>/parity.sx against torch's.

    parity_test.py SEXPGPU CFG_DIR [WORK_DIR]

Runs `SEXPGPU run CFG_DIR/parity.sx --metrics jsonl:<tmp> --diagnostics
grad/norm,logits/*,attention/*` and compares its step records with
CFG_DIR/expected.json (written by tools/make_parity_fixtures.py with PyTorch;
this test needs only the standard library):

- each step's train/loss (the loss before that step's update): relative 1e-5;
  a fixture that records `step_loss_sensitivity` (bf16: how far torch's own
  losses move when its initial weights move by one float32 ulp) allows four
  times that where it is larger;
- step 1's grad/norm/<path> (before clipping): relative 1e-4; a gradient that
  is zero in exact arithmetic (torch's float64 norm below 1e-9 of the largest,
  e.g. attention key biases) must be rounding noise: below 1e-6 of the largest;
- step 1's logits/* and attention/* diagnostics: relative 1e-4 (they place a
  disagreement in the forward pass).

A fixture of another precision (`"precision": "bf16"`, made by
tools/make_bf16_parity_fixture.py) also holds the same run in f32 under `f32`:
sexpgpu's losses must then differ from those f32 losses (the rounding is
real) by less than 5% relative (it is still the same training).

Prints every value with its relative difference and the maximum of each group.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

LOSS_RTOL, GRAD_RTOL, DIAG_RTOL = 1e-5, 1e-4, 1e-4
PRECISION_LOSS_RTOL = 0.05  # a bf16 run against the same run in f32


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    exe, cfg = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    expected = json.loads((cfg / "expected.json").read_text())
    work = Path(sys.argv[3]) if len(sys.argv) > 3 else Path(tempfile.mkdtemp(prefix="sx-parity-"))
    work.mkdir(parents=True, exist_ok=True)
    metrics = work / f"{cfg.name}.jsonl"
    if metrics.exists():
        metrics.unlink()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEXPGPU_")}
    cmd = [str(exe), "run", str(cfg / "parity.sx"), "--metrics", f"jsonl:{metrics}", "--diagnostics",
           "grad/norm,logits/*,attention/*"]
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        print(proc.stdout)
        print(proc.stderr)
        sys.exit(f"FAIL: `{' '.join(cmd)}` exited {proc.returncode}")
    records = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    steps = {r["step"]: r for r in records if r.get("kind") == "step"}
    failures = []

    def check(group, name, got, want, rtol):
        r = rel(got, want)
        ok = r <= rtol
        print(f"  {'ok  ' if ok else 'FAIL'} {name:40s} sexpgpu {got:.9g}  torch {want:.9g}  rel {r:.2e}")
        if not ok:
            failures.append(f"{group} {name}: sexpgpu {got!r}, torch {want!r}, relative {r:.3e} > {rtol:g}")
        return r

    print(f"{cfg.name}: losses (relative {LOSS_RTOL:g}, or 4x torch's own sensitivity where recorded)")
    want_losses = expected["step_losses"]
    if sorted(steps) != list(range(1, len(want_losses) + 1)):
        sys.exit(f"FAIL: step records {sorted(steps)}, expected 1..{len(want_losses)}")
    sensitivity = expected.get("step_loss_sensitivity", [0.0] * len(want_losses))
    worst = max(check("loss", f"step {k} train/loss", steps[k]["train/loss"], w, max(LOSS_RTOL, 4 * sensitivity[k - 1]))
                for k, w in enumerate(want_losses, 1))
    print(f"  max relative difference {worst:.2e}")

    print(f"{cfg.name}: step-1 gradient norms (relative {GRAD_RTOL:g})")
    s1 = steps[1]
    norms = expected["grad_norms_step1"]
    norms64 = expected.get("float64", expected.get("f32"))["grad_norms_step1"]
    biggest = max(norms64.values())
    worst = 0.0
    for path, want in sorted(norms.items()):
        key = f"grad/norm/{path}"
        if key not in s1:
            failures.append(f"step 1 has no {key}")
            continue
        if norms64[path] < 1e-9 * biggest:  # zero in exact arithmetic
            ok = s1[key] <= 1e-6 * biggest
            print(f"  {'ok  ' if ok else 'FAIL'} {key:40s} sexpgpu {s1[key]:.3g} (zero in exact arithmetic)")
            if not ok:
                failures.append(f"{key}: {s1[key]!r} should be rounding noise (< {1e-6 * biggest:.3g})")
            continue
        worst = max(worst, check("grad", key, s1[key], want, GRAD_RTOL))
    extra = sorted(k for k in s1 if k.startswith("grad/norm/") and k[len("grad/norm/"):] not in norms)
    if extra:
        failures.append(f"sexpgpu reports gradients torch's model lacks: {extra}")
    print(f"  max relative difference {worst:.2e}")

    print(f"{cfg.name}: step-1 diagnostics (relative {DIAG_RTOL:g})")
    worst = 0.0
    for name, want in sorted(expected["diagnostics_step1"].items()):
        if name not in s1:
            failures.append(f"step 1 has no {name}")
            continue
        worst = max(worst, check("diagnostic", name, s1[name], want, DIAG_RTOL))
    print(f"  max relative difference {worst:.2e}")

    if "f32" in expected:
        print(f"{cfg.name}: {expected['precision']} losses against the f32 run's (different, within "
              f"{PRECISION_LOSS_RTOL:g} relative)")
        f32_losses = expected["f32"]["step_losses"]
        for k, w in enumerate(f32_losses, 1):
            got = steps[k]["train/loss"]
            print(f"  step {k}: {expected['precision']} {got:.9g}  f32 {w:.9g}  rel {rel(got, w):.2e}")
            if rel(got, w) >= PRECISION_LOSS_RTOL:
                failures.append(f"step {k}: {got!r} is not within {PRECISION_LOSS_RTOL:g} of f32's {w!r}")
        if all(steps[k]["train/loss"] == w for k, w in enumerate(f32_losses, 1)):
            failures.append(f"every {expected['precision']} loss equals the f32 run's: nothing was rounded")

    if failures:
        print("\n".join(["FAIL:"] + failures))
        sys.exit(1)
    print(f"{cfg.name}: PASS")


if __name__ == "__main__":
    main()
