# fuzz/fuzz.mk — libFuzzer harnesses for every reader of outside input (fuzz/fuzz_*.c),
# included by the top-level Makefile (it also works alone: make -f fuzz/fuzz.mk TARGET).
#   make fuzz-build     build-fuzz/fuzz_<name> for every harness (clang, ASan + UBSan)
#   make fuzz           each harness for FUZZ_SECONDS (600) on its corpus; table in
#                       build-fuzz/fuzz-report.txt, crashes under build-fuzz/artifacts/<name>/
#   make fuzz-replay    every harness over fuzz/corpus/<name>/ and fuzz/regressions/<name>/
#                       once (what tests/test_fuzz.sh runs)
# Only these targets need clang: nothing here runs a program while the Makefile is read.
FUZZ_CC ?= clang
FUZZ_BUILD = build-fuzz
FUZZ_SECONDS ?= 600
# harness name and its -max_len (bytes): room for the seeds and a little more
FUZZ_HARNESSES = model_json:16384 spec:8192 idx:4096 weights:8192 op_key:256 import:8192 db_read:4096 hf_config:4096
FUZZ_NAMES = $(foreach h,$(FUZZ_HARNESSES),$(word 1,$(subst :, ,$(h))))
FUZZ_BINS = $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)

# The library as the Makefile builds it, with clang, both sanitizers (every UBSan finding
# fatal) and libFuzzer's coverage instrumentation (fuzzer-no-link; the harnesses link
# libFuzzer's main). Every kernel at -O1: the fuzzers read files, they do not time kernels.
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_BLAS_PKG = PKG_CONFIG_LIBDIR=/usr/lib/$(shell $(FUZZ_CC) -print-multiarch 2>/dev/null)/openblas-openmp/pkgconfig pkg-config
FUZZ_CFLAGS = -std=c11 -O1 -g -Wall -Wextra -Wno-unused-parameter -fopenmp -D_DEFAULT_SOURCE \
              -D_POSIX_C_SOURCE=200809L -I$(CURDIR) $(shell $(FUZZ_BLAS_PKG) --cflags openblas 2>/dev/null) \
              $(shell pkg-config --cflags gsl libcjson sqlite3 mpi-c 2>/dev/null) $(FUZZ_SAN)
FUZZ_LDLIBS = -fopenmp $(shell $(FUZZ_BLAS_PKG) --libs openblas 2>/dev/null) \
              -Wl,-rpath,$(shell $(FUZZ_BLAS_PKG) --variable=libdir openblas 2>/dev/null) \
              -lgsl -lcjson -lsqlite3 -lz -lm $(shell pkg-config --libs mpi-c 2>/dev/null)

FUZZ_LIB_DIRS = ops models microbench predictor verify suite report db
FUZZ_LIB_SRC = $(foreach d,$(FUZZ_LIB_DIRS),$(wildcard $(d)/*.c))
FUZZ_LIB_OBJ = $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/%.o) $(FUZZ_BUILD)/systems_builtin.o
FUZZ_SPEC_JSON = $(sort $(filter-out systems/profiles/%,$(wildcard systems/*.json systems/*/*.json)))
FUZZ_PROFILE_JSON = $(sort $(wildcard systems/profiles/*.json))

# Included before the Makefile's first target, this file must not become the default goal.
FUZZ_SAVED_GOAL := $(.DEFAULT_GOAL)

.PHONY: fuzz-build fuzz fuzz-replay fuzz-check-cc
fuzz-build: $(FUZZ_BINS)

fuzz-check-cc:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { echo "fuzz: $(FUZZ_CC) not found (apt-get install clang libomp-dev)" >&2; exit 1; }

$(FUZZ_BUILD)/%.o: %.c | fuzz-check-cc
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

# clang 14 fails (an internal error: "Cannot select: intrinsic %llvm.x86.clflushopt") where it
# inlines protocol.c's target("clflushopt") evict_range into an OpenMP region; with the
# feature on for the file it compiles. Still run-time checked: have_clflushopt() guards the
# call, and the compiler emits clflushopt nowhere else.
$(FUZZ_BUILD)/microbench/protocol.o: FUZZ_CFLAGS += -mclflushopt

$(FUZZ_BUILD)/systems_builtin.c: $(FUZZ_SPEC_JSON) $(FUZZ_PROFILE_JSON) scripts/embed-specs.sh
	@mkdir -p $(FUZZ_BUILD)
	scripts/embed-specs.sh $@ $(FUZZ_SPEC_JSON) -- $(FUZZ_PROFILE_JSON)

$(FUZZ_BUILD)/systems_builtin.o: $(FUZZ_BUILD)/systems_builtin.c | fuzz-check-cc
	$(FUZZ_CC) -std=c11 -c $< -o $@

$(FUZZ_BUILD)/libdlperf.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.h $(FUZZ_BUILD)/libdlperf.a | fuzz-check-cc
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libdlperf.a $(FUZZ_LDLIBS)

# -fork is not used: a crash stops that fuzzer (its input is under artifacts/), the others run.
fuzz: fuzz-build
	@FUZZ_BUILD=$(FUZZ_BUILD) sh fuzz/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

fuzz-replay: fuzz-build
	@FUZZ_BUILD=$(FUZZ_BUILD) sh fuzz/replay.sh $(FUZZ_NAMES)

-include $(wildcard $(FUZZ_BUILD)/*/*.d)

.DEFAULT_GOAL := $(FUZZ_SAVED_GOAL)
