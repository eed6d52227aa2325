#!/bin/sh
# tests/test_faults.sh — the database under faults: real signals (SIGINT, SIGTERM, SIGKILL)
# in the middle of calibrate, import, run, validate and suite; 16 processes writing to one
# database at once; a database directory that is read-only and a disk that fills up; one
# short run under valgrind. After each: PRAGMA integrity_check, every row that was stored
# before still there, nothing partial used. Prints "ok NAME" or "FAIL NAME: why" per check.
BUILD=${BUILD:-build}
. tests/shlib.sh
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell} # the kernel choice is not tested here

integrity() { # NAME [DB]: the database ($DLPERF_DB) passes SQLite's own check
    r=$(sqlite3 "${2:-$DLPERF_DB}" "PRAGMA integrity_check" 2>&1)
    [ "$r" = ok ] && ok "$1-integrity" || fail "$1-integrity" "$r"
}
# started_then CMD...: CMD in the background (stdout $T/out, stderr $T/err), its pid in $pid
started_then() { "$@" >"$T/out" 2>"$T/err" & pid=$!; }
# after_signal NAME SIG [DB]: sends SIG to $pid, waits, checks the exit code (128 + the
# signal), for the signals a process can handle the one line saying what was kept, and
# the database (DB, else $DLPERF_DB)
after_signal() {
    kill -"$2" "$pid"
    wait "$pid"
    rc=$?
    case $2 in INT) want=130 ;; TERM) want=143 ;; KILL) want=137 ;; esac
    [ "$rc" = "$want" ] && ok "$1-exit" || fail "$1-exit" "exit $rc, expected $want: $(tail -c 300 "$T/err")"
    if [ "$2" != KILL ]; then
        grep -q "interrupted by SIG$2" "$T/err" && ok "$1-says-what-was-kept" ||
            fail "$1-says-what-was-kept" "$(tail -c 300 "$T/err")"
    fi
    integrity "$1" "${3:-}"
}
# wait_for FILE PATTERN SECONDS: until PATTERN is in FILE (the command is in the middle)
wait_for() {
    n=0
    while ! grep -q -- "$2" "$1" 2>/dev/null && [ $n -lt $(($3 * 10)) ]; do sleep 0.1; n=$((n + 1)); done
}

# ---- a calibration to predict and validate with ----
if ! run setup-calibrate 0 "$DLPERF" calibrate --quick --only model-op --models rnn,p3b1 --batch 2; then
    exit 1
fi
good=$(sql "SELECT id FROM calibration WHERE status = 'complete'")

# ---- calibrate: stopped between kernels, marked; killed, marked by the next look ----
for sig in INT TERM KILL; do
    started_then "$DLPERF" calibrate --quick --only gemm-sweep --threads 1
    sleep 3
    after_signal "calibrate-$sig" $sig
    # the next dlperf that looks at this machine: no calibration left 'running', and the
    # prediction uses the complete one
    run "calibrate-$sig-next" 0 "$DLPERF" predict rnn --batch 2 --json &&
        [ "$(json "json_extract(j, '\$.calibration_id')")" = "$good" ] &&
        [ "$(sql "SELECT count(*) FROM calibration WHERE status = 'running'")" = 0 ] &&
        [ "$(sql "SELECT status FROM calibration ORDER BY id DESC LIMIT 1")" = interrupted ] &&
        ok "calibrate-$sig-not-used" || fail "calibrate-$sig-not-used" "$(sql "SELECT id, status FROM calibration")"
done

# ---- import: one transaction; nothing of an interrupted one ----
# 12 files of 20,000 GEMM rows each: a few seconds of reading before the one write
i=0
while [ $i -lt 12 ]; do
    awk -v f=$i 'BEGIN { print "key,precision,time_ms"
        for (r = 0; r < 20000; r++) printf "gemm m=%d n=%d k=8 ta=0 tb=0 beta=0,fp32,0.01\n", 8 + f, 8 + r }' >"$T/big$i.csv"
    i=$((i + 1))
