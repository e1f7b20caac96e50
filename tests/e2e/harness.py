"""What the end-to-end tests share: the binary, the repository, a scratch
folder, and helpers to run sexpgpu and read what it wrote.

    python3 tests/e2e/<suite>.py SEXPGPU REPO CASE

Each suite defines `case_<name>` functions and ends with `main(globals())`.
"""
import json, os, random, re, select, socket, subprocess, sys, tempfile

SEXPGPU, REPO, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp(prefix="sexpgpu-e2e-")
# A cache folder beside the binary, shared by the cases that are not about caches
# (env={"XDG_CACHE_HOME": SHARED_CACHE}): NVRTC compiles each kernel once for the suite, not once a case.
SHARED_CACHE = os.path.join(os.path.dirname(os.path.abspath(SEXPGPU)), "e2e-shared-cache")


def free_port():
    """A port free now, below the kernel's ephemeral range: one from bind(0) was free only until it was closed, and
    any socket of a test running beside this one (a connect, another bind(0)) could take it before this test listens
    there, or, for a port where nothing should listen, while it expects it unreachable."""
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    rng = random.Random()
    for _ in range(200 if low > 2048 else 0):
        port = rng.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(extra=None):
    """The test's environment without SEXPGPU_*/SYVAIN_* variables, plus `extra`."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SEXPGPU_", "SYVAIN_"))}
    # Caches (tokens, kernels) in the test's scratch folder, not the home of whoever runs the tests.
    e["XDG_CACHE_HOME"] = os.path.join(TMP, "cache")
    e.update(extra or {})
    return e


def run(*args, env=None, check_rc=0):
    p = subprocess.run([SEXPGPU, *args], cwd=REPO, env=clean_env(env), capture_output=True, text=True, timeout=600)
    if check_rc is not None and p.returncode != check_rc:
        fail(f"exit {p.returncode}, expected {check_rc}\nstderr:\n{p.stderr}\nstdout:\n{p.stdout}")
    return p


def start_moto(auth=False):
    """tests/s3/moto.py on a free port (with --auth, checking signatures): its process and the JSON line it
    prints (endpoint, credentials, buckets). Without moto the case is skipped: SKIP and exit 0."""
    # Its standard error goes to a file, never to a pipe: moto logs a line per request there, and a pipe
    # nobody reads is full after 64 KiB; then every request waits on that write, and moto stops answering
    # (e2e/s3_faults hung so, some 600 requests in: its watcher lists the bucket all along).
    log = tempfile.NamedTemporaryFile("w+", prefix="moto-", suffix=".log", dir=TMP, delete=False)
    proc = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "s3", "moto.py"), *(["--auth"] if auth else [])],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
    # A bounded wait for its first line: a moto that started but never printed would otherwise hold the case
    # until ctest's own limit.
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    if not ready:
        proc.kill()
        fail("moto printed nothing in 120 s")
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=30)
        log.seek(0)
        print("SKIP: moto is not available:", log.read())
        sys.exit(0)
    return proc, json.loads(line)


class Moto:
    """moto on loopback (tests/s3/moto.py); with `auth`, one user per role, each limited to its bucket, and
    signatures checked."""

    def __init__(self, auth=False):
        self.proc, self.info = start_moto(auth)
        self.endpoint = self.info["endpoint"]
        self.port = int(self.endpoint.rsplit(":", 1)[1])

    def env(self, endpoint=None, secret=None):
        i = self.info
        return {"AWS_ENDPOINT_URL": endpoint or self.endpoint, "AWS_REGION": "us-east-1",
                "SEXPGPU_DATA_AWS_ACCESS_KEY_ID": i["data"]["key"],
                "SEXPGPU_DATA_AWS_SECRET_ACCESS_KEY": i["data"]["secret"],
                "SEXPGPU_CHECKPOINT_AWS_ACCESS_KEY_ID": i["checkpoint"]["key"],
                "SEXPGPU_CHECKPOINT_AWS_SECRET_ACCESS_KEY": secret or i["checkpoint"]["secret"]}

    def client(self, role="checkpoint"):
        import boto3
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=self.info[role]["key"], aws_secret_access_key=self.info[role]["secret"])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def mask_times(text):
    # Timings vary run to run; everything else is golden.
    return re.sub(r"\d+\.\d+s\b", "<t>s", text)


def golden(name, text):
    path = os.path.join(HERE, name)
    if os.environ.get("UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
        return
    with open(path) as f:
        want = f.read()
    if text != want:
        import difflib
        fail("differs from " + name + ":\n" + "".join(difflib.unified_diff(
            want.splitlines(True), text.splitlines(True), "expected", "actual")))


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def latest_records(path):
    """Per (kind, pass, step): the record of the latest segment (outputs.md)."""
    out = {}
    for r in jsonl(path):
        if r["kind"] in ("step", "eval"):
            r = {k: v for k, v in r.items() if k not in ("elapsed_s", "step_s")}
            out[(r["kind"], r.get("pass"), r["step"])] = r
    return out


def steps_written(metrics):
    if not os.path.exists(metrics):
        return 0
    return sum(1 for l in open(metrics) if '"kind":"step"' in l)


def main(cases):
    """Runs the case named on the command line."""
    cases = {n[5:]: f for n, f in cases.items() if n.startswith("case_")}
    if CASE not in cases:
        fail(f"no case {CASE}; cases: {', '.join(cases)}")
    cases[CASE]()
    print("ok:", CASE)
