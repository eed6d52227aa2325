#!/bin/sh
# fuzz/replay.sh NAME... — runs each harness build-fuzz/fuzz_NAME once over every file of
# fuzz/corpus/NAME/ (its seeds) and fuzz/regressions/NAME/ (inputs that once crashed it).
# Prints "ok fuzz-NAME" or "FAIL fuzz-NAME: why" per harness; exit 1 if any failed.
# (tests/test_fuzz.sh and `make fuzz-replay` run it.)
B=${FUZZ_BUILD:-build-fuzz}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
for n in "$@"; do
    bin="$B/fuzz_$n"
    if [ ! -x "$bin" ]; then
        echo "FAIL fuzz-$n: $bin not built (make fuzz-build)"
        failed=1
        continue
    fi
    set --
    for f in "fuzz/corpus/$n"/* "fuzz/regressions/$n"/*; do
        [ -f "$f" ] && set -- "$@" "$f"
    done
    if [ $# -eq 0 ]; then
        echo "FAIL fuzz-$n: no seeds in fuzz/corpus/$n/"
        failed=1
        continue
    fi
    # the sanitizers' findings are fatal, and an input running over 25 s (a hang) is one too;
    # libFuzzer runs each file once and exits non-zero on a finding
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$bin" -runs=1 -timeout=25 "$@" >"$log" 2>&1
    rc=$?
    ran=$(grep -c '^Executed ' "$log")
    if [ $rc -eq 0 ] && [ "$ran" -eq $# ]; then
        echo "ok fuzz-$n ($# inputs)"
    else
        why=$(grep -m1 -E 'ERROR: |runtime error|invariant broken|SUMMARY' "$log")
        echo "FAIL fuzz-$n: exit $rc, $ran of $# inputs ran; ${why:-$(tail -c 300 "$log")}"
        grep -E '^Running: ' "$log" | tail -1 | sed 's/^/    last input: /'
        failed=1
    fi
done
exit $failed
