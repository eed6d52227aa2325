/* tests/test_comm_model.c — the communication models: each allreduce algorithm's formula
 * against hand-computed values, the hierarchical algorithm's limits, the data-parallel
 * iteration with and without overlap, and the fit: communication calibrations made from
 * a known ring (alpha, beta, gamma) in a real SQLite file give those parameters back,
 * rank the ring first, reproduce measured points and extrapolate to unmeasured rank
 * counts by the formula; the allreduce's memory from the calibrations' probes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predictor/comm_model.h"

static const LinkParams link_ = {.alpha_s = 1e-6, .beta_Bps = 1e9, .gamma_sPB = 1e-10};

static void test_formulas(void **state)
{
    CommParams c = {.intra = link_, .inter = link_, .ranks_per_node = 1};
    const double n = 1e6;
    /* ring, p = 4: 2*3 alpha + 2*(3/4) n/beta + (3/4) n gamma */
    assert_float_equal(allreduce_model_s(AR_RING, n, 4, &c), 6e-6 + 1.5e-3 + 7.5e-5, 1e-12);
    /* binary tree, p = 4: 2*2 (alpha + n/beta) + 2 n gamma (seed 003: 2 w log2 p / beta) */
    assert_float_equal(allreduce_model_s(AR_TREE, n, 4, &c), 4 * (1e-6 + 1e-3) + 2e-4, 1e-12);
    /* recursive doubling, p = 8: 3 (alpha + n/beta + n gamma) */
    assert_float_equal(allreduce_model_s(AR_RECURSIVE_DOUBLING, n, 8, &c), 3 * (1e-6 + 1e-3 + 1e-4), 1e-12);
    /* recursive halving, p = 8: 6 alpha + 2 (7/8) n/beta + (7/8) n gamma */
    assert_float_equal(allreduce_model_s(AR_RECURSIVE_HALVING, n, 8, &c), 6e-6 + 1.75e-3 + 8.75e-5, 1e-12);
    /* a non-power of two takes the extra step: p = 5 costs as 3 rounds */
    assert_float_equal(allreduce_model_s(AR_RECURSIVE_DOUBLING, n, 5, &c), 3 * (1e-6 + 1e-3 + 1e-4), 1e-12);
    for (int a = 0; a < AR_COUNT; a++)
        assert_true(allreduce_model_s((AllreduceAlgo)a, n, 1, &c) == 0);
    /* bandwidth-optimal algorithms beat the tree for large messages, the tree's latency
     * term beats the ring's for small ones at many ranks */
    assert_true(allreduce_model_s(AR_RING, 1e8, 64, &c) < allreduce_model_s(AR_TREE, 1e8, 64, &c));
    assert_true(allreduce_model_s(AR_TREE, 8, 1024, &c) < allreduce_model_s(AR_RING, 8, 1024, &c));
}

