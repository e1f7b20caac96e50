#!/usr/bin/env python3
"""End-to-end tests of `sexpgpu bundle` and of running a bundle: the same
numbers in an empty folder, the same bytes from the same inputs, damaged,
truncated, foreign and hostile archives refused before anything runs (and
nothing written outside the bundle's private folder), --no-data.

    bundle.py SEXPGPU REPO CASE
"""
import io, json, os, shutil, signal, subprocess, tarfile, time

from harness import REPO, SEXPGPU, TMP, Moto, clean_env, expect, fail, latest_records, main, steps_written

# An experiment in proj/exp/ that requires a file above its folder (../lib/),
# reads its data from beside it (data/) and has a variant.
RUN_SX = """(require std/nn)
(require "../lib/model.sx")
(defknob lr 0.01 :min 0.0)
(def alphabet "abcdefghijklmnopqrstuvwxyz .,;\\n!")
(defloader train :source "data/train.txt" :tokenizer (chars alphabet) :seq-len 8)
(defloader valid :source "data/valid.txt" :tokenizer (chars alphabet) :seq-len 8 :shuffle false)
(defmodel m [tokens targets] (cross-entropy (small-gpt tokens) targets))
(defrun run :model m :loader train :batch 4 :microbatches 1 :steps 6 :seed 5
  :optimizer (adamw :lr (knob lr)))
(defeval eval :loader valid :every 3 :batches 1)
(defvariant short :steps 4)
"""
MODEL_SX = """(defn small-gpt [tokens] (gpt tokens :vocab 32 :d-model 16 :layers 1 :heads 2 :seq-len 8))
"""
SELECTION = ["--variant", "short", "--set", "lr=0.02"]
SLUG = "run-short-lr=0.02"


def sx(*args, cwd, env=None, check_rc=0):
    p = subprocess.run([SEXPGPU, *args], cwd=cwd, env=clean_env(env), capture_output=True, text=True, timeout=600)
    if check_rc is not None and p.returncode != check_rc:
        fail(f"sexpgpu {' '.join(args)}: exit {p.returncode}, expected {check_rc}\nstderr:\n{p.stderr}\nstdout:\n{p.stdout}")
    return p


def project():
    """TMP/proj/{exp/run.sx, exp/data/, lib/model.sx}: the experiment's path."""
    proj = os.path.join(TMP, "proj")
    if not os.path.isdir(proj):
        os.makedirs(os.path.join(proj, "exp", "data"))
        os.makedirs(os.path.join(proj, "lib"))
        open(os.path.join(proj, "exp", "run.sx"), "w").write(RUN_SX)
        open(os.path.join(proj, "lib", "model.sx"), "w").write(MODEL_SX)
        for name in ("train.txt", "valid.txt"):
            shutil.copy(os.path.join(REPO, "examples", "data", name), os.path.join(proj, "exp", "data", name))
    return proj


def make_bundle(out, *extra):
    proj = project()
    p = sx("bundle", "exp/run.sx", *SELECTION, "-o", out, *extra, cwd=proj)
    expect(p.stdout.startswith(f"bundle: {out} slug {SLUG}: "), p.stdout)
    return out


def original_records():
    proj = project()
    path = os.path.join(TMP, "original.jsonl")
    if not os.path.exists(path):
        sx("run", "exp/run.sx", *SELECTION, "--metrics", "jsonl:" + path, cwd=proj)
    return latest_records(path)


def empty_folder(name):
    """TMP/<name>/ with its own TMPDIR (TMP/<name>-tmp/), so the private folder is seen and checked."""
    d, tmp = os.path.join(TMP, name), os.path.join(TMP, name + "-tmp")
    os.makedirs(d)
    os.makedirs(tmp)
    return d, {"TMPDIR": tmp}


def tree(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, ds, fs in os.walk(d) for f in fs + ds)


