"""Kernels compiled with NVRTC through the kernel cache, by `explain --device cuda` and by runs on the emulated
CUDA device: the counts of the lowering report and of `timing kernels`, a cold and a warm cache, runs sharing
one, a damaged entry recompiled, a cache that cannot be written. Skipped (passing) where NVRTC is not found:
then every kernel is `not compiled`.

    python3 tests/e2e/cuda_compile.py SEXPGPU REPO CASE
"""
import glob, os, re, subprocess

from harness import SEXPGPU, REPO, TMP, clean_env, expect, main, run

# The tiniest experiment with an optimizer: an embedding and its loss (a few kernels, so a cold cache is cheap).
TINY = """(defloader train :source "train.txt" :tokenizer (chars "abcdefgh") :seq-len 8)
(defmodel tiny [tokens targets]
  (cross-entropy (embed tokens (param "embed" [(vocab train) (vocab train)] :init (normal 0.02))) targets))
(defrun tiny-run :model tiny :loader train :batch 4 :steps 3 :optimizer (adamw :lr 0.01 :clip 1.0) :seed 1)
"""
LOWERING = re.compile(r"^lowering train-step: .* \((\d+) cublas, (\d+) generated: ([^)]*)\) plan ", re.M)
TIMING = re.compile(r"^timing kernels (\d+) compiled in (\d+\.\d{3})s, (\d+) cache hits$", re.M)


def experiment():
    path = os.path.join(TMP, "tiny.sx")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(TINY)
        with open(os.path.join(TMP, "train.txt"), "w") as f:
            f.write("abcdefghhgfedcba" * 64)
    return path


def cache_env(name):
    return {"XDG_CACHE_HOME": os.path.join(TMP, name)}


def entries(name):
    return sorted(glob.glob(os.path.join(TMP, name, "sexpgpu", "kernels", "*.sxk")))


def explain(cache, **kw):
    return run("explain", experiment(), "--device", "cuda", env=cache_env(cache), **kw)


def kernels_of(out):
    """The train step's lowering: (generated launches, {"cached": n, "compiled": n}) or None when not compiled."""
    m = LOWERING.search(out)
    expect(m, out)
    if m.group(3) == "not compiled":
        return int(m.group(2)), None
    counts = {"cached": 0, "compiled": 0}
    for part in m.group(3).split(", "):
        n, what = part.split(" ")
        counts[what] = int(n)
    expect(sum(counts.values()) == int(m.group(2)), f"the counts add up to the generated launches: {m.group(0)}")
    return int(m.group(2)), counts


def needs_nvrtc():
    """Ends the case (passing) where NVRTC is not found."""
    if not re.search(r"^ok   nvrtc: ", run("doctor", check_rc=None).stdout, re.M):
        print("NVRTC not found: every kernel is `not compiled`; nothing here to test")
        raise SystemExit(0)


def cold_explain(cache):
    """An explain on an empty cache: every generated launch compiled. Returns their count."""
    p = explain(cache)
    generated, counts = kernels_of(p.stdout)
    expect(counts == {"cached": 0, "compiled": generated} and generated > 0, p.stdout)
    return generated, p


def emulated_run(cache, *extra):
    env = {**cache_env(cache), "SEXPGPU_CUDA_EMULATE": "1"}
    return run("run", experiment(), "--device", "cuda", "--json", *extra, env=env)


def timing(p):
    m = TIMING.search(p.stderr)
    expect(m, p.stderr)
    return int(m.group(1)), float(m.group(2)), int(m.group(3))


def case_cold_then_warm_explain():
    """A cold cache: every generated launch compiled and an entry written per program; the same explain again:
    every launch from the cache, nothing else in the output different."""
    needs_nvrtc()
    generated, cold = cold_explain("c")
    written = entries("c")
    expect(len(written) >= 1, f"no cache entry: {os.listdir(TMP)}")
    warm = explain("c")
    expect(kernels_of(warm.stdout) == (generated, {"cached": generated, "compiled": 0}), warm.stdout)
    expect(entries("c") == written, "a warm explain wrote nothing new")
    same = lambda out: LOWERING.sub("lowering", out)
    expect(same(cold.stdout) == same(warm.stdout), f"{cold.stdout}\n---\n{warm.stdout}")


def case_run_after_explain_hits_the_cache():
    """A run on the emulated device after explain loads the graph's and the optimizer's kernels from the cache
    (compiling only the device's own small kernels); a second run compiles nothing."""
    needs_nvrtc()
    generated, _ = cold_explain("c")
    first = emulated_run("c")
    expect(kernels_of(first.stderr) == (generated, {"cached": generated, "compiled": 0}), first.stderr)
    compiled, seconds, hits = timing(first)
    expect(compiled > 0 and seconds > 0 and hits >= generated, first.stderr)
    second = emulated_run("c")
    expect(timing(second) == (0, 0.0, hits + compiled), second.stderr)
    expect(first.stdout == second.stdout, f"{first.stdout}\n{second.stdout}")


def case_concurrent_runs_share_the_cache():
    """Two runs started together on one cold cache both compile and finish with the same numbers; every entry
    left is whole (a third run loads them all and compiles nothing) and no temporary file is left behind."""
    needs_nvrtc()
    env = clean_env({**cache_env("shared"), "SEXPGPU_CUDA_EMULATE": "1"})
    cmd = [SEXPGPU, "run", experiment(), "--device", "cuda", "--json"]
    procs = [subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        expect(p.returncode == 0, f"exit {p.returncode}\n{err}")
    expect(outs[0][0] == outs[1][0], f"{outs[0][0]}\n{outs[1][0]}")
    folder = os.path.join(TMP, "shared", "sexpgpu", "kernels")
    expect(not [f for f in os.listdir(folder) if ".tmp-" in f], os.listdir(folder))
    third = emulated_run("shared")
    compiled, _, hits = timing(third)
    expect(compiled == 0 and hits > 0, third.stderr)


def case_truncated_entry_recompiled():
    """An entry cut short (a crash, a full disk) is never loaded: its kernels are compiled again and the entry
    rewritten whole, so that the next explain finds every kernel in the cache."""
    needs_nvrtc()
    generated, _ = cold_explain("c")
    whole = {e: os.path.getsize(e) for e in entries("c")}
    victim = max(whole, key=whole.get)
    with open(victim, "r+b") as f:
        f.truncate(whole[victim] // 2)
    again = explain("c")
    _, counts = kernels_of(again.stdout)
    expect(counts["compiled"] > 0, again.stdout)
    expect(entries("c") == sorted(whole) and os.path.getsize(victim) > whole[victim] // 2, "the entry rewritten")
    expect(kernels_of(explain("c").stdout) == (generated, {"cached": generated, "compiled": 0}), "warm again")


def case_unwritable_cache_warns_once():
    """A cache folder that cannot be made (a file in its place): the kernels are compiled anyway, explain
    succeeds, and one warning line says so."""
    needs_nvrtc()
    blocker = os.path.join(TMP, "file")
    with open(blocker, "w") as f:
        f.write("not a folder")
    p = run("explain", experiment(), "--device", "cuda", env={"XDG_CACHE_HOME": blocker})
    generated, counts = kernels_of(p.stdout)
    expect(counts == {"cached": 0, "compiled": generated}, p.stdout)
    warnings = [l for l in p.stderr.splitlines() if l.startswith("warning: cannot write the kernel cache ")]
    expect(len(warnings) == 1 and warnings[0].endswith("; kernels are compiled and not kept"), p.stderr)


main(globals())
