#!/bin/sh
# tests/test_gpu.sh — GPU evidence end to end: `dlperf import` of every format (dlperf's own
# CSV, NeuSight's, DeepBench's, CDE's) from small files written here, every kind of refused
# row (FILE:LINE, the field, nothing imported), `calibrate --show --device`, `validate
# --device` against measurements, `predict --system` priced from GPU evidence without any
# calibration of this machine, and tools/gpu_calibrate.py on PyTorch's CPU device (skipped,
# saying so, where PyTorch is absent). Prints "ok NAME" or "FAIL NAME: why" per check.
BUILD=${BUILD:-build}
. tests/shlib.sh

calibrations() { sqlite3 "$1" "SELECT count(*) FROM calibration WHERE device != ''" 2>/dev/null || echo 0; }

# ---- dlperf's own CSV ----
DB1="$T/own.db"
cat >"$T/own.csv" <<'EOF'
# a GPU timed by tools/gpu_calibrate.py
key,precision,time_ms,min_ms,max_ms,stddev_ms,reps,framework,scope,device
gemm m=1024 n=1024 k=1024 ta=0 tb=0 beta=0,fp32,0.25,0.24,0.27,0.01,20,PyTorch 2.4,kernel,NVIDIA A100-PCIE-40GB
gemm m=2048 n=2048 k=2048 ta=0 tb=0 beta=0,fp32,1.9,1.85,2.0,0.02,20,PyTorch 2.4,kernel,NVIDIA A100-PCIE-40GB
gemm m=1024 n=1024 k=1024 ta=0 tb=0 beta=0,fp32,0.26,,,,20,PyTorch 2.4,kernel,NVIDIA A100-PCIE-40GB
"binary fwd add count=16777216 acc=0",fp32,0.16,,,,20,PyTorch 2.4,kernel,NVIDIA A100-PCIE-40GB
gemm m=1024 n=1024 k=1024 ta=0 tb=0 beta=0,fp16,0.02,,,,20,PyTorch 2.4,kernel,NVIDIA A100-PCIE-40GB
gemm m=512 n=512 k=512 ta=0 tb=0 beta=0,fp32,0.05,,,,20,PyTorch 2.4,kernel,Tesla T4
EOF
run import-own 0 "$DLPERF" import "$T/own.csv" --device a100-pcie-40gb --db "$DB1"
expect import-own "$T/out" "imported 4 measurements of a100-pcie-40gb"
expect import-own-merged "$T/out" "1 repeating a key"
expect import-own-skipped "$T/out" "1 of other devices"
[ "$(sqlite3 "$DB1" "SELECT count(*) FROM calibration WHERE device = 'a100-pcie-40gb'")" = 2 ] &&
    ok import-own-one-calibration-per-precision || fail import-own-one-calibration-per-precision "$(sql "SELECT * FROM calibration")"
[ "$(sqlite3 "$DB1" "SELECT source FROM measurement WHERE key LIKE 'binary%'")" = "own.csv:6" ] &&
    ok import-own-source-line || fail import-own-source-line "$(sqlite3 "$DB1" "SELECT source FROM measurement")"
[ "$(sqlite3 "$DB1" "SELECT round(median_s * 1e6) FROM measurement WHERE key LIKE 'gemm m=1024%' AND calibration_id IN (SELECT id FROM calibration WHERE precision = 'fp32')")" = 255.0 ] &&
    ok import-own-median-of-repeats || fail import-own-median-of-repeats "$(sqlite3 "$DB1" "SELECT key, median_s FROM measurement")"
run import-own-json 0 "$DLPERF" import "$T/own.csv" --device a100-pcie-40gb --db "$DB1" --dry-run --json
[ "$(json "json_extract(j, '\$.measurements')")" = 4 ] && [ "$(json "json_extract(j, '\$.dry_run')")" = 1 ] &&
    ok import-dry-run-json || fail import-dry-run-json "$(cat "$T/out")"
[ "$(calibrations "$DB1")" = 2 ] && ok import-dry-run-writes-nothing || fail import-dry-run-writes-nothing "$(calibrations "$DB1")"