def refused(bundle, code, *, cwd, env, contains=()):
    """`run BUNDLE` exits 2 with `code` before anything runs: no metrics, no status, no folder left."""
    before = tree(cwd)
    p = sx("run", bundle, "--metrics", "jsonl:m.jsonl", "--status", "s.json", cwd=cwd, env=env, check_rc=2)
    expect(f"error[{code}]" in p.stderr, f"expected {code}:\n{p.stderr}")
    for text in contains:
        expect(text in p.stderr, f"expected {text!r} in:\n{p.stderr}")
    expect(tree(cwd) == before, f"the refused run wrote into {cwd}: {tree(cwd)}")
    expect(os.listdir(env["TMPDIR"]) == [], f"the refused run left {os.listdir(env['TMPDIR'])} in TMPDIR")
    expect("step" not in p.stderr.split("error[")[0], p.stderr)
    return p


def case_same_numbers_in_empty_folder():
    d, env = empty_folder("elsewhere")
    out = make_bundle(os.path.join(TMP, "run.sxb"))
    shutil.copy(out, os.path.join(d, "run.sxb"))
    p = sx("run", "run.sxb", "--metrics", "jsonl:m.jsonl", "--status", "s.json", cwd=d, env=env)
    expect(p.stderr.startswith(f"run: run.sxb slug {SLUG} "), p.stderr)
    got, want = latest_records(os.path.join(d, "m.jsonl")), original_records()
    expect(got == want, f"the bundle's run differs from the original:\n{got}\n{want}")
    expect(len([k for k in got if k[0] == "step"]) == 4, f"the variant's 4 steps, found {sorted(got)}")
    meta = json.loads(open(os.path.join(d, "m.jsonl")).readline())
    expect(meta["slug"] == SLUG and meta["file"] == "run.sxb", meta)
    expect(json.load(open(os.path.join(d, "s.json")))["state"] == "done", "status not done")
    expect(sorted(os.listdir(d)) == ["m.jsonl", "run.sxb", "s.json"], f"outputs not where the user runs: {os.listdir(d)}")
    expect(os.listdir(env["TMPDIR"]) == [], f"the extracted folder was left: {os.listdir(env['TMPDIR'])}")
    # check and explain read it too; a --set on the command line wins over the bundle's.
    c = sx("check", "run.sxb", cwd=d, env=env)
    expect(c.stdout.startswith(f"ok: {SLUG} "), c.stdout)
    c = sx("check", "run.sxb", "--set", "lr=0.05", cwd=d, env=env)
    expect(c.stdout.startswith("ok: run-short-lr=0.05 "), c.stdout)
    # An error in the bundle's experiment names it inside the bundle, not the private folder.
    import hashlib
    members = read_members(out)
    members["files/run.sx"] = members["files/run.sx"].replace(b"(defknob lr 0.01", b"(defknob lr (+ 1 \"a\")")
    m = json.loads(members["manifest.json"])
    for f in m["files"]:
        if f["path"] == "run.sx":
            f["bytes"], f["sha256"] = len(members["files/run.sx"]), hashlib.sha256(members["files/run.sx"]).hexdigest()
    members["manifest.json"] = json.dumps(m).encode()
    write_sxb(os.path.join(d, "bad.sxb"), members)
    bad = sx("check", "bad.sxb", cwd=d, env=env, check_rc=2)
    os.unlink(os.path.join(d, "bad.sxb"))
    expect("bad.sxb:exp/run.sx:3:" in bad.stderr and env["TMPDIR"] not in bad.stderr, bad.stderr)
    e = sx("explain", "run.sxb", cwd=d, env=env)
    expect(e.stdout.startswith(f"experiment run.sxb slug {SLUG} run run"), e.stdout)


