#!/usr/bin/python3
"""Regenerates tests/parity/<cfg>/: the PyTorch reference for sexpgpu's std/nn `gpt`.

    /usr/bin/python3 tools/make_parity_fixtures.py [ROOT]

Needs PyTorch (Debian: apt-get install python3-torch, for /usr/bin/python3) and
NumPy; the tests do not: they read the committed fixtures. For each
configuration this builds the same `gpt` as std/nn.sx (docs: language.md,
"Tensors and the graph") in float32 torch with fixed seeds and writes

  weights.safetensors  the initial parameters by model path (F32)
  tokens.bin           a tokens-u16 stream of exactly 5 * batch windows
  parity.sx            the experiment: :init-from the weights, :shuffle false
  expected.json        torch's step-1 loss, per-parameter gradient L2 norms
                       (before clipping), step-1 diagnostics (logits/*,
                       attention/*), and the loss of each of the 5 AdamW steps

A step's loss is the one computed before its update, on its own batch (the
windows [(k-1)*batch, k*batch) in order); with microbatches the batch's rows
are split in order, the loss is the mean of the microbatch losses and the
gradient that mean's. The optimizer is torch.optim.AdamW (single-tensor, as
torch 1.13 runs on the CPU) after clip_grad_norm_(1.0). The same run in
float64 is recorded too (`float64`), as a yardstick for float32 rounding.
"""
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

CONFIGS = [
    dict(name="gpt-d32-l2", vocab=32, d=32, layers=2, heads=4, seq_len=16, batch=4, microbatches=1, seed=1),
    dict(name="gpt-d48-l3-mb2", vocab=64, d=48, layers=3, heads=6, seq_len=8, batch=6, microbatches=2, seed=2),
]
STEPS = 5
LR, BETAS, EPS, WD, CLIP = 1e-2, (0.9, 0.999), 1e-8, 0.1, 1.0


# ---- the model, by model path, as std/nn.sx builds it ------------------------

def param_shapes(c):
    d, v, t = c["d"], c["vocab"], c["seq_len"]
    shapes = {"embed.w": [v, d], "pos.w": [t, d], "ln-f.g": [d], "ln-f.b": [d], "head.w": [d, v]}
    for i in range(c["layers"]):
        p = f"blocks.{i}."
        for ln in ("ln1", "ln2"):
            shapes[p + ln + ".g"] = [d]
            shapes[p + ln + ".b"] = [d]
        for w in ("wq", "wk", "wv", "wo"):
            shapes[p + f"attn.{w}.w"] = [d, d]
            shapes[p + f"attn.{w}.b"] = [d]
        shapes[p + "mlp.fc.w"] = [d, 4 * d]
        shapes[p + "mlp.fc.b"] = [4 * d]
        shapes[p + "mlp.proj.w"] = [4 * d, d]
        shapes[p + "mlp.proj.b"] = [d]
    return dict(sorted(shapes.items()))


def initial_weights(c):
    """std/nn's initialisation (normal 0.02 weights), except that gains and
    biases are perturbed away from ones and zeros so that they are tested too."""
    g = torch.Generator().manual_seed(1000 + c["seed"])
    out = {}
    for path, shape in param_shapes(c).items():
        if path.endswith(".g"):
            t = 1.0 + 0.1 * torch.randn(shape, generator=g)
        elif path.endswith(".b"):
            t = 0.02 * torch.randn(shape, generator=g)
        else:
            t = 0.02 * torch.randn(shape, generator=g)
        out[path] = t.to(torch.float32)
    return out


def layer_norm(x, p, path):
    return F.layer_norm(x, (x.shape[-1],), p[path + ".g"], p[path + ".b"], eps=1e-5)


def linear(x, p, path):  # x·w + b, w [in, out]
    return x @ p[path + ".w"] + p[path + ".b"]


