#!/usr/bin/env python3
"""End-to-end tests of `sexpgpu run`: the real binary, real processes and signals.

    e2e.py SEXPGPU REPO CASE     runs one case (see the case_ functions); exit 0 when it passes.
    UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
Checkpoints and resume are in resume.py, the S3 cases in s3.py; what they share is in harness.py.
"""
import json, os, re, signal, subprocess, time

from harness import REPO, SEXPGPU, TMP, clean_env, expect, golden, jsonl, main, mask_times, run, steps_written


def case_seed_stderr():
    """The seed-shaped example's standard error, line for line, times masked."""
    p = run("run", "examples/my-run.sx")
    golden("my-run.stderr", mask_times(p.stderr))
    expect(p.stdout == "", "nothing on standard output without --json")


def case_json_summary():
    """--json: one summary object on standard output, fields in the seed's order."""
    status = os.path.join(TMP, "s.json")
    metrics = os.path.join(TMP, "m.jsonl")
    p = run("run", "examples/my-run.sx", "--json", "--metrics", "jsonl:" + metrics, "--status", status)
    lines = p.stdout.strip().splitlines()
    expect(len(lines) == 1, f"one line on stdout, found {lines}")
    s = json.loads(lines[0])
    expect(list(s) == ["kind", "steps", "train_loss", "eval", "counters", "stage", "metrics", "status"],
           f"summary fields in order, found {list(s)}")
    expect(s["kind"] == "summary" and s["steps"] == 20 and s["stage"] == 0, str(s))
    expect(s["counters"] == {"records": 160, "tokens": 2720}, str(s["counters"]))
    expect(list(s["eval"]) == ["eval/loss"], str(s["eval"]))
    expect(s["metrics"] == os.path.realpath(metrics) or s["metrics"] == metrics, s["metrics"])
    expect(s["status"] == status, s["status"])
    expect("done:" not in p.stderr, "no done: block with --json")
    recs = jsonl(metrics)
    expect(recs[-1] == s, "the metrics file ends with the same summary")
    steps = [r for r in recs if r["kind"] == "step"]
    expect(abs(steps[-1]["train/loss"] - s["train_loss"]) == 0, "train_loss is the last step's loss")
    expect([r["step"] for r in steps] == list(range(1, 21)), "steps counted from 1")
    evals = [r for r in recs if r["kind"] == "eval"]
    expect([r["step"] for r in evals] == [0, 10, 20], "passes at 0, 10, 20")


def case_overrides_recorded():
    """--steps 3 --variant smoke: knobs of source override and variant in meta and status."""
    status = os.path.join(TMP, "s.json")
    metrics = os.path.join(TMP, "m.jsonl")
    p = run("run", "examples/my-run.sx", "--steps", "3", "--variant", "smoke", "--metrics",
            "jsonl:" + metrics, "--status", status)
    meta = jsonl(metrics)[0]
    expect(meta["kind"] == "meta" and meta["slug"] == "my-run-smoke", str(meta))
    for m in (meta, json.load(open(status))):
        knobs = {k["name"]: k for k in m["knobs"]}
        expect(knobs["steps"] == {"name": "steps", "value": 3, "source": "override"}, str(knobs["steps"]))
        expect(knobs["d-model"] == {"name": "d-model", "value": 16, "source": "variant"}, str(knobs["d-model"]))
        expect(knobs["lr"]["source"] == "default", str(knobs["lr"]))
    st = json.load(open(status))
    expect(st["state"] == "done" and st["step"] == 3 and st["summary"]["steps"] == 3, str(st))
    expect("steps 3 " in p.stderr.splitlines()[0], p.stderr)


def case_eval_every_zero():
    """--eval-every 0: only the pass after the last step."""
    p = run("run", "examples/my-run.sx", "--eval-every", "0")
    lines = p.stderr.splitlines()
    expect(" evals eval@0 " in lines[0], lines[0])
    progress = [l for l in lines if l.startswith("step ")]
    expect(len(progress) == 1 and progress[0].startswith("step 20/20 "), str(progress))