def case_same_inputs_same_bytes():
    a = make_bundle(os.path.join(TMP, "a.sxb"))
    b = make_bundle(os.path.join(TMP, "b.sxb"))
    expect(open(a, "rb").read() == open(b, "rb").read(), "two bundles of the same inputs differ")
    # From another working directory, by an absolute path: the same bytes.
    c = os.path.join(TMP, "c.sxb")
    sx("bundle", os.path.join(project(), "exp", "run.sx"), *SELECTION, "-o", c, cwd="/")
    expect(open(a, "rb").read() == open(c, "rb").read(), "the bundle depends on the working directory")
    members = subprocess.run(["tar", "--zstd", "-tvf", a], capture_output=True, text=True, check=True).stdout
    names = [l.split()[-1] for l in members.splitlines()]
    expect(names == ["manifest.json", "files/_up/lib/model.sx", "files/data/train.txt", "files/data/valid.txt",
                     "files/run.sx"], names)
    expect(all(" 0/0 " in l and "1970-01-01" in l for l in members.splitlines()), members)
    m = json.loads(subprocess.run(["tar", "--zstd", "-xOf", a, "manifest.json"], capture_output=True, text=True,
                                  check=True).stdout)
    expect(m["folder"] == "exp" and m["experiment"] == "run.sx" and m["slug"] == SLUG, m)
    expect(m["selection"]["variant"] == "short" and m["selection"]["sets"] == [["lr", "0.02"]], m["selection"])
    paths = {f["path"]: f for f in m["files"]}
    expect(sorted(paths) == ["../lib/model.sx", "data/train.txt", "data/valid.txt", "run.sx"], sorted(paths))
    expect(paths["data/train.txt"]["bytes"] == os.path.getsize(os.path.join(REPO, "examples/data/train.txt")), paths)


def flip(src, dst, offset):
    data = bytearray(open(src, "rb").read())
    data[offset] ^= 0x20
    open(dst, "wb").write(data)


