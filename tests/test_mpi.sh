#!/bin/sh
# tests/test_mpi.sh — dlperf under mpirun (real OpenMPI processes on this machine,
# oversubscribed, one thread per rank): data-parallel training equals one process's
# training of the global batch (tests/mpi/equivalence.c, np=2 and np=4), `run` under
# mpirun stores one run with every rank's times, strong/weak scaling arguments, and a
# failing rank ends the whole job non-zero with its message instead of hanging.
# Prints "ok NAME" or "FAIL NAME: why" per check.
BUILD=${BUILD:-build}
. tests/shlib.sh
# What OpenMPI needs in a CI container: running as root is refused without these two,
# more ranks than cores is refused without oversubscription, and cross-memory attach
# (ptrace) is often not allowed, so the shared-memory transport must not use it.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1
# a choice of OpenBLAS kernels is not what these tests are about: skip the probe
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}

# mpi NP CMD...: mpirun with a time limit, so a hang is a failure, not a stuck CI job
mpi() {
    np=$1
    shift
    # under `make asan`: the ranks' own sanitizer options and a longer limit (Makefile, asan:
    # a rank that unwinds every allocation's stack runs a communication calibration 3-4x slower)
    timeout "${DLPERF_MPI_LIMIT_S:-300}" mpirun -np "$np" --oversubscribe ${DLPERF_RANK_ASAN_OPTIONS:+-x ASAN_OPTIONS="$DLPERF_RANK_ASAN_OPTIONS"} "$@"
}

if ! command -v mpirun >/dev/null; then
    fail mpirun "mpirun not found (openmpi-bin is a dependency: make deps)"
    exit 1
fi

# ---- data-parallel training is the global batch's training ----
for np in 2 4; do
    mpi "$np" "$BUILD/tests/mpi/equivalence" >"$T/eq" 2>"$T/err"
    rc=$?
    cat "$T/eq"
    [ $rc -eq 0 ] || fail "equivalence-np$np" "exit $rc: $(tail -c 400 "$T/err")"
    grep -q '^ok ' "$T/eq" || fail "equivalence-np$np-ran" "no check ran"
done

# ---- run under mpirun: one run, the global batch, every rank's times ----
if run run-np2 0 mpi 2 "$DLPERF" run fmnist-convpool --batch 8 --steps 2 --warmup 1 --threads 1 --json; then
    if [ "$(json "json_extract(j, '\$.ranks')")" = 2 ] && [ "$(json "json_extract(j, '\$.batch')")" = 8 ] &&
       [ "$(json "json_extract(j, '\$.batch_per_rank')")" = 4 ] &&
       [ "$(json "json_array_length(json_extract(j, '\$.rank_times'))")" = 2 ] &&
       [ "$(json "json_extract(j, '\$.scaling')")" = strong ]; then
        ok run-np2-json
    else fail run-np2-json "$(head -c 400 "$T/out")"; fi
    if [ "$(json "json_extract(j, '\$.allreduce_bytes') > 0 AND json_extract(j, '\$.rank_times[1].allreduce_s') > 0")" = 1 ]; then
        ok run-np2-allreduce-timed
    else fail run-np2-allreduce-timed "$(head -c 400 "$T/out")"; fi
    grep -q 'mpi_library.*Open MPI' "$T/out" && ok run-np2-mpi-library || fail run-np2-mpi-library "$(head -c 300 "$T/out")"
    # each step's slowest rank, median over the steps: never below any rank's own median
    if [ "$(json "json_extract(j, '\$.slowest_rank.allreduce_s') >= (SELECT max(json_extract(value, '\$.allreduce_s'))
                  FROM json_each(j, '\$.rank_times')) AND json_extract(j, '\$.slowest_rank.compute_s') >=
                  (SELECT max(json_extract(value, '\$.compute_s')) FROM json_each(j, '\$.rank_times')) AND
                  json_extract(j, '\$.slowest_rank.compute_s') > 0")" = 1 ]; then
        ok run-np2-slowest-rank
    else fail run-np2-slowest-rank "$(head -c 600 "$T/out")"; fi
fi
# rank 0 alone wrote the database: one run with two rank rows
if [ "$(sql "SELECT count(*) FROM run")" = 1 ] &&
   [ "$(sql "SELECT ranks || ' ' || scaling || ' ' || batch || ' ' || batch_per_rank FROM run")" = "2 strong 8 4" ] &&
   [ "$(sql "SELECT count(*) FROM run_rank")" = 2 ]; then
    ok run-np2-db
else fail run-np2-db "$(sql "SELECT * FROM run; SELECT * FROM run_rank")"; fi

# each rank's CPUs as the launcher left them: unbound, every CPU this shell may use; bound
# to hardware threads (two CPUs or more; nproc counts OMP_NUM_THREADS, not CPUs, unless unset), one
# CPU each, not the same; stored with the run
all=$(taskset -cp $$ 2>/dev/null | sed 's/.*: //')
if run run-np2-unbound 0 mpi 2 --bind-to none "$DLPERF" run fmnist-convpool --batch 8 --steps 1 --warmup 1 \
       --threads 1 --json; then
    c0=$(json "json_extract(j, '\$.rank_times[0].cpus')")
    c1=$(json "json_extract(j, '\$.rank_times[1].cpus')")
    if [ -n "$all" ] && [ "$c0" = "$all" ] && [ "$c1" = "$all" ] &&
       [ "$(sql "SELECT group_concat(cpus, '|') FROM (SELECT cpus FROM run_rank WHERE run_id = (SELECT max(id)
                 FROM run) ORDER BY rank)")" = "$all|$all" ]; then
        ok run-np2-cpus-unbound
    else fail run-np2-cpus-unbound "shell's CPUs '$all', ranks' '$c0' '$c1'"; fi
