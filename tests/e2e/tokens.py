"""Tokenized once, corpora at disk speed, end to end: the token cache (cold, warm, an edited source, a truncated
entry, an unwritable folder), llm.c's .bin files, and a token file that shrinks under the run.

    python3 tests/e2e/tokens.py SEXPGPU REPO CASE
"""
import os, shutil, signal, struct, subprocess, time

from harness import REPO, SEXPGPU, TMP, clean_env, expect, fail, jsonl, main, run, steps_written

FIXTURES = os.path.join(REPO, "tests", "fixtures", "bpe")
CACHE = os.path.join(TMP, "cache")
ENTRIES = os.path.join(CACHE, "sexpgpu", "tokens")


def experiment(name, loader, steps=3):
    """An experiment in TMP training a tiny gpt on `loader`'s declaration."""
    path = os.path.join(TMP, name + ".sx")
    with open(path, "w") as f:
        f.write(f"""(require std/nn)
{loader}
(defmodel m [tokens targets]
  (cross-entropy (gpt tokens :vocab (vocab train) :d-model 8 :layers 1 :heads 2 :seq-len 8) targets))
(defrun {name} :model m :loader train :batch 2 :steps {steps} :optimizer (adamw :lr 0.01) :seed 7)
""")
    return path


def bpe_experiment(name="cached"):
    os.makedirs(os.path.join(TMP, "tok"), exist_ok=True)
    shutil.copyfile(os.path.join(FIXTURES, "gpt2.tokenizer.json"), os.path.join(TMP, "tok", "gpt2.json"))
    if not os.path.exists(os.path.join(TMP, "corpus.txt")):
        with open(os.path.join(FIXTURES, "corpus.txt"), "rb") as f, open(os.path.join(TMP, "corpus.txt"), "wb") as g:
            g.write(f.read(200_000))
    return experiment(name, '(defloader train :source "corpus.txt" :tokenizer (bpe "tok/gpt2.json") :seq-len 8)')


def losses(sx, env=None, name="m.jsonl"):
    metrics = os.path.join(TMP, name)
    if os.path.exists(metrics):
        os.remove(metrics)
    p = run("run", sx, "--metrics", "jsonl:" + metrics, env=env)
    return [(r["step"], r["train/loss"]) for r in jsonl(metrics) if r["kind"] == "step"], p


def cache_env():
    return {"XDG_CACHE_HOME": CACHE}


def entries():
    return sorted(os.listdir(ENTRIES)) if os.path.isdir(ENTRIES) else []


def identity(path):
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns, st.st_size


def case_token_cache_cold_then_warm():
    """The first run tokenizes and stores one entry; the second reads it (the entry is not rewritten: same inode
    and mtime) and trains the same; an edited source is a new entry."""
    sx = bpe_experiment()
    cold, _ = losses(sx, cache_env())
    expect(len(cold) == 3, cold)
    names = entries()
    expect(len(names) == 1 and names[0].endswith(".tok"), names)
    before = identity(os.path.join(ENTRIES, names[0]))
    time.sleep(0.05)  # an mtime a rewrite would change
    warm, p = losses(sx, cache_env())
    expect(warm == cold, f"warm run trains differently:\n{cold}\n{warm}")
    expect(entries() == names, entries())
    expect(identity(os.path.join(ENTRIES, names[0])) == before, "the warm run rewrote the cache entry")
    expect("warning" not in p.stderr, p.stderr)
    with open(os.path.join(TMP, "corpus.txt"), "a") as f:
        f.write("\nOne more line, edited after caching.\n")
    losses(sx, cache_env())
    expect(len(entries()) == 2, f"an edited source did not miss the cache: {entries()}")


