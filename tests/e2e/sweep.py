#!/usr/bin/env python3
"""End-to-end tests of `sexpgpu sweep`: one process per run, the same numbers
as the runs made alone, resumable after a kill -9, past a failing run,
--parallel, --json, the manifest checked on re-run, SIGTERM forwarded.

    sweep.py SEXPGPU REPO CASE
"""
import json, os, signal, subprocess, time

from harness import REPO, SEXPGPU, TMP, clean_env, expect, fail, jsonl, latest_records, main, run

SX = "tests/e2e/sweep.sx"
GRID = ["--set", "lr=0.01,0.003", "--set", "layers=1,2"]
# In grid order (the last axis fastest); each slug names its knobs in name order.
SLUGS = ["sweep-layers=1-lr=0.01", "sweep-layers=2-lr=0.01", "sweep-layers=1-lr=0.003", "sweep-layers=2-lr=0.003"]


def sweep(*args, check_rc=0, env=None):
    return run("sweep", SX, *args, env=env, check_rc=check_rc)


def alone(slug, sets, *extra):
    """The same run made alone, with its own metrics file: its latest records."""
    path = os.path.join(TMP, "alone-" + slug + ".jsonl")
    if not os.path.exists(path):
        args = [a for k, v in sets for a in ("--set", f"{k}={v}")]
        run("run", SX, *args, *extra, "--metrics", "jsonl:" + path)
    return latest_records(path)


def same_as_alone(d, slug, sets, *extra):
    got, want = latest_records(os.path.join(d, slug + ".jsonl")), alone(slug, sets, *extra)
    expect(got == want, f"{slug}: the sweep's records differ from the run made alone:\n{got}\n{want}")


def sets_of(slug):
    return [tuple(part.split("=")) for part in slug.split("-")[1:]]


def status(d, slug):
    with open(os.path.join(d, slug + ".status.json")) as f:
        return json.load(f)


def wait_for(cond, what, seconds=300):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    fail(f"timed out after {seconds} s waiting for {what}")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


def case_grid_same_as_alone():
    d = os.path.join(TMP, "grid")
    p = sweep(*GRID, "--dir", d)
    lines = p.stdout.splitlines()
    expect(lines[0].split() == ["slug", "train/loss", "eval/loss", "steps", "time", "state"], p.stdout)
    expect([l.split()[0] for l in lines[1:]] == SLUGS, p.stdout)
    expect(all(l.split()[-1] == "done" and l.split()[3] == "8" for l in lines[1:]), p.stdout)
    for slug in SLUGS:
        same_as_alone(d, slug, sets_of(slug))
        expect(status(d, slug)["state"] == "done", slug)
        # The table's loss is the file's last step.
        last = latest_records(os.path.join(d, slug + ".jsonl"))[("step", None, 8)]["train/loss"]
        row = next(l for l in lines if l.startswith(slug + " "))
        expect(row.split()[1] == f"{last:.4f}", row)
    expect(os.path.isdir(os.path.join(d, "checkpoints", SLUGS[0])), "no checkpoints under D/checkpoints/<slug>")
    # Again: every run is done, so none starts and no file changes.
    before = {s: open(os.path.join(d, s + ".jsonl")).read() for s in SLUGS}
    again = sweep(*GRID, "--dir", d)
    expect("(4 done before)" in again.stderr and "sweep: start" not in again.stderr, again.stderr)
    expect(again.stdout == p.stdout, f"the table differs:\n{again.stdout}\n{p.stdout}")
    expect(all(open(os.path.join(d, s + ".jsonl")).read() == before[s] for s in SLUGS), "a done run ran again")
    # A changed grid in the same folder is refused before anything runs, with what changed.
    changed = sweep("--set", "lr=0.01,0.001", "--set", "layers=1,2", "--dir", d, check_rc=2)
    expect("error[E-CLI-030]" in changed.stderr and "adds sweep-layers=1-lr=0.001" in changed.stderr
           and "drops sweep-layers=1-lr=0.003" in changed.stderr, changed.stderr)


def case_defsweep_default_dir():
    # Without a --set grid, the file's defsweep; D beside the file.
    d = os.path.join(REPO, "tests", "e2e", ".sexpgpu", "sweep", "sweep")
    subprocess.run(["rm", "-rf", d], check=True)
    try:
        p = sweep("--steps", "2", "--json")
        rows = [json.loads(l) for l in p.stdout.splitlines()]
        expect([r["slug"] for r in rows] == ["sweep-lr=0.01", "sweep-lr=0.003"], p.stdout)
        expect(all(r["state"] == "done" and r["steps"] == 2 and r["error"] is None for r in rows), p.stdout)
        expect(all(set(r) == {"kind", "slug", "state", "train_loss", "eval", "steps", "time_s", "error"} for r in rows),
               p.stdout)
        for r in rows:
            recs = latest_records(os.path.join(d, r["slug"] + ".jsonl"))
            expect(r["train_loss"] == recs[("step", None, 2)]["train/loss"], r)
            expect(r["eval"]["eval/loss"] == recs[("eval", "eval", 2)]["eval/loss"], r)
    finally:
        subprocess.run(["rm", "-rf", os.path.join(REPO, "tests", "e2e", ".sexpgpu")])