# refused rows: FILE:LINE, the field, what would be valid, and nothing imported
bad_row() { # NAME ROW EXPECTED
    printf 'key,precision,time_ms\ngemm m=8 n=8 k=8 ta=0 tb=0 beta=0,fp32,0.01\n%s\n' "$2" >"$T/bad.csv"
    before=$(calibrations "$DB1")
    run "import-refuses-$1" 2 "$DLPERF" import "$T/bad.csv" --device a100-pcie-40gb --db "$DB1" &&
        expect "import-refuses-$1" "$T/err" "$3" && one_line "import-refuses-$1"
    [ "$(calibrations "$DB1")" = "$before" ] && ok "import-refuses-$1-nothing-written" ||
        fail "import-refuses-$1-nothing-written" "$(calibrations "$DB1") calibrations, were $before"
}
bad_row key 'gemm m=8 n=8,fp32,0.01' "bad.csv:3: field 'key'"
bad_row precision 'gemm m=8 n=8 k=8 ta=0 tb=0 beta=0,int8,0.01' "bad.csv:3: field 'precision' = 'int8': expected fp64, fp32"
bad_row time 'gemm m=8 n=8 k=8 ta=0 tb=0 beta=0,fp32,-3' "bad.csv:3: field 'time_ms' = '-3': expected a time in milliseconds"
bad_row time-text 'gemm m=8 n=8 k=8 ta=0 tb=0 beta=0,fp32,fast' "bad.csv:3: field 'time_ms' = 'fast'"
bad_row quote '"gemm m=8 n=8 k=8 ta=0 tb=0 beta=0,fp32,0.01' "bad.csv:3: a quoted field is not closed"
printf 'key,precision,time_ms,colour\n' >"$T/bad.csv"
run import-refuses-column 2 "$DLPERF" import "$T/bad.csv" --device a100-pcie-40gb --db "$DB1" &&
    expect import-refuses-column "$T/err" "unknown column 'colour'"
run import-needs-device 2 "$DLPERF" import "$T/own.csv" --db "$DB1" && expect import-needs-device "$T/err" "--device NAME is required"
run import-unknown-device 2 "$DLPERF" import "$T/own.csv" --device gtx-9999 --db "$DB1" &&
    expect import-unknown-device "$T/err" "--device gtx-9999" && one_line import-unknown-device
run import-unknown-format 2 "$DLPERF" import "$T/own.csv" --device t4 --format xlsx --db "$DB1" &&
    expect import-unknown-format "$T/err" "expected dlperf, neusight, deepbench or cde"
run import-missing-file 2 "$DLPERF" import "$T/nothing.csv" --device t4 --db "$DB1" && expect import-missing-file "$T/err" "cannot be read"
run import-no-row 2 "$DLPERF" import "$T/own.csv" --device v100-pcie-32gb --db "$DB1" &&
    expect import-no-row "$T/err" "no row of v100-pcie-32gb to import"
printf 'colour,size\nred,3\n' >"$T/what.csv"
run import-unknown-header 2 "$DLPERF" import "$T/what.csv" --device t4 --db "$DB1" &&
    expect import-unknown-header "$T/err" "the header names no format dlperf reads"

# ---- NeuSight's files (two devices in one file, as its test files are) ----
DB2="$T/neusight.db"
H='OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version'
{
    echo "$H,Kernels,B,M,N,K"
    echo 'bmm,0.2386,Tesla T4,p2.1.0,8902,"volta_sgemm_128x64_nn, with a comma",1,1,1,1,1,1,1,1,cu121,;k,192,96,196,196'
    echo 'bmm,0.5,NVIDIA L4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,;k,192,96,196,196'
    echo 'linear,1.13,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,;k,1,1024,2560,2560'
} >"$T/ns_bmm.csv"
{
    echo "$H,B,H,large"
    echo 'add,0.767,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,32768,1600,True'
    echo 'gelu,0.9,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,32768,1600,True'
    echo 'ln,0.81,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,32768,1600,True'
    echo 'softmax,0.71,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,32768,1600,True'
} >"$T/ns_elem.csv"
{
    echo "$H,Kernels,B,Input_Channel,Output_Channel,Kernel_Szie,Input_Size,Stride,Padding"
    echo 'conv,2.71,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,;k,38,893,326,3,5,1,1'
} >"$T/ns_conv.csv"
run import-neusight 0 "$DLPERF" import "$T/ns_bmm.csv" "$T/ns_elem.csv" "$T/ns_conv.csv" --device t4 --db "$DB2"
expect import-neusight "$T/out" "imported 7 measurements of t4"
expect import-neusight-other-device "$T/out" "1 of other devices"
[ "$(sqlite3 "$DB2" "SELECT framework FROM measurement LIMIT 1")" = "PyTorch 2.1.0, CUDA 12.1, cuDNN 8.9.2" ] &&
    ok import-neusight-framework || fail import-neusight-framework "$(sqlite3 "$DB2" "SELECT framework FROM measurement")"
keys=$(sqlite3 "$DB2" "SELECT key FROM measurement ORDER BY key" | tr '\n' '|')
for k in "bmm b=192 m=96 n=196 k=196 ta=0 tb=0 beta=0" "gemm m=1024 n=2560 k=2560 ta=0 tb=1 beta=0 bias=1" \
         "act fwd gelu count=52428800" "layernorm fwd n=32768 h=1600 acc=0" "binary fwd add count=52428800 acc=0" \
         "conv2d fwd n=38 c=893 h=5 w=5 k=326 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0"; do
    case "$keys" in *"$k"*) ok "import-neusight-key-${k%% *}" ;; *) fail "import-neusight-key-${k%% *}" "$k not in $keys" ;; esac
