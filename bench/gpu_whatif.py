#!/usr/bin/python3
"""bench/gpu_whatif.py — the truth for a spec-sheet prediction: the zoo's PyTorch peers
(bench/torch_models.py, the same architectures, batches, losses and optimizers as dlperf's
zoo) trained on a real GPU, and the GPU's own limits measured beside them.

dlperf has no GPU kernels; for a GPU it prices each op from a spec sheet (systems/devices/)
by transferring this CPU's calibrated efficiency to the device's roofline. This script is
the measurement that prediction is checked against (bench/gpu_whatif_compare.py makes the
table). It needs PyTorch with CUDA, nothing of dlperf.

Per model, precision and batch: the median time of one training step (forward, loss,
backward, optimizer step) over timed steps after warm-ups, each step bracketed by
torch.cuda.synchronize(); cuDNN autotuning on (as convnet-benchmarks ran it), so the
warm-ups include the autotuner. Precisions as people run them: fp32 = TF32 off in cuBLAS and
cuDNN (PyTorch's default leaves it on for convolutions); tf32 = on in both; bf16 = autocast
(bf16 GEMMs and convolutions, fp32 weights and optimizer). Limits: a large GEMM in each
precision, a device-to-device copy (bytes read + written), and the host's cost of one eager
op (a one-element in-place add issued back to back: the floor under each op of a small
model). --count-kernels counts the kernels one step launches with torch.profiler; off by
default, and never in a run whose times are used: once the profiler has run in a process,
every later launch is slower (on an H200 host, p3b1's step 1.27 -> 1.7 ms; --profiler-effect
measures it: a chain timed, profiled once, timed again).

The host's cost per op of a training step: chains of tiny layers whose device work is
negligible (bench/gpu-chains/*.json gives each as a dlperf model file, so that dlperf counts
its ops), trained at two depths; the step's slope over depth is the host's time per layer
(--chains). Where the device time goes: torch.profiler's CUDA time per kernel name for one
step of chosen configurations (--profile MODEL:BATCH:PREC,...).

    bench/gpu_whatif.py [--models a,b] [--precisions fp32,tf32,bf16] [--scales 1,4]
                        [--chains] [--profile MODEL:BATCH:PREC,...]
                        [--budget-s 1.5] [--out FILE] [--device cuda|cpu]

Writes one JSON object (to --out, rewritten after every configuration so that a run cut
short keeps what it measured); progress on stderr. --device cpu only checks the script.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_models  # noqa: E402  (the peers' definitions)


def sync(dev):
    if dev == "cuda":
        torch.cuda.synchronize()


def set_precision(prec):
    tf32 = prec == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def timed(fn, dev, budget_s, min_reps, max_reps):
    """Median seconds of fn() over repetitions until budget_s or max_reps (at least min_reps)."""
    times, start = [], time.perf_counter()
    while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() - start < budget_s):
        sync(dev)
        t0 = time.perf_counter()
        fn()
        sync(dev)
        times.append(time.perf_counter() - t0)
    return times


def limits(dev, precisions, budget_s):
    out = {}
    n = 8192 if dev == "cuda" else 512
    for prec in precisions:
        set_precision(prec)
        dtype = torch.bfloat16 if prec == "bf16" else torch.float32
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        for _ in range(3):
            a @ b
        t = timed(lambda: a @ b, dev, budget_s, 5, 50)
        out["gemm_%s_tflops" % prec] = 2.0 * n ** 3 / statistics.median(t) / 1e12
        del a, b
    set_precision("fp32")
    words = (1 << 28) if dev == "cuda" else (1 << 22)
    src = torch.ones(words, device=dev)
    dst = torch.empty_like(src)
    dst.copy_(src)
    t = timed(lambda: dst.copy_(src), dev, budget_s, 5, 100)
    out["copy_gbs"] = 2.0 * 4 * words / statistics.median(t) / 1e9
    del src, dst
    x = torch.zeros(1, device=dev)
    ops = 20000
    for _ in range(1000):
        x.add_(1.0)

    def burst():
        for _ in range(ops):
            x.add_(1.0)
    t = timed(burst, dev, budget_s, 3, 10)
    out["eager_op_us"] = statistics.median(t) / ops * 1e6
    return out


def kernels_per_step(step, dev):
    """CUDA kernels one training step launches (None where the profiler cannot say)."""
    if dev != "cuda":
        return None
    try:
        return kernel_profile(step, dev, top=0)["kernels"]
    except Exception as e:  # the count is a diagnostic; the timing stands without it
        print("kernels_per_step: %s" % e, file=sys.stderr)
        return None


def mlp_chain(depth):
    """bench/gpu-chains/mlp-chain-DEPTH.json: DEPTH x (dense 16 + ReLU), dense 10, SGD."""
    import torch.nn as nn
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(16, 16), nn.ReLU()]
    net = nn.Sequential(*layers, nn.Linear(16, 10))

    def data(b):
        return torch.rand(b, 16), torch.randint(0, 10, (b,))
    return net, torch.optim.SGD(net.parameters(), lr=0.01), nn.CrossEntropyLoss(), data


def cnn_chain(depth):
    """bench/gpu-chains/cnn-chain-DEPTH.json: DEPTH x (conv 3x3 8, no bias + BN + ReLU) on
    8x8x8, global average pool, dense 10, SGD."""
    import torch.nn as nn
    layers = []
    for _ in range(depth):
        layers += [nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU()]
    net = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))

    def data(b):
        return torch.randn(b, 8, 8, 8), torch.randint(0, 10, (b,))
    return net, torch.optim.SGD(net.parameters(), lr=0.01), nn.CrossEntropyLoss(), data


CHAINS = {"mlp-chain": mlp_chain, "cnn-chain": cnn_chain}
CHAIN_DEPTHS = (8, 32)
CHAIN_BATCH = 16


def build_model(model):
    name, _, depth = model.rpartition("-")
    if name in CHAINS:
        return CHAINS[name](int(depth))
    return torch_models.MODELS[model][0]()


def kernel_profile(step, dev, top=80):
    """CUDA time per kernel name over one step, the largest first: [[name, calls, seconds]]."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        sync(dev)
    per = {}
    for e in prof.events():
        if not str(e.device_type).endswith("CUDA"):
            continue
        calls, us = per.get(e.name, (0, 0.0))
        per[e.name] = (calls + 1, us + e.time_range.elapsed_us())
    rows = sorted(([n, c, us * 1e-6] for n, (c, us) in per.items()), key=lambda r: -r[2])
    return {"kernels": sum(c for c, _ in per.values()), "cuda_s": sum(r[2] for r in rows), "top": rows[:top]}


