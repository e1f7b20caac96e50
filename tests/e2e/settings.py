"""Every run setting does what it says, or is refused: --set of the run's own
settings, the curriculum's inheritance and conditions, several nodes."""
import json, os, re

from harness import *

DATA = os.path.join(REPO, "examples", "data")


def write_sx(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text.replace("DATA", DATA))
    return path


def knobs_of(record):
    return {k["name"]: k for k in record["knobs"]}


def case_set_settings_run():
    """--set steps=5 --set seed=3 --set microbatches=4: what runs, the manifest, the status and the slug agree."""
    metrics = os.path.join(TMP, "set.jsonl")
    status = os.path.join(TMP, "set.json")
    p = run("run", "examples/my-run.sx", "--set", "steps=5", "--set", "seed=3", "--set", "microbatches=4",
            "--json", "--metrics", "jsonl:" + metrics, "--status", status)
    first = p.stderr.splitlines()[0]
    expect(" slug my-run-microbatches=4-seed=3-steps=5 " in first and " steps 5 " in first
           and " microbatches 4 " in first and " seed 3 " in first, first)
    expect(json.loads(p.stdout)["steps"] == 5, p.stdout)
    records = jsonl(metrics)
    expect([r["step"] for r in records if r["kind"] == "step"] == [1, 2, 3, 4, 5], str(records))
    for m in (records[0], json.load(open(status))):
        knobs = knobs_of(m)
        for name, value in (("steps", 5), ("seed", 3), ("microbatches", 4)):
            expect(knobs[name] == {"name": name, "value": value, "source": "override"}, str(knobs[name]))
    expect(records[0]["slug"] == "my-run-microbatches=4-seed=3-steps=5", str(records[0]))
    # --steps wins over a --set of steps: the slug names the steps that run.
    p = run("run", "examples/my-run.sx", "--set", "steps=7", "--steps", "2", "--json", "--metrics", "stdout")
    meta = json.loads(p.stdout.splitlines()[0])
    expect(meta["slug"] == "my-run-steps=2" and knobs_of(meta)["steps"]["value"] == 2, str(meta))
    expect(json.loads(p.stdout.splitlines()[-1])["steps"] == 2, p.stdout)
    # The seed changes the initial parameters: the first step's loss differs from seed 1's.
    q = run("run", "examples/my-run.sx", "--set", "steps=1", "--json")
    r = run("run", "examples/my-run.sx", "--set", "steps=1", "--set", "seed=3", "--json")
    expect(json.loads(q.stdout)["train_loss"] != json.loads(r.stdout)["train_loss"], q.stdout + r.stdout)


def case_set_settings_refused():
    """A bad --set of a run setting is refused before anything runs: E-KNOB, exit 2, nothing written."""
    cases = [("steps=abc", "E-KNOB-003", "knob `steps` is an integer of at least 1, found `abc`"),
             ("steps=1e3", "E-KNOB-003", "write the integer in digits: 1000"),
             ("batch=8.5", "E-KNOB-003", "knob `batch` is an integer of at least 1, found `8.5`"),
             ("seed=abc", "E-KNOB-003", "knob `seed` is an integer of at least 0, found `abc`"),
             ("seed=-1", "E-KNOB-004", "knob `seed` is at least 0, found -1"),
             ("seed=18446744073709551616", "E-KNOB-003", "integers run from"),
             ("precision=fp16", "E-KNOB-004", "knob `precision` is one of f32, bf16, tf32, found fp16"),
             ("eval-every=x", "E-KNOB-003", "knob `eval-every` is an integer of at least 0"),
             ("checkpoint-every=0", "E-KNOB-004", "knob `checkpoint-every` is at least 1, found 0"),
             ("microbatches=3", "E-KNOB-004", "--set microbatches: microbatches 3 does not divide batch 8")]
    for setting, code, text in cases:
        metrics = os.path.join(TMP, "refused.jsonl")
        p = run("run", "examples/my-run.sx", "--set", setting, "--metrics", "jsonl:" + metrics, check_rc=2)
        expect(p.stderr.startswith(f"error[{code}]: --set {setting.split('=')[0]}") and text in p.stderr,
               setting + ":\n" + p.stderr)
        # (The target is opened before compiling, to refuse an unwritable one first; nothing goes into it.)
        expect(not os.path.exists(metrics) or os.path.getsize(metrics) == 0, setting + ": a refused run wrote metrics")