fi
if [ "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" -ge 2 ] &&
   run run-np2-bound 0 mpi 2 --map-by hwthread --bind-to hwthread "$DLPERF" run fmnist-convpool --batch 8 --steps 1 \
       --warmup 1 --threads 1 --json; then
    c0=$(json "json_extract(j, '\$.rank_times[0].cpus')")
    c1=$(json "json_extract(j, '\$.rank_times[1].cpus')")
    if [ -n "$c0" ] && [ -n "$c1" ] && [ "$c0" != "$c1" ] && [ "$c0" != "$all" ] && [ "$c1" != "$all" ]; then
        ok run-np2-cpus-bound
    else fail run-np2-cpus-bound "shell's CPUs '$all', ranks' '$c0' '$c1'"; fi
fi

if run run-np4-weak 0 mpi 4 "$DLPERF" run fmnist-convpool --scaling weak --batch 2 --steps 2 --warmup 1 --threads 1; then
    expect run-np4-weak "$T/out" "at batch 8, 1 threads per rank x 4 ranks"
    expect run-np4-weak-table "$T/out" "weak scaling: 2 samples per rank"
    expect run-np4-weak-cpus "$T/out" "allreduce   cpus"
fi
# the same training at np=1 and np=2 gives the same losses (global batch 8)
run loss-np1 0 "$DLPERF" run fmnist-convpool --batch 8 --steps 2 --warmup 1 --threads 1 --json &&
    l1=$(json "json_extract(j, '\$.loss_last')")
run loss-np2 0 mpi 2 "$DLPERF" run fmnist-convpool --batch 8 --steps 2 --warmup 1 --threads 1 --json &&
    l2=$(json "json_extract(j, '\$.loss_last')")
if [ -n "${l1:-}" ] && [ "$(sqlite3 :memory: "SELECT abs($l1 - $l2) <= 1e-4 * abs($l1)")" = 1 ]; then
    ok loss-np1-equals-np2
else fail loss-np1-equals-np2 "np=1 ${l1:-?} np=2 ${l2:-?}"; fi

# the gradients in overlapped buckets: the same losses, the bucket size stored
if run overlap-np2 0 mpi 2 "$DLPERF" run fmnist-convpool --batch 8 --steps 2 --warmup 1 --threads 1 --overlap --bucket-mib 1 --json; then
    lo=$(json "json_extract(j, '\$.loss_last')")
    [ "$(sqlite3 :memory: "SELECT abs(${l1:-0} - ${lo:-1}) <= 1e-4 * abs(${l1:-1})")" = 1 ] && ok overlap-same-loss ||
        fail overlap-same-loss "np=1 ${l1:-?} overlapped ${lo:-?}"
    [ "$(json "json_extract(j, '\$.bucket_bytes')")" = 1048576 ] && ok overlap-bucket-recorded ||
        fail overlap-bucket-recorded "$(head -c 300 "$T/out")"
    [ "$(sql "SELECT count(*) FROM run WHERE bucket_bytes = 1048576 AND ranks = 2")" = 1 ] && ok overlap-stored ||
        fail overlap-stored "$(sql "SELECT id, ranks, bucket_bytes FROM run")"
fi
run overlap-needs-mpi 2 "$DLPERF" run fmnist-convpool --overlap --steps 1 && expect overlap-needs-mpi "$T/err" "run under mpirun"
run bucket-needs-overlap 2 mpi 2 "$DLPERF" run fmnist-convpool --bucket-mib 4 --steps 1 --threads 1 &&
    expect bucket-needs-overlap "$T/err" "--bucket-mib goes with --overlap"

# ---- tensor parallel: a GPT split over pairs of ranks trains as one process does ----
# gpt-bytes has dropout, whose masks the shares draw per layer of their own (their layers
# are numbered differently), so it trains equivalently, not identically: the check here is
# that it trains (the loss falls) and says how the job was split; tests/mpi/equivalence.c
# checks the numbers on a GPT without dropout.
if run tp-run-np4 0 mpi 4 "$DLPERF" run gpt-bytes --tp 2 --batch 4 --steps 3 --warmup 0 --threads 1 --json; then
    if [ "$(json "json_extract(j, '\$.tensor_parallel') = 2 AND json_extract(j, '\$.data_parallel') = 2 AND
              json_extract(j, '\$.model') = 'gpt-bytes-tp2' AND json_extract(j, '\$.batch') = 4 AND
              json_extract(j, '\$.loss_last') < json_extract(j, '\$.loss_first') AND
              json_extract(j, '\$.allreduce_bytes') > 0")" = 1 ]; then
        ok tp-run-np4-json
    else fail tp-run-np4-json "$(head -c 600 "$T/out")"; fi
fi
run tp-indivisible 2 mpi 2 "$DLPERF" run gpt-bytes --tp 3 --steps 1 --threads 1 &&
    expect tp-indivisible "$T/err" "--tp 3: must divide the job's 2 ranks"
run tp-one-process 2 "$DLPERF" run gpt-bytes --tp 2 --steps 1 &&
    expect tp-one-process "$T/err" "--tp 2: must divide the job's 1 ranks"
run tp-nothing-to-split 2 mpi 2 "$DLPERF" run fmnist-convpool --tp 2 --steps 1 --threads 1 &&
    expect tp-nothing-to-split "$T/err" "no attention layer or MLP to split"
run tp-epochs-refused 2 mpi 2 "$DLPERF" run gpt-bytes --tp 2 --epochs 1 --threads 1 &&
    expect tp-epochs-refused "$T/err" "--tp times training steps"

# ---- bad input under mpirun: a rank says which (whichever mpirun lets finish first), the job exits non-zero ----
if run strong-indivisible 2 mpi 2 "$DLPERF" run fmnist-convpool --batch 7 --steps 1 --threads 1; then
    expect strong-indivisible "$T/err" "rank [01] of 2.*--batch 7: strong scaling splits the global batch over the 2 ranks"
fi
run epochs-overlap-refused 2 mpi 2 "$DLPERF" run fmnist-convpool --epochs 1 --overlap --threads 1 &&
    expect epochs-overlap-refused "$T/err" "one allreduce per step"