done
sed 's/,192,96,196,196$/,192,96,0,196/' "$T/ns_bmm.csv" >"$T/ns_bad.csv"
run import-neusight-refuses 2 "$DLPERF" import "$T/ns_bad.csv" --device t4 --db "$DB2" &&
    expect import-neusight-refuses "$T/err" "ns_bad.csv:2: field 'N' = '0': expected an integer from 1"
sed 's/^add,/frobnicate,/' "$T/ns_elem.csv" >"$T/ns_bad.csv"
run import-neusight-refuses-op 2 "$DLPERF" import "$T/ns_bad.csv" --device t4 --db "$DB2" &&
    expect import-neusight-refuses-op "$T/err" "field 'OPName' = 'frobnicate': expected bmm, linear, conv"

# ---- DeepBench's results (tidy CSV: GEMM and convolution) ----
DB3="$T/deepbench.db"
# a sheet of the test's own, so that the alias the rows give is this one's whatever the
# built-in sheets call DeepBench's V100
cat >"$T/testv100.json" <<'EOF2'
{"format": "dlperf-device", "version": 1, "name": "test-v100", "title": "a V100 as DeepBench's rows name it",
 "kind": "gpu", "year": 2017, "peak_tflops": {"fp32": 15.7, "fp16": 125}, "memory_gb": 16, "memory_gbs": 900,
 "sm_count": 80, "boost_clock_mhz": 1530, "fp32_lanes_per_sm": 64, "l2_mb": 6, "memory_type": "HBM2",
 "aliases": ["NV_V100"],
 "sources": {"peak_tflops": "test", "memory_gb": "test", "memory_gbs": "test", "sm_count": "test",
             "boost_clock_mhz": "test", "fp32_lanes_per_sm": "test", "l2_mb": "test", "memory_type": "test",
             "aliases": "test"}}
EOF2
run systems-add-test-device 0 "$DLPERF" systems add "$T/testv100.json" --db "$DB3"
{
    echo 'device,suite,precision,app,M,N,K,a_trans,b_trans,time_ms,tflops,gflops,padded_kernels,sheet,file'
    echo 'NV_V100,train,Float,,1760,16,1760,N,N,0.05,1,,0,Results FP32,results/train/DeepBench_NV_V100.xlsx'
    echo 'NV_V100,train,"16 bit inputs, 16 bit multiplication, 32 bit addition",,1760,16,1760,N,N,0.02,1,,0,Results - FP16 ip,x.xlsx'
    echo 'NV_V100,inference,"GEMM, Conv: Int8 multiplication, 32 bit accumulation",,1760,16,1760,N,N,0.01,1,,0,m,x.xlsx'
    echo 'NV_T4,train,Float,,1760,16,1760,N,T,0.09,1,,0,Results FP32,x.xlsx'
    echo 'NV_V100,train,Float,,35,8457,2560,T,N,0.2,1,,0,Results FP32,x.xlsx'
} >"$T/db_gemm.csv"
{
    echo 'device,suite,precision,app,W,H,C,N,K,R,S,pad_h,pad_w,stride_v,stride_h,P,Q,fwd_ms,bwd_data_ms,bwd_filter_ms,total_ms,fwd_tflops,bwd_data_tflops,bwd_filter_tflops,fwd_algo,padded_kernels,sheet,file'
    echo 'NV_V100,train,Float,,700,161,1,4,32,5,20,0,0,2,2,341,79,0.4,0.9,1.2,,,,,,0,Results FP32,x.xlsx'
    echo 'NV_V100,train,Float,,54,54,64,8,64,3,3,1,1,1,1,54,54,0.1,,0.3,,,,,,0,Results FP32,x.xlsx'
} >"$T/db_conv.csv"
run import-deepbench 0 "$DLPERF" import "$T/db_gemm.csv" "$T/db_conv.csv" --device test-v100 --db "$DB3"
expect import-deepbench "$T/out" "imported 8 measurements of test-v100"
expect import-deepbench-skips "$T/out" "1 of other devices, 1 of precisions not imported"
[ "$(sqlite3 "$DB3" "SELECT count(*) FROM calibration")" = 2 ] && ok import-deepbench-fp32-and-fp16 ||
    fail import-deepbench-fp32-and-fp16 "$(sqlite3 "$DB3" "SELECT precision FROM calibration")"
# column-major C (M x N) = A B is row-major C^T = B^T A^T: m = N, n = M, the transposes swapped
[ "$(sqlite3 "$DB3" "SELECT count(*) FROM measurement WHERE key = 'gemm m=8457 n=35 k=2560 ta=0 tb=1 beta=0'")" = 1 ] &&
    ok import-deepbench-gemm-row-major || fail import-deepbench-gemm-row-major "$(sqlite3 "$DB3" "SELECT key FROM measurement")"
[ "$(sqlite3 "$DB3" "SELECT count(*) FROM measurement WHERE kind = 'conv2d'")" = 5 ] && ok import-deepbench-conv-phases ||
    fail import-deepbench-conv-phases "$(sqlite3 "$DB3" "SELECT key FROM measurement WHERE kind = 'conv2d'")"
