#!/usr/bin/env python3
"""The syvain target never slows a step: tiny gpt (examples/my-run.sx), the
median step time with jsonl, with a service that answers each request in
0.5 s (tests/e2e/syvain_server.py --delay 0.5), and with one that does not
answer at all, side by side. Not a test: nothing here is timed in CI.

    python3 bench/syvain_slow.py [build/sexpgpu] [--steps 300] [--rounds 3]
"""
import argparse, json, os, re, socket, subprocess, sys, tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_step(sexpgpu, steps, env):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SEXPGPU_", "SYVAIN_"))}
    e.update(env)
    p = subprocess.run([sexpgpu, "run", "examples/my-run.sx", "--steps", str(steps)], cwd=REPO, env=e,
                       capture_output=True, text=True, check=True)
    m = re.search(r"^timing steps \S+ median ([\d.]+)s", p.stderr, re.M)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sexpgpu", nargs="?", default=os.path.join(REPO, "build", "sexpgpu"))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sexpgpu-bench-syvain-")
    server = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "e2e", "syvain_server.py"), "--key", "k",
                               "--delay", "0.5"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = json.loads(server.stdout.readline())["url"]
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    down = f"http://127.0.0.1:{s.getsockname()[1]}/api/v1"
    s.close()
    syvain = {"SEXPGPU_METRICS": "syvain:f-1", "SYVAIN_METRICS_API_KEY": "k", "XDG_STATE_HOME": tmp}
    targets = {"jsonl": {"SEXPGPU_METRICS": "jsonl:" + os.path.join(tmp, "m.jsonl")},
               "syvain 0.5s/request": dict(syvain, SYVAIN_METRICS_URL=url),
               "syvain down": dict(syvain, SYVAIN_METRICS_URL=down)}
    best = {name: min(median_step(a.sexpgpu, a.steps, env) for _ in range(a.rounds)) for name, env in targets.items()}
    print(f"tiny gpt, {a.steps} steps, median step time (best of {a.rounds}): " +
          " | ".join(f"{name} {v * 1000:.2f} ms" for name, v in best.items()))
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
