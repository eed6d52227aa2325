#!/usr/bin/python3
"""bench/dp_validate.py — the data-parallel acceptance set (docs/accuracy.md) as one command.

Calibrates the compute with one rank per core (the speed an oversubscribed node's ranks
share), then for each rank count a communication calibration and, right after it,
`mpirun -np P dlperf validate` of the models at a fixed per-rank batch (weak scaling, one
thread per rank), and prints per P and model the errors of the iteration and of the
allreduce (predicted against measured; the test is within 10%), the allreduce reference
before/after each run, and the memory error. The commands are docs/accuracy.md's
("Data-parallel sets"); every validation is stored in the database.

    bench/dp_validate.py [--ranks 2,4] [--models alexnet-owt,basic-lstm,p1b1]
                         [--batch 16] [--rounds 3] [--steps 8] [--tp T] [--db FILE] [--out DIR]

With --tp T the jobs are tensor parallel in groups of T ranks (run --tp): the compute
calibration measures the models' shares (calibrate --tp), --batch is per group, and the
rank counts must be multiples of T. docs/accuracy.md's tensor-parallel GPT-2 set:
`bench/dp_validate.py --tp 2 --ranks 2,4 --models gpt2 --batch 1 --rounds 2 --steps 4`.

Open MPI's single-copy mechanism is left as the environment has it: setting
OMPI_MCA_btl_vader_single_copy_mechanism=none (as the tests do for containers that refuse
cross-memory attach) makes large allreduces several times slower, and the calibration and
the runs must share the setting; the table's header says which was in force.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DLPERF = os.path.join(HERE, "..", "build", "dlperf")


def mpirun(np, args, out_path):
    """Runs dlperf under mpirun; stdout to out_path, stderr passed through (progress)."""
    cmd = ["mpirun", "-np", str(np), "--oversubscribe", DLPERF] + args
    print("$ " + " ".join(cmd[:4] + ["dlperf"] + args), file=sys.stderr, flush=True)
    t0 = time.time()
    with open(out_path, "w") as f:
        rc = subprocess.run(cmd, stdout=f).returncode
    if rc != 0:
        sys.exit(f"dp_validate: '{' '.join(args[:2])}' at np={np} exited {rc} (output: {out_path})")
    return time.time() - t0


def placement(v):
    """The representative run's placement as 'apart x3.1', or '-' where not probed."""
    return f"{v['placement']} x{v['cores_ratio']:.1f}" if v.get("placement") else "-"