def case_curriculum_inherits():
    """examples/curriculum.sx: stage late keeps cool's lr-scale 0.1 (it used to reset to 1)."""
    metrics = os.path.join(TMP, "cur.jsonl")
    p = run("run", "examples/curriculum.sx", "--json", "--metrics", "jsonl:" + metrics)
    expect("stage 2 late at step 25" in p.stderr, p.stderr)
    lrs = {r["step"]: r["lr"] for r in jsonl(metrics) if r["kind"] == "step"}
    expect(abs(lrs[5] - 0.003) < 1e-9 and all(abs(lrs[k] - 0.0003) < 1e-9 for k in range(6, 31)), str(lrs))


def case_curriculum_stage_zero():
    """Stage 0's own :loader and :lr-scale apply from the first step; a later stage keeps them until it sets its own."""
    sx = write_sx("stage0.sx", """(require std/nn)
(def alphabet "abcdefghijklmnopqrstuvwxyz .,;\\n!")
(defloader train :source "DATA/train.txt" :tokenizer (chars alphabet) :seq-len 8)
(defloader other :source "DATA/valid.txt" :tokenizer (chars alphabet) :seq-len 8)
(defmodel m [tokens targets]
  (cross-entropy (gpt tokens :vocab 32 :d-model 16 :layers 1 :heads 2 :seq-len 8) targets))
(defrun stage0 :model m :loader train :batch 8 :steps 6 :seed 1 :optimizer (adamw :lr 0.01))
(defeval eval :loader other :every 2 :batches 1)
(defcurriculum
  (stage "a" :loader other :lr-scale 0.5)
  (stage "b" :when (>= step 2))
  (stage "c" :loader train :lr-scale 2 :when (>= step 4)))
""")
    metrics = os.path.join(TMP, "stage0.jsonl")
    p = run("run", sx, "--json", "--metrics", "jsonl:" + metrics)
    lrs = [r["lr"] for r in jsonl(metrics) if r["kind"] == "step"]
    want = [0.005, 0.005, 0.005, 0.005, 0.02, 0.02]
    expect(len(lrs) == len(want) and all(abs(a - b) < 1e-9 for a, b in zip(lrs, want)), str(lrs))
    # Stage a trains on `other`: the same run on `other` without a curriculum has the same losses.
    plain = write_sx("plain.sx", open(sx).read().replace(":loader train :batch", ":loader other :batch")
                     .split("(defcurriculum")[0].replace(":lr 0.01", ":lr 0.005"))
    q = run("run", plain, "--json", "--set", "steps=2", "--eval-every", "0", "--metrics", "stdout")
    plain_losses = [json.loads(l)["train/loss"] for l in q.stdout.splitlines() if '"kind":"step"' in l]
    staged = [r["train/loss"] for r in jsonl(metrics) if r["kind"] == "step"][:2]
    expect(len(staged) == 2 and plain_losses == staged, f"{plain_losses} {staged}")


def case_curriculum_pass_by_name():
    """:pass probe (the bound name) watches that pass; :when reads its metrics, step and train/loss."""
    sx = write_sx("probe.sx", """(require std/nn)
(def alphabet "abcdefghijklmnopqrstuvwxyz .,;\\n!")
(defloader train :source "DATA/train.txt" :tokenizer (chars alphabet) :seq-len 8)
(defloader valid :source "DATA/valid.txt" :tokenizer (chars alphabet) :seq-len 8)
(defmodel m [tokens targets]
  (let [logits (gpt tokens :vocab 32 :d-model 16 :layers 1 :heads 2 :seq-len 8)]
    (outputs :loss (cross-entropy logits targets) :accuracy (accuracy logits targets))))
(defrun probe :model m :loader train :batch 8 :steps 8 :seed 1 :optimizer (adamw :lr 0.01))
(defeval eval :loader valid :every 4 :batches 1)
(defeval probe :loader valid :every 3 :batches 1)
(defcurriculum
  (stage "a")
  (stage "b" :pass probe :when (and (>= step 3) (>= eval/accuracy 0.0)))
  (stage "c" :pass probe :when (and (>= step 6) (< train/loss 100))))
""")
    metrics = os.path.join(TMP, "probe.jsonl")
    p = run("run", sx, "--json", "--metrics", "jsonl:" + metrics)
    stages = [(r["step"], r["to"]) for r in jsonl(metrics) if r["kind"] == "event" and r["event"] == "stage"]
    expect(stages == [(3, 1), (6, 2)], str(stages) + "\n" + p.stderr)


