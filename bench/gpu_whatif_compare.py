#!/usr/bin/python3
"""bench/gpu_whatif_compare.py — dlperf's spec-sheet predictions for a GPU against what
bench/gpu_whatif.py measured on one.

Two steps, so that the predictions exist before the measurement:

    bench/gpu_whatif_compare.py predict --db FILE --out predictions.json
        [--systems dgx-h100,dgx-h200] [--models ...] [--precisions ...] [--scales 1,4]
    bench/gpu_whatif_compare.py compare predictions.json measured.json [--system S] [--csv]

`predict` runs `dlperf predict MODEL --system S --batch B --precision P --json` for every
configuration gpu_whatif.py measures, on each system's device; `compare` picks the system
whose device the measurement names (H100 -> dgx-h100, H200 -> dgx-h200) and prints per
configuration the predicted per-device iteration (compute only: one GPU, no allreduce),
its band, the device's roofline, the measured median and the error
(predicted - measured) / measured; then the measured limits against the spec sheet's.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DLPERF = os.path.join(HERE, "..", "build", "dlperf")

DEFAULT_BATCH = {"p1b1": 60, "alexnet-owt": 128, "basic-lstm": 128, "vgg11": 64, "googlenet": 128,
                 "resnet50": 32, "p3b1": 10}  # bench/torch_models.py's MODELS, copied: importing it needs torch, predict does not
DEVICE_SYSTEM = (("H200", "dgx-h200"), ("H100", "dgx-h100"))


def run_json(cmd):
    return json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout)


def predict(a):
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "db": os.path.abspath(a.db),
           "commit": subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                                    text=True).stdout.strip(),
           "systems": {}, "predictions": []}
    for s in a.systems.split(","):
        sheet = run_json([DLPERF, "systems", "show", s, "--db", a.db, "--json"])
        sheet["device_sheet"] = run_json([DLPERF, "systems", "show", sheet["device"], "--db", a.db, "--json"])
        out["systems"][s] = sheet
        for m in a.models.split(","):
            for k in a.scales.split(","):
                batch = DEFAULT_BATCH[m] * int(k)
                for p in a.precisions.split(","):
                    r = run_json([DLPERF, "predict", m, "--system", s, "--batch", str(batch), "--precision", p,
                                  "--db", a.db, "--json"] + (["--no-profiles"] if a.no_profiles else []))
                    out["predictions"].append(r)
                    print("%s %-12s %4d %-4s %9.3f ms" % (s, m, batch, p, r["compute_s"] * 1e3), file=sys.stderr)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def system_for(device_name):
    for key, system in DEVICE_SYSTEM:
        if key in device_name:
            return system
    sys.exit("gpu_whatif_compare: measured.json: device '%s' is none of %s" %
             (device_name, ", ".join(k for k, _ in DEVICE_SYSTEM)))


def compare(a):
    pred = json.load(open(a.predictions))
    meas = json.load(open(a.measured))
    system = a.system or system_for(meas["device"])
    if system not in pred["systems"]:
        sys.exit("gpu_whatif_compare: %s: no predictions for %s (predict with --systems %s)" %
                 (a.predictions, system, system))
    by_key = {(p["model"], p["batch_per_device"], p["precision"]): p for p in pred["predictions"]
              if p["system"] == system}
    rows = []
    for r in meas["runs"]:
        p = by_key.get((r["model"], r["batch"], r["precision"]))
        if p is None:
            continue
        err = (p["compute_s"] - r["median_s"]) / r["median_s"]
        rows.append((r["model"], r["batch"], r["precision"], p["compute_s"], p["compute_lo_s"], p["compute_hi_s"],
                     p["device_roofline_s"], r["median_s"], err, r.get("kernels_per_step")))
    if a.csv:
        print("model,batch,precision,predicted_s,band_lo_s,band_hi_s,roofline_s,measured_s,error,kernels_per_step")
        for row in rows:
            print(",".join(str(v) for v in row))
        return
    print("# %s (%s, torch %s, CUDA %s, cuDNN %s, %s); predictions: dlperf %s, calibration %s of %s, %s" %
          (meas["device"], system, meas["torch"], meas["cuda"], meas["cudnn"], meas["date"], pred["commit"],
           pred["predictions"][0]["calibration_id"], pred["db"], pred["date"]))
    print("# per device, one training step (compute only); error = (predicted - measured) / measured")
    print("%-12s %5s %-4s %11s %23s %11s %11s %8s %8s" % ("model", "batch", "prec", "pred_ms", "band_ms",
          "roofline_ms", "meas_ms", "error", "kernels"))
    for m, b, p, ps, lo, hi, roof, ms, err, k in rows:
        print("%-12s %5d %-4s %11.3f %11.3f..%-11.3f %11.3f %11.3f %+7.1f%% %8s" %
              (m, b, p, ps * 1e3, lo * 1e3, hi * 1e3, roof * 1e3, ms * 1e3, 100 * err, "-" if k is None else k))
    for p in sorted({row[2] for row in rows}):
        e = [abs(row[8]) for row in rows if row[2] == p]
        inside = sum(1 for row in rows if row[2] == p and row[4] <= row[7] <= row[5])
        print("# %s: median |error| %.1f%%, max %.1f%%, %d of %d measured inside the band" %
              (p, 100 * statistics.median(e), 100 * max(e), inside, len(e)))
    dev = pred["systems"][system]["device_sheet"]
    lim = meas["limits"]
    print("# measured limits: GEMM 8192^3 %s TFLOP/s; device copy %.0f GB/s; one eager op %.1f us" %
          (", ".join("%s %.1f" % (k[5:9], v) for k, v in lim.items() if k.startswith("gemm_")),
           lim["copy_gbs"], lim["eager_op_us"]))
    print("# spec sheet (%s): %s TFLOP/s; %s GB/s; launch %s us; host %s / %s us per op (conv/BN), %s us per step" %
          (dev["name"], ", ".join("%s %s" % kv for kv in dev["peak_tflops"].items()), dev["memory_gbs"],
           dev.get("launch_overhead_us", "5 (default)"), dev.get("host_op_us", "13.4 (default)"),
           dev.get("host_conv_op_us", "43.7 (default)"), dev.get("host_step_us", "772 (default)")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("predict")
    pp.add_argument("--db", required=True)
    pp.add_argument("--out", required=True)
    pp.add_argument("--systems", default="dgx-h100,dgx-h200")
    pp.add_argument("--models", default="p3b1,basic-lstm,p1b1,alexnet-owt,resnet50,googlenet,vgg11")
    pp.add_argument("--precisions", default="fp32,tf32,bf16")
    pp.add_argument("--scales", default="1,4")
    pp.add_argument("--no-profiles", action="store_true",
                    help="GPU evidence from --db only, not dlperf's built-in profiles")
    cp = sub.add_parser("compare")
    cp.add_argument("predictions")
    cp.add_argument("measured")
    cp.add_argument("--csv", action="store_true")
    cp.add_argument("--system", default="", help="the predictions' system to compare (default: by the device's name)")
    a = ap.parse_args()
    predict(a) if a.cmd == "predict" else compare(a)


if __name__ == "__main__":
    main()
