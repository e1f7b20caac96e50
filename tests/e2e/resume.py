#!/usr/bin/env python3
"""End-to-end tests of checkpoints and resume: a run stopped for real (SIGTERM,
SIGKILL) and resumed gives the bits of one never stopped; resumes that cannot
be exact are refused; a corrupt checkpoint is never loaded; the checkpoint's
safetensors read by an independent reader.

    resume.py SEXPGPU REPO CASE     runs one case (see the case_ functions); exit 0 when it passes.
"""
import json, os, re, shutil, signal, subprocess, time

from harness import REPO, SEXPGPU, TMP, clean_env, expect, jsonl, latest_records, main, run, steps_written


def start(args, metrics):
    e = clean_env()
    return subprocess.Popen([SEXPGPU, "run", "tests/e2e/resume.sx", *args, "--metrics", "jsonl:" + metrics],
                            cwd=REPO, env=e, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def uninterrupted():
    ck = os.path.join(TMP, "ref-ck")
    m = os.path.join(TMP, "ref.jsonl")
    t0 = time.time()
    run("run", "tests/e2e/resume.sx", "--checkpoint-dir", ck, "--metrics", "jsonl:" + m)
    global REF_SECONDS
    REF_SECONDS = time.time() - t0
    return latest_records(m), open(os.path.join(ck, "resume", "step-24", "model.safetensors"), "rb").read()


def case_exact_resume():
    """Stopped by SIGTERM at several steps and resumed with latest: the same bits as never stopped."""
    want, want_model = uninterrupted()
    ck = os.path.join(TMP, "ck")
    m = os.path.join(TMP, "m.jsonl")
    deadline = time.time() + 60
    while True:
        stops = 0
        for stop_after in (2, 7, 13, 19):
            # The metrics file is shared by the runs: wait for this run's own first
            # step too, since the ones before may have gone past `stop_after`.
            before = steps_written(m)
            p = start(["--checkpoint-dir", ck, "--resume", "latest"], m)
            while p.poll() is None and (steps_written(m) < stop_after or steps_written(m) == before):
                time.sleep(0.001)
            if p.poll() is None:
                # Frozen while the signal is sent, so that it lands before the run ends.
                p.send_signal(signal.SIGSTOP)
                p.send_signal(signal.SIGTERM)
                p.send_signal(signal.SIGCONT)
            out, err = p.communicate(timeout=120)
            if p.returncode == 143:
                stops += 1
                expect("checkpoint step-" in err and "stopping: SIGTERM" in err, err)
            else:
                expect(p.returncode == 0, err)
        if stops >= 2 or time.time() > deadline:
            break
        # The runs ended before the signals landed (24 steps can take well under a tenth
        # of a second): start over.
        shutil.rmtree(ck, ignore_errors=True)
        os.remove(m)
    p = start(["--checkpoint-dir", ck, "--resume", "latest"], m)
    out, err = p.communicate(timeout=120)
    expect(p.returncode == 0, err)
    expect(stops >= 2, f"only {stops} runs were stopped by the signal")
    got = latest_records(m)
    expect(sorted(got) == sorted(want), f"records differ: {sorted(set(got) ^ set(want))}")
    for key in want:
        expect(got[key] == want[key], f"{key}: {got[key]} != {want[key]}")
    model = open(os.path.join(ck, "resume", "step-24", "model.safetensors"), "rb").read()
    expect(model == want_model, "model.safetensors differs from the uninterrupted run's")
    metas = [r for r in jsonl(m) if r["kind"] == "meta"]
    expect(len(metas) >= 3 and metas[0]["resumed_from"] is None and metas[-1]["resumed_from"]["step"] > 0,
           str([x["resumed_from"] for x in metas]))


def case_crash_safety():
    """kill -9 at random moments, checkpoint writes included: latest always loads and the run ends exact."""
    import random
    want, want_model = uninterrupted()
    ck = os.path.join(TMP, "crash-ck")
    m = os.path.join(TMP, "crash.jsonl")
    rng = random.Random(1234)
    kills = 0
    ref = REF_SECONDS
    deadline = time.time() + 90
    while time.time() < deadline and kills < 12:
        p = start(["--checkpoint-dir", ck, "--resume", "latest", "--set", "checkpoint-every=1"], m)
        time.sleep(rng.uniform(0.05, 0.8) * ref)
        if p.poll() is None:
            p.kill()
            kills += 1
        p.communicate()
        if p.returncode == 0:
            if kills >= 3:
                break
            # It ended before enough kills landed (the reference run was slowed by the machine's load): start
            # over, killing sooner.
            ref, kills = ref / 2, 0
            shutil.rmtree(ck, ignore_errors=True)
            if os.path.exists(m):
                os.remove(m)
    p = start(["--checkpoint-dir", ck, "--resume", "latest", "--set", "checkpoint-every=1"], m)
    out, err = p.communicate(timeout=120)
    expect(p.returncode == 0, err)
    expect(kills >= 3, f"only {kills} kills landed")
    got = latest_records(m)
    for key in want:
        g = {k: v for k, v in got[key].items()}
        expect(g == want[key], f"{key}: {g} != {want[key]}")
    model = open(os.path.join(ck, "resume-checkpoint-every=1", "step-24", "model.safetensors"), "rb").read()
    expect(model == want_model, "model.safetensors differs from the uninterrupted run's")


def case_resume_refused():
    """A resume that would change the model or the data order is refused, exit 2, naming each difference."""
    ck = os.path.join(TMP, "ref2")
    run("run", "examples/my-run.sx", "--steps", "2", "--checkpoint-dir", ck)
    d = os.path.join(ck, "my-run", "step-2")
    p = run("run", "examples/my-run.sx", "--set", "d-model=16", "--set", "seed=4", "--resume", d, check_rc=2)
    expect("resume: refused d-model 32 -> 16" in p.stderr and "resume: refused seed 1 -> 4" in p.stderr, p.stderr)
    expect("error[E-CKPT-040]" in p.stderr, p.stderr)
    q = run("run", "examples/my-run.sx", "--steps", "4", "--eval-every", "5", "--resume", d)
    expect("resume: safe eval-every - -> 5" in q.stderr and "resume: safe steps 2 -> 4" in q.stderr, q.stderr)
    done = run("run", "examples/my-run.sx", "--steps", "2", "--resume", d, "--json")
    expect(json.loads(done.stdout)["steps"] == 2, done.stdout)


def case_resume_optimizer_edit():
    """A literal of the optimizer edited in the file between stop and resume: another value is notable and
    printed as optimizer.<field>, another kind is refused; a knob's change is not repeated as a field."""
    d = os.path.join(TMP, "edit")
    os.makedirs(d)
    os.symlink(os.path.join(REPO, "examples", "data"), os.path.join(d, "data"))
    source = open(os.path.join(REPO, "examples", "my-run.sx")).read()
    sx = os.path.join(d, "my-run.sx")
    ck = os.path.join(d, "ck")
    open(sx, "w").write(source)
    run("run", sx, "--steps", "2", "--checkpoint-dir", ck)
    open(sx, "w").write(source.replace(":weight-decay 0.1", ":weight-decay 0.2 :clip 1.0"))
    # --set lr makes another slug: resumed from the folder, a fork.
    p = run("run", sx, "--steps", "3", "--checkpoint-dir", ck, "--resume", os.path.join(ck, "my-run", "step-2"),
            "--set", "lr=0.001")
    lines = [l for l in p.stderr.splitlines() if l.startswith("resume: ")]
    for want in ("resume: notable lr 0.003 -> 0.001", "resume: notable optimizer.clip - -> 1.0",
                 "resume: notable optimizer.weight-decay 0.1 -> 0.2"):
        expect(want in lines, f"no `{want}`:\n{p.stderr}")
    expect(not any("optimizer.lr" in l for l in lines), f"the lr knob's change was repeated:\n{p.stderr}")
    open(sx, "w").write(source.replace("(adamw :lr (knob lr) :weight-decay 0.1)", "(sgd :lr (knob lr))"))
    q = run("run", sx, "--steps", "4", "--checkpoint-dir", ck, "--resume", "latest", check_rc=2)
    expect("resume: refused optimizer.kind adamw -> sgd" in q.stderr, q.stderr)


def case_corrupt_checkpoint():
    """A corrupt checkpoint is refused with E-CKPT, exit 2, never a crash."""
    ck = os.path.join(TMP, "bad")
    run("run", "examples/my-run.sx", "--steps", "1", "--checkpoint-dir", ck)
    d = os.path.join(ck, "my-run", "step-1")
    with open(os.path.join(d, "model.safetensors"), "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0x40]))
    p = run("run", "examples/my-run.sx", "--resume", d, check_rc=2)
    expect("error[E-CKPT-023]" in p.stderr, p.stderr)
    os.remove(os.path.join(d, "COMPLETE"))
    p = run("run", "examples/my-run.sx", "--resume", d, check_rc=2)
    expect("error[E-CKPT-022]" in p.stderr, p.stderr)


def case_interop_safetensors():
    """model.safetensors read by a small independent reader (no sexpgpu code): every parameter by model path."""
    import struct
    ck = os.path.join(TMP, "interop")
    run("run", "examples/my-run.sx", "--steps", "1", "--checkpoint-dir", ck)
    data = open(os.path.join(ck, "my-run", "step-1", "model.safetensors"), "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    expl = run("explain", "examples/my-run.sx").stdout
    want = {m.group(1): [int(x) for x in m.group(2).split(",")]
            for m in re.finditer(r"^  (\S+)\s+\[([\d,]+)\]\s+\d+$", expl, re.M)}
    names = {k for k in header if k != "__metadata__"}
    expect(names == set(want), f"tensors {sorted(names ^ set(want))}")
    for name in names:
        t = header[name]
        expect(t["dtype"] == "F32" and t["shape"] == want[name], f"{name}: {t}")
        b, e = t["data_offsets"]
        values = struct.unpack(f"<{(e - b) // 4}f", body[b:e])
        count = 1
        for d in t["shape"]:
            count *= d
        expect(len(values) == count and all(v == v and abs(v) < 1e3 for v in values), name)
    g = header["blocks.0.ln1.g"]
    gains = struct.unpack(f"<32f", body[g["data_offsets"][0]:g["data_offsets"][1]])
    expect(all(abs(v - 1) < 0.1 for v in gains), "layer-norm gains start at ones and moved by one step")


main(globals())
