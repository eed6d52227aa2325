#!/usr/bin/python3
"""bench/torch_models.py — the peer: the same models trained in PyTorch (CPU, fp32).

Same architectures, batch, loss and optimizer as dlperf's zoo (models/zoo.c), synthetic
data resident in memory as in dlperf (no input pipeline in the timed loop). Prints one
JSON object: per-step times of the timed steps and their median.

    bench/torch_models.py MODEL --batch N --threads T --steps S --warmup W [--context T]
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn


def p1b1():
    # CANDLE P1B1 version B: 60483-2000-600-2000-60483, ReLU, linear output, MSE, RMSprop
    net = nn.Sequential(nn.Linear(60483, 2000), nn.ReLU(), nn.Linear(2000, 600), nn.ReLU(),
                        nn.Linear(600, 2000), nn.ReLU(), nn.Linear(2000, 60483))
    opt = torch.optim.RMSprop(net.parameters(), lr=0.001, alpha=0.9, eps=1e-8)
    loss = nn.MSELoss()

    def data(b):
        x = torch.rand(b, 60483)
        return x, x  # autoencoder: the target is the input

    return net, opt, loss, data


def alexnet_owt():
    # convnet-benchmarks AlexNet OWT, 227x227, ReLU on every layer including fc8 (quirk)
    net = nn.Sequential(
        nn.Conv2d(3, 64, 11, stride=4), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),
        nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(),
        nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Flatten(), nn.Linear(9216, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
        nn.Linear(4096, 1000), nn.ReLU())
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss = nn.CrossEntropyLoss()

    def data(b):
        return torch.randn(b, 3, 227, 227) * 0.1, torch.randint(0, 1000, (b,))

    return net, opt, loss, data


def vgg11():
    # convnet-benchmarks VGG model A: 3x3 SAME convs, 2x2 pools, ReLU on every layer incl. fc8
    layers, c = [], 3
    for v in [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU()]
            c = v
    net = nn.Sequential(*layers, nn.Flatten(), nn.Linear(25088, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                        nn.Linear(4096, 1000), nn.ReLU())
    return net, torch.optim.SGD(net.parameters(), lr=0.01), nn.CrossEntropyLoss(), imagenet_data(224)


def imagenet_data(hw):
    def data(b):
        return torch.randn(b, 3, hw, hw) * 0.1, torch.randint(0, 1000, (b,))
    return data


class Inception(nn.Module):
    """GoogLeNet inception module: [1x1, 1x1->3x3, 1x1->5x5, maxpool->1x1] concatenated."""

    def __init__(self, cin, c1, r3, c3, r5, c5, pp):
        super().__init__()
        cr = lambda i, o, k: nn.Sequential(nn.Conv2d(i, o, k, padding=k // 2), nn.ReLU())
        self.b1 = cr(cin, c1, 1)
        self.b2 = nn.Sequential(cr(cin, r3, 1), cr(r3, c3, 3))
        self.b3 = nn.Sequential(cr(cin, r5, 1), cr(r5, c5, 5))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, 1), cr(cin, pp, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


def googlenet():
    # convnet-benchmarks GoogLeNet v1: no LRN, no auxiliary heads, ReLU on the classifier
    net = nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
        nn.Conv2d(64, 64, 1), nn.ReLU(), nn.Conv2d(64, 192, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
        Inception(192, 64, 96, 128, 16, 32, 32), Inception(256, 128, 128, 192, 32, 96, 64), nn.MaxPool2d(3, 2, 1),
        Inception(480, 192, 96, 208, 16, 48, 64), Inception(512, 160, 112, 224, 24, 64, 64),
        Inception(512, 128, 128, 256, 24, 64, 64), Inception(512, 112, 144, 288, 32, 64, 64),
        Inception(528, 256, 160, 320, 32, 128, 128), nn.MaxPool2d(3, 2, 1),
        Inception(832, 256, 160, 320, 32, 128, 128), Inception(832, 384, 192, 384, 48, 128, 128),
        nn.AvgPool2d(7, 1), nn.Flatten(), nn.Linear(1024, 1000), nn.ReLU())
    return net, torch.optim.SGD(net.parameters(), lr=0.01), nn.CrossEntropyLoss(), imagenet_data(224)


class Bottleneck(nn.Module):
    """Keras ResNet50 v1 block: stride on the first 1x1, conv biases, BN after every conv."""

    def __init__(self, cin, width, stride, project):
        super().__init__()
        bn = lambda c: nn.BatchNorm2d(c, eps=1e-5, momentum=0.1)  # Keras momentum 0.9
        self.body = nn.Sequential(nn.Conv2d(cin, width, 1, stride), bn(width), nn.ReLU(),
                                  nn.Conv2d(width, width, 3, padding=1), bn(width), nn.ReLU(),
                                  nn.Conv2d(width, 4 * width, 1), bn(4 * width))
        self.short = nn.Sequential(nn.Conv2d(cin, 4 * width, 1, stride), bn(4 * width)) if project else None

    def forward(self, x):
        return torch.relu(self.body(x) + (self.short(x) if self.short is not None else x))


def resnet50():
    # Keras applications ResNet50 with the Horovod example's SGD (momentum 0.9, lr 0.0125,
    # L2 5e-5 as Keras adds it: gradient 2*wd*w -> PyTorch weight_decay 1e-4)
    layers = [nn.Conv2d(3, 64, 7, 2, 3), nn.BatchNorm2d(64, eps=1e-5, momentum=0.1), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for s, blocks in enumerate([3, 4, 6, 3]):
        width = 64 << s
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, 2 if i == 0 and s > 0 else 1, i == 0))
            cin = 4 * width
    net = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000))
    opt = torch.optim.SGD(net.parameters(), lr=0.0125, momentum=0.9, weight_decay=1e-4)
    return net, opt, nn.CrossEntropyLoss(), imagenet_data(224)


def p3b1():
    # CANDLE P3B1: shared 400->1200, the primary-site tower 1200->1200->1200->13, SGD 0.01
    net = nn.Sequential(nn.Linear(400, 1200), nn.ReLU(), nn.Linear(1200, 1200), nn.ReLU(), nn.Linear(1200, 1200),
                        nn.ReLU(), nn.Linear(1200, 13))

    def data(b):
        return (torch.rand(b, 400) < 0.3).float() * torch.rand(b, 400) * 0.7, torch.randint(0, 13, (b,))

    return net, torch.optim.SGD(net.parameters(), lr=0.01), nn.CrossEntropyLoss(), data


class LastStepLSTM(nn.Module):
    """rnn-benchmarks basic_lstm: one LSTM layer over (T, B, H), output h at the last step."""

    def __init__(self, hidden):
        super().__init__()
        self.lstm = nn.LSTM(hidden, hidden)

    def forward(self, x):
        out, _ = self.lstm(x)
        return out[-1]


def basic_lstm():
    net = LastStepLSTM(1024)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)

    def loss(y, t):  # summed squared error (rnn-benchmarks' reduce_sum)
        return ((y - t) ** 2).sum()

    def data(b):
        return torch.rand(30, b, 1024), torch.rand(b, 1024)

    return net, opt, loss, data


class Attention(nn.Module):
    """Multi-head self-attention as HF's eager GPT-2 / BERT run it: a fused QKV projection,
    heads split by view and transpose, softmax(q k^T / sqrt(hd)) (causal: masked_fill of
    the future), dropout on the weights, times v, heads merged, an output projection."""

    def __init__(self, d, heads, causal, dropout):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        if self.causal:
            mask = torch.ones(t, t, dtype=torch.bool).tril()
            s = s.masked_fill(~mask, float("-inf"))
        w = self.drop(torch.softmax(s, dim=-1))
        return self.proj((w @ v).transpose(1, 2).reshape(b, t, d))


class GPT(nn.Module):
    """GPT-2 as models/zoo.c builds it (pre-norm, exact GELU, tied head, no dropout)."""

    def __init__(self, layers, d, heads, context, vocab):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "ln_1": nn.LayerNorm(d), "attn": Attention(d, heads, True, 0.0), "ln_2": nn.LayerNorm(d),
                "mlp": nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))}))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for blk in self.blocks:
            x = x + blk["attn"](blk["ln_1"](x))
            x = x + blk["mlp"](blk["ln_2"](x))
        return self.ln_f(x) @ self.wte.weight.t()  # the head tied to wte, no bias


def adamw(net, lr, betas, eps, wd):
    """torch.optim.AdamW with weight decay on the 2-D tensors only (llm.c's groups)."""
    decay = [p for p in net.parameters() if p.dim() >= 2]
    rest = [p for p in net.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": rest, "weight_decay": 0.0}],
                             lr=lr, betas=betas, eps=eps)


class Clipped:
    """An optimizer whose step clips the gradients' global norm first (clip_grad_norm_)."""

    def __init__(self, opt, params, max_norm):
        self.opt, self.params, self.max_norm = opt, list(params), max_norm

    def zero_grad(self, set_to_none=True):
        self.opt.zero_grad(set_to_none=set_to_none)

    def step(self):
        torch.nn.utils.clip_grad_norm_(self.params, self.max_norm)
        self.opt.step()


def lm_loss(vocab):
    ce = nn.CrossEntropyLoss(ignore_index=-100)

    def loss(logits, t):
        return ce(logits.reshape(-1, vocab), t.reshape(-1))

    return loss


def gpt2(context=1024):
    # GPT-2 124M, llm.c's trainer: AdamW 6e-4, betas (0.9, 0.95), eps 1e-8, wd 0.1, clip 1
    net = GPT(12, 768, 12, 1024, 50257)
    opt = Clipped(adamw(net, 6e-4, (0.9, 0.95), 1e-8, 0.1), net.parameters(), 1.0)

    def data(b):
        return torch.randint(0, 50257, (b, context)), torch.randint(0, 50257, (b, context))

    return net, opt, lm_loss(50257), data


class BERT(nn.Module):
    """BERT-base with its masked-LM head as models/zoo.c builds it (post-norm, dropout 0.1,
    eps 1e-12, every token of type 0, the decoder tied with a bias of its own)."""

    def __init__(self, layers=12, d=768, heads=12, vocab=30522, positions=512):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(vocab, d), nn.Embedding(positions, d), nn.Embedding(2, d)
        self.emb_ln, self.drop = nn.LayerNorm(d, eps=1e-12), nn.Dropout(0.1)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "attn": Attention(d, heads, False, 0.1), "ln_1": nn.LayerNorm(d, eps=1e-12),
                "mlp": nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)),
                "ln_2": nn.LayerNorm(d, eps=1e-12)}))
        self.transform = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d, eps=1e-12))
        self.bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, ids):
        t = ids.shape[1]
        x = self.word(ids) + self.pos(torch.arange(t)) + self.token_type(torch.zeros_like(ids))
        x = self.drop(self.emb_ln(x))
        for blk in self.blocks:
            x = blk["ln_1"](x + self.drop(blk["attn"](x)))
            x = blk["ln_2"](x + self.drop(blk["mlp"](x)))
        return self.transform(x) @ self.word.weight.t() + self.bias


