#!/usr/bin/env python3
"""End-to-end tests of `sexpgpu run` with data and checkpoints in S3: moto on
loopback (tests/s3/moto.py, one user and bucket per role), the real binary,
real signals, and a fault-injecting proxy (tests/s3/fault_proxy.py).

    s3.py SEXPGPU REPO CASE      runs one case; skips (exit 0, "SKIP:") without moto.
"""
import json, os, random, signal, subprocess, sys, threading, time

from harness import REPO, SEXPGPU, TMP, clean_env, expect, fail, latest_records, main, run, start_moto, steps_written

sys.path.insert(0, os.path.join(REPO, "tests", "s3"))
from fault_proxy import FAULTS, FaultProxy  # noqa: E402

EXPERIMENT = "tests/e2e/s3_data.sx"  # examples/my-run.sx reading s3://sx-data/text/, with :keep 2
SLUG = "s3_data-checkpoint-every=4"
STEPS = 20
CKPT_FILES = ("model.safetensors", "optimizer.safetensors", "state.json")


class Moto:
    """moto on a free port with the two buckets, and the example's text uploaded in three shards."""

    def __init__(self):
        self.proc, self.info = start_moto()
        self.endpoint = self.info["endpoint"]
        self.port = int(self.endpoint.rsplit(":", 1)[1])
        import boto3
        self.s3 = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                               aws_access_key_id="test", aws_secret_access_key="test")
        train = open(os.path.join(REPO, "examples", "data", "train.txt"), "rb").read()
        cuts = [0, len(train) // 3, 2 * len(train) // 3, len(train)]
        for i in range(3):
            self.s3.put_object(Bucket="sx-data", Key=f"text/train-{i}.txt", Body=train[cuts[i]:cuts[i + 1]])
        self.s3.put_object(Bucket="sx-data", Key="text/valid.txt",
                           Body=open(os.path.join(REPO, "examples", "data", "valid.txt"), "rb").read())

    def env(self, endpoint=None):
        """Both roles' credentials, every request to `endpoint` (moto itself by default)."""
        i = self.info
        return {"AWS_ENDPOINT_URL": endpoint or self.endpoint, "AWS_REGION": "us-east-1",
                "SEXPGPU_DATA_AWS_ACCESS_KEY_ID": i["data"]["key"],
                "SEXPGPU_DATA_AWS_SECRET_ACCESS_KEY": i["data"]["secret"],
                "SEXPGPU_CHECKPOINT_AWS_ACCESS_KEY_ID": i["checkpoint"]["key"],
                "SEXPGPU_CHECKPOINT_AWS_SECRET_ACCESS_KEY": i["checkpoint"]["secret"]}

    def secrets(self):
        return [self.info["data"]["secret"], self.info["checkpoint"]["secret"]]

    def keys(self, prefix):
        out, token = [], None
        while True:
            kw = {"Bucket": "sx-ckpt", "Prefix": prefix, **({"ContinuationToken": token} if token else {})}
            page = self.s3.list_objects_v2(**kw)
            out += [o["Key"] for o in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                return out
            token = page["NextContinuationToken"]

    def read(self, key):
        return self.s3.get_object(Bucket="sx-ckpt", Key=key)["Body"].read()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def start_run(env, location, metrics, *extra):
    return subprocess.Popen([SEXPGPU, "run", EXPERIMENT, "--checkpoint-dir", location, "--set", "checkpoint-every=4",
                             "--resume", "latest", "--metrics", "jsonl:" + metrics, *extra], cwd=REPO,
                            env=clean_env(env), stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def finish(p, timeout):
    """The run's (stdout, stderr) once it has ended. One still going after `timeout` s is killed and the case
    fails with what it wrote: a bare TimeoutExpired would say nothing of where it waited, and leave it running."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate(timeout=60)
        fail(f"the run was still going after {timeout} s (killed); its stderr:\n{err[-6000:]}")


def reference(moto):
    """The run never stopped, straight to moto: its records and final model."""
    m = os.path.join(TMP, "ref.jsonl")
    run("run", EXPERIMENT, "--checkpoint-dir", "s3://sx-ckpt/ref", "--set", "checkpoint-every=4",
        "--metrics", "jsonl:" + m, env=moto.env())
    return latest_records(m), moto.read(f"ref/{SLUG}/step-{STEPS}/model.safetensors")


def expect_same(moto, want, metrics, prefix):
    want_records, want_model = want
    got = latest_records(metrics)
    expect(sorted(got) == sorted(want_records), f"records differ: {sorted(set(got) ^ set(want_records))}")
    for key in want_records:
        expect(got[key] == want_records[key], f"{key}: {got[key]} != {want_records[key]}")
    expect(moto.read(f"{prefix}/{SLUG}/step-{STEPS}/model.safetensors") == want_model,
           "model.safetensors differs from the reference run's")


class LatestWatcher(threading.Thread):
    """Lists the checkpoint prefix over and over, straight from moto: a step-<n>
    with COMPLETE must already hold every other file (what `latest` relies on).

    A listing is not a snapshot: moto walks its keys while the run deletes an old
    checkpoint (COMPLETE first), so one listing can show COMPLETE and miss a file
    deleted a moment later. Such a sighting is a violation only when COMPLETE is
    still there when looked at again (a HEAD right after): then it was written
    before the other files."""

    def __init__(self, moto, prefix):
        super().__init__(daemon=True)
        self.moto, self.prefix = moto, prefix
        self.done = threading.Event()
        self.listings = self.complete_seen = self.deletes_seen = 0
        self.partial = []

    def run(self):
        import boto3, botocore
        s3 = boto3.client("s3", endpoint_url=self.moto.endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
        while not self.done.is_set():
            keys = {o["Key"] for o in s3.list_objects_v2(Bucket="sx-ckpt", Prefix=self.prefix).get("Contents", [])}
            self.listings += 1
            for k in keys:
                if k.endswith("/COMPLETE"):
                    folder = k[:-len("COMPLETE")]
                    self.complete_seen += 1
                    missing = [f for f in CKPT_FILES if folder + f not in keys]
                    if not missing:
                        continue
                    try:
                        s3.head_object(Bucket="sx-ckpt", Key=k)
                    except botocore.exceptions.ClientError:
                        self.deletes_seen += 1  # a delete in progress, COMPLETE already gone
                        continue
                    still = {o["Key"] for o in s3.list_objects_v2(Bucket="sx-ckpt", Prefix=folder).get("Contents", [])}
                    if k in still:
                        self.partial.append((folder, missing))
            time.sleep(0.02)


def case_s3_checkpoints():
    """Data and checkpoints in S3: SIGTERM, resume from latest in S3, the same numbers as never stopped;
    the AWS CLI (a second client) lists and reads what sexpgpu wrote."""
    moto = Moto()
    want = reference(moto)
    m = os.path.join(TMP, "s3.jsonl")
    p = start_run(moto.env(), "s3://sx-ckpt/runs", m)
    while p.poll() is None and steps_written(m) < 9:
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    out, err = finish(p, 120)
    expect(p.returncode == 143, f"exit {p.returncode}, expected a stop by SIGTERM:\n{err}")
    q = start_run(moto.env(), "s3://sx-ckpt/runs", m)
    out, err = finish(q, 120)
    expect(q.returncode == 0, err)
    expect(f"resume latest=s3://sx-ckpt/runs/{SLUG}/step-" in err, err)
    expect_same(moto, want, m, "runs")
    for text in (err, open(m).read()):
        expect(not any(s in text for s in moto.secrets()), "a secret leaked")
    cli = dict(os.environ, AWS_ACCESS_KEY_ID=moto.info["checkpoint"]["key"],
               AWS_SECRET_ACCESS_KEY=moto.info["checkpoint"]["secret"], AWS_DEFAULT_REGION="us-east-1")
    aws = ["aws", "--endpoint-url", moto.endpoint, "s3"]
    try:
        ls = subprocess.run(aws + ["ls", "--recursive", "s3://sx-ckpt/runs/"], env=cli, capture_output=True,
                            text=True, timeout=120)
    except FileNotFoundError:
        ls = None
    if ls is None or ls.returncode == 127:
        print("note: the AWS CLI is not installed; skipped the second client")
    else:
        expect(ls.returncode == 0, ls.stderr)
        expect(f"{SLUG}/step-20/COMPLETE" in ls.stdout and f"{SLUG}/step-20/model.safetensors" in ls.stdout,
               ls.stdout)
        state = os.path.join(TMP, "state.json")
        cp = subprocess.run(aws + ["cp", f"s3://sx-ckpt/runs/{SLUG}/step-20/state.json", state], env=cli,
                            capture_output=True, text=True, timeout=120)
        expect(cp.returncode == 0, cp.stderr)
        expect(json.load(open(state))["step"] == 20, open(state).read())
    moto.close()


def case_s3_faults():
    """Through a proxy that resets connections mid-body, answers 503 and is slow: the run ends with the numbers
    of a run without faults, `latest` never sees a partial checkpoint, and kill -9 at random moments (during
    checkpoint uploads too) resumes to the same end."""
    moto = Moto()
    want = reference(moto)
    proxy = FaultProxy(moto.port, every=3).start()

    watcher = LatestWatcher(moto, "faulty/")
    watcher.start()
    m = os.path.join(TMP, "faulty.jsonl")
    t0 = time.time()
    p = start_run(moto.env(proxy.endpoint), "s3://sx-ckpt/faulty", m)
    out, err = finish(p, 300)
    seconds = time.time() - t0
    watcher.done.set()
    watcher.join()
    expect(p.returncode == 0, err)
    expect_same(moto, want, m, "faulty")
    print("faults injected:", proxy.counts, "of", proxy.requests, "requests")
    for fault in FAULTS:
        expect(proxy.counts[fault] > 0, f"no {fault} was injected: {proxy.counts}")
    print("watcher:", watcher.listings, "listings,", watcher.complete_seen, "COMPLETE seen,",
          watcher.deletes_seen, "deletes seen in progress")
    expect(watcher.listings > 5 and watcher.complete_seen > 0,
           f"the watcher listed {watcher.listings} times and saw {watcher.complete_seen} COMPLETE")
    expect(not watcher.partial, f"a COMPLETE checkpoint was missing files: {watcher.partial}")
    folders = sorted({k.split("/")[2] for k in moto.keys(f"faulty/{SLUG}/")})
    expect(folders == ["step-16", "step-20"], f":keep 2 should leave step-16 and step-20: {folders}")
    expect(not any(s in err for s in moto.secrets()), "a secret leaked")

    # kill -9 at random moments, faults still on; every restart resumes from latest. A moment is
    # chosen by the run's progress (a step it has reached, then a short random wait, which lands
    # in checkpoint uploads too), not by the clock, so a loaded machine moves the kills with it.
    rng = random.Random(6)
    m = os.path.join(TMP, "crash.jsonl")
    kills = tries = 0
    while kills < 3 and tries < 15:
        tries += 1
        before = steps_written(m)
        target = before + rng.randint(1, 6)
        p = start_run(moto.env(proxy.endpoint), "s3://sx-ckpt/crash", m)
        deadline = time.time() + 300
        while p.poll() is None and steps_written(m) < target and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.3))
        if p.poll() is None:
            p.kill()
            kills += 1
        finish(p, 300)
    p = start_run(moto.env(proxy.endpoint), "s3://sx-ckpt/crash", m)
    out, err = finish(p, 300)
    expect(p.returncode == 0, err)
    expect(kills >= 2, f"only {kills} kills landed")
    expect_same(moto, want, m, "crash")
    proxy.stop()
    moto.close()


def case_s3_signal_during_read():
    """SIGTERM while an S3 data read hangs: the request is abandoned, the run stops before its first step
    (exit 143, state stopped), without waiting for the client's timeouts and retries."""
    moto = Moto()
    proxy = FaultProxy(moto.port, every=0, hang=lambda r: r.method == "GET" and r.path.startswith("/sx-data/"))
    proxy.start()
    status = os.path.join(TMP, "status.json")
    p = subprocess.Popen([SEXPGPU, "run", EXPERIMENT, "--status", status], cwd=REPO,
                         env=clean_env(moto.env(proxy.endpoint)), stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    deadline = time.time() + 60
    while proxy.counts["hang"] == 0 and time.time() < deadline and p.poll() is None:
        time.sleep(0.01)
    expect(proxy.counts["hang"] > 0, "the run never read its data")
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        expect(False, f"still waiting on S3 15 s after SIGTERM:\n{err}")
    expect(p.returncode == 143, f"exit {p.returncode}:\n{err}")
    expect("stopping: SIGTERM before the first step" in err, err)
    expect(json.load(open(status))["state"] == "stopped", open(status).read())
    proxy.stop()
    moto.close()


def case_s3_moto_many_requests():
    """moto answers after it has logged more than a pipe holds (64 KiB, a line a request): its standard error
    must not be a pipe nobody reads (harness.start_moto). It was: moto stopped answering some 600 requests into
    e2e/s3_faults, and the run waited on it until the test's timeout."""
    import boto3, botocore.config, botocore.exceptions
    moto = Moto()
    s3 = boto3.client("s3", endpoint_url=moto.endpoint, region_name="us-east-1", aws_access_key_id="test",
                      aws_secret_access_key="test",
                      config=botocore.config.Config(connect_timeout=5, read_timeout=10, retries={"max_attempts": 1}))
    long_key = "k" * 1000  # a log line of over 1 KiB: 100 of them do not fit in a pipe
    for i in range(100):
        try:
            s3.head_object(Bucket="sx-ckpt", Key=f"{i:03d}/{long_key}")
        except botocore.exceptions.ClientError as e:
            expect(e.response["Error"]["Code"] == "404", f"HEAD {i}: {e}")
        except botocore.exceptions.ReadTimeoutError:
            fail(f"moto stopped answering after {i} of these requests")
    moto.close()


main(globals())