def train(model, batch, prec, dev, budget_s, count_kernels, profile_kernels=False):
    set_precision(prec)
    torch.manual_seed(2017)
    net, opt, loss_fn, data = build_model(model)
    net.to(dev)
    # The optimizer was made over the CPU parameters; .to() moved them in place, so its
    # parameter list still refers to the same tensors, now on the device.
    batches = [tuple(t.to(dev) for t in data(batch)) for _ in range(4)]
    it = [0]

    def step():
        x, t = batches[it[0] % len(batches)]
        it[0] += 1
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=prec == "bf16"):
            loss = loss_fn(net(x), t)
        loss.backward()
        opt.step()
        return loss

    for _ in range(5):  # warm-ups: the cuDNN autotuner, the caching allocator
        loss = step()
    sync(dev)
    times = timed(step, dev, budget_s, 10, 200)
    loss = step()
    rec = {"model": model, "batch": batch, "precision": prec, "steps": len(times),
           "median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
           "loss_last": float(loss.item())}
    if count_kernels:
        rec["kernels_per_step"] = kernels_per_step(step, dev)
    if profile_kernels and dev == "cuda":
        try:
            rec["profile"] = kernel_profile(step, dev)
        except Exception as e:  # a diagnostic; the timing stands without it
            print("kernel_profile: %s" % e, file=sys.stderr)
    del net, opt, batches
    if dev == "cuda":
        torch.cuda.empty_cache()
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="p3b1,basic-lstm,p1b1,alexnet-owt,resnet50,googlenet,vgg11")
    ap.add_argument("--precisions", default="fp32,tf32,bf16")
    ap.add_argument("--scales", default="1,4", help="batches as multiples of each model's default")
    ap.add_argument("--chains", action="store_true", help="the host's cost per op (chains of tiny layers)")
    ap.add_argument("--count-kernels", action="store_true", help="kernels per step (slows later launches)")
    ap.add_argument("--profile", default="", help="MODEL:BATCH:PREC,... to profile per kernel, after the timings")
    ap.add_argument("--profiler-effect", action="store_true",
                    help="at the end: a chain timed before and after one profiled step")
    ap.add_argument("--budget-s", type=float, default=1.5, help="timed seconds per configuration")
    ap.add_argument("--out", default="-")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    a = ap.parse_args()
    dev = a.device
    if dev == "cuda" and not torch.cuda.is_available():
        sys.exit("gpu_whatif: --device cuda: PyTorch sees no CUDA device (use a GPU machine, or --device cpu to check the script)")
    precisions = a.precisions.split(",")
    for p in precisions:
        if p not in ("fp32", "tf32", "bf16"):
            sys.exit("gpu_whatif: --precisions: '%s' is not one of fp32, tf32, bf16" % p)
    models = [m for m in a.models.split(",") if m]
    for m in models:
        if m not in torch_models.MODELS:
            sys.exit("gpu_whatif: --models: '%s' is not one of %s" % (m, ", ".join(sorted(torch_models.MODELS))))
    scales = [int(s) for s in a.scales.split(",")]
    profiles = []
    for spec in [p for p in a.profile.split(",") if p]:
        parts = spec.split(":")
        if len(parts) != 3 or parts[0] not in torch_models.MODELS or not parts[1].isdigit() or \
                parts[2] not in ("fp32", "tf32", "bf16"):
            sys.exit("gpu_whatif: --profile: '%s' is not MODEL:BATCH:PREC (a zoo peer, a batch, fp32|tf32|bf16)" % spec)
        profiles.append((parts[0], int(parts[1]), parts[2]))
    torch.backends.cudnn.benchmark = True
    res = {"device": torch.cuda.get_device_name(0) if dev == "cuda" else platform.processor() or "cpu",
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version() if dev == "cuda" else None,
           "memory_gb": torch.cuda.get_device_properties(0).total_memory / 1e9 if dev == "cuda" else None,
           "host_cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "runs": []}

    def save():
        if a.out == "-":
            return
        with open(a.out + ".tmp", "w") as f:
            f.write(json.dumps(res, indent=1) + "\n")
        os.replace(a.out + ".tmp", a.out)

    res["limits"] = limits(dev, precisions, a.budget_s)
    print("limits: %s" % json.dumps(res["limits"]), file=sys.stderr)
    save()
    if a.chains:
        res["chains"] = []
        for name in CHAINS:
            for prec in ("fp32", "bf16"):
                for depth in CHAIN_DEPTHS:
                    rec = train("%s-%d" % (name, depth), CHAIN_BATCH, prec, dev, a.budget_s, a.count_kernels)
                    res["chains"].append(rec)
                    save()
                    print("%-14s batch %4d %-4s %9.3f ms  %s kernels" % (rec["model"], CHAIN_BATCH, prec,
                          rec["median_s"] * 1e3, rec.get("kernels_per_step", "-")), file=sys.stderr)
    for m in models:
        for scale in scales:
            batch = torch_models.MODELS[m][1] * scale
            for p in precisions:
                t0 = time.perf_counter()
                rec = train(m, batch, p, dev, a.budget_s, a.count_kernels and scale == scales[0] and p == precisions[0])
                res["runs"].append(rec)
                save()
                print("%-12s batch %4d %-4s %9.3f ms  (%d steps, %.0f s)" % (m, batch, p, rec["median_s"] * 1e3,
                      rec["steps"], time.perf_counter() - t0), file=sys.stderr)
    if profiles:  # after every timing: the profiler slows later launches
        res["profiles"] = []
        for m, b, p in profiles:
            rec = train(m, b, p, dev, a.budget_s, count_kernels=False, profile_kernels=True)
            res["profiles"].append(rec)
            save()
            print("profile %-12s batch %4d %-4s %9.3f ms, %s kernels, %.3f ms of CUDA time" % (m, b, p,
                  rec["median_s"] * 1e3, rec.get("profile", {}).get("kernels"),
                  rec.get("profile", {}).get("cuda_s", 0) * 1e3), file=sys.stderr)
    if a.profiler_effect:
        before = train("mlp-chain-8", CHAIN_BATCH, "fp32", dev, a.budget_s, count_kernels=False)
        counted = train("mlp-chain-8", CHAIN_BATCH, "fp32", dev, a.budget_s, count_kernels=True)
        after = train("mlp-chain-8", CHAIN_BATCH, "fp32", dev, a.budget_s, count_kernels=False)
        res["profiler_effect"] = {"model": "mlp-chain-8", "before_s": before["median_s"],
                                  "after_s": after["median_s"], "kernels_per_step": counted.get("kernels_per_step")}
        save()
        print("profiler effect: mlp-chain-8 %.3f ms before, %.3f ms after one profiled step" %
              (before["median_s"] * 1e3, after["median_s"] * 1e3), file=sys.stderr)
    if a.out == "-":
        json.dump(res, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
