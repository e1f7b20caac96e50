#!/usr/bin/python3
"""PyTorch side of bench/run.sh: trains std/nn's `gpt` (docs/model.md; the same
model as tools/make_parity_fixtures.py) with AdamW and prints one JSON line.

    /usr/bin/python3 bench/torch_gpt.py VOCAB D LAYERS HEADS SEQ BATCH STEPS WARMUP [THREADS] [--separate-qkv]
                                        [--autocast-bf16]

Written as a PyTorch user would, nanoGPT's way: nn.Embedding, nn.LayerNorm,
nn.Linear (addmm: bias fused into the product), ONE fused `qkv` linear [d, 3d]
split into q, k and v (the same math as three d x d linears with biases, and
the same parameter count, printed as "params"), a causal mask, GELU (tanh, as
std/nn), an untied head without bias, F.cross_entropy,
torch.optim.AdamW(weight_decay=0.1). --separate-qkv: the older, slower peer
with separate q, k and v linears. --autocast-bf16: the forward (and so its
backward) under torch.autocast("cpu", dtype=torch.bfloat16), PyTorch's own
mixed precision, master weights and AdamW in f32. THREADS (optional, > 0) goes to
torch.set_num_threads; OMP_* variables are read by torch itself. step_s:
per-step wall times after WARMUP steps; the median is reported.
"""
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, separate_qkv):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        if separate_qkv:
            self.wq, self.wk, self.wv = (nn.Linear(d, d) for _ in range(3))
            self.qkv = lambda a: (self.wq(a), self.wk(a), self.wv(a))
        else:
            self.wqkv = nn.Linear(d, 3 * d)
            self.qkv = lambda a: self.wqkv(a).split(d, dim=2)
        self.wo = nn.Linear(d, d)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x, mask):
        b, t, d = x.shape
        h, hd = self.heads, d // self.heads
        a = self.ln1(x)
        split = lambda y: y.view(b, t, h, hd).transpose(1, 2)
        q, k, v = (split(y) for y in self.qkv(a))
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        s = s.masked_fill(mask, float("-inf"))
        o = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.wo(o)
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab, d, layers, heads, seq, separate_qkv=False):
        super().__init__()
        self.embed, self.pos = nn.Embedding(vocab, d), nn.Parameter(0.02 * torch.randn(seq, d))
        nn.init.normal_(self.embed.weight, std=0.02)
        self.blocks = nn.ModuleList(Block(d, heads, separate_qkv) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.ones(seq, seq, dtype=torch.bool).triu(1))

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.embed(tokens) + self.pos[:t]
        for blk in self.blocks:
            x = blk(x, self.mask[:t, :t])
        return self.head(self.ln_f(x))


def main():
    separate_qkv = "--separate-qkv" in sys.argv
    autocast = "--autocast-bf16" in sys.argv
    args = [a for a in sys.argv[1:] if a not in ("--separate-qkv", "--autocast-bf16")]
    vocab, d, layers, heads, seq, batch, steps, warmup = (int(a) for a in args[0:8])
    if len(args) > 8 and int(args[8]) > 0:
        torch.set_num_threads(int(args[8]))
    torch.manual_seed(1)
    model = Gpt(vocab, d, layers, heads, seq, separate_qkv)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(2)
    data = torch.randint(0, vocab, (steps + warmup, batch, seq + 1), generator=g)
    times = []
    for k in range(steps + warmup):
        start = time.perf_counter()
        x, y = data[k, :, :-1], data[k, :, 1:]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if k >= warmup:
            times.append(time.perf_counter() - start)
    step_s = statistics.median(times)
    print(json.dumps({"step_s": step_s, "tok_s": batch * seq / step_s, "threads": torch.get_num_threads(),
                      "params": sum(p.numel() for p in model.parameters()), "loss": float(loss),
                      "qkv": "separate" if separate_qkv else "fused", "autocast_bf16": autocast}))


if __name__ == "__main__":
    main()