static void test_hierarchical(void **state)
{
    LinkParams fast = {1e-7, 1e11, 1e-11}, slow = {5e-6, 1e10, 1e-11};
    const double n = 4e8;
    /* all ranks in one node: the intra ring reduce-scatter + allgather is the ring */
    CommParams one = {.intra = fast, .inter = slow, .ranks_per_node = 8};
    CommParams flat_fast = {.intra = fast, .inter = fast, .ranks_per_node = 8};
    assert_float_equal(allreduce_model_s(AR_HIERARCHICAL, n, 8, &one), allreduce_model_s(AR_RING, n, 8, &flat_fast),
                       1e-12);
    /* one rank per node: a ring between the nodes */
    CommParams spread = {.intra = fast, .inter = slow, .ranks_per_node = 1};
    CommParams flat_slow = {.intra = slow, .inter = slow, .ranks_per_node = 1};
    assert_float_equal(allreduce_model_s(AR_HIERARCHICAL, n, 16, &spread),
                       allreduce_model_s(AR_RING, n, 16, &flat_slow), 1e-12);
    /* 8 ranks per node over 16 nodes: the 8 shard rings share the node's injection
     * bandwidth, so the bandwidth term is that of one ring of n over 16 nodes */
    CommParams nodes = {.intra = fast, .inter = slow, .ranks_per_node = 8};
    const double intra_part = 7 * (fast.alpha_s + n / 8 / fast.beta_Bps + n / 8 * fast.gamma_sPB) +
                              7 * (fast.alpha_s + n / 8 / fast.beta_Bps);
    const double inter_part = 2 * 15 * slow.alpha_s + 2.0 * 15 / 16 * n / slow.beta_Bps + 15.0 / 16 * n / 8 * slow.gamma_sPB;
    assert_float_equal(allreduce_model_s(AR_HIERARCHICAL, n, 128, &nodes), intra_part + inter_part, 1e-9);
    /* for small messages it beats the flat ring's 254 slow-latency steps */
    assert_true(allreduce_model_s(AR_HIERARCHICAL, 1e4, 128, &nodes) < allreduce_model_s(AR_RING, 1e4, 128, &nodes));
    /* a flat tree across nodes shares the node's NICs among its 8 ranks */
    CommParams shared = {.intra = fast, .inter = {slow.alpha_s, slow.beta_Bps / 8, slow.gamma_sPB}, .ranks_per_node = 1};
    assert_float_equal(allreduce_model_s(AR_TREE, n, 128, &nodes), allreduce_model_s(AR_TREE, n, 128, &shared), 1e-12);
}

static void test_dp_iteration(void **state)
{
    DpStep s = {.fwd_s = 1, .bwd_s = 2, .update_s = 0.5, .allreduce_s = 1.5};
    assert_float_equal(dp_iteration_s(&s), 5.0, 1e-12);
    s.overlap = true;
    assert_float_equal(dp_iteration_s(&s), 3.5, 1e-12);
    s.allreduce_s = 3;
    assert_float_equal(dp_iteration_s(&s), 4.5, 1e-12);
}

static void test_algo_names(void **state)
{
    for (int a = 0; a < AR_COUNT; a++) {
        AllreduceAlgo back;
        assert_int_equal(allreduce_algo_parse(allreduce_algo_name((AllreduceAlgo)a), &back), 0);
        assert_int_equal(back, a);
    }
    AllreduceAlgo x;
    assert_int_equal(allreduce_algo_parse("butterfly", &x), -1);
}

/* ---- the fit, from a real database ---- */

/* A fresh SQLite file in its own temporary folder, holding one machine. */
typedef struct {
    char dir[64];
    Db *db;
    MachineRow machine;
} TestDb;

static TestDb test_db_open(void)
{
    TestDb d = {.dir = "/tmp/dlperf-test-comm-XXXXXX", .machine = {.cores = 2, .mem_bytes = 1}};
    char path[128], err[256];
    assert_non_null(mkdtemp(d.dir));
    snprintf(path, sizeof path, "%s/comm.db", d.dir);
    assert_int_equal(db_open(path, &d.db, err, sizeof err), 0);
    snprintf(d.machine.fingerprint, sizeof d.machine.fingerprint, "test");
    assert_int_equal(db_machine_upsert(d.db, &d.machine), 0);
    return d;
}

static void test_db_close(TestDb *d)
{
    db_close(d->db);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d->dir);
    assert_int_equal(system(cmd), 0);
}