sed 's/,341,79,/,300,79,/' "$T/db_conv.csv" >"$T/db_bad.csv"
run import-deepbench-refuses-pq 2 "$DLPERF" import "$T/db_bad.csv" --device test-v100 --db "$DB3" &&
    expect import-deepbench-refuses-pq "$T/err" "db_bad.csv:2: P, Q = 300, 79 but W, H, R, S"
{
    echo 'device,suite,precision,app,cell,hidden,N,T,fwd_ms,bwd_data_ms,bwd_weight_ms,bwd_ms,total_ms'
    echo 'NV_V100,train,Float,,lstm,512,16,25,1.0,0.9,0.2,,2.1'
    echo 'NV_V100,train,Float,,gru,512,32,1,0.1,0.1,0.1,,0.3'
    echo 'NV_V100,inference,"RNN: single precision",,lstm,512,1,25,0.9,,,,'
} >"$T/db_rnn.csv"
# an RNN row times a whole layer: no op key holds it, so it is compared with, never stored
run import-deepbench-rnn 2 "$DLPERF" import "$T/db_rnn.csv" --device test-v100 --db "$DB3" &&
    expect import-deepbench-rnn "$T/err" "times whole recurrent layers.*dlperf validate --device"
run validate-deepbench-rnn 0 "$DLPERF" validate --device test-v100 "$T/db_rnn.csv" --db "$DB3" --csv "$T/rnn_rows.csv"
expect validate-deepbench-rnn "$T/out" "4 measured rows"
expect validate-deepbench-rnn-classes "$T/out" "lstm bwd .* 1 "
grep -q '"rnn_lstm:hidden=512,batch=16,steps=25,phase=fwd"' "$T/rnn_rows.csv" && ok validate-deepbench-rnn-key ||
    fail validate-deepbench-rnn-key "$(cat "$T/rnn_rows.csv")"
sed 's/,lstm,512,16,/,peephole,512,16,/' "$T/db_rnn.csv" >"$T/db_bad.csv"
run validate-deepbench-rnn-refuses 2 "$DLPERF" validate --device test-v100 "$T/db_bad.csv" --db "$DB3" &&
    expect validate-deepbench-rnn-refuses "$T/err" "db_bad.csv:2: field 'cell' = 'peephole': expected vanilla, lstm or gru"

# ---- CDE's TensorFlow layer benchmarks ----
DB4="$T/cde.db"
{
    echo 'activation_fct,batchsize,channels_in,channels_out,gpu,kernelsize,matsize,optimizer,padding,precision,strides,timeUsed_max,timeUsed_median,timeUsed_min,timeUsed_std,use_bias'
    echo '0,46,6,15,0,6,221,0,1,32,1,8.05,7.95,7.88,0.05,False'
    echo '1,7,11,16,0,3,302,3,1,32,4,0.90,0.87,0.85,0.01,True'
    echo '0,8,3,8,0,3,32,0,0,32,1,,nan,,,False'
} >"$T/cde_conv.csv"
{
    echo 'activation_fct,batchsize,dim_input,dim_output,gpu,optimizer,precision,timeUsed_max,timeUsed_median,timeUsed_min,timeUsed_std'
    echo '0,14,3204,1809,0,0,32,0.866,0.788,0.761,0.036'
} >"$T/cde_dense.csv"
run import-cde 0 "$DLPERF" import "$T/cde_conv.csv" "$T/cde_dense.csv" --device p100-pcie-16gb --db "$DB4"
expect import-cde "$T/out" "imported 2 measurements of p100-pcie-16gb"
expect import-cde-skips "$T/out" "1 without a time, 1 timing no single op"
[ "$(sqlite3 "$DB4" "SELECT DISTINCT scope FROM measurement")" = framework ] && ok import-cde-framework-scope ||
    fail import-cde-framework-scope "$(sqlite3 "$DB4" "SELECT scope FROM measurement")"
sed 's/^0,46,6,15,0,6,221,0,1,/0,46,6,15,0,6,221,0,2,/' "$T/cde_conv.csv" >"$T/cde_bad.csv"
run import-cde-refuses 2 "$DLPERF" import "$T/cde_bad.csv" --device p100-pcie-16gb --db "$DB4" &&
    expect import-cde-refuses "$T/err" "cde_bad.csv:2: field 'padding' = '2': expected an integer from 0 to 1"

# ---- what a device has evidence for, and checks against measurements ----
run show-device 0 "$DLPERF" calibrate --show --device t4 --db "$DB2"
expect show-device "$T/out" "bmm .*fwd .*fp32"
expect show-device-fits "$T/out" "fitted kernel forms"
run show-device-json 0 "$DLPERF" calibrate --show --device t4 --db "$DB2" --json
[ "$(json "json_array_length(json_extract(j, '\$.evidence'))")" -ge 6 ] && ok show-device-json-kinds ||
    fail show-device-json-kinds "$(head -c 300 "$T/out")"
