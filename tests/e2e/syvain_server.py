#!/usr/bin/env python3
"""A reference server of the syvain metrics protocol (docs/metrics.md, "syvain"),
on loopback, for the tests and for trying a self-hosted setup.

    python3 tests/e2e/syvain_server.py [--key K] [--folder F ...] [--forbidden F ...]
        [--fail-every K] [--lose-every K] [--delay S] [--retry-after N] [--max-lines N] [--port P]

Prints one JSON line {"url": "http://127.0.0.1:PORT/api/v1", "port": PORT}
and serves until its standard input closes. The protocol:

  GET  /api/v1/folders/{folder}                                   200 / 401 / 403 / 404
  POST /api/v1/folders/{folder}/experiments/{slug}/segments/{segment}/records
       NDJSON, each line a record with "seq"; 200 {"acked_through": n};
       409 {"acked_through": n} when the batch starts after a gap; 413 above
       --max-lines lines (default 1000) or 1 MiB; 401/403/404.
  GET  /api/v1/folders/{folder}/experiments/{slug}/segments/{segment}   {"acked_through": n}

Each (folder, slug, segment, seq) is stored once; the first write wins.
Faults: every --fail-every-th POST is a 503 with Retry-After --retry-after;
every --lose-every-th POST is stored, then its connection closed without an
answer; --delay seconds before every answer.

For the tests: GET /_state is everything stored, {folder: {slug: {segment:
[records in seq order]}}}, with "posts" (POSTs seen) and "batches" (seq
ranges of the POSTs stored); GET /_history/{folder}/{slug} is the supersede
rule's view: for each step, the step record of the latest segment (by its
meta's started_at) that has one.
"""
import argparse
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

LOCK = threading.Lock()
STORE = {}  # (folder, slug, segment) -> {seq: record}
ACKED = {}  # (folder, slug, segment) -> n
POSTS = [0]
BATCHES = []


def history(folder, slug):
    segs = []
    for (f, s, seg), recs in STORE.items():
        if f == folder and s == slug:
            meta = next((r for r in recs.values() if r.get("kind") == "meta"), {})
            segs.append((meta.get("started_at", ""), seg, recs))
    view = {}
    for _, seg, recs in sorted(segs):
        for r in recs.values():
            if r.get("kind") == "step":
                view[r["step"]] = dict(r, segment=seg)
    return [view[k] for k in sorted(view)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, obj=None, headers=()):
        body = b"" if obj is None else json.dumps(obj).encode()
        time.sleep(ARGS.delay)
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def parts(self):
        p = self.path.split("?", 1)[0]
        if not p.startswith("/api/v1/"):
            return None
        return [unquote(x) for x in p[len("/api/v1/"):].split("/")]

    def authorized(self, folder):
        if self.headers.get("Authorization", "") != "Bearer " + ARGS.key:
            return self.answer(401, {"error": "bad key"})
        if folder in ARGS.forbidden:
            return self.answer(403, {"error": "not allowed"})
        if folder not in ARGS.folder:
            return self.answer(404, {"error": "no such folder"})
        return True

    def do_GET(self):
        if self.path == "/_state":
            with LOCK:
                out = {"posts": POSTS[0], "batches": list(BATCHES), "folders": {}}
                for (f, s, seg), recs in STORE.items():
                    out["folders"].setdefault(f, {}).setdefault(s, {})[seg] = [recs[k] for k in sorted(recs)]
            return self.answer(200, out)
        if self.path.startswith("/_history/"):
            f, s = [unquote(x) for x in self.path[len("/_history/"):].split("/")]
            with LOCK:
                return self.answer(200, history(f, s))
        p = self.parts()
        if p and len(p) == 2 and p[0] == "folders":
            if self.authorized(p[1]) is True:
                self.answer(200, {"folder": p[1], "url": f"{URL}/folders/{p[1]}"})
            return
        if p and len(p) == 6 and p[0] == "folders" and p[2] == "experiments" and p[4] == "segments":
            if self.authorized(p[1]) is True:
                with LOCK:
                    n = ACKED.get((p[1], p[3], p[5]), 0)
                self.answer(200, {"acked_through": n})
            return
        self.answer(404, {"error": "no such resource"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        p = self.parts()
        if not (p and len(p) == 7 and p[0] == "folders" and p[2] == "experiments" and p[4] == "segments"
                and p[6] == "records"):
            return self.answer(404, {"error": "no such resource"})
        if self.authorized(p[1]) is not True:
            return
        key = (p[1], p[3], p[5])
        with LOCK:
            POSTS[0] += 1
            k = POSTS[0]
        if ARGS.fail_every and k % ARGS.fail_every == 0:
            return self.answer(503, {"error": "busy"}, [("Retry-After", str(ARGS.retry_after))])
        lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
        if len(lines) > ARGS.max_lines or len(body) > (1 << 20):
            return self.answer(413, {"error": "too large"})
        if not lines or any(not isinstance(r.get("seq"), int) for r in lines):
            return self.answer(400, {"error": "every line needs a seq"})
        with LOCK:
            acked = ACKED.get(key, 0)
            if lines[0]["seq"] > acked + 1:
                return self.answer(409, {"acked_through": acked})
            recs = STORE.setdefault(key, {})
            for r in lines:
                recs.setdefault(r["seq"], r)  # the first write wins
            while acked + 1 in recs:
                acked += 1
            ACKED[key] = acked
            BATCHES.append([p[5], lines[0]["seq"], lines[-1]["seq"]])
        if ARGS.lose_every and k % ARGS.lose_every == 0:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)  # stored, but the answer is lost
            return
        self.answer(200, {"acked_through": acked})


def main():
    global ARGS, URL
    ap = argparse.ArgumentParser()
    ap.add_argument("--key", default="test-key")
    ap.add_argument("--folder", action="append", default=[])
    ap.add_argument("--forbidden", action="append", default=[])
    ap.add_argument("--fail-every", type=int, default=0)
    ap.add_argument("--lose-every", type=int, default=0)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--retry-after", type=int, default=0)
    ap.add_argument("--max-lines", type=int, default=1000)
    ap.add_argument("--port", type=int, default=0)
    ARGS = ap.parse_args()
    ARGS.folder = ARGS.folder or ["f-1"]
    ARGS.folder += ARGS.forbidden
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    URL = f"http://127.0.0.1:{port}/api/v1"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"url": URL, "port": port}), flush=True)
    sys.stdin.read()  # until the test process closes it
    server.shutdown()


if __name__ == "__main__":
    main()
