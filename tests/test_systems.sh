#!/bin/sh
# tests/test_systems.sh — spec-sheet systems end to end: every built-in spec validates and
# resolves, `systems add` names each bad field, predictions for a spec-sheet system and for
# this machine data-parallel, and `sweep` (table, CSV, JSON, SVG plot, node lists, strong
# scaling). Prints "ok NAME" or "FAIL NAME: why" per check.
BUILD=${BUILD:-build}
. tests/shlib.sh
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell} # the kernel choice is not tested here

# ---- the built-in spec sheets ----
if run systems-json 0 "$DLPERF" systems --json; then
    cp "$T/out" "$T/list.json"
    count() { sqlite3 :memory: "SELECT count(*) FROM json_each(readfile('$T/list.json')) WHERE json_extract(value, '\$.kind') = '$1'"; }
    [ "$(count device)" -ge 8 ] && ok systems-devices || fail systems-devices "$(count device) devices"
    [ "$(count interconnect)" -ge 12 ] && ok systems-interconnects || fail systems-interconnects "$(count interconnect)"
    [ "$(count system)" -ge 6 ] && ok systems-systems || fail systems-systems "$(count system) systems"
    # every built-in parses, validates and (systems) resolves its device and links
    bad=""
    for n in $(sqlite3 :memory: "SELECT json_extract(value, '\$.name') FROM json_each(readfile('$T/list.json'))"); do
        "$DLPERF" systems show "$n" >"$T/show" 2>&1 || bad="$bad $n"
        grep -q '^sources:' "$T/show" || bad="$bad $n(no sources)"
    done
    [ -z "$bad" ] && ok systems-builtins-valid || fail systems-builtins-valid "$bad"
fi
for n in k20x p100-sxm2 v100-sxm2-32gb a100-sxm4-80gb h100-sxm5 h200-sxm mi250x epyc-9654 pcie3 pcie4 pcie5 nvlink2 \
         nvlink3 nvlink4 ib-fdr ib-edr ib-hdr ib-ndr slingshot-11 ethernet-100g titan dgx-a100 frontier; do
    "$DLPERF" systems show "$n" >/dev/null 2>&1 || fail "systems-has-$n" "no spec sheet '$n'"
done
ok systems-required-names
run systems-show 0 "$DLPERF" systems show dgx-a100 && expect systems-show "$T/out" "8 x a100-sxm4-80gb"
run systems-show-unknown 2 "$DLPERF" systems show nosuch && expect systems-show-unknown "$T/err" "no spec sheet named 'nosuch'" &&
    one_line systems-show-unknown
run systems-verb 2 "$DLPERF" systems frob && expect systems-verb "$T/err" "expected show NAME, add FILE"

