#!/usr/bin/env python3
"""The CPU a benchmark ran on, for every figure it prints (bench/run.sh, ab.sh, data.sh).

A hypervisor often names the model vaguely ("AMD EPYC"): the family and model
numbers say which core it is, and the bf16 units it has decide what
`:precision bf16` runs on (docs/performance.md). Prints one line, e.g.
`AMD EPYC (family 26 model 2: Zen 5), 2 cores, avx512 avx512_bf16`.
"""
import sys

# (vendor, family) -> [(first model, last model, core)], from the vendors' manuals.
CORES = {
    ("AuthenticAMD", 23): [(0x00, 0x2f, "Zen / Zen+"), (0x30, 0xff, "Zen 2")],
    ("AuthenticAMD", 25): [(0x00, 0x0f, "Zen 3"), (0x10, 0x1f, "Zen 4"), (0x20, 0x5f, "Zen 3"),
                           (0x60, 0x7f, "Zen 4"), (0xa0, 0xaf, "Zen 4")],
    ("AuthenticAMD", 26): [(0x00, 0xff, "Zen 5")],
    ("GenuineIntel", 6): [(0x55, 0x55, "Skylake-SP / Cascade Lake"), (0x6a, 0x6c, "Ice Lake-SP"),
                          (0x8f, 0x8f, "Sapphire Rapids"), (0xcf, 0xcf, "Emerald Rapids"),
                          (0xad, 0xae, "Granite Rapids")],
}


def describe(cpuinfo):
    fields, cores = {}, 0
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "processor":
            cores += 1
        fields.setdefault(key, value.strip())
    name = fields.get("model name", "unknown CPU")
    try:
        family, model = int(fields["cpu family"]), int(fields["model"])
    except (KeyError, ValueError):
        family = model = None
    if family is not None:
        core = next((c for lo, hi, c in CORES.get((fields.get("vendor_id"), family), []) if lo <= model <= hi), None)
        name += f" (family {family} model {model}{': ' + core if core else ''})"
    flags = fields.get("flags", "").split()
    isa = "avx512" if "avx512f" in flags else ("avx2" if "avx2" in flags else "baseline")
    units = [f for f in ("avx512_bf16", "amx_bf16") if f in flags]
    return f"{name}, {cores} cores, {' '.join([isa] + units)}"


if __name__ == "__main__":
    print(describe(open(sys.argv[1] if len(sys.argv) > 1 else "/proc/cpuinfo").read()))
