"""`run --device cuda` on the emulated CUDA device (SEXPGPU_CUDA_EMULATE=1): the same numbers as the CPU.

    python3 tests/e2e/cuda_emulate.py SEXPGPU REPO CASE
"""
import json, os

import re

from harness import SHARED_CACHE, TMP, expect, jsonl, main, run

# The kernels are compiled too (where NVRTC is found), once for the suite.
EMULATE = {"SEXPGPU_CUDA_EMULATE": "1", "XDG_CACHE_HOME": SHARED_CACHE}
SMOKE = ("examples/my-run.sx", "--variant", "smoke", "--steps", "6", "--eval-every", "3")


def summary(device, *extra, env=None):
    emulate = EMULATE if device == "cuda" else {}  # on the cpu, SEXPGPU_CUDA_EMULATE is refused (E-ENV-003)
    p = run("run", *SMOKE, "--device", device, "--json", *extra, env={**emulate, **(env or {})})
    return json.loads(p.stdout.strip().splitlines()[-1]), p


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-30)


def compare(cpu, cuda, rtol):
    expect(close(cpu["train_loss"], cuda["train_loss"], rtol), f"train/loss cpu {cpu} cuda {cuda}")
    expect(cpu["eval"].keys() == cuda["eval"].keys(), f"{cpu['eval']} {cuda['eval']}")
    for k in cpu["eval"]:
        expect(close(cpu["eval"][k], cuda["eval"][k], rtol), f"{k}: cpu {cpu['eval'][k]} cuda {cuda['eval'][k]}")
    expect(cpu["counters"] == cuda["counters"], f"{cpu['counters']} {cuda['counters']}")


def case_f32_equals_cpu():
    """A small gpt in f32 on the emulated device ends with the CPU's losses and evals to 1e-5."""
    cpu, _ = summary("cpu")
    cuda, p = summary("cuda")
    compare(cpu, cuda, 1e-5)
    expect(" device cuda " in p.stderr.splitlines()[0], p.stderr)


def case_bf16_agrees_with_cpu_bf16():
    """In bf16 the emulated device agrees with the CPU's bf16 emulation to 1e-3 (the same rounding points)."""
    cpu, _ = summary("cpu", "--set", "precision=bf16")
    cuda, _ = summary("cuda", "--set", "precision=bf16")
    compare(cpu, cuda, 1e-3)
    f32, _ = summary("cuda")
    expect(f32["train_loss"] != cuda["train_loss"], "bf16 on the emulated device rounded nothing")


def case_resume_exact():
    """A run checkpointed at step 3 and resumed to 6 on the emulated device writes the step records of one
    uninterrupted run, bit for bit (parameters and optimizer state come back exactly)."""
    ck = os.path.join(TMP, "ck")
    whole, part = os.path.join(TMP, "whole.jsonl"), os.path.join(TMP, "part.jsonl")
    base = ("run", "examples/my-run.sx", "--variant", "smoke", "--device", "cuda")
    run(*base, "--steps", "6", "--metrics", "jsonl:" + whole, env=EMULATE)
    run(*base, "--steps", "3", "--checkpoint-dir", ck, "--metrics", "jsonl:" + part, env=EMULATE)
    d = os.path.join(ck, "my-run-smoke", "step-3")
    expect(os.path.isdir(d), f"no checkpoint at {d}: {os.listdir(ck)}")
    run(*base, "--steps", "6", "--resume", d, "--metrics", "jsonl:" + part, env=EMULATE)
    steps = lambda m: [(r["step"], r["train/loss"]) for r in jsonl(m) if r["kind"] == "step"]
    a, b = steps(whole), steps(part)
    expect([s for s, _ in a] == list(range(1, 7)), str(a))
    expect(dict(a) == dict(b), f"{a}\n{b}")


def case_gpu_lines():
    """The run's stderr is the GPU's: the lowering report after the run line, the kernels the lowering
    generates in the timing block, and the memory peak against the plan after it."""
    _, p = summary("cuda")
    lines = p.stderr.splitlines()
    expect(lines[0].startswith("run: ") and lines[1].startswith("lowering train-step: "), p.stderr)
    # Compiled with NVRTC, or from the kernel cache; "not compiled" where NVRTC is not found.
    expect(lines[2].startswith("lowering eval: ") and
           re.search(r"generated: (not compiled|\d+ cached|\d+ compiled|\d+ cached, \d+ compiled)\) plan ", lines[1]),
           p.stderr)
    kernels = [l for l in lines if l.startswith("timing kernels ")]
    expect(len(kernels) == 1 and re.fullmatch(r"timing kernels (\d+ generated, not compiled|"
                                              r"\d+ compiled in \d+\.\d{3}s, \d+ cache hits)", kernels[0]), p.stderr)
    expect(sum(int(n) for n in re.findall(r"(\d+) (?:generated|compiled in|cache hits)", kernels[0])) > 0, kernels[0])
    memory = [i for i, l in enumerate(lines) if l.startswith("memory: peak ")]
    total = [i for i, l in enumerate(lines) if l.startswith("timing total ")]
    expect(len(memory) == 1 and memory[0] == total[0] + 1, p.stderr)
    expect(" of 80.00 GiB (plan " in lines[memory[0]], lines[memory[0]])


def case_refused_without_emulation():
    """Without SEXPGPU_CUDA_EMULATE, run --device cuda needs the real driver: refused before the first step
    where there is none (E-DEV-002 no driver, E-DEV-003 no device; E-DEV-001 in a build without CUDA)."""
    p = run("run", *SMOKE, "--device", "cuda", check_rc=2)
    expect(p.stderr.startswith(("error[E-DEV-001]", "error[E-DEV-002]", "error[E-DEV-003]")), p.stderr)


main(globals())