static int64_t add_comm_calibration(Db *db, int64_t machine_id, int ranks, const LinkParams *truth)
{
    CalibrationRow cal = {.machine_id = machine_id};
    snprintf(cal.mode, sizeof cal.mode, "comm");
    cal.sw.ranks = ranks;
    cal.sw.threads = 1;
    snprintf(cal.sw.mpi_library, sizeof cal.sw.mpi_library, "Test MPI 1.0");
    assert_int_equal(db_calibration_begin(db, &cal), 0);
    CommParams c = {.intra = *truth, .inter = *truth, .ranks_per_node = 1 << 20};
    for (int e = 2; e <= 26; e += 2) {
        double bytes = (double)(1 << e);
        MeasurementRow m = {.calibration_id = cal.id, .validated = true, .reps = 5, .inner = 1, .threads = 1,
                            .bytes = bytes};
        snprintf(m.family, sizeof m.family, "comm");
        snprintf(m.phase, sizeof m.phase, "comm");
        /* allreduce by the ring, with a small deterministic wobble (measurements are not exact) */
        m.median_s = allreduce_model_s(AR_RING, bytes, ranks, &c) * (1 + 0.01 * ((e / 2) % 3 - 1));
        snprintf(m.kind, sizeof m.kind, "allreduce");
        snprintf(m.key, sizeof m.key, "allreduce bytes=%d ranks=%d", 1 << e, ranks);
        assert_int_equal(db_measurement_insert(db, &m), 0);
        m.median_s = truth->alpha_s + bytes / truth->beta_Bps;
        snprintf(m.kind, sizeof m.kind, "pingpong");
        snprintf(m.key, sizeof m.key, "pingpong bytes=%d ranks=%d", 1 << e, ranks);
        m.id = 0;
        assert_int_equal(db_measurement_insert(db, &m), 0);
    }
    assert_int_equal(db_calibration_finish(db, cal.id, "complete"), 0);
    return cal.id;
}

static void test_fit_recovers_the_ring(void **state)
{
    TestDb d = test_db_open();
    Db *db = d.db;
    const MachineRow m = d.machine;
    char err[256];
    /* without a communication calibration: a clear error naming what to run */
    assert_null(comm_model_load(db, m.id, err, sizeof err));
    assert_non_null(strstr(err, "calibrate --only comm"));

    const LinkParams truth = {.alpha_s = 2e-6, .beta_Bps = 5e9, .gamma_sPB = 2e-10};
    add_comm_calibration(db, m.id, 2, &truth);
    add_comm_calibration(db, m.id, 4, &truth);
    CommModel *cm = comm_model_load(db, m.id, err, sizeof err);
    assert_non_null(cm);
    CommFitInfo in;
    comm_model_info(cm, &in);
    assert_int_equal(in.nranks, 2);
    assert_string_equal(in.mpi_library, "Test MPI 1.0");
    assert_true(fabs(in.p2p_alpha_s - truth.alpha_s) < 0.05 * truth.alpha_s);
    assert_true(fabs(in.p2p_beta_Bps - truth.beta_Bps) < 0.02 * truth.beta_Bps);
    assert_int_equal(in.algos[0].algo, AR_RING);
    assert_true(in.algos[0].median_rel_err < 0.02);
    assert_true(in.algos[0].median_rel_err < in.algos[AR_COUNT - 2].median_rel_err);
    assert_true(fabs(in.algos[0].gamma_sPB - truth.gamma_sPB) < 0.1 * truth.gamma_sPB);

    CommParams c = {.intra = truth, .inter = truth, .ranks_per_node = 1 << 20};
    CommSource src;
    /* a measured rank count and size: the measurement itself (the wobble included) */
    double at = comm_model_allreduce_s(cm, 1 << 20, 4, &src);
    assert_int_equal(src, COMM_MEASURED);
    assert_true(fabs(at - allreduce_model_s(AR_RING, 1 << 20, 4, &c)) < 0.015 * at);
    /* between measured sizes: interpolated */
    double mid = comm_model_allreduce_s(cm, 3 << 19, 2, &src);
    assert_int_equal(src, COMM_MEASURED);
    assert_true(fabs(mid - allreduce_model_s(AR_RING, 3 << 19, 2, &c)) < 0.05 * mid);
    /* an unmeasured rank count: the best algorithm's formula */
    double far = comm_model_allreduce_s(cm, 1e8, 64, &src);
    assert_int_equal(src, COMM_FITTED);
    assert_true(fabs(far - allreduce_model_s(AR_RING, 1e8, 64, &c)) < 0.05 * far);
    assert_true(comm_model_allreduce_s(cm, 1e8, 1, NULL) == 0);
    comm_model_free(cm);
    test_db_close(&d);
}

