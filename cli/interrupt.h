/* cli/interrupt.h — what SIGINT and SIGTERM do to a command.
 *
 * Every command that writes the database ends on a signal with exit 128 + the signal and
 * one line on stderr saying what it kept. The database needs nothing from a dying
 * process: each write is one SQLite transaction (WAL), so a process that ends at any
 * instant, SIGKILL included, leaves every committed row whole and no partial one; rows
 * that say "running" are shown as interrupted by the next dlperf that looks (their pid
 * is gone).
 *
 * Two ways to end:
 *   interrupt_exit_on_signal  the command has no stopping point of its own (run, validate,
 *                             import): the handler says what interrupt_kept last recorded
 *                             and ends the process at once (_exit): an open transaction is
 *                             rolled back by SQLite, as after a crash.
 *   interrupt_flag_on_signal  the command stops at its next check of interrupt_requested
 *                             (calibrate between kernels, validate between steps, suite
 *                             between instances) and stores or marks what it did; the
 *                             handler says so at once and passes the signal on to the
 *                             child processes interrupt_forward_to names. A second signal
 *                             ends the process at once, as interrupt_exit_on_signal does.
 */
#ifndef DLPERF_INTERRUPT_H
#define DLPERF_INTERRUPT_H

#include <signal.h>
#include <sys/types.h>

void interrupt_exit_on_signal(const char *command);
void interrupt_flag_on_signal(const char *command);
/* the signal received (SIGINT, SIGTERM), or 0; the flag itself for library loops that
 * take one (mb_calibrate) */
int interrupt_requested(void);
volatile sig_atomic_t *interrupt_flag(void);
/* 128 + the signal (the shell's convention: 130 SIGINT, 143 SIGTERM) */
int interrupt_exit_code(void);
/* "SIGINT" / "SIGTERM" */
const char *interrupt_signal_name(int sig);
/* What the exit line says was kept (printf format; at most 400 characters). Until the
 * first call: "nothing stored". */
void interrupt_kept(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What interrupt_kept recorded last. */
const char *interrupt_kept_text(void);
/* Child processes the flag handler passes the signal on to (at most 64; 0 clears one). */
void interrupt_forward_to(int slot, pid_t pid);

#endif
