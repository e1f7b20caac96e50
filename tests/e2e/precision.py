"""`:precision bf16` on the CPU: the rounding of docs/model.md ("Precision") is real.

    python3 tests/e2e/precision.py SEXPGPU REPO CASE
"""
import os

from harness import REPO, TMP, expect, jsonl, main, run

SMOKE = ("examples/my-run.sx", "--variant", "smoke", "--steps", "6")


def records(metrics, kind, key):
    return [(r["step"], r[key]) for r in jsonl(metrics) if r["kind"] == kind]


def train(precision, threads="2", name=None, env=None):
    m = os.path.join(TMP, f"{name or precision}.jsonl")
    p = run("run", *SMOKE, "--set", f"precision={precision}", "--metrics", "jsonl:" + m,
            env={"SEXPGPU_THREADS": threads, **(env or {})})
    return p, m


def cpu_flags():
    return next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "").split()


def cpu_has_amx_bf16():
    return all(f in cpu_flags() for f in ("amx_tile", "amx_bf16", "avx512f"))


def case_cpu_bf16_amx():
    """SEXPGPU_CPU_BF16=amx: on a CPU without AMX-BF16 refused before the first step (E-ENV-003, exit 2,
    nothing written), and on one without AVX512-BF16 (which packs the tiles' pairs); on one with both, the bf16 products on AMX's tiles: losses within 2% of the exact
    bf16 run's, and the same bits on 1 and 3 threads. A value other than exact or amx is E-ENV-001."""
    p = run("run", *SMOKE, "--set", "precision=bf16", env={"SEXPGPU_CPU_BF16": "fast"}, check_rc=2)
    expect(p.stderr.startswith("error[E-ENV-001]: SEXPGPU_CPU_BF16: expected exact or amx"), p.stderr)
    amx = {"SEXPGPU_CPU_BF16": "amx"}
    if not cpu_has_amx_bf16():
        m = os.path.join(TMP, "amx-refused.jsonl")
        p = run("run", *SMOKE, "--set", "precision=bf16", "--metrics", "jsonl:" + m, env=amx, check_rc=2)
        expect(p.stderr.startswith("error[E-ENV-003]: SEXPGPU_CPU_BF16=amx asks for AMX's tiles, but this CPU has "
                                   "no AMX-BF16\n") and not os.path.exists(m), p.stderr)
        return
    if "avx512_bf16" not in cpu_flags():  # AMX's pairs are packed by AVX512-BF16's conversions
        p = run("run", *SMOKE, "--set", "precision=bf16", env=amx, check_rc=2)
        expect(p.stderr.startswith("error[E-ENV-003]: SEXPGPU_CPU_BF16=amx asks for AMX's tiles, but this CPU has "
                                   "no AVX512-BF16 conversions"), p.stderr)
        return
    p = run("run", "examples/my-run.sx", "--variant", "smoke", "--steps", "1", "--set", "precision=bf16", env=amx,
            check_rc=None)
    if "Linux refused this process their state" in p.stderr:  # the machine's kernel, not the product
        print("e2e/cpu_bf16_amx: this CPU has AMX-BF16 but Linux refuses the tiles: nothing more to check here")
        return
    exact = records(train("bf16", name="exact")[1], "step", "train/loss")
    tiles = [records(train("bf16", threads=t, name=f"amx-t{t}", env=amx)[1], "step", "train/loss") for t in "13"]
    expect(tiles[0] == tiles[1], f"AMX on 1 and 3 threads differ\n{tiles[0]}\n{tiles[1]}")
    expect(len(tiles[0]) == len(exact) == 6, f"{exact}\n{tiles[0]}")
    for (step, a), (_, b) in zip(exact, tiles[0]):
        expect(abs(a - b) < 0.02 * abs(a), f"step {step}: AMX's {b} is not within 2% of the exact bf16 run's {a}")


def case_precision_bf16_is_real():
    """A bf16 run of a small gpt differs from its f32 run by well under 5% in loss, says bf16 on its run
    line, meta record and slug, and has its own graph hash; f32 and tf32 (f32 on the CPU) are the same."""
    runs = {p: train(p) for p in ("f32", "bf16", "tf32")}
    losses = {p: records(m, "step", "train/loss") for p, (_, m) in runs.items()}
    meta = {p: next(r for r in jsonl(m) if r["kind"] == "meta") for p, (_, m) in runs.items()}
    f32, bf16 = losses["f32"], losses["bf16"]
    expect(len(f32) == 6 and [s for s, _ in bf16] == [s for s, _ in f32], f"{f32}\n{bf16}")
    expect(f32 != bf16, f"bf16's losses are f32's: nothing was rounded\n{f32}")
    for (step, a), (_, b) in zip(f32, bf16):
        expect(abs(a - b) < 0.05 * abs(a), f"step {step}: bf16 {b} is not within 5% of f32 {a}")
    expect(losses["tf32"] == f32, f"tf32 should run as f32 on the CPU\n{losses['tf32']}\n{f32}")
    expect(meta["bf16"]["precision"] == "bf16" and meta["f32"]["precision"] == "f32", str(meta))
    expect(meta["bf16"]["graph"] != meta["f32"]["graph"], f"one graph hash for both: {meta['f32']['graph']}")
    expect(meta["tf32"]["graph"] == meta["f32"]["graph"], str(meta))
    run_line = runs["bf16"][0].stderr.splitlines()[0]
    expect(" precision bf16 " in run_line and "precision=bf16" in meta["bf16"]["slug"], run_line)
    # evaluation passes are rounded too
    evals = {p: records(m, "eval", "eval/loss") for p, (_, m) in runs.items()}
    expect(evals["bf16"] and evals["bf16"] != evals["f32"], str(evals))


def case_bf16_threads_identical():
    """A bf16 run on 1 and 3 threads writes bit-identical step and eval records."""
    out = []
    for t in ("1", "3"):
        _, m = train("bf16", threads=t, name=f"bf16-t{t}")
        out.append(records(m, "step", "train/loss") + records(m, "eval", "eval/loss"))
    expect(out[0] == out[1], f"{out[0]}\n{out[1]}")


def case_bf16_resume_precision_notable():
    """Resuming an f32 checkpoint in bf16 is notable, not refused, though the bf16 graph has its own hash;
    a model change with it is still refused."""
    ck = os.path.join(TMP, "ck")
    run("run", "examples/my-run.sx", "--steps", "2", "--checkpoint-dir", ck)
    d = os.path.join(ck, "my-run", "step-2")
    p = run("run", "examples/my-run.sx", "--steps", "3", "--set", "precision=bf16", "--resume", d)
    lines = [l for l in p.stderr.splitlines() if l.startswith("resume: ")]
    expect("resume: notable precision f32 -> bf16" in lines, p.stderr)
    expect(not any("refused" in l for l in lines), p.stderr)
    q = run("run", "examples/my-run.sx", "--steps", "3", "--set", "precision=bf16", "--set", "d-model=16",
            "--resume", d, check_rc=2)
    expect("resume: refused d-model 32 -> 16" in q.stderr, q.stderr)


main(globals())