# ---- training to a result under mpirun: the epoch of the global batch ----
# ufldl-cnn has neither batch norm nor dropout, so 2 ranks at global batch 64 (strong: 32
# each; weak: --batch 32 per rank) must train as one process at batch 64: the same mean
# epoch losses (to float summation order) and test accuracy
F="$T/fmnist"
tiny_fmnist "$F" || fail tiny-fmnist-written "$(ls -l "$F")"
l1=x
if run epochs-np1 0 "$DLPERF" run ufldl-cnn --epochs 2 --batch 64 --data-dir "$F" --threads 1 --json; then
    l1=$(json "json_extract(j, '$.loss_last_epoch')")
    a1=$(json "json_extract(j, '$.metrics.test_accuracy')")
fi
for scaling in strong weak; do
    b=64
    [ $scaling = weak ] && b=32
    if run "epochs-np2-$scaling" 0 mpi 2 "$DLPERF" run ufldl-cnn --epochs 2 --batch $b --scaling $scaling \
        --data-dir "$F" --threads 1 --json; then
        l2=$(json "json_extract(j, '$.loss_last_epoch')")
        a2=$(json "json_extract(j, '$.metrics.test_accuracy')")
        [ "$(json "json_extract(j, '$.batch') || ' ' || json_extract(j, '$.batch_per_rank') || ' ' || json_extract(j, '$.ranks')")" = "64 32 2" ] \
            && ok "epochs-np2-$scaling-batches" || fail "epochs-np2-$scaling-batches" "$(head -c 400 "$T/out")"
        awk -v a="$l1" -v b="$l2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a + 0 > 0 && d <= 1e-4 * a) }' \
            && [ "$a1" = "$a2" ] && ok "epochs-np2-$scaling-same-training" \
            || fail "epochs-np2-$scaling-same-training" "np1 loss $l1 accuracy $a1, np2 loss $l2 accuracy $a2"
    fi
done
[ "$(sql "SELECT count(*) FROM run WHERE model = 'ufldl-cnn' AND epochs = 2 AND ranks = 2 AND batch = 64
          AND batch_per_rank = 32 AND allreduce_bytes > 0")" = 2 ] && ok epochs-np2-stored ||
    fail epochs-np2-stored "$(sql "SELECT id, ranks, batch, batch_per_rank, scaling FROM run WHERE epochs > 0")"

# ---- a rank that fails ends the job with its message, no hang ----
# rank 1 gets a model file that does not exist; rank 0 goes on to the first collective
cat >"$T/rank.sh" <<EOF
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then
    exec "$DLPERF" run --model-file "$T/missing.json" --steps 2 --threads 1
fi
exec "$DLPERF" run fmnist-convpool --batch 8 --steps 50 --threads 1
EOF
chmod +x "$T/rank.sh"
start=$(date +%s)
mpi 2 "$T/rank.sh" >"$T/out" 2>"$T/err"
rc=$?
took=$(($(date +%s) - start))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $took -lt 120 ]; then ok failing-rank-ends-job; else
    fail failing-rank-ends-job "exit $rc after $took s"; fi
expect failing-rank-message "$T/err" "rank 1 of 2.*missing.json"
if [ "$(sql "SELECT count(*) FROM run WHERE batch_per_rank = 4 AND steps = 50")" = 0 ]; then
    ok failing-rank-no-run-stored
else fail failing-rank-no-run-stored "a run of the failed job was stored"; fi

# ---- a rank that hangs: the others' watchdog ends the job, rank 0's database intact ----
cat >"$T/hang.sh" <<EOF
#!/bin/sh
[ "\$OMPI_COMM_WORLD_RANK" = 1 ] && echo \$\$ >"$T/rank1.pid"
exec "$DLPERF" run fmnist-convpool --batch 8 --steps 100000 --warmup 0 --threads 1
EOF
chmod +x "$T/hang.sh"
rm -f "$T/rank1.pid"
runs=$(sql "SELECT count(*) FROM run")
start=$(date +%s)
# (in a subshell: an assignment before a shell function outlives the call in dash)
(export DLPERF_COMM_TIMEOUT=3; mpi 2 "$T/hang.sh") >"$T/out" 2>"$T/err" &
job=$!
n=0
while [ ! -s "$T/rank1.pid" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
sleep 3
kill -STOP "$(cat "$T/rank1.pid")" 2>/dev/null # rank 1 hangs, stopped mid-training
wait $job
rc=$?
took=$(($(date +%s) - start))
kill -KILL "$(cat "$T/rank1.pid")" 2>/dev/null
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $took -lt 90 ]; then ok hanging-rank-ends-job; else
    fail hanging-rank-ends-job "exit $rc after $took s: $(tail -c 300 "$T/err")"; fi
expect hanging-rank-message "$T/err" "rank 0 of 2: [a-z]* waited [0-9]* s for the other ranks (DLPERF_COMM_TIMEOUT=3 s)"
[ "$(sql "PRAGMA integrity_check")" = ok ] && [ "$(sql "SELECT count(*) FROM run")" = "$runs" ] &&
    ok hanging-rank-db-intact || fail hanging-rank-db-intact "$(sql "PRAGMA integrity_check")"
run comm-timeout-bad 1 env DLPERF_COMM_TIMEOUT=soon timeout 120 mpirun -np 2 --oversubscribe "$DLPERF" run p3b1 --batch 2 --steps 1 --threads 1 &&
    expect comm-timeout-bad "$T/err" "DLPERF_COMM_TIMEOUT 'soon': expected seconds"

# a job that cannot fit is refused before it allocates, counting each rank's allreduce
# temporaries (up to its gradient buffer) and the ranks on the node together
run dp-memory-refused 1 mpi 2 "$DLPERF" run vgg16 --batch 4096 --scaling weak --steps 1 --threads 1 &&
    expect dp-memory-refused "$T/err" "allreduce up to 0.52) for the ranks on this node together"

