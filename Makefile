# dlperf — build, test and demo.
#   make            build build/dlperf (installs missing Debian packages first)
#   make demo       the main job: quick calibration, then predict + validate three models
#   make test       unit, gradient-check and CLI tests (ends with "N passed, M failed")
#   make asan       the test suite under AddressSanitizer + UBSan
#   make fuzz       the libFuzzer harnesses of the input readers, FUZZ_SECONDS (600) each
#                   (fuzz/fuzz.mk; make test replays their corpora)
#   make bench      performance comparisons (bench/, not part of the tests)

CC      ?= gcc
BUILD   ?= build
OPT     ?= -O2
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
# No -ffast-math anywhere: gradient checks and validations need IEEE semantics.
# pkg-config runs when a recipe does (recursive variables), after `deps` installed the
# packages on a fresh machine. MPI: the same binary runs alone or under mpirun.
# OpenBLAS: Debian's OpenMP build, named explicitly (headers, library and run path), not
# the pthread build Debian's alternatives default to. With one thread pool for GEMMs and
# the kernels' OpenMP regions, no OpenBLAS worker spins on the core an element-wise kernel
# needs after each GEMM (that made large ops in a step run at one core's speed; docs/runtime.md,
# Threading).
BLAS_PKG    = PKG_CONFIG_LIBDIR=/usr/lib/$(shell $(CC) -print-multiarch)/openblas-openmp/pkgconfig pkg-config
BLAS_CFLAGS = $(shell $(BLAS_PKG) --cflags openblas 2>/dev/null)
BLAS_LIBS   = $(shell $(BLAS_PKG) --libs openblas 2>/dev/null) \
              -Wl,-rpath,$(shell $(BLAS_PKG) --variable=libdir openblas 2>/dev/null)
CFLAGS  += -std=c11 $(OPT) -g $(WARN) -fopenmp -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L \
           -I. $(BLAS_CFLAGS) $(shell pkg-config --cflags gsl libcjson sqlite3 mpi-c 2>/dev/null)
# Kernel files only: more aggressive loop optimisation (BLIS habit: only kernels get
# kernel flags). Still portable x86-64: no -march here; hot loops use target_clones.
# -std=c11 turns off contraction of a*b+c into FMA; kernels may use it (it only makes
# their rounding better; this is not -ffast-math).
KFLAGS   = -O3 -ffp-contract=fast
LDLIBS  += -fopenmp $(BLAS_LIBS) -lgsl -lcjson -lsqlite3 -lz -lm $(shell pkg-config --libs mpi-c 2>/dev/null)
TEST_LDLIBS = -lcmocka

LIB_DIRS = ops models microbench predictor verify suite report db
LIB_SRC  = $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/systems_builtin.o
# the spec sheets (devices, interconnects, systems), compiled into the binary
SPEC_JSON = $(sort $(filter-out systems/profiles/%,$(wildcard systems/*.json systems/*/*.json)))
# the devices' compact evidence profiles (dlperf systems profile; scripts/make-profiles.sh)
PROFILE_JSON = $(sort $(wildcard systems/profiles/*.json))
CLI_SRC  = $(wildcard cli/*.c)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC = $(wildcard tests/test_*.c)
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT = $(filter-out $(TEST_SRC),$(wildcard tests/*.c))

DEPS_STAMP = $(BUILD)/.deps-ok

.PHONY: all deps demo test asan bench clean
all: $(BUILD)/dlperf

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@mkdir -p $(BUILD)
	@scripts/install-deps.sh
	@touch $@

# The git commit is compiled into cli/version.c only, so a new commit relinks, not rebuilds.
$(BUILD)/version.h: FORCE | $(DEPS_STAMP)
	@mkdir -p $(BUILD)
	@c=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	 printf '#define DLPERF_GIT_COMMIT "%s"\n' "$$c" > $@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
FORCE:

$(BUILD)/ops/%.o: ops/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(KFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/cli/version.o: $(BUILD)/version.h
$(BUILD)/cli/version.o: CFLAGS += -I$(BUILD)

$(BUILD)/systems_builtin.c: $(SPEC_JSON) $(PROFILE_JSON) scripts/embed-specs.sh | $(DEPS_STAMP)
	@mkdir -p $(BUILD)
	scripts/embed-specs.sh $@ $(SPEC_JSON) -- $(PROFILE_JSON)

$(BUILD)/systems_builtin.o: $(BUILD)/systems_builtin.c
	$(CC) -std=c11 -c $< -o $@

$(BUILD)/libdlperf.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/dlperf: $(CLI_OBJ) $(BUILD)/libdlperf.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libdlperf.a $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(BUILD)/libdlperf.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT) $(BUILD)/libdlperf.a $(TEST_LDLIBS) $(LDLIBS)

MPI_TEST_BIN = $(BUILD)/tests/mpi/equivalence

test: $(BUILD)/dlperf $(TEST_BIN) $(MPI_TEST_BIN) $(BUILD)/bench/allreduce_series
	@scripts/install-deps.sh --test
	@BUILD=$(BUILD) tests/run_tests.sh

# AddressSanitizer with its leak check and UBSan, every finding fatal (a test that meets one
# fails). Open MPI keeps its component registries until exit and unloads its components
# first: tests/lsan.supp names its libraries, and the ranks under mpirun unwind each
# allocation's stack fully (the fast unwinder stops in Open MPI's frames, which have no
# frame pointers) so that a library frame is found; elsewhere that would cost 18x.
ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 \
	DLPERF_RANK_ASAN_OPTIONS=fast_unwind_on_malloc=0 DLPERF_SANITIZED="ASan+UBSan" DLPERF_MPI_LIMIT_S=1200 \
	$(MAKE) BUILD=build-asan OPT="-O1 $(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" test

demo: $(BUILD)/dlperf
	$(BUILD)/dlperf calibrate --quick --models p1b1,alexnet-owt,basic-lstm
	$(BUILD)/dlperf validate p1b1 alexnet-owt basic-lstm

# built by `make bench`, not run there (it needs mpirun and takes minutes; docs/benchmarks.md);
# tests/test_mpi.sh runs it for a second
$(BUILD)/bench/allreduce_series: bench/allreduce_series.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

bench: $(BUILD)/dlperf $(BUILD)/bench/allreduce_series
	@scripts/install-deps.sh --bench
	bench/roofline.py
	bench/sweep_speed.py
	bench/pytorch_compare.py

clean:
	rm -rf build build-asan build-fuzz

include fuzz/fuzz.mk

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
