#!/usr/bin/env python3
"""bench/gpu_neusight.py — NeuSight's per-operator benchmark, run through dlperf.

Calibrates on NeuSight's training files only (its five training devices: P4, P100, T4, V100,
A100-40GB), predicts every row of its test files with `dlperf validate --device NAME FILE...`,
and reports the mean absolute percentage error per operator class, for the devices in
training (new shapes) and for those absent from it (H100, L4, A100-80GB), beside the figures
NeuSight publishes (its published_errors/neusight_perop.csv).

    bench/gpu_neusight.py --data ../shared/gpu_data/neusight [--db FILE] [--out DIR]

The data: github.com/sitar-lab/NeuSight, dataset/ (train/ and test/). Every dlperf command
it runs is printed; --out keeps each device's per-row CSV.
"""
import argparse
import collections
import csv
import os
import subprocess
import sys
import tempfile

TRAIN = {  # dlperf sheet: NeuSight's device name (its file names)
    "p4": "Tesla P4",
    "p100-pcie-16gb": "Tesla P100-PCIE-16GB",
    "t4": "Tesla T4",
    "v100-pcie-32gb": "Tesla V100-PCIE-32GB",
    "a100-pcie-40gb": "NVIDIA A100-PCIE-40GB",
}
UNSEEN = {"h100-sxm5": "NVIDIA H100 80GB HBM3", "l4": "NVIDIA L4", "a100-pcie-80gb": "NVIDIA A100 80GB PCIe"}
CLASSES = [("bmm", "BMM"), ("fc", "FC"), ("elementwise", "EW"), ("softmax", "Softmax"), ("layernorm", "LN")]


def sh(cmd):
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr.strip()))
    return r.stdout


def published(data):
    """NeuSight's own per-op errors: {('in'|'out', class): pct}."""
    path = os.path.join(data, "published_errors", "neusight_perop.csv")
    out = {}
    if not os.path.exists(path):
        return out
    rows = list(csv.reader(open(path)))
    for r in rows:
        if r and r[0] == "NeuSight":
            vals = [float(v) for v in r[1:11]]
            for i, (c, _) in enumerate(CLASSES):
                out[("in", c)] = vals[i]
                out[("out", c)] = vals[5 + i]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="NeuSight's folder (dataset/ and published_errors/ in it)")
    ap.add_argument("--dlperf", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                     "dlperf"))
    ap.add_argument("--db", help="database to calibrate into (default: a new temporary one)")
    ap.add_argument("--out", help="folder for each device's per-row CSV")
    ap.add_argument("--reuse", action="store_true", help="--db already holds the training devices' imports")
    a = ap.parse_args()
    ds = os.path.join(a.data, "dataset")
    db = a.db or os.path.join(tempfile.mkdtemp(prefix="dlperf-neusight-"), "neusight.db")
    out = a.out or os.path.dirname(db)
    os.makedirs(out, exist_ok=True)
    for sheet, name in (TRAIN.items() if not a.reuse else []):
        files = [os.path.join(ds, "train", "collect", k, "p2.1.0", name + ".csv") for k in ("bmm", "linear", "conv")]
        files = [f for f in files if os.path.exists(f)]
        files += [os.path.join(ds, "train", k + ".csv") for k in ("elem", "ln", "softmax")]
        sh([a.dlperf, "import", "--db", db, "--device", sheet] + files)
    tests = [os.path.join(ds, "test", k + ".csv") for k in ("bmm", "linear", "elem", "ln", "softmax")]
    errs = collections.defaultdict(list)  # (in|out, class) -> [ape]
    per_dev = collections.defaultdict(dict)
    for sheet in list(TRAIN) + list(UNSEEN):
        path = os.path.join(out, sheet + ".csv")
        sh([a.dlperf, "validate", "--db", db, "--device", sheet, "--no-profiles", "--csv", path] + tests)
        where = "in" if sheet in TRAIN else "out"
        by = collections.defaultdict(list)
        for r in csv.DictReader(open(path)):
            ape = abs(float(r["error_pct"]))
            errs[(where, r["class"])].append(ape)
            by[r["class"]].append(ape)
        for c, v in by.items():
            per_dev[sheet][c] = (sum(v) / len(v), len(v))
    pub = published(a.data)
    print("\nNeuSight's operator benchmark through dlperf: mean absolute % error per class")
    print("(calibrated on NeuSight's training files of %s; every row of its test files predicted)\n"
          % ", ".join(TRAIN))
    print("%-26s %s" % ("", "".join("%12s" % label for _, label in CLASSES)))
    for where, title in (("in", "in training (new shapes)"), ("out", "absent (H100, L4, A100-80)")):
        cells = []
        for c, _ in CLASSES:
            v = errs[(where, c)]
            cells.append("%11.1f%%" % (sum(v) / len(v)) if v else "%12s" % "-")
        print("%-26s %s" % ("dlperf " + title, "".join(cells)))
        print("%-26s %s" % ("NeuSight (published)", "".join("%11.1f%%" % pub[(where, c)] if (where, c) in pub
                                                             else "%12s" % "-" for c, _ in CLASSES)))
    print("\nper device (MAPE %, rows):")
    for sheet in list(TRAIN) + list(UNSEEN):
        print("  %-16s %s" % (sheet, "  ".join("%s %.1f (%d)" % (c, *per_dev[sheet][c]) for c, _ in CLASSES
                                               if c in per_dev[sheet])))


if __name__ == "__main__":
    main()
