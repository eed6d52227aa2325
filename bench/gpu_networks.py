#!/usr/bin/env python3
"""bench/gpu_networks.py — whole networks on GPUs: dlperf's predictions against published times.

Two sets, each predicted with `dlperf predict MODEL --device NAME --mode fwd-bwd --no-host`
(forward and backward without the update, no eager framework's host floor: Torch7 and
TensorFlow's graphs issue their kernels from C):
  cnn-benchmarks (jcjohnson/cnn-benchmarks, Torch7 + cuDNN 5, batch 16, 224x224): AlexNet,
      GoogLeNet-v1, VGG-16/19, ResNet-50/101/152 on Maxwell Titan X, Pascal Titan X, GTX 1080
      and 1080 Ti, predicted with that device's DeepBench evidence and without it
      (--without-own: the other GPUs' evidence alone);
  cnn-benchmarks' Tesla K40c rows of its first README (five networks, batch 16), a Kepler board with
      no kernel evidence of its own;
  seed 000's Titan references (the suite's K20X times for its convnets, forward-backward per
      batch, and the LSTM per sample), a device with no evidence of its own.
The database must hold the GPU evidence (bench/gpu_loo.py --deepbench ... imports DeepBench;
--db points at it). The zoo's architectures are the suite's: where they differ from the
published network it is said beside the row.

    bench/gpu_networks.py --cnn ../shared/gpu_data/cnn-benchmarks --db loo.db [--profiles]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

# cnn-benchmarks model -> (zoo model, note)
CNN_MODELS = {
    "alexnet": ("alexnet-owt", "convnet-benchmarks' AlexNet-OWT at 227x227, its output ReLU removed (--no-quirk)"),
    "googlenet-v1": ("googlenet", "convnet-benchmarks' GoogLeNet, output ReLU removed"),
    "vgg16": ("vgg16", ""),
    "vgg19": ("vgg19", ""),
    "resnet-50": ("resnet50", "Keras' ResNet-50 (fb.resnet.torch's: the same layers)"),
    "resnet-101": ("resnet101", ""),
    "resnet-152": ("resnet152", ""),
}
NO_QUIRK = {"alexnet-owt", "googlenet"}
# cnn-benchmarks' gpu_name -> sheet
CNN_GPUS = {"GeForce GTX TITAN X": "titan-x-maxwell", "TITAN X": "titan-x-pascal", "GeForce GTX 1080": "gtx-1080",
            "GeForce GTX 1080 Ti": "gtx-1080-ti"}
# seed 000's Titan references: model, batch, seconds (forward-backward per batch; LSTM per sample)
TITAN = [("alexnet-owt", 128, 0.2116), ("googlenet", 128, 1.1633), ("overfeat", 128, 0.6434), ("vgg11", 64, 1.6375),
         ("lstm", 128, 0.001411)]
# cnn-benchmarks' Tesla K40c rows (forward + backward, batch 16, Torch7 + cuDNN 5.0.05, CUDA 8.0 RC), from
# its README as first published (github.com/jcjohnson/cnn-benchmarks, README.md; later versions dropped
# the K40c, and ../shared/gpu_data holds the later outputs only): the second Kepler set, kernel libraries
# without TensorFlow. Seconds. The K40c is the K40 board with a fan: the k40 sheet.
K40C = [("vgg16", 0.92021, ""), ("vgg19", 1.12965, ""),
        ("resnet50", 0.44990, "Keras' ResNet-50 (fb.resnet.torch's: the same layers)"), ("resnet101", 0.79789, ""),
        ("resnet152", 1.14673, "")]


def predict(dlperf, db, model, device, batch, without_own, profiles=False):
    cmd = [dlperf, "predict", model, "--device", device, "--batch", str(batch), "--mode", "fwd-bwd", "--no-host",
           "--db", db, "--json"] + ([] if profiles else ["--no-profiles"])
    if model in NO_QUIRK:
        cmd.append("--no-quirk")
    if without_own:
        cmd.append("--without-own")
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr.strip()))
    return json.loads(r.stdout)["compute_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cnn", help="cnn-benchmarks' folder (cnn_benchmarks_jcjohnson.csv)")
    ap.add_argument("--db", required=True, help="a database holding the GPU evidence")
    ap.add_argument("--profiles", action="store_true",
                    help="price from the built-in profiles too (what a fresh clone has; --db may be empty)")
    ap.add_argument("--dlperf", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                     "dlperf"))
    a = ap.parse_args()
    if a.cnn:
        best = {}  # (gpu, model) -> the row with the newest cuDNN
        for r in csv.DictReader(open(os.path.join(a.cnn, "cnn_benchmarks_jcjohnson.csv"))):
            if r["cudnn_version"] == "none" or r["gpu_name"] not in CNN_GPUS or r["model"] not in CNN_MODELS:
                continue
            k = (r["gpu_name"], r["model"])
            if k not in best or int(r["cudnn_version"]) > int(best[k]["cudnn_version"]):
                best[k] = r
        print("\ncnn-benchmarks: forward + backward, batch 16 (Torch7, the newest cuDNN per GPU)")
        print("%-16s %-14s %10s %12s %8s %12s %8s  %s" % ("# gpu", "model", "measured", "with own", "error",
                                                       "without", "error", "note"))
        errs = {True: [], False: []}
        for (gpu, model), r in sorted(best.items()):
            zoo, note = CNN_MODELS[model]
            t = float(r["total_ms_mean"]) * 1e-3
            w = predict(a.dlperf, a.db, zoo, CNN_GPUS[gpu], 16, False, a.profiles)
            wo = predict(a.dlperf, a.db, zoo, CNN_GPUS[gpu], 16, True, a.profiles)
            errs[True].append(abs(w / t - 1))
            errs[False].append(abs(wo / t - 1))
            print("%-16s %-14s %8.1f ms %9.1f ms %+7.1f%% %9.1f ms %+7.1f%%  %s" % (
                CNN_GPUS[gpu], model, t * 1e3, w * 1e3, 100 * (w / t - 1), wo * 1e3, 100 * (wo / t - 1), note))
        for own in (True, False):
            v = errs[own]
            if v:
                print("  %s the device's evidence: median |error| %.1f%%, max %.1f%% over %d networks" % (
                    "with" if own else "without", 100 * statistics.median(v), 100 * max(v), len(v)))
    print("\ncnn-benchmarks' Tesla K40c (README as first published; no kernel evidence of its own: CDE's K40 rows "
          "are TensorFlow calls)")
    print("%-12s %10s %10s %8s  %s" % ("# model", "measured", "predicted", "error", "note"))
    v = []
    for model, t, note in K40C:
        p = predict(a.dlperf, a.db, model, "k40", 16, False, a.profiles)
        v.append(abs(p / t - 1))
        print("%-12s %7.1f ms %7.1f ms %+7.1f%%  %s" % (model, t * 1e3, p * 1e3, 100 * (p / t - 1), note))
    print("  median |error| %.1f%%, max %.1f%%" % (100 * statistics.median(v), 100 * max(v)))
    print("\nseed 000's Titan references on the K20X (no evidence of its own; forward-backward)")
    print("%-12s %6s %12s %12s %8s" % ("# model", "batch", "measured", "predicted", "error"))
    v = []
    for model, batch, t in TITAN:
        p = predict(a.dlperf, a.db, model, "k20x", batch, False, a.profiles)
        if model == "lstm":
            p /= batch  # per sample
        v.append(abs(p / t - 1))
        unit = "s/sample" if model == "lstm" else "s/batch"
        print("%-12s %6d %9.4g %s %9.4g %+7.1f%%" % (model, batch, t, unit, p, 100 * (p / t - 1)))
    print("  median |error| %.1f%%, max %.1f%%" % (100 * statistics.median(v), 100 * max(v)))


if __name__ == "__main__":
    main()