done
for sig in INT TERM KILL; do
    cp "$DLPERF_DB" "$T/import.db"
    before=$(sqlite3 "$T/import.db" "SELECT count(*) FROM measurement")
    started_then "$DLPERF" import "$T"/big*.csv --device a100-pcie-40gb --db "$T/import.db"
    sleep 0.5
    after_signal "import-$sig" $sig "$T/import.db"
    [ "$sig" = KILL ] || expect "import-$sig-nothing" "$T/err" "nothing imported"
    # all or nothing: a SIGKILL after the commit would leave the whole import
    n=$(($(sqlite3 "$T/import.db" "SELECT count(*) FROM measurement") - before))
    { [ "$n" = 0 ] || [ "$n" = 240000 ]; } && ok "import-$sig-all-or-nothing" || fail "import-$sig-all-or-nothing" "$n rows"
done

# ---- run: a run is stored when it ends; an interrupted one is not ----
runs=$(sql "SELECT count(*) FROM run")
for sig in INT TERM KILL; do
    started_then "$DLPERF" run rnn --batch 2 --steps 100000 --warmup 0 --threads 1
    sleep 2
    after_signal "run-$sig" $sig
    [ "$sig" = KILL ] || expect "run-$sig-nothing" "$T/err" "nothing stored"
    [ "$(sql "SELECT count(*) FROM run")" = "$runs" ] && ok "run-$sig-not-stored" || fail "run-$sig-not-stored" "$(sql "SELECT id, model, status FROM run")"
done

# ---- validate: the models validated before the signal are kept, whole ----
for sig in INT TERM KILL; do
    v0=$(sql "SELECT count(*) FROM validation")
    started_then "$DLPERF" validate p3b1 vgg11 --batch 2 --steps 3 --warmup 1 --min-time 0.5 --wait-near 0
    wait_for "$T/err" "validate: vgg11" 120
    sleep 1
    after_signal "validate-$sig" $sig
    [ "$sig" = KILL ] || expect "validate-$sig-kept" "$T/err" "1 validation stored (id [0-9]*: p3b1)"
    # SIGINT, SIGTERM: p3b1's validation, with its prediction and run; nothing of vgg11's.
    # SIGKILL: no validation (they are stored when the last round ends), runs and
    # predictions whole
    kept=1; [ "$sig" = KILL ] && kept=0
    [ "$(sql "SELECT count(*) FROM validation")" = $((v0 + kept)) ] &&
    [ "$(sql "SELECT count(*) FROM validation v LEFT JOIN run r ON r.id = v.run_id LEFT JOIN prediction p
              ON p.id = v.prediction_id WHERE r.id IS NULL OR p.id IS NULL")" = 0 ] &&
    [ "$(sql "SELECT count(*) FROM validation WHERE model = 'vgg11'")" = 0 ] &&
        ok "validate-$sig-whole" || fail "validate-$sig-whole" "$(sql "SELECT id, model, run_id, prediction_id FROM validation")"
done

# ---- suite: stopped between instances; the benchmarks done are kept, the run marked ----
for sig in INT TERM KILL; do
    started_then "$DLPERF" suite --quick --only p3b1,alexnet
    wait_for "$T/err" "alexnet:" 120
    sleep 0.5
    after_signal "suite-$sig" $sig
    id=$(sql "SELECT max(id) FROM suite_run")
    if [ "$sig" = KILL ]; then
        # the instances end with their parent, and the next look shows the run interrupted
        sleep 1
        pgrep -f "dlperf suite --instance" >/dev/null && fail suite-KILL-no-orphans "$(pgrep -af 'dlperf suite --instance')" ||
            ok suite-KILL-no-orphans
        run suite-KILL-show 0 "$DLPERF" suite --show "$id" && expect suite-KILL-shown "$T/out" "interrupted"
    else
        expect "suite-$sig-kept" "$T/err" "suite run $id is marked interrupted, 1 benchmark result kept (p3b1)"
        [ "$(sql "SELECT status FROM suite_run WHERE id = $id")" = interrupted ] &&
            ok "suite-$sig-marked" || fail "suite-$sig-marked" "$(sql "SELECT id, status FROM suite_run")"
    fi
    [ "$(sql "SELECT group_concat(benchmark) FROM suite_result WHERE suite_id = $id")" = p3b1 ] &&
        ok "suite-$sig-results" || fail "suite-$sig-results" "$(sql "SELECT benchmark FROM suite_result WHERE suite_id = $id")"
done

