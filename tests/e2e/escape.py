#!/usr/bin/env python3
"""Nothing forged, nothing leaked on the terminal (docs/errors.md, "Names and
values are shown escaped"): names and values from files, flags and variables
reach standard error and standard output with their control characters and
invalid UTF-8 escaped, an endpoint's userinfo is never echoed, and a long list
in an error is cut to its first 20 items.

    escape.py SEXPGPU REPO CASE
"""
import json, os, struct, subprocess

from harness import SEXPGPU, TMP, clean_env, expect, main, start_moto

# A tensor name, a path or a value that would drive a terminal if printed raw:
# set the title, clear the screen, return the carriage, end the string, and
# forge a line that looks like sexpgpu's own.
HOSTILE = "x\x1b]0;pwned\x07\x1b[2J\r\x00\nerror[E-CKPT-001]: forged"
# How the same text must be shown.
SHOWN = "x\\x1b]0;pwned\\x07\\x1b[2J\\r\\x00\\nerror[E-CKPT-001]: forged"

TINY = """(defloader train :source "{source}" :tokenizer (chars "abcdefgh") :seq-len 16)
(defmodel tiny [tokens targets]
  (cross-entropy (embed tokens (param "embed" [(vocab train) (vocab train)] :init (normal 0.02))) targets))
(defrun tiny-run :model tiny :loader train :batch 2 :steps 2 :optimizer (adamw :lr 0.001){extra})
"""


def experiment(name, source="train.txt", extra=""):
    """A one-parameter experiment in its own folder, with data; its path."""
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "train.txt"), "w") as f:
        f.write("abcdefgh" * 64)
    path = os.path.join(d, name + ".sx")
    with open(path, "w") as f:
        f.write(TINY.format(source=source, extra=extra))
    return path


