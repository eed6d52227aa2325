/* cli/evidence_show.h — `dlperf calibrate --show --device NAME` (evidence_show.c). */
#ifndef DLPERF_EVIDENCE_SHOW_H
#define DLPERF_EVIDENCE_SHOW_H

#include "cli/cli.h"

/* Prints the evidence the database holds of the device (table, --json, or csv: a row per
 * evidence group). */
int evidence_show(Cli *cli, Db *db, const char *device, bool csv);

#endif