def gpt(p, tokens, c, taps):
    b, t = tokens.shape
    d, h = c["d"], c["heads"]
    hd = d // h
    x = p["embed.w"][tokens] + p["pos.w"][:t]
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    for i in range(c["layers"]):
        pre = f"blocks.{i}."
        a = layer_norm(x, p, pre + "ln1")
        split = lambda y: y.reshape(b, t, h, hd).permute(0, 2, 1, 3)
        q, k, v = (split(linear(a, p, pre + f"attn.{w}")) for w in ("wq", "wk", "wv"))
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        s = s.masked_fill(~mask, float("-inf"))
        pr = torch.softmax(s, dim=-1)
        with torch.no_grad():
            plogp = torch.where(pr > 0, pr * torch.log(pr), torch.zeros_like(pr))
            taps[f"attention/entropy/{pre}attn"] = float(-(plogp.sum(-1)).mean())
            taps[f"attention/max/{pre}attn"] = float(pr.max(-1).values.mean())
        o = (pr @ v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = x + linear(o, p, pre + "attn.wo")
        m = layer_norm(x, p, pre + "ln2")
        x = x + linear(F.gelu(linear(m, p, pre + "mlp.fc"), approximate="tanh"), p, pre + "mlp.proj")
    x = layer_norm(x, p, "ln-f")
    return x @ p["head.w"]


def loss_of(p, tokens, targets, c, taps):
    logits = gpt(p, tokens, c, taps)
    with torch.no_grad():
        taps["logits/mean"] = float(logits.mean())
        taps["logits/std"] = float(((logits - logits.mean()) ** 2).mean().sqrt())
        taps["logits/max"] = float(logits.max())
    return F.cross_entropy(logits.reshape(-1, c["vocab"]), targets.reshape(-1))


# ---- data ----------------------------------------------------------------------

def token_stream(c):
    """5 * batch windows of seq_len + 1 tokens (consecutive windows share one):
    a noisy affine sequence, so that there is something to learn."""
    n = STEPS * c["batch"] * c["seq_len"] + 1
    rng = np.random.default_rng(c["seed"])
    v = c["vocab"]
    toks = [int(rng.integers(v))]
    for _ in range(n - 1):
        nxt = (toks[-1] * 5 + 3) % v if rng.random() < 0.7 else int(rng.integers(v))
        toks.append(nxt)
    return np.array(toks, dtype=np.uint16)


def window_batch(toks, c, first, rows):
    t = c["seq_len"]
    w = np.stack([toks[(first + r) * t:(first + r) * t + t + 1] for r in range(rows)]).astype(np.int64)
    return torch.from_numpy(w[:, :-1]), torch.from_numpy(w[:, 1:])


# ---- the run ---------------------------------------------------------------------

def run(c, weights, toks, dtype):
    params = {k: v.clone().to(dtype).requires_grad_(True) for k, v in weights.items()}
    opt = torch.optim.AdamW(list(params.values()), lr=LR, betas=BETAS, eps=EPS, weight_decay=WD, foreach=False)
    m = c["microbatches"]
    rows = c["batch"] // m
    losses, grad_norms, taps1 = [], {}, {}
    for k in range(1, STEPS + 1):
        opt.zero_grad(set_to_none=False)
        micro = []
        taps_sum = {}
        for j in range(m):
            tokens, targets = window_batch(toks, c, (k - 1) * c["batch"] + j * rows, rows)
            taps = {}
            loss = loss_of(params, tokens, targets, c, taps)
            (loss / m).backward()  # the gradient of the mean of the microbatch losses
            micro.append(float(loss))
            for name, x in taps.items():
                taps_sum[name] = taps_sum.get(name, 0.0) + x / m
        losses.append(sum(micro) / m)
        if k == 1:
            grad_norms = {path: float(p.grad.double().norm()) for path, p in params.items()}
            taps1 = taps_sum
        torch.nn.utils.clip_grad_norm_(list(params.values()), CLIP)
        opt.step()
    return losses, grad_norms, taps1


# ---- files ------------------------------------------------------------------------

def safetensors_bytes(tensors):
    """The safetensors format as the reference writer lays it out (F32 only)."""
    header, data, off = {}, b"", 0
    for name in sorted(tensors):
        arr = tensors[name].detach().numpy().astype("<f4")
        raw = arr.tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        data += raw
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def experiment(c):
    mb = f" :microbatches {c['microbatches']}" if c["microbatches"] > 1 else ""
    return f""";; {c['name']} — generated by tools/make_parity_fixtures.py; tests/parity compares
;; sexpgpu's run of it with PyTorch's (expected.json). Regenerate, do not edit.
(require std/nn)

(defloader train :source "tokens.bin" :format tokens-u16 :vocab {c['vocab']} :seq-len {c['seq_len']}
  :shuffle false)

(defmodel parity [tokens targets]
  (cross-entropy
    (gpt tokens :vocab (vocab train) :d-model {c['d']} :layers {c['layers']} :heads {c['heads']}
                :seq-len {c['seq_len']})
    targets))

(defrun parity
  :model parity
  :loader train
  :batch {c['batch']}{mb}
  :steps {STEPS}
  :optimizer (adamw :lr 1e-2 :weight-decay 0.1 :clip 1.0)
  :init-from "weights.safetensors")
"""


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    torch.set_num_threads(1)
    for c in CONFIGS:
        out = root / "tests" / "parity" / c["name"]
        out.mkdir(parents=True, exist_ok=True)
        weights = initial_weights(c)
        toks = token_stream(c)
        losses, norms, taps = run(c, weights, toks, torch.float32)
        losses64, norms64, taps64 = run(c, weights, toks, torch.float64)
        (out / "weights.safetensors").write_bytes(safetensors_bytes(weights))
        (out / "tokens.bin").write_bytes(toks.astype("<u2").tobytes())
        (out / "parity.sx").write_text(experiment(c))
        expected = {
            "config": {k: c[k] for k in ("vocab", "d", "layers", "heads", "seq_len", "batch", "microbatches")},
            "steps": STEPS,
            "optimizer": {"kind": "adamw", "lr": LR, "betas": list(BETAS), "eps": EPS, "weight_decay": WD,
                          "clip": CLIP},
            "torch": torch.__version__,
            "initial_loss": losses[0],
            "step_losses": losses,
            "grad_norms_step1": norms,
            "diagnostics_step1": taps,
            "float64": {"step_losses": losses64, "grad_norms_step1": norms64, "diagnostics_step1": taps64},
        }
        (out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
        print(f"{c['name']}: losses {' '.join(f'{x:.6f}' for x in losses)}")


if __name__ == "__main__":
    main()