/* A running 2-rank communication calibration of d's machine; its id. */
static int64_t begin_two_rank_calibration(TestDb *d)
{
    CalibrationRow cal = {.machine_id = d->machine.id};
    snprintf(cal.mode, sizeof cal.mode, "comm");
    cal.sw.ranks = 2;
    cal.sw.threads = 1;
    assert_int_equal(db_calibration_begin(d->db, &cal), 0);
    return cal.id;
}

/* Stores m as the calibration's `kind` ("allreduce", "pingpong") at 2^e bytes, 2 ranks. */
static void insert_two_rank_row(TestDb *d, int64_t cal_id, const char *kind, int e, MeasurementRow m)
{
    m.id = 0;
    m.calibration_id = cal_id;
    m.validated = true;
    m.inner = m.threads = 1;
    m.bytes = (double)(1 << e);
    snprintf(m.family, sizeof m.family, "comm");
    snprintf(m.phase, sizeof m.phase, "comm");
    snprintf(m.kind, sizeof m.kind, "%s", kind);
    snprintf(m.key, sizeof m.key, "%s bytes=%d ranks=2", kind, 1 << e);
    assert_int_equal(db_measurement_insert(d->db, &m), 0);
}

/* The allreduce's band: each measurement's 95% confidence interval moved onto its median
 * (as the cost model's exact prices), interpolated like the medians; a rank count priced by
 * the fitted algorithm has none. */
static void test_allreduce_band(void **state)
{
    TestDb d = test_db_open();
    const int64_t cal_id = begin_two_rank_calibration(&d);
    for (int e = 10; e <= 24; e += 2) {
        const double t = 1e-6 + (double)(1 << e) / 5e9;
        /* median t; mean 1.1 t with its interval 0.9 t .. 1.3 t (a skewed spread); min 0.85 t */
        insert_two_rank_row(&d, cal_id, "allreduce", e,
                            (MeasurementRow){.reps = 9, .median_s = t, .mean_s = 1.1 * t, .ci95_lo_s = 0.9 * t,
                                             .ci95_hi_s = 1.3 * t, .min_s = 0.85 * t, .max_s = 1.5 * t});
        const double p = t / 2;
        insert_two_rank_row(&d, cal_id, "pingpong", e,
                            (MeasurementRow){.reps = 9, .median_s = p, .mean_s = p, .ci95_lo_s = p, .ci95_hi_s = p,
                                             .min_s = p, .max_s = p});
    }
    assert_int_equal(db_calibration_finish(d.db, cal_id, "complete"), 0);
    char err[256];
    CommModel *cm = comm_model_load(d.db, d.machine.id, err, sizeof err);
    assert_non_null(cm);
    double lo, hi;
    /* at a measured size: median - (mean - ci_lo) = 0.8 t, but not below the fastest sample
     * (0.85 t); median + (ci_hi - mean) = 1.2 t */
    const double t = comm_model_allreduce_s(cm, 1 << 20, 2, NULL);
    comm_model_allreduce_band(cm, 1 << 20, 2, &lo, &hi);
    assert_float_equal(lo / t, 0.85, 1e-9);
    assert_float_equal(hi / t, 1.2, 1e-9);
    /* between sizes: interpolated, around the interpolated median */
    const double mid = comm_model_allreduce_s(cm, 3 << 19, 2, NULL);
    comm_model_allreduce_band(cm, 3 << 19, 2, &lo, &hi);
    assert_true(lo < mid && mid < hi);
    assert_float_equal(lo / mid, 0.85, 0.01);
    assert_float_equal(hi / mid, 1.2, 0.01);
    /* a rank count not calibrated: the fitted model, no band */
    const double far = comm_model_allreduce_s(cm, 1e8, 8, NULL);
    comm_model_allreduce_band(cm, 1e8, 8, &lo, &hi);
    assert_true(lo == far && hi == far);
    comm_model_free(cm);
    test_db_close(&d);
}

