#!/usr/bin/env python3
"""bench/gpu_framework_check.py — what the framework adds to a GPU step, priced by dlperf
against the kernels a profiler listed for the same step.

dlperf prices the work PyTorch adds around a step's kernels (predictor/framework.h): its
optimizer's unfused passes, the autocast casts of mixed precision, the NCHW<->NHWC
conversions around tensor-core convolutions. The H200 check (docs/gpu-check) profiled 8
steps kernel by kernel (`run2-profiles-h200-*.json`: each kernel's name, calls and CUDA
time). This script sums the profile's kernels of each kind and sets them beside dlperf's
price of the same work (`predict MODEL --system SYSTEM --precision P --batch B --json`,
its "framework" object):

    layout      kernels named nchwToNhwc / nhwcToNchw
    casts       (bf16) bfloat16_copy_kernel and direct_copy_kernel (the weights to bf16,
                their gradients back to fp32)
    optimizer   multi_tensor_apply kernels: torch.optim's foreach passes (RMSprop's five on
                p1b1, SGD's add and its weight decay on the convnets)

    bench/gpu_framework_check.py --profiles docs/gpu-check/run2-profiles-h200-2026-11-27.json \\
        [--dlperf build/dlperf] [--db DB] [--system dgx-h200] [--json OUT]

A precision without GPU evidence of its GEMMs (tf32, bf16) needs a calibration of this
machine in DB for the step's other ops (dlperf calibrate --quick); the framework's work is
priced from the fp32 evidence either way.
"""
import argparse
import json
import re
import subprocess
import sys

LAYOUT = re.compile(r"nchwToNhwc|nhwcToNchw")
CAST = re.compile(r"bfloat16_copy_kernel|direct_copy_kernel")
FOREACH = re.compile(r"multi_tensor_apply_kernel")


def dlperf_json(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "exit %d" % r.returncode
    return json.loads(r.stdout), None


def classify(profile, precision):
    sums = {"layout": 0.0, "casts": 0.0, "optimizer": 0.0}
    kernels = {"layout": 0, "casts": 0, "optimizer": 0}
    for name, calls, secs in profile["top"]:
        kind = None
        if LAYOUT.search(name):
            kind = "layout"
        elif precision == "bf16" and CAST.search(name):
            kind = "casts"
        elif FOREACH.search(name):
            kind = "optimizer"
        if kind:
            sums[kind] += secs
            kernels[kind] += calls
    return sums, kernels


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profiles", required=True, help="a gpu_whatif.py --profile output (run2-profiles-*.json)")
    ap.add_argument("--dlperf", default="build/dlperf")
    ap.add_argument("--db", default="/tmp/dlperf-framework-check.db")
    ap.add_argument("--system", default="dgx-h200")
    ap.add_argument("--json", help="write the rows here as JSON")
    args = ap.parse_args()
    with open(args.profiles) as f:
        data = json.load(f)
    rows = []
    print("# %s (%s, torch %s); dlperf %s on %s" % (data.get("device"), data.get("date"), data.get("torch"),
                                                    args.dlperf, args.system))
    print("%-12s %5s %-5s %-10s %10s %10s %8s  %s" % ("model", "batch", "prec", "work", "profiled", "dlperf",
                                                      "error", "kernels"))
    for p in data["profiles"]:
        model, batch, prec = p["model"], p["batch"], p["precision"]
        sums, kernels = classify(p["profile"], prec)
        j, err = dlperf_json([args.dlperf, "predict", model, "--system", args.system, "--precision", prec,
                              "--batch", str(batch), "--json", "--db", args.db])
        fw = j.get("framework", {}) if j else {}
        priced = {"layout": fw.get("layout_conversions_s"), "casts": fw.get("autocast_casts_s"),
                  "optimizer": fw.get("optimizer_passes_s")}
        for work in ("optimizer", "casts", "layout"):
            m, q = sums[work], priced[work]
            if m == 0 and (q is None or q == 0):
                continue
            e = (q - m) / m if q is not None and m > 0 else None
            print("%-12s %5d %-5s %-10s %8.3f ms %s %8s  %d%s" % (
                model, batch, prec, work, m * 1e3, "%8.3f ms" % (q * 1e3) if q is not None else "%10s" % "-",
                "%+.1f%%" % (100 * e) if e is not None else "-", kernels[work],
                "" if j else "  (dlperf: %s)" % err))
            rows.append({"model": model, "batch": batch, "precision": prec, "work": work, "profiled_s": m,
                         "dlperf_s": q, "error": e, "kernels": kernels[work], "dlperf_error": err})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
