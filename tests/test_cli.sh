#!/bin/sh
# tests/test_cli.sh — dlperf end to end through its command line: help, every kind of bad
# input (one clear line, non-zero exit, nothing corrupted), and a real small
# calibrate -> predict -> run -> validate cycle on a real SQLite file, including an
# interrupted calibration. Prints "ok NAME" or "FAIL NAME: why" per check.
BUILD=${BUILD:-build}
DLPERF="$(pwd)/$BUILD/dlperf"
T=$(mktemp -d /tmp/dlperf-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
export DLPERF_DB="$T/test.db" XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data" HOME="$T/home"
mkdir -p "$HOME"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }

# run NAME EXPECTED_RC CMD...: runs CMD, keeps stdout in $T/out and stderr in $T/err.
run() {
    name=$1 want=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$name" "exit $got, expected $want; stderr: $(head -c 300 "$T/err")"
        return 1
    fi
    return 0
}
# expect NAME FILE PATTERN: grep -q PATTERN in FILE
expect() {
    if grep -q -- "$3" "$2"; then ok "$1"; else fail "$1" "'$3' not in $(basename "$2"): $(head -c 300 "$2")"; fi
}
# one_line NAME: the error is exactly one line
one_line() {
    n=$(wc -l <"$T/err")
    if [ "$n" -eq 1 ]; then ok "$1 (one line)"; else fail "$1 (one line)" "$n lines: $(cat "$T/err")"; fi
}
sql() { sqlite3 "$DLPERF_DB" "$1"; }
json() { sqlite3 :memory: "SELECT $1 FROM (SELECT readfile('$T/out') AS j)"; }

# ---- help and usage ----
run help 0 "$DLPERF" --help && expect help "$T/out" "commands:"
run no-args 2 "$DLPERF"
run unknown-command 2 "$DLPERF" frobnicate && expect unknown-command "$T/err" "unknown command 'frobnicate'" && one_line unknown-command
for c in models profile calibrate predict run validate; do
    run "help-$c" 0 "$DLPERF" "$c" --help && expect "help-$c" "$T/out" "usage: dlperf $c"
done
run version 0 "$DLPERF" --version && expect version "$T/out" "dlperf "

# ---- models and profiles ----
run models 0 "$DLPERF" models
expect models-p1b1 "$T/out" "244,397,083"
expect models-alexnet "$T/out" "61,100,840"
expect models-lstm "$T/out" "8,392,704"
expect models-alexnet-macs "$T/out" "0.7142"
run models-json 0 "$DLPERF" models --json
if [ "$(json "json_array_length(j)")" -ge 3 ] &&
   [ "$(sqlite3 :memory: "SELECT json_extract(value, '\$.params') FROM json_each(readfile('$T/out')) WHERE json_extract(value, '\$.name') = 'p1b1'")" = 244397083 ]; then
    ok models-json-valid
else fail models-json-valid "$(head -c 200 "$T/out")"; fi
run profile-layers 0 "$DLPERF" profile alexnet-owt --layers && expect profile-layers "$T/out" "256x6x6"
run profile-json 0 "$DLPERF" profile basic-lstm --json
[ "$(json "json_extract(j, '\$.params')")" = 8392704 ] && ok profile-json-params || fail profile-json-params "$(head -c 200 "$T/out")"

# ---- bad input: one line, exit 2 ----
run unknown-model 2 "$DLPERF" profile resnet-9000 && expect unknown-model "$T/err" "unknown model 'resnet-9000'; known models: p1b1, p1b1-d, p3b1" && one_line unknown-model
for b in abc 0 -5 99999999999 1.5 ""; do
    run "batch-'$b'" 2 "$DLPERF" run p1b1 --batch "$b" && expect "batch-'$b'" "$T/err" "expected an integer from 1 to" && one_line "batch-'$b'"
done
run steps-zero 2 "$DLPERF" run basic-lstm --steps 0 && expect steps-zero "$T/err" "--steps '0'"
run threads-huge 2 "$DLPERF" run basic-lstm --threads 100000 && expect threads-huge "$T/err" "--threads"
run unknown-option 2 "$DLPERF" run p1b1 --frobnicate && expect unknown-option "$T/err" "unknown option '--frobnicate'" && one_line unknown-option
run missing-value 2 "$DLPERF" run p1b1 --batch && expect missing-value "$T/err" "needs a value"
run two-models 2 "$DLPERF" profile p1b1 alexnet-owt && expect two-models "$T/err" "expected one MODEL"
run no-model 2 "$DLPERF" predict && expect no-model "$T/err" "expected one MODEL"
run only-unknown 2 "$DLPERF" calibrate --only gemm,frob && expect only-unknown "$T/err" "unknown family"

# A batch that cannot fit is refused before anything is allocated, naming both figures.
run too-big 1 "$DLPERF" run p1b1 --batch 200000 && expect too-big "$T/err" "needs .* GiB .* available" && one_line too-big