# --csv: a row per evidence group, the JSON's fields (the frameworks, with commas, one field)
cp "$T/out" "$T/evidence.json"
if run show-device-csv 0 "$DLPERF" calibrate --show --device t4 --db "$DB2" --csv; then
    [ "$(head -1 "$T/out")" = "device,kind,phase,precision,rows,flops_min,flops_max,time_min_s,time_max_s,scope,frameworks" ] &&
        ok show-device-csv-header || fail show-device-csv-header "$(head -1 "$T/out")"
    [ "$(csvq "$T/out" "$T/evidence.json" "json_array_length(json_extract(j, '\$.evidence')) >= 6
             AND (SELECT count(*) FROM c) = json_array_length(json_extract(j, '\$.evidence'))
             AND (SELECT count(*) FROM c JOIN json_each(json_extract(j, '\$.evidence')) e
                  ON json_extract(e.value, '\$.kind') = c.kind AND json_extract(e.value, '\$.phase') = c.phase
                  AND json_extract(e.value, '\$.precision') = c.precision
                  WHERE c.device = 't4' AND CAST(c.rows AS INTEGER) = json_extract(e.value, '\$.rows')
                    AND abs(CAST(c.flops_max AS REAL) / json_extract(e.value, '\$.flops_max') - 1) < 1e-6
                    AND abs(CAST(c.time_min_s AS REAL) / json_extract(e.value, '\$.time_min_s') - 1) < 1e-6
                    AND c.scope = json_extract(e.value, '\$.scope')
                    AND c.frameworks = (SELECT group_concat(value, '; ') FROM json_each(json_extract(e.value, '\$.frameworks'))))
                 = json_array_length(json_extract(j, '\$.evidence'))")" = 1 ] &&
        ok show-device-csv-rows || fail show-device-csv-rows "$(head -c 400 "$T/out")"
    expect show-device-csv-quoted "$T/out" ',"PyTorch 2.1.0, CUDA 12.1, cuDNN 8.9.2"$'
fi
run show-device-csv-json 2 "$DLPERF" calibrate --show --device t4 --db "$DB2" --csv --json &&
    expect show-device-csv-json "$T/err" "--csv and --json are two formats; choose one" && one_line show-device-csv-json
run show-device-none 0 "$DLPERF" calibrate --show --device h200-sxm --db "$DB2"
expect show-device-none "$T/out" "no calibration of h200-sxm"
expect show-device-carried "$T/out" "carried over from other devices"
run show-device-needs-show 2 "$DLPERF" calibrate --device t4 --db "$DB2" && expect show-device-needs-show "$T/err" "--device goes with --show"
run validate-device 0 "$DLPERF" validate --device t4 "$T/ns_elem.csv" --db "$DB2" --csv "$T/rows.csv"
expect validate-device "$T/out" "layernorm .* 1 "
[ "$(wc -l <"$T/rows.csv")" = 5 ] && ok validate-device-csv || fail validate-device-csv "$(cat "$T/rows.csv")"
run validate-device-without-own 0 "$DLPERF" validate --device t4 --without-own "$T/ns_elem.csv" --db "$DB2" --json
[ "$(json "json_extract(j, '\$.without_own')")" = 1 ] && ok validate-device-without-own-json || fail validate-device-without-own-json "$(cat "$T/out")"
run validate-device-no-file 2 "$DLPERF" validate --device t4 --db "$DB2" && expect validate-device-no-file "$T/err" "needs measurement FILEs"

# ---- a GPU system priced from GPU evidence, no calibration of this machine in the database ----
run predict-system-evidence 0 "$DLPERF" predict p1b1 --system p100-pcie-node --db "$DB4"
expect predict-system-evidence "$T/out" "how it is priced (p100-pcie-16gb at fp32"
expect predict-system-evidence-sources "$T/out" "of [0-9]* ops"
run predict-system-evidence-json 0 "$DLPERF" predict p1b1 --system p100-pcie-node --db "$DB4" --json
[ "$(json "json_extract(j, '\$.iteration_s') > 0")" = 1 ] && ok predict-system-evidence-json || fail predict-system-evidence-json "$(cat "$T/out")"
run predict-system-nothing 1 "$DLPERF" predict p1b1 --system dgx-h100 --precision bf16 --no-profiles --db "$T/empty.db" &&
    expect predict-system-nothing "$T/err" "nothing prices h100-sxm5 at bf16" && one_line predict-system-nothing
# no GPU has bf16 evidence in the profiles: bf16 takes the fp16 evidence where the device's
# two 16-bit peaks are one (the H100), and prices exactly as fp16 does; a V100 has no bf16
run predict-bf16-from-fp16 0 "$DLPERF" predict p1b1 --system dgx-h100 --precision bf16 --db "$T/empty.db" --json &&
    bf16_s=$(json "json_extract(j, '\$.iteration_s')") &&
    [ "$(json "json_extract(j, '\$.evidence_precision')")" = fp16 ] && ok predict-bf16-from-fp16 ||
    fail predict-bf16-from-fp16 "$(head -c 300 "$T/out")"
