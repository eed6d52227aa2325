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
    [ "$(count device)" -ge 25 ] && ok systems-devices || fail systems-devices "$(count device) devices"
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
# --csv: the list and show as CSV, read back by sqlite3's own CSV reader (csvq; RFC 4180:
# titles with commas and quotes, as epyc-9654's and dgx-a100's, come back whole) against the JSON
if [ -s "$T/list.json" ] && run systems-csv 0 "$DLPERF" systems --csv; then
    cp "$T/out" "$T/list.csv"
    [ "$(head -1 "$T/list.csv")" = "name,kind,title,origin" ] && ok systems-csv-header ||
        fail systems-csv-header "$(head -1 "$T/list.csv")"
    # a row per sheet, each with the JSON's fields exactly
    [ "$(csvq "$T/list.csv" "$T/list.json" "(SELECT count(*) FROM c) = json_array_length(j) AND json_array_length(j) > 0
             AND (SELECT count(*) FROM c JOIN json_each(j) e ON json_extract(e.value, '\$.name') = c.name
                  AND json_extract(e.value, '\$.kind') = c.kind AND json_extract(e.value, '\$.title') = c.title
                  AND json_extract(e.value, '\$.origin') = c.origin) = json_array_length(j)")" = 1 ] &&
        ok systems-csv-rows || fail systems-csv-rows "$(wc -l <"$T/list.csv") lines; $(head -c 300 "$T/list.csv")"
    grep -q '^epyc-9654,device,"AMD EPYC 9654 ""Genoa"" (96 cores, 12x DDR5-4800)",' "$T/list.csv" &&
        ok systems-csv-quoted || fail systems-csv-quoted "$(grep '^epyc-9654' "$T/list.csv")"
fi
showcsv() { # showcsv NAME TEST EXPR: show NAME as CSV and JSON, EXPR over them (c, j) true
    if run "$2" 0 "$DLPERF" systems show "$1" --csv && cp "$T/out" "$T/show.csv" &&
       run "$2" 0 "$DLPERF" systems show "$1" --json; then
        [ "$(wc -l <"$T/show.csv")" = 2 ] && [ "$(csvq "$T/show.csv" "$T/out" "(SELECT count(*) FROM c) = 1 AND
            (SELECT $3 FROM c)")" = 1 ] && ok "$2" || fail "$2" "$(cat "$T/show.csv")"
    fi
}
showcsv v100-pcie-32gb systems-show-csv-device "name = 'v100-pcie-32gb' AND kind = 'device' AND device_kind = 'gpu'
    AND CAST(peak_fp32_flops_per_s AS REAL) = json_extract(j, '\$.peak_tflops.fp32') * 1e12
    AND CAST(peak_fp16_flops_per_s AS REAL) = json_extract(j, '\$.peak_tflops.fp16') * 1e12 AND peak_bf16_flops_per_s = ''
    AND CAST(memory_bytes AS REAL) = json_extract(j, '\$.memory_gb') * 1e9
    AND CAST(mem_bw_bytes_per_s AS REAL) = json_extract(j, '\$.memory_gbs') * 1e9
    AND CAST(boost_clock_hz AS REAL) = json_extract(j, '\$.boost_clock_mhz') * 1e6
    AND CAST(l2_bytes AS REAL) = json_extract(j, '\$.l2_mb') * 1048576 AND compute_capability = '7.0'
    AND aliases = json_extract(j, '\$.aliases[0]') AND origin = json_extract(j, '\$.origin')"
showcsv nvlink3 systems-show-csv-link "kind = 'interconnect' AND scope = json_extract(j, '\$.scope')
    AND CAST(bandwidth_bytes_per_s AS REAL) = json_extract(j, '\$.bandwidth_gbs') * 1e9
    AND abs(CAST(latency_s AS REAL) - json_extract(j, '\$.latency_us') * 1e-6) < 1e-15 AND title = json_extract(j, '\$.title')"
showcsv dgx-a100 systems-show-csv-system "kind = 'system' AND title = json_extract(j, '\$.title')
    AND device = json_extract(j, '\$.device') AND CAST(devices_per_node AS INTEGER) = json_extract(j, '\$.devices_per_node')
    AND intra = json_extract(j, '\$.intra') AND inter = json_extract(j, '\$.inter')
    AND CAST(nics_per_node AS INTEGER) = json_extract(j, '\$.nics_per_node') AND nodes = ''
    AND CAST(node_peak_fp32_flops_per_s AS REAL) > 0"
run systems-csv-json 2 "$DLPERF" systems --csv --json && expect systems-csv-json "$T/err" "--csv and --json are two formats; choose one" &&
    one_line systems-csv-json
