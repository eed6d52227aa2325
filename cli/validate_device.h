/* cli/validate_device.h — `dlperf validate --device NAME FILE...` (validate_device.c). */
#ifndef DLPERF_VALIDATE_DEVICE_H
#define DLPERF_VALIDATE_DEVICE_H

#include <stdbool.h>

#include "cli/cli.h"

/* Whether the command line asks to validate a device's evidence (--device given). */
bool validate_device_wanted(int argc, char **argv);
int validate_device(Cli *cli, int argc, char **argv);

#endif