run predict-fp16 0 "$DLPERF" predict p1b1 --system dgx-h100 --precision fp16 --db "$T/empty.db" --json &&
    [ "$(json "json_extract(j, '\$.evidence_precision') = 'fp16' AND json_extract(j, '\$.iteration_s') = ${bf16_s:-0}")" = 1 ] &&
    ok predict-fp16-evidence || fail predict-fp16-evidence "$(head -c 300 "$T/out")"
run predict-v100-bf16 2 "$DLPERF" predict p1b1 --system summit --precision bf16 --db "$T/empty.db" &&
    expect predict-v100-bf16 "$T/err" "bf16" && one_line predict-v100-bf16

# ---- a fresh clone's evidence: the built-in profiles (systems/profiles/) ----
run predict-fresh-clone 0 "$DLPERF" predict resnet50 --system dgx-a100 --db "$T/fresh.db"
expect predict-fresh-clone "$T/out" "GPUs with evidence at fp32"
[ "$(sqlite3 "$T/fresh.db" "SELECT count(*) FROM calibration")" = 0 ] && ok predict-fresh-clone-no-calibration ||
    fail predict-fresh-clone-no-calibration "$(sqlite3 "$T/fresh.db" "SELECT id, device, mode FROM calibration")"
# a newer device is faster on a convnet, priced from the profiles alone
for d in p100-pcie-node dgx-a100 dgx-h100; do
    "$DLPERF" predict resnet50 --system "$d" --db "$T/fresh.db" --json >"$T/out" 2>/dev/null &&
        eval "t_$(echo $d | tr - _)=$(json "json_extract(j, '\$.compute_s')")"
done
[ "$(sqlite3 :memory: "SELECT ${t_dgx_h100:-9} < ${t_dgx_a100:-0} AND ${t_dgx_a100:-9} < ${t_p100_pcie_node:-0}")" = 1 ] &&
    ok profiles-newer-devices-faster || fail profiles-newer-devices-faster "h100 ${t_dgx_h100:-?} a100 ${t_dgx_a100:-?} p100 ${t_p100_pcie_node:-?}"
run predict-no-profiles 1 "$DLPERF" predict resnet50 --system dgx-a100 --no-profiles --db "$T/fresh.db" &&
    expect predict-no-profiles "$T/err" "nothing prices a100-sxm4-80gb at fp32" && one_line predict-no-profiles
# ---- a transformer under Megatron-style parallelism, priced from the profiles ----
# Korthikanti et al. 2022's configurations (Table 3) on DGX A100 nodes at 16-bit: fp16 and
# bf16 share the A100's tensor peak, and the profiles hold 16-bit evidence at fp16 only
for n in megatron-22b gpt3-175b megatron-530b megatron-1t; do
    "$DLPERF" models --from-hf "docs/examples/hf-configs/$n.json" --output "$T/$n.json" 2>"$T/err" ||
        fail "tp-model-file-$n" "$(cat "$T/err")"
done
tp() { # NAME PAPER_S MODEL NODES ARGS...: the iteration, its parts summing to it, within 20% of the paper
    tpn=$1 paper=$2 model=$3 nodes=$4
    shift 4
    run "tp-$tpn" 0 "$DLPERF" predict --model-file "$T/$model.json" --system dgx-a100 --precision fp16 --nodes "$nodes" \
        --db "$T/fresh.db" --json "$@" || return
    [ "$(json "abs(json_extract(j, '\$.iteration_s') - (SELECT sum(value) FROM json_each(json_extract(j, '\$.time_s'))))
               < 1e-9 * json_extract(j, '\$.iteration_s') AND json_extract(j, '\$.fits')
               AND abs(json_extract(j, '\$.iteration_s') / $paper - 1) < 0.2")" = 1 ] &&
        ok "tp-$tpn" || fail "tp-$tpn" "paper $paper s; $(head -c 600 "$T/out")"
}
tp 22b-full 1.42 megatron-22b 1 --tp 8 --pp 1 --batch 4 --micro-batch 4 --recompute full
tp 22b-selective 1.10 megatron-22b 1 --tp 8 --pp 1 --batch 4 --micro-batch 4 --sp --recompute selective
sel22=$(json "json_extract(j, '\$.iteration_s')")
tp 175b-full 18.13 gpt3-175b 8 --tp 8 --pp 8 --batch 64 --recompute full --interleave 3
tp 175b-selective 13.75 gpt3-175b 8 --tp 8 --pp 8 --batch 64 --sp --recompute selective --interleave 3
sel175=$(json "json_extract(j, '\$.iteration_s')")
[ "$(json "json_extract(j, '\$.time_s.bubble') > 0 AND json_extract(j, '\$.time_s.pp_comm') > 0
           AND json_extract(j, '\$.memory_per_gpu_bytes.stage') = 'first' AND json_extract(j, '\$.dp') = 1")" = 1 ] &&
    ok tp-175b-pipeline-parts || fail tp-175b-pipeline-parts "$(head -c 600 "$T/out")"