# ---- the database: foreign files are refused and left untouched ----
printf 'my notes\n' >"$T/notes.txt"
cp "$T/notes.txt" "$T/notes.orig"
run db-text-file 1 "$DLPERF" predict p1b1 --db "$T/notes.txt" && expect db-text-file "$T/err" "not a SQLite database" && one_line db-text-file
cmp -s "$T/notes.txt" "$T/notes.orig" && ok db-text-file-untouched || fail db-text-file-untouched "file changed"
sqlite3 "$T/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES (42);"
cp "$T/other.db" "$T/other.orig"
run db-foreign 1 "$DLPERF" predict p1b1 --db "$T/other.db" && expect db-foreign "$T/err" "another application"
cmp -s "$T/other.db" "$T/other.orig" && ok db-foreign-untouched || fail db-foreign-untouched "file changed"
run db-directory 1 "$DLPERF" predict p1b1 --db "$T" && expect db-directory "$T/err" "not a regular file"

# ---- predict before any calibration ----
run predict-uncalibrated 1 "$DLPERF" predict basic-lstm && expect predict-uncalibrated "$T/err" "run 'dlperf calibrate" && one_line predict-uncalibrated

# ---- a real small cycle: calibrate -> predict -> run -> validate ----
if run calibrate 0 "$DLPERF" calibrate --quick --only model-op,stream,gemm-square --models basic-lstm --batch 4; then
    expect calibrate "$T/out" "complete"
    [ "$(sql "SELECT count(*) FROM calibration WHERE status='complete'")" = 1 ] && ok calibrate-stored || fail calibrate-stored "no complete calibration row"
    n=$(sql "SELECT count(*) FROM measurement_full WHERE validated=1 AND blas_core<>'' AND cpu_model<>'' AND git_commit<>'' AND compiler<>'' AND threads>0")
    [ "$n" -gt 5 ] && ok calibrate-fingerprinted || fail calibrate-fingerprinted "$n fingerprinted rows"
    [ "$(sql "SELECT count(*) FROM sample")" -gt "$n" ] && ok calibrate-samples || fail calibrate-samples "samples not stored"
fi
if run predict-exact 0 "$DLPERF" predict basic-lstm --batch 4 --json; then
    nops=$(json "json_array_length(json_extract(j, '\$.ops'))")
    [ "$(json "json_extract(j, '\$.ops_priced.exact')")" = "$nops" ] && ok predict-all-exact || fail predict-all-exact "$(json "json_extract(j, '\$.ops_priced')")"
    [ "$(sql "SELECT count(*) FROM prediction_op WHERE source='exact'")" = "$nops" ] && ok predict-stored || fail predict-stored "prediction ops not stored"
fi
run predict-table 0 "$DLPERF" predict basic-lstm --batch 4 && expect predict-table "$T/out" "memory per process" && expect predict-source "$T/out" "exact"
if run predict-scaled 0 "$DLPERF" predict basic-lstm --batch 8 --json; then
    s=$(json "json_extract(j, '\$.ops_priced.scaled')")
    [ "$s" -gt 0 ] && ok predict-scaled-path || fail predict-scaled-path "no scaled ops: $(json "json_extract(j, '\$.ops_priced')")"
fi
if run run-trace 0 "$DLPERF" run basic-lstm --batch 4 --steps 3 --warmup 1 --trace --json; then
    [ "$(sql "SELECT count(*) FROM run_step WHERE warmup=1")" = 1 ] && [ "$(sql "SELECT count(*) FROM run_step")" = 4 ] \
        && ok run-steps-stored || fail run-steps-stored "$(sql "SELECT count(*) FROM run_step")"
    [ "$(sql "SELECT count(*) FROM run_op")" -gt 10 ] && ok run-trace-stored || fail run-trace-stored "no trace"
    [ "$(sql "SELECT count(*) FROM run WHERE blas_core<>'' AND blas_choice<>'' AND loss_last < loss_first")" = 1 ] \
        && ok run-recorded || fail run-recorded "$(sql "SELECT blas_core, blas_choice, loss_first, loss_last FROM run")"
fi
if run validate 0 "$DLPERF" validate basic-lstm --batch 4 --steps 3 --warmup 1; then
    expect validate-table "$T/out" "basic-lstm"
    expect validate-misses "$T/out" "largest misses"
    [ "$(sql "SELECT count(*) FROM validation v JOIN run r ON r.id=v.run_id JOIN prediction p ON p.id=v.prediction_id")" = 1 ] \
        && ok validate-stored || fail validate-stored "no validation row"
fi

# ---- an interrupted calibration is marked and never used ----
"$DLPERF" calibrate --only gemm-square,eltwise >"$T/out" 2>"$T/err" &
pid=$!
sleep 4
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && ok interrupt-exit || fail interrupt-exit "exit $rc: $(cat "$T/err")"
[ "$(sql "SELECT status FROM calibration ORDER BY id DESC LIMIT 1")" = interrupted ] && ok interrupt-marked || fail interrupt-marked "$(sql "SELECT id, status FROM calibration")"
run predict-after-interrupt 0 "$DLPERF" predict basic-lstm --batch 4 --json
[ "$(json "json_extract(j, '\$.calibration_id')")" = 1 ] && ok interrupted-not-used || fail interrupted-not-used "$(head -c 200 "$T/out")"

# ---- the default database location ----
unset DLPERF_DB
run xdg-default 1 "$DLPERF" predict basic-lstm
[ -f "$XDG_DATA_HOME/dlperf/dlperf.db" ] && ok xdg-default-created || fail xdg-default-created "no $XDG_DATA_HOME/dlperf/dlperf.db"
exit 0
