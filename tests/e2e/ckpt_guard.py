#!/usr/bin/env python3
"""End-to-end tests of what guards checkpoints and resumes: the location proven
before the first step, no mixing of two runs' checkpoints, the run folder's
lock, state.json checked for its meaning, only regular files read, old
checkpoints deleted without following symlinks, an S3 HEAD cut in its headers.

    ckpt_guard.py SEXPGPU REPO CASE
"""
import json, os, random, shutil, signal, socket, stat, subprocess, sys, time, hashlib

from harness import REPO, SEXPGPU, TMP, Moto, clean_env, expect, main, run, steps_written

MY_RUN = "examples/my-run.sx"


def no_steps(metrics):
    return steps_written(metrics) == 0


def refused_before_start(p, code, metrics=None):
    expect(p.returncode == 2, f"exit {p.returncode}, expected 2:\n{p.stderr}")
    expect(f"error[{code}]" in p.stderr, f"no {code}:\n{p.stderr}")
    expect("step 1/" not in p.stderr and "terminate called" not in p.stderr, p.stderr)
    if metrics:
        expect(no_steps(metrics), "a step ran before the refusal")


def wait_for(cond, what, seconds=180):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.02)
    expect(False, f"timed out after {seconds} s waiting for {what}")


def start(args, metrics, env=None):
    return subprocess.Popen([SEXPGPU, "run", *args, "--metrics", "jsonl:" + metrics], cwd=REPO,
                            env=clean_env(env), stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


# ---- the location is proven before step 1 ---------------------------------------


def case_location_proven_local():
    """A location through a regular file, and a read-only folder, are refused with E-CKPT-050, exit 2, before
    the first step; a location that does not exist yet is made."""
    f = os.path.join(TMP, "a-file")
    open(f, "w").write("x")
    m = os.path.join(TMP, "m1.jsonl")
    p = run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", f + "/ck", "--metrics", "jsonl:" + m, check_rc=None)
    refused_before_start(p, "E-CKPT-050", m)
    expect(f in p.stderr, p.stderr)

    ro = os.path.join(TMP, "ro")
    os.makedirs(ro)
    how = None
    if os.geteuid() == 0:
        if subprocess.run(["mount", "--bind", ro, ro], capture_output=True).returncode == 0:
            if subprocess.run(["mount", "-o", "remount,bind,ro", ro], capture_output=True).returncode == 0:
                how = "read-only bind mount"
            else:
                subprocess.run(["umount", ro])
        if how is None and subprocess.run(["chattr", "+i", ro], capture_output=True).returncode == 0:
            how = "chattr +i"
    else:
        os.chmod(ro, 0o555)
        how = "chmod 555"
    if how is None:
        print("SKIP: no way to make a read-only folder here (no bind mount, no chattr)")
        return
    try:
        m = os.path.join(TMP, "m2.jsonl")
        p = run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", ro, "--metrics", "jsonl:" + m, check_rc=None)
        refused_before_start(p, "E-CKPT-050", m)
        expect(ro + "/my-run" in p.stderr, p.stderr)
        print("read-only folder made by", how)
    finally:
        if how == "read-only bind mount":
            subprocess.run(["umount", ro])
        elif how == "chattr +i":
            subprocess.run(["chattr", "-i", ro])
        else:
            os.chmod(ro, 0o755)

    new = os.path.join(TMP, "not", "yet", "there")
    run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", new)
    expect(os.path.exists(os.path.join(new, "my-run", "step-2", "COMPLETE")), "no checkpoint in the new folder")
    expect(not [n for n in os.listdir(os.path.join(new, "my-run")) if n.startswith(".probe")], "a probe was left")


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def case_location_proven_s3():
    """In S3: a missing bucket, a wrong secret, a bucket the role may not write, an unreachable endpoint: each
    E-CKPT-050 naming the S3 error, exit 2, before the first step; a good location leaves no probe or lock.
    (With authentication on, moto answers 403 for a bucket outside the role's policy, as AWS does, so the
    missing bucket is asked of a moto without it.)"""
    moto, strict = Moto(), Moto(auth=True)
    cases = [("s3://no-such-bucket/runs", moto.env(), "E-S3-004"),
             ("s3://sx-ckpt/runs", strict.env(secret="wrong-secret"), "E-S3-003"),
             ("s3://sx-data/runs", strict.env(), "E-S3-003"),
             ("s3://sx-ckpt/runs", moto.env(endpoint=f"http://127.0.0.1:{closed_port()}"), "E-S3-001")]
    for i, (location, env, s3_code) in enumerate(cases):
        m = os.path.join(TMP, f"s3-{i}.jsonl")
        t0 = time.time()
        p = run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", location, "--metrics", "jsonl:" + m, env=env,
                check_rc=None)
        refused_before_start(p, "E-CKPT-050", m)
        expect(s3_code in p.stderr, f"{location}: no {s3_code}:\n{p.stderr}")
        expect("wrong-secret" not in p.stderr, "the secret leaked")
        print(f"{location} {s3_code}: refused in {time.time() - t0:.1f}s")
    run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", "s3://sx-ckpt/good", env=moto.env())
    keys = [o["Key"] for o in moto.client().list_objects_v2(Bucket="sx-ckpt", Prefix="good/").get("Contents", [])]
    expect("good/my-run/step-2/COMPLETE" in keys, keys)
    expect(not [k for k in keys if "/.probe" in k or "/.lock" in k], f"a probe or the lock was left: {keys}")
    moto.close()
    strict.close()


