#!/usr/bin/env python3
"""End-to-end tests of `sexpgpu watch`: in a real terminal (tmux, read with
capture-pane) against a run in progress until its `done`; from a jsonl file
through a pipe; a file that is no run's refused.

    watch.py SEXPGPU REPO CASE
"""
import os, shutil, subprocess, time, uuid

from harness import REPO, SEXPGPU, TMP, clean_env, expect, fail, main, run

SX = "tests/e2e/sweep.sx"


def case_terminal_until_done():
    if not shutil.which("tmux"):
        fail("tmux is not installed (scripts/setup.sh installs it)")
    status = os.path.join(TMP, "run.status.json")
    env = clean_env()
    # A longer run (a few seconds): the status file is rewritten about once a second while it runs. Its
    # stderr (53 KB, a line every 4 steps) goes to a file: a pipe read only at the end holds 64 KiB, and a
    # run that filled it would wait there, its status file no longer rewritten.
    run_log = open(os.path.join(TMP, "runner.stderr"), "w+")
    runner = subprocess.Popen([SEXPGPU, "run", SX, "--steps", "3000", "--status", status], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=run_log, text=True)
    session = "sx-watch-" + uuid.uuid4().hex[:8]
    sock = os.path.join(TMP, "tmux.sock")
    tmux = lambda *a: subprocess.run(["tmux", "-S", sock, *a], capture_output=True, text=True, timeout=30)
    done_file = os.path.join(TMP, "watch.rc")
    cmd = f"'{SEXPGPU}' watch '{status}' --interval 0.1; echo $? > '{done_file}'; sleep 60"
    p = tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "12", cmd)
    expect(p.returncode == 0, "tmux new-session: " + p.stderr)
    try:
        seen_running, screen, deadline = False, "", time.time() + 300
        while time.time() < deadline and not os.path.exists(done_file):
            screen = tmux("capture-pane", "-p", "-t", session).stdout
            seen_running = seen_running or " running  step " in screen
            time.sleep(0.05)
        expect(os.path.exists(done_file), "watch did not end after the run's done:\n" + screen)
        time.sleep(0.2)
        screen = tmux("capture-pane", "-p", "-t", session).stdout
        expect(open(done_file).read().strip() == "0", "watch exits 0 at the run's end")
        expect(seen_running, "the view showed the run while it was running")
        expect("sweep  done  step 3000/3000 (100%)  cpu" in screen, "the last view:\n" + screen)
        expect("train/loss " in screen and "eval/loss " in screen and "loss " in screen, screen)
        # Redrawn in place: one view on the screen, not a scroll of them.
        expect(screen.count("train/loss") == 1, "one view on the screen:\n" + screen)
    finally:
        tmux("kill-server")
        runner.wait(timeout=300)
    run_log.seek(0)
    expect(runner.returncode == 0, "the run: " + run_log.read())


def case_jsonl_through_a_pipe():
    metrics = os.path.join(TMP, "m.jsonl")
    ck = os.path.join(TMP, "ck")
    run("run", SX, "--checkpoint-dir", ck, "--metrics", "jsonl:" + metrics)
    # A second segment that re-runs steps 5..8.
    run("run", SX, "--checkpoint-dir", ck, "--resume", os.path.join(ck, "sweep", "step-4"), "--metrics", "jsonl:" + metrics)
    p = run("watch", metrics)
    lines = p.stdout.splitlines()
    expect(lines[0] == "sweep  done  step 8/8 (100%)  cpu", p.stdout)
    expect("(last 8 steps)" in p.stdout, "the history of 8 steps, the later segment winning:\n" + p.stdout)


def case_not_a_run_refused():
    other = os.path.join(TMP, "other.json")
    with open(other, "w") as f:
        f.write('{"hello": 1}\n')
    p = run("watch", other, "--once", check_rc=2)
    expect("E-CLI-060" in p.stderr, p.stderr)
    p = run("watch", other, "--interval", "0", check_rc=2)
    expect("E-CLI-002" in p.stderr and "--interval" in p.stderr, p.stderr)


main(globals())