tp 530b-full 49.05 megatron-530b 35 --tp 8 --pp 35 --batch 280 --recompute full --interleave 3
tp 530b-selective 37.83 megatron-530b 35 --tp 8 --pp 35 --batch 280 --sp --recompute selective --interleave 3
tp 530b-dp8 39.15 megatron-530b 280 --tp 8 --pp 35 --batch 2240 --sp --recompute selective --interleave 3 --zero1
[ "$(json "json_extract(j, '\$.dp') = 8 AND json_extract(j, '\$.time_s.dp_comm') > 0 AND json_extract(j, '\$.distributed_optimizer')")" = 1 ] &&
    ok tp-530b-dp8-parts || fail tp-530b-dp8-parts "$(head -c 600 "$T/out")"
tp 1t-full 94.42 megatron-1t 64 --tp 8 --pp 64 --batch 512 --recompute full
tp 1t-selective 71.49 megatron-1t 64 --tp 8 --pp 64 --batch 512 --sp --recompute selective
# the search holds the paper's configuration, so it finds one at least as fast, and it fits
run tp-search 0 "$DLPERF" predict --model-file "$T/gpt3-175b.json" --system dgx-a100 --precision fp16 --nodes 8 \
    --batch 64 --search --db "$T/fresh.db" --json
[ "$(json "json_extract(j, '\$.configurations_fitting') > 0 AND json_extract(j, '\$.configurations_tried')
           >= json_extract(j, '\$.configurations_fitting') AND json_extract(j, '\$.fits')
           AND json_extract(j, '\$.iteration_s') <= ${sel175:-0} * (1 + 1e-9)")" = 1 ] &&
    ok tp-search-finds-at-least-the-paper || fail tp-search-finds-at-least-the-paper "paper config ${sel175:-?} s; $(head -c 600 "$T/out")"
run tp-search-text 0 "$DLPERF" predict --model-file "$T/megatron-22b.json" --system dgx-a100 --precision fp16 --batch 4 \
    --search --db "$T/fresh.db"
expect tp-search-text "$T/out" "the fastest that fits"
expect tp-search-text-parts "$T/out" "pipeline bubble"
run tp-csv 0 "$DLPERF" predict --model-file "$T/megatron-22b.json" --system dgx-a100 --precision fp16 --tp 8 --batch 4 \
    --micro-batch 4 --sp --recompute selective --db "$T/fresh.db" --csv
[ "$(csvq "$T/out" /dev/null "count(*) || ',' || min(tp) || ',' || min(abs(iteration_s - ${sel22:-0}) < 1e-5 * ${sel22:-1}) FROM c --")" = "1,8,1" ] &&
    ok tp-csv || fail tp-csv "$(cat "$T/out")"
run tp-text 0 "$DLPERF" predict --model-file "$T/megatron-22b.json" --system dgx-a100 --precision fp16 --tp 8 --batch 4 \
    --micro-batch 4 --sp --recompute selective --db "$T/fresh.db"
expect tp-text "$T/out" "memory per GPU"
expect tp-text-sources "$T/out" "one rank's share priced op by op"
# what it refuses, in one line each
tp_refuses() { # NAME EXPECTED ARGS...
    trn=$1 trwant=$2
    shift 2
    run "tp-refuses-$trn" 2 "$DLPERF" predict "$@" --db "$T/fresh.db" && expect "tp-refuses-$trn" "$T/err" "$trwant" &&
        one_line "tp-refuses-$trn"
}
M22="--model-file $T/megatron-22b.json"
tp_refuses no-system "give --system NAME" $M22 --tp 8 --batch 4
tp_refuses no-batch "give the global batch" $M22 --system dgx-a100 --tp 8
tp_refuses sp-without-tp "give --tp > 1" $M22 --system dgx-a100 --sp --batch 4
tp_refuses search-and-tp "give only --nodes and --batch" $M22 --system dgx-a100 --search --tp 8 --batch 4
tp_refuses tp-across-nodes "stays inside a node" $M22 --system dgx-a100 --nodes 2 --tp 16 --batch 4
tp_refuses pp-divides "--pp 5 must divide the 48 blocks" $M22 --system dgx-a100 --nodes 5 --tp 8 --pp 5 --batch 4
tp_refuses recompute "--recompute 'some': expected none, selective or full" $M22 --system dgx-a100 --tp 8 --recompute some --batch 4
tp_refuses zero1-one-replica "--zero1 splits the optimizer" $M22 --system dgx-a100 --tp 8 --zero1 --batch 4
tp_refuses with-pipeline "--pipeline, --overlap" $M22 --system dgx-a100 --tp 8 --pipeline 2 --batch 4
tp_refuses not-a-transformer "alexnet-owt is not a transformer" alexnet-owt --system dgx-a100 --tp 8 --batch 4

