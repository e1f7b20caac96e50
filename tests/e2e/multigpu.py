"""Several GPUs in one process (docs/devices.md, "Several GPUs"): `run --device cuda` on several emulated devices
(SEXPGPU_CUDA_EMULATE=N, SEXPGPU_DEVICES), their numbers against one device's, the refusals, and a stopped run
resumed."""
import os, re, signal, subprocess, time
from harness import *

SX = "tests/e2e/nodes.sx"  # :batch 12 splits over 1, 2, 3 or 4 GPUs; `micro` sets :microbatches
FILES = ("model.safetensors", "optimizer.safetensors")


def gpu_env(visible, devices=None):
    e = {"SEXPGPU_CUDA_EMULATE": str(visible), "SEXPGPU_THREADS": "1", "SEXPGPU_NODE_TIMEOUT": "60"}
    if devices is not None:
        e["SEXPGPU_DEVICES"] = devices
    return e


def train(name, visible, micro, devices=None, extra=()):
    """A run on `visible` emulated devices (all of them, or SEXPGPU_DEVICES): its records, final checkpoint
    files and standard error."""
    ck, m = os.path.join(TMP, name + "-ck"), os.path.join(TMP, name + ".jsonl")
    p = run("run", SX, "--device", "cuda", "--set", f"micro={micro}", "--checkpoint-dir", ck, "--metrics",
            "jsonl:" + m, *extra, env=gpu_env(visible, devices))
    return latest_records(m), final_files(ck), p.stderr, m


def final_files(ck, step=12):
    (slug,) = os.listdir(ck)
    d = os.path.join(ck, slug, f"step-{step}")
    return {f: open(os.path.join(d, f), "rb").read() for f in FILES}


def same_numbers(got, want, what):
    expect(sorted(got) == sorted(want), f"{what}: records differ: {sorted(set(got) ^ set(want))}")
    for key in want:
        expect(got[key] == want[key], f"{what}: {key}: {got[key]} != {want[key]}")


def close_numbers(got, want, what, rtol=1e-5):
    expect(sorted(got) == sorted(want), f"{what}: records differ: {sorted(set(got) ^ set(want))}")
    for key in want:
        for k, v in want[key].items():
            if k.startswith(("train/", "eval/")):
                g = got[key][k]
                expect(abs(g - v) <= rtol * max(1.0, abs(v)), f"{what}: {key} {k}: {g} vs {v}")
            else:
                expect(got[key][k] == v, f"{what}: {key} {k}: {got[key][k]} vs {v}")


def case_multigpu_equal_one_device():
    """2 and 3 GPUs of one microbatch each: the losses, evals and final checkpoint bytes of one GPU of 2 and 3
    microbatches, bit for bit; the run line names the devices; one metrics record per step (rank 0 alone
    reports)."""
    for gpus in (2, 3):
        want, want_files, _, _ = train(f"one-{gpus}", 1, gpus)
        got, files, err, m = train(f"gpus-{gpus}", gpus, 1)
        devices = ",".join(str(i) for i in range(gpus))
        expect(re.search(rf"^run: {SX} slug \S+ device cuda .* devices {devices}$", err, re.M), err)
        same_numbers(got, want, f"{gpus} GPUs")
        expect(files == want_files, f"{gpus} GPUs: the final checkpoint's tensors differ")
        steps = [r["step"] for r in jsonl(m) if r["kind"] == "step"]
        expect(steps == list(range(1, 13)), f"step records {steps}")


def case_multigpu_other_splits():
    """SEXPGPU_DEVICES picks and orders the ranks (2,0 of 3 visible); 2 GPUs of 3 microbatches agree with one GPU
    of 6 to 1e-5, and 2 GPUs with one GPU of the whole batch in one microbatch (only the order of additions
    differs)."""
    want6, _, _, _ = train("one-6", 1, 6)
    got, _, err, _ = train("gpus-2x3", 3, 3, devices="2,0")
    expect(re.search(r" devices 2,0$", err, re.M), err)
    close_numbers(got, want6, "2 GPUs x 3 microbatches")
    want1, _, _, _ = train("one-1", 1, 1)
    got, _, _, _ = train("gpus-2x1", 2, 1)
    close_numbers(got, want1, "2 GPUs against one microbatch of 12")


