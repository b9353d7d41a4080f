/* progress.c - the progress lines of long commands: one line redrawn in
 * place on a terminal's stderr, and one line per report in a log file.
 *
 * One reporter per process, the command's (sim_progress_begin); library
 * code reports through it when it is on (the engine's replay through its
 * callback, the runner its simulations done of total).  Reports come at
 * most once per SIM_PROGRESS_WALL_S of wall time unless forced, and never
 * go to stdout: what a command prints there, and every figure, is the same
 * with and without them. */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SIM_PROGRESS_WALL_S 1.0 /* wall seconds between two reports, at least */

static struct {
    bool on;
    bool terminal;      /* redraw a line on stderr */
    bool drawn;         /* the terminal shows a line now */
    FILE *log;          /* a line per report (not owned) */
    char label[64];     /* "heptasim run" */
    double t0_s, last_s;
} rep;

void sim_progress_begin(const char *label, bool terminal, FILE *log)
{
    memset(&rep, 0, sizeof rep);
    rep.on = terminal || log;
    rep.terminal = terminal;
    rep.log = log;
    sim_strlcpy(rep.label, label, sizeof rep.label);
    rep.t0_s = sim_now_s();
    rep.last_s = -SIM_PROGRESS_WALL_S;
}

bool sim_progress_on(void) { return rep.on; }

double sim_progress_wall_s(void) { return sim_now_s() - rep.t0_s; }

void sim_progress_clear(void)
{
    if (!rep.drawn) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    rep.drawn = false;
}

void sim_progress_end(void)
{
    sim_progress_clear();
    if (rep.log) fflush(rep.log);
    memset(&rep, 0, sizeof rep);
}

void sim_progress_report(bool force, const char *fmt, ...)
{
    if (!rep.on) return;
    double now_s = sim_now_s();
    if (!force && now_s - rep.last_s < SIM_PROGRESS_WALL_S) return;
    rep.last_s = now_s;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (rep.terminal) {
        fprintf(stderr, "\r%s: %s\033[K", rep.label, line);
        fflush(stderr);
        rep.drawn = true;
    }
    if (rep.log) {
        fprintf(rep.log, "%s: %s\n", rep.label, line);
        fflush(rep.log);
    }
}

void sim_duration(double s, char *out, size_t cap)
{
    if (!(s >= 0)) s = 0;
    if (s > 99 * 3600.0) {
        snprintf(out, cap, "more than 99 h");
        return;
    }
    if (s < 60) {
        snprintf(out, cap, "%.1f s", s);
        return;
    }
    long t = (long)(s + 0.5);
    if (t < 3600)
        snprintf(out, cap, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

void sim_progress_counts(bool force, const char *what, int done, int total, int running, double since_s)
{
    if (!rep.on) return;
    char wall[32], left[48] = "";
    sim_duration(sim_progress_wall_s(), wall, sizeof wall);
    if (done > 0 && done < total) {
        char d[32];
        sim_duration((sim_now_s() - since_s) / done * (total - done), d, sizeof d);
        snprintf(left, sizeof left, ", about %s left", d);
    }
    sim_progress_report(force, "%d/%d %s, %d running, %s wall%s", done, total, what, running, wall, left);
}