run systems-show-csv-json 2 "$DLPERF" systems show dgx-a100 --json --csv && expect systems-show-csv-json "$T/err" "choose one"
run systems-profile-csv 2 "$DLPERF" systems profile t4 --csv && expect systems-profile-csv "$T/err" "--csv goes with the list"
for n in k20x p100-sxm2 v100-sxm2-32gb a100-sxm4-80gb h100-sxm5 h200-sxm mi250x epyc-9654 pcie3 pcie4 pcie5 nvlink2 \
         nvlink3 nvlink4 ib-fdr ib-edr ib-hdr ib-ndr slingshot-11 ethernet-100g titan dgx-a100 frontier \
         p4 t4 v100-pcie-32gb a100-pcie-40gb a100-pcie-80gb l4 m40 titan-x-maxwell titan-x-pascal titan-xp gtx-1080 \
         gtx-1080-ti k40 k80 m60 p100-pcie-16gb v100-sxm2-16gb; do
    "$DLPERF" systems show "$n" >/dev/null 2>&1 || fail "systems-has-$n" "no spec sheet '$n'"
done
ok systems-required-names
run systems-show 0 "$DLPERF" systems show dgx-a100 && expect systems-show "$T/out" "8 x a100-sxm4-80gb"
run systems-show-unknown 2 "$DLPERF" systems show nosuch && expect systems-show-unknown "$T/err" "no spec sheet named 'nosuch'" &&
    one_line systems-show-unknown
run systems-verb 2 "$DLPERF" systems frob && expect systems-verb "$T/err" "expected show NAME, add FILE"