# ---- systems add: each bad field named with what would be valid ----
dev() { # dev FILE [SED]: a valid device spec, edited by SED
    printf '{"format": "dlperf-device", "version": 1, "name": "my-gpu", "title": "My GPU", "kind": "gpu", "year": 2024, "peak_tflops": {"fp32": 50, "fp16": 400}, "memory_gb": 96, "memory_gbs": 3000, "sources": {"peak_tflops": "vendor datasheet", "memory_gb": "vendor datasheet", "memory_gbs": "vendor datasheet"}}\n' |
        sed "${2:-}" >"$1"
}
addbad() { # addbad NAME PATTERN FILE
    if run "add-$1" 2 "$DLPERF" systems add "$3"; then expect "add-$1" "$T/err" "$2" && one_line "add-$1"; fi
}
dev "$T/kind.json" 's/"kind": "gpu"/"kind": "tpu"/'
addbad kind 'field "kind": .tpu.: expected "gpu" or "cpu"' "$T/kind.json"
dev "$T/bw.json" 's/"memory_gbs": 3000/"memory_gbs": -3/'
addbad bandwidth 'field "memory_gbs": expected a number > 0' "$T/bw.json"
dev "$T/prec.json" 's/"fp16": 400/"fp8": 900/'
addbad precision 'field "peak_tflops.fp8": unknown precision; expected fp64, fp32, tf32, fp16 or bf16' "$T/prec.json"
dev "$T/typo.json" 's/"memory_gb": 96/"memroy_gb": 96/'
addbad unknown-field 'unknown field "memroy_gb"; fields: format, version' "$T/typo.json"
dev "$T/twice.json" 's/"year": 2024/"year": 2024, "year": 2025/'
addbad twice 'field "year": given twice' "$T/twice.json"
printf '{"format": "dlperf-device", "version": 1, "name": "x", "title": "X", "kind": "cpu", "year": 2024, "peak_tflops": {"fp32": 5}, "memory_gb": 96, "memory_gbs": 300, "sources": {"peak_tflops": "a"}}' >"$T/src.json"
addbad sources 'field "sources.memory_gb": missing; every figure cites its public source' "$T/src.json"
printf '{"format": "dlperf-system", "version": 1, "name": "s", "title": "S", "device": "nosuch-gpu", "devices_per_node": 4, "intra": "nvlink3", "inter": "ib-hdr", "sources": {"devices_per_node": "a"}}' >"$T/sys.json"
addbad system-device 'field "device": no spec sheet named .nosuch-gpu.' "$T/sys.json"
printf '{"format": "dlperf-system", "version": 1, "name": "s", "title": "S", "device": "a100-sxm4-80gb", "devices_per_node": 4, "intra": "ib-hdr", "inter": "ib-hdr", "sources": {"devices_per_node": "a"}}' >"$T/scope.json"
addbad system-scope 'field "intra": .ib-hdr. links nodes; expected an interconnect with scope "intra"' "$T/scope.json"
printf '{"format": "dlperf-device", "version": 1, "name": ' >"$T/broken.json"
addbad json 'not a JSON object' "$T/broken.json"
addbad missing-file 'cannot open' "$T/none.json"
dev "$T/good.json"
if run add-good 0 "$DLPERF" systems add "$T/good.json"; then
    expect add-good "$T/out" "added device 'my-gpu'"
    run add-listed 0 "$DLPERF" systems && expect add-listed "$T/out" "my-gpu .*(added)"
    run add-again 2 "$DLPERF" systems add "$T/good.json" && expect add-again "$T/err" "--replace replaces it"
    run add-replace 0 "$DLPERF" systems add "$T/good.json" --replace
fi
printf '{"format": "dlperf-system", "version": 1, "name": "my-cluster", "title": "4 x my-gpu per node, HDR", "device": "my-gpu", "devices_per_node": 4, "intra": "nvlink4", "inter": "ib-hdr", "nics_per_node": 4, "sources": {"devices_per_node": "ours", "nics_per_node": "ours"}}' >"$T/cluster.json"
run add-system 0 "$DLPERF" systems add "$T/cluster.json" && expect add-system "$T/out" "added system 'my-cluster'"

# ---- with no GPU evidence, predictions need this machine's calibration (the efficiency source) ----
run predict-system-uncalibrated 1 "$DLPERF" predict p1b1 --system dgx-a100 &&
    expect predict-system-uncalibrated "$T/err" "nothing prices a100-sxm4-80gb at fp32: no GPU measurements"
run calibrate 0 "$DLPERF" calibrate --quick --only peak,memory,gemm-sweep,eltwise,cnn-sweep

if run predict-system 0 "$DLPERF" predict p1b1 --system dgx-a100 --nodes 2 --precision fp16 --json; then
    if [ "$(json "json_extract(j, '\$.ranks') = 16 AND json_extract(j, '\$.global_batch') = 16 * 60
             AND json_extract(j, '\$.iteration_s') > json_extract(j, '\$.compute_s')
             AND json_extract(j, '\$.compute_lo_s') <= json_extract(j, '\$.compute_s')
             AND json_extract(j, '\$.compute_s') <= json_extract(j, '\$.compute_hi_s')
             AND json_extract(j, '\$.device_roofline_s') <= json_extract(j, '\$.compute_s')
             AND json_extract(j, '\$.allreduce') = 'hierarchical' AND json_extract(j, '\$.fits')")" = 1 ]; then
        ok predict-system-json
    else fail predict-system-json "$(head -c 500 "$T/out")"; fi
fi
run predict-system-text 0 "$DLPERF" predict p1b1 --system dgx-a100 --nodes 4 &&
    expect predict-system-text "$T/out" "ops this CPU's efficiency on its roofline" &&
    expect predict-system-ar "$T/out" "allreduce .*hierarchical over nvlink3 and 8 x ib-hdr"