run show-device-profile 0 "$DLPERF" calibrate --show --device h100-sxm5 --db "$T/fresh.db"
expect show-device-profile "$T/out" "built-in profile systems/profiles/h100-sxm5.json"
expect show-device-profile-groups "$T/out" "fp32 .*bmm .*tiles"
run show-device-profile-json 0 "$DLPERF" calibrate --show --device h100-sxm5 --db "$T/fresh.db" --json
[ "$(json "json_array_length(json_extract(j, '\$.profile.fp32'))")" -ge 2 ] && ok show-device-profile-json ||
    fail show-device-profile-json "$(head -c 300 "$T/out")"
# a profile made from imported measurements: its fits and sampled shapes, no time
run systems-profile 0 "$DLPERF" systems profile t4 --db "$DB2" --note "made by tests/test_gpu.sh"
[ "$(json "json_extract(j, '\$.format')")" = dlperf-device-profile ] &&
    [ "$(json "json_extract(j, '\$.device')")" = t4 ] &&
    [ "$(json "json_extract(j, '\$.notes[0]')")" = "made by tests/test_gpu.sh" ] &&
    [ "$(json "json_array_length(json_extract(j, '\$.precisions.fp32.groups')) >= 1")" = 1 ] &&
    ok systems-profile-json || fail systems-profile-json "$(head -c 400 "$T/out")"
json "json_extract(j, '\$.precisions.fp32.sources[0]')" | grep -q "ns_" && ok systems-profile-sources ||
    fail systems-profile-sources "$(json "json_extract(j, '\$.precisions.fp32.sources')")"
grep -q '"time' "$T/out" && fail systems-profile-no-times "$(grep -n '"time' "$T/out" | head -3)" || ok systems-profile-no-times
mkdir -p "$T/profiles"
run systems-profile-out-dir 0 "$DLPERF" systems profile p100-pcie-16gb --out-dir "$T/profiles" --db "$DB4"
expect systems-profile-out-dir "$T/out" "p100-pcie-16gb.json: p100-pcie-16gb, precisions fp32"
run systems-profile-none 2 "$DLPERF" systems profile k20x --db "$DB2" &&
    expect systems-profile-none "$T/err" "k20x: no measurements of it" && one_line systems-profile-none
run systems-profile-bad-dir 1 "$DLPERF" systems profile t4 --out-dir "$T/nowhere/at/all" --db "$DB2" &&
    expect systems-profile-bad-dir "$T/err" "--out-dir: cannot write" && one_line systems-profile-bad-dir
run systems-profile-two-stdout 2 "$DLPERF" systems profile t4 l4 --db "$DB2" &&
    expect systems-profile-two-stdout "$T/err" "several with --out-dir DIR"

# ---- the profile's op list, the GPU tool's input ----
run profile-ops-csv 0 "$DLPERF" profile alexnet-owt --batch 4 --ops --csv
head -2 "$T/out" | tail -1 | grep -q '^key,kind,phase,count,flops,bytes$' && ok profile-ops-csv-header || fail profile-ops-csv-header "$(head -3 "$T/out")"
run profile-ops-csv-alone 2 "$DLPERF" profile alexnet-owt --csv && expect profile-ops-csv-alone "$T/err" "--csv lists the step's ops"

# ---- tools/gpu_calibrate.py on PyTorch's CPU device, then imported ----
if python3 -c 'import torch' 2>/dev/null; then
    "$DLPERF" profile fmnist-convpool --batch 2 --ops --csv >"$T/ops.csv"
    if python3 tools/gpu_calibrate.py --device cpu --device-name t4 --ops "$T/ops.csv" \
        --key "bmm b=2 m=8 n=8 k=4 ta=0 tb=1 beta=0" --key "layernorm fwd n=4 h=64 acc=0" \
        --reps 3 --min-time 0 --warmup 1 --out "$T/tool.csv" 2>"$T/tool.err"; then
        ok gpu-tool-cpu
        run gpu-tool-import 0 "$DLPERF" import "$T/tool.csv" --device t4 --db "$T/tool.db"
        expect gpu-tool-import "$T/out" "imported [0-9]* measurements of t4"
        n_ops=$(grep -c '^"' "$T/ops.csv")
        n_meas=$(sqlite3 "$T/tool.db" "SELECT count(*) FROM measurement")
        [ "$n_meas" -ge "$n_ops" ] && ok gpu-tool-every-op || fail gpu-tool-every-op "$n_meas measurements for $n_ops ops; $(cat "$T/tool.err")"
    else
        fail gpu-tool-cpu "$(tail -3 "$T/tool.err")"
    fi
else
    ok "gpu-tool-cpu (skipped: PyTorch is not installed; apt-get install python3-torch to run it)"
fi
