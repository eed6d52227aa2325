#!/usr/bin/python3
"""bench/gpu_sheet.py — a dlperf device sheet from what bench/gpu_whatif.py measured on a GPU
that exists: its sustained limits in place of the vendor's peaks, and the host figures of the
framework that drove it.

    bench/gpu_sheet.py MEASURED.json --name NAME --year Y [--title T] [--memory-gb G] > NAME.json
    dlperf systems add NAME.json        # then a system of it: predict / sweep --system

From MEASURED.json (gpu_whatif.py with --chains): peak_tflops per precision = the 8192^3 GEMM's
rate (fp16 = bf16's: the same tensor cores), memory_gbs = the device-to-device copy's (bytes
read + written), and the host figures from the chains of tiny layers (bench/gpu-chains/): per
dlperf op of a dense layer (7 ops), of a conv+BN+ReLU block's convolution and batch-norm ops
(6 of its 8; its 2 ReLU ops at the dense rate), and the step's intercept (the dense chain's).
The launch overhead is left to the sheet's default: the host figures already hold the time to
issue each op. Every figure's source names the measurement.
"""
import argparse
import json
import sys

# dlperf's ops per layer of the chains (dlperf predict --model-file bench/gpu-chains/... --ops):
DENSE_OPS = 7        # GEMM fwd, bwd-data, bwd-weights; bias fwd, bwd; ReLU fwd, bwd
CONV_BLOCK_OPS = 6   # conv fwd, bwd-data, bwd-weights; batch norm: 3 ops (its ReLU: 2 more, dense rate)
CONV_BLOCK_RELU_OPS = 2


def chain_times(meas, name, prec="fp32"):
    t = {}
    for r in meas.get("chains", []):
        base, _, depth = r["model"].rpartition("-")
        if base == name and r["precision"] == prec:
            t[int(depth)] = r["median_s"]
    if len(t) < 2:
        sys.exit("gpu_sheet: %s: no %s chain at two depths (run bench/gpu_whatif.py --chains)" % (name, prec))
    (d0, t0), (d1, t1) = sorted(t.items())[:2]
    return d0, t0, (t1 - t0) / (d1 - d0)


def host_figures(meas):
    d0, t0, dense_layer_s = chain_times(meas, "mlp-chain")
    op_s = dense_layer_s / DENSE_OPS
    _, _, conv_block_s = chain_times(meas, "cnn-chain")
    conv_op_s = (conv_block_s - CONV_BLOCK_RELU_OPS * op_s) / CONV_BLOCK_OPS
    # the dense chain of depth d has 7d + 7 dlperf ops (its first layer has no backward-data
    # GEMM; the output layer 5, the loss 2, the update 1): 63 at depth 8
    step_s = t0 - (d0 * DENSE_OPS + 7) * op_s
    return op_s, conv_op_s, step_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("measured")
    ap.add_argument("--name", required=True, help="the sheet's name (letters, digits, '-')")
    ap.add_argument("--title", default="")
    ap.add_argument("--year", type=int, required=True, help="the year the part became available")
    ap.add_argument("--memory-gb", type=float, default=0, help="default: the measurement's, else required")
    a = ap.parse_args()
    try:
        meas = json.load(open(a.measured))
    except (OSError, ValueError) as e:
        sys.exit("gpu_sheet: %s: %s (expected bench/gpu_whatif.py's JSON)" % (a.measured, e))
    lim = meas.get("limits")
    if not lim or "copy_gbs" not in lim:
        sys.exit("gpu_sheet: %s: no 'limits' (expected bench/gpu_whatif.py's JSON)" % a.measured)
    peaks = {p: round(lim["gemm_%s_tflops" % p], 1) for p in ("fp32", "tf32", "bf16") if "gemm_%s_tflops" % p in lim}
    if "fp32" not in peaks:
        sys.exit("gpu_sheet: %s: no fp32 GEMM rate (run gpu_whatif.py with fp32 among --precisions)" % a.measured)
    if "bf16" in peaks:
        peaks["fp16"] = peaks["bf16"]
    memory_gb = a.memory_gb or meas.get("memory_gb", 0)
    if memory_gb <= 0:
        sys.exit("gpu_sheet: --memory-gb: the measurement does not say the device's memory; give it (GB)")
    op_s, conv_op_s, step_s = host_figures(meas)
    where = "measured by bench/gpu_whatif.py on %s, %s (torch %s, CUDA %s, %s host CPUs)" % (
        meas["device"], meas["date"][:10], meas["torch"], meas["cuda"], meas.get("host_cpus", "?"))
    sheet = {
        "format": "dlperf-device", "version": 1, "name": a.name,
        "title": a.title or "%s (limits as measured)" % meas["device"], "kind": "gpu",
        "year": a.year,
        "peak_tflops": peaks, "memory_gb": memory_gb, "memory_gbs": round(lim["copy_gbs"]),
        "host_op_us": round(op_s * 1e6, 1), "host_conv_op_us": round(conv_op_s * 1e6, 1),
        "host_step_us": round(step_s * 1e6),
        "sources": {
            "peak_tflops": where + ": an 8192^3 GEMM per precision (fp16 = bf16's rate)",
            "memory_gb": "given" if a.memory_gb else where,
            "memory_gbs": where + ": a device-to-device copy of 1 GiB, bytes read + written",
            "host_op_us": where + ": chains of 8 and 32 dense 16 + ReLU layers, the slope per dlperf op",
            "host_conv_op_us": where + ": chains of 8 and 32 conv 3x3 + BN + ReLU blocks, the slope per "
                                       "convolution or batch-norm op",
            "host_step_us": where + ": the dense chain's intercept",
        },
        "notes": "sustained limits, not the vendor's peaks: what this GPU reached under this framework",
    }
    json.dump(sheet, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