# every built-in GPU sheet carries the architecture fields (the peak check ran when it loaded)
bad=""
for n in $(sqlite3 :memory: "SELECT json_extract(value, '\$.name') FROM json_each(readfile('$T/list.json'))
                             WHERE json_extract(value, '\$.kind') = 'device'"); do
    "$DLPERF" systems show "$n" --json >"$T/dj" 2>/dev/null || { bad="$bad $n"; continue; }
    [ "$(sqlite3 :memory: "SELECT json_extract(j, '\$.kind') = 'cpu' OR (json_extract(j, '\$.arch') IS NOT NULL
             AND json_extract(j, '\$.sm_count') > 0 AND json_extract(j, '\$.fp32_lanes_per_sm') > 0
             AND json_extract(j, '\$.boost_clock_mhz') > 0 AND json_extract(j, '\$.l2_mb') > 0
             AND json_extract(j, '\$.memory_type') IS NOT NULL AND json_extract(j, '\$.tdp_w') > 0)
             FROM (SELECT readfile('$T/dj') AS j)")" = 1 ] || bad="$bad $n"
done
[ -z "$bad" ] && ok systems-gpu-arch-fields || fail systems-gpu-arch-fields "$bad"
if run systems-show-arch 0 "$DLPERF" systems show v100-pcie-32gb; then
    expect systems-show-arch "$T/out" "arch *volta, compute capability 7.0"
    expect systems-show-units "$T/out" "units *80 SMs x 64 FP32 lanes (0 of them also issue INT32) x 2 x 1380 MHz = 14.13 TFLOP/s"
    expect systems-show-clocks "$T/out" "clocks *1380 MHz boost, 1245 MHz base"
    expect systems-show-l2 "$T/out" "L2 *6.00 MiB"
    expect systems-show-memtype "$T/out" "memory *32 GB HBM2 at 900 GB/s"
    expect systems-show-tdp "$T/out" "power *250 W"
    expect systems-show-aliases "$T/out" 'aliases *"Tesla V100-PCIE-32GB"'
fi
run systems-show-cu 0 "$DLPERF" systems show mi250x && expect systems-show-cu "$T/out" "units *220 CUs x 64 FP32 lanes"
if run systems-show-arch-json 0 "$DLPERF" systems show k80 --json; then
    [ "$(json "json_extract(j, '\$.arch') = 'kepler' AND json_extract(j, '\$.compute_capability') = 3.7
              AND json_extract(j, '\$.sm_count') = 13 AND json_extract(j, '\$.l2_mb') = 1.5 AND json_extract(j, '\$.tdp_w') = 150
              AND json_extract(j, '\$.aliases[0]') = 'k80' AND json_extract(j, '\$.sources.sm_count') LIKE '%2496%'")" = 1 ] &&
        ok systems-show-arch-json || fail systems-show-arch-json "$(head -c 400 "$T/out")"
fi

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
# the architecture fields: a valid sheet with all of them, then each one bad
adev() { # adev FILE [SED]: a valid device sheet with every architecture field, edited by SED
    printf '{"format": "dlperf-device", "version": 1, "name": "arch-gpu", "title": "Arch GPU", "kind": "gpu", "year": 2024, "peak_tflops": {"fp32": 50}, "memory_gb": 96, "memory_gbs": 3000, "arch": "hopper", "compute_capability": 9.0, "sm_count": 100, "fp32_lanes_per_sm": 128, "fp32_lanes_shared_int32": 0, "issue_lanes_per_sm": 128, "boost_clock_mhz": 1953, "base_clock_mhz": 1500, "l2_mb": 60, "memory_type": "HBM3", "tdp_w": 700, "aliases": ["Arch GPU 96GB"], "sources": {"peak_tflops": "d", "memory_gb": "d", "memory_gbs": "d", "arch": "d", "compute_capability": "d", "sm_count": "d", "fp32_lanes_per_sm": "d", "fp32_lanes_shared_int32": "d", "issue_lanes_per_sm": "d", "boost_clock_mhz": "d", "base_clock_mhz": "d", "l2_mb": "d", "memory_type": "d", "tdp_w": "d", "aliases": "d"}}\n' |
        sed "${2:-}" >"$1"
}
adev "$T/a.json" 's/"arch-gpu"/"arch-gpu-near"/; s/"fp32": 50/"fp32": 46/; s/Arch GPU 96GB/Arch GPU near/'
run add-arch-near 0 "$DLPERF" systems add "$T/a.json" && ok add-arch-peak-within-10pct
adev "$T/a.json" 's/"hopper"/"fermi"/'
addbad arch 'field "arch": .fermi.: expected one of kepler, maxwell, pascal, volta, turing, ampere, ada, hopper, blackwell, cdna, cdna2, cdna3, x86' "$T/a.json"
adev "$T/a.json" 's/"compute_capability": 9.0/"compute_capability": 7.0/'
addbad cc-arch 'field "compute_capability": 7 does not belong to hopper; expected 9.0 to 9.0' "$T/a.json"
adev "$T/a.json" 's/"hopper"/"cdna3"/'
addbad cc-amd 'field "compute_capability": .cdna3. is not an NVIDIA architecture' "$T/a.json"
adev "$T/a.json" 's/"compute_capability": 9.0/"compute_capability": 0.5/'
addbad cc-range 'field "compute_capability": expected a number >= 1 and <= 20' "$T/a.json"
adev "$T/a.json" 's/"arch": "hopper", //; s/"arch": "d", //'
addbad cc-no-arch 'field "compute_capability": needs "arch"' "$T/a.json"
adev "$T/a.json" 's/"sm_count": 100/"sm_count": 2.5/'
addbad sm-count 'field "sm_count": expected an integer in 1..1024' "$T/a.json"
adev "$T/a.json" 's/"sm_count": 100/"sm_count": 0/'
addbad sm-count-zero 'field "sm_count": expected a number >= 1 and <= 1024' "$T/a.json"
adev "$T/a.json" 's/"fp32_lanes_per_sm": 128/"fp32_lanes_per_sm": 0/'
addbad lanes 'field "fp32_lanes_per_sm": expected a number >= 1 and <= 1024' "$T/a.json"
adev "$T/a.json" 's/"fp32_lanes_shared_int32": 0/"fp32_lanes_shared_int32": 200/'
addbad shared 'field "fp32_lanes_shared_int32": 200 is more than fp32_lanes_per_sm 128; expected 0 to 128' "$T/a.json"
adev "$T/a.json" 's/"fp32_lanes_shared_int32": 0/"fp32_lanes_shared_int32": -1/'
addbad shared-negative 'field "fp32_lanes_shared_int32": expected a number >= 0' "$T/a.json"
adev "$T/a.json" 's/"fp32_lanes_per_sm": 128, //; s/"sm_count": 100, //'
addbad shared-no-lanes 'field "fp32_lanes_shared_int32": needs "fp32_lanes_per_sm"' "$T/a.json"
adev "$T/a.json" 's/"issue_lanes_per_sm": 128/"issue_lanes_per_sm": 100/'
addbad issue-lanes 'field "issue_lanes_per_sm": 100 is not a whole number of warps; expected schedulers x dispatch units x 32' "$T/a.json"
adev "$T/a.json" 's/"issue_lanes_per_sm": 128/"issue_lanes_per_sm": 16/'
addbad issue-lanes-range 'field "issue_lanes_per_sm": expected a number >= 32 and <= 4096' "$T/a.json"
adev "$T/a.json" 's/"fp32_lanes_per_sm": 128, //; s/"sm_count": 100, //; s/"fp32_lanes_shared_int32": 0, //'
addbad issue-no-lanes 'field "issue_lanes_per_sm": needs "fp32_lanes_per_sm"' "$T/a.json"
adev "$T/a.json" 's/"tdp_w": 700/"tdp_w": 700, "fp32_gemm_bound": 1.5/; s/"tdp_w": "d"/"tdp_w": "d", "fp32_gemm_bound": "d"/'
addbad gemm-bound 'field "fp32_gemm_bound": expected a number > 0 and <= 1' "$T/a.json"
adev "$T/a.json" 's/"tdp_w": 700/"tdp_w": 700, "fp32_gemm_bound": 0.6/'
addbad gemm-bound-source 'field "sources.fp32_gemm_bound": missing; every figure cites its public source' "$T/a.json"
adev "$T/a.json" 's/"boost_clock_mhz": 1953/"boost_clock_mhz": -5/'
addbad boost 'field "boost_clock_mhz": expected a number > 0 and <= 10000' "$T/a.json"
adev "$T/a.json" 's/"base_clock_mhz": 1500/"base_clock_mhz": 2500/'
addbad base 'field "base_clock_mhz": 2500 MHz is above boost_clock_mhz 1953; expected base <= boost' "$T/a.json"
adev "$T/a.json" 's/"l2_mb": 60/"l2_mb": 0/'
addbad l2 'field "l2_mb": expected a number > 0' "$T/a.json"
adev "$T/a.json" 's/"HBM3"/"HBM4"/'
addbad memory-type 'field "memory_type": .HBM4.: expected one of GDDR5, GDDR5X, GDDR6, GDDR6X, HBM, HBM2, HBM2e, HBM3, HBM3e, DDR4, DDR5' "$T/a.json"
adev "$T/a.json" 's/"tdp_w": 700/"tdp_w": -1/'
addbad tdp 'field "tdp_w": expected a number > 0 and <= 10000' "$T/a.json"
adev "$T/a.json" 's/\["Arch GPU 96GB"\]/"Arch GPU 96GB"/'
addbad aliases-not-array 'field "aliases": expected an array of 1 to 8 names, each 1 to 63 characters' "$T/a.json"
adev "$T/a.json" 's/\["Arch GPU 96GB"\]/[]/'
addbad aliases-empty 'field "aliases": expected an array of 1 to 8 names' "$T/a.json"
adev "$T/a.json" 's/\["Arch GPU 96GB"\]/["a", "b", "c", "d", "e", "f", "g", "h", "i"]/'
addbad aliases-nine 'field "aliases": expected an array of 1 to 8 names' "$T/a.json"
adev "$T/a.json" "s/Arch GPU 96GB/$(printf '%064d' 0)/"
addbad aliases-long 'field "aliases": expected an array of 1 to 8 names, each 1 to 63 characters' "$T/a.json"
adev "$T/a.json" 's/\["Arch GPU 96GB"\]/["Arch GPU", "ARCH gpu"]/'
addbad aliases-twice 'field "aliases": .ARCH gpu. given twice' "$T/a.json"
adev "$T/a.json" 's/\["Arch GPU 96GB"\]/[" Arch GPU"]/'
addbad aliases-space 'field "aliases": . Arch GPU.: no leading or trailing spaces' "$T/a.json"
adev "$T/a.json" 's/"tdp_w": "d", //'
addbad arch-source 'field "sources.tdp_w": missing; every figure cites its public source' "$T/a.json"
adev "$T/a.json" 's/"fp32": 50/"fp32": 40/'
addbad peak-check 'field "peak_tflops.fp32": 40 TFLOP/s is not within 10% of sm_count x fp32_lanes_per_sm x 2 x boost_clock_mhz = 100 x 128 x 2 x 1953 MHz = 50 TFLOP/s' "$T/a.json"
adev "$T/a.json" 's/"fp32": 50/"fp32": 50, "fp16": 100/; s/"boost_clock_mhz": 1953/"boost_clock_mhz": 1530/'
addbad peak-check-clock 'field "peak_tflops.fp32": 50 TFLOP/s is not within 10% of .* = 39.2 TFLOP/s' "$T/a.json"
adev "$T/a.json"
if run add-arch-good 0 "$DLPERF" systems add "$T/a.json"; then
    run add-arch-show 0 "$DLPERF" systems show arch-gpu && expect add-arch-show "$T/out" 'units *100 SMs x 128 FP32 lanes' &&
        expect add-arch-show-issue "$T/out" 'issue *128 lanes a clock: a GEMM reaches at most 0.92 of the fp32 peak' &&
        expect add-arch-show-aliases "$T/out" 'aliases *"Arch GPU 96GB"'
fi

dev "$T/good.json"
if run add-good 0 "$DLPERF" systems add "$T/good.json"; then
    expect add-good "$T/out" "added device 'my-gpu'"
    run add-listed 0 "$DLPERF" systems && expect add-listed "$T/out" "my-gpu .*(added)"
    run add-again 2 "$DLPERF" systems add "$T/good.json" && expect add-again "$T/err" "--replace replaces it"
    run add-replace 0 "$DLPERF" systems add "$T/good.json" --replace
fi
printf '{"format": "dlperf-system", "version": 1, "name": "my-cluster", "title": "4 x my-gpu per node, HDR", "device": "my-gpu", "devices_per_node": 4, "intra": "nvlink4", "inter": "ib-hdr", "nics_per_node": 4, "sources": {"devices_per_node": "ours", "nics_per_node": "ours"}}' >"$T/cluster.json"
run add-system 0 "$DLPERF" systems add "$T/cluster.json" && expect add-system "$T/out" "added system 'my-cluster'"

# ---- with no GPU evidence (--no-profiles: not the built-in profiles either), predictions need this
# machine's calibration (the efficiency source) ----
run predict-system-uncalibrated 1 "$DLPERF" predict p1b1 --system dgx-a100 --no-profiles &&
    expect predict-system-uncalibrated "$T/err" "nothing prices a100-sxm4-80gb at fp32: no GPU measurements"
run calibrate 0 "$DLPERF" calibrate --quick --only peak,memory,gemm-sweep,eltwise,cnn-sweep

if run predict-system 0 "$DLPERF" predict p1b1 --system dgx-a100 --nodes 2 --precision fp16 --no-profiles --json; then
    if [ "$(json "json_extract(j, '\$.ranks') = 16 AND json_extract(j, '\$.global_batch') = 16 * 60
             AND json_extract(j, '\$.iteration_s') > json_extract(j, '\$.compute_s')
             AND json_extract(j, '\$.compute_lo_s') <= json_extract(j, '\$.compute_s')
             AND json_extract(j, '\$.compute_s') <= json_extract(j, '\$.compute_hi_s')
             AND json_extract(j, '\$.device_roofline_s') <= json_extract(j, '\$.compute_s')
             AND json_extract(j, '\$.allreduce') = 'hierarchical' AND json_extract(j, '\$.fits')")" = 1 ]; then
        ok predict-system-json
    else fail predict-system-json "$(head -c 500 "$T/out")"; fi
fi
run predict-system-text 0 "$DLPERF" predict p1b1 --system dgx-a100 --nodes 4 --no-profiles &&
    expect predict-system-text "$T/out" "ops this CPU's efficiency on its roofline" &&
    expect predict-system-ar "$T/out" "allreduce .*hierarchical over nvlink3 and 8 x ib-hdr"
# fp16 moves half the bytes and runs on the tensor cores: faster than fp32 on the same device
run p-fp32 0 "$DLPERF" predict p1b1 --system dgx-a100 --no-profiles --json && f32=$(json "json_extract(j, '\$.compute_s')")
run p-fp16 0 "$DLPERF" predict p1b1 --system dgx-a100 --precision fp16 --no-profiles --json && f16=$(json "json_extract(j, '\$.compute_s')")
[ "$(sqlite3 :memory: "SELECT ${f16:-1} < ${f32:-0}")" = 1 ] && ok fp16-faster || fail fp16-faster "fp16 ${f16:-?} fp32 ${f32:-?}"
# a newer device is faster: H100 < A100 < P100 at the same batch (from this CPU's efficiency;
# from the built-in profiles p1b1 is not: docs/gpu-pricing.md, 'What it does not know')
for d in p100-pcie-node dgx-a100 dgx-h100; do
    "$DLPERF" predict p1b1 --system "$d" --no-profiles --json >"$T/out" 2>/dev/null && eval "t_$(echo $d | tr - _)=$(json "json_extract(j, '\$.compute_s')")"
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
# ---- seed 000's figures of merit for a proposed system ----
# Titan against itself at the reference's 14,000 instances, one per K20X: every throughput
# FOM against Titan as priced is (t / t) x (14,000 / 14,000) = 1, and the group means of ones
# are one (the ResNet rule differs: 50 instances on 2% each, not the 5 on 20%). GoogLeNet at
# batch 128 fits the K20X's 6 GB, as the reference ran it, with activations counted as the
# framework frees them.
if run fom-titan 0 "$DLPERF" fom --system titan --nodes 14000 --per-device 1 --json; then
    [ "$(json "(SELECT count(*) FROM json_each(json_extract(j, '\$.benchmarks'))
               WHERE json_extract(value, '\$.group') != 'resnet' AND json_extract(value, '\$.proposed.fits')
                 AND abs(json_extract(value, '\$.fom_vs_titan_priced.fom') - 1) < 1e-9)")" = 7 ] &&
        ok fom-titan-reproduces-itself || fail fom-titan-reproduces-itself "$(head -c 800 "$T/out")"
    [ "$(json "json_extract(j, '\$.benchmarks[3].benchmark') = 'googlenet'
               AND json_extract(j, '\$.benchmarks[3].proposed.fits')
               AND json_extract(j, '\$.benchmarks[3].proposed.memory_per_device_bytes') < 6e9
               AND json_extract(j, '\$.groups[1].fom_vs_titan_priced.fom') = 1")" = 1 ] &&
        ok fom-titan-memory || fail fom-titan-memory "$(head -c 400 "$T/out")"
    [ "$(json "abs(json_extract(j, '\$.groups[0].fom_vs_titan_priced.fom') - 1) < 1e-9
               AND abs(json_extract(j, '\$.groups[2].fom_vs_titan_priced.fom') - 1) < 1e-9
               AND json_extract(j, '\$.groups[1].weight') = 1 AND json_extract(j, '\$.groups[0].weight') = 5")" = 1 ] &&
        ok fom-titan-groups || fail fom-titan-groups "$(head -c 400 "$T/out")"
fi
if run fom-summit 0 "$DLPERF" fom --system summit --json; then
    # each benchmark's FOM is the seed's rule applied to its own fields
    [ "$(json "(SELECT count(*) FROM json_each(json_extract(j, '\$.benchmarks'))
               WHERE json_extract(value, '\$.group') != 'resnet'
                 AND json_extract(value, '\$.proposed.instances') >= 27648
                 AND abs(json_extract(value, '\$.fom_vs_seed.fom') / (json_extract(value, '\$.titan_seed')
                     / json_extract(value, '\$.proposed.time') * json_extract(value, '\$.proposed.instances') / 14000.0)
                     - 1) < 1e-9
                 AND json_extract(value, '\$.fom_vs_seed.lo') <= json_extract(value, '\$.fom_vs_seed.fom')
                 AND json_extract(value, '\$.fom_vs_seed.fom') <= json_extract(value, '\$.fom_vs_seed.hi'))")" = 7 ] &&
        ok fom-summit-rule || fail fom-summit-rule "$(head -c 800 "$T/out")"
    # ResNet-50: 50 instances of 552 V100s (2% of 27,648), (t_ref / t) x 10
    [ "$(json "json_extract(j, '\$.benchmarks[7].proposed.instances') = 50
               AND json_extract(j, '\$.benchmarks[7].proposed.devices_per_instance') = 552
               AND abs(json_extract(j, '\$.benchmarks[7].fom_vs_seed.fom') / (10.0 *
                   json_extract(j, '\$.benchmarks[7].titan_priced.time') / json_extract(j, '\$.benchmarks[7].proposed.time'))
                   - 1) < 1e-9")" = 1 ] && ok fom-summit-resnet || fail fom-summit-resnet "$(head -c 800 "$T/out")"
    # the overall: the weighted mean 5, 1, 2, 5 of the groups
    [ "$(json "abs(json_extract(j, '\$.overall_vs_seed.fom') - (5 * json_extract(j, '\$.groups[0].fom_vs_seed.fom')
               + json_extract(j, '\$.groups[1].fom_vs_seed.fom') + 2 * json_extract(j, '\$.groups[2].fom_vs_seed.fom')
               + 5 * json_extract(j, '\$.groups[3].fom_vs_seed.fom')) / 13) < 1e-9 * json_extract(j, '\$.overall_vs_seed.fom')")" = 1 ] &&
        ok fom-summit-overall || fail fom-summit-overall "$(head -c 400 "$T/out")"
fi
if run predict-system-csv 0 "$DLPERF" predict resnet50 --system dgx-a100 --nodes 2 --csv; then
    [ "$(wc -l <"$T/out")" = 2 ] && ok predict-system-csv-rows || fail predict-system-csv-rows "$(cat "$T/out")"
    expect predict-system-csv-row "$T/out" "^resnet50,dgx-a100,a100-sxm4-80gb,fp32,2,16,32,512,"
fi
# the optimized run: ResNet-50's FOM times seed 000's accuracy term, the rest as the base run
if run fom-base 0 "$DLPERF" fom --system summit --json; then
    base=$(json "json_extract(j, '\$.benchmarks[7].fom_vs_seed.fom')")
    alex=$(json "json_extract(j, '\$.benchmarks[2].fom_vs_seed.fom')")
    [ "$(json "json_extract(j, '\$.run') = 'base' AND json_extract(j, '\$.resnet_accuracy_pct') IS NULL")" = 1 ] &&
        ok fom-base-run || fail fom-base-run "$(head -c 300 "$T/out")"
    if run fom-optimized 0 "$DLPERF" fom --system summit --optimized --resnet-accuracy 80 --json; then
        term=$(sqlite3 :memory: "SELECT 1 + (80 - 74.9) * (80 - 74.9) * (80 - 74.9) / ((100 - 74.9) * (100 - 74.9) * (100 - 74.9))")
        [ "$(json "json_extract(j, '\$.run') = 'optimized' AND
                   abs(json_extract(j, '\$.benchmarks[7].fom_vs_seed.fom') - $base * $term) < 1e-9 * $base AND
                   abs(json_extract(j, '\$.benchmarks[2].fom_vs_seed.fom') - $alex) < 1e-9 * $alex")" = 1 ] &&
            ok fom-optimized-term || fail fom-optimized-term "base $base, term $term: $(head -c 600 "$T/out")"
    fi
fi
run fom-optimized-precision 0 "$DLPERF" fom --system summit --precision fp16 &&
    expect fom-optimized-precision "$T/out" "fp16, optimized run" &&
    expect fom-optimized-assumed "$T/out" "accuracy term 1.0000, from a top-1 accuracy of 74.90% (assumed"
run fom-accuracy-bad 2 "$DLPERF" fom --system summit --resnet-accuracy 70 &&
    expect fom-accuracy-bad "$T/err" "from 74.9 (the least" && one_line fom-accuracy-bad
if run fom-csv 0 "$DLPERF" fom --system dgx-a100 --nodes 2 --csv; then
    [ "$(wc -l <"$T/out")" = 14 ] && ok fom-csv-rows || fail fom-csv-rows "$(cat "$T/out")"
    expect fom-csv-header "$T/out" "^system,device,precision,benchmark,group,unit,instances"
    expect fom-csv-devices "$T/out" "^dgx-a100,a100-sxm4-80gb,fp32,alexnet,convnet,s/batch,16,"
fi
if run fom-text 0 "$DLPERF" fom --system dgx-a100; then
    expect fom-text-overall "$T/out" "^overall"
    expect fom-text-titan "$T/out" "^Titan as dlperf prices it"
fi
sed 's/"dlperf-system"/"dlperf-device"/' systems/summit.json >"$T/notsystem.json"
run fom-file-not-system 2 "$DLPERF" fom --system "$T/notsystem.json" &&
    expect fom-file-not-system "$T/err" "notsystem.json: field \"format\": expected \"dlperf-system\"" && one_line fom-file-not-system
sed 's/"nodes": 4608/"nodes": 2/' systems/summit.json >"$T/small-summit.json"
run fom-file 0 "$DLPERF" fom --system "$T/small-summit.json" && expect fom-file "$T/out" "2 nodes x 6 = 12 devices"
run fom-no-system 2 "$DLPERF" fom && expect fom-no-system "$T/err" "--system NAME|FILE is required"
run fom-unknown 2 "$DLPERF" fom --system nosuch && expect fom-unknown "$T/err" "no spec sheet named 'nosuch'"
run fom-bad-per-device 2 "$DLPERF" fom --system summit --per-device 0 && expect fom-bad-per-device "$T/err" "--per-device"
# ---- seed 000's suite run on this machine (quick: every benchmark, a few steps) ----
if run suite-quick 0 "$DLPERF" suite --quick --json; then
    cp "$T/out" "$T/suite.json"
    [ "$(json "json_extract(j, '\$.mode') = 'quick' AND NOT json_extract(j, '\$.valid_fom')
               AND json_array_length(json_extract(j, '\$.benchmarks')) = 8 AND json_extract(j, '\$.overall_fom') > 0")" = 1 ] &&
        ok suite-quick-labelled || fail suite-quick-labelled "$(head -c 600 "$T/out")"
    # every benchmark ran its instances, each FOM is the seed's rule on the stored figures
    [ "$(json "(SELECT count(*) FROM json_each(json_extract(j, '\$.benchmarks'))
               WHERE json_extract(value, '\$.instances') >= 1
                 AND json_array_length(json_extract(value, '\$.instance_time_s')) = json_extract(value, '\$.instances')
                 AND json_extract(value, '\$.time_s') > 0 AND json_extract(value, '\$.fom') > 0
                 AND (json_extract(value, '\$.benchmark') = 'resnet50' OR abs(json_extract(value, '\$.fom')
                      / (json_extract(value, '\$.reference_s') / json_extract(value, '\$.time_s')
                         * json_extract(value, '\$.instances') / 14000.0) - 1) < 1e-6))")" = 8 ] &&
        ok suite-quick-foms || fail suite-quick-foms "$(head -c 900 "$T/out")"
    [ "$(json "json_extract(j, '\$.benchmarks[7].projected') AND json_extract(j, '\$.benchmarks[0].accuracy_name') = 'test correlation'
               AND json_extract(j, '\$.benchmarks[2].fwd_s') < json_extract(j, '\$.benchmarks[2].time_s')")" = 1 ] &&
        ok suite-quick-fields || fail suite-quick-fields "$(head -c 900 "$T/out")"
    [ "$(sql "SELECT count(*) FROM suite_result r JOIN suite_run s ON s.id = r.suite_id WHERE s.status = 'complete'")" = 8 ] &&
        ok suite-stored || fail suite-stored "$(sql "SELECT status FROM suite_run")"
    run suite-show 0 "$DLPERF" suite --show && expect suite-show "$T/out" "NOT a valid FOM" && expect suite-show-overall "$T/out" "^overall"
    if run suite-show-csv 0 "$DLPERF" suite --show --csv; then
        [ "$(wc -l <"$T/out")" = 10 ] && ok suite-show-csv-rows || fail suite-show-csv-rows "$(cat "$T/out")"
        expect suite-show-csv-row "$T/out" ",quick,alexnet,s/batch,"
    fi
    # --combined: each benchmark's latest full-protocol result, whichever run; quick runs do not count
    run suite-combined-none 2 "$DLPERF" suite --show --combined &&
        expect suite-combined-none "$T/err" "no complete full-protocol suite result" && one_line suite-combined-none
    q=$(sql "SELECT max(id) FROM suite_run")
    copy() { # run id, status, benchmark filter, FOM factor: a full run made of the quick one's rows
        sql "INSERT INTO suite_run (id, machine_id, started_at, finished_at, status, mode, run, precision, threads)
             SELECT $1, machine_id, started_at, finished_at, '$2', 'full', run, precision, threads FROM suite_run WHERE id = $q;
             INSERT INTO suite_result SELECT $1, benchmark, instances, threads_per_instance, batch, time_s, fwd_s,
                    instance_times, accuracy, accuracy_name, projected, reference_s, fom * $4, note
             FROM suite_result WHERE suite_id = $q AND $3"
    }
    copy 101 complete 1 1; copy 102 complete "benchmark = 'alexnet'" 2; copy 103 failed "benchmark = 'vgg'" 3
    if run suite-combined 0 "$DLPERF" suite --show --combined --json; then
        b="json_extract(j, '\$.benchmarks"
        [ "$(json "json_array_length($b')) = 8 AND $b[0].benchmark') = 'p1b1' AND $b[0].suite_run_id') = 101
                   AND $b[2].benchmark') = 'alexnet' AND $b[2].suite_run_id') = 102
                   AND $b[5].benchmark') = 'vgg' AND $b[5].suite_run_id') = 101
                   AND json_extract(j, '\$.overall_fom') > 0 AND json_extract(j, '\$.suite_run_id') IS NULL")" = 1 ] &&
            ok suite-combined-latest || fail suite-combined-latest "$(head -c 900 "$T/out")"
    fi
    run suite-combined-text 0 "$DLPERF" suite --show --combined && expect suite-combined-text "$T/out" "combined: each benchmark" &&
        expect suite-combined-overall "$T/out" "^overall"
    sql "DELETE FROM suite_result WHERE suite_id > 100; DELETE FROM suite_run WHERE id > 100"
    # fom shows this machine's stored run beside the prediction
    if run fom-beside-suite 0 "$DLPERF" fom --system summit --json; then
        [ "$(json "json_extract(j, '\$.this_machine_measured.mode') = 'quick'
                   AND NOT json_extract(j, '\$.this_machine_measured.valid_fom')
                   AND json_array_length(json_extract(j, '\$.this_machine_measured.benchmarks')) = 8")" = 1 ] &&
            ok fom-beside-suite-json || fail fom-beside-suite-json "$(tail -c 600 "$T/out")"
    fi
    run fom-beside-suite-text 0 "$DLPERF" fom --system summit && expect fom-beside-suite-text "$T/out" "beside this machine, measured (suite run"
fi
run suite-show-missing 2 "$DLPERF" suite --show 999 && expect suite-show-missing "$T/err" "no suite run 999"
run suite-only-bad 2 "$DLPERF" suite --only bert && expect suite-only-bad "$T/err" "--only 'bert': expected p1b1"
exit 0