def case_multigpu_batch_does_not_divide():
    """A batch that does not divide over the GPUs is refused before step 1 (exit 2), naming the sizes."""
    p = run("run", SX, "--device", "cuda", env=gpu_env(5), check_rc=2)
    expect(p.stderr.startswith("error[E-NODE-009]: defrun `nodes`: :batch 12 does not divide over 5 GPUs of "
                               ":microbatches 1 (5 x 1 = 5 shares)"), p.stderr)
    expect("(10 or 15)" in p.stderr, p.stderr)
    p = run("run", SX, "--device", "cuda", "--set", "micro=4", env=gpu_env(2), check_rc=2)
    expect(p.stderr.startswith("error[E-NODE-009]: defrun `nodes`: :batch 12 does not divide over 2 GPUs of "
                               ":microbatches 4 (2 x 4 = 8 shares)"), p.stderr)


def case_multigpu_devices_refused():
    """SEXPGPU_DEVICES malformed is E-ENV-001; an ordinal the (emulated) driver lacks is E-DEV-006; both exit 2
    before anything is compiled."""
    for bad in ("0,,1", "0,0", "one", "-1"):
        p = run("run", SX, "--device", "cuda", env=gpu_env(2, bad), check_rc=2)
        expect(p.stderr.startswith("error[E-ENV-001]: SEXPGPU_DEVICES"), f"{bad}: {p.stderr}")
    p = run("run", SX, "--device", "cuda", env=gpu_env(2, "0,2"), check_rc=2)
    expect(p.stderr.startswith("error[E-DEV-006]: SEXPGPU_DEVICES names CUDA device 2, but SEXPGPU_CUDA_EMULATE=2 "
                               "emulates 2 (ordinals 0 to 1)"), p.stderr)
    p = run("run", SX, "--device", "cuda", env={"SEXPGPU_CUDA_EMULATE": "17"}, check_rc=2)
    expect(p.stderr.startswith("error[E-ENV-001]: SEXPGPU_CUDA_EMULATE"), p.stderr)


def case_multigpu_sigterm_and_resume():
    """SIGTERM mid-run on 2 GPUs: exit 143 with one checkpoint of the step it stopped at; resumed with latest,
    the run ends as the uninterrupted one (and as one GPU of 2 microbatches)."""
    want, want_files, _, _ = train("one-r", 1, 2)
    ck, m = os.path.join(TMP, "term-ck"), os.path.join(TMP, "term.jsonl")
    args = [SEXPGPU, "run", SX, "--device", "cuda", "--checkpoint-dir", ck, "--resume", "latest", "--metrics",
            "jsonl:" + m]
    p = subprocess.Popen(args, cwd=REPO, env=clean_env(gpu_env(2)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.time() + 300
    while time.time() < deadline and steps_written(m) < 2 and p.poll() is None:
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=300)
    expect(p.returncode == 143, f"exit {p.returncode}\n{err}")
    s = re.search(r"^stopping: SIGTERM at step (\d+)", err, re.M)
    expect(s, err)
    step = int(s.group(1))
    expect(step < 12, f"the run ended before the signal:\n{err}")
    (slug,) = os.listdir(ck)
    kept = sorted(int(d[5:]) for d in os.listdir(os.path.join(ck, slug)) if d.startswith("step-"))
    expect(kept and kept[-1] == step, f"checkpoints {kept}, stopped at {step}")
    expect(err.count(f"checkpoint step-{step} -> ") == 1, f"the checkpoint of step {step} not written once:\n{err}")
    p = run(*args[1:], env=gpu_env(2))
    expect("resume latest=" in p.stderr, p.stderr)
    same_numbers(latest_records(m), want, "resumed")
    expect(final_files(ck) == want_files, "the resumed run's final tensors differ")


main(globals())
