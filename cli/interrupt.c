/* cli/interrupt.c — SIGINT/SIGTERM handling (cli/interrupt.h). The handlers use only
 * async-signal-safe calls: write, kill, _exit. */
#include "cli/interrupt.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { KEPT_MAX = 400, FORWARD_MAX = 64 };

static const char *exit_command = "dlperf";
/* Two buffers: interrupt_kept fills the one not shown, then flips `shown`, so the handler
 * never reads a line half written. */
static char kept[2][KEPT_MAX + 1] = {"nothing stored", "nothing stored"};
static volatile sig_atomic_t shown;
static volatile sig_atomic_t requested;
static volatile pid_t forward[FORWARD_MAX];

const char *interrupt_signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

static void put(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); }

static void on_signal_exit(int sig)
{
    put("dlperf ");
    put(exit_command);
    put(": interrupted by ");
    put(interrupt_signal_name(sig));
    put("; ");
    put(kept[shown]);
    put("\n");
    _exit(128 + sig);
}

static void on_signal_flag(int sig)
{
    if (requested) {
        on_signal_exit(sig);
        return;
    }
    requested = sig;
    put("dlperf ");
    put(exit_command);
    put(": ");
    put(interrupt_signal_name(sig));
    put(": stopping at the next safe point (a second signal stops at once)\n");
    for (int i = 0; i < FORWARD_MAX; i++)
        if (forward[i] > 0)
            kill(forward[i], sig);
}

static void install(void (*fn)(int))
{
    struct sigaction sa = {.sa_handler = fn};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void interrupt_exit_on_signal(const char *command)
{
    exit_command = command;
    install(on_signal_exit);
}

void interrupt_flag_on_signal(const char *command)
{
    exit_command = command;
    install(on_signal_flag);
}

int interrupt_requested(void) { return requested; }

volatile sig_atomic_t *interrupt_flag(void) { return &requested; }

int interrupt_exit_code(void) { return 128 + (requested ? requested : SIGINT); }

void interrupt_kept(const char *fmt, ...)
{
    const int next = !shown;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kept[next], sizeof kept[next], fmt, ap);
    va_end(ap);
    shown = next;
}

const char *interrupt_kept_text(void) { return kept[shown]; }

void interrupt_forward_to(int slot, pid_t pid)
{
    if (slot >= 0 && slot < FORWARD_MAX)
        forward[slot] = pid;
}