run predict-under-mpirun 2 mpi 2 "$DLPERF" predict p3b1 &&
    expect predict-under-mpirun "$T/err" "'predict' runs on one process"

# ---- communication calibration ----
run comm-needs-mpirun 2 "$DLPERF" calibrate --only comm --quick &&
    expect comm-needs-mpirun "$T/err" "run it under mpirun -np P"
run show-under-mpirun 2 mpi 2 "$DLPERF" calibrate --show && expect show-under-mpirun "$T/err" "without mpirun"
run comm-alone 2 mpi 2 "$DLPERF" calibrate --only comm,peak --threads 1 &&
    expect comm-alone "$T/err" "measures communication alone"
if run comm-np2 0 mpi 2 "$DLPERF" calibrate --only comm --quick --threads 1; then
    expect comm-np2-table "$T/out" "allreduce"
    if [ "$(sql "SELECT mode || ' ' || ranks || ' ' || status FROM calibration WHERE mode LIKE 'comm%'")" = "comm-quick 2 complete" ] &&
       [ "$(sql "SELECT count(*) FROM measurement WHERE family = 'comm' AND validated = 1")" -ge 30 ] &&
       [ "$(sql "SELECT count(*) FROM measurement WHERE family = 'comm' AND kind = 'allreduce' AND key LIKE '%bytes=400000 ranks=2'")" = 1 ] &&
       [ "$(sql "SELECT count(DISTINCT kind) FROM measurement WHERE family = 'comm'")" = 3 ] &&
       sql "SELECT mpi_library FROM calibration WHERE mode = 'comm-quick'" | grep -q "Open MPI"; then
        ok comm-np2-stored
    else fail comm-np2-stored "$(sql "SELECT id, mode, ranks, status FROM calibration; SELECT kind, count(*) FROM measurement GROUP BY kind")"; fi
    # the allreduce's memory, probed at 1, 4 and 16 MiB: Open MPI's temporaries, at most
    # twice the buffer (and some pages)
    expect comm-np2-memory-table "$T/out" "each rank's resident memory grown by one in-place allreduce"
    cid=$(sql "SELECT max(id) FROM calibration WHERE mode = 'comm-quick'")
    [ "$(sql "SELECT count(*) || ' ' || sum(scratch_bytes >= 0 AND scratch_bytes <= 2 * bytes + 4194304) || ' ' ||
              (max(scratch_bytes) > 0) FROM comm_memory WHERE calibration_id = $cid")" = "3 3 1" ] &&
        ok comm-np2-memory || fail comm-np2-memory "$(sql "SELECT * FROM comm_memory")"
    # a rank's own memory with MPI started, before any buffer: libraries, MPI's shared-memory
    # segments, BLAS buffers (megabytes, not kilobytes, and far below a gigabyte)
    [ "$(sql "SELECT runtime_rss_bytes > 4194304 AND runtime_rss_bytes < 1073741824 FROM calibration WHERE id = $cid")" = 1 ] &&
        ok comm-np2-runtime || fail comm-np2-runtime "$(sql "SELECT id, mode, runtime_rss_bytes FROM calibration")"
fi

# a collective whose buffers (and an allreduce's temporaries) a rank's share of the node's
# memory cannot hold is left out on every rank, with a warning, instead of meeting the OOM
# killer: 64 MiB for 2 ranks holds the 4 MiB sizes, not the 16 MiB ones
if run comm-too-big 0 mpi 2 env DLPERF_MEM_AVAILABLE=64MiB "$DLPERF" calibrate --only comm --quick --threads 1 \
       --db "$T/small.db"; then
    expect comm-too-big-warned "$T/err" "left out allreduce bytes=16777216 ranks=2: needs 0.05 GiB; 0.03 GiB available per rank"
    expect comm-too-big-probe "$T/err" "allreduce memory probe of 16777216 bytes left out"
    [ "$(sqlite3 "$T/small.db" "SELECT status || ' ' || (SELECT count(*) FROM measurement WHERE bytes >= 16777216) || ' ' ||
          (SELECT count(*) FROM measurement WHERE kind = 'allreduce' AND bytes = 4194304) || ' ' ||
          (SELECT max(bytes) FROM comm_memory) FROM calibration")" = "complete 0 1 4194304.0" ] &&
        ok comm-too-big-stored || fail comm-too-big-stored "$(sqlite3 "$T/small.db" "SELECT status FROM calibration;
          SELECT key FROM measurement WHERE bytes >= 4194304; SELECT * FROM comm_memory")"
fi

# ---- validate under mpirun: predicted vs measured iteration and allreduce, stored ----
run cal-1thread 0 "$DLPERF" calibrate --quick --threads 1 --only peak,memory,model-op,eltwise --models p3b1 --batch 5
one=$(sql "SELECT max(id) FROM calibration WHERE mode NOT LIKE 'comm%'")
# without a calibration its ranks measured together: one process's, the cores shared out
if run validate-np4-fallback 0 mpi 4 "$DLPERF" validate p3b1 --batch 20 --steps 3 --threads 1; then
    expect validate-np4-fallback "$T/out" "calibration $one (one process's, slowed by the cores' oversubscription)"
fi
# the gradients' allreduce of a named model is measured at its exact size
if run comm-models 0 mpi 2 "$DLPERF" calibrate --only comm --quick --threads 1 --models p3b1; then
    [ "$(sql "SELECT count(*) FROM measurement WHERE family = 'comm' AND kind = 'allreduce'
              AND bytes = (SELECT allreduce_bytes FROM run WHERE model = 'p3b1' AND ranks = 4 LIMIT 1)")" -ge 1 ] &&
        ok comm-models-size || fail comm-models-size "no allreduce at p3b1's gradient size"
    [ "$(sql "SELECT count(*) FROM comm_memory WHERE calibration_id = (SELECT max(id) FROM calibration)
              AND bytes = (SELECT allreduce_bytes FROM run WHERE model = 'p3b1' AND ranks = 4 LIMIT 1)")" = 1 ] &&
        ok comm-models-memory || fail comm-models-memory "no allreduce memory probe at p3b1's gradient size"
