"""(bpe "tokenizer.json") end to end: the file read at the declaration (its
vocabulary known to `check`, its errors pointing at it), and a run over a
BPE-tokenized text seeing the same windows as over the same ids as tokens-u32.

    python3 tests/e2e/tokenizers.py SEXPGPU REPO CASE
"""
import json, os, shutil, struct

from harness import REPO, TMP, expect, jsonl, main, run

FIXTURES = os.path.join(REPO, "tests", "fixtures", "bpe")
EOT = "<|endoftext|>"


def experiment(name, loader):
    """An experiment in TMP training a tiny gpt on `loader`'s declaration."""
    path = os.path.join(TMP, name + ".sx")
    with open(path, "w") as f:
        f.write(f"""(require std/nn)
{loader}
(defmodel m [tokens targets]
  (cross-entropy (gpt tokens :vocab (vocab train) :d-model 8 :layers 1 :heads 2 :seq-len 8) targets))
(defrun {name} :model m :loader train :batch 2 :steps 3 :optimizer (adamw :lr 0.01) :seed 7)
""")
    return path


def tokenizer_beside(name="gpt2"):
    """The fixture tokenizer copied into TMP/tok/, so that a relative path must be relative to the .sx."""
    os.makedirs(os.path.join(TMP, "tok"), exist_ok=True)
    dst = os.path.join(TMP, "tok", name + ".tokenizer.json")
    shutil.copyfile(os.path.join(FIXTURES, name + ".tokenizer.json"), dst)
    return "tok/" + name + ".tokenizer.json"


def case_bpe_vocab_known_to_check():
    """`check` reads the tokenizer at the declaration: (vocab train) is the file's 50,257, not E-DATA-040."""
    with open(os.path.join(TMP, "a.txt"), "w") as f:
        f.write("hello world " * 50)
    sx = experiment("known", f'(defloader train :source "a.txt" :tokenizer (bpe "{tokenizer_beside()}") :seq-len 8)')
    p = run("check", sx)
    expect("E-DATA-040" not in p.stderr, p.stderr)


def loss_records(sx, metrics):
    run("run", sx, "--metrics", "jsonl:" + metrics)
    return [(r["step"], r["train/loss"]) for r in jsonl(metrics) if r["kind"] == "step"]


def case_bpe_windows_equal_tokens_u32():
    """Edge cases joined by <|endoftext|> (split out before anything else, so the ids are the reference's
    joined by 50256), read as text with (bpe ...), train exactly as the reference ids read as tokens-u32."""
    ref = json.load(open(os.path.join(FIXTURES, "gpt2.ids.json")))["edge_cases"]
    cases = [c for c in ref if c["text"]] * 3
    text = EOT.join(c["text"] for c in cases)
    ids = []
    for i, c in enumerate(cases):
        ids += ([50256] if i else []) + c["ids"]
    with open(os.path.join(TMP, "edge.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(text)
    with open(os.path.join(TMP, "edge.u32"), "wb") as f:
        f.write(struct.pack(f"<{len(ids)}I", *ids))
    tok = tokenizer_beside()
    bpe = loss_records(experiment("viabpe", f'(defloader train :source "edge.txt" :tokenizer (bpe "{tok}") '
                                            ':seq-len 8)'), os.path.join(TMP, "bpe.jsonl"))
    u32 = loss_records(experiment("viau32", '(defloader train :source "edge.u32" :format tokens-u32 :vocab 50257 '
                                            ':seq-len 8)'), os.path.join(TMP, "u32.jsonl"))
    expect(len(bpe) == 3, bpe)
    expect(bpe == u32, f"bpe text and tokens-u32 train differently:\n{bpe}\n{u32}")


def refused(loader_tok, code, named):
    with open(os.path.join(TMP, "a.txt"), "w") as f:
        f.write("hello")
    sx = experiment("refused", f'(defloader train :source "a.txt" :tokenizer {loader_tok} :seq-len 8)')
    p = run("check", sx, check_rc=2)
    expect(f"error[{code}]" in p.stderr, p.stderr)
    expect(named in p.stderr, f"the message does not name {named}:\n{p.stderr}")
    expect("refused.sx:2:" in p.stderr, f"the error does not point at the declaration:\n{p.stderr}")
    expect("help:" in p.stderr, p.stderr)


def case_bpe_malformed_file_refused():
    """A tokenizer.json that is not JSON: E-DATA-050 at the declaration, naming the file."""
    with open(os.path.join(TMP, "broken.json"), "w") as f:
        f.write('{"model": {"type": "BPE", "vocab": {')
    refused('(bpe "broken.json")', "E-DATA-050", "broken.json")


def case_bpe_unsupported_component_refused():
    """A WordPiece model (not a byte-level BPE): E-DATA-051 naming the component, never an approximation."""
    j = json.load(open(os.path.join(FIXTURES, "gpt2.tokenizer.json")))
    j["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}
    with open(os.path.join(TMP, "lower.json"), "w") as f:
        json.dump(j, f)
    refused('(bpe "lower.json")', "E-DATA-051", "Lowercase")


def case_bpe_missing_file_refused():
    """A tokenizer file that does not exist: E-DATA-001 at the declaration, naming the path looked for."""
    refused('(bpe "nope/tokenizer.json")', "E-DATA-001", "nope/tokenizer.json")


main(globals())
