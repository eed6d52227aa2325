/* cli/version.c — the git commit dlperf was built from (build/version.h, made by the
 * Makefile), recorded with every calibration and run. */
#include "cli/cli.h"
#include "version.h"

const char *dlperf_git_commit(void) { return DLPERF_GIT_COMMIT; }