fi
# every rank measuring together: a calibration of 2 ranks, which the np=2 validation uses
if run cal-together 0 mpi 2 "$DLPERF" calibrate --quick --threads 1 --only peak,memory,model-op,eltwise --models p3b1 --batch 5; then
    expect cal-together "$T/err" "2 ranks measure every kernel at the same time"
    [ "$(sql "SELECT ranks FROM calibration WHERE id = (SELECT max(id) FROM calibration)")" = 2 ] && ok cal-together-ranks ||
        fail cal-together-ranks "$(sql "SELECT id, mode, ranks FROM calibration")"
fi
together=$(sql "SELECT max(id) FROM calibration WHERE ranks = 2 AND mode NOT LIKE 'comm%'")
# The allreduce's scratch is the RSS it adds; under a sanitizer its allocator serves that
# from memory it already holds (malloc_trim returns nothing), so the scratch may read 0
# there: only its presence is checked.
if [ -n "${DLPERF_SANITIZED:-}" ]; then
    grown=">="
    echo "skip allreduce-scratch-positive: under $DLPERF_SANITIZED the RSS an allreduce adds may read 0"
else
    grown=">"
fi
# --show --ranks 2 prints that calibration (one process, no mpirun); none of 3 ranks: named
if run show-ranks 0 "$DLPERF" calibrate --show --ranks 2 --threads 1 --json; then
    [ "$(json "json_extract(j, '\$.calibration_id')")" = "$together" ] && ok show-ranks-picked ||
        fail show-ranks-picked "$(head -c 300 "$T/out")"
    # the communication section: the 2-rank allreduce memory probes (the quick list's three
    # sizes and p3b1's gradients)
    [ "$(json "json_extract(j, '\$.communication.allreduce_memory[0].ranks') || ' ' ||
               (json_extract(j, '\$.communication.allreduce_memory[0].probes') >= 3) || ' ' ||
               (json_extract(j, '\$.communication.allreduce_memory[0].largest_scratch_bytes') $grown 0)")" = "2 1 1" ] &&
        ok show-comm-memory || fail show-comm-memory "$(json "json_extract(j, '\$.communication')")"
    # the 2-rank calibration's placement probes: near's mark (0: the probes showed one
    # placement, nothing apart), and the sizes timed apart
    [ "$(json "json_extract(j, '\$.communication.placement[0].ranks') = 2 AND
               json_extract(j, '\$.communication.placement[0].rtt_fastest_ns') >= 0 AND
               (json_extract(j, '\$.communication.placement[0].rtt_fastest_ns') > 0 OR
                json_extract(j, '\$.communication.placement[0].allreduce_sizes_apart') = 0) AND
               json_extract(j, '\$.communication.placement[0].allreduce_sizes_apart') >= 0")" = 1 ] &&
        ok show-comm-placement || fail show-comm-placement "$(json "json_extract(j, '\$.communication.placement')")"
fi
run show-comm-memory-text 0 "$DLPERF" calibrate --show --ranks 2 --threads 1 &&
    expect show-comm-memory-text "$T/out" "2 ranks: .* of the buffer), [0-9]* sizes probed"
run show-ranks-none 1 "$DLPERF" calibrate --show --ranks 3 --threads 1 &&
    expect show-ranks-none "$T/err" "no complete calibration of this machine measured by 3 ranks" && one_line show-ranks-none
run show-ranks-alone 2 "$DLPERF" calibrate --ranks 2 --quick &&
    expect show-ranks-alone "$T/err" "--ranks picks the calibration --show prints"
run comm-batch 2 mpi 2 "$DLPERF" calibrate --only comm --models p3b1 --batch 4 --threads 1 &&
    expect comm-batch "$T/err" "--batch does not go with --only comm"
# in rounds: every collective sampled in each pass, priced by the median of the passes' medians
if run comm-rounds 0 mpi 2 "$DLPERF" calibrate --only comm --quick --threads 1 --rounds 2; then
    cid=$(sql "SELECT max(id) FROM calibration WHERE mode LIKE 'comm%'")
    [ "$(sql "SELECT rounds FROM calibration WHERE id = $cid")" = 2 ] && ok comm-rounds-stored ||
        fail comm-rounds-stored "$(sql "SELECT id, mode, rounds FROM calibration WHERE id = $cid")"
    # every collective has samples from both passes, and its price lies within its samples
    [ "$(sql "SELECT count(*) FROM measurement m WHERE m.calibration_id = $cid AND (m.median_s < m.min_s
              OR m.median_s > m.max_s OR (SELECT count(DISTINCT round) FROM sample s WHERE s.measurement_id = m.id) != 2)")" = 0 ] &&
        [ "$(sql "SELECT count(*) FROM measurement WHERE calibration_id = $cid")" -gt 10 ] && ok comm-rounds-passes ||
        fail comm-rounds-passes "$(sql "SELECT key, median_s, min_s, max_s FROM measurement WHERE calibration_id = $cid LIMIT 5")"
    expect comm-rounds "$T/err" "every collective measured once per pass over the list"
    # where the node's two ranks ran in each pass, probed (n near, a apart), and the apart
    # price exactly where a pass was apart; near's mark stored (0 where the probes showed one
    # placement: then no pass apart)
    [ "$(sql "SELECT count(*) FROM measurement m WHERE m.calibration_id = $cid
              AND (length(m.pass_placement) != 2 OR m.pass_placement GLOB '*[^na]*'
                   OR m.far_passes != length(m.pass_placement) - length(replace(m.pass_placement, 'a', ''))
                   OR (m.apart_s > 0) != (m.far_passes > 0))")" = 0 ] &&
        [ "$(sql "SELECT rtt_fastest_ns >= 0 AND rtt_fastest_ns < 1e6 AND (rtt_fastest_ns > 0 OR (SELECT
                  coalesce(sum(far_passes), 0) FROM measurement WHERE calibration_id = $cid) = 0)
                  FROM calibration WHERE id = $cid")" = 1 ] &&
        ok comm-rounds-placement ||
        fail comm-rounds-placement "$(sql "SELECT key, pass_placement, far_passes, apart_s FROM measurement
                                           WHERE calibration_id = $cid LIMIT 5; SELECT rtt_fastest_ns FROM calibration")"