def bert_base(context=128):
    # BERT's optimizer: AdamW 1e-4, eps 1e-6, wd 0.01, clip 1 (no warm-up: same work)
    net = BERT()
    opt = Clipped(adamw(net, 1e-4, (0.9, 0.999), 1e-6, 0.01), net.parameters(), 1.0)

    def data(b):
        ids = torch.randint(0, 30522, (b, context))
        labels = torch.full((b, context), -100)
        scored = torch.rand(b, context) < 0.15
        labels[scored] = ids[scored]
        ids = torch.where(scored & (torch.rand(b, context) < 0.8), torch.full_like(ids, 30521), ids)
        return ids, labels

    return net, opt, lm_loss(30522), data


MODELS = {"p1b1": (p1b1, 60), "alexnet-owt": (alexnet_owt, 128), "basic-lstm": (basic_lstm, 128),
          "vgg11": (vgg11, 64), "googlenet": (googlenet, 128), "resnet50": (resnet50, 32), "p3b1": (p3b1, 10),
          "gpt2": (gpt2, 4), "bert-base": (bert_base, 32)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--context", type=int, default=0, help="a language model's sequence length (0: its own)")
    a = ap.parse_args()
    build, default_batch = MODELS[a.model]
    batch = a.batch or default_batch
    if a.threads:
        torch.set_num_threads(a.threads)
    # dlperf flushes denormals to zero (ops_flush_denormals); so does the peer, or a step can
    # be timed on the x86 denormal slow path (GPT-2's second step here: 32 s instead of 7 s)
    torch.set_flush_denormal(True)
    torch.manual_seed(2017)
    net, opt, loss_fn, data = build(a.context) if a.context else build()
    # A few batches cycled through, like dlperf's synthetic data set.
    batches = [data(batch) for _ in range(min(a.warmup + a.steps, 8))]
    times, losses = [], []
    for s in range(a.warmup + a.steps):
        x, t = batches[s % len(batches)]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), t)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        losses.append(loss.item())
        if s >= a.warmup:
            times.append(dt)
    json.dump({"model": a.model, "batch": batch, "threads": torch.get_num_threads(),
               "torch": torch.__version__, "step_s": times, "median_s": statistics.median(times),
               "loss_first": losses[0], "loss_last": losses[-1]}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
