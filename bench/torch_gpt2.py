#!/usr/bin/env python3
"""PyTorch side of scripts/gpu_check.sh on a GPU: std/nn's `gpt` (the model of
bench/torch_gpt.py: separate q/k/v/o projections with biases, learned
positions, untied head without bias) at GPT-2 small's shapes, bf16 autocast,
SDPA (flash) attention, fused AdamW with f32 master weights; one JSON line.

    python3 bench/torch_gpt2.py train [--compile] [--batch B] [--steps N] [--warmup W]
                                      [--vocab V --d D --layers L --heads H --seq T] [--peak-tflops P]
    python3 bench/torch_gpt2.py ceilings      # bf16 GEMM TFLOP/s and device copy TB/s
    python3 bench/torch_gpt2.py flops --vocab V --d D --layers L --heads H --seq T
                                              # training FLOPs per token (the MFU's numerator)

tok_s is batch * seq over the median step time after the warm-up steps, each
step timed with CUDA events; mfu is tok_s * flops_per_token over the peak
(--peak-tflops, else the GEMM ceiling measured in the same process).
"""
import argparse
import json
import math
import os
import statistics
import sys


def flops_per_token(vocab, d, layers, heads, seq):
    """Training FLOPs per token: 6 per weight (forward 2, backward 4) for every
    product (the embedding lookups are not products), plus attention's two
    products, causal (half of T*T), forward and backward: 6 * L * T * d."""
    block = 4 * d * d + 2 * d * 4 * d  # q, k, v, o; fc, proj
    weights = layers * block + d * vocab  # the head
    return 6 * weights + 6 * layers * seq * d


def ceilings(torch):
    dev = torch.device("cuda")
    n = 8192
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(10):
        start.record()
        a @ b
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    gemm = 2 * n**3 / statistics.median(times) / 1e12
    src = torch.randn(1 << 30, device=dev, dtype=torch.float32)  # 4 GiB, far over the L2
    dst = torch.empty_like(src)
    dst.copy_(src)
    times = []
    for _ in range(10):
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    copy = 2 * src.numel() * 4 / statistics.median(times) / 1e12  # bytes read + written
    return {"gemm_bf16_tflops": round(gemm, 1), "copy_tb_s": round(copy, 2), "device": torch.cuda.get_device_name()}


def train(torch, args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch.nn.functional as F
    from torch_gpt import Block, Gpt

    class SdpaBlock(Block):
        def forward(self, x, mask=None):
            b, t, d = x.shape
            h, hd = self.heads, d // self.heads
            a = self.ln1(x)
            split = lambda y: y.view(b, t, h, hd).transpose(1, 2)
            o = F.scaled_dot_product_attention(split(self.wq(a)), split(self.wk(a)), split(self.wv(a)), is_causal=True)
            x = x + self.wo(o.transpose(1, 2).reshape(b, t, d))
            return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class SdpaGpt(Gpt):
        def forward(self, tokens):
            t = tokens.shape[1]
            x = self.embed(tokens) + self.pos[:t]
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln_f(x))

    torch.manual_seed(1)
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    model = SdpaGpt(args.vocab, args.d, args.layers, args.heads, args.seq)
    model.blocks = torch.nn.ModuleList(SdpaBlock(args.d, args.heads) for _ in range(args.layers))
    model = model.to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
    step_model = torch.compile(model) if args.compile else model
    g = torch.Generator(device=dev).manual_seed(2)
    data = torch.randint(0, args.vocab, (args.batch, args.seq + 1), generator=g, device=dev)
    x, y = data[:, :-1], data[:, 1:]
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for k in range(args.steps + args.warmup):
        start.record()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(step_model(x).reshape(-1, args.vocab).float(), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        end.record()
        end.synchronize()
        if k >= args.warmup:
            times.append(start.elapsed_time(end) / 1e3)
    step_s = statistics.median(times)
    tok_s = args.batch * args.seq / step_s
    peak = args.peak_tflops or ceilings(torch)["gemm_bf16_tflops"]
    fpt = flops_per_token(args.vocab, args.d, args.layers, args.heads, args.seq)
    return {"system": "pytorch " + torch.__version__ + (" compile" if args.compile else " eager"), "step_s": step_s,
            "tok_s": round(tok_s), "mfu": round(tok_s * fpt / (peak * 1e12), 4), "peak_tflops": peak,
            "batch": args.batch, "seq": args.seq, "loss": float(loss),
            "params": sum(p.numel() for p in model.parameters())}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["train", "ceilings", "flops"])
    p.add_argument("--compile", action="store_true")
    for name, default in [("batch", 16), ("steps", 10), ("warmup", 3), ("vocab", 50257), ("d", 768), ("layers", 12),
                          ("heads", 12), ("seq", 1024)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--peak-tflops", type=float, default=0.0)
    args = p.parse_args()
    if args.mode == "flops":
        print(flops_per_token(args.vocab, args.d, args.layers, args.heads, args.seq))
        return
    import torch

    if not torch.cuda.is_available():
        sys.exit("torch_gpt2.py: no CUDA device for PyTorch")
    print(json.dumps(ceilings(torch) if args.mode == "ceilings" else train(torch, args)))


if __name__ == "__main__":
    main()