fi
# one process's predictions never price from it
run predict-one-process 0 "$DLPERF" predict p3b1 --batch 5 --threads 1 && expect predict-one-process "$T/out" "from calibration $one "
if run validate-np2 0 mpi 2 "$DLPERF" validate p3b1 --batch 10 --steps 5 --threads 1 --rounds 2 --json; then
    # two rounds: two runs stored, the measurement the mean of their medians (median of two)
    [ "$(sql "SELECT count(*) FROM run WHERE ranks = 2 AND model = 'p3b1'")" = 2 ] &&
    [ "$(sql "SELECT abs(v.measured_s - (SELECT avg(median_s) FROM run WHERE ranks = 2 AND model = 'p3b1')) < 1e-12 FROM validation v WHERE v.ranks = 2")" = 1 ] &&
        ok validate-np2-rounds || fail validate-np2-rounds "$(sql "SELECT id, median_s FROM run WHERE ranks = 2")"
    [ "$(json "json_extract(j, '\$[0].calibration_id')")" = "$together" ] && ok validate-np2-together ||
        fail validate-np2-together "calibration $(json "json_extract(j, '\$[0].calibration_id')"), expected $together"
    if [ "$(json "json_extract(j, '\$[0].ranks')")" = 2 ] && [ "$(json "json_extract(j, '\$[0].batch_per_rank')")" = 5 ] &&
       [ "$(json "json_extract(j, '\$[0].predicted_allreduce_s') > 0 AND json_extract(j, '\$[0].measured_allreduce_s') > 0")" = 1 ] &&
       [ "$(json "json_extract(j, '\$[0].allreduce_source')")" = measured ]; then
        ok validate-np2-json
    else fail validate-np2-json "$(head -c 400 "$T/out")"; fi
    # rank 0's memory: its RSS when the run began, the plan's arenas, the allreduce's scratch;
    # under a sanitizer the RSS holds its shadow memory and quarantine, so only the stored
    # figures are checked there
    if [ -n "${DLPERF_SANITIZED:-}" ]; then
        echo "skip validate-np2-memory-bound: a rank's RSS under $DLPERF_SANITIZED holds the shadow memory"
        bound="json_extract(j, '\$[0].memory_error_pct') IS NOT NULL"
    else
        bound="abs(json_extract(j, '\$[0].memory_error_pct')) < 10"
    fi
    [ "$(json "json_extract(j, '\$[0].predicted_allreduce_memory_bytes') $grown 0 AND $bound")" = 1 ] &&
        [ "$(sql "SELECT count(*) FROM prediction WHERE ranks = 2 AND mem_comm $grown 0")" = 1 ] &&
        ok validate-np2-memory || fail validate-np2-memory "$(head -c 1500 "$T/out")"
    if [ "$(sql "SELECT count(*) FROM validation WHERE ranks = 2 AND predicted_allreduce_s > 0 AND measured_allreduce_s > 0")" = 1 ] &&
       [ "$(sql "SELECT ranks || ' ' || allreduce_source FROM prediction WHERE ranks = 2")" = "2 measured" ]; then
        ok validate-np2-stored
    else fail validate-np2-stored "$(sql "SELECT * FROM validation")"; fi
    # the drift of the model's own costliest calibrated ops, timed by both ranks before each run
    if [ "$(json "json_extract(j, '\$[0].drift_compute') > 0 AND json_extract(j, '\$[0].drift_compute') <> 1 AND
                  json_extract(j, '\$[0].drift_memory') > 0 AND json_extract(j, '\$[0].drift_memory') <> 1 AND
                  json_extract(j, '\$[0].adjusted_error_pct') IS NOT NULL")" = 1 ] &&
       [ "$(sql "SELECT count(*) FROM validation WHERE ranks = 2 AND drift_compute <> 1 AND drift_memory <> 1")" = 1 ]; then
        ok validate-np2-drift
    else fail validate-np2-drift "$(head -c 600 "$T/out")"; fi
    # the gradients' allreduce timed alone before and after each run, against the prediction:
    # the slower of the two stored and reported, each reported
    if [ "$(json "json_extract(j, '\$[0].drift_allreduce') > 0 AND
                  json_extract(j, '\$[0].drift_allreduce') = max(json_extract(j, '\$[0].drift_allreduce_before'),
                                                                  json_extract(j, '\$[0].drift_allreduce_after')) AND
                  json_extract(j, '\$[0].drift_allreduce_before') > 0.05 AND json_extract(j, '\$[0].drift_allreduce_before') < 50")" = 1 ] &&
       [ "$(sql "SELECT count(*) FROM validation WHERE ranks = 2 AND drift_allreduce > 0")" = 1 ]; then
        ok validate-np2-allreduce-ref
    else fail validate-np2-allreduce-ref "$(head -c 1200 "$T/out")"; fi
    # where the two ranks ran, probed before and after each run: each run's placement
    # stored; the representative run priced at it (near: the near price itself)
    if [ "$(json "json_extract(j, '\$[0].placement') IN ('near', 'apart') AND json_extract(j, '\$[0].cores_ratio') >= 1
                  AND json_extract(j, '\$[0].rtt_before_ns') > 0 AND json_extract(j, '\$[0].rounds') = 2
                  AND json_extract(j, '\$[0].rounds_apart') BETWEEN 0 AND 2
                  AND json_extract(j, '\$[0].error_placed_pct') IS NOT NULL
                  AND (json_extract(j, '\$[0].placement') = 'apart' OR
                       json_extract(j, '\$[0].predicted_allreduce_placed_s') = json_extract(j, '\$[0].predicted_allreduce_s'))")" = 1 ] &&
       [ "$(sql "SELECT count(*) FROM run WHERE ranks = 2 AND model = 'p3b1' AND placement IN ('near', 'apart')
                 AND cores_cross >= 1")" = 2 ] &&
       [ "$(sql "SELECT count(*) FROM validation WHERE ranks = 2 AND predicted_allreduce_placed_s > 0
                 AND error_placed_pct IS NOT NULL AND rounds = 2")" = 1 ]; then
        ok validate-np2-placement
    else fail validate-np2-placement "$(head -c 1500 "$T/out"; sql "SELECT placement, cores_cross FROM run WHERE ranks = 2")"; fi