# fp16 moves half the bytes and runs on the tensor cores: faster than fp32 on the same device
run p-fp32 0 "$DLPERF" predict p1b1 --system dgx-a100 --json && f32=$(json "json_extract(j, '\$.compute_s')")
run p-fp16 0 "$DLPERF" predict p1b1 --system dgx-a100 --precision fp16 --json && f16=$(json "json_extract(j, '\$.compute_s')")
[ "$(sqlite3 :memory: "SELECT ${f16:-1} < ${f32:-0}")" = 1 ] && ok fp16-faster || fail fp16-faster "fp16 ${f16:-?} fp32 ${f32:-?}"
# a newer device is faster: H100 < A100 < P100 at the same batch
for d in p100-pcie-node dgx-a100 dgx-h100; do
    "$DLPERF" predict p1b1 --system "$d" --json >"$T/out" 2>/dev/null && eval "t_$(echo $d | tr - _)=$(json "json_extract(j, '\$.compute_s')")"
done
[ "$(sqlite3 :memory: "SELECT ${t_dgx_h100:-9} < ${t_dgx_a100:-0} AND ${t_dgx_a100:-9} < ${t_p100_pcie_node:-0}")" = 1 ] &&
    ok newer-devices-faster || fail newer-devices-faster "h100 ${t_dgx_h100:-?} a100 ${t_dgx_a100:-?} p100 ${t_p100_pcie_node:-?}"
# the host floor: an eager framework's host time per op and per step (a GPU's default), off with --no-host
run host-on 0 "$DLPERF" predict p3b1 --system dgx-h100 --json && on=$(json "json_extract(j, '\$.compute_s')") &&
    hop=$(json "json_extract(j, '\$.host_op_s')") && hstep=$(json "json_extract(j, '\$.host_step_s')")
run host-off 0 "$DLPERF" predict p3b1 --system dgx-h100 --no-host --json && off=$(json "json_extract(j, '\$.compute_s')") &&
    hoff=$(json "json_extract(j, '\$.host_op_s')")
[ "$(sqlite3 :memory: "SELECT ${hop:-0} > 0 AND ${hstep:-0} > 0 AND ${hoff:-1} = 0 AND ${on:-0} >= ${hstep:-1} + 29 * ${hop:-1}
                          AND ${off:-1} < ${on:-0}")" = 1 ] &&
    ok host-floor-default || fail host-floor-default "on ${on:-?} off ${off:-?} op ${hop:-?} step ${hstep:-?}"
run host-no-system 2 "$DLPERF" predict p3b1 --no-host && expect host-no-system "$T/err" "give --system NAME"
# a sheet's own figures: 1 ms an op, no step time: p3b1's 29 ops (each far under 1 ms on the device) take 29 ms,
# the host's time alone (the device waits for it; the two do not add up)
dev "$T/slowhost.json" 's/"name": "my-gpu"/"name": "slow-host-gpu"/; s/"memory_gb": 96,/"memory_gb": 96, "host_op_us": 1000, "host_conv_op_us": 1000, "host_step_us": 0,/; s/"sources": {/"sources": {"host_op_us": "ours", "host_conv_op_us": "ours", "host_step_us": "ours", /'
printf '{"format": "dlperf-system", "version": 1, "name": "slow-host-node", "title": "1 x slow-host-gpu", "device": "slow-host-gpu", "devices_per_node": 1, "inter": "ib-hdr", "nics_per_node": 1, "sources": {"devices_per_node": "ours", "nics_per_node": "ours"}}' >"$T/slowsys.json"
if run add-slow-host 0 "$DLPERF" systems add "$T/slowhost.json" && run add-slow-sys 0 "$DLPERF" systems add "$T/slowsys.json" &&
   run host-sheet 0 "$DLPERF" predict p3b1 --system slow-host-node --json; then
    [ "$(json "json_extract(j, '\$.compute_s') BETWEEN 0.029 AND 0.0291")" = 1 ] && ok host-floor-sheet ||
        fail host-floor-sheet "$(json "json_extract(j, '\$.compute_s')") s, expected 29 ms"
    run host-show 0 "$DLPERF" systems show slow-host-gpu && expect host-show "$T/out" "host *1000.0 us per op"
