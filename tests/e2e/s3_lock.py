#!/usr/bin/env python3
"""End-to-end tests of the lock of an S3 checkpoint location (a lease object,
<prefix>/<slug>/.lock): a second run refused naming the holder, the lock
released at the end, a kill -9 taken over at once on the same host, stale and
live locks of another host, and an object that is not a lock.

    s3_lock.py SEXPGPU REPO CASE      skips (exit 0, "SKIP:") without moto.
"""
import json, os, signal, socket, subprocess, time

from harness import REPO, SEXPGPU, TMP, Moto, clean_env, expect, main, run, steps_written

MY_RUN = "examples/my-run.sx"
LOCATION = "s3://sx-ckpt/lk"
SLUG = "my-run-checkpoint-every=50"
LOCK = f"lk/{SLUG}/.lock"


def start(moto, metrics, *extra):
    return subprocess.Popen([SEXPGPU, "run", MY_RUN, "--steps", "100000", "--checkpoint-dir", LOCATION, "--set",
                             "checkpoint-every=50", "--resume", "latest", "--metrics", "jsonl:" + metrics, *extra],
                            cwd=REPO, env=clean_env(moto.env()), stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


def stepping(p, metrics):
    deadline = time.time() + 180
    while p.poll() is None and steps_written(metrics) == 0 and time.time() < deadline:
        time.sleep(0.02)
    expect(p.poll() is None, f"the run ended early:\n{p.communicate()[1] if p.poll() is not None else ''}")
    expect(steps_written(metrics) > 0, "the run made no step in 180 s")


def lock_object(moto):
    import botocore
    try:
        return json.loads(moto.client().get_object(Bucket="sx-ckpt", Key=LOCK)["Body"].read())
    except botocore.exceptions.ClientError:
        return None


def second_run(moto, tag):
    m = os.path.join(TMP, f"{tag}.jsonl")
    p = run("run", MY_RUN, "--steps", "3", "--checkpoint-dir", LOCATION, "--set", "checkpoint-every=50",
            "--resume", "latest", "--metrics", "jsonl:" + m, env=moto.env(), check_rc=None)
    return p, m


def case_s3_lock_concurrent():
    """While a run holds the location, a second one is refused at start (E-CKPT-052, exit 2) naming the holder's
    pid and host; the holder's lock object says who it is; SIGTERM ends the first run and deletes its lock."""
    moto = Moto()
    m = os.path.join(TMP, "first.jsonl")
    first = start(moto, m)
    stepping(first, m)
    held = lock_object(moto)
    expect(held and held["pid"] == first.pid and held["host"] == socket.gethostname(), f"lock object: {held}")
    expect(held["expires"] > time.time() + 60, f"a lease that runs out too soon: {held}")
    p, m2 = second_run(moto, "second")
    expect(p.returncode == 2 and "error[E-CKPT-052]" in p.stderr, f"exit {p.returncode}:\n{p.stderr}")
    expect(f"pid {first.pid} on host {socket.gethostname()}" in p.stderr, p.stderr)
    expect(steps_written(m2) == 0, "the refused run made a step")
    first.send_signal(signal.SIGTERM)
    _, err = first.communicate(timeout=120)
    expect(first.returncode == 143, f"exit {first.returncode}:\n{err}")
    expect(lock_object(moto) is None, "the lock outlived its run")
    moto.close()


def case_s3_lock_kill9_taken_over():
    """A run killed with SIGKILL leaves its lock; the next run on this host takes it over at once (the holder's
    process is gone), says so, resumes and ends with the lock deleted."""
    moto = Moto()
    m = os.path.join(TMP, "killed.jsonl")
    first = start(moto, m)
    stepping(first, m)
    first.kill()
    first.communicate(timeout=60)
    expect(lock_object(moto)["pid"] == first.pid, "the killed run's lock is not there")
    t0 = time.time()
    p, _ = second_run(moto, "after-kill")
    expect(p.returncode == 0, f"exit {p.returncode}:\n{p.stderr}")
    expect(f"warning: took over the lock {LOCATION}/{SLUG}/.lock of pid {first.pid} on host" in p.stderr and
           f"process {first.pid} is gone from this host\n" in p.stderr, p.stderr)
    expect(time.time() - t0 < 120, "the take-over waited")
    expect(lock_object(moto) is None, "the lock outlived its run")
    moto.close()


def case_s3_lock_other_host():
    """Locks written by a run on another host: a live lease refuses (naming pid and host), one whose lease ran
    out is taken over with a warning; an object that is not a lock is refused with how to clear it."""
    moto = Moto()
    s3 = moto.client()

    def put(body):
        s3.put_object(Bucket="sx-ckpt", Key=LOCK, Body=body)

    now = int(time.time())
    lock = {"pid": 4242, "host": "gpu-7", "since": now - 100, "token": "elsewhere"}
    put(json.dumps({**lock, "expires": now + 600}))
    p, m = second_run(moto, "live")
    expect(p.returncode == 2 and "error[E-CKPT-052]" in p.stderr and "pid 4242 on host gpu-7" in p.stderr, p.stderr)
    expect(steps_written(m) == 0, "the refused run made a step")
    put(json.dumps({**lock, "expires": now - 5}))
    p, _ = second_run(moto, "stale")
    expect(p.returncode == 0, p.stderr)
    expect("warning: took over the lock" in p.stderr and "its lease ran out at" in p.stderr, p.stderr)
    expect(lock_object(moto) is None, "the lock outlived its run")
    put("\x1b]0;owned\x07 not a lock")
    p, _ = second_run(moto, "garbage")
    expect(p.returncode == 2 and "not a lock sexpgpu wrote" in p.stderr, p.stderr)
    expect("\x1b" not in p.stderr and "\\x1b" in p.stderr, "the object's text reached the terminal raw")
    moto.close()


main(globals())