fi
# the text table shows it as before / after
if run validate-np2-text 0 mpi 2 "$DLPERF" validate p3b1 --batch 10 --steps 3 --threads 1; then
    expect validate-np2-text "$T/out" "AR ref"
    expect validate-np2-text-ref "$T/out" "^p3b1 .* x[0-9.]*/[0-9.]* "
    expect validate-np2-text-placement "$T/out" "^p3b1 *[0-9]/1 *\(near\|apart\) x[0-9.]* "
fi
# --csv under mpirun: one row per model with the iteration, its compute and its allreduce
if run validate-np2-csv 0 mpi 2 "$DLPERF" validate p3b1 --batch 10 --steps 2 --threads 1 --min-time 0 --csv; then
    if head -1 "$T/out" | grep -q '^model,ranks,scaling,batch,batch_per_rank,threads,predicted_s,measured_s,' &&
       [ "$(tail -n +2 "$T/out" | cut -d, -f1-6)" = "p3b1,2,strong,10,5,1" ] && [ "$(wc -l <"$T/out")" = 2 ] &&
       awk -F, 'NR == 2 && $12 > 0 && $13 > 0 { ok = 1 } END { exit !ok }' "$T/out"; then
        ok validate-np2-csv
    else fail validate-np2-csv "$(head -c 600 "$T/out")"; fi
fi
# a rank's memory holds the allreduce's scratch, probed at 2 ranks; the machine's memory is
# shared out among the ranks
if run predict-ranks-memory 0 "$DLPERF" predict p3b1 --batch 5 --threads 1 --ranks 2 --json; then
    [ "$(json "json_extract(j, '\$.memory_bytes.allreduce') $grown 0 AND json_extract(j, '\$.memory_bytes.allreduce_probed_ranks') = 2
               AND abs(json_extract(j, '\$.memory_bytes.process_total') - json_extract(j, '\$.memory_bytes.allocated')
                   - json_extract(j, '\$.memory_bytes.runtime') - json_extract(j, '\$.memory_bytes.allreduce')) < 1
               AND json_extract(j, '\$.memory_bytes.capacity_from') LIKE '%a rank''s share'
               AND json_extract(j, '\$.memory_bytes.runtime_measured_ranks') = 2")" = 1 ] &&
        ok predict-ranks-memory-json || fail predict-ranks-memory-json "$(head -c 1500 "$T/out")"
    # the allreduce's band (the communication calibration's spread) is in the iteration's
    [ "$(json "json_extract(j, '\$.allreduce_lo_s') <= json_extract(j, '\$.allreduce_s')
               AND json_extract(j, '\$.allreduce_s') <= json_extract(j, '\$.allreduce_hi_s')
               AND json_extract(j, '\$.allreduce_lo_s') > 0
               AND json_extract(j, '\$.iteration_lo_s') <= json_extract(j, '\$.iteration_s')
               AND json_extract(j, '\$.iteration_hi_s') - json_extract(j, '\$.iteration_s')
                   >= json_extract(j, '\$.allreduce_hi_s') - json_extract(j, '\$.allreduce_s') - 1e-12")" = 1 ] &&
        ok predict-ranks-allreduce-band || fail predict-ranks-allreduce-band "$(head -c 1500 "$T/out")"
fi
# the node's ranks share its last-level cache: each rank's ops are warm within its share
if run predict-one-cache 0 "$DLPERF" predict p3b1 --batch 5 --threads 1 --json; then
    whole=$(json "json_extract(j, '\$.cache_bytes')")
    if run predict-ranks-cache 0 "$DLPERF" predict p3b1 --batch 5 --threads 1 --ranks 2 --json; then
        [ "$(json "$whole > 0 AND abs(json_extract(j, '\$.cache_bytes') - $whole / 2.0) < 1")" = 1 ] &&
            ok predict-ranks-cache-share || fail predict-ranks-cache-share "$whole; $(json "json_extract(j, '\$.cache_bytes')")"
    fi
fi
# its runtime is a rank's with MPI started, as the 2-rank communication calibration measured it
if run predict-ranks-memory-text 0 "$DLPERF" predict p3b1 --batch 5 --threads 1 --ranks 2; then
    expect predict-ranks-memory-text "$T/out" "allreduce .*scratch for the gradients' allreduce, probed at 2 ranks"
    expect predict-ranks-runtime-text "$T/out" "runtime .*a rank's, measured by the 2-rank communication calibration"
fi
# np=4 once the 2-rank calibration exists: on a 2-core node (oversubscribed) it prices the
# per-rank speed from the ranks that fill the cores, shared out 4/2; with 4 or more cores
# nothing is oversubscribed and no 4-rank calibration exists: one process's
cores=$(getconf _NPROCESSORS_ONLN)
if run validate-np4-full-node 0 mpi 4 "$DLPERF" validate p3b1 --batch 20 --steps 3 --threads 1 --json; then
    case $cores in
    1) want="$one 4" ;;
    2) want="$together 2" ;;
    3) want="$one 1.33" ;;
    *) want="$one 1" ;;
    esac
    got=$(json "json_extract(j, '\$[0].calibration_id') || ' ' || round(json_extract(j, '\$[0].oversubscription'), 2)")
    [ "$got" = "$want" ] || [ "$got" = "$want.0" ] && ok validate-np4-full-node-calibration ||
        fail validate-np4-full-node-calibration "calibration and oversubscription $got, expected $want on $cores cores"
