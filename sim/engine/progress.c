/* progress.c - reports of how far a replay has come, taken where the rank
 * actors fetch their next instruction.
 *
 * With eng_options.progress set, run.c hands the actors the workload's
 * programs through eng_progress_wrap: each fetch goes to the workload's own
 * program_next, and every ENG_PROGRESS_FETCHES fetches the wall clock is
 * read; once ENG_PROGRESS_WALL_S has passed, the callback gets the
 * simulated clock.  Nothing is added to the simulation: no actor, no
 * activity, no instant at which SimGrid would bring its flows up to date
 * (a daemon sleeping at simulated intervals does that, and moves figures
 * in their last digit), so every figure is the same with and without
 * reports.  SimGrid runs one simulation per process: the state is the
 * process's. */
#include "internal.h"

#include <simgrid/engine.h>

#define ENG_PROGRESS_FETCHES 256  /* fetches between two looks at the wall clock */
#define ENG_PROGRESS_WALL_S 0.25  /* wall seconds between two reports, at least */

static struct {
    bool (*next)(void *prog, wl_instr *out); /* the workload's */
    eng_progress_fn report;
    void *ctx;
    unsigned fetches;
    double last_wall_s;
} prg;

static bool progress_next(void *prog, wl_instr *out)
{
    if (++prg.fetches % ENG_PROGRESS_FETCHES == 0) {
        double now_s = sim_now_s();
        if (now_s - prg.last_wall_s >= ENG_PROGRESS_WALL_S) {
            prg.last_wall_s = now_s;
            prg.report(prg.ctx, simgrid_get_clock());
        }
    }
    return prg.next(prog, out);
}

void eng_progress_wrap(const eng_workload *w, const eng_options *opt, eng_workload *out)
{
    *out = *w;
    if (!opt || !opt->progress) return;
    prg.next = w->progs.program_next;
    prg.report = opt->progress;
    prg.ctx = opt->progress_ctx;
    prg.fetches = 0;
    prg.last_wall_s = sim_now_s();
    out->progs.program_next = progress_next;
}
