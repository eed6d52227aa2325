#!/usr/bin/python3
"""bench/pytorch_compare.py — dlperf's training step against PyTorch's, same model, batch,
threads and precision (fp32, CPU), measured alternately in one run so that both see the
same machine state. Prints per model the median step time of each and the ratio
dlperf/PyTorch (median over rounds of the per-round ratio, with its range).

    bench/pytorch_compare.py [--models a,b] [--rounds R] [--steps S] [--warmup W]
                             [--threads T] [--batch N] [--db FILE]
Ratio < 1 means dlperf trains faster.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DLPERF = os.path.join(HERE, "..", "build", "dlperf")
TORCH = os.path.join(HERE, "torch_models.py")


# Batches reduced from the models' defaults to keep one step of the big ImageNet models
# to a few seconds on a 2-core machine (default batch in parentheses).
REDUCED = {"vgg11": 16, "googlenet": 32, "resnet50": 16}  # (64, 128, 32)
DEFAULT_BATCH = {"vgg11": 64, "googlenet": 128, "resnet50": 32}
# Models whose step takes milliseconds get more timed steps per round (a median of a few
# 10 ms steps is mostly noise on a shared machine).
MIN_STEPS = {"p3b1": 100}
# Language models at a short context (their own in parentheses): the same model, its step a
# few seconds on 2 cores. dlperf runs the model file with the input's steps changed.
CONTEXT = {"gpt2": 256, "bert-base": 128}  # (1024, 128)
REDUCED.update({"gpt2": 4, "bert-base": 8})
DEFAULT_BATCH.update({"gpt2": 4, "bert-base": 32})


def model_at_context(model, context, dirname):
    """A model file of the zoo model with its input sequence cut to `context` steps."""
    text = subprocess.run([DLPERF, "models", "--export", model], check=True, stdout=subprocess.PIPE,
                          text=True).stdout
    m = json.loads(text)
    m["input"]["shape"][0] = context
    path = os.path.join(dirname, f"{model}-{context}.json")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="alexnet-owt,vgg11,googlenet,resnet50,basic-lstm,p1b1,p3b1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=0,
                    help="0: each model's default batch, except the reduced ones in REDUCED")
    ap.add_argument("--db", default=os.path.join(tempfile.gettempdir(), "dlperf-bench.db"))
    a = ap.parse_args()
    rows = []
    tmp = tempfile.mkdtemp(prefix="dlperf-bench-")
    for model in a.models.split(","):
        ratios, ours, theirs = [], [], []
        batch = a.batch or REDUCED.get(model, 0)
        steps = max(a.steps, MIN_STEPS.get(model, 0))
        target = [model]
        context = []
        if model in CONTEXT:
            target = ["--model-file", model_at_context(model, CONTEXT[model], tmp)]
            context = ["--context", str(CONTEXT[model])]
        for r in range(a.rounds):
            common = ["--steps", str(steps), "--warmup", str(a.warmup), "--threads", str(a.threads)]
            if batch:
                common += ["--batch", str(batch)]
            d = run_json([DLPERF, "run"] + target + ["--json", "--db", a.db] + common)
            # PyTorch gets the OpenBLAS kernels dlperf chose (same BLAS, same kernels),
            # unless the user set OPENBLAS_CORETYPE for both
            env = dict(os.environ)
            env.setdefault("OPENBLAS_CORETYPE", d["blas_core"])
            t = run_json([sys.executable, TORCH, model] + common + context, env)
            batch = d["batch"]
            ours.append(d["median_s"])
            theirs.append(t["median_s"])
            ratios.append(d["median_s"] / t["median_s"])
            print(f"# {model} round {r + 1}: dlperf {d['median_s']:.4f} s, PyTorch {t['median_s']:.4f} s, "
                  f"ratio {ratios[-1]:.3f}", file=sys.stderr)
        rows.append((model, batch, steps, statistics.median(ours), statistics.median(theirs),
                     statistics.median(ratios), min(ratios), max(ratios)))
    print(f"# dlperf vs PyTorch {t['torch']} (CPU, fp32), {a.threads} threads, OpenBLAS {d['blas_core']} for "
          f"both, {a.rounds} alternating rounds of {a.warmup} warm-up + S timed steps")
    print(f"{'model':<12} {'batch':>5} {'S':>4} {'dlperf s/step':>14} {'PyTorch s/step':>15} {'ratio':>7}  range")
    if any(m in CONTEXT for m, *_ in rows):
        print("# language models at a short context: " +
              ", ".join(f"{m} {CONTEXT[m]} tokens" for m, *_ in rows if m in CONTEXT))
    for m, b, st, o, t, r, lo, hi in rows:
        print(f"{m:<12} {b:>5} {st:>4} {o:>14.4f} {t:>15.4f} {r:>7.3f}  {lo:.3f}..{hi:.3f}")
    reduced = [f"{m} {DEFAULT_BATCH[m]} -> {b}" for m, b, *_ in rows if m in DEFAULT_BATCH and b != DEFAULT_BATCH[m]]
    if reduced:
        print("# batch reduced from the model's default to keep the run short: " + ", ".join(reduced))
    print("# ratio = dlperf / PyTorch step time (median over rounds of the per-round ratio); < 1: dlperf faster")


if __name__ == "__main__":
    main()