def write_safetensors(path, names):
    """F32 [1] tensors by name; names are bytes, written into the header as they are."""
    entries = []
    for i, n in enumerate(names):
        key = json.dumps(n.decode("latin-1"), ensure_ascii=False).encode("latin-1")
        entries.append(key + b':{"dtype":"F32","shape":[1],"data_offsets":[%d,%d]}' % (4 * i, 4 * i + 4))
    header = b"{" + b",".join(entries) + b"}"
    header += b" " * ((8 - len(header) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\0" * (4 * len(names)))


def run_bytes(*args, env=None, cwd=None):
    p = subprocess.run([SEXPGPU, *args], cwd=cwd or TMP, env=clean_env(env), capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def expect_clean(what, data):
    """No byte a terminal acts on, and no line that pretends to be an error of its own."""
    for byte in (b"\x1b", b"\r", b"\x00", b"\x07", b"\xff"):
        expect(byte not in data, f"{what} holds the raw byte {byte!r}:\n{data!r}")
    forged = [l for l in data.split(b"\n") if l.startswith(b"error[E-CKPT-001]")]
    expect(not forged, f"{what} has a forged line: {forged}")


def case_init_from_name_escaped():
    """A tensor name with ESC, CR, NUL and a newline in an :init-from file is shown escaped."""
    sx = experiment("init", extra=' :init-from "weights.safetensors"')
    write_safetensors(os.path.join(TMP, "init", "weights.safetensors"),
                      [b"embed", HOSTILE.encode()])
    metrics, status = os.path.join(TMP, "init.jsonl"), os.path.join(TMP, "init-status.json")
    rc, out, err = run_bytes("run", sx, "--json", "--metrics", "jsonl:" + metrics, "--status", status)
    expect(rc == 2, f"exit {rc}, expected 2 (refused before the first step):\n{err!r}")
    expect_clean("stderr", err)
    expect_clean("stdout", out)
    text = err.decode()
    expect("error[E-CKPT-007]" in text, text)
    expect(f"extra: tensor `{SHOWN}` F32 [1]" in text, f"the hostile name escaped:\n{text}")
    # The status file is JSON: the message is there, JSON-escaped, and parses.
    with open(status, "rb") as f:
        raw = f.read()
    expect(b"\x1b" not in raw, f"the status file holds a raw ESC: {raw!r}")
    st = json.loads(raw)
    expect(st["state"] == "failed" and st["error"]["code"] == "E-CKPT-007", str(st))


def case_source_newline_escaped():
    """A :source path with a newline cannot forge an error line."""
    sx = experiment("source", source="no-such\\nerror[E-CKPT-001]: forged\\u{1b}]0;t\\u{7}.txt")
    rc, out, err = run_bytes("run", sx)
    expect(rc == 2, f"exit {rc}, expected 2:\n{err!r}")
    expect_clean("stderr", err)
    text = err.decode()
    expect("no-such\\nerror[E-CKPT-001]: forged\\x1b]0;t\\x07.txt" in text, f"the path escaped:\n{text}")
    expect(out == b"", f"nothing on stdout: {out!r}")


def case_console_lines_escaped():
    """The run line and checkpoint lines show a hostile checkpoint folder (not even UTF-8) escaped."""
    sx = experiment("console", extra=" :checkpoint-every 1")
    ckpt = os.path.join(TMP.encode(), b"ck\npt\x1b]0;t\x07\xff\nerror[E-CKPT-001]: forged")
    metrics = os.path.join(TMP, "console.jsonl")
    rc, out, err = run_bytes("run", sx, "--checkpoint-dir", ckpt, "--metrics", "jsonl:" + metrics)
    expect(rc == 0, f"exit {rc}:\n{err!r}")
    expect_clean("stderr", err)
    lines = err.decode().splitlines()
    shown = "ck\\npt\\x1b]0;t\\x07\\xff\\nerror[E-CKPT-001]: forged"
    expect(any(l.startswith("run: ") and shown in l for l in lines), f"the run line:\n{lines}")
    expect(any(l.startswith("checkpoint step-2 -> ") and shown in l for l in lines), f"a checkpoint line:\n{lines}")
    expect(any(l.startswith("done: 2 steps") for l in lines), f"the done: line:\n{lines}")
    # The metrics file is JSON: the path JSON-escaped, the byte that is not UTF-8 as U+FFFD.
    events = [json.loads(l) for l in open(metrics, "rb")]
    paths = [e["path"] for e in events if e.get("event") == "checkpoint"]
    want = ckpt.decode("utf-8", "replace")
    expect(len(paths) == 2 and all(p.startswith(want) for p in paths), f"checkpoint events: {paths}")


def case_not_utf8_file_name_run():
    """A data file named with bytes that are not UTF-8 trains, checkpoints and resumes; JSON keeps U+FFFD."""
    sx = experiment("latin1", source="*.txt", extra=" :checkpoint-every 1")
    os.rename(os.path.join(TMP, "latin1", "train.txt"), os.path.join(TMP.encode(), b"latin1", b"caf\xe9.txt"))
    metrics, status = os.path.join(TMP, "latin1.jsonl"), os.path.join(TMP, "latin1-status.json")
    ckpt = os.path.join(TMP, "latin1-ckpt")
    rc, out, err = run_bytes("run", sx, "--json", "--checkpoint-dir", ckpt, "--metrics", "jsonl:" + metrics,
                             "--status", status)
    expect(rc == 0, f"exit {rc}:\n{err!r}")
    expect_clean("stderr", err)
    for data in [out, open(status, "rb").read()] + open(metrics, "rb").read().splitlines():
        json.loads(data)
    rc, out, err = run_bytes("run", sx, "--checkpoint-dir", ckpt, "--resume", "latest", "--steps", "3")
    expect(rc == 0 and b"resume: from " in err and b"done: 3 steps" in err, f"exit {rc}:\n{err!r}")


def case_print_escaped():
    """(print ...) at compile time shows its text escaped."""
    sx = experiment("print")
    with open(sx, "a") as f:
        f.write('(print "title\\u{1b}]0;t\\u{7} and\\nerror[E-CKPT-001]: forged")\n')
    rc, out, err = run_bytes("check", sx)
    expect(rc == 0, f"exit {rc}:\n{err!r}")
    expect_clean("stderr", err)
    expect(b"print: title\\x1b]0;t\\x07 and\\nerror[E-CKPT-001]: forged\n" in err, repr(err))


def case_userinfo_never_shown():
    """An S3 endpoint's user:password@ is never echoed: not in errors, stdout, metrics or status."""
    sx = experiment("userinfo", source="s3://sx-data/text/train.txt")
    metrics, status = os.path.join(TMP, "userinfo.jsonl"), os.path.join(TMP, "userinfo-status.json")
    creds = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "keysecretvalue", "AWS_REGION": "us-east-1"}
    for endpoint, code in (("http://user:secret@127.0.0.1:1/", "E-S3-001"), ("ftp://user:secret@127.0.0.1:1/", "E-ENV-001")):
        rc, out, err = run_bytes("run", sx, "--json", "--metrics", "jsonl:" + metrics, "--status", status,
                                 env=dict(creds, AWS_ENDPOINT_URL=endpoint))
        expect(rc == 2, f"{endpoint}: exit {rc}, expected 2:\n{err!r}")
        expect(code.encode() in err, f"{endpoint}: {err!r}")
        expect(b"***@127.0.0.1:1" in err, f"{endpoint}: the endpoint shown without its userinfo:\n{err!r}")
        outputs = {"stderr": err, "stdout": out}
        for name in (metrics, status):
            if os.path.exists(name):
                outputs[name] = open(name, "rb").read()
        for what, data in outputs.items():
            for secret in (b"secret", b"keysecretvalue", b"user:"):
                expect(secret not in data, f"{endpoint}: {what} holds {secret!r}:\n{data!r}")


def case_userinfo_never_shown_in_a_run():
    """A whole run against S3 (moto) through an endpoint with user:password@: the run line, checkpoint lines,
    metrics events, the status file and the checkpoint's state.json never hold the password."""
    moto, info = start_moto()  # SKIP without moto
    try:
        import boto3
        s3 = boto3.client("s3", endpoint_url=info["endpoint"], region_name="us-east-1", aws_access_key_id="test",
                          aws_secret_access_key="test")
        s3.put_object(Bucket="sx-data", Key="text/train.txt", Body=b"abcdefgh" * 64)
        sx = experiment("s3run", source="s3://sx-data/text/train.txt", extra=" :checkpoint-every 1")
        endpoint = info["endpoint"].replace("http://", "http://user:hunter2@") + "/"
        env = {"AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
               "SEXPGPU_DATA_AWS_ACCESS_KEY_ID": info["data"]["key"],
               "SEXPGPU_DATA_AWS_SECRET_ACCESS_KEY": info["data"]["secret"],
               "SEXPGPU_CHECKPOINT_AWS_ACCESS_KEY_ID": info["checkpoint"]["key"],
               "SEXPGPU_CHECKPOINT_AWS_SECRET_ACCESS_KEY": info["checkpoint"]["secret"]}
        metrics, status = os.path.join(TMP, "s3run.jsonl"), os.path.join(TMP, "s3run-status.json")
        rc, out, err = run_bytes("run", sx, "--json", "--checkpoint-dir", "s3://sx-ckpt/runs", "--metrics",
                                 "jsonl:" + metrics, "--status", status, env=env)
        expect(rc == 0, f"exit {rc}:\n{err!r}")
        expect(b"checkpoint step-2 -> s3://sx-ckpt/runs/" in err, repr(err))
        state = s3.get_object(Bucket="sx-ckpt", Key="runs/s3run/step-2/state.json")["Body"].read()
        for what, data in {"stderr": err, "stdout": out, "metrics": open(metrics, "rb").read(),
                           "status": open(status, "rb").read(), "state.json": state}.items():
            for secret in [b"hunter2", info["data"]["secret"].encode(), info["checkpoint"]["secret"].encode()]:
                expect(secret not in data, f"{what} holds {secret!r}:\n{data!r}")
    finally:
        moto.stdin.close()
        moto.wait(timeout=30)


def case_many_mismatches_capped():
    """An :init-from file with 10,000 differences gives a short error: 20 of them and "and 9980 more"."""
    sx = experiment("many", extra=' :init-from "weights.safetensors"')
    names = [b"t%05d" % i for i in range(9999)]  # with the missing `embed`: 10,000 differences
    write_safetensors(os.path.join(TMP, "many", "weights.safetensors"), names)
    rc, out, err = run_bytes("run", sx)
    expect(rc == 2, f"exit {rc}, expected 2:\n{err[:2000]!r}")
    text = err.decode()
    expect("10000 differences" in text, text[:2000])
    expect(len(err) < 10 * 1024, f"stderr is {len(err)} bytes:\n{text[:2000]}")
    notes = [l for l in text.splitlines() if l.startswith("  = ") and "help:" not in l]
    expect(len(notes) == 21 and notes[-1] == "  = and 9980 more", f"20 notes and the rest counted:\n{text}")


main(globals())