fi
run validate-scaling-needs-mpi 2 "$DLPERF" validate p3b1 --scaling weak &&
    expect validate-scaling-needs-mpi "$T/err" "run validate under mpirun"

# ---- tensor parallel: the shares' ops calibrated (calibrate --tp), the group's sums priced
# from the 2-rank communication calibration, the job compared with its prediction (last: its
# 2-rank calibration is the newest from here on) ----
if run cal-tp 0 mpi 2 "$DLPERF" calibrate --quick --threads 1 --only peak,memory,model-op,eltwise --models gpt-bytes \
       --tp 2 --batch 2; then
    [ "$(sql "SELECT count(*) FROM measurement WHERE key LIKE 'gemm m=256 n=384 k=256 %'")" -ge 1 ] &&
        ok cal-tp-share-ops || fail cal-tp-share-ops "no gemm of the share's QKV (n = 3 x 256 / 2)"
    [ "$(sql "SELECT count(*) FROM measurement WHERE kind = 'allreduce' AND family != 'comm'")" = 0 ] &&
        ok cal-tp-no-collective || fail cal-tp-no-collective "the group's sums were timed as kernels"
    # the vocabulary-parallel pair: the head's block of 128 of the 256 byte classes, the table's rows
    [ "$(sql "SELECT count(*) FROM measurement WHERE key LIKE 'softmax_xent fwd n=% classes=128 parts=2 total=256'")" -ge 1 ] &&
        [ "$(sql "SELECT count(*) FROM measurement WHERE key LIKE 'embedding fwd % vocab=128 dim=256 acc=0 part=1'")" -ge 1 ] &&
        ok cal-tp-vocab-ops || fail cal-tp-vocab-ops "$(sql "SELECT key FROM measurement WHERE key LIKE 'softmax_xent%' OR key LIKE 'embedding%'")"
fi
if run validate-tp 0 mpi 2 "$DLPERF" validate gpt-bytes --tp 2 --batch 2 --steps 2 --threads 1 --min-time 0 --json; then
    [ "$(json "json_extract(j, '\$[0].model') = 'gpt-bytes-tp2' AND json_extract(j, '\$[0].predicted_s') > 0
               AND json_extract(j, '\$[0].measured_s') > 0 AND json_extract(j, '\$[0].ranks') = 2
               AND json_extract(j, '\$[0].tensor_parallel') = 2 AND json_extract(j, '\$[0].data_parallel') = 1
               AND json_extract(j, '\$[0].batch') = 2")" = 1 ] &&
        ok validate-tp-json || fail validate-tp-json "$(head -c 800 "$T/out")"
    # the group's sums are ops of the prediction, priced from the collectives
    [ "$(sql "SELECT count(*) FROM prediction_op WHERE key LIKE 'allreduce fwd count=% ranks=2' AND time_s > 0")" -ge 8 ] &&
        ok validate-tp-sums-priced || fail validate-tp-sums-priced "$(sql "SELECT key, time_s FROM prediction_op WHERE key LIKE 'allreduce%' LIMIT 5")"
    [ "$(sql "SELECT count(*) FROM prediction_op WHERE key LIKE 'softmax_xent fwd % parts=2 total=256' AND time_s > 0")" = 1 ] &&
        ok validate-tp-vocab-loss || fail validate-tp-vocab-loss "$(sql "SELECT key, time_s FROM prediction_op WHERE key LIKE 'softmax_xent%'")"
fi
# the same job predicted without running it: the same price
if [ -n "$(json "json_extract(j, '\$[0].predicted_s')" 2>/dev/null)" ]; then
    tp_pred=$(json "json_extract(j, '\$[0].predicted_s')")
    if run predict-tp 0 "$DLPERF" predict gpt-bytes --ranks 2 --tp 2 --batch 2 --threads 1 --json; then
        [ "$(json "json_extract(j, '\$.model') = 'gpt-bytes-tp2' AND
                   abs(json_extract(j, '\$.iteration_s') - $tp_pred) <= 1e-9 * $tp_pred")" = 1 ] &&
            ok predict-tp-as-validated || fail predict-tp-as-validated "validate $tp_pred; $(head -c 400 "$T/out")"
    fi
fi
run predict-tp-indivisible 2 "$DLPERF" predict gpt-bytes --ranks 3 --tp 2 &&
    expect predict-tp-indivisible "$T/err" "--tp 2: must divide --ranks 3"
run validate-tp-indivisible 2 mpi 2 "$DLPERF" validate gpt-bytes --tp 4 --steps 1 --threads 1 &&
    expect validate-tp-indivisible "$T/err" "--tp 4: must divide the job's 2 ranks"

# ---- bench/allreduce_series: the host's steadiness check runs, and refuses bad input ----
if run allreduce-series 0 mpi 2 "$BUILD/bench/allreduce_series" 4096 1 0.5; then
    expect allreduce-series-header "$T/out" '^window_start_s,samples,p10_ms,median_ms,p90_ms$'
    # every window has samples and p10 <= median <= p90
    if awk -F, '/^[0-9]/ { n++; if ($2 < 1 || $3 > $4 || $4 > $5) bad++ } END { exit !(n >= 1 && !bad) }' "$T/out"; then
        ok allreduce-series-windows
    else fail allreduce-series-windows "$(head -c 400 "$T/out")"; fi
    expect allreduce-series-summary "$T/out" "^# windows' medians: .* over [0-9]* windows"
fi
run allreduce-series-bad-bytes 2 mpi 2 "$BUILD/bench/allreduce_series" 2 &&
    expect allreduce-series-bad-bytes "$T/err" "allreduce_series: BYTES '2': give a byte count from 4"
run allreduce-series-bad-flush 2 mpi 2 "$BUILD/bench/allreduce_series" 4096 1 1 disk &&
    expect allreduce-series-bad-flush "$T/err" "allreduce_series: FLUSH 'disk': give map or heap"