/* The apart placement's price: at a size with passes apart, its apart median; between two
 * such sizes the near curve times their apart/near ratios interpolated in log(bytes);
 * beyond them, the nearest one's ratio; none where no pass was apart, or at a rank count
 * not calibrated. The calibration's fastest round trip between the ranks comes back. */
static void test_allreduce_apart(void **state)
{
    TestDb d = test_db_open();
    const int64_t cal_id = begin_two_rank_calibration(&d);
    for (int e = 10; e <= 24; e += 2) {
        const double t = 1e-6 + (double)(1 << e) / 5e9;
        MeasurementRow m = {.reps = 9, .median_s = t, .mean_s = t, .ci95_lo_s = t, .ci95_hi_s = t, .min_s = t,
                            .max_s = t};
        /* passes apart at 64 KiB (x1.2) and 4 MiB (x0.8) only */
        if (e == 16 || e == 22) {
            m.apart_s = (e == 16 ? 1.2 : 0.8) * t;
            m.far_passes = 1;
            snprintf(m.pass_placement, sizeof m.pass_placement, "nan");
        }
        insert_two_rank_row(&d, cal_id, "allreduce", e, m);
    }
    assert_int_equal(db_calibration_set_rtt(d.db, cal_id, 52.5), 0);
    assert_int_equal(db_calibration_finish(d.db, cal_id, "complete"), 0);
    char err[256];
    CommModel *cm = comm_model_load(d.db, d.machine.id, err, sizeof err);
    assert_non_null(cm);
    assert_float_equal(comm_model_rtt_fastest_ns(cm, 2), 52.5, 1e-12);
    assert_true(comm_model_rtt_fastest_ns(cm, 4) == 0);
    /* at the sizes timed apart: their apart medians */
    assert_float_equal(comm_model_allreduce_apart_s(cm, 1 << 16, 2) / comm_model_allreduce_s(cm, 1 << 16, 2, NULL), 1.2,
                       1e-9);
    assert_float_equal(comm_model_allreduce_apart_s(cm, 1 << 22, 2) / comm_model_allreduce_s(cm, 1 << 22, 2, NULL), 0.8,
                       1e-9);
    /* halfway between them in log(bytes), 512 KiB: x1.0; beyond, held at the nearest */
    assert_float_equal(comm_model_allreduce_apart_s(cm, 1 << 19, 2) / comm_model_allreduce_s(cm, 1 << 19, 2, NULL), 1.0,
                       1e-9);
    assert_float_equal(comm_model_allreduce_apart_s(cm, 1 << 10, 2) / comm_model_allreduce_s(cm, 1 << 10, 2, NULL), 1.2,
                       1e-9);
    assert_float_equal(comm_model_allreduce_apart_s(cm, 1 << 24, 2) / comm_model_allreduce_s(cm, 1 << 24, 2, NULL), 0.8,
                       1e-9);
    assert_true(comm_model_allreduce_apart_s(cm, 1 << 20, 8) == 0); /* 8 ranks not calibrated */
    comm_model_free(cm);
    test_db_close(&d);
    /* a calibration with no pass apart prices no apart placement */
    d = test_db_open();
    const LinkParams truth = {.alpha_s = 2e-6, .beta_Bps = 5e9, .gamma_sPB = 2e-10};
    add_comm_calibration(d.db, d.machine.id, 2, &truth);
    cm = comm_model_load(d.db, d.machine.id, err, sizeof err);
    assert_non_null(cm);
    assert_true(comm_model_allreduce_apart_s(cm, 1 << 20, 2) == 0);
    assert_true(comm_model_rtt_fastest_ns(cm, 2) == 0);
    comm_model_free(cm);
    test_db_close(&d);
}

