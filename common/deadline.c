/* deadline.c: the process's deadline and its watchdog thread. */
#include "deadline.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "result.h"
#include "timing.h"

#define GRACE_S 2.0 /* the watchdog acts this long after the deadline */

static double at;
static char doing[256] = "starting";
static char waiting[256];
static volatile double waiting_since; /* when the current wait began; 0: none */
static double stall_s;

static void *watchdog(void *arg)
{
    (void)arg;
    const char *why = "deadline reached";
    for (;;) {
        double now = cl_wtime(), left = at + GRACE_S - now, since = waiting_since;
        if (left <= 0)
            break;
        if (stall_s > 0 && since > 0 && now - since > stall_s) {
            why = "deadline reached (no message for a long time: a deadlock?)";
            break;
        }
        usleep(left > 1.0 ? 1000000 : (useconds_t)(left * 1e6) + 1);
    }
    char line[600];
    int n = snprintf(line, sizeof line, "commlab: %s while %s%s%s\n", why, doing,
                     waiting[0] ? ": " : "", waiting);
    ssize_t w = write(2, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    (void)w;
    _exit(CL_EXIT_TIMEOUT);
    return NULL;
}

void cl_deadline_start(double seconds)
{
    if (seconds <= 0 || at > 0)
        return;
    at = cl_wtime() + seconds;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 << 10);
    if (pthread_create(&t, &a, watchdog, NULL) != 0)
        at = 0;
    pthread_attr_destroy(&a);
}

void cl_deadline_set(double seconds) { at = seconds > 0 ? cl_wtime() + seconds : 0; }

double cl_deadline_left(void) { return at > 0 ? at - cl_wtime() : 1e18; }

double cl_deadline_at(void) { return at; }

void cl_deadline_doing(const char *what) { snprintf(doing, sizeof doing, "%s", what); }

void cl_deadline_waiting(const char *what)
{
    waiting_since = 0;
    snprintf(waiting, sizeof waiting, "%s", what ? what : "");
    if (what)
        waiting_since = cl_wtime();
}

void cl_deadline_stall(double seconds) { stall_s = seconds; }