def case_failing_run():
    # lr=-1 is refused by the knob's :min; the others run, the table shows the code, the sweep exits 1.
    d = os.path.join(TMP, "failing")
    p = sweep("--set", "lr=-1,0.01", "--dir", d, "--steps", "2", check_rc=1)
    rows = {l.split()[0]: l for l in p.stdout.splitlines()[1:]}
    code = status(d, "sweep-lr=-1")["error"]["code"]
    expect(code.startswith("E-KNOB-") and rows["sweep-lr=-1"].endswith("failed " + code), p.stdout)
    expect(rows["sweep-lr=0.01"].endswith("done"), p.stdout)
    # Run again: the done run is skipped, the failed one tried again (and fails again).
    again = sweep("--set", "lr=-1,0.01", "--dir", d, "--steps", "2", check_rc=1)
    expect("sweep: start sweep-lr=-1 " in again.stderr and "sweep: start sweep-lr=0.01 " not in again.stderr,
           again.stderr)


def case_parallel():
    d = os.path.join(TMP, "parallel")
    p = sweep(*GRID, "--dir", d, "--parallel", "2", env={"SEXPGPU_THREADS": "4"})
    expect("2 at once, 2 threads each" in p.stderr, p.stderr)
    for slug in SLUGS:
        same_as_alone(d, slug, sets_of(slug))
    # Two at once, never three: count the live runs along the sweep's own start/ended lines (the
    # runs' own timestamps do not show it: under load a short run can end before the next compiles).
    live, most = 0, 0
    for line in p.stderr.splitlines():
        live += line.startswith("sweep: start ") - (line.startswith("sweep: ") and ", exit " in line)
        most = max(most, live)
    expect(most == 2 and live == 0, f"expected at most and at some point 2 runs alive:\n{p.stderr}")


def case_killed_and_rerun():
    # kill -9 mid-way; the runs get SIGTERM from the kernel (their parent died) and checkpoint; run again.
    d = os.path.join(TMP, "killed")
    args = ["sweep", SX, "--set", "lr=0.01,0.003", "--steps", "300", "--dir", d]
    p = subprocess.Popen([SEXPGPU, *args], cwd=REPO, env=clean_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = os.path.join(d, "sweep-lr=0.01.jsonl")
    wait_for(lambda: os.path.exists(first) and '"step":6,' in open(first).read(), "step 6 of the first run")
    pid = status(d, "sweep-lr=0.01")["pid"]
    p.kill()
    p.communicate()
    wait_for(lambda: not alive(pid), "the orphaned run to stop")
    expect(status(d, "sweep-lr=0.01")["state"] != "done", "the first run finished before the kill")
    again = run(*args)
    expect("(0 done before)" in again.stderr, again.stderr)
    for slug in ["sweep-lr=0.01", "sweep-lr=0.003"]:
        same_as_alone(d, slug, sets_of(slug), "--steps", "300")
        expect(status(d, slug)["state"] == "done", slug)


def case_sigterm_forwarded():
    d = os.path.join(TMP, "sigterm")
    args = ["sweep", SX, "--set", "lr=0.01,0.003", "--steps", "300", "--dir", d, "--parallel", "2"]
    p = subprocess.Popen([SEXPGPU, *args], cwd=REPO, env=clean_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    files = [os.path.join(d, s + ".jsonl") for s in ("sweep-lr=0.01", "sweep-lr=0.003")]
    wait_for(lambda: all(os.path.exists(f) and '"step":2,' in open(f).read() for f in files), "step 2 of both runs")
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=300)
    expect(p.returncode == 128 + signal.SIGTERM, f"exit {p.returncode}\n{err}")
    rows = out.splitlines()[1:]
    expect(len(rows) == 2 and all(r.split()[-1] == "stopped" for r in rows), out)
    for s in ("sweep-lr=0.01", "sweep-lr=0.003"):
        expect(status(d, s)["state"] == "stopped", s)
    again = run(*args)
    for slug in ["sweep-lr=0.01", "sweep-lr=0.003"]:
        same_as_alone(d, slug, sets_of(slug), "--steps", "300")


main(globals())
