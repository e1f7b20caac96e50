#!/usr/bin/env python3
"""defrun :init-from refusals, run through the sexpgpu binary.

    init_from_test.py SEXPGPU CFG_DIR WORK_DIR

Copies CFG_DIR's parity.sx and tokens.bin into WORK_DIR/case-*/ beside a
weights.safetensors made to be wrong, runs the experiment from another
directory (so the path must be resolved against the experiment's folder) and
checks the error: exit 2, its code, and each difference named.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path


def read_st(path):
    b = path.read_bytes()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    data = b[8 + n:]
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}


def write_st(path, tensors):
    header, data = {}, b""
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)


def run_case(exe, cfg, work, name, make_weights):
    d = work / f"case-{name}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    shutil.copy(cfg / "parity.sx", d / "parity.sx")
    shutil.copy(cfg / "tokens.bin", d / "tokens.bin")
    make_weights(d / "weights.safetensors")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEXPGPU_")}
    p = subprocess.run([str(exe), "run", str(d / "parity.sx"), "--steps", "1"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr


def main():
    exe, cfg, work = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    good = read_st(cfg / "weights.safetensors")
    failures = []

    def expect(name, make, code, needles, status=2):
        rc, err = run_case(exe, cfg, work, name, make)
        missing = [n for n in [f"error[{code}]"] + needles if n not in err]
        ok = rc == status and not missing
        print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {rc}")
        if not ok:
            print(err)
            failures.append(f"{name}: exit {rc} (expected {status}); missing from stderr: {missing}")

    def mismatched(path):
        t = dict(good)
        del t["ln-f.b"]  # missing
        t["blocks.0.attn.wq.bias"] = ("F32", [32], b"\0" * 128)  # extra, near a real path
        dtype, shape, raw = t["pos.w"]
        t["pos.w"] = ("F32", [8, shape[1]], raw[:8 * shape[1] * 4])  # shape
        dtype, shape, raw = t["ln-f.g"]
        t["ln-f.g"] = ("I32", shape, raw)  # dtype
        write_st(path, t)

    expect("mismatch", mismatched, "E-CKPT-007", [
        "4 differences", "missing: parameter `ln-f.b` [32]", "extra: tensor `blocks.0.attn.wq.bias`",
        "did you mean `blocks.0.attn.wq.b`", "shape: `pos.w` is [8, 32] in the file but [16, 32] in the model",
        "dtype: `ln-f.g` is I32", "parity.sx:", "weights.safetensors"])

    def f16(path):  # a float dtype other than F32 is converted, not refused
        t = {}
        for k, (dtype, shape, raw) in good.items():
            vals = struct.unpack(f"<{len(raw) // 4}f", raw)
            t[k] = ("F16", shape, struct.pack(f"<{len(vals)}e", *vals))
        write_st(path, t)

    rc, err = run_case(exe, cfg, work, "f16", f16)
    print(f"{'ok  ' if rc == 0 else 'FAIL'} f16: exit {rc}")
    if rc != 0:
        print(err)
        failures.append(f"f16 weights: exit {rc}, expected 0")

    expect("missing-file", lambda p: None, "E-CKPT-001", ["weights.safetensors", "no such file"])

    def truncated(path):
        write_st(path, good)
        path.write_bytes(path.read_bytes()[:-10])

    expect("truncated", truncated, "E-CKPT-004", ["weights.safetensors", "parity.sx:"])
    expect("not-safetensors", lambda p: p.write_bytes(b"hello"), "E-CKPT-002", ["weights.safetensors"])

    if failures:
        print("\n".join(["FAIL:"] + failures))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
