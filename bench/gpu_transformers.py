#!/usr/bin/env python3
"""bench/gpu_transformers.py — one training step of NeuSight's five transformers, predicted per GPU.

NeuSight (ASPLOS'25) reports its errors on BERT-Large, GPT2-Large, GPT3-XL, OPT-1.3B and
GPT3-2.7B training steps (forward and backward, no optimizer) at batch 1-8 on H100, A100,
L4 and V100; its repository's HuggingFace configs of those models are in
../shared/gpu_data/neusight/DLmodel_configs. This writes each config as a model file
(`dlperf models --from-hf`, at the config's own positions), predicts forward and forward +
backward on each GPU with evidence in the built-in profiles (`dlperf predict --model-file F
--device D --mode forward|fwd-bwd`, fp32 as NeuSight's data, an eager framework's host floor
included), and prints forward, backward and their sum with the memory (activations counted as the
framework frees them), whether it fits, and what priced the step's ops (the share of them
by each source of predictor/device_price.h).
No published step time is at hand to set these against: a prediction table, not a check.

    bench/gpu_transformers.py --configs ../shared/gpu_data/neusight/DLmodel_configs [--db FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# NeuSight's models and batches (its training table), config file, name
MODELS = [("bert_large.json", "bert-large", (2, 8)), ("gpt2_large.json", "gpt2-large", (1, 4)),
          ("gpt3_xl.json", "gpt3-xl", (1, 2)), ("opt_13.json", "opt-1.3b", (1, 2)),
          ("gpt3_27.json", "gpt3-2.7b", (1, 2))]
DEVICES = ["h100-sxm5", "a100-pcie-80gb", "l4", "v100-pcie-32gb"]


def run_json(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr.strip()))
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", required=True, help="NeuSight's DLmodel_configs folder")
    ap.add_argument("--db", default=os.path.join(tempfile.gettempdir(), "dlperf-gpu-transformers.db"),
                    help="database (default: an empty one: the built-in profiles price alone)")
    ap.add_argument("--dlperf", default=os.path.join(HERE, "..", "build", "dlperf"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dlperf-tf-")
    print("# forward and backward of one training step, fp32, PyTorch eager (the host floor per op), "
          "the built-in profiles' evidence")
    print("%-11s %5s %6s  %-15s %11s %11s %11s %10s  %-4s  %s" % ("# model", "batch", "tokens", "device", "forward",
                                                               "backward", "fwd+bwd", "memory", "fits", "ops priced by"))
    for config, name, batches in MODELS:
        path = os.path.join(tmp, name + ".json")
        subprocess.run([a.dlperf, "models", "--from-hf", os.path.join(a.configs, config), "--name", name,
                        "--output", path], check=True)
        tokens = json.load(open(path))["input"]["shape"][0]
        for batch in batches:
            for device in DEVICES:
                common = ["predict", "--model-file", path, "--device", device, "--batch", str(batch), "--db", a.db,
                          "--json"]
                fwd = run_json([a.dlperf] + common + ["--mode", "forward"])
                both = run_json([a.dlperf] + common + ["--mode", "fwd-bwd"])
                f, fb = fwd["compute_s"], both["compute_s"]
                src = both.get("ops_priced_by", {})
                total = sum(src.values()) or 1
                how = ", ".join("%s %d%%" % (k, round(100 * v / total)) for k, v in src.items())
                print("%-11s %5d %6d  %-15s %8.1f ms %8.1f ms %8.1f ms %7.1f GiB  %-4s  %s" % (
                    name, batch, tokens, device, f * 1e3, (fb - f) * 1e3, fb * 1e3,
                    both["memory_per_device_bytes"] / 2**30, "yes" if both["fits"] else "NO", how), flush=True)


if __name__ == "__main__":
    main()
