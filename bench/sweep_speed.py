#!/usr/bin/python3
"""bench/sweep_speed.py — how many scaling configurations `dlperf sweep` evaluates per second.

Calibrates this machine quickly into a scratch database (the efficiency source every
what-if prediction needs), then times `dlperf sweep` (its own evaluation timer, reported in
the JSON, and the whole command's wall time) for
  * weak scaling: every node count 1..4096, all five allreduce algorithms (20,480
    configurations, one device step priced),
  * strong scaling: a global batch split over 1, 2, 4, ..., 4096 nodes (a plan priced per
    per-device batch), and over every count 1..4096 with all algorithms (the powers-of-two
    batches priced, the others interpolated).
Target: >= 10,000 configurations per second. Medians over --rounds.

    bench/sweep_speed.py [--system dgx-a100] [--model resnet50] [--rounds 5] [--db FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DLPERF = os.path.join(HERE, "..", "build", "dlperf")


def run(*args):
    return subprocess.run([DLPERF, *args], check=True, stdout=subprocess.PIPE, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--system", default="dgx-a100")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--db", help="a calibrated database (default: a scratch one, calibrated --quick)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db or os.path.join(tmp, "bench.db")
        if not a.db:
            print("calibrating (quick) into a scratch database...", flush=True)
            run("calibrate", "--quick", "--db", db)
        cases = [
            ("weak, nodes 1-4096, all algorithms",
             ["--nodes", "1-4096", "--allreduce", "all", "--precision", "fp16"]),
            ("strong, global batch 65536, nodes 1,2,...,4096",
             ["--nodes", "1,2,4,...,4096", "--global-batch", "65536", "--precision", "fp16"]),
            ("strong, global batch 65536, nodes 1-4096, all algorithms",
             ["--nodes", "1-4096", "--global-batch", "65536", "--allreduce", "all", "--precision", "fp16"]),
        ]
        print(f"\n{a.model} on {a.system}, {a.rounds} rounds (medians)")
        print(f"{'case':48} {'configs':>8} {'eval s':>9} {'configs/s':>12} {'wall s':>8}")
        for name, extra in cases:
            evals, walls, n = [], [], 0
            for _ in range(a.rounds):
                t0 = time.perf_counter()
                out = json.loads(run("sweep", a.model, "--system", a.system, "--json", "--db", db, *extra))
                walls.append(time.perf_counter() - t0)
                evals.append(out["evaluation_s"])
                n = out["configurations"]
            e = statistics.median(evals)
            print(f"{name:48} {n:8d} {e:9.4f} {n / e:12.0f} {statistics.median(walls):8.3f}")


if __name__ == "__main__":
    main()
