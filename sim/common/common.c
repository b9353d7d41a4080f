/* common.c - result codes, error formatting, checked allocation, the wall clock and the formatting of figures. */
#include "common.h"

#include <math.h>
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
    case SIM_EINTR: return "interrupted";
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
    if (rc == SIM_EINTR) return 128 + (sim_signal_caught() ? sim_signal_caught() : SIGINT);
    return 1;
}

/* {============================================================= signals */

static volatile sig_atomic_t caught;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (int)(sizeof stop_signals / sizeof stop_signals[0])

static void on_stop(int sig) { caught = sig; }

int sim_signal_caught(void) { return caught; }

static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    for (int i = 0; i < NSTOP; i++) sigaddset(set, stop_signals[i]);
}

void sim_signals_catch(sigset_t *old)
{
    sigset_t set;
    stop_set(&set);
    sigprocmask(SIG_BLOCK, &set, old);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop; /* no SA_RESTART: a blocking call returns EINTR */
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSTOP; i++) sigaction(stop_signals[i], &sa, NULL);
}

void sim_signals_default(void)
{
    sigset_t set;
    stop_set(&set);
    for (int i = 0; i < NSTOP; i++) signal(stop_signals[i], SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

void sim_signals_restore(const sigset_t *old)
{
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    for (int i = 0; i < NSTOP; i++) {
        if (!caught && sigismember(&pending, stop_signals[i])) caught = stop_signals[i];
        signal(stop_signals[i], SIG_IGN); /* discards one still pending: it is recorded */
        signal(stop_signals[i], SIG_DFL);
    }
    sigprocmask(SIG_SETMASK, old, NULL);
}

const char *sim_signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    case SIGABRT: return "SIGABRT";
    case SIGSEGV: return "SIGSEGV";
    }
    return "a signal";
}

/* }============================================================= signals */

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

void sim_list_add(char *out, size_t cap, const char *item)
{
    size_t n = strlen(out);
    if (n < cap) snprintf(out + n, cap - n, "%s%s", n ? ", " : "", item);
}

const char *sim_enum_name_of(const sim_enum_name *t, int n, int value)
{
    for (int i = 0; i < n; i++)
        if (t[i].value == value) return t[i].name;
    return "?";
}

int sim_enum_value(const sim_enum_name *t, int n, const char *text)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, text) == 0) return t[i].value;
    return -1;
}

void sim_enum_names_text(const sim_enum_name *t, int n, bool quoted, char *out, size_t cap)
{
    if (cap == 0) return;
    out[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < n && used < cap; i++) {
        const char *sep = i == 0 ? "" : !quoted ? "|" : i == n - 1 ? " or " : ", ";
        used += (size_t)snprintf(out + used, cap - used, quoted ? "%s'%s'" : "%s%s", sep, t[i].name);
    }
}

/* {=============================================================== units */

char *sim_fmt_time(double s, char *out, size_t cap)
{
    double a = fabs(s);
    if (a == 0 || !isfinite(s))
        snprintf(out, cap, "0 s");
    else if (a >= 100)
        snprintf(out, cap, "%.0f s", s);
    else if (a >= 1)
        snprintf(out, cap, "%.3g s", s);
    else if (a >= 1e-3)
        snprintf(out, cap, "%.3g ms", s * 1e3);
    else
        snprintf(out, cap, "%.3g us", s * 1e6);
    return out;
}

char *sim_fmt_bytes(double bytes, char *out, size_t cap)
{
    double a = fabs(bytes);
    if (a >= SIM_GIB * 1024)
        snprintf(out, cap, "%.1f TiB", bytes / (SIM_GIB * 1024));
    else if (a >= SIM_GIB)
        snprintf(out, cap, "%.1f GiB", bytes / SIM_GIB);
    else if (a >= 1024.0 * 1024.0)
        snprintf(out, cap, "%.0f MiB", bytes / (1024.0 * 1024.0));
    else if (a >= 1024.0)
        snprintf(out, cap, "%.0f KiB", bytes / 1024.0);
    else
        snprintf(out, cap, "%.0f B", bytes);
    return out;
}

char *sim_fmt_count(double v, char *out, size_t cap)
{
    if (!isfinite(v)) {
        snprintf(out, cap, "-");
        return out;
    }
    double r = fabs(round(v));
    if (r >= 1e30) {
        snprintf(out, cap, "%.3g", v);
        return out;
    }
    char digits[64], tmp[96];
    snprintf(digits, sizeof digits, "%.0f", r);
    size_t n = strlen(digits), j = 0;
    if (v <= -0.5) tmp[j++] = '-';
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) tmp[j++] = ',';
        tmp[j++] = digits[i];
    }
    tmp[j] = '\0';
    snprintf(out, cap, "%s", tmp);
    return out;
}

/* }=============================================================== units */