# ---- no mixing, one run at a time --------------------------------------------------


def case_fresh_run_refused():
    """A run without --resume into checkpoints of its slug is refused (E-CKPT-051, exit 2) naming them and how to
    resume; --resume latest continues; --resume latest with nothing there starts (latest=none)."""
    ck = os.path.join(TMP, "ck")
    run("run", MY_RUN, "--steps", "3", "--checkpoint-dir", ck)
    m = os.path.join(TMP, "again.jsonl")
    p = run("run", MY_RUN, "--steps", "5", "--checkpoint-dir", ck, "--metrics", "jsonl:" + m, check_rc=None)
    refused_before_start(p, "E-CKPT-051", m)
    expect(os.path.join(ck, "my-run", "step-3") in p.stderr and "--resume latest" in p.stderr, p.stderr)
    q = run("run", MY_RUN, "--steps", "5", "--checkpoint-dir", ck, "--resume", "latest")
    expect(f"resume latest={ck}/my-run/step-3" in q.stderr, q.stderr)
    r = run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", os.path.join(TMP, "empty"), "--resume", "latest")
    expect("resume latest=none" in r.stderr, r.stderr)
    # Another slug in the same location is another run folder.
    run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", ck, "--set", "lr=0.001")


def case_concurrent_run_locked():
    """A second run on the same location and slug is refused at start (E-CKPT-052) naming the holder's pid and
    host; a run killed with SIGKILL leaves no lock that blocks its resume."""
    ck = os.path.join(TMP, "ck")
    m = os.path.join(TMP, "first.jsonl")
    first = start([MY_RUN, "--steps", "100000", "--checkpoint-dir", ck, "--set", "checkpoint-every=50"], m)
    t0 = time.time()
    wait_for(lambda: first.poll() is not None or steps_written(m) > 0, "the first run's first step")
    if first.poll() is not None:
        expect(False, f"the first run ended early:\n{first.communicate()[1]}")
    print(f"first run stepping after {time.time() - t0:.1f}s")
    m2 = os.path.join(TMP, "second.jsonl")
    p = run("run", MY_RUN, "--steps", "100000", "--checkpoint-dir", ck, "--set", "checkpoint-every=50",
            "--resume", "latest", "--metrics", "jsonl:" + m2, check_rc=None)
    print(f"second run ended after {time.time() - t0:.1f}s, exit {p.returncode}")
    refused_before_start(p, "E-CKPT-052", m2)
    expect(f"pid {first.pid} on host {socket.gethostname()}" in p.stderr, p.stderr)
    first.kill()
    first.communicate(timeout=60)
    # The kill left .lock behind, with the dead run's name in it: it must not block.
    expect(os.path.exists(os.path.join(ck, "my-run-checkpoint-every=50", ".lock")), "no lock file")
    q = run("run", MY_RUN, "--steps", "3", "--checkpoint-dir", ck, "--set", "checkpoint-every=50",
            "--resume", "latest")
    expect("resume latest=" in q.stderr, q.stderr)


# ---- state.json's meaning -----------------------------------------------------------


def reseal(folder, state_text):
    open(os.path.join(folder, "state.json"), "w").write(state_text)
    digest = hashlib.sha256(state_text.encode()).hexdigest()
    open(os.path.join(folder, "COMPLETE"), "w").write(f"{digest}  state.json\n")


