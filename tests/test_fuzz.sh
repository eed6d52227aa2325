#!/bin/sh
# tests/test_fuzz.sh — the libFuzzer harnesses (fuzz/fuzz_*.c) over their committed seeds
# and regressions (fuzz/corpus/NAME/, fuzz/regressions/NAME/): each input once under ASan,
# UBSan and the leak check, with the harness's invariants. Builds build-fuzz/ with clang
# first (fuzz/fuzz.mk). Prints "ok fuzz-NAME" or "FAIL fuzz-NAME: why" per harness.
FUZZ_CC=${FUZZ_CC:-clang}
names="model_json spec idx weights op_key import db_read hf_config"
if ! command -v "$FUZZ_CC" >/dev/null 2>&1; then
    for n in $names; do
        echo "FAIL fuzz-$n: $FUZZ_CC not found; install clang and libomp-dev (apt-get install clang libomp-dev)"
    done
    exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# fuzz/fuzz.mk alone: this test does not depend on the Makefile including it
if ! ${MAKE:-make} -s -f fuzz/fuzz.mk FUZZ_CC="$FUZZ_CC" fuzz-build >"$log" 2>&1; then
    for n in $names; do
        echo "FAIL fuzz-$n: the harnesses do not build: $(grep -m1 -E 'error|Error' "$log")"
    done
    exit 1
fi
FUZZ_BUILD=build-fuzz sh fuzz/replay.sh $names