def case_token_cache_truncated_entry_rebuilt():
    """A cache entry cut short is never read: the run tokenizes again, trains as the cold run did, and the entry
    is written again whole (a new file renamed into place)."""
    sx = bpe_experiment()
    cold, _ = losses(sx, cache_env())
    entry = os.path.join(ENTRIES, entries()[0])
    whole = os.path.getsize(entry)
    with open(entry, "r+b") as f:
        f.truncate(whole // 2)
    ino = os.stat(entry).st_ino
    again, _ = losses(sx, cache_env())
    expect(again == cold, f"a run after a truncated entry trains differently:\n{cold}\n{again}")
    expect(os.path.getsize(entry) == whole, f"the entry was not rebuilt: {os.path.getsize(entry)} of {whole} bytes")
    expect(os.stat(entry).st_ino != ino, "the entry was not replaced by a rename")


def case_token_cache_unwritable_folder():
    """XDG_CACHE_HOME under a regular file: one warning naming the folder, and the run trains as usual."""
    sx = bpe_experiment()
    blocker = os.path.join(TMP, "not-a-folder")
    with open(blocker, "w") as f:
        f.write("x")
    got, p = losses(sx, {"XDG_CACHE_HOME": blocker})
    expect(len(got) == 3, got)
    warnings = [l for l in p.stderr.splitlines() if l.startswith("warning: cannot write the token cache")]
    expect(len(warnings) == 1, p.stderr)
    expect(blocker + "/sexpgpu/tokens" in warnings[0], warnings[0])


def llmc_header(magic, version, count):
    return struct.pack("<3i", magic, version, count) + bytes(1012)


def ids_u16(n):
    return [(i * 7919 + 13) % 50257 for i in range(n)]


def case_llmc_bin_trains_as_raw():
    """llm.c's .bin (header recognised and skipped) trains exactly as nanoGPT's raw .bin of the same ids; a wrong
    magic is E-DATA-060 naming the file, before the first step."""
    ids = ids_u16(5000)
    with open(os.path.join(TMP, "raw.bin"), "wb") as f:
        f.write(struct.pack(f"<{len(ids)}H", *ids))
    with open(os.path.join(TMP, "llmc.bin"), "wb") as f:
        f.write(llmc_header(20240520, 1, len(ids)) + struct.pack(f"<{len(ids)}H", *ids))
    raw, _ = losses(experiment("raw", '(defloader train :source "raw.bin" :format tokens-u16 :vocab 50257 :seq-len 8)'))
    llmc, _ = losses(experiment("llmc", '(defloader train :source "llmc.bin" :format tokens-u16 :vocab 50257 '
                                        ':seq-len 8)'))
    expect(len(raw) == 3 and raw == llmc, f"llm.c and raw files train differently:\n{raw}\n{llmc}")
    with open(os.path.join(TMP, "bad.bin"), "wb") as f:
        f.write(llmc_header(20240519, 1, len(ids)) + struct.pack(f"<{len(ids)}H", *ids))
    p = run("run", experiment("bad", '(defloader train :source "bad.bin" :format tokens-u16 :vocab 50257 :seq-len 8)'),
            check_rc=2)
    expect("error[E-DATA-060]" in p.stderr and "bad.bin" in p.stderr, p.stderr)


def case_token_file_shrinks_during_run():
    """A tokens-u16 file truncated while the run reads it: the run stops with E-DATA-063 naming the file
    (exit 1), not a SIGBUS."""
    data = os.path.join(TMP, "shrinks.bin")
    ids = ids_u16(1 << 20)
    with open(data, "wb") as f:
        f.write(struct.pack(f"<{len(ids)}H", *ids))
    sx = experiment("shrinks", '(defloader train :source "shrinks.bin" :format tokens-u16 :vocab 50257 :seq-len 8)',
                    steps=10_000_000)
    metrics = os.path.join(TMP, "shrinks.jsonl")
    proc = subprocess.Popen([SEXPGPU, "run", sx, "--metrics", "jsonl:" + metrics], cwd=REPO, env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while steps_written(metrics) < 2:
            if proc.poll() is not None or time.monotonic() > deadline:
                fail(f"the run did not reach its second step: exit {proc.poll()}\n{proc.stderr.read()}")
            time.sleep(0.05)
        os.truncate(data, 1000)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    expect(proc.returncode == 1, f"exit {proc.returncode} (a SIGBUS is -7 / 135)\n{err}")
    expect("error[E-DATA-063]" in err and "shrinks.bin is now 1000 bytes" in err, err)


main(globals())