REPLACEMENTS = ["x", -1, 0, 1, 1.5, -1e300, 2 ** 63, -2 ** 63, True, None, [], {}, ["eval", "eval"], "train",
                "probe", 1e20, 2 ** 70]


def mutate(state, rng):
    """One random edit somewhere in the tree: another type or value, a deletion, a duplicate."""
    nodes, members = [], []

    def walk(v):
        if isinstance(v, dict):
            for k in list(v):
                members.append((v, k))
                nodes.append((v, k))
                walk(v[k])
        elif isinstance(v, list):
            for i in range(len(v)):
                nodes.append((v, i))
                walk(v[i])

    walk(state)
    kind = rng.randrange(4)
    if kind <= 1:
        parent, key = rng.choice(nodes)
        parent[key] = rng.choice(REPLACEMENTS)
    elif kind == 2:
        parent, key = rng.choice(members)
        del parent[key]
    else:
        arrays = [p[k] for p, k in nodes if isinstance(p[k], list)]
        if arrays:
            a = rng.choice(arrays)
            a.append(a[-1] if a else "probe")


def case_resumed_state_mutations():
    """Many random re-sealed mutations of a real state.json (the hashes recomputed, so only the meaning is
    wrong): each resume ends with exit 2 and an error code, or resumes and finishes; never an abort."""
    ck = os.path.join(TMP, "ck")
    run("run", "tests/e2e/resume.sx", "--steps", "6", "--checkpoint-dir", ck)
    source = os.path.join(ck, "resume", "step-6")  # --steps is not part of the slug
    original = json.load(open(os.path.join(source, "state.json")))
    rng = random.Random(int(os.environ.get("SEXPGPU_MUTATION_SEED", "600")))
    n = int(os.environ.get("SEXPGPU_MUTATIONS", "48"))
    outcomes = {}
    specific = [("threads", "x"), ("stage", 99), ("passes_due", ["eval", "eval"])]
    for i in range(n):
        state = json.loads(json.dumps(original))
        if i < len(specific):
            state[specific[i][0]] = specific[i][1]
        else:
            for _ in range(1 + i % 3):
                mutate(state, rng)
        folder = os.path.join(TMP, f"mut-{i}", "resume", "step-6")
        shutil.copytree(source, folder)
        reseal(folder, json.dumps(state, indent=1))
        p = run("run", "tests/e2e/resume.sx", "--steps", "7", "--resume", folder, check_rc=None)
        crash = p.returncode < 0 or p.returncode not in (0, 2) or "terminate called" in p.stderr
        expect(not crash, f"mutation {i}: exit {p.returncode}:\n{json.dumps(state)[:2000]}\n{p.stderr}")
        if p.returncode == 2:
            codes = [l.split("]")[0][6:] for l in p.stderr.splitlines() if l.startswith("error[E-")]
            expect(codes, f"mutation {i}: exit 2 without an error code:\n{p.stderr}")
            outcomes[codes[0]] = outcomes.get(codes[0], 0) + 1
            if i < len(specific):
                expect(codes[0] == "E-CKPT-053" and specific[i][0] in p.stderr, p.stderr)
        else:
            outcomes["resumed"] = outcomes.get("resumed", 0) + 1
            expect("done: 7 steps" in p.stderr, p.stderr)
    print("outcomes:", outcomes)
    expect(outcomes.get("E-CKPT-053", 0) >= n // 4, f"too few E-CKPT-053 refusals: {outcomes}")


# ---- files and folders ----------------------------------------------------------------


def case_non_regular_files_refused():
    """An :init-from that is a FIFO or /dev/zero, and a checkpoint file that is a FIFO, are refused with
    E-CKPT-054, exit 2, at once (a FIFO used to hang forever)."""
    d = os.path.join(TMP, "exp")
    os.makedirs(d)
    os.symlink(os.path.join(REPO, "examples", "data"), os.path.join(d, "data"))
    source = open(os.path.join(REPO, MY_RUN)).read()
    fifo = os.path.join(TMP, "weights.safetensors")
    os.mkfifo(fifo)
    for target, what in ((fifo, "a FIFO"), ("/dev/zero", "a character device")):
        sx = os.path.join(d, "init.sx")
        open(sx, "w").write(source.replace(":seed 1)", f':seed 1 :init-from "{target}")'))
        t0 = time.time()
        p = subprocess.run([SEXPGPU, "run", sx, "--steps", "1"], cwd=REPO, env=clean_env(), capture_output=True,
                           text=True, timeout=120)
        refused_before_start(p, "E-CKPT-054")
        expect(what in p.stderr and target in p.stderr, p.stderr)
        print(f"{target}: refused in {time.time() - t0:.1f}s")
    ck = os.path.join(TMP, "ck")
    run("run", MY_RUN, "--steps", "1", "--checkpoint-dir", ck)
    model = os.path.join(ck, "my-run", "step-1", "model.safetensors")
    os.remove(model)
    os.mkfifo(model)
    p = subprocess.run([SEXPGPU, "run", MY_RUN, "--steps", "2", "--checkpoint-dir", ck, "--resume", "latest"],
                       cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120)
    refused_before_start(p, "E-CKPT-054")


def case_keep_never_follows_symlink():
    """:keep and the rewrite of a step never delete through a symlink in the run folder: a step-<n> link to
    another run's checkpoint leaves that checkpoint whole."""
    d = os.path.join(TMP, "exp")
    os.makedirs(d)
    os.symlink(os.path.join(REPO, "examples", "data"), os.path.join(d, "data"))
    sx = os.path.join(d, "keep.sx")
    open(sx, "w").write(open(os.path.join(REPO, MY_RUN)).read().replace(":seed 1)", ":seed 1 :keep 1)"))
    ck = os.path.join(TMP, "ck")
    other = os.path.join(TMP, "other")
    run("run", MY_RUN, "--steps", "2", "--checkpoint-dir", other)
    target = os.path.join(other, "my-run", "step-2")
    before = {f: open(os.path.join(target, f), "rb").read() for f in os.listdir(target)}
    os.makedirs(os.path.join(ck, "keep-checkpoint-every=2"))
    for name in ("step-2", "step-1", "step-3.old-1"):  # rewritten, older than kept, a leftover
        os.symlink(target, os.path.join(ck, "keep-checkpoint-every=2", name))
    run("run", sx, "--steps", "6", "--set", "checkpoint-every=2", "--checkpoint-dir", ck)
    after = {f: open(os.path.join(target, f), "rb").read() for f in os.listdir(target)}
    expect(after == before, f"the linked checkpoint changed: {sorted(before)} -> {sorted(after)}")
    folder = os.path.join(ck, "keep-checkpoint-every=2")
    expect(os.path.exists(os.path.join(folder, "step-6", "COMPLETE")), os.listdir(folder))
    expect(not os.path.exists(os.path.join(folder, "step-4")), f":keep 1 kept more: {os.listdir(folder)}")


# ---- S3: a HEAD cut in its headers ------------------------------------------------------


def case_s3_head_cut_mid_headers():
    """Every HEAD answer cut inside its headers (twice per request) by a proxy in front of moto: a transfer
    error, retried, and the run with S3 data finishes."""
    sys.path.insert(0, os.path.join(REPO, "tests", "s3"))
    from fault_proxy import FaultProxy
    moto = Moto()
    s3 = moto.client("data")
    train = open(os.path.join(REPO, "examples", "data", "train.txt"), "rb").read()
    cuts = [0, len(train) // 3, 2 * len(train) // 3, len(train)]
    for i in range(3):
        s3.put_object(Bucket="sx-data", Key=f"text/train-{i}.txt", Body=train[cuts[i]:cuts[i + 1]])
    s3.put_object(Bucket="sx-data", Key="text/valid.txt",
                  Body=open(os.path.join(REPO, "examples", "data", "valid.txt"), "rb").read())
    proxy = FaultProxy(moto.port, every=0, cut_headers=lambda r: r.method == "HEAD").start()
    p = run("run", "tests/e2e/s3_data.sx", "--steps", "4", "--checkpoint-dir", "s3://sx-ckpt/cut",
            env=moto.env(proxy.endpoint), check_rc=None)
    print("cut-headers:", proxy.counts["cut-headers"], "of", proxy.requests, "requests")
    expect(p.returncode == 0, f"exit {p.returncode}:\n{p.stderr}")
    expect(proxy.counts["cut-headers"] >= 2, f"no HEAD was cut: {proxy.counts}")
    proxy.stop()
    moto.close()


main(globals())
