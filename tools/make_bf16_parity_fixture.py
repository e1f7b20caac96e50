#!/usr/bin/python3
"""Regenerates tests/parity/gpt-d32-l2-bf16/: `:precision bf16` against an independent emulation.

    /usr/bin/python3 tools/make_bf16_parity_fixture.py [ROOT]

Needs PyTorch and NumPy, as tools/make_parity_fixtures.py (whose model, data,
optimizer and files this reuses); the test does not. The model is the same
std/nn `gpt` in float32 torch, with bf16 rounding (round to nearest even, a
cast to torch.bfloat16 and back) at exactly the points docs/model.md
("Precision") documents:

  - both operands of every product: x·w (the weight's f32 master copy is
    rounded where it is used) and q, k, v of attention;
  - the output of every product: x·w + b after its bias (as a GPU's GEMM
    epilogue and torch's own bf16 linear store it), x·w where no bias is
    added, attention's output;
  - the gradient arriving at each of those points: torch's backward of a cast
    to bfloat16 rounds the gradient, as sexpgpu's rule for round-bf16 does.
    A value read by several products is rounded once (layer norm's output,
    read by the q, k and v products): its gradient is their f32 sum, rounded.

Scores, softmax, layer norm, GELU, the residual stream, the loss,
gradient sums and AdamW stay float32. The diagnostics are taken where sexpgpu
takes them: attention's from q and k before their rounding, logits' from the
rounded logits. expected.json holds these numbers and, under `f32`, the same
run without rounding (the f32 fixture's numbers for this configuration).
"""
import json
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_parity_fixtures as base  # noqa: E402

CONFIG = dict(base.CONFIGS[0], name="gpt-d32-l2-bf16")


def rb(x):
    """x rounded to bfloat16 (nearest even) and kept in float32; its backward rounds the gradient too."""
    return x.to(torch.bfloat16).to(x.dtype)


def linear(x, p, path, xr=None):
    """x·w + b, rounded after the bias; xr: x already rounded, when several products share one rounded copy of x."""
    return rb((rb(x) if xr is None else xr) @ rb(p[path + ".w"]) + p[path + ".b"])


def gpt(p, tokens, c, taps):
    b, t = tokens.shape
    d, h = c["d"], c["heads"]
    hd = d // h
    x = p["embed.w"][tokens] + p["pos.w"][:t]
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    for i in range(c["layers"]):
        pre = f"blocks.{i}."
        a = rb(base.layer_norm(x, p, pre + "ln1"))  # one copy for q, k and v: its gradient is rounded once
        split = lambda y: y.reshape(b, t, h, hd).permute(0, 2, 1, 3)
        q, k, v = (split(linear(None, p, pre + f"attn.{w}", a)) for w in ("wq", "wk", "wv"))
        with torch.no_grad():  # the taps read q and k as traced, before the operands' rounding
            s0 = ((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))).masked_fill(~mask, float("-inf"))
            p0 = torch.softmax(s0, dim=-1)
            plogp = torch.where(p0 > 0, p0 * torch.log(p0), torch.zeros_like(p0))
            taps[f"attention/entropy/{pre}attn"] = float(-(plogp.sum(-1)).mean())
            taps[f"attention/max/{pre}attn"] = float(p0.max(-1).values.mean())
        q, k, v = rb(q), rb(k), rb(v)
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        s = s.masked_fill(~mask, float("-inf"))
        pr = torch.softmax(s, dim=-1)
        o = rb(pr @ v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = x + linear(o, p, pre + "attn.wo")
        m = base.layer_norm(x, p, pre + "ln2")
        x = x + linear(F.gelu(linear(m, p, pre + "mlp.fc"), approximate="tanh"), p, pre + "mlp.proj")
    x = base.layer_norm(x, p, "ln-f")
    return rb(rb(x) @ rb(p["head.w"]))


SENSITIVITY_TRIALS = 8


def loss_sensitivity(c, weights, toks, losses):
    """Per step, the largest relative change of torch's own bf16 losses when 1% of the initial
    weights move by one float32 ulp (SENSITIVITY_TRIALS seeds): a bf16 value near a rounding
    midpoint flips with any change in the last f32 bit, and AdamW's sign-like updates of
    gradients that are rounding noise (key biases) carry the flip on. Another f32 order of
    the same operations (sexpgpu's) perturbs the run as much; the test allows for it."""
    import numpy as np
    worst = [0.0] * len(losses)
    for trial in range(SENSITIVITY_TRIALS):
        rng = np.random.default_rng(trial)
        nudged = {}
        for k, v in weights.items():
            a = v.numpy().astype(np.float32).copy()
            pick = rng.random(a.shape) < 0.01
            a[pick] = np.nextafter(a[pick], np.float32(np.inf))
            nudged[k] = torch.from_numpy(a)
        alt = base.run(c, nudged, toks, torch.float32)[0]
        worst = [max(w, abs(a - b) / abs(b)) for w, a, b in zip(worst, alt, losses)]
    return worst


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    torch.set_num_threads(1)
    c = CONFIG
    out = root / "tests" / "parity" / c["name"]
    out.mkdir(parents=True, exist_ok=True)
    weights = base.initial_weights(c)
    toks = base.token_stream(c)
    f32 = base.run(c, weights, toks, torch.float32)
    base.gpt = gpt  # loss_of and run call the module's gpt
    losses, norms, taps = base.run(c, weights, toks, torch.float32)
    (out / "weights.safetensors").write_bytes(base.safetensors_bytes(weights))
    (out / "tokens.bin").write_bytes(toks.astype("<u2").tobytes())
    sx = base.experiment(c).replace("tools/make_parity_fixtures.py", "tools/make_bf16_parity_fixture.py")
    (out / "parity.sx").write_text(sx.replace("  :init-from", "  :precision bf16\n  :init-from"))
    expected = {
        "config": {k: c[k] for k in ("vocab", "d", "layers", "heads", "seq_len", "batch", "microbatches")},
        "precision": "bf16",
        "steps": base.STEPS,
        "optimizer": {"kind": "adamw", "lr": base.LR, "betas": list(base.BETAS), "eps": base.EPS,
                      "weight_decay": base.WD, "clip": base.CLIP},
        "torch": torch.__version__,
        "initial_loss": losses[0],
        "step_losses": losses,
        "step_loss_sensitivity": loss_sensitivity(c, weights, toks, losses),
        "grad_norms_step1": norms,
        "diagnostics_step1": taps,
        "f32": {"step_losses": f32[0], "grad_norms_step1": f32[1], "diagnostics_step1": f32[2]},
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"{c['name']}: bf16 losses {' '.join(f'{x:.6f}' for x in losses)}")
    print(f"{c['name']}: f32 losses  {' '.join(f'{x:.6f}' for x in f32[0])}")
    print(f"{c['name']}: bf16 loss sensitivity {' '.join(f'{x:.2e}' for x in expected['step_loss_sensitivity'])}")


if __name__ == "__main__":
    main()
