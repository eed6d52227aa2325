/* cli/calibration_show.h — `dlperf calibrate --show`: a stored calibration as people read it
 * (limits, per-family rates against them), as one JSON object or as CSV. */
#ifndef DLPERF_CALIBRATION_SHOW_H
#define DLPERF_CALIBRATION_SHOW_H

#include "cli/cli.h"

/* Prints calibration `cal` (its measurements read from db): the limits and the families'
 * rates first, where the host put the threads' cores in one line (verbose: in full, with the
 * limits' definitions); JSON holds everything; csv: the limits and the families' rates as one
 * long table, a value a row (calibration_show.c, print_csv). Returns an exit code. */
int calibration_show(const Cli *cli, Db *db, const CalibrationRow *cal, bool verbose, bool csv);

#endif