/* The allreduce's memory: what the probes measured at their sizes, linear between them, in
 * proportion beyond; a rank count not probed takes the nearest probed one below, else
 * above; calibrations without probes (older ones) give 0 and say so. */
static void test_allreduce_scratch_from_probes(void **state)
{
    TestDb d = test_db_open();
    Db *db = d.db;
    const MachineRow m = d.machine;
    char err[256];
    const LinkParams truth = {.alpha_s = 2e-6, .beta_Bps = 5e9, .gamma_sPB = 2e-10};
    const double MiB = 1 << 20;
    const int64_t four = add_comm_calibration(db, m.id, 4, &truth);
    CommModel *cm = comm_model_load(db, m.id, err, sizeof err);
    assert_non_null(cm);
    int at = -1;
    assert_true(comm_model_allreduce_scratch(cm, 64 * MiB, 4, &at) == 0);
    assert_int_equal(at, 0); /* not probed */
    comm_model_free(cm);

    /* 4 ranks: a block of bytes/4 and 1 MiB of the library's own; stored out of order */
    const double sizes[] = {16 * MiB, 1 * MiB, 4 * MiB};
    for (int i = 0; i < 3; i++)
        assert_int_equal(db_comm_memory_insert(db, four, sizes[i], sizes[i] / 4 + MiB), 0);
    cm = comm_model_load(db, m.id, err, sizeof err);
    assert_non_null(cm);
    assert_float_equal(comm_model_allreduce_scratch(cm, 4 * MiB, 4, &at), 2 * MiB, 1);
    assert_int_equal(at, 4);
    assert_float_equal(comm_model_allreduce_scratch(cm, 10 * MiB, 4, &at), 3.5 * MiB, 1); /* linear: 2 .. 5 MiB */
    assert_float_equal(comm_model_allreduce_scratch(cm, 64 * MiB, 4, &at), 20 * MiB, 1); /* 5/16 of the buffer */
    assert_float_equal(comm_model_allreduce_scratch(cm, 0.5 * MiB, 4, &at), 0.625 * MiB, 1);
    /* 2 ranks, not probed: from 4 ranks, the only probes (above) */
    assert_float_equal(comm_model_allreduce_scratch(cm, 4 * MiB, 2, &at), 2 * MiB, 1);
    assert_int_equal(at, 4);
    assert_true(comm_model_allreduce_scratch(cm, 4 * MiB, 1, &at) == 0);
    comm_model_free(cm);

    /* 2 ranks probed too (half the buffer): 3 ranks take 2's (below), 8 take 4's */
    const int64_t two = add_comm_calibration(db, m.id, 2, &truth);
    for (int i = 0; i < 3; i++)
        assert_int_equal(db_comm_memory_insert(db, two, sizes[i], sizes[i] / 2), 0);
    cm = comm_model_load(db, m.id, err, sizeof err);
    assert_non_null(cm);
    assert_float_equal(comm_model_allreduce_scratch(cm, 16 * MiB, 2, &at), 8 * MiB, 1);
    assert_int_equal(at, 2);
    assert_float_equal(comm_model_allreduce_scratch(cm, 16 * MiB, 3, &at), 8 * MiB, 1);
    assert_int_equal(at, 2);
    assert_float_equal(comm_model_allreduce_scratch(cm, 16 * MiB, 8, &at), 5 * MiB, 1);
    assert_int_equal(at, 4);
    comm_model_free(cm);
    test_db_close(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formulas),
        cmocka_unit_test(test_hierarchical),
        cmocka_unit_test(test_dp_iteration),
        cmocka_unit_test(test_algo_names),
        cmocka_unit_test(test_fit_recovers_the_ring),
        cmocka_unit_test(test_allreduce_band),
        cmocka_unit_test(test_allreduce_apart),
        cmocka_unit_test(test_allreduce_scratch_from_probes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
