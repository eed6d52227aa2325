#!/usr/bin/env python3
"""bench/transformer_parallel.py — dlperf's Megatron-style parallel prediction against the
published iteration times of Korthikanti et al. 2022 (Table 5: GPT 22B, 175B, 530B and 1T
on DGX A100 nodes, full recomputation against sequence parallel with selective
recomputation), and the search's fastest configuration at each of those sizes.

Prints a markdown table (docs/accuracy.md, "Large transformers on thousands of GPUs").
Needs only the built binary: the A100 is priced from the built-in GPU profiles; a fresh
database is used so nothing imported changes the result.

    bench/transformer_parallel.py [--dlperf build/dlperf]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# Korthikanti et al. 2022 (arXiv:2205.05198): Table 3's configurations (sequence 2048,
# vocabulary 51200; 175B and 530B on the interleaved schedule, 3 chunks) and Table 5's
# iteration times (s): full recomputation, and sequence parallel + selective recomputation;
# and section 6's 530B on 2240 GPUs (8-way data parallel): 39.15 s.
RUNS = [
    # model file, nodes, global batch, micro-batch, tp, pp, interleave, paper full, paper present work
    ("megatron-22b", 1, 4, 4, 8, 1, 1, 1.42, 1.10),
    ("gpt3-175b", 8, 64, 1, 8, 8, 3, 18.13, 13.75),
    ("megatron-530b", 35, 280, 1, 8, 35, 3, 49.05, 37.83),
    ("megatron-1t", 64, 512, 1, 8, 64, 1, 94.42, 71.49),
]
DP8 = ("megatron-530b", 280, 2240, 1, 8, 35, 3, None, 39.15)


def dlperf(exe, db, *args):
    out = subprocess.run([exe, *args, "--db", db], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def gib(b):
    return f"{b / 2**30:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlperf", default="build/dlperf")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        files = {}
        for name in {r[0] for r in RUNS}:
            files[name] = os.path.join(tmp, name + ".json")
            subprocess.run([a.dlperf, "models", "--from-hf", f"docs/examples/hf-configs/{name}.json", "--output",
                            files[name]], check=True, capture_output=True)
        common = ["--system", "dgx-a100", "--precision", "fp16", "--json"]
        rows, errs = [], []
        for run in RUNS + [DP8]:
            name, nodes, batch, micro, tp, pp, v, full, present = run
            base = ["predict", "--model-file", files[name], *common, "--nodes", str(nodes), "--batch", str(batch),
                    "--micro-batch", str(micro), "--tp", str(tp), "--pp", str(pp), "--interleave", str(v)]
            cases = []
            if full is not None:
                cases.append(("full", full, ["--recompute", "full"]))
            cases.append(("sp + selective", present,
                          ["--sp", "--recompute", "selective"] + (["--zero1"] if nodes * 8 > tp * pp else [])))
            for label, paper, extra in cases:
                j = dlperf(a.dlperf, db, *base, *extra)
                err = j["iteration_s"] / paper - 1
                errs.append(abs(err))
                m = j["memory_per_gpu_bytes"]
                rows.append(f"| {name} | {nodes * 8} | {tp} x {pp} x {j['dp']}, v {v}, b {micro} | {label} | "
                            f"{paper:.2f} | {j['iteration_s']:.2f} | {100 * err:+.1f}% | {100 * j['mfu']:.1f}% | "
                            f"{gib(m['total'])} ({gib(m['activations'])}) |")
        print("| model | GPUs | t x p x d, chunks, micro-batch | recomputation | paper (s) | dlperf (s) | error | "
              "MFU (dlperf) | memory / GPU GiB (activations) |")
        print("|---|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
        print(f"\nmedian |error| {100 * statistics.median(errs):.1f}%, max {100 * max(errs):.1f}% over {len(errs)} "
              "iterations\n")
        print("| model | GPUs | global batch | the search's fastest that fits | iteration (s) | MFU | memory / GPU GiB | "
              "tried (fit) |")
        print("|---|---|---|---|---|---|---|---|")
        for name, nodes, batch, *_ in RUNS:
            j = dlperf(a.dlperf, db, "predict", "--model-file", files[name], *common, "--nodes", str(nodes),
                       "--batch", str(batch), "--search")
            cfg = (f"{j['tp']} x {j['pp']} x {j['dp']}, v {j['interleave']}, b {j['micro_batch']}, "
                   f"{'sp, ' if j['sequence_parallel'] else ''}{j['recompute']}"
                   f"{', zero1' if j['distributed_optimizer'] else ''}")
            print(f"| {name} | {nodes * 8} | {batch} | {cfg} | {j['iteration_s']:.2f} | {100 * j['mfu']:.1f}% | "
                  f"{gib(j['memory_per_gpu_bytes']['total'])} | {j['configurations_tried']} "
                  f"({j['configurations_fitting']}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