fi
# the step's own host time is spent once an iteration, also in a pipeline of micro-batches
dev "$T/stephost.json" 's/"name": "my-gpu"/"name": "step-host-gpu"/; s/"memory_gb": 96,/"memory_gb": 96, "host_op_us": 0, "host_conv_op_us": 0, "host_step_us": 1000,/; s/"sources": {/"sources": {"host_op_us": "ours", "host_conv_op_us": "ours", "host_step_us": "ours", /'
sed 's/slow-host/step-host/g' "$T/slowsys.json" >"$T/stepsys.json"
if run add-step-host 0 "$DLPERF" systems add "$T/stephost.json" && run add-step-sys 0 "$DLPERF" systems add "$T/stepsys.json" &&
   run step-pipe 0 "$DLPERF" predict p1b1 --system step-host-node --pipeline 1 --micro-batches 4 --batch 60 --json &&
   with=$(json "json_extract(j, '\$.single_device_s')") && wit=$(json "json_extract(j, '\$.iteration_s')") &&
   run step-pipe-off 0 "$DLPERF" predict p1b1 --system step-host-node --pipeline 1 --micro-batches 4 --batch 60 --no-host --json; then
    [ "$(json "abs(json_extract(j, '\$.single_device_s') + 0.001 - $with) < 1e-9
               AND abs(json_extract(j, '\$.iteration_s') + 0.001 - $wit) < 1e-9")" = 1 ] && ok host-step-once ||
        fail host-step-once "single device $with s, iteration $wit s; without: $(head -c 300 "$T/out")"
fi
dev "$T/badhost.json" 's/"memory_gb": 96,/"memory_gb": 96, "host_op_us": -1,/'
addbad host-negative 'field "host_op_us": expected a number >= 0' "$T/badhost.json"
run precision-missing 2 "$DLPERF" predict p1b1 --system titan --precision bf16 &&
    expect precision-missing "$T/err" "k20x has no bf16 peak in its spec sheet; it has: fp64, fp32"
run added-system 0 "$DLPERF" predict p1b1 --system my-cluster --nodes 3 && expect added-system "$T/out" "3 node(s) x 4 = 12 devices"
run nodes-needs-system 2 "$DLPERF" predict p1b1 --nodes 4 && expect nodes-needs-system "$T/err" "give --system NAME" &&
    one_line nodes-needs-system
run bad-precision 2 "$DLPERF" predict p1b1 --system dgx-a100 --precision fp8 && expect bad-precision "$T/err" "expected fp32, fp16"
run bad-algo 2 "$DLPERF" predict p1b1 --system dgx-a100 --nodes 2 --allreduce butterfly &&
    expect bad-algo "$T/err" "expected ring, tree, rec-doubling, rec-halving, hierarchical"
run unknown-system 2 "$DLPERF" predict p1b1 --system nosuch && expect unknown-system "$T/err" "no spec sheet named 'nosuch'"
# this machine data-parallel needs the communication calibration
run ranks-needs-comm 1 "$DLPERF" predict p1b1 --ranks 2 && expect ranks-needs-comm "$T/err" "calibrate --only comm"
# a system of this machine ("calibrated" device) prices from the calibration itself
printf '{"format": "dlperf-system", "version": 1, "name": "here-x4", "title": "this machine x N, HDR", "device": "calibrated", "devices_per_node": 1, "inter": "ib-hdr", "sources": {"devices_per_node": "this machine"}}' >"$T/here.json"
if run add-calibrated 0 "$DLPERF" systems add "$T/here.json" && run calibrated-system 0 "$DLPERF" predict p1b1 --system here-x4 --json &&
   here=$(json "json_extract(j, '\$.compute_s')") && run local-predict 0 "$DLPERF" predict p1b1 --json; then
    local_s=$(json "json_extract(j, '\$.iteration_s')")
    [ "$(sqlite3 :memory: "SELECT abs($here - $local_s) < 1e-9 * $local_s")" = 1 ] && ok calibrated-device-is-this-machine ||
        fail calibrated-device-is-this-machine "system $here, predict $local_s"
fi

# ---- model parallel: seed 003's SUMMA example and a pipeline ----
printf '{"format": "dlperf-device", "version": 1, "name": "v100-seed003", "title": "seed 003: 15 TFLOP/s", "kind": "gpu", "year": 2017, "peak_tflops": {"fp32": 15}, "memory_gb": 12, "memory_gbs": 900, "sources": {"peak_tflops": "seed 003", "memory_gb": "seed 003", "memory_gbs": "seed 003"}}' >"$T/s3d.json"
printf '{"format": "dlperf-system", "version": 1, "name": "grid100", "title": "100 devices, 300 GB/s", "device": "v100-seed003", "devices_per_node": 100, "intra": "nvlink3", "inter": "ib-hdr", "sources": {"devices_per_node": "seed 003 example"}}' >"$T/s3s.json"
"$DLPERF" systems add "$T/s3d.json" >/dev/null && "$DLPERF" systems add "$T/s3s.json" >/dev/null
if run summa 0 "$DLPERF" predict --summa 2000 --system grid100 --json; then
    [ "$(json "json_extract(j, '\$.grid') = 10 AND abs(json_extract(j, '\$.beta_needed_Bps') - 300e9) < 1 AND json_extract(j, '\$.compute_bound')")" = 1 ] &&
        ok summa-seed003 || fail summa-seed003 "$(head -c 400 "$T/out")"
