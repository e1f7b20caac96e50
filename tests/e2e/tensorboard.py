#!/usr/bin/env python3
"""End-to-end tests of --metrics tensorboard:<dir>: the event files decoded by
an independent reader (the record framing and CRC32C checked here, each Event
decoded by `protoc --decode` with TensorBoard's field numbers) hold the jsonl
records' numbers by the same names; a resumed run writes a second file whose
steps go back.

    tensorboard.py SEXPGPU REPO CASE
"""
import glob, os, re, struct, subprocess

from harness import REPO, TMP, expect, fail, jsonl, main, run

SX = "tests/e2e/sweep.sx"
PROTO = os.path.join(REPO, "tests/fixtures/tensorboard")


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    data, out, at = open(path, "rb").read(), [], 0
    while at < len(data):
        header = data[at:at + 8]
        (n,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        body = data[at + 12:at + 12 + n]
        (body_crc,) = struct.unpack("<I", data[at + 12 + n:at + 16 + n])
        expect(len_crc == masked(header) and body_crc == masked(body), f"{path}: a bad CRC at byte {at}")
        out.append(body)
        at += 16 + n
    return out


def decode(body):
    p = subprocess.run(["protoc", f"--proto_path={PROTO}", "--decode=tensorboard.Event", "event.proto"],
                       input=body, capture_output=True, timeout=60)
    if p.returncode != 0:
        fail("protoc --decode: " + p.stderr.decode())
    text = p.stdout.decode()
    step = re.search(r"^step: (\d+)", text, re.M)
    values = {}
    for block in re.findall(r"value \{(.*?)\}", text, re.S):
        tag = re.search(r'tag: "([^"]+)"', block).group(1)
        v = re.search(r"simple_value: (\S+)", block)  # proto3's text format leaves out a 0
        values[tag] = f32(float(v.group(1))) if v else 0.0  # printed with 9 digits: a float32 exactly
    return {"step": int(step.group(1)) if step else 0, "file_version": "file_version" in text, "values": values}


def event_files(d):
    return sorted(glob.glob(os.path.join(d, "events.out.tfevents.*")))


def events(d):
    return [[decode(b) for b in records(f)] for f in event_files(d)]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def expected_scalars(path):
    """(step, tag) -> value for every number of the step and eval records, but the step."""
    out = {}
    for r in jsonl(path):
        if r["kind"] not in ("step", "eval"):
            continue
        prefix = "" if r["kind"] == "step" or r.get("pass") == "eval" else r["pass"] + ":"
        for k, v in r.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "step":
                out[(r["step"], prefix + k)] = f32(v)
    return out


def scalars_of(evs):
    return {(e["step"], tag): v for e in evs for tag, v in e["values"].items()}


def case_same_numbers_as_jsonl():
    ref = os.path.join(TMP, "ref.jsonl")
    run("run", SX, "--metrics", "jsonl:" + ref)
    tb = os.path.join(TMP, "tb", "a")  # the folder and its parent are made
    p = run("run", SX, "--metrics", "tensorboard:" + tb)
    expect(f"tensorboard:{tb}" in p.stderr, "the metrics: line names the folder:\n" + p.stderr)
    files = events(tb)
    expect(len(files) == 1, f"one event file, found {len(files)}")
    evs = files[0]
    expect(evs[0]["file_version"], "the first event is the file version")
    got, want = scalars_of(evs[1:]), expected_scalars(ref)
    timing = lambda t: t[1] in ("elapsed_s", "step_s")  # the two runs' clocks differ
    same = {k for k in want if not timing(k)}
    expect({k for k in got if not timing(k)} == same, f"tags differ:\n{sorted(got)}\n{sorted(want)}")
    for k in same:
        expect(got[k] == want[k], f"{k}: {got[k]} in the event file, {want[k]} in the jsonl")
    expect(any(t == "eval/loss" for _, t in got), "the eval pass's metrics are there")


def case_resumed_run_goes_back():
    tb = os.path.join(TMP, "tb")
    ck = os.path.join(TMP, "ck")
    run("run", SX, "--steps", "8", "--checkpoint-dir", ck, "--metrics", "tensorboard:" + tb)
    (first_file,) = event_files(tb)
    run("run", SX, "--resume", os.path.join(ck, "sweep", "step-4"), "--checkpoint-dir", ck,
        "--metrics", "tensorboard:" + tb)
    files = event_files(tb)
    expect(len(files) == 2, f"a second event file for the resumed run, found {len(files)}")
    # Each file by the run that wrote it, not by name: two runs in one second are named in the order of their pids,
    # as decimal text (a pid of 10000 after one of 9999 sorts first).
    (second_file,) = set(files) - {first_file}
    first = [decode(b)["step"] for b in records(first_file)[1:]]
    second = [decode(b)["step"] for b in records(second_file)[1:]]
    # Once (in some hundred runs) the file there after the first run held the resumed run's steps and the new one
    # the first run's: the names, sizes and times say more should it happen again.
    about = "\n".join(f"{os.path.basename(f)}: {os.path.getsize(f)} bytes, mtime {os.path.getmtime(f):.6f}"
                      for f in (first_file, second_file))
    expect(max(first) == 8 and min(second) == 5, f"steps: first file {first}, second {second}\n{about}")


def case_unwritable_folder_refused():
    blocker = os.path.join(TMP, "file")
    open(blocker, "w").close()
    p = run("run", SX, "--metrics", "tensorboard:" + os.path.join(blocker, "tb"), check_rc=2)
    expect("E-METRICS-001" in p.stderr, "E-METRICS-001:\n" + p.stderr)


main(globals())
