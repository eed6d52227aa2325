#!/bin/sh
# fuzz/make-seeds.sh — (re)writes the committed seed corpora fuzz/corpus/NAME/ from the
# built harnesses (make fuzz-build first) and the project's own files:
#   model_json  every zoo model exported (the harness's seed mode), docs/examples/, bench/gpu-chains/
#   spec        systems/*.json and systems/*/*.json but the profiles
#   hf_config   docs/examples/hf-configs/, OPT-1.3B's config and two small ones (one refused)
#   idx, weights, op_key, db_read   the harness's seed mode (FUZZ_WRITE_SEEDS=DIR)
#   import      dlperf CSVs as tests/test_gpu.sh writes them, and each published format's
#               layout from the first lines of a file of ../shared/gpu_data (GPU_DATA=DIR)
#               with every measured value replaced by a made-up one (the project keeps no
#               copy of published measurements), each behind its options byte
#               (fuzz/fuzz_import.c)
# Seeds stay small: a few KB each.
set -eu
B=${FUZZ_BUILD:-build-fuzz}
GPU_DATA=${GPU_DATA:-../shared/gpu_data}
C=fuzz/corpus
for n in model_json idx weights op_key db_read; do
    rm -rf "${C:?}/$n"
    mkdir -p "$C/$n"
    FUZZ_WRITE_SEEDS="$C/$n" "$B/fuzz_$n"
done
# the zoo's big networks add nothing the small ones lack: keep exports under 6 KB
find "$C/model_json" -name 'zoo-*.json' -size +6k -delete
cp docs/examples/*.json "$C/model_json/"
for f in bench/gpu-chains/*-8.json; do cp "$f" "$C/model_json/gpu-chains-$(basename "$f")"; done

rm -rf "$C/hf_config"
mkdir -p "$C/hf_config"
cp docs/examples/hf-configs/*.json "$C/hf_config/"
printf '%s' '{"_name_or_path": "facebook/opt-1.3b", "activation_function": "relu", "attention_dropout": 0.0, "do_layer_norm_before": true, "dropout": 0.1, "ffn_dim": 8192, "hidden_size": 2048, "max_position_embeddings": 2048, "model_type": "opt", "num_attention_heads": 32, "num_hidden_layers": 24, "vocab_size": 50272, "word_embed_proj_dim": 2048}' >"$C/hf_config/opt-1.3b.json"
printf '{"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 8, "vocab_size": 9}' >"$C/hf_config/bert-tiny.json"
printf '{"model_type": "gpt2", "n_layer": 2, "n_embd": 10, "n_head": 3, "n_positions": 8, "vocab_size": 9}' >"$C/hf_config/gpt2-bad-heads.json"

rm -rf "$C/spec"
mkdir -p "$C/spec"
for f in systems/*.json systems/*/*.json; do
    case $f in systems/profiles/*) continue ;; esac
    cp "$f" "$C/spec/$(echo "$f" | sed 's|^systems/||; s|/|-|g')"
done

rm -rf "$C/import"
mkdir -p "$C/import"
# seed NAME OPTIONS_OCTAL: the options byte, then stdin (cut to whole lines within 4 KB)
seed() {
    printf "\\$2" >"$C/import/$1"
    awk '{ n += length($0) + 1; if (n > 4000) exit; print }' >>"$C/import/$1"
}
# synthetic: the rows' layout kept (header, shapes, names), every decimal number (the
# times and rates a file measured) replaced by a made-up one
synthetic() {
    awk -F, -v OFS=, 'NR == 1 { print; next }
        { for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9]*\.[0-9]+([eE][-+]?[0-9]+)?$/) $i = sprintf("%.4f", 0.01 + ((NR * 7 + i * 13) % 97) / 50)
          print }'
}
own='# a GPU timed by tools/gpu_calibrate.py
key,precision,time_ms,min_ms,max_ms,stddev_ms,reps,framework,scope,device
gemm m=1024 n=1024 k=1024 ta=0 tb=0 beta=0,fp32,0.25,0.24,0.27,0.01,20,PyTorch 2.4,kernel,Tesla T4
gemm m=2048 n=2048 k=2048 ta=0 tb=0 beta=0,fp32,1.9,1.85,2.0,0.02,20,PyTorch 2.4,kernel,Tesla T4
gemm m=1024 n=1024 k=1024 ta=0 tb=0 beta=0,fp32,0.26,,,,20,PyTorch 2.4,kernel,Tesla T4
"binary fwd add count=16777216 acc=0",fp32,0.16,,,,20,PyTorch 2.4,kernel,Tesla T4
"conv2d fwd n=64 c=256 h=56 w=56 k=64 r=1 s=1 sh=1 sw=1 p=0,0,0,0 g=1 acc=0",fp32,0.55,,,,25,,kernel,
gemm m=1024 n=1024 k=1024 ta=0 tb=0 beta=0,fp16,0.02,,,,20,PyTorch 2.4,framework,Tesla T4
gemm m=512 n=512 k=512 ta=0 tb=0 beta=0,fp32,0.05,,,,20,PyTorch 2.4,kernel,NVIDIA H100
'
printf '%s\n' "$own" | seed dlperf-detected 000
printf '%s\n' "$own" | seed dlperf-given 004
printf '%s\n' "$own" | seed dlperf-fp32-only 020
printf 'key,precision,time_ms\nlayernorm fwd n=4096 h=768 acc=0,bf16,0.01\n\n' | seed dlperf-minimal 000
n=$GPU_DATA/neusight/dataset
if [ -d "$n" ]; then
    head -6 "$n/train/collect/conv/p2.1.0/Tesla T4.csv" | synthetic | seed neusight-conv 001
    head -12 "$n/train/collect/bmm/p2.1.0/Tesla T4.csv" | synthetic | seed neusight-bmm 005
    head -12 "$n/train/collect/linear/p2.1.0/Tesla T4.csv" | synthetic | seed neusight-linear 001
    { head -1 "$n/train/elem.csv"; grep 'Tesla P100' "$n/train/elem.csv" | awk -F, '!seen[$1]++'; } | synthetic | seed neusight-elem 001
    { head -1 "$n/train/ln.csv"; grep -m 6 'Tesla P100' "$n/train/ln.csv"; } | synthetic | seed neusight-ln 005
    { head -1 "$n/train/softmax.csv"; grep -m 6 'Tesla P100' "$n/train/softmax.csv"; } | synthetic | seed neusight-softmax 001
fi
d=$GPU_DATA/deepbench
if [ -d "$d" ]; then
    { head -1 "$d/deepbench_gemm.csv"; grep -m 10 '^NV_V100,train' "$d/deepbench_gemm.csv"; } | synthetic | seed deepbench-gemm 002
    { head -1 "$d/deepbench_conv.csv"; grep -m 8 '^NV_V100,train' "$d/deepbench_conv.csv"; } | synthetic | seed deepbench-conv 006
    { head -1 "$d/deepbench_rnn.csv"; grep -m 8 '^NV_V100,train' "$d/deepbench_rnn.csv"; } | synthetic | seed deepbench-rnn-layers 012
fi
c=$GPU_DATA/cde/prediction_model/data/raw_data/V100
if [ -d "$c" ]; then
    head -16 "$c/0/benchmark_dense__20180904.csv" | synthetic | seed cde-dense 003
    head -16 "$c/3/benchmark_convolution__20180904.csv" | synthetic | seed cde-conv 007
fi
echo "seeds: $(find "$C" -type f | wc -l) files, $(find "$C" -type f -exec cat {} + | wc -c) bytes"
