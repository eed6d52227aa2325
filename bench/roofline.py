#!/usr/bin/python3
"""bench/roofline.py — how close dlperf's kernels come to the machine's measured limits.

Calibrates the limits (FMA peak, bandwidth per memory level), the GEMM sweep and STREAM into
a scratch database, then prints from `dlperf calibrate --show --json`:
  * the best large SGEMM (m, n, k >= 1024) against the FMA peak on all threads (goal >= 85%),
  * STREAM triad (arrays 4x the last-level cache) against the triad and read bandwidth the
    memory family measured for DRAM-sized working sets, and the whole hierarchy.

    bench/roofline.py [--threads T] [--rounds R] [--db FILE]
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


def dlperf(*args):
    out = subprocess.run([DLPERF, *args], check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3, help="calibrations, each into a fresh database")
    ap.add_argument("--db", default=None, help="keep the last round's database here")
    a = ap.parse_args()
    rows = []
    for r in range(a.rounds):
        db = a.db if a.db and r == a.rounds - 1 else os.path.join(tempfile.mkdtemp(), "roofline.db")
        if os.path.exists(db):
            os.remove(db)
        common = ["--db", db, "--threads", str(a.threads)]
        dlperf("calibrate", "--only", "peak,memory,gemm-sweep,stream", "--json", *common)
        show = dlperf("calibrate", "--show", "--json", *common)
        lim = show["limits"]
        # the best large SGEMM: squares and grid points with every dimension >= 1024
        best = 0.0
        with subprocess.Popen(["sqlite3", "-json", db,
                               "SELECT key, flops / median_s / 1e9 AS gflops FROM measurement "
                               "WHERE kind = 'gemm'"], stdout=subprocess.PIPE, text=True) as p:
            for m in json.loads(p.stdout.read() or "[]"):
                dims = dict(kv.split("=") for kv in m["key"].split()[1:4])
                if min(int(dims["m"]), int(dims["n"]), int(dims["k"])) >= 1024:
                    best = max(best, m["gflops"])
        dram = next(level for level in lim["memory"] if level["level"] == "DRAM")
        rows.append({"peak": lim["fma_peak_gflops"], "peak1": lim["fma_peak_1core_gflops"], "sgemm": best,
                     "stream_triad": lim["stream_triad_gbs"], "dram_triad": dram["triad_gbs"],
                     "dram_read": dram["read_gbs"], "levels": lim["memory"]})
        print(f"# round {r + 1}: SGEMM {best:.1f} GFLOP/s of FMA peak {lim['fma_peak_gflops']:.1f} "
              f"({100 * best / lim['fma_peak_gflops']:.1f}%)", file=sys.stderr)
    med = lambda k: statistics.median(row[k] for row in rows)
    print(f"# dlperf kernels against the measured limits, {a.threads} threads, median of {a.rounds} calibrations")
    print(f"FMA peak             {med('peak'):8.1f} GFLOP/s ({med('peak1'):.1f} on one core)")
    print(f"best large SGEMM     {med('sgemm'):8.1f} GFLOP/s  {100 * med('sgemm') / med('peak'):5.1f}% of the FMA peak"
          f"  (goal >= 85%)")
    print(f"STREAM triad         {med('stream_triad'):8.1f} GB/s     {100 * med('stream_triad') / med('dram_triad'):5.1f}%"
          f" of the DRAM triad, {100 * med('stream_triad') / med('dram_read'):5.1f}% of the DRAM read bandwidth")
    print("memory level   read GB/s   triad GB/s   1-core read GB/s   (last round)")
    for level in rows[-1]["levels"]:
        print(f"  {level['level']:<6} {level['read_gbs']:11.1f} {level['triad_gbs']:12.1f} {level['read_1core_gbs']:18.1f}")


if __name__ == "__main__":
    main()
