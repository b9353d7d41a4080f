/* common.c - result codes, error formatting, checked allocation and the wall clock. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double sim_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *sim_strerror(sim_rc rc)
{
    switch (rc) {
    case SIM_OK: return "ok";
    case SIM_EINVAL: return "invalid input";
    case SIM_EIO: return "i/o error";
    case SIM_ENOMEM: return "out of host memory";
    case SIM_EOOM: return "strategy does not fit in device memory";
    case SIM_EINTERNAL: return "simulation failed";
    }
    return "unknown error";
}

sim_rc sim_fail(sim_err *err, sim_rc rc, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int sim_exit_status(sim_rc rc)
{
    if (rc == SIM_OK) return 0;
    if (rc == SIM_EINVAL) return 2;
    return 1;
}

static void out_of_memory(void)
{
    fputs("heptasim: out of host memory\n", stderr);
    exit(1);
}

void *sim_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) out_of_memory();
    return p;
}

void *sim_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q) out_of_memory();
    return q;
}

char *sim_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = sim_xcalloc(1, n);
    memcpy(d, s, n);
    return d;
}

void sim_strlcpy(char *dst, const char *src, size_t cap)
{
    if (cap == 0) return;
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}
