"""The syvain metrics target against the reference server (tests/e2e/syvain_server.py) on loopback:
every record delivered once, whatever the service does, and a run never slowed or failed by it."""
import glob
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from urllib.parse import quote

from harness import *

KEY = "sk-test-7f3a9c1e5b"
SERVER = os.path.join(HERE, "syvain_server.py")
TIMING = ("elapsed_s", "step_s", "at", "started_at", "segment", "seq", "pid")


class Service:
    def __init__(self, *args, port=0):
        self.proc = subprocess.Popen([sys.executable, SERVER, "--key", KEY, "--folder", "f-1", "--folder", "f-2",
                                      "--forbidden", "f-locked", "--port", str(port), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        info = json.loads(self.proc.stdout.readline())
        self.url, self.port = info["url"], info["port"]

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=30) as r:
            return json.loads(r.read())

    def segments(self, folder="f-1", slug="my-run"):
        return self.get("/_state")["folders"].get(folder, {}).get(slug, {})

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def env_for(url, state, folder="f-1", key=KEY):
    return {"SEXPGPU_METRICS": f"syvain:{folder}", "SYVAIN_METRICS_API_KEY": key, "SYVAIN_METRICS_URL": url,
            "XDG_STATE_HOME": state}


def spooled(state):
    return sorted(glob.glob(os.path.join(state, "sexpgpu", "spool", "*", "*", "*.ndjson")))


def normalized(records):
    out = []
    for r in records:
        r = {k: v for k, v in r.items() if k not in TIMING}
        if r["kind"] == "summary":
            r.pop("metrics")
        out.append(r)
    return out


def jsonl_reference(steps, name):
    m = os.path.join(TMP, name + ".jsonl")
    run("run", "examples/my-run.sx", "--steps", str(steps), "--metrics", "jsonl:" + m)
    return jsonl(m)


def case_clean_run_stores_what_jsonl_writes():
    """A clean run: the service stores exactly the records jsonl writes (plus seq 1..n), nothing is left spooled."""
    want = jsonl_reference(20, "clean")
    svc = Service()
    state = os.path.join(TMP, "state-clean")
    p = run("run", "examples/my-run.sx", "--steps", "20", env=env_for(svc.url, state))
    expect(f"metrics: syvain folder f-1 {svc.url}/folders/f-1/experiments/my-run\n" in p.stderr, p.stderr)
    expect("spooled" not in p.stderr and "unreachable" not in p.stderr, p.stderr)
    segs = svc.segments()
    expect(len(segs) == 1, f"one segment: {list(segs)}")
    (seg, got), = segs.items()
    expect([r["seq"] for r in got] == list(range(1, len(got) + 1)), "seq 1..n")
    expect(got[0]["kind"] == "meta" and got[0]["segment"] == seg, str(got[0]))
    expect(normalized(got) == normalized(want), "the stored records differ from jsonl's:\n"
           + "\n".join(str(x) for x in normalized(got)[:3]) + "\n--\n" + "\n".join(str(x) for x in normalized(want)[:3]))
    expect(got[-1]["kind"] == "summary" and got[-1]["metrics"] == f"{svc.url}/folders/f-1/experiments/my-run",
           str(got[-1]))
    expect(spooled(state) == [], f"nothing left spooled: {spooled(state)}")
    svc.close()


def case_faults_every_record_stored_once():
    """Every 3rd POST a 503, every 4th answer lost after storing, batches too large: every record stored once."""
    want = jsonl_reference(60, "faults")
    svc = Service("--fail-every", "3", "--lose-every", "4", "--max-lines", "16")
    state = os.path.join(TMP, "state-faults")
    p = run("run", "examples/my-run.sx", "--steps", "60", env=env_for(svc.url, state))
    expect("spooled" not in p.stderr, p.stderr)
    st = svc.get("/_state")
    (seg, got), = st["folders"]["f-1"]["my-run"].items()
    expect([r["seq"] for r in got] == list(range(1, len(want) + 1)), f"seq 1..{len(want)}: {[r['seq'] for r in got][:5]}...")
    expect(normalized(got) == normalized(want), "the stored records differ from jsonl's")
    expect(st["posts"] >= 8, f"the faults were exercised: {st['posts']} POSTs")
    expect(spooled(state) == [], f"nothing left spooled: {spooled(state)}")
    svc.close()


def case_down_for_the_whole_run_then_delivered_first():
    """The service down for a whole run: it ends normally, the spool holds its records; the next run (a resume)
    sends them first."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/v1"
    state = os.path.join(TMP, "state-down")
    ck = os.path.join(TMP, "ck-down")
    t0 = time.time()
    p = run("run", "examples/my-run.sx", "--steps", "20", "--checkpoint-dir", ck, env=env_for(url, state))
    expect(time.time() - t0 < 60, "the drain at exit is bounded")
    lines = [l for l in p.stderr.splitlines() if l.startswith("metrics: ")]
    expect(lines[0].startswith("metrics: syvain unreachable (") and lines[0].endswith("); records are spooled"),
           p.stderr)
    files = spooled(state)
    expect(len(files) == 1, f"one spool file: {files}")
    held = jsonl(files[0])
    expect(lines[-1] == f"metrics: {len(held)} records spooled to {files[0]}, sent on the next run", p.stderr)
    expect([r["seq"] for r in held] == list(range(1, len(held) + 1)) and held[-1]["kind"] == "summary",
           "the spool holds every record")
    svc = Service(port=port)
    p = run("run", "examples/my-run.sx", "--steps", "30", "--checkpoint-dir", ck, "--resume", "latest",
            env=env_for(svc.url, state))
    expect("spooled" not in p.stderr, p.stderr)
    st = svc.get("/_state")
    segs = st["folders"]["f-1"]["my-run"]
    old = os.path.basename(files[0])[:-len(".ndjson")]
    expect(st["batches"][0][0] == old, f"the spooled segment first: {st['batches'][:3]}")
    expect(segs[old] == held, "the spooled records, as they were")
    new = [s for s in segs if s != old]
    expect(len(new) == 1 and segs[new[0]][0]["resumed_from"]["step"] == 20, "a new segment for the resume")
    expect(spooled(state) == [], f"nothing left spooled: {spooled(state)}")
    svc.close()


def history(svc, folder, slug):
    return [(h["step"], h["train/loss"], h["lr"]) for h in svc.get(f"/_history/{folder}/{quote(slug, safe='')}")]


def case_kill9_twice_history_equals_uninterrupted():
    """Two kill -9s and a resume, the next on another machine (its own spool): the service's latest-segment
    history equals the uninterrupted run's."""
    svc = Service()
    steps = ["--steps", "300", "--set", "checkpoint-every=20"]
    run("run", "examples/my-run.sx", *steps, env=env_for(svc.url, os.path.join(TMP, "state-u"), "f-1"))
    ck = os.path.join(TMP, "ck-kill")
    kills = 0
    for i, at in enumerate((60, 160)):
        e = clean_env(env_for(svc.url, os.path.join(TMP, f"state-k{i}"), "f-2"))
        args = [SEXPGPU, "run", "examples/my-run.sx", *steps, "--checkpoint-dir", ck, "--resume", "latest"]
        proc = subprocess.Popen(args, cwd=REPO, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while proc.poll() is None and time.time() < deadline and not os.path.exists(
                os.path.join(ck, "my-run-checkpoint-every=20", f"step-{at}")):
            time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=60)
    # The resume runs on a third "machine": the records the killed sessions had not had acknowledged come
    # from its checkpoint (and, for this test, also from the spools, which stay on their machines).
    p = run("run", "examples/my-run.sx", *steps, "--checkpoint-dir", ck, "--resume", "latest",
            env=env_for(svc.url, os.path.join(TMP, "state-k2"), "f-2"))
    expect(kills == 2, f"only {kills} kills landed")
    slug = "my-run-checkpoint-every=20"  # an override is part of the slug
    want, got = history(svc, "f-1", slug), history(svc, "f-2", slug)
    expect(len(want) == 300, f"the uninterrupted run's history has {len(want)} steps")
    expect(got == want, f"histories differ at {[w for w, g in zip(want, got) if w != g][:3]} ({len(got)} steps)")
    expect(len(svc.segments("f-2", slug)) >= 3, "three segments")
    svc.close()


def case_bad_key_refused_before_step_one():
    """401, 403 and 404 at the pre-flight: exit 2 before step 1, a coded error naming the folder, never the key."""
    svc = Service()
    state = os.path.join(TMP, "state-bad")
    for folder, key, code in (("f-1", "sk-wrong-key-123", "E-METRICS-020"), ("f-locked", KEY, "E-METRICS-021"),
                              ("f-none", KEY, "E-METRICS-022")):
        p = run("run", "examples/my-run.sx", "--steps", "5", env=env_for(svc.url, state, folder, key), check_rc=2)
        expect(f"error[{code}]" in p.stderr and f"folder {folder}" in p.stderr, p.stderr)
        expect(key not in p.stderr + p.stdout, "the key is never printed")
        expect("run:" not in p.stderr and "step" not in p.stderr.replace("first step", ""), p.stderr)
    expect(svc.get("/_state")["posts"] == 0, "nothing sent")
    expect(spooled(state) == [], "nothing spooled")
    svc.close()


def case_key_in_no_output():
    """The key appears in no output, record, status file, checkpoint or spool of a run (service down, so the
    spool and the checkpoints' unacknowledged records exist), nor in what the service stored afterwards."""
    port = free_port()
    root = os.path.join(TMP, "nokey")
    state, ck, status = os.path.join(root, "state"), os.path.join(root, "ck"), os.path.join(root, "status.json")
    e = env_for(f"http://127.0.0.1:{port}/api/v1", state)
    args = ["--checkpoint-dir", ck, "--status", status, "--set", "checkpoint-every=4"]

    def files_without_key():
        files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
        for f in files:
            expect(KEY.encode() not in open(f, "rb").read(), f"the key is in {f}")
        return files

    p = run("run", "examples/my-run.sx", "--steps", "12", "--json", *args, env=e)
    files = files_without_key()
    expect(len(spooled(state)) == 1, f"the spool was written: {files}")
    states = [json.load(open(f)) for f in files if f.endswith("state.json")]
    expect(len(states) >= 3 and all("unacknowledged_records" in s for s in states),
           "every checkpoint carries the unacknowledged records")
    svc = Service(port=port)
    q = run("run", "examples/my-run.sx", "--steps", "16", "--resume", "latest", *args,
            env=dict(e, SYVAIN_METRICS_URL=svc.url))
    files_without_key()
    for text in (p.stdout, p.stderr, q.stdout, q.stderr, json.dumps(svc.get("/_state"))):
        expect(KEY not in text, "the key is in an output")
    expect(len(svc.segments("f-1", "my-run-checkpoint-every=4")) == 2, "both sessions delivered")
    svc.close()



def case_doctor_checks_the_service():
    """doctor's metrics line: the pre-flight's answer (ok, a refusal by code, unreachable), never the key."""
    svc = Service()
    state = os.path.join(TMP, "state-doctor")
    for folder, key, port, want in (("f-1", KEY, None, "ok   metrics: syvain folder f-1: the service accepts this key"),
                                    ("f-1", "sk-wrong-key-123", None, "[E-METRICS-020]"),
                                    ("f-none", KEY, None, "[E-METRICS-022]"),
                                    ("f-1", KEY, free_port(), "warn metrics: syvain folder f-1: unreachable")):
        url = svc.url if port is None else f"http://127.0.0.1:{port}"
        p = run("doctor", env=env_for(url, state, folder, key), check_rc=None)
        line = next((l for l in p.stdout.splitlines() if " metrics:" in l), "")
        expect(want in line, f"doctor's metrics line for {folder}: {line!r}\n{p.stdout}")
        expect(key not in p.stdout + p.stderr, "the key is never printed")
    svc.close()

main(globals())