def case_curriculum_when_typo():
    """check refuses a :when that reads an unbound name, with did-you-mean, before any run."""
    sx = write_sx("typo.sx", open(os.path.join(REPO, "examples", "curriculum.sx")).read()
                  .replace("data/", DATA + "/").replace("(< eval/loss 3.3)", "(< eval/los 3.3)"))
    p = run("check", sx, check_rc=2)
    expect(p.stderr.startswith("error[E-DEF-011]: stage \"cool\" :when reads `eval/los`") and
           "did you mean `eval/loss`?" in p.stderr, p.stderr)
    p = run("run", sx, check_rc=2)
    expect("E-DEF-011" in p.stderr and "step 0/" not in p.stderr, p.stderr)


def case_curriculum_seq_len():
    """A stage loader with another :seq-len is refused by check, naming both loaders."""
    sx = write_sx("seq.sx", open(os.path.join(REPO, "examples", "curriculum.sx")).read()
                  .replace("data/", DATA + "/")
                  .replace('(defloader valid', '(defloader long :source "DATA/train.txt" :tokenizer (chars alphabet) :seq-len 32)\n(defloader valid')
                  .replace('(stage "cool" :lr-scale', '(stage "cool" :loader long :lr-scale'))
    p = run("check", sx, check_rc=2)
    expect(p.stderr.startswith("error[E-DEF-010]: stage \"cool\" trains on loader `long` with :seq-len 32")
           and "loader `train`" in p.stderr, p.stderr)


def case_nodes():
    """SEXPGPU_NODES=2 without the other node is refused (E-NODE-003, exit 2; tests/e2e/nodes.py runs nodes for
    real); SEXPGPU_NODES=1 runs."""
    env = {"SEXPGPU_NODES": "2", "SEXPGPU_NODE_RANK": "1", "SEXPGPU_RENDEZVOUS": "127.0.0.1:9",
           "SEXPGPU_NODE_TIMEOUT": "0.5"}
    status = os.path.join(TMP, "nodes.json")
    p = run("run", "examples/my-run.sx", "--steps", "1", "--status", status, env=env, check_rc=2)
    expect(p.stderr.startswith("error[E-NODE-003]: node 0 could not be reached") and not os.path.exists(status),
           p.stderr)
    p = run("run", "examples/my-run.sx", "--steps", "1", "--json", env={"SEXPGPU_NODES": "1"})
    expect(json.loads(p.stdout)["steps"] == 1, p.stdout)
    p = run("run", "examples/my-run.sx", "--steps", "1", env={"SEXPGPU_NODES": "2", "SEXPGPU_RENDEZVOUS": "h:0"},
            check_rc=2)
    expect("error[E-ENV-001]: SEXPGPU_RENDEZVOUS" in p.stderr, p.stderr)


def case_explain_device():
    """explain --device cpu and --device cuda both work in any build (lowering is plain C++); run --device cuda
    is refused before the first step where it cannot run: E-DEV-001 in a build without CUDA, E-DEV-002 or
    E-DEV-003 in one with it on a machine without a driver or a GPU."""
    p = run("explain", "examples/my-run.sx", "--device", "cpu")
    expect(p.stdout.startswith("experiment examples/my-run.sx slug my-run run my-run"), p.stdout)
    expect("lowering train-step:" not in p.stdout, p.stdout)
    p = run("explain", "examples/my-run.sx", "--variant", "smoke", "--device", "cuda", env={"XDG_CACHE_HOME": SHARED_CACHE})
    expect("\nlowering train-step: " in p.stdout and
           re.search(r"generated: (not compiled|\d+ cached|\d+ compiled|\d+ cached, \d+ compiled)\) plan ", p.stdout),
           p.stdout)
    p = run("run", "examples/my-run.sx", "--steps", "1", "--device", "cuda", check_rc=2)
    expect(re.match(r"error\[E-DEV-00[123]\]", p.stderr), p.stderr)


main(globals())
