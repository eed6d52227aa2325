#!/usr/bin/env python3
"""bench/gpu_loo.py — leave one device out over DeepBench's and CDE's published GPU kernels.

Imports every device's rows (DeepBench's GEMM and convolution training results, CDE's
convolution and dense forward layers), then prices each device's own rows, and DeepBench's
RNN layers (never evidence: a layer is T steps of several kernels), with its own evidence left
out (`dlperf validate --device NAME --without-own FILE...`): what the other
devices' evidence, carried over by the sheets, says of a device it never measured. Prints the
median and 90th percentile of |error| per kind and device, and over all devices per kind.

    bench/gpu_loo.py --deepbench ../shared/gpu_data/deepbench --cde ../shared/gpu_data/cde [--db FILE]
        [--cde-as-kernels]

The data: github.com/baidu-research/DeepBench results/ (as tidy CSV: docs/import-format.md)
and github.com/CDECatapult/ml-performance-prediction prediction_model/data/raw_data/.
"""
import argparse
import collections
import csv
import glob
import os
import statistics
import subprocess
import sys
import tempfile

# DeepBench's device names -> dlperf sheets (their aliases say the same)
DEEPBENCH = {"NV_M40": "m40", "NV_TitanX": "titan-x-maxwell", "NV_1080Ti": "gtx-1080-ti",
             "NV_TitanX_Pascal": "titan-x-pascal", "NV_TitanXp": "titan-xp", "NV_P100": None, "NV_V100": None,
             "NV_T4": "t4"}
# CDE's folders -> sheets
CDE = {"K40": "k40", "k80": "k80", "M60": "m60", "1080ti": "gtx-1080-ti", "P100": None, "V100": None}


def sh(cmd, ok_codes=(0,)):
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode not in ok_codes:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr.strip()))
    return r


def sheet_of(dlperf, db, published):
    """The sheet whose name or aliases give `published`, from `dlperf systems show` (JSON)."""
    r = sh([dlperf, "systems", "--db", db, "--json"])
    import json
    for e in json.loads(r.stdout):
        if e["kind"] != "device":
            continue
        s = json.loads(sh([dlperf, "systems", "show", e["name"], "--db", db, "--json"]).stdout)
        if published.lower() in [a.lower() for a in s.get("aliases", [])] + [e["name"].lower()]:
            return e["name"]
    return None


