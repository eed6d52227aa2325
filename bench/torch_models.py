#!/usr/bin/python3
"""bench/torch_models.py — the peer: the same models trained in PyTorch (CPU, fp32).

Same architectures, batch, loss and optimizer as dlperf's zoo (models/zoo.c), synthetic
data resident in memory as in dlperf (no input pipeline in the timed loop). Prints one
JSON object: per-step times of the timed steps and their median.

    bench/torch_models.py MODEL --batch N --threads T --steps S --warmup W
"""
import argparse
import json
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


MODELS = {"p1b1": (p1b1, 60), "alexnet-owt": (alexnet_owt, 128), "basic-lstm": (basic_lstm, 128)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    build, default_batch = MODELS[a.model]
    batch = a.batch or default_batch
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(2017)
    net, opt, loss_fn, data = build()
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
