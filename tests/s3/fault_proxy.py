"""A fault-injecting HTTP proxy for the S3 tests: sits between sexpgpu's S3
client and the moto server on loopback and breaks some requests on purpose.

    proxy = FaultProxy(upstream_port, every=3)
    proxy.start()            # proxy.endpoint is "http://127.0.0.1:PORT"
    ...
    proxy.counts             # {"reset-mid-body": 4, "503": 3, ...}
    proxy.stop()

Every `every`-th request is broken, the faults taken in turn from FAULTS:

- reset-mid-body: the request goes to the server; the client gets the status
  line, the headers and half the body, then a TCP reset;
- reset-before-answer: the request is read, never forwarded, and the
  connection is reset;
- 503-before: a 503 SlowDown, the request never forwarded;
- 503-after: the request IS applied by the server, the client gets a 503
  SlowDown (a retried PUT or DELETE must be harmless);
- slow: the answer comes after a delay, its body dribbled in pieces.

A request (method, path, query, range) is broken at most twice, so a client
that retries three times always gets through; whether it does, and with the
same bytes, is what the tests check. `hang` (a predicate on the request) holds
matching requests until the proxy stops: for tests of a signal during a wait.
`cut_headers` (a predicate on the request) cuts each matching request's answer
inside its headers, at most twice per request: the status line and the first
header, then the connection is closed (FIN); counted as "cut-headers".
"""
import socket
import socketserver
import threading
import time
import urllib.parse

FAULTS = ["reset-mid-body", "503-before", "slow", "reset-before-answer", "503-after"]

SLOW_DOWN = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
             b"<Message>Please reduce your request rate.</Message></Error>")


def read_until(sock, buf, marker):
    while marker not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, buf
        buf += chunk
    head, _, rest = buf.partition(marker)
    return head, rest


def read_exact(sock, buf, n):
    while len(buf) < n:
        chunk = sock.recv(65536)
        if not chunk:
            return None, buf
        buf += chunk
    return buf[:n], buf[n:]


def parse_headers(head):
    lines = head.decode("latin-1").split("\r\n")
    fields = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields.append((name.strip(), value.strip()))
    return lines[0], fields


def header(fields, name):
    for k, v in fields:
        if k.lower() == name:
            return v
    return None


def dechunk(data):
    out = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        n = int(size_line.split(b";")[0], 16)
        if n == 0:
            return out
        out, data = out + data[:n], data[n + 2:]


def reset(sock):
    # SO_LINGER with a zero timeout: close sends RST, not FIN.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


class Request:
    def __init__(self, line, fields, body):
        self.line, self.fields, self.body = line, fields, body
        self.method, target, _ = line.split(" ", 2)
        url = urllib.parse.urlsplit(target)
        self.path, self.query = url.path, url.query
        self.signature = (self.method, self.path, self.query, header(fields, "range"))


class FaultProxy:
    def __init__(self, upstream_port, every=3, faults=FAULTS, slow_s=0.3, hang=None, cut_headers=None):
        self.upstream_port = upstream_port
        self.every, self.faults, self.slow_s, self.hang = every, list(faults), slow_s, hang
        self.cut_headers = cut_headers
        self.lock = threading.Lock()
        self.requests = 0
        self.counts = {f: 0 for f in self.faults}
        self.counts["hang"] = 0
        self.counts["cut-headers"] = 0
        self.broken = {}  # signature -> times broken
        self.log = []     # (method, path, query, fault or "") of every request
        self.stopping = threading.Event()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                proxy.serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def pick(self, req):
        with self.lock:
            self.requests += 1
            fault = ""
            if self.hang and self.hang(req):
                fault = "hang"
            elif self.cut_headers and self.cut_headers(req) and self.broken.get(req.signature, 0) < 2:
                fault = "cut-headers"
                self.broken[req.signature] = self.broken.get(req.signature, 0) + 1
            elif self.every and self.requests % self.every == 0 and self.broken.get(req.signature, 0) < 2:
                fault = self.faults[(self.requests // self.every) % len(self.faults)]
                self.broken[req.signature] = self.broken.get(req.signature, 0) + 1
            if fault:
                self.counts[fault] += 1
            self.log.append((req.method, req.path, req.query, fault))
            return fault

    def serve(self, client):
        buf = b""
        while not self.stopping.is_set():
            head, buf = read_until(client, buf, b"\r\n\r\n")
            if head is None:
                return
            line, fields = parse_headers(head)
            if (header(fields, "expect") or "").lower() == "100-continue":
                client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            length = int(header(fields, "content-length") or 0)
            body, buf = read_exact(client, buf, length)
            if body is None:
                return
            req = Request(line, fields, body)
            fault = self.pick(req)
            if fault == "hang":
                self.stopping.wait()
                reset(client)
                return
            if fault == "reset-before-answer":
                reset(client)
                return
            if fault == "503-before":
                self.answer(client, b"HTTP/1.1 503 Slow Down", [("Content-Type", "application/xml")], SLOW_DOWN)
                continue
            status, rfields, rbody = self.forward(req)
            if fault == "cut-headers":
                whole = self.head(status, rfields, len(rbody), head_only=req.method == "HEAD")
                first = whole.index(b"\r\n") + 2
                client.sendall(whole[:whole.index(b"\r\n", first) + 2])  # the status line and one header
                client.shutdown(socket.SHUT_WR)
                client.close()
                return
            if fault == "503-after":
                self.answer(client, b"HTTP/1.1 503 Slow Down", [("Content-Type", "application/xml")], SLOW_DOWN)
                continue
            if fault == "reset-mid-body" and req.method != "HEAD" and len(rbody) >= 2:
                client.sendall(self.head(status, rfields, len(rbody)) + rbody[:len(rbody) // 2])
                time.sleep(0.01)
                reset(client)
                return
            if fault == "slow":
                time.sleep(self.slow_s)
                data = self.head(status, rfields, len(rbody), head_only=req.method == "HEAD") + rbody
                for i in range(4):
                    client.sendall(data[i * len(data) // 4:(i + 1) * len(data) // 4])
                    time.sleep(self.slow_s / 4)
                continue
            client.sendall(self.head(status, rfields, len(rbody), head_only=req.method == "HEAD") + rbody)

    def forward(self, req):
        """The server's answer to req: status line, headers, body (one connection per request)."""
        fields = [(k, v) for k, v in req.fields if k.lower() not in ("expect", "connection")]
        fields.append(("Connection", "close"))
        data = (req.line + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + "\r\n").encode("latin-1")
        with socket.create_connection(("127.0.0.1", self.upstream_port)) as up:
            up.sendall(data + req.body)
            answer = b""
            while True:
                chunk = up.recv(65536)
                if not chunk:
                    break
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        status, rfields = parse_headers(head)
        if req.method == "HEAD":
            body = b""
        elif (header(rfields, "transfer-encoding") or "").lower() == "chunked":
            body = dechunk(body)
        return status.encode("latin-1"), rfields, body

    @staticmethod
    def head(status, fields, body_len, head_only=False):
        kept = [(k, v) for k, v in fields if k.lower() not in ("connection", "transfer-encoding", "content-length")]
        length = header(fields, "content-length") if head_only else str(body_len)
        if length is not None:
            kept.append(("Content-Length", length))
        return status + b"\r\n" + "".join(f"{k}: {v}\r\n" for k, v in kept).encode("latin-1") + b"\r\n"

    def answer(self, client, status, fields, body):
        client.sendall(self.head(status, fields, len(body)) + body)