def quantile(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    i = q * (len(v) - 1)
    lo = int(i)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (i - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deepbench", help="DeepBench's folder (deepbench_gemm.csv, deepbench_conv.csv, deepbench_rnn.csv)")
    ap.add_argument("--cde", help="CDE's folder (prediction_model/data/raw_data/<GPU>/...)")
    ap.add_argument("--dlperf", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                     "dlperf"))
    ap.add_argument("--db", help="database (default: a new temporary one)")
    ap.add_argument("--out", help="folder for the per-row CSVs")
    ap.add_argument("--reuse", action="store_true", help="--db already holds the imports")
    ap.add_argument("--cde-as-kernels", action="store_true",
                    help="also price CDE's convolution rows as kernels (scope kernel) from every device's kernel "
                         "evidence, and print each device's median measured / priced ratio by filter: how much "
                         "of a TensorFlow call is the kernel, and whether a board's kernels stand out")
    a = ap.parse_args()
    db = a.db or os.path.join(tempfile.mkdtemp(prefix="dlperf-loo-"), "loo.db")
    out = a.out or os.path.dirname(db)
    os.makedirs(out, exist_ok=True)
    sets = []  # (label, sheet, files)
    if a.deepbench:
        files = [os.path.join(a.deepbench, f) for f in ("deepbench_gemm.csv", "deepbench_conv.csv")]
        for pub, sheet in DEEPBENCH.items():
            sheet = sheet or sheet_of(a.dlperf, db, pub)
            if sheet:
                sets.append(("deepbench " + pub, sheet, files, [os.path.join(a.deepbench, "deepbench_rnn.csv")]))
    if a.cde:
        base = os.path.join(a.cde, "prediction_model", "data", "raw_data")
        for folder, sheet in CDE.items():
            sheet = sheet or sheet_of(a.dlperf, db, folder)
            files = sorted(glob.glob(os.path.join(base, folder, "*", "benchmark_*.csv")))
            if sheet and files:
                sets.append(("cde " + folder, sheet, files, []))
    if not a.reuse:
        for label, sheet, files, _ in sets:
            sh([a.dlperf, "import", "--db", db, "--device", sheet, "--precision", "fp32"] + files)
    rows = collections.defaultdict(list)  # (source, class) -> [ape]
    per = collections.defaultdict(list)   # (label, class) -> [ape]
    for label, sheet, files, layers in sets:
        path = os.path.join(out, label.replace(" ", "_") + ".csv")
        sh([a.dlperf, "validate", "--db", db, "--device", sheet, "--without-own", "--no-profiles", "--precision", "fp32", "--csv",
            path] + files + layers)
        src = label.split()[0]
        for r in csv.DictReader(open(path)):
            ape = abs(float(r["error_pct"]))
            rows[(src, r["class"])].append(ape)
            per[(label, r["class"])].append(ape)
    print("\nleave one device out: each device's rows priced from the other devices' evidence alone")
    print("%-28s %-20s %7s %9s %9s" % ("# device", "class", "rows", "median", "p90"))
    for (label, cls), v in sorted(per.items()):
        print("%-28s %-20s %7d %8.1f%% %8.1f%%" % (label, cls, len(v), quantile(v, 0.5), quantile(v, 0.9)))
    print("\n%-28s %-20s %7s %9s %9s" % ("# all devices", "class", "rows", "median", "p90"))
    for (src, cls), v in sorted(rows.items()):
        print("%-28s %-20s %7d %8.1f%% %8.1f%%" % (src, cls, len(v), quantile(v, 0.5), quantile(v, 0.9)))
    if a.cde_as_kernels:
        cde_as_kernels(a, db, out, [x for x in sets if x[0].startswith("cde ")])


def cde_as_kernels(a, db, out, sets):
    """CDE's convolution rows written again as kernel-scope rows of dlperf's CSV and priced
    on their device (its own kernel evidence if any, else the other devices' carried over);
    rows of 2 ms or more, where a call's fixed overhead matters least."""
    import re
    print("\nCDE's convolutions priced as kernels: median measured / priced (quartiles), rows of 2 ms or more")
    print("%-12s %-16s %-24s %-24s %-24s" % ("# device", "sheet", "3x3 stride 1", "1x1", "other"))
    for label, sheet, _, _ in sets:
        src = os.path.join(out, label.replace(" ", "_") + ".csv")
        kern = os.path.join(out, label.replace(" ", "_") + "_as_kernels.csv")
        seen = set()
        with open(kern, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["key", "precision", "time_ms", "scope"])
            for r in csv.DictReader(open(src)):
                if r["class"] == "conv2d fwd" and r["key"] not in seen:
                    seen.add(r["key"])
                    w.writerow([r["key"], "fp32", r["measured_ms"], "kernel"])
        priced = os.path.join(out, label.replace(" ", "_") + "_as_kernels_priced.csv")
        sh([a.dlperf, "validate", "--db", db, "--device", sheet, "--no-profiles", "--precision", "fp32", "--csv",
            priced, kern])
        ratios = collections.defaultdict(list)
        for r in csv.DictReader(open(priced)):
            if float(r["measured_ms"]) < 2:
                continue
            d = dict(re.findall(r"(\w+)=([\d,]+)", r["key"]))
            cls = "3x3s1" if d["r"] == "3" and d["sh"] == "1" else "1x1" if d["r"] == "1" else "other"
            ratios[cls].append(float(r["measured_ms"]) / float(r["predicted_ms"]))
        cell = lambda v: "%.2f (%.2f-%.2f) n=%d" % (quantile(v, 0.5), quantile(v, 0.25), quantile(v, 0.75), len(v)) \
            if v else "-"
        print("%-12s %-16s %-24s %-24s %-24s" % (label.split()[1], sheet, cell(ratios["3x3s1"]), cell(ratios["1x1"]),
                                              cell(ratios["other"])))


if __name__ == "__main__":
    main()