def case_flipped_byte_refused():
    d, env = empty_folder("flipped")
    out = make_bundle(os.path.join(TMP, "good.sxb"))
    size = os.path.getsize(out)
    for k, offset in enumerate([size // 5, size // 2, size * 4 // 5, size - 8]):
        bad = os.path.join(d, f"bad{k}.sxb")
        flip(out, bad, offset)
        p = sx("run", os.path.basename(bad), cwd=d, env=env, check_rc=2)
        expect("error[E-CLI-044]" in p.stderr or "error[E-CLI-042]" in p.stderr, f"offset {offset}:\n{p.stderr}")
        expect(os.listdir(env["TMPDIR"]) == [], f"offset {offset}: left {os.listdir(env['TMPDIR'])}")
    # A file whose bytes changed inside an intact archive: its SHA-256 says so.
    members = read_members(out)
    members["files/data/train.txt"] = b"x" + members["files/data/train.txt"][1:]
    write_sxb(os.path.join(d, "changed.sxb"), members)
    refused("changed.sxb", "E-CLI-044", cwd=d, env=env, contains=["data/train.txt has SHA-256"])


def case_truncated_refused():
    d, env = empty_folder("truncated")
    out = make_bundle(os.path.join(TMP, "whole.sxb"))
    data = open(out, "rb").read()
    open(os.path.join(d, "half.sxb"), "wb").write(data[: len(data) // 2])
    refused("half.sxb", "E-CLI-044", cwd=d, env=env, contains=["ends early"])
    open(os.path.join(d, "head.sxb"), "wb").write(data[:30])
    refused("head.sxb", "E-CLI-044", cwd=d, env=env, contains=["ends early"])


def case_not_a_bundle_refused():
    d, env = empty_folder("foreign")
    open(os.path.join(d, "text.sxb"), "w").write("(defrun x)\n")
    refused("text.sxb", "E-CLI-042", cwd=d, env=env, contains=["not a zstd-compressed tar archive"])
    write_sxb(os.path.join(d, "plain.sxb"), {"README": b"hello\n"})
    refused("plain.sxb", "E-CLI-042", cwd=d, env=env, contains=["first member is `README`"])
    members = read_members(make_bundle(os.path.join(TMP, "v.sxb")))
    m = json.loads(members["manifest.json"])
    m["version"] = 2
    members["manifest.json"] = json.dumps(m).encode()
    write_sxb(os.path.join(d, "v2.sxb"), members)
    refused("v2.sxb", "E-CLI-043", cwd=d, env=env, contains=["format version 2"])
    refused("missing.sxb", "E-CLI-042", cwd=d, env=env)


def case_no_data_present_and_absent():
    d, env = empty_folder("nodata")
    out = make_bundle(os.path.join(d, "run.sxb"), "--no-data")
    members = read_members(out)
    expect(sorted(members) == ["files/_up/lib/model.sx", "files/run.sx", "manifest.json"], sorted(members))
    refs = json.loads(members["manifest.json"])["data_references"]
    expect([r["path"] for r in refs] == ["data/train.txt", "data/valid.txt"], refs)
    # Absent: refused, naming the file.
    refused("run.sxb", "E-CLI-046", cwd=d, env=env, contains=["needs data/train.txt (200003 bytes", "No such file"])
    # Present and equal (relative to the bundle's folder): the same numbers.
    os.makedirs(os.path.join(d, "data"))
    for name in ("train.txt", "valid.txt"):
        shutil.copy(os.path.join(REPO, "examples", "data", name), os.path.join(d, "data", name))
    sx("run", "run.sxb", "--metrics", "jsonl:m.jsonl", cwd=d, env=env)
    expect(latest_records(os.path.join(d, "m.jsonl")) == original_records(), "--no-data run differs from the original")
    os.unlink(os.path.join(d, "m.jsonl"))
    expect(os.path.exists(os.path.join(d, "data", "train.txt")), "the data beside the bundle was removed")
    expect(os.listdir(env["TMPDIR"]) == [], f"left {os.listdir(env['TMPDIR'])}")
    # Present but different: same size, another byte.
    flip(os.path.join(d, "data", "valid.txt"), os.path.join(d, "data", "valid.txt"), 100)
    refused("run.sxb", "E-CLI-046", cwd=d, env=env, contains=["valid.txt", "its SHA-256 is"])
    with open(os.path.join(d, "data", "valid.txt"), "ab") as f:
        f.write(b"more")
    refused("run.sxb", "E-CLI-046", cwd=d, env=env, contains=["valid.txt", f"it is {20016 + 4} bytes"])


def case_hostile_archive_refused():
    d, env = empty_folder("hostile")
    victim = os.path.join(TMP, "victim")
    os.makedirs(victim)
    good = read_members(make_bundle(os.path.join(TMP, "h.sxb")))
    m = json.loads(good["manifest.json"])

    def with_manifest(change):
        mm = json.loads(json.dumps(m))
        change(mm)
        return json.dumps(mm).encode()

    # A path that leaves the folder, an absolute path, a member name that does.
    def escape(mm):
        f = mm["files"][0]
        f["path"], f["member"] = "../../victim/evil.txt", "files/_up/_up/victim/evil.txt"
    write_sxb(os.path.join(d, "up.sxb"), {**good, "manifest.json": with_manifest(escape)})
    refused("up.sxb", "E-CLI-045", cwd=d, env=env, contains=["../../victim/evil.txt"])

    def absolute(mm):
        mm["files"][0]["path"] = victim + "/evil.txt"
    write_sxb(os.path.join(d, "abs.sxb"), {**good, "manifest.json": with_manifest(absolute)})
    refused("abs.sxb", "E-CLI-045", cwd=d, env=env)
    write_sxb(os.path.join(d, "member.sxb"), {**good, "../../victim/evil.txt": b"evil"})
    refused("member.sxb", "E-CLI-045", cwd=d, env=env, contains=["not in its manifest"])
    # A symlink in place of a listed file, then the file through it.
    links = [("manifest.json", good["manifest.json"]), ("files/_up/lib/model.sx", ("symlink", victim))]
    write_sxb(os.path.join(d, "link.sxb"), links + [(k, v) for k, v in good.items() if k != "manifest.json"])
    refused("link.sxb", "E-CLI-045", cwd=d, env=env, contains=["not a regular file"])
    # A member twice: the second would overwrite what was checked.
    twice = list(good.items()) + [("files/run.sx", good["files/run.sx"])]
    write_sxb(os.path.join(d, "twice.sxb"), twice)
    refused("twice.sxb", "E-CLI-045", cwd=d, env=env, contains=["twice"])
    expect(os.listdir(victim) == [], f"a hostile bundle wrote outside its folder: {os.listdir(victim)}")


def case_signal_removes_extracted_folder():
    d, env = empty_folder("signalled")
    shutil.copy(make_bundle(os.path.join(TMP, "s.sxb")), os.path.join(d, "s.sxb"))
    p = subprocess.Popen([SEXPGPU, "run", "s.sxb", "--steps", "1000000", "--metrics", "jsonl:m.jsonl"], cwd=d,
                         env=clean_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while steps_written(os.path.join(d, "m.jsonl")) < 2:
        if time.time() > deadline or p.poll() is not None:
            p.kill()
            fail(f"the run wrote no steps (exit {p.poll()}): {p.communicate()[1]}")
        time.sleep(0.05)
    expect(len(os.listdir(env["TMPDIR"])) == 1, f"no extracted folder while running: {os.listdir(env['TMPDIR'])}")
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=300)
    expect(p.returncode == 128 + signal.SIGTERM, f"exit {p.returncode}:\n{err}")
    expect(os.listdir(env["TMPDIR"]) == [], f"a stopped run left {os.listdir(env['TMPDIR'])}")


def case_s3_data_by_etag():
    moto = Moto()
    try:
        s3 = moto.client("data")
        for key, name in (("text/train-0.txt", "train.txt"), ("text/valid.txt", "valid.txt")):
            s3.put_object(Bucket="sx-data", Key=key, Body=open(os.path.join(REPO, "examples", "data", name), "rb").read())
        d, env = empty_folder("s3")
        env.update(moto.env())
        out = os.path.join(d, "s3.sxb")
        p = sx("bundle", "tests/e2e/s3_data.sx", "--variant", "smoke", "-o", out, cwd=REPO, env=moto.env())
        expect("2 s3:// objects by ETag" in p.stdout, p.stdout)
        objects = json.loads(read_members(out)["manifest.json"])["s3"]
        expect([o["uri"] for o in objects] == ["s3://sx-data/text/train-0.txt", "s3://sx-data/text/valid.txt"], objects)
        expect(objects[1]["bytes"] == 20016 and objects[1]["etag"], objects)
        sx("run", "s3.sxb", "--metrics", "jsonl:m.jsonl", cwd=d, env=env)
        expect(steps_written(os.path.join(d, "m.jsonl")) > 0, "the bundle's run on S3 data wrote no steps")
        os.unlink(os.path.join(d, "m.jsonl"))
        s3.put_object(Bucket="sx-data", Key="text/valid.txt", Body=b"changed " * 100)
        refused("s3.sxb", "E-CLI-047", cwd=d, env=env, contains=["s3://sx-data/text/valid.txt", "800 bytes now"])
    finally:
        moto.close()


# ---- archives made by hand (tar + the zstd tool), for the refusals ------------

def read_members(sxb):
    raw = subprocess.run(["zstd", "-dc", sxb], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(raw)) as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers()}


def write_sxb(path, members):
    """members: {name: bytes} or [(name, bytes | ("symlink", target))], in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in (members.items() if isinstance(members, dict) else members):
            info = tarfile.TarInfo(name)
            if isinstance(data, tuple):
                info.type, info.linkname = tarfile.SYMTYPE, data[1]
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    subprocess.run(["zstd", "-q", "-f", "-o", path], input=buf.getvalue(), check=True)


main(globals())
