#!/bin/sh
# fuzz/run-fuzz.sh SECONDS NAME:MAX_LEN... — fuzzes each harness build-fuzz/fuzz_NAME for
# SECONDS, one after another, on build-fuzz/corpus/NAME (the working corpus, where new
# inputs go) seeded from fuzz/corpus/NAME. A crash stops that harness; its input is kept
# under build-fuzz/artifacts/NAME/. Writes build-fuzz/fuzz-report.txt: per harness its
# seconds, executions, libFuzzer's final coverage (cov: edges, ft: features) and crashes;
# each log in build-fuzz/logs/NAME.log. Exit 1 if any harness crashed.
B=${FUZZ_BUILD:-build-fuzz}
secs=$1
shift
report="$B/fuzz-report.txt"
mkdir -p "$B/logs"
{
    echo "# dlperf fuzzing, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git describe --always --dirty 2>/dev/null)"
    printf '%-12s %8s %12s %10s %7s %7s %8s\n' fuzzer seconds executions exec_per_s cov ft crashes
} >"$report"
crashed=0
for h in "$@"; do
    n=${h%%:*}
    len=${h#*:}
    mkdir -p "$B/corpus/$n" "$B/artifacts/$n"
    log="$B/logs/$n.log"
    touch "$log.start"
    start=$(date +%s)
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$B/fuzz_$n" -max_total_time="$secs" -max_len="$len" -print_final_stats=1 -timeout=25 \
        -artifact_prefix="$B/artifacts/$n/" "$B/corpus/$n" "fuzz/corpus/$n" >"$log" 2>&1
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    # the last status line: "#N  DONE   cov: C ft: F corp: ..." (or pulse/NEW before a crash)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    crashes=$(find "$B/artifacts/$n" -type f -newer "$log.start" 2>/dev/null | wc -l)
    [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
    rate=$([ "${took:-0}" -gt 0 ] && echo $((${execs:-0} / took)) || echo "-")
    printf '%-12s %8s %12s %10s %7s %7s %8s\n' "$n" "$took" "${execs:--}" "$rate" "${cov:--}" "${ft:--}" \
        "$crashes" >>"$report"
    [ "$crashes" -gt 0 ] && crashed=1
done
cat "$report"
[ $crashed -eq 0 ] || echo "crashes: see $B/artifacts/*/ (reproduce: $B/fuzz_NAME FILE)"
exit $crashed
