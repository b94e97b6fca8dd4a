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

static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        double left = at + GRACE_S - cl_wtime();
        if (left <= 0)
            break;
        usleep(left > 1.0 ? 1000000 : (useconds_t)(left * 1e6) + 1);
    }
    char line[600];
    int n = snprintf(line, sizeof line, "commlab: deadline reached while %s%s%s\n", doing,
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
    snprintf(waiting, sizeof waiting, "%s", what ? what : "");
}