def case_curriculum():
    """The curriculum advances after passes; with --eval-every 0 it never does."""
    metrics = os.path.join(TMP, "c.jsonl")
    p = run("run", "examples/curriculum.sx", "--json", "--metrics", "jsonl:" + metrics)
    expect("stage 1 cool at step 5 (eval/loss " in p.stderr, p.stderr)
    expect("stage 2 late at step 25 (step 25 >= 25)" in p.stderr, p.stderr)
    expect(json.loads(p.stdout)["stage"] == 2, p.stdout)
    stages = [r for r in jsonl(metrics) if r["kind"] == "event" and r["event"] == "stage"]
    expect([(e["step"], e["to"]) for e in stages] == [(5, 1), (25, 2)], str(stages))
    steps = [r for r in jsonl(metrics) if r["kind"] == "step"]
    # lr-scale 0.1 from the step after the stage change
    expect(abs(steps[5]["lr"] - 0.0003) < 1e-9 and abs(steps[4]["lr"] - 0.003) < 1e-9,
           f"{steps[4]['lr']} {steps[5]['lr']}")
    q = run("run", "examples/curriculum.sx", "--json", "--eval-every", "0")
    expect("stage " not in q.stderr and json.loads(q.stdout)["stage"] == 0, q.stderr)


def case_poller():
    """A reader polling sees a whole status object every time, and metrics lines that are whole or cut only by the kernel's page-by-page append."""
    status = os.path.join(TMP, "poll.json")
    metrics = os.path.join(TMP, "poll.jsonl")
    e = clean_env()
    proc = subprocess.Popen([SEXPGPU, "run", "examples/my-run.sx", "--steps", "60", "--status", status,
                             "--metrics", "jsonl:" + metrics], cwd=REPO, env=e,
                            stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    reads = 0
    states = set()
    tails = []  # (offset, text) of each tail seen without its newline
    while True:
        finished = proc.poll() is not None
        for path, is_status in ((status, True), (metrics, False)):
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                continue
            reads += 1
            text = data.decode("utf-8", "replace")
            if is_status:
                obj = json.loads(text)  # raises on a partial object
                expect(obj["kind"] == "status", text)
                states.add(obj["state"])
            else:
                # One write per line; the kernel may still expose a line crossing
                # a page boundary page by page (docs/metrics.md), so a tail
                # without its newline must end on a page boundary and be the
                # start of a line that a later read sees whole.
                whole, _, tail = data.rpartition(b"\n")
                for line in whole.splitlines():
                    json.loads(line)
                if tail:
                    expect(len(data) % 4096 == 0,
                           f"a metrics line was seen cut at byte {len(data)}, not on a page boundary: {tail!r}")
                    tails.append((len(whole) + 1, tail))
        if finished:
            break
    expect(proc.returncode == 0, f"exit {proc.returncode}")
    expect(reads > 10, f"polled only {reads} times")
    expect("done" in states, str(states))
    with open(metrics, "rb") as f:
        final = f.read()
    expect(final.endswith(b"\n"), "the metrics file ends without a newline")
    for offset, tail in tails:
        line = final[offset:].split(b"\n", 1)[0]
        expect(line.startswith(tail), f"the tail {tail!r} seen at {offset} is not the start of {line!r}")


def case_sigterm():
    """SIGTERM mid-run: stops at a step boundary, exit 143, state stopped, a summary."""
    status = os.path.join(TMP, "sig.json")
    metrics = os.path.join(TMP, "sig.jsonl")
    e = clean_env()
    proc = subprocess.Popen([SEXPGPU, "run", "examples/my-run.sx", "--steps", "100000", "--json", "--status",
                             status, "--metrics", "jsonl:" + metrics], cwd=REPO, env=e,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        if os.path.exists(metrics) and sum(1 for l in open(metrics) if '"kind":"step"' in l) >= 3:
            break
        time.sleep(0.05)
    t0 = time.time()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    took = time.time() - t0
    expect(proc.returncode == 143, f"exit {proc.returncode}\n{err}")
    expect(took < 10, f"took {took:.1f}s to stop")
    s = json.loads(out.strip().splitlines()[-1])
    expect(s["state"] == "stopped" and s["steps"] >= 3, out)
    expect(list(s)[-1] == "state", "state comes last in a stopped summary")
    st = json.load(open(status))
    expect(st["state"] == "stopped" and st["summary"]["state"] == "stopped", str(st))
    expect(re.search(r"^stopping: SIGTERM at step \d+ \(\d+\.\d+s to exit\)$", err, re.M), err)
    recs = jsonl(metrics)
    expect(recs[-1]["kind"] == "summary", "the summary is the last record")
    sig = [r for r in recs if r["kind"] == "event" and r["event"] == "signal"]
    expect(len(sig) == 1 and sig[0]["name"] == "SIGTERM", str(sig))
    steps = [r["step"] for r in recs if r["kind"] == "step"]
    expect(steps == list(range(1, len(steps) + 1)) and steps[-1] == s["steps"], "every step recorded once")


def case_second_signal():
    """A second SIGTERM while stopping exits at once with 143 and abandons the checkpoint in progress: whatever
    moment it lands, every step-<n> with COMPLETE loads, `latest` resumes, and the next checkpoint cleans the
    abandoned .partial folder."""
    ck = os.path.join(TMP, "second-ck")
    m = os.path.join(TMP, "second.jsonl")
    # A larger model, so that the checkpoint on the way out takes a while to write.
    args = ["run", "examples/my-run.sx", "--steps", "100000", "--set", "d-model=64", "--set", "layers=12",
            "--set", "checkpoint-every=2", "--checkpoint-dir", ck, "--resume", "latest"]
    abandoned = 0
    for delay in (0.0, 0.002, 0.01, 0.03):
        p = subprocess.Popen([SEXPGPU, *args, "--metrics", "jsonl:" + m], cwd=REPO, env=clean_env(),
                             stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        start = steps_written(m)
        deadline = time.time() + 120
        while p.poll() is None and steps_written(m) < start + 5 and time.time() < deadline:
            time.sleep(0.01)
        p.send_signal(signal.SIGTERM)
        time.sleep(delay)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        expect(p.returncode == 143, f"exit {p.returncode} after two SIGTERMs:\n{err}")
        if "stopping:" not in err:
            abandoned += 1
    (slug,) = os.listdir(ck)
    run_dir = os.path.join(ck, slug)
    for name in os.listdir(run_dir):
        if name.startswith("step-") and ".partial" not in name:
            expect(os.path.exists(os.path.join(run_dir, name, "COMPLETE")), f"{name} has no COMPLETE")
    print(f"{abandoned} of 4 runs exited on the second signal before the stop finished;",
          "left:", sorted(os.listdir(run_dir)))
    q = run(*args[:3], str(max(r["step"] for r in jsonl(m) if r["kind"] == "step") + 1), *args[4:])
    expect("resume latest=" in q.stderr and "latest=none" not in q.stderr, q.stderr)
    left = [n for n in os.listdir(run_dir) if ".partial" in n]
    expect(not left, f"the next checkpoint left abandoned folders: {left}")


def case_learns():
    """An example learns: eval loss after 200 steps far below ln(32) = 3.47."""
    p = run("run", "examples/learn.sx", "--steps", "200", "--json")
    loss = json.loads(p.stdout)["eval"]["eval/loss"]
    expect(loss < 1.8, f"eval/loss {loss} after 200 steps")


def case_threads_identical():
    """The same run on 1 and 2 threads writes bit-identical step records."""
    out = []
    for t in ("1", "2"):
        m = os.path.join(TMP, f"t{t}.jsonl")
        run("run", "examples/my-run.sx", "--metrics", "jsonl:" + m, env={"SEXPGPU_THREADS": t})
        out.append([(r["step"], r["train/loss"]) for r in jsonl(m) if r["kind"] == "step"] +
                   [(r["step"], r["eval/loss"]) for r in jsonl(m) if r["kind"] == "eval"])
    expect(out[0] == out[1], f"{out[0]}\n{out[1]}")


def case_nonfinite():
    """A non-finite loss stops the run as failed with E-NUM-001 at that step, exit 1."""
    status = os.path.join(TMP, "nf.json")
    metrics = os.path.join(TMP, "nf.jsonl")
    p = run("run", "tests/e2e/nonfinite.sx", "--json", "--status", status, "--metrics", "jsonl:" + metrics,
            check_rc=1)
    expect("error[E-NUM-001]: train/loss is not finite at step 1" in p.stderr, p.stderr)
    expect(p.stderr.rstrip().endswith("failed: E-NUM-001 at step 1"), p.stderr)
    s = json.loads(p.stdout)
    expect(s["state"] == "failed" and s["error"]["code"] == "E-NUM-001" and s["steps"] == 0, str(s))
    expect(list(s)[-2:] == ["state", "error"], str(list(s)))
    expect(json.load(open(status))["state"] == "failed", "status says failed")
    kinds = [(r["kind"], r.get("event")) for r in jsonl(metrics)]
    expect(("event", "nonfinite") in kinds and ("event", "error") in kinds and kinds[-1][0] == "summary", str(kinds))


def case_metrics_stdout():
    """--metrics stdout --json: records on standard output, the summary once, last."""
    p = run("run", "examples/my-run.sx", "--steps", "2", "--metrics", "stdout", "--json")
    recs = [json.loads(l) for l in p.stdout.splitlines()]
    expect(recs[0]["kind"] == "meta" and recs[-1]["kind"] == "summary", str(recs[:1]))
    expect(sum(1 for r in recs if r["kind"] == "summary") == 1, "one summary")
    expect("metrics: stdout" in p.stderr, p.stderr)


def case_signal_during_compile():
    """A signal during compilation stops the run before the first step, promptly."""
    e = clean_env()
    e["SEXPGPU_EVAL_LIMIT"] = "1000000000"
    status = os.path.join(TMP, "compile.json")
    p = subprocess.Popen([SEXPGPU, "run", "tests/e2e/slow_compile.sx", "--json", "--status", status], cwd=REPO,
                         env=e, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # The status file says `compiling` once the run is listening for signals (a sanitizer build starts slowly).
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(status):
        time.sleep(0.01)
    time.sleep(0.2)
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    took = time.time() - t0
    expect(p.returncode == 130, f"exit {p.returncode}: {err}")
    expect(took < 2, f"{took:.2f}s from the signal to the exit")
    expect(re.search(r"^stopping: SIGINT before the first step \(\d+\.\d+s to exit\)$", err, re.M), err)
    expect(json.loads(out)["state"] == "stopped", out)


def stop_during_pass(at):
    """SIGTERM once step `at` is recorded, so it lands in that step's pass; then resume with latest."""
    ck = os.path.join(TMP, f"lp{at}")
    m = os.path.join(TMP, f"lp{at}.jsonl")
    p = subprocess.Popen([SEXPGPU, "run", "tests/e2e/long_pass.sx", "--checkpoint-dir", ck, "--metrics",
                          "jsonl:" + m], cwd=REPO, env=clean_env(), stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        recs = [json.loads(l) for l in open(m)] if os.path.exists(m) else []
        if any(r["kind"] == "step" and r["step"] == at for r in recs):
            break
        time.sleep(0.005)
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    took = time.time() - t0
    if p.returncode == 0 and at == 4:
        print("note: the run finished before the signal landed")
        return
    expect(p.returncode == 143, f"exit {p.returncode}: {err}")
    expect(took < 10, f"{took:.2f}s from the signal to the exit")
    state = json.load(open(os.path.join(ck, "long_pass", f"step-{at}", "state.json")))
    passes = [r for r in jsonl(m) if r["kind"] == "eval" and r["step"] == at]
    expect(state["passes_due"] == ([] if passes else ["eval"]), f"{state['passes_due']} with {len(passes)} pass records")
    q = run("run", "tests/e2e/long_pass.sx", "--checkpoint-dir", ck, "--resume", "latest", "--metrics", "jsonl:" + m)
    lines = [l for l in q.stderr.splitlines() if l.startswith("step ")]
    if not passes:
        expect(lines and lines[0].startswith(f"step {at}/4 "),
               "the abandoned pass runs first after the resume: " + str(lines))
    evals = sorted(r["step"] for r in jsonl(m) if r["kind"] == "eval")
    expect(evals == [0, 2, 4], f"each pass recorded once: {evals}")


def case_signal_during_pass():
    """A signal during an evaluation pass abandons it; the checkpoint records it as due; the resume runs it first."""
    stop_during_pass(2)


def case_signal_during_last_pass():
    """The same during the pass after the last step: the checkpoint is at the last step with the pass due, and
    the resume (nothing left to train) still runs the pass before it ends."""
    stop_during_pass(4)


main(globals())