def placed(v, key):
    """An error at the run's own placement, or '-' where not probed."""
    return f"{v[key]:+.1f}%" if v.get(key) is not None else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", default="2,4", help="rank counts, comma-separated (each >= 2)")
    ap.add_argument("--models", default="alexnet-owt,basic-lstm,p1b1")
    ap.add_argument("--batch", type=int, default=16, help="samples per rank")
    ap.add_argument("--rounds", type=int, default=3, help="calibration passes and validation rounds")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--tp", type=int, default=1, help="tensor-parallel ranks per group (1: data parallel only)")
    ap.add_argument("--db", default="", help="database (default: a new one in --out)")
    ap.add_argument("--out", default="", help="directory for each command's output (default: a new temporary one)")
    a = ap.parse_args()
    try:
        ranks = [int(p) for p in a.ranks.split(",")]
    except ValueError:
        sys.exit(f"dp_validate: --ranks '{a.ranks}': give rank counts such as 2,4")
    if not ranks or min(ranks) < 2:
        sys.exit(f"dp_validate: --ranks '{a.ranks}': every rank count must be at least 2")
    if a.tp < 1 or any(p % a.tp for p in ranks):
        sys.exit(f"dp_validate: --tp {a.tp}: must be at least 1 and divide every rank count ({a.ranks})")
    tp = ["--tp", str(a.tp)] if a.tp > 1 else []
    if not os.access(DLPERF, os.X_OK):
        sys.exit(f"dp_validate: {DLPERF} not found; run 'make' first")
    out = a.out or tempfile.mkdtemp(prefix="dlperf-dp-")
    os.makedirs(out, exist_ok=True)
    db = a.db or os.path.join(out, "dp.db")
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    if os.geteuid() == 0:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    single_copy = os.environ.get("OMPI_MCA_btl_vader_single_copy_mechanism", "(default)")
    common = ["--threads", "1", "--db", db]
    cores = os.cpu_count() or 1
    # the ops measured by as many ranks at once as each run has on the cores: P ranks up
    # to one per core; beyond, one per core (the per-rank speed an oversubscribed run
    # shares out), as `validate` under mpirun looks for them
    for c in sorted({min(p, cores) for p in ranks}):
        secs = mpirun(c, ["calibrate", "--only", "peak,memory,model-op,eltwise,stream", "--models", a.models,
                          "--batch", str(a.batch), "--rounds", str(a.rounds)] + tp + common,
                      os.path.join(out, f"calibrate-compute-np{c}.txt"))
        print(f"dp_validate: compute calibration by {c} ranks {secs:.0f} s", file=sys.stderr)
    rows = []
    if a.tp > 1 and a.tp not in ranks:  # the groups' sums are priced from the T-rank collectives
        secs = mpirun(a.tp, ["calibrate", "--only", "comm", "--models", a.models, "--rounds", str(a.rounds)] + tp +
                      common, os.path.join(out, f"calibrate-comm-np{a.tp}.txt"))
        print(f"dp_validate: np={a.tp} communication calibration {secs:.0f} s", file=sys.stderr)
    for p in ranks:
        secs = mpirun(p, ["calibrate", "--only", "comm", "--models", a.models, "--rounds", str(a.rounds)] + tp + common,
                      os.path.join(out, f"calibrate-comm-np{p}.txt"))
        print(f"dp_validate: np={p} communication calibration {secs:.0f} s", file=sys.stderr)
        path = os.path.join(out, f"validate-np{p}.json")
        secs = mpirun(p, ["validate"] + a.models.split(",") +
                      ["--batch", str(a.batch), "--scaling", "weak", "--steps", str(a.steps),
                       "--rounds", str(a.rounds), "--json"] + tp + common, path)
        print(f"dp_validate: np={p} validation {secs:.0f} s", file=sys.stderr)
        with open(path) as f:
            for v in json.load(f):
                rows.append((p, v))
    how = f"tensor parallel {a.tp}, {a.batch} samples per group" if a.tp > 1 else f"{a.batch} samples per rank"
    print(f"# dlperf data-parallel validation: {how}, weak scaling, 1 thread per rank, "
          f"{cores} cores; {a.rounds} calibration passes and validation rounds, {a.steps} steps; "
          f"Open MPI single-copy mechanism {single_copy}; database {db}")
    print(f"{'np':>3} {'model':<14} {'pred iter':>10} {'meas iter':>10} {'error':>7} {'pred AR':>10} "
          f"{'meas AR':>10} {'error':>7}  {'AR ref':>11} {'memory':>7}  {'ranks':>11} {'apart':>5} "
          f"{'AR placed':>9} {'iter placed':>11}")
    worst = 0.0
    for p, v in rows:
        it, ar = v["error_pct"], v.get("allreduce_error_pct")  # null: no gradients' sum (one group)
        worst = max(worst, abs(it), abs(ar) if ar is not None else 0)
        ar_txt = f"{ar:>+6.1f}%" if ar is not None else f"{'-':>7}"
        ref = (f"x{v['drift_allreduce_before']:.2f}/{v['drift_allreduce_after']:.2f}" if v.get("drift_allreduce")
               else "-")  # not timed (tensor parallel: it would time the whole job's sum)
        print(f"{p:>3} {v['model']:<14} {1e3 * v['predicted_s']:>8.1f}ms {1e3 * v['measured_s']:>8.1f}ms "
              f"{it:>+6.1f}% {1e3 * v['predicted_allreduce_s']:>8.1f}ms {1e3 * v['measured_allreduce_s']:>8.1f}ms "
              f"{ar_txt}  {ref:>11} {v['memory_error_pct']:>+6.1f}%  {placement(v):>11} "
              f"{v.get('rounds_apart', 0)}/{v.get('rounds', 0):<3} {placed(v, 'allreduce_error_placed_pct'):>9} "
              f"{placed(v, 'error_placed_pct'):>11}")
    print(f"# largest |error| {worst:.1f}% (the test: within 10%); AR ref: the allreduce timed alone just before/after "
          f"each run against the prediction (x1: the communication ran at its calibrated speed)")
    print("# ranks: where the node's first two ranks ran in the representative run (their round trip over the "
          "fastest seen); apart: the rounds apart; placed: the errors with the run priced at its placement")
    print(f"# outputs: {out}")


if __name__ == "__main__":
    main()