fi
run summa-model 2 "$DLPERF" predict p1b1 --summa 2000 --system grid100 && expect summa-model "$T/err" "give no MODEL"
if run pipeline 0 "$DLPERF" predict p1b1 --system dgx-a100 --pipeline 4 --micro-batches 12 --batch 60 --json; then
    [ "$(json "json_extract(j, '\$.stages') = 4 AND json_extract(j, '\$.micro_batch') = 5
              AND abs(json_extract(j, '\$.bubble_fraction') - 3.0 / 15) < 1e-9
              AND json_extract(j, '\$.iteration_s') < json_extract(j, '\$.single_device_s')")" = 1 ] &&
        ok pipeline-json || fail pipeline-json "$(head -c 500 "$T/out")"
fi
run pipeline-uneven 2 "$DLPERF" predict p1b1 --system dgx-a100 --pipeline 4 --micro-batches 7 --batch 60 &&
    expect pipeline-uneven "$T/err" "must split into equal micro-batches"

# ---- sweep ----
if run sweep-csv 0 "$DLPERF" sweep p1b1 --system dgx-a100 --nodes 1,2,4,...,64 --csv; then
    [ "$(wc -l <"$T/out")" -eq 8 ] && ok sweep-csv-rows || fail sweep-csv-rows "$(wc -l <"$T/out") lines"
    head -1 "$T/out" | grep -q '^model,system,precision,scaling,allreduce,nodes,devices' && ok sweep-csv-header ||
        fail sweep-csv-header "$(head -1 "$T/out")"
    # speedup grows with the nodes, efficiency stays within (0, 1]
    awk -F, 'NR > 1 { if ($15 <= prev || $16 > 1.000001 || $16 <= 0) bad = 1; prev = $15 } END { exit bad }' "$T/out" &&
        ok sweep-speedup-monotone || fail sweep-speedup-monotone "$(cut -d, -f6,15,16 "$T/out" | tr '\n' ' ')"
fi
if run sweep-json 0 "$DLPERF" sweep p1b1 --system titan --nodes 1-100 --allreduce all --json; then
    [ "$(json "json_extract(j, '\$.configurations')")" = 500 ] && ok sweep-json-count ||
        fail sweep-json-count "$(json "json_extract(j, '\$.configurations')")"
fi
if run sweep-strong 0 "$DLPERF" sweep p1b1 --system dgx-a100 --nodes 1,2,4 --global-batch 256 --json; then
    [ "$(json "json_extract(j, '\$.points[0].batch_per_device') = 32 AND json_extract(j, '\$.points[2].batch_per_device') = 8
              AND json_extract(j, '\$.points[2].global_batch') = 256")" = 1 ] && ok sweep-strong-split ||
        fail sweep-strong-split "$(head -c 600 "$T/out")"
fi
if run sweep-plot 0 "$DLPERF" sweep p1b1 --system dgx-a100 --nodes 1,2,4,...,4096 --plot "$T/p.svg"; then
    grep -q '<svg' "$T/p.svg" 2>/dev/null && ok sweep-plot-svg || fail sweep-plot-svg "no SVG written"
    expect sweep-table "$T/out" "speedup"
fi
run sweep-no-system 2 "$DLPERF" sweep p1b1 && expect sweep-no-system "$T/err" "--system NAME is required"
run sweep-bad-nodes 2 "$DLPERF" sweep p1b1 --system dgx-a100 --nodes 1,x && expect sweep-bad-nodes "$T/err" "'x' is not a node count"
run sweep-dots 2 "$DLPERF" sweep p1b1 --system dgx-a100 --nodes 4,... && expect sweep-dots "$T/err" "continues the two counts"
run sweep-two-scalings 2 "$DLPERF" sweep p1b1 --system dgx-a100 --batch 4 --global-batch 64 && expect sweep-two-scalings "$T/err" "choose one"
exit 0