# ---- 16 processes writing to one database at once: every row arrives ----
runs=$(sql "SELECT count(*) FROM run") preds=$(sql "SELECT count(*) FROM prediction")
i=0
while [ $i -lt 16 ]; do
    { "$DLPERF" run rnn --batch 1 --steps 2 --warmup 0 --threads 1 >/dev/null &&
      "$DLPERF" predict rnn --batch $((i + 1)) >/dev/null; } 2>"$T/load$i.err" &
    i=$((i + 1))
done
wait
[ "$(sql "SELECT count(*) FROM run")" = $((runs + 16)) ] && [ "$(sql "SELECT count(*) FROM prediction")" = $((preds + 16)) ] &&
    ok load-16-writers-all-rows || fail load-16-writers-all-rows "runs $runs -> $(sql "SELECT count(*) FROM run"), predictions $preds -> $(sql "SELECT count(*) FROM prediction")"
cat "$T"/load*.err >"$T/load.err"
grep -qi "locked\|busy" "$T/load.err" && fail load-no-lock-error "$(grep -i "locked\|busy" "$T/load.err" | head -3)" || ok load-no-lock-error
integrity load

# ---- resources: a read-only directory, a full disk ----
# a copy of the database in a directory the test's user cannot write (root writes any
# directory: the commands run as nobody there)
as_user() { "$@"; }
if [ "$(id -u)" = 0 ]; then as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }; fi
mkdir -p "$T/ro"
cp "$DLPERF_DB" "$T/ro/copy.db"
chmod 755 "$T"
chmod 444 "$T/ro/copy.db"
chmod 555 "$T/ro"
n0=$(sqlite3 "$T/ro/copy.db" "SELECT count(*) FROM run")
as_user "$DLPERF" run rnn --batch 1 --steps 1 --warmup 0 --threads 1 --db "$T/ro/copy.db" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && grep -q "copy.db" "$T/err" && [ "$(wc -l <"$T/err")" -le 2 ] && ok read-only-refused ||
    fail read-only-refused "exit $rc: $(head -c 300 "$T/err")"
[ "$(sqlite3 "$T/ro/copy.db" "SELECT count(*) FROM run")" = "$n0" ] && [ "$(sqlite3 "$T/ro/copy.db" "PRAGMA integrity_check")" = ok ] &&
    ok read-only-intact || fail read-only-intact "$(sqlite3 "$T/ro/copy.db" "PRAGMA integrity_check")"
chmod 755 "$T/ro"
# a disk that fills up: the file size limit (ulimit -f; the signal it sends ignored, so a
# write fails with EFBIG as on a full disk) just above the database: the import of 240,000
# rows cannot be written, the rows stored before stay
cp "$DLPERF_DB" "$T/full.db"
sqlite3 "$T/full.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
m0=$(sqlite3 "$T/full.db" "SELECT count(*) FROM measurement")
kb=$(($(wc -c <"$T/full.db") / 1024 + 256))
(trap '' XFSZ; ulimit -f $((kb * 2)) 2>/dev/null || ulimit -f "$kb"
 exec "$DLPERF" import "$T"/big*.csv --device a100-pcie-40gb --db "$T/full.db") >"$T/out" 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && grep -qi "full\|too large\|disk" "$T/err" && [ "$(wc -l <"$T/err")" -le 2 ] && ok full-disk-refused ||
    fail full-disk-refused "exit $rc: $(head -c 300 "$T/err")"
[ "$(sqlite3 "$T/full.db" "PRAGMA integrity_check")" = ok ] && [ "$(sqlite3 "$T/full.db" "SELECT count(*) FROM measurement")" = "$m0" ] &&
    ok full-disk-intact || fail full-disk-intact "$(sqlite3 "$T/full.db" "PRAGMA integrity_check; SELECT count(*) FROM measurement")"

# ---- one short run under valgrind's memcheck: no invalid access, no definite leak ----
if [ -n "${DLPERF_SANITIZED:-}" ]; then
    echo "skip valgrind-run: the binary is built with $DLPERF_SANITIZED, which valgrind cannot run"
elif command -v valgrind >/dev/null; then
    valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        "$DLPERF" run rnn --batch 1 --steps 1 --warmup 0 --threads 1 >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq 0 ] && ok valgrind-run || fail valgrind-run "exit $rc: $(grep -m5 '==[0-9]*==' "$T/err")"
else
    fail valgrind-run "valgrind not found (make test installs it)"
fi
