#!/usr/bin/env python3
"""cpu_name.describe on /proc/cpuinfo texts of the machines the benchmark has met (a ctest)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_name import describe  # noqa: E402


def cpuinfo(vendor, family, model, name, flags, cores=2):
    one = (f"processor\t: {{}}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n"
           f"model name\t: {name}\nflags\t\t: {flags}\n\n")
    return "".join(one.format(i) for i in range(cores))


CASES = [
    (cpuinfo("AuthenticAMD", 26, 2, "AMD EPYC", "fpu avx2 avx512f avx512_bf16"),
     "AMD EPYC (family 26 model 2: Zen 5), 2 cores, avx512 avx512_bf16"),
    (cpuinfo("AuthenticAMD", 25, 17, "AMD EPYC 9B14", "avx2 avx512f avx512_bf16", cores=4),
     "AMD EPYC 9B14 (family 25 model 17: Zen 4), 4 cores, avx512 avx512_bf16"),
    (cpuinfo("AuthenticAMD", 25, 1, "AMD EPYC 7B13", "avx2"),
     "AMD EPYC 7B13 (family 25 model 1: Zen 3), 2 cores, avx2"),
    (cpuinfo("GenuineIntel", 6, 143, "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz",
             "avx2 avx512f avx512_bf16 amx_bf16 amx_tile"),
     "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz (family 6 model 143: Sapphire Rapids), 2 cores, "
     "avx512 avx512_bf16 amx_bf16"),
    # A core not in the table: its numbers, no name guessed.
    (cpuinfo("GenuineIntel", 6, 200, "Some Xeon", "sse2"), "Some Xeon (family 6 model 200), 2 cores, baseline"),
    # A hypervisor that hides everything but the processors.
    ("processor\t: 0\n", "unknown CPU, 1 cores, baseline"),
]

for text, want in CASES:
    got = describe(text)
    if got != want:
        sys.exit(f"FAIL: {got!r}\n  expected {want!r}")
print(f"ok: {len(CASES)} cpuinfo texts")
