#!/bin/sh
# scripts/make-profiles.sh GPU_DATA [DLPERF] — systems/profiles/, the built-in GPU evidence a
# fresh clone prices GPUs from, derived from the public measurements in GPU_DATA (the
# folder ../shared/gpu_data/ is laid out as: neusight/, deepbench/, cde/; where to get each:
# docs/gpu-pricing.md, "Profiles"). Every file is imported into a new database (all rows,
# every precision), fitted, and each device's fits written with `dlperf systems profile`:
# parameters, bands and sampled shapes, never a measured time. Run from the repository root;
# commit the result. The commits below are those of the data the current profiles came from.
set -eu
[ $# -ge 1 ] || { echo "usage: scripts/make-profiles.sh GPU_DATA [DLPERF]" >&2; exit 2; }
data=$(cd "$1" && pwd)
dlperf=$(cd "$(dirname "${2:-build/dlperf}")" && pwd)/$(basename "${2:-build/dlperf}")
out=$(pwd)/systems/profiles
[ -x "$dlperf" ] || { echo "make-profiles: $dlperf is not an executable dlperf (make first)" >&2; exit 2; }
for d in neusight/dataset deepbench cde/prediction_model/data/raw_data; do
    [ -d "$data/$d" ] || { echo "make-profiles: $data/$d is missing (GPU_DATA must hold neusight/, deepbench/, cde/)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/profiles.db
NEUSIGHT="NeuSight (github.com/sitar-lab/NeuSight, commit 6945927): per-operator latencies, PyTorch 2.1, CUDA 12.1, FP32 with TF32 off"
DEEPBENCH="DeepBench (github.com/baidu-research/DeepBench, commit da81ba7): official training-kernel results, cuBLAS/cuDNN"
CDE="CDE ml-performance-prediction (github.com/CDECatapult/ml-performance-prediction, commit e649f32): TensorFlow 1.x session.run times"
cd "$data"
imp() { # DEVICE FILE...
    dev=$1
    shift
    echo "make-profiles: import $dev: $*" >&2
    "$dlperf" import --db "$db" --device "$dev" "$@" >/dev/null
}
# NeuSight: every device's training files and the rows of the test files that are its
ns=neusight/dataset
for pair in "p4:Tesla P4" "p100-pcie-16gb:Tesla P100-PCIE-16GB" "t4:Tesla T4" "v100-pcie-32gb:Tesla V100-PCIE-32GB" \
            "a100-pcie-40gb:NVIDIA A100-PCIE-40GB" "a100-pcie-80gb:NVIDIA A100 80GB PCIe" "h100-sxm5:" "l4:"; do
    dev=${pair%%:*}
    name=${pair#*:}
    set --
    for k in bmm linear conv; do
        f="$ns/train/collect/$k/p2.1.0/$name.csv"
        [ -n "$name" ] && [ -f "$f" ] && set -- "$@" "$f"
    done
    case $dev in h100-sxm5 | l4 | a100-pcie-80gb) ;; *) set -- "$@" $ns/train/elem.csv $ns/train/ln.csv $ns/train/softmax.csv ;; esac
    imp "$dev" "$@" $ns/test/bmm.csv $ns/test/linear.csv $ns/test/elem.csv $ns/test/ln.csv $ns/test/softmax.csv
done
# DeepBench: its GEMMs and convolutions (three phases), fp32 and the fp16 of V100 and T4
for dev in m40 titan-x-maxwell gtx-1080-ti titan-x-pascal titan-xp p100-pcie-16gb v100-sxm2-16gb t4; do
    imp "$dev" deepbench/deepbench_gemm.csv deepbench/deepbench_conv.csv
done
# CDE: TensorFlow's convolution and dense layers, framework scope
cde=cde/prediction_model/data/raw_data
for pair in K40:k40 k80:k80 M60:m60 1080ti:gtx-1080-ti P100:p100-pcie-16gb V100:v100-sxm2-16gb; do
    imp "${pair#*:}" $cde/"${pair%%:*}"/*/*.csv
done
mkdir -p "$out"
rm -f "$out"/*.json
"$dlperf" systems profile --db "$db" --out-dir "$out" --note "$NEUSIGHT" --note "$DEEPBENCH" --note "$CDE" \
    p4 p100-pcie-16gb t4 v100-pcie-32gb a100-pcie-40gb a100-pcie-80gb h100-sxm5 l4 \
    m40 titan-x-maxwell gtx-1080-ti titan-x-pascal titan-xp v100-sxm2-16gb k40 k80 m60
